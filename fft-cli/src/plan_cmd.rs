//! `dfft plan`: the complexity model's prediction for every candidate grid, without MPI.

use crate::args::{parse_shape, ShapeArg};
use crate::machine::LoadedProfile;
use clap::Args;
use fft_core::model::{self, Candidate, Candidates, MachineProfile, Problem};
use fft_core::GridChoice;
use std::path::PathBuf;

/// Arguments of `dfft plan`.
#[derive(Debug, Args)]
#[command(
    after_help = "Machine parameters: --machine FILE (as `dfft calibrate` writes it), else \
$DFFT_MACHINE, else the model's defaults (a generic 64-core cluster node); the flags below \
override single values.\n\nExamples:\n  dfft plan --shape 512,512,512 --ranks 4096\n  dfft plan \
--shape 256,256,256 --ranks 64 --ts 1e-5 --tw 1e-10 --json\n  dfft plan --shape 64,64,64 \
--ranks 8 --machine dfft-machine.json --ranks-per-node 8"
)]
pub struct PlanArgs {
    /// Global shape, comma-separated (axis 0 slowest), e.g. 512,512,512.
    #[arg(long, value_parser = parse_shape, allow_hyphen_values = true)]
    pub shape: ShapeArg,
    /// Number of MPI ranks P to plan for (at most 2^40).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub ranks: u64,
    /// Which grids to evaluate: `auto` (every grid rank r < d), a grid rank R (its
    /// factorizations only) or one grid AxB...
    #[arg(long, default_value = "auto")]
    pub grid: GridChoice,
    /// Machine profile (JSON from `dfft calibrate`); default $DFFT_MACHINE, else built-in.
    #[arg(long)]
    pub machine: Option<PathBuf>,
    /// Message latency in seconds, inside and between nodes (overrides the profile).
    #[arg(long)]
    pub ts: Option<f64>,
    /// Inverse bandwidth in seconds per byte, inside and between nodes (overrides the profile).
    #[arg(long)]
    pub tw: Option<f64>,
    /// Latency between nodes only, seconds.
    #[arg(long)]
    pub ts_inter: Option<f64>,
    /// Inverse bandwidth between nodes only, seconds per byte.
    #[arg(long)]
    pub tw_inter: Option<f64>,
    /// Fixed cost of one exchange (collective call), seconds.
    #[arg(long)]
    pub exchange_overhead: Option<f64>,
    /// Local 1-D FFT cost, seconds per element·log2(n) on one core.
    #[arg(long)]
    pub fft_rate: Option<f64>,
    /// Element-granular (transposing) copy rate of one core, bytes per second.
    #[arg(long)]
    pub copy_bw: Option<f64>,
    /// Copy rate of one core for long contiguous runs, bytes per second.
    #[arg(long)]
    pub stream_bw: Option<f64>,
    /// Cores per node.
    #[arg(long)]
    pub cores_per_node: Option<usize>,
    /// Ranks placed on one node (consecutive ranks share a node).
    #[arg(long)]
    pub ranks_per_node: Option<usize>,
    /// Threads per rank.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Bytes per element: 16 for complex f64, 8 for complex f32.
    #[arg(long, default_value_t = 16, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub element_bytes: usize,
    /// Plan with transposed output (the forward result stays in the last pencil).
    #[arg(long)]
    pub transposed_out: bool,
    /// One JSON object per candidate per line (the chosen one first) instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn profile_from(args: &PlanArgs) -> fft_core::Result<LoadedProfile> {
    let mut loaded = crate::machine::load(args.machine.as_deref())?;
    let p = &mut loaded.profile;
    let overridden = [
        args.ts.is_some(),
        args.tw.is_some(),
        args.ts_inter.is_some(),
        args.tw_inter.is_some(),
        args.exchange_overhead.is_some(),
        args.fft_rate.is_some(),
        args.copy_bw.is_some(),
        args.stream_bw.is_some(),
        args.cores_per_node.is_some(),
        args.ranks_per_node.is_some(),
        args.threads.is_some(),
    ]
    .iter()
    .any(|&b| b);
    if let Some(ts) = args.ts {
        p.ts_intra_s = ts;
        p.ts_inter_s = ts;
    }
    if let Some(tw) = args.tw {
        p.tw_intra_s_per_byte = tw;
        p.tw_inter_s_per_byte = tw;
    }
    if let Some(v) = args.ts_inter {
        p.ts_inter_s = v;
    }
    if let Some(v) = args.tw_inter {
        p.tw_inter_s_per_byte = v;
    }
    if let Some(v) = args.exchange_overhead {
        p.exchange_overhead_s = v;
    }
    if let Some(v) = args.fft_rate {
        p.fft_s_per_element_log2 = v;
    }
    if let Some(v) = args.copy_bw {
        p.copy_bytes_per_s = v;
    }
    if let Some(v) = args.stream_bw {
        p.stream_bytes_per_s = v;
    }
    if let Some(v) = args.cores_per_node {
        p.cores_per_node = v;
    }
    if let Some(v) = args.ranks_per_node {
        p.ranks_per_node = v;
    }
    if let Some(v) = args.threads {
        p.threads_per_rank = v;
    }
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

/// The table `dfft plan` prints.
pub fn table(problem: &Problem, loaded: &LoadedProfile, cands: &[Candidate]) -> String {
    let profile = &loaded.profile;
    let mut s = format!(
        "dfft plan: shape {:?} on {} rank(s), {} B per element, {} output\n",
        problem.shape,
        problem.ranks,
        problem.element_bytes,
        if problem.transposed_out {
            "transposed"
        } else {
            "natural"
        }
    );
    s.push_str(&format!(
        "machine: ts {:.2e}/{:.2e} s, tw {:.2e}/{:.2e} s/B (intra/inter node), fft {:.2e} s/(elem·log2 n), copy {:.2e} B/s (runs {:.2e} B/s), {} cores and {} ranks per node, {} thread(s)/rank\nprofile: {}\n",
        profile.ts_intra_s,
        profile.ts_inter_s,
        profile.tw_intra_s_per_byte,
        profile.tw_inter_s_per_byte,
        profile.fft_s_per_element_log2,
        profile.copy_bytes_per_s,
        profile.stream_bytes_per_s,
        profile.cores_per_node,
        profile.ranks_per_node,
        profile.threads_per_rank,
        loaded.describe()
    ));
    s.push_str(&model::explain(cands));
    s.push_str("\n\nper forward+backward pair; each stage charged for its most loaded rank (or, where ranks share cores, the node's mean rank)\n");
    s.push_str(&format!(
        "  {:<14} {:>2} {:>11} {:>11} {:>11} {:>11} {:>11} {:>5} {:>7} {:>11}  note\n",
        "grid",
        "r",
        "predicted_s",
        "latency_s",
        "bandwidth_s",
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
            "{} {:<14} {:>2} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>5} {:>7} {:>11.2}  {}\n",
            if c.chosen { "*" } else { " " },
            grid_name(&p.grid),
            p.grid_rank,
            p.predicted_s,
            p.latency_s,
            p.bandwidth_s,
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

/// One JSON line per candidate (chosen first): the prediction's fields plus `chosen`,
/// `excluded`, and on the chosen line `why`.
pub fn json_lines(problem: &Problem, cands: &[Candidate]) -> Vec<String> {
    let why = model::explain(cands);
    cands
        .iter()
        .map(|c| {
            let mut v = serde_json::to_value(c).expect("a candidate serializes");
            v["shape"] = serde_json::json!(problem.shape);
            v["ranks"] = serde_json::json!(problem.ranks);
            if c.chosen {
                v["why"] = serde_json::json!(why);
            }
            serde_json::to_string(&v).expect("a value serializes")
        })
        .collect()
}

/// Runs `dfft plan`: evaluates every candidate and prints them; no MPI.
pub fn plan(args: &PlanArgs) -> Result<(), fft_core::FftError> {
    let loaded = profile_from(args)?;
    let profile = &loaded.profile;
    let ranks = usize::try_from(args.ranks).unwrap_or(usize::MAX);
    let problem = Problem {
        shape: args.shape.0.clone(),
        ranks,
        element_bytes: args.element_bytes.max(1),
        transposed_out: args.transposed_out,
    };
    let which = match &args.grid {
        GridChoice::Auto => Candidates::All,
        GridChoice::Rank(r) => Candidates::Rank(*r),
        GridChoice::Dims(dims) => Candidates::Grid(dims.clone()),
    };
    let cands = model::evaluate_among(&problem, profile, &which)?;
    let text = if args.json {
        json_lines(&problem, &cands)
            .into_iter()
            .map(|line| line + "\n")
            .collect()
    } else {
        table(&problem, &loaded, &cands)
    };
    // A reader that stops early (`dfft plan --json | head -1`) closes the pipe: not an error
    // of the plan, so it ends quietly instead of panicking in `println!`.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("dfft plan: cannot write the plan: {e}");
            std::process::exit(1);
        }
    }
    Ok(())
}

/// The model's part in `dfft run`: the profile with this launch's facts filled in (ranks per
/// node, threads per rank, cores; agreed on by all ranks), and the problem.
pub struct RunModel {
    /// The profile used.
    pub profile: MachineProfile,
    /// The problem (shape, ranks, complex f64, output layout).
    pub problem: Problem,
    /// Whether the grid was chosen by the model (`--grid auto`).
    pub auto: bool,
}

impl RunModel {
    /// Loads the profile (`--machine`, `$DFFT_MACHINE` or defaults), completes it with facts
    /// of this launch (max over ranks, so every rank has the same numbers) and, for
    /// `GridChoice::Auto`, replaces the choice with the model's grid. Collective.
    pub fn prepare(
        world: &mpi::topology::SimpleCommunicator,
        shape: &[usize],
        mut options: fft_core::FftOptions,
        machine: Option<&PathBuf>,
        element_bytes: usize,
    ) -> fft_core::Result<(fft_core::FftOptions, RunModel)> {
        use mpi::collective::SystemOperation;
        use mpi::traits::*;
        let mut profile = crate::machine::load(machine.map(PathBuf::as_path))?.profile;
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
        };
        let auto = options.grid == fft_core::GridChoice::Auto;
        if auto && shape.len() >= 2 {
            let grid = model::choose(&problem, &profile)?;
            options.grid = fft_core::GridChoice::Dims(grid.dims().to_vec());
        }
        options.machine = profile.clone();
        Ok((
            options,
            RunModel {
                profile,
                problem,
                auto,
            },
        ))
    }

    /// The model's predicted forward+backward time on `grid`.
    pub fn predicted_s(&self, grid: &redist::GridShape) -> Option<f64> {
        model::predict(&self.problem, grid, &self.profile)
            .ok()
            .map(|p| p.predicted_s)
    }
}
