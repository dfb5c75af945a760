//! What the `poisson` and `navier-stokes` binaries share: argument parsing before MPI starts
//! (usage errors printed once, by rank 0, with status 2), the run under MPI (runtime errors
//! printed by rank 0, status 1), and JSON lines.

use crate::error::SolverError;
use mpi::topology::SimpleCommunicator;

/// Parses `N` (a cube) or `N0,N1,N2` (also `N0xN1xN2`) into three axis lengths, each at
/// least 1 ([`cli_common::parse_shape`]'s rules and messages).
///
/// ```
/// use solvers::cli::parse_shape;
/// assert_eq!(parse_shape("64").unwrap(), [64, 64, 64]);
/// assert_eq!(parse_shape("32,24,40").unwrap(), [32, 24, 40]);
/// assert!(parse_shape("32,24").is_err());
/// assert!(parse_shape("0").is_err());
/// ```
pub fn parse_shape(s: &str) -> Result<[usize; 3], String> {
    match cli_common::parse_shape(s)?[..] {
        [n] => Ok([n, n, n]),
        [a, b, c] => Ok([a, b, c]),
        ref values => Err(format!(
            "expected N or N0,N1,N2 (3 axes), got {} values in '{s}'",
            values.len()
        )),
    }
}

/// Parses three comma-separated numbers.
///
/// ```
/// assert_eq!(solvers::cli::parse_vector("0.5,0,-1").unwrap(), [0.5, 0.0, -1.0]);
/// ```
pub fn parse_vector(s: &str) -> Result<[f64; 3], String> {
    let values: Vec<f64> = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("expected a finite number, got '{p}' in '{s}'"))
        })
        .collect::<Result<_, _>>()?;
    <[f64; 3]>::try_from(values).map_err(|v| {
        format!(
            "expected 3 comma-separated numbers, got {} in '{s}'",
            v.len()
        )
    })
}

/// Parses a finite number `> 0` (a time step).
///
/// ```
/// use solvers::cli::parse_positive;
/// assert_eq!(parse_positive("0.01"), Ok(0.01));
/// assert!(parse_positive("-0.01").is_err());
/// assert!(parse_positive("0").is_err());
/// assert!(parse_positive("NaN").is_err());
/// ```
pub fn parse_positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("expected a finite number > 0, got '{s}'")),
    }
}

/// Parses a finite number `>= 0` (a viscosity, a tolerance).
///
/// ```
/// use solvers::cli::parse_non_negative;
/// assert_eq!(parse_non_negative("0"), Ok(0.0));
/// assert!(parse_non_negative("-1").is_err());
/// assert!(parse_non_negative("NaN").is_err());
/// assert!(parse_non_negative("inf").is_err());
/// ```
pub fn parse_non_negative(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("expected a finite number >= 0, got '{s}'")),
    }
}

/// Parses the arguments with clap; a usage error (or `--help`) is printed by rank 0 only and
/// every rank exits with clap's status (2 for errors).
pub fn parse_or_exit<A: clap::Parser>(program: &str) -> A {
    match A::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = e.exit_code();
            if cli_common::launcher_rank().unwrap_or(0) == 0 {
                if e.use_stderr() {
                    eprintln!(
                        "{program}: error: {} (see --help)",
                        cli_common::one_line(&e.render().to_string())
                    );
                } else {
                    let _ = e.print();
                }
            } else if code != 0 {
                // Let rank 0's message reach the launcher before this exit ends the job.
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            std::process::exit(code);
        }
    }
}

/// Starts MPI, runs `body` on the world communicator and exits: status 0 on success, 1 on an
/// error (printed by rank 0; every rank returns the same error because checks use global
/// arguments only). A panic on any rank aborts the whole job.
pub fn run_under_mpi(
    program: &str,
    body: impl FnOnce(&SimpleCommunicator) -> Result<(), SolverError>,
) -> ! {
    let code = {
        let Some(universe) = mpi::initialize() else {
            eprintln!("{program}: MPI was already initialized");
            std::process::exit(1);
        };
        redist::comm::abort_on_panic();
        let world = universe.world();
        match body(&world) {
            Ok(()) => 0,
            Err(e) => {
                if mpi::topology::Communicator::rank(&world) == 0 {
                    eprintln!("{program}: error: {e}");
                }
                1
            }
        }
    };
    std::process::exit(code)
}
