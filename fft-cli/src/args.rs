//! Command-line arguments.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Distributed multidimensional FFTs over MPI.
#[derive(Debug, Parser)]
#[command(
    name = "dfft",
    version,
    about = "Distributed multidimensional FFTs over MPI (slab, pencil and higher-rank grids)",
    after_help = "Examples:\n  mpirun -n 4 dfft run --shape 64,64,64\n  mpirun -n 8 dfft run --shape 256,256,256 --grid 4x2 --iters 20 --json\n  srun -n 4 --mpi=pmix dfft run --input field.npy --output spectrum.npy\n  mpirun -n 4 dfft bench-redist --shape 128,128,128 --grid 2 --json\n\nVerbosity: DFFT_LOG (or RUST_LOG) = error|warn|info|debug|trace, e.g. DFFT_LOG=info."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run forward and backward transforms, verify them and time them.
    Run(RunArgs),
    /// Time two complete sweeps of redistribution (2r+1 exchanges), Birkeland & Sørøvik §6.
    BenchRedist(crate::bench_redist::BenchRedistArgs),
    /// Redistribute between two block-cyclic distributions (any grids), verify and time it.
    Redist(crate::redist_cmd::RedistArgs),
    /// Predict every candidate processor grid with the complexity model (no MPI needed).
    Plan(crate::plan_cmd::PlanArgs),
    /// Measure ts, tw, the FFT and copy rates under mpirun/srun; write a machine profile.
    Calibrate(crate::calibrate_cmd::CalibrateArgs),
}

/// Arguments of `dfft run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  mpirun -n 4 dfft run --shape 64,64,64\n  mpirun -n 6 dfft run --shape 16,21,41 --grid 3x2 --method pairwise\n  mpirun -n 2 dfft run --input in.npy --output out.npy\n  mpirun -n 4 dfft run --shape 64,64,64 --kind r2c --precision f32 --batch 3 --transposed-out\n  mpirun -n 2 dfft run --kind c2r --input half.npy --shape 32,32,30 --output real.npy\n  mpirun -n 4 dfft run --shape 33,64,64 --kind r2r:dct1,dct2,dst2 --normalization ortho"
)]
pub struct RunArgs {
    /// Global shape, comma-separated (axis 0 slowest, C order), e.g. 64,64,64.
    #[arg(long, value_parser = parse_shape, allow_hyphen_values = true)]
    pub shape: Option<ShapeArg>,
    /// Processor grid: `auto`, a grid rank R (balanced dimensions), or dimensions AxB...
    #[arg(long, default_value = "auto")]
    pub grid: fft_core::GridChoice,
    /// Timed forward+backward pairs.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=crate::args::MAX_COUNT))]
    pub iters: u64,
    /// Untimed forward+backward pairs before timing.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=crate::args::MAX_COUNT))]
    pub warmup: u64,
    /// Exchange method: alltoallv or pairwise.
    #[arg(long, default_value = "alltoallv")]
    pub method: redist::Method,
    /// Print one JSON object on one line (rank 0) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Show progress on stderr (rank 0) even when it is not a terminal, as under mpirun or
    /// srun (also DFFT_PROGRESS=1).
    #[arg(long)]
    pub progress: bool,
    /// Machine profile for `--grid auto` and the predicted time (JSON from `dfft calibrate`);
    /// default $DFFT_MACHINE, else the model's built-in defaults.
    #[arg(long)]
    pub machine: Option<PathBuf>,
    /// Read the forward input from a C-order .npy file whose dtype matches --kind and
    /// --precision (c2c: complex128/complex64, or real of the precision; r2c, r2r: float64/
    /// float32; c2r: the complex half spectrum). Each rank reads only its own block.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Write the forward output (scaled as --normalization says) as a C-order .npy file of the
    /// run's precision (complex for c2c and r2c, real for c2r and r2r). Each rank writes its
    /// own block; the file appears complete or not at all.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Seed of the random input (sum of plane waves) when there is no --input.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Leave the forward output in the last pencil layout (skip the exchanges back), like
    /// FFTW-MPI's TRANSPOSED_OUT; backward takes that layout. --output still writes C order.
    #[arg(long)]
    pub transposed_out: bool,
    /// Let the transforms use their input as scratch (FFTW_DESTROY_INPUT, the default of
    /// FFTW's c2r plans): the plan holds less work memory. The run keeps the original input
    /// and copies it into a scratch block before each timed pair (untimed), which runs
    /// forward(scratch -> output) and backward(output -> scratch).
    #[arg(long)]
    pub destroy_input: bool,
    /// Transform in place (c2c, r2c and r2r; FftOptions::in_place): one buffer of the larger
    /// of the input and output blocks (r2c: the real rows padded to 2(n/2+1) scalars, FFTW's
    /// layout) holds the input, then the spectrum, then the round trip (c2r: not in place).
    /// The run keeps the original input and copies it into that buffer before each timed
    /// pair (untimed), which runs forward and backward in place.
    #[arg(long, conflicts_with_all = ["destroy_input", "output"])]
    pub in_place: bool,
    /// Bit-for-bit reproducible results whatever the decomposition (FftOptions::deterministic):
    /// the same bits on any ranks, grid, threads, --alloc and --method, so that --output files
    /// of different runs compare equal byte for byte.
    #[arg(long)]
    pub deterministic: bool,
    /// Print where the time goes per step of each direction's program: what the step does,
    /// its time per call (max over ranks), its share of the pair, the bytes its blocks hold
    /// (read and written, all ranks) per second, its Gflop/s, and against the machine
    /// profile's memory bandwidth where a calibrated profile has one (JSON: result.steps).
    #[arg(long)]
    pub steps: bool,
    /// A 1-D --shape's forward input (backward output) in FFTW-MPI's scrambled order
    /// (SCRAMBLED_IN: the axis's rows × cols matrix transposed), saving an exchange each way.
    #[arg(long)]
    pub scrambled_in: bool,
    /// Transform only these axes (0-based, comma-separated, each once, e.g. `1,2`), leaving
    /// the others as they are (numpy.fft.fftn(x, axes=...); r2c and c2r halve the highest
    /// listed axis, as numpy.fft.rfftn with the axes in increasing order). c2c, r2c and c2r;
    /// the model picks the grid for this partial transform.
    #[arg(long, value_delimiter = ',', num_args = 1.., conflicts_with_all = ["scrambled_in", "scrambled_out"])]
    pub axes: Option<Vec<usize>>,
    /// A 1-D --shape's forward output (backward input) in FFTW-MPI's scrambled order
    /// (SCRAMBLED_OUT: the spectrum as the rows × cols matrix whose columns hold it in order),
    /// saving an exchange each way.
    #[arg(long)]
    pub scrambled_out: bool,
    /// Write the round trip backward(forward(x)) (the input's dtype and shape, scaled as
    /// --normalization says) as a C-order .npy file, like --output; for comparing backward
    /// transforms byte for byte (c2c, r2c and r2r; not with --in-place or --destroy-input).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["in_place", "destroy_input"])]
    pub roundtrip_output: Option<PathBuf>,
    /// Who allocates the blocks the transforms write (the forward output and the round
    /// trip's block): `plan` (`alloc_input`/`alloc_output`: on one node, shared-memory windows
    /// through which the exchanges move rows between the ranks' blocks in place) or `caller`
    /// (plain vectors, whose rows cross ranks through messages).
    #[arg(long, value_enum, default_value_t = Alloc::Plan)]
    pub alloc: Alloc,
    /// Transform kind: c2c, r2c (real input, numpy.fft.rfftn's half spectrum), c2r (half
    /// spectrum to real, numpy.fft.irfftn; the real shape is --shape) or `r2r:<t0>,<t1>,...`
    /// with one type per axis among dct1..dct4, dst1..dst4 (FFTW's REDFT/RODFT), r2hc, hc2r
    /// and dht (FFTW's R2HC, HC2R, DHT).
    #[arg(long, default_value = "c2c")]
    pub kind: crate::kind::Kind,
    /// Fields transformed together (one exchange per stage for all of them). Without --input
    /// each field gets its own random modes (seed + field); an --input file then holds the
    /// fields along a leading axis of length K (so does --output).
    #[arg(long, default_value_t = 1, value_parser = parse_batch)]
    pub batch: usize,
    /// How the --batch fields are split over the ranks: `auto` (the default: the complexity
    /// model, with this machine's profile, weighs one transform of all K fields over all P
    /// ranks against G groups of P/G ranks taking K/G fields each; `dfft plan --fields K`
    /// shows why) or a group count G (1: all ranks transform all fields; G must divide the
    /// ranks and be at most K). Files and results are the same either way.
    #[arg(long, default_value = "auto", value_parser = parse_groups)]
    pub groups: fft_core::Groups,
    /// Precision of the transforms and of the .npy files: f32 or f64.
    #[arg(long, value_enum, default_value_t = crate::kind::Precision::F64)]
    pub precision: crate::kind::Precision,
    /// Scaling: none (neither direction), backward (1/N on backward, numpy's default),
    /// ortho (1/sqrt(N) both ways) or forward (1/N on forward). N counts elements (logical sizes for r2r axes).
    #[arg(long, default_value = "backward")]
    pub normalization: fft_core::Normalization,
    /// Threads per rank. Default: the cores this rank may use divided by the ranks sharing
    /// them on its node (RAYON_NUM_THREADS, if set, capped at those cores).
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<usize>,
}

/// Parses `--threads`: 1 to [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a number of threads from 1 to {MAX_THREADS}, got '{s}'"
        )),
    }
}

/// The most threads per rank `--threads` accepts (the bindings' limit too).
pub const MAX_THREADS: usize = fft_core::MAX_THREADS;

/// The most repetitions a count flag (`--iters`, `--warmup`, `--repeat`, `--inner`) takes:
/// a million pairs of the smallest transform already take seconds, and every timed one
/// keeps its time (8 bytes).
pub const MAX_COUNT: u64 = 1_000_000;

/// Parses `--groups`: `auto` or a group count of at least 1.
pub fn parse_groups(s: &str) -> Result<fft_core::Groups, String> {
    s.parse()
}

/// Parses `--batch`: at least one field.
pub fn parse_batch(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("a batch holds at least 1 field, got 0".to_string()),
        Ok(k) => Ok(k),
        Err(_) => Err(format!("'{s}' is not a positive integer")),
    }
}

/// A global shape given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeArg(pub Vec<usize>);

/// Parses `64,64,64` (also `64x64x64`); a 1-D shape is one length.
pub fn parse_shape(s: &str) -> Result<ShapeArg, String> {
    cli_common::parse_shape(s).map(ShapeArg)
}

impl Cli {
    /// Usage checks clap cannot express: `dfft run` needs `--shape` or `--input` (and `--shape`
    /// with `--kind c2r`); an r2r type list must give one type per axis of `--shape` (DCT-I
    /// at least 2 points); `--in-place` does not run c2r; a grid of rank r needs r < d; an
    /// HDF5 file needs `:/dataset`.
    pub fn check(self) -> Result<Self, clap::Error> {
        let usage =
            |kind, text: String| Err(<Cli as clap::CommandFactory>::command().error(kind, text));
        let invalid = clap::error::ErrorKind::ValueValidation;
        match &self.command {
            Command::Run(run) => {
                if let Some(text) = run.usage_problem() {
                    let kind = if text.starts_with("the argument") {
                        clap::error::ErrorKind::MissingRequiredArgument
                    } else {
                        invalid
                    };
                    return usage(kind, text);
                }
            }
            Command::BenchRedist(b) => {
                if let Some(text) = grid_problem(&b.grid, b.shape.0.len()) {
                    return usage(invalid, text);
                }
            }
            _ => {}
        }
        Ok(self)
    }
}

impl RunArgs {
    /// What makes `--groups G` unusable with the other arguments or the launch's size.
    fn groups_problem(&self) -> Option<String> {
        let fft_core::Groups::Fixed(g) = self.groups else {
            return None;
        };
        if g == 1 {
            return None;
        }
        if g > self.batch {
            return Some(format!(
                "--groups {g} needs at least {g} fields, got --batch {}",
                self.batch
            ));
        }
        if let Some(p) = crate::redist_cmd::launcher_size().filter(|p| p % g != 0) {
            return Some(format!(
                "--groups {g}: the {p} ranks of this launch do not split into {g} equal groups"
            ));
        }
        let flags = [
            (self.in_place, "--in-place"),
            (self.transposed_out, "--transposed-out"),
        ];
        let (_, flag) = flags.into_iter().find(|(set, _)| *set)?;
        Some(format!(
            "--groups {g} splits the batch into groups, which {flag} does not take (use --groups 1)"
        ))
    }

    /// `--axes` that a `d`-dimensional `--kind` cannot transform: an axis out of range or
    /// listed twice, or a real-to-real kind (its types already name every axis).
    fn axes_problem(&self, d: usize) -> Option<String> {
        let axes = self.axes.as_ref()?;
        if matches!(self.kind, crate::kind::Kind::R2r(_)) {
            return Some(format!(
                "--axes {axes:?} takes c2c, r2c and c2r runs; --kind {} names every axis's type",
                self.kind
            ));
        }
        fft_core::AxisKind::partial(d, axes, fft_core::AxisKind::Fft)
            .err()
            .map(|e| format!("--axes: {e}"))
    }

    /// What makes these arguments unusable, from the command line alone.
    fn usage_problem(&self) -> Option<String> {
        if self.shape.is_none() && self.input.is_none() {
            return Some(
                "the argument '--shape <SHAPE>' is required unless --input gives the array"
                    .to_string(),
            );
        }
        if self.shape.is_none() && self.kind == crate::kind::Kind::C2r {
            return Some(
                "the argument '--shape <SHAPE>' is required with --kind c2r (the real output's \
                 shape: the half spectrum does not tell an even last axis from an odd one)"
                    .to_string(),
            );
        }
        if self.in_place && self.kind == crate::kind::Kind::C2r {
            return Some(
                "--in-place runs c2c, r2c and r2r plans; a c2r run's input is the half \
                 spectrum: use --kind r2c --in-place (its backward is the c2r, in place)"
                    .to_string(),
            );
        }
        for (flag, arg) in [
            ("--input", &self.input),
            ("--output", &self.output),
            ("--roundtrip-output", &self.roundtrip_output),
        ] {
            if let Some(text) = arg
                .as_deref()
                .and_then(|a| crate::files::FileRef::usage_problem(flag, a))
            {
                return Some(text);
            }
        }
        let shape = &self.shape.as_ref()?.0;
        if shape.len() == 1 {
            // The distributed 1-D transform: c2c on synthetic data, on a slab of its matrix.
            if self.kind != crate::kind::Kind::C2c {
                return Some(format!(
                    "--shape {}: a 1-D shape is the distributed 1-D transform, --kind c2c only (a {} transform needs at least 2 axes)",
                    shape[0], self.kind
                ));
            }
            if self.input.is_some() || self.output.is_some() || self.roundtrip_output.is_some() {
                return Some(format!(
                    "--shape {}: the distributed 1-D transform runs on synthetic data (no --input or --output)",
                    shape[0]
                ));
            }
            return None;
        }
        if let Some(text) = self.groups_problem() {
            return Some(text);
        }
        if self.scrambled_in || self.scrambled_out {
            return Some(format!(
                "--scrambled-in and --scrambled-out need a 1-D --shape (the distributed 1-D transform), got {} axes",
                shape.len()
            ));
        }
        if let Err(e) = self.kind.check_axes(shape) {
            return Some(e.to_string());
        }
        if let Some(text) = self.axes_problem(shape.len()) {
            return Some(text);
        }
        grid_problem(&self.grid, shape.len())
    }
}

/// Why `grid` cannot distribute a `d`-dimensional array (a grid of rank r needs 1 <= r < d).
fn grid_problem(grid: &fft_core::GridChoice, d: usize) -> Option<String> {
    let r = match grid {
        fft_core::GridChoice::Rank(r) => *r,
        fft_core::GridChoice::Dims(dims) => dims.len(),
        _ => return None,
    };
    (r == 0 || r >= d).then(|| {
        format!("a grid of rank {r} cannot distribute a {d}-dimensional array (need 1 <= r < d)")
    })
}

/// A clap usage error as one line: `dfft: error: <clap's message> (see --help)`. clap's
/// message spans several lines (the missing arguments' names, the accepted values, a "similar
/// argument" tip); they are joined, and only the usage summary and the pointer to --help are
/// left out.
pub fn one_line_error(e: &clap::Error) -> String {
    format!(
        "dfft: error: {} (see --help)",
        cli_common::one_line(&e.render().to_string())
    )
}

/// Who allocates `dfft run`'s blocks (`--alloc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Alloc {
    /// The plan (`alloc_input`/`alloc_output`): shared-memory windows on one node.
    Plan,
    /// The caller: plain vectors.
    Caller,
}

impl std::fmt::Display for Alloc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Alloc::Plan => "plan",
            Alloc::Caller => "caller",
        })
    }
}
