//! What dfft's command-line programs (`dfft`, the solvers' `poisson` and `navier-stokes`, the
//! benchmarks) share, so each is written once: the text of a shape argument, a clap error as
//! one line, and the rank the launcher gave this process. No dependencies: the programs pass
//! clap's rendered text in.

/// Parses a global shape written `64,64,64` or `64x64x64` (any number of axes, each at least
/// 1); the error names the offending text, ready for a clap value parser.
///
/// ```
/// use cli_common::parse_shape;
/// assert_eq!(parse_shape("64,48x40").unwrap(), [64, 48, 40]);
/// assert_eq!(
///     parse_shape("0,4").unwrap_err(),
///     "axis lengths must be at least 1, got 0 in '0,4'"
/// );
/// assert_eq!(
///     parse_shape("-4,4").unwrap_err(),
///     "axis length -4 in '-4,4' is negative; axis lengths must be at least 1"
/// );
/// assert!(parse_shape("64,x,64").unwrap_err().contains("'' is not a positive integer"));
/// ```
pub fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let parts: Vec<&str> = text.split([',', 'x']).map(str::trim).collect();
    let mut shape = Vec::with_capacity(parts.len());
    for p in parts {
        match p.parse::<usize>() {
            Ok(0) => {
                return Err(format!(
                    "axis lengths must be at least 1, got 0 in '{text}'"
                ))
            }
            Ok(n) => shape.push(n),
            Err(_)
                if p.strip_prefix('-')
                    .is_some_and(|d| d.parse::<u128>().is_ok()) =>
            {
                return Err(format!(
                    "axis length {p} in '{text}' is negative; axis lengths must be at least 1"
                ))
            }
            Err(_) => {
                return Err(format!(
                    "'{p}' is not a positive integer; expected a shape such as 64,64,64"
                ))
            }
        }
    }
    Ok(shape)
}

/// The lines of a rendered clap error before its `Usage:` block, joined into one line (the
/// missing arguments' names, the accepted values and clap's tips stay; `error: ` goes).
///
/// ```
/// let text = "error: invalid value 'x' for '--flow <FLOW>'\n  [possible values: a, b]\n\n  tip: a similar value exists: 'a'\n\nUsage: p [OPTIONS]\n\nFor more information, try '--help'.\n";
/// assert_eq!(
///     cli_common::one_line(text),
///     "invalid value 'x' for '--flow <FLOW>' [possible values: a, b]; tip: a similar value exists: 'a'"
/// );
/// assert_eq!(cli_common::one_line("Usage: p\n"), "invalid arguments");
/// ```
pub fn one_line(rendered: &str) -> String {
    let mut out = String::new();
    for line in rendered.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if !out.is_empty() {
            out.push_str(if line.starts_with("tip:") { "; " } else { " " });
        }
        out.push_str(line);
    }
    if out.is_empty() {
        "invalid arguments".to_string()
    } else {
        out
    }
}

/// This process's rank as the launcher announced it (OpenMPI, PMIx, Slurm, MPICH's PMI), if
/// any: programs print usage errors once, from rank 0, before MPI starts.
pub fn launcher_rank() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
        "PMI_RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse().ok())
}
