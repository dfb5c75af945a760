//! `dfft plan`: the complexity model's prediction for every candidate grid, without MPI, for
//! one or several process counts (a strong-scaling study: the chosen grid's predicted time
//! split into compute, intra-node, inter-node and latency, and the parallel efficiency against
//! the smallest P), and `--batch`: one prediction per JSON line read from stdin.

use crate::args::{parse_shape, ShapeArg};
use crate::machine::LoadedProfile;
use clap::Args;
use fft_core::model::{
    self, Candidate, Candidates, GroupCandidate, MachineProfile, Prediction, Problem,
};
use fft_core::{FftError, GridChoice};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Arguments of `dfft plan`.
#[derive(Debug, Args)]
#[command(
    after_help = "Machine parameters: --machine FILE (as `dfft calibrate` writes it), else \
$DFFT_MACHINE, else the model's defaults (a generic 64-core cluster node); the flags below \
override single values.\n\nExamples:\n  dfft plan --shape 512,512,512 --ranks 4096\n  dfft plan \
--shape 1024,1024,1024 --kind r2c --ranks 256,512,1024,2048 --ranks-per-node 40\n  dfft plan \
--shape 256,256,256 --ranks 64 --ts 1e-5 --tw 1e-10 --json\n  dfft plan --shape 64,64,64 \
--ranks 8 --machine dfft-machine.json --ranks-per-node 8\n  echo '{\"shape\":[64,64,64],\"ranks\":8}' \
| dfft plan --batch"
)]
pub struct PlanArgs {
    /// Global shape, comma-separated (axis 0 slowest), e.g. 512,512,512.
    #[arg(long, value_parser = parse_shape, allow_hyphen_values = true, required_unless_present = "batch")]
    pub shape: Option<ShapeArg>,
    /// Numbers of MPI ranks P to plan for (at most 2^40 each), comma-separated: with several,
    /// a scaling table of the chosen grids and their efficiency against the smallest P.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..),
          required_unless_present = "batch")]
    pub ranks: Vec<u64>,
    /// Transform: c2c (complex) or r2c (real input; the exchanges move the half spectrum).
    #[arg(long, value_enum, default_value_t = PlanKind::C2c)]
    pub kind: PlanKind,
    /// Which grids to evaluate: `auto` (every grid rank r < d), a grid rank R (its
    /// factorizations only) or one grid AxB...
    #[arg(long, default_value = "auto")]
    pub grid: GridChoice,
    /// Machine profile (JSON from `dfft calibrate`); default $DFFT_MACHINE, else built-in.
    #[arg(long)]
    pub machine: Option<PathBuf>,
    /// Message latency in seconds, inside and between nodes (overrides the profile).
    #[arg(long, value_parser = crate::machine::parse_latency)]
    pub ts: Option<f64>,
    /// Inverse bandwidth in seconds per byte, inside and between nodes (overrides the profile).
    #[arg(long, value_parser = crate::machine::parse_inverse_bandwidth)]
    pub tw: Option<f64>,
    /// Latency between nodes only, seconds.
    #[arg(long, value_parser = crate::machine::parse_latency)]
    pub ts_inter: Option<f64>,
    /// Inverse bandwidth of one rank's messages between nodes, seconds per byte.
    #[arg(long, value_parser = crate::machine::parse_inverse_bandwidth)]
    pub tw_inter: Option<f64>,
    /// Inverse injection bandwidth of one node (all its ranks together), seconds per byte;
    /// 0: not limiting.
    #[arg(long, value_parser = crate::machine::parse_inverse_bandwidth)]
    pub tw_node: Option<f64>,
    /// Nodes under one first-level switch (non-blocking among them).
    #[arg(long)]
    pub switch_nodes: Option<usize>,
    /// How much thinner a switch's uplinks are than its nodes' links together (≥ 1).
    #[arg(long, value_parser = crate::machine::parse_taper)]
    pub uplink_taper: Option<f64>,
    /// Fraction (0..1) of the shorter of the intra- and inter-node transfers hidden behind
    /// the longer.
    #[arg(long, value_parser = crate::machine::parse_fraction)]
    pub overlap: Option<f64>,
    /// Fixed cost of one exchange (collective call), seconds.
    #[arg(long, value_parser = crate::machine::parse_latency)]
    pub exchange_overhead: Option<f64>,
    /// Local 1-D FFT cost, seconds per element·log2(n) on one core.
    #[arg(long, value_parser = crate::machine::parse_fft_rate)]
    pub fft_rate: Option<f64>,
    /// Element-granular (transposing) copy rate of one core, bytes per second.
    #[arg(long, value_parser = crate::machine::parse_bandwidth)]
    pub copy_bw: Option<f64>,
    /// Copy rate of one core for long contiguous runs, bytes per second.
    #[arg(long, value_parser = crate::machine::parse_bandwidth)]
    pub stream_bw: Option<f64>,
    /// Inverse memory bandwidth of one node (all its ranks together), seconds per byte;
    /// 0: not limiting.
    #[arg(long)]
    pub tw_memory: Option<f64>,
    /// Cores per node.
    #[arg(long)]
    pub cores_per_node: Option<usize>,
    /// Ranks placed on one node (consecutive ranks share a node).
    #[arg(long)]
    pub ranks_per_node: Option<usize>,
    /// Threads per rank.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Bytes per complex element: 16 for f64, 8 for f32.
    #[arg(long, default_value_t = 16, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub element_bytes: usize,
    /// Plan with transposed output (the forward result stays in the last pencil).
    #[arg(long)]
    pub transposed_out: bool,
    /// Fields K of a batch (`dfft run --batch K`): with K > 1 the model also weighs one
    /// transform of all K fields over P ranks against G groups of P/G ranks taking K/G fields
    /// each, and says which `dfft run --batch K` picks (JSON: `groups`, `group_candidates`).
    #[arg(long, default_value_t = 1, value_parser = crate::args::parse_batch, conflicts_with = "transposed_out")]
    pub fields: usize,
    /// Transform only these axes (0-based, comma-separated; `dfft run --axes`), the others
    /// left as they are: the model costs only the exchanges that bring a transformed axis into
    /// memory (axes 1,2 of a 3-D field on a slab need none) and chooses the grid by that.
    #[arg(long, value_delimiter = ',', num_args = 1.., conflicts_with = "fields")]
    pub axes: Option<Vec<usize>>,
    /// One JSON object per candidate per line (the chosen one first) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Read problems from stdin, one JSON object per line (`shape`, `ranks`, optional `kind`,
    /// `grid`, `transposed_out`, `element_bytes`, `windows` (false: every exchange through
    /// messages, as other libraries' runs; default true, as dfft's plans), and `machine`:
    /// profile fields that replace the ones of --machine and the flags), and answer each with
    /// one JSON line: the chosen candidate, or `{"error": ...}`. Flushed line by line, for
    /// scripts that fit profiles.
    #[arg(long, conflicts_with_all = ["shape", "ranks", "json"])]
    pub batch: bool,
}

/// The transform `dfft plan` predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanKind {
    /// Complex to complex.
    C2c,
    /// Real to complex (forward) and back.
    R2c,
}

fn profile_from(args: &PlanArgs) -> fft_core::Result<LoadedProfile> {
    let mut loaded = crate::machine::load(args.machine.as_deref())?;
    let p = &mut loaded.profile;
    let mut overridden = false;
    let mut set_f = |field: &mut f64, value: Option<f64>| {
        if let Some(v) = value {
            *field = v;
            overridden = true;
        }
    };
    set_f(&mut p.ts_intra_s, args.ts);
    set_f(&mut p.ts_inter_s, args.ts);
    set_f(&mut p.tw_intra_s_per_byte, args.tw);
    set_f(&mut p.tw_inter_s_per_byte, args.tw);
    set_f(&mut p.ts_inter_s, args.ts_inter);
    set_f(&mut p.tw_inter_s_per_byte, args.tw_inter);
    set_f(&mut p.tw_node_s_per_byte, args.tw_node);
    set_f(&mut p.uplink_taper, args.uplink_taper);
    set_f(&mut p.intra_inter_overlap, args.overlap);
    set_f(&mut p.exchange_overhead_s, args.exchange_overhead);
    set_f(&mut p.fft_s_per_element_log2, args.fft_rate);
    set_f(&mut p.copy_bytes_per_s, args.copy_bw);
    set_f(&mut p.stream_bytes_per_s, args.stream_bw);
    set_f(&mut p.tw_memory_s_per_byte, args.tw_memory);
    let mut set_n = |field: &mut usize, value: Option<usize>| {
        if let Some(v) = value {
            *field = v;
            overridden = true;
        }
    };
    set_n(&mut p.switch_nodes, args.switch_nodes);
    set_n(&mut p.cores_per_node, args.cores_per_node);
    set_n(&mut p.ranks_per_node, args.ranks_per_node);
    set_n(&mut p.threads_per_rank, args.threads);
    if overridden {
        p.source = format!("{} (with command-line overrides)", p.source);
    }
    p.validate()?;
    Ok(loaded)
}

fn grid_name(dims: &[usize]) -> String {
    dims.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn which(grid: &GridChoice) -> Candidates {
    match grid {
        GridChoice::Auto => Candidates::All,
        GridChoice::Rank(r) => Candidates::Rank(*r),
        GridChoice::Dims(dims) => Candidates::Grid(dims.clone()),
    }
}

/// Compute (FFTs and copies) of a prediction.
fn compute_s(p: &Prediction) -> f64 {
    p.fft_s + p.memory_s
}

/// The header lines: the problem and the machine.
fn header(problem: &Problem, ranks: &[usize], loaded: &LoadedProfile) -> String {
    let profile = &loaded.profile;
    let ranks: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
    let mut s = format!(
        "dfft plan: {} shape {:?} on {} rank(s), {} B per element, {} output\n",
        if problem.real_to_complex {
            "r2c"
        } else {
            "c2c"
        },
        problem.shape,
        ranks.join(", "),
        problem.element_bytes,
        if problem.transposed_out {
            "transposed"
        } else {
            "natural"
        }
    );
    s.push_str(&format!(
        "machine: ts {:.2e}/{:.2e} s, tw {:.2e}/{:.2e} s/B (intra/inter node), node link {}, switch of {} node(s), uplink taper {}, overlap {}, fft {:.2e} s/(elem·log2 n), copy {:.2e} B/s (runs {:.2e} B/s), {} cores and {} ranks per node, {} thread(s)/rank\nprofile: {}\n",
        profile.ts_intra_s,
        profile.ts_inter_s,
        profile.tw_intra_s_per_byte,
        profile.tw_inter_s_per_byte,
        if profile.tw_node_s_per_byte > 0.0 {
            format!("{:.2e} s/B", profile.tw_node_s_per_byte)
        } else {
            "unlimited".into()
        },
        profile.switch_nodes,
        profile.uplink_taper,
        profile.intra_inter_overlap,
        profile.fft_s_per_element_log2,
        profile.copy_bytes_per_s,
        profile.stream_bytes_per_s,
        profile.cores_per_node,
        profile.ranks_per_node,
        profile.threads_per_rank,
        loaded.describe()
    ));
    s
}

/// The candidates of one P, as a table.
pub fn table(cands: &[Candidate]) -> String {
    let mut s = model::explain(cands);
    s.push_str("\n\nper forward+backward pair; each stage charged for its most loaded rank (or, where ranks share cores, the node's mean rank)\n");
    s.push_str(&format!(
        "  {:<14} {:>2} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>5} {:>7} {:>11}  note\n",
        "grid",
        "r",
        "predicted_s",
        "latency_s",
        "intra_s",
        "inter_s",
        "fft_s",
        "memory_s",
        "exch",
        "msgs",
        "MiB sent"
    ));
    for c in cands {
        let p = &c.prediction;
        let note = match (&c.excluded, c.chosen) {
            (_, true) => "chosen".to_string(),
            (Some(why), false) => format!("excluded: {why}"),
            (None, false) => format!("{:.2}x", p.predicted_s / cands[0].prediction.predicted_s),
        };
        s.push_str(&format!(
            "{} {:<14} {:>2} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>5} {:>7} {:>11.2}  {}\n",
            if c.chosen { "*" } else { " " },
            grid_name(&p.grid),
            p.grid_rank,
            p.predicted_s,
            p.latency_s,
            p.intra_node_s,
            p.inter_node_s,
            p.fft_s,
            p.memory_s,
            p.exchanges,
            p.messages,
            p.bytes as f64 / (1024.0 * 1024.0),
            note
        ));
    }
    s
}

/// Where the chosen grid's time goes, in words, with shares.
fn split_line(p: &Prediction) -> String {
    let total = p.predicted_s.max(f64::MIN_POSITIVE);
    let part = |x: f64| format!("{x:.3e} s ({:.0} %)", 100.0 * x / total);
    format!(
        "predicted split of {}: compute {} (fft {:.3e}, copies {:.3e}), intra-node {}, inter-node {}, latency {}\n",
        grid_name(&p.grid),
        part(compute_s(p)),
        p.fft_s,
        p.memory_s,
        part(p.intra_node_s),
        part(p.inter_node_s),
        part(p.latency_s)
    )
}

/// Parallel efficiency of `t` on `ranks` against `t0` on `ranks0`: `t0·P0 / (t·P)`.
fn efficiency(t0: f64, ranks0: usize, t: f64, ranks: usize) -> f64 {
    t0 * ranks0 as f64 / (t * ranks as f64).max(f64::MIN_POSITIVE)
}

/// The scaling table: per P, the chosen grid, its split, speed-up and efficiency against the
/// smallest P.
fn scaling_table(results: &[(usize, Vec<Candidate>)]) -> String {
    let mut s = String::from(
        "strong scaling, the chosen grid of each P (speed-up and efficiency against the smallest P):\n",
    );
    s.push_str(&format!(
        "  {:>13} {:<12} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8} {:>10}\n",
        "P",
        "grid",
        "predicted_s",
        "compute_s",
        "intra_s",
        "inter_s",
        "latency_s",
        "speed-up",
        "efficiency"
    ));
    let (p0, t0) = (results[0].0, results[0].1[0].prediction.predicted_s);
    for (ranks, cands) in results {
        let p = &cands[0].prediction;
        s.push_str(&format!(
            "  {:>13} {:<12} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>8.2} {:>9.0} %{}\n",
            ranks,
            grid_name(&p.grid),
            p.predicted_s,
            compute_s(p),
            p.intra_node_s,
            p.inter_node_s,
            p.latency_s,
            t0 / p.predicted_s.max(f64::MIN_POSITIVE),
            100.0 * efficiency(t0, p0, p.predicted_s, *ranks),
            if cands[0].excluded.is_some() {
                "  (idle ranks)"
            } else {
                ""
            }
        ));
    }
    s
}

/// One candidate as the JSON fields `plan` prints: the prediction, `chosen`, `excluded`, and
/// the derived `compute_s`.
fn candidate_json(c: &Candidate) -> Value {
    let mut v = serde_json::to_value(c).expect("a candidate serializes");
    v["compute_s"] = json!(compute_s(&c.prediction));
    v
}

/// One JSON line per candidate (chosen first) in the common schema: the problem (with the
/// candidates evaluated), and as the result the prediction's fields plus `chosen`,
/// `excluded`, `compute_s`, the profile, and on the chosen line `why` and the efficiency
/// against the smallest P.
pub fn json_lines(
    (problem, axes): (&Problem, Option<&[usize]>),
    grid: &GridChoice,
    cands: &[Candidate],
    base: (usize, f64),
    loaded: &LoadedProfile,
    (fields, groups): (usize, &[GroupCandidate]),
    provenance: &crate::provenance::Provenance,
) -> Vec<String> {
    let why = model::explain(cands);
    let chosen_groups = groups.first().map_or(1, |g| g.groups);
    let problem_json = json!({
        "fields": fields,
        "shape": problem.shape,
        "ranks": problem.ranks,
        "kind": if problem.real_to_complex { "r2c" } else { "c2c" },
        "element_bytes": problem.element_bytes,
        "transposed_out": problem.transposed_out,
        "axes": axes,
        "grid_choice": grid.to_string(),
    });
    cands
        .iter()
        .map(|c| {
            let mut v = candidate_json(c);
            v["machine_profile"] = json!(loaded.describe());
            v["generic_profile"] = json!(loaded.origin == crate::machine::Origin::Defaults);
            v["groups"] = json!(chosen_groups);
            if c.chosen {
                v["why"] = json!(why);
                if !groups.is_empty() {
                    v["groups_why"] = json!(model::explain_groups(groups, fields, problem.ranks));
                    v["group_candidates"] = json!(groups);
                }
                v["efficiency"] = json!(efficiency(
                    base.1,
                    base.0,
                    c.prediction.predicted_s,
                    problem.ranks
                ));
            }
            crate::report::envelope("plan", problem_json.clone(), v, provenance)
        })
        .collect()
}

/// The group split of `fields` fields on `ranks` ranks: one line per candidate and the
/// model's reason (nothing for one field).
fn groups_text(ranks: usize, fields: usize, groups: &[GroupCandidate]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n{fields} fields on {ranks} ranks (dfft run --batch {fields}; seconds per forward+backward pair of all fields):\n{:>7} {:>6} {:>7} {:>10} {:>12} {:>13} {:>12}\n",
        "groups", "ranks", "fields", "grid", "transform_s", "redistribute", "predicted_s"
    );
    let mut sorted: Vec<&GroupCandidate> = groups.iter().collect();
    sorted.sort_by_key(|g| g.groups);
    for g in sorted {
        let grid = g
            .grid
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("x");
        s.push_str(&format!(
            "{:>7} {:>6} {:>7} {:>10} {:>12.3e} {:>13.3e} {:>12.3e}{}\n",
            g.groups,
            g.ranks_per_group,
            g.fields_per_group,
            grid,
            g.transform_s,
            g.redistribute_s,
            g.predicted_s,
            if g.chosen { "  <- chosen" } else { "" }
        ));
    }
    s.push_str(&format!(
        "groups: {}\n",
        model::explain_groups(groups, fields, ranks)
    ));
    s
}

/// Writes `text` to stdout; a reader that stops early (`dfft plan --json | head -1`) closes
/// the pipe, which is not an error of the plan, so it ends quietly instead of panicking.
fn emit(out: &mut impl Write, text: &str) -> bool {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => false,
        Err(e) => {
            eprintln!("dfft plan: cannot write the plan: {e}");
            std::process::exit(1);
        }
    }
}

/// Runs `dfft plan`: evaluates the candidates of every P and prints them; no MPI.
pub fn plan(args: &PlanArgs) -> Result<(), FftError> {
    let loaded = profile_from(args)?;
    if args.batch {
        return batch(args, &loaded.profile);
    }
    let shape = args.shape.as_ref().map(|s| s.0.clone()).unwrap_or_default();
    let mut ranks: Vec<usize> = args
        .ranks
        .iter()
        .map(|&r| usize::try_from(r).unwrap_or(usize::MAX))
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    let problem = |p: usize| Problem {
        shape: shape.clone(),
        ranks: p,
        element_bytes: args.element_bytes.max(1),
        transposed_out: args.transposed_out,
        real_to_complex: args.kind == PlanKind::R2c,
        windows: true,
    };
    let mut results = Vec::with_capacity(ranks.len());
    for &p in &ranks {
        let evaluated = match &args.axes {
            Some(axes) => {
                model::evaluate_partial(&problem(p), axes, &loaded.profile, &which(&args.grid))?
            }
            None => model::evaluate_among(&problem(p), &loaded.profile, &which(&args.grid))?,
        };
        results.push((p, evaluated));
    }
    let base = (results[0].0, results[0].1[0].prediction.predicted_s);
    let mut groups = Vec::with_capacity(results.len());
    for (p, cands) in &results {
        groups.push(if args.fields > 1 {
            let grid = redist::GridShape::new(cands[0].prediction.grid.clone())?;
            model::evaluate_groups(&problem(*p), args.fields, Some(&grid), &loaded.profile)?
        } else {
            Vec::new()
        });
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let provenance = crate::provenance::Provenance::without_mpi();
        for ((p, cands), groups) in results.iter().zip(&groups) {
            let fields = (args.fields, groups.as_slice());
            let lines = json_lines(
                (&problem(*p), args.axes.as_deref()),
                &args.grid,
                cands,
                base,
                &loaded,
                fields,
                &provenance,
            );
            for line in lines {
                if !emit(&mut out, &(line + "\n")) {
                    return Ok(());
                }
            }
        }
        return Ok(());
    }
    let mut text = header(&problem(ranks[0]), &ranks, &loaded);
    if let Some(axes) = &args.axes {
        text.push_str(&format!(
            "partial transform: axes {axes:?} only, the others untouched (only the exchanges that bring a transformed axis into memory are costed)\n"
        ));
    }
    if loaded.origin == crate::machine::Origin::Defaults {
        text.push_str("note: the built-in profile describes a generic cluster node; give --machine FILE (from `dfft calibrate` on the target machine) or the flags below for a real one\n");
    }
    if let [(_, cands)] = results.as_slice() {
        text.push_str(&table(cands));
        text.push_str(&split_line(&cands[0].prediction));
    } else {
        text.push_str(&scaling_table(&results));
        for (p, cands) in &results {
            text.push_str(&format!("P = {p}: {}", split_line(&cands[0].prediction)));
        }
        text.push_str("(--ranks P alone lists every candidate of P)\n");
    }
    for ((p, _), groups) in results.iter().zip(&groups) {
        text.push_str(&groups_text(*p, args.fields, groups));
    }
    emit(&mut out, &text);
    Ok(())
}

/// The longest `--batch` line read (a problem is a few hundred bytes; a profile a few
/// thousand).
const BATCH_LINE_CAP: usize = 1 << 20;

/// The keys a `--batch` line may hold.
const BATCH_KEYS: [&str; 8] = [
    "shape",
    "ranks",
    "kind",
    "grid",
    "machine",
    "element_bytes",
    "transposed_out",
    "windows",
];

/// The next line of `input` without its newline, at most `cap` bytes: `Ok(None)` at the end,
/// `Ok(Some(Err(n)))` for a longer line (its `n` bytes, at least `cap + 1`, are skipped
/// without being kept), so no line can take more memory than the cap.
fn next_line(
    input: &mut impl BufRead,
    cap: usize,
) -> std::io::Result<Option<Result<String, usize>>> {
    let mut line = Vec::new();
    let mut skipped = 0usize;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(if line.is_empty() && skipped == 0 {
                None
            } else if skipped > 0 {
                Some(Err(skipped))
            } else {
                Some(Ok(String::from_utf8_lossy(&line).into_owned()))
            });
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1),
            None => (chunk, chunk.len()),
        };
        let ends = done > part.len();
        if skipped == 0 && line.len() + part.len() <= cap {
            line.extend_from_slice(part);
        } else {
            skipped = skipped.max(line.len()) + part.len();
            line.clear();
        }
        input.consume(done);
        if ends {
            return Ok(Some(if skipped > 0 {
                Err(skipped)
            } else {
                Ok(String::from_utf8_lossy(&line).into_owned())
            }));
        }
    }
}

/// `dfft plan --batch`: one answer per JSON line of stdin.
fn batch(args: &PlanArgs, base: &MachineProfile) -> Result<(), FftError> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    while let Ok(Some(line)) = next_line(&mut input, BATCH_LINE_CAP) {
        let answer = match line {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => answer_one(&line, args, base),
            Err(n) => Err(format!(
                "the line is longer than {BATCH_LINE_CAP} bytes ({n} bytes): not a problem"
            )),
        };
        let answer = answer.unwrap_or_else(|e| json!({ "error": e }));
        if !emit(&mut out, &format!("{answer}\n")) {
            break;
        }
    }
    Ok(())
}

/// One `--batch` request: the chosen candidate of the problem it describes.
fn answer_one(line: &str, args: &PlanArgs, base: &MachineProfile) -> Result<Value, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Some(fields) = v.as_object() else {
        return Err(format!(
            "expected a JSON object such as {{\"shape\": [64, 64, 64], \"ranks\": 8}}, got {}",
            crate::machine::kind_of(&v)
        ));
    };
    if let Some(key) = fields.keys().find(|k| !BATCH_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key '{key}' (the keys are {})",
            BATCH_KEYS.join(", ")
        ));
    }
    if !fields.contains_key("shape") {
        return Err("shape: missing (a list of axis lengths, e.g. [64, 64, 64])".to_string());
    }
    let shape: Vec<usize> =
        serde_json::from_value(v["shape"].clone()).map_err(|e| format!("shape: {e}"))?;
    let ranks = v["ranks"]
        .as_u64()
        .ok_or("ranks: expected a positive integer")? as usize;
    let kind = match v.get("kind").and_then(Value::as_str) {
        None | Some("c2c") => false,
        Some("r2c") => true,
        Some(k) => return Err(format!("kind: '{k}' is neither c2c nor r2c")),
    };
    let grid: GridChoice = match v.get("grid").and_then(Value::as_str) {
        Some(g) => g.parse().map_err(|e: FftError| e.to_string())?,
        None => args.grid.clone(),
    };
    let profile = match v.get("machine") {
        Some(m) => crate::machine::overlay(base, m)?.0,
        None => base.clone(),
    };
    let problem = Problem {
        shape,
        ranks,
        element_bytes: v["element_bytes"]
            .as_u64()
            .map_or(args.element_bytes, |b| b as usize),
        transposed_out: v["transposed_out"].as_bool().unwrap_or(args.transposed_out),
        real_to_complex: kind,
        windows: v["windows"].as_bool().unwrap_or(true),
    };
    let cands =
        model::evaluate_among(&problem, &profile, &which(&grid)).map_err(|e| e.to_string())?;
    Ok(candidate_json(&cands[0]))
}

/// The model's part in `dfft run`: the profile with this launch's facts filled in (ranks per
/// node, threads per rank, cores; agreed on by all ranks), and the problem.
pub struct RunModel {
    /// The profile used, completed with the launch's facts.
    pub profile: MachineProfile,
    /// Where the profile came from (`--machine`, `$DFFT_MACHINE`, this machine's cache or
    /// the built-in defaults), for the report.
    pub loaded: LoadedProfile,
    /// The problem (shape, ranks, complex f64, output layout).
    pub problem: Problem,
    /// Whether the grid was chosen by the model (`--grid auto`).
    pub auto: bool,
    /// The transformed axes of a partial transform (`--axes`; `None`: every axis).
    pub axes: Option<Vec<usize>>,
}

impl RunModel {
    /// Loads the profile (`--machine`, `$DFFT_MACHINE`, this machine's cached profile, or one
    /// measured now and cached), completes it with facts of this launch (max over ranks, so every rank
    /// has the same numbers) and, for `GridChoice::Auto`, replaces the choice with the
    /// model's grid. Collective.
    pub fn prepare(
        world: &mpi::topology::SimpleCommunicator,
        shape: &[usize],
        mut options: fft_core::FftOptions,
        machine: Option<&PathBuf>,
        element_bytes: usize,
        axes: Option<&[usize]>,
    ) -> fft_core::Result<(fft_core::FftOptions, RunModel)> {
        use mpi::collective::SystemOperation;
        use mpi::traits::*;
        let loaded = crate::profile_cache::load_for_run(world, machine.map(PathBuf::as_path))?;
        let mut profile = loaded.profile.clone();
        let local = [
            world.split_shared(0).size() as f64,
            rayon::current_num_threads() as f64,
            std::thread::available_parallelism().map_or(1, |n| n.get()) as f64,
        ];
        let mut agreed = [0.0f64; 3];
        world.all_reduce_into(&local[..], &mut agreed[..], SystemOperation::max());
        profile.ranks_per_node = agreed[0] as usize;
        profile.threads_per_rank = agreed[1] as usize;
        profile.cores_per_node = agreed[2] as usize;
        let problem = Problem {
            shape: shape.to_vec(),
            ranks: world.size() as usize,
            element_bytes,
            transposed_out: options.transposed_out,
            real_to_complex: false,
            windows: options.shared_memory,
        };
        let auto = options.grid == fft_core::GridChoice::Auto;
        if auto && shape.len() >= 2 {
            let grid = match axes {
                // The partial transform's own cost: grids that keep the untransformed axes
                // distributed need fewer exchanges.
                Some(axes) => {
                    let cands =
                        model::evaluate_partial(&problem, axes, &profile, &Candidates::All)?;
                    cands[0].prediction.grid.clone()
                }
                None => model::choose(&problem, &profile)?.dims().to_vec(),
            };
            options.grid = fft_core::GridChoice::Dims(grid);
        }
        options.machine = profile.clone();
        Ok((
            options,
            RunModel {
                profile,
                loaded,
                problem,
                auto,
                axes: axes.map(<[usize]>::to_vec),
            },
        ))
    }

    /// The model's predicted forward+backward time on `grid`, complex or real-to-complex.
    pub fn predicted_s(&self, grid: &redist::GridShape, real_to_complex: bool) -> Option<f64> {
        let problem = Problem {
            real_to_complex,
            ..self.problem.clone()
        };
        match &self.axes {
            Some(axes) => model::predict_partial(&problem, axes, grid, &self.profile),
            None => model::predict(&problem, grid, &self.profile),
        }
        .ok()
        .map(|p| p.predicted_s)
    }
}
