//! dfft against FFTW-MPI on the same machine, in one run, as ratios; with the floors.
//!
//! For each transform kind (c2c; r2c forward with c2r backward), each shape and each
//! configuration (1 rank; 2 ranks; 1 rank × 2 threads) it runs `dfft run --kind K --json` and
//! the FFTW-MPI driver (`benches/fftw/fftw_mpi_bench.c`, FFTW_MEASURE; r2c with
//! `fftw_mpi_plan_dft_r2c_3d`/`c2r_3d` on FFTW-MPI's padded real layout), both in the normal
//! layout and with transposed output, and measures here, on the configuration's cores, right
//! before its runs and after each of its rounds (the best):
//! * the memory floor: a forward+backward pair of an array larger than the caches needs at
//!   least two read+write passes over it per transform (planes in cache, then columns), so
//!   four copies of the array (c2c: the complex array; r2c: the complex half spectrum), timed
//!   on all the configuration's cores at once ([`floors::copy_seconds`]);
//! * the arithmetic floor: 5 N log2 N flops per c2c transform (half for r2c), two per pair, at
//!   the FMA peak of those cores ([`floors::fma_peak`], AVX-512 where the CPU has it);
//! * the in-cache 1-D work: the 1-D FFTs alone on contiguous lines, single-threaded, divided
//!   by the cores the configuration uses. c2c: rustfft forward and backward along every axis;
//!   r2c: realfft along the last axis, then complex FFTs along the other axes on the half
//!   spectrum, and back. Not a floor (dfft does the same work in fewer passes over memory);
//!   also on all cores at once (in equal shares of lines, each in its own buffer) in the CSV.
//!
//! The table's `dfft / floor` is against the larger of the two floors.
//!
//! r2c runs `dfft run --destroy-input`, the input contract of FFTW's defaults (its c2r plans
//! destroy their input, its r2c plans keep it; dfft's r2c forward keeps it too on these slab
//! plans, whose only moving step is the r2c into the output). c2c keeps the input on both
//! sides.
//!
//! Both tools' round-trip errors are checked (FFTW's driver also checks its forward output by
//! Parseval); the run stops if one is off, so a wrong setup cannot show as a good ratio.
//! Prints a table and writes `target/bench/fft-vs-fftw.csv` and `.jsonl` (column `kind`;
//! `--out STEM` names them `STEM.csv` and `STEM.jsonl`). The `dfft` measured is the release
//! build users get (`cargo build --release`: `target/release/dfft`; `--dfft PATH` measures
//! another). `--doc FILE` also writes the results as a Markdown table into FILE, between the
//! lines `<!-- bench-fft:begin -->` and `<!-- bench-fft:end -->` (docs/performance.md's
//! current table), replacing what was there.
//!
//! FFTW's plans are cached as wisdom, one file per configuration in
//! `target/bench/fftw-wisdom/<threads>t-<ranks>r.wisdom` (`--fftw-wisdom DIR` elsewhere, `off`
//! for none): the driver plans with FFTW_MEASURE only what the wisdom lacks, so a shape's
//! minutes of planning are paid once per machine. Each FFTW JSON line has `plan_s` and
//! `plan_from_wisdom`.
//!
//! With `--rounds R` every run of a configuration is repeated R times, the rounds one after
//! the other, and each run keeps its best round: the tools' best runs then come from the same
//! stretches of a machine whose speed drifts over minutes.
//!
//! Usage: `bench-fft [--shapes 128x128x128,256x256x256] [--iters K] [--rounds R]
//! [--kinds c2c,r2c] [--fftw-wisdom DIR|off] [--doc FILE]` (scripts/bench-fft); `bench-fft --help`
//! for the defaults.

use benches::floors;
use clap::Parser;
use num_complex::Complex;
use realfft::RealFftPlanner;
use redist::alloc::AlignedBuf;
use rustfft::FftPlanner;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

struct Config {
    name: &'static str,
    ranks: usize,
    threads: usize,
}

const CONFIGS: [Config; 3] = [
    Config {
        name: "1 rank",
        ranks: 1,
        threads: 1,
    },
    Config {
        name: "2 ranks",
        ranks: 2,
        threads: 1,
    },
    Config {
        name: "1 rank x 2 threads",
        ranks: 1,
        threads: 2,
    },
];

/// The `dfft` binary measured (`--dfft`), set once in `main`.
static DFFT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A dfft report's `problem` and `result` fields, flat (the common JSON schema nests them);
/// other JSON (the FFTW driver's) as it is.
fn flat(v: Value) -> Value {
    if v.get("schema_version").is_none() {
        return v;
    }
    let mut out = serde_json::Map::new();
    for part in ["problem", "result"] {
        if let Some(Value::Object(fields)) = v.get(part) {
            out.extend(fields.clone());
        }
    }
    if let Some(p) = v.get("provenance") {
        out.insert("provenance".into(), p.clone());
    }
    Value::Object(out)
}

fn run_json(mut cmd: Command, what: &str) -> Value {
    let out = mpi_harness::run_command(
        {
            cmd.env("RUST_LOG", "warn");
            cmd
        },
        Duration::from_secs(900),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    match (out.status.success(), line) {
        (true, Some(line)) => flat(serde_json::from_str(line).expect("valid JSON")),
        _ => panic!(
            "{what} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// `dfft run` of `kind` on `shape` in configuration `c`; `alloc` is `--alloc` (`plan`: its
/// blocks in shared-memory windows; `caller`: plain vectors).
fn dfft(
    kind: &str,
    shape: &[usize],
    c: &Config,
    transposed: bool,
    iters: usize,
    alloc: &str,
) -> Value {
    let mut cmd = mpi_harness::mpirun_command(c.ranks);
    cmd.args(["-x", &format!("RAYON_NUM_THREADS={}", c.threads)]);
    let bin = repo_root().join(DFFT.get().expect("set in main"));
    let shape_s: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    cmd.arg(bin).args([
        "run",
        "--shape",
        &shape_s.join(","),
        "--grid",
        "1",
        "--iters",
        &iters.to_string(),
        "--warmup",
        "2",
        "--json",
        "--kind",
        kind,
        "--alloc",
        alloc,
    ]);
    if transposed {
        cmd.arg("--transposed-out");
    }
    if kind == "r2c" {
        // The same input contract as FFTW's defaults: its c2r plans destroy their input
        // (FFTW_DESTROY_INPUT), its r2c plans keep it. dfft's c2r backward then uses its
        // input as scratch too; its r2c forward keeps it on these slab plans (its only moving
        // step is the r2c itself, which writes the output).
        cmd.arg("--destroy-input");
    }
    run_json(cmd, "dfft run")
}

/// The FFTW driver's wisdom file for configuration `c` in `dir`, or `-` (none).
fn wisdom_file(dir: Option<&PathBuf>, c: &Config) -> String {
    dir.map_or("-".to_string(), |d| {
        d.join(format!("{}t-{}r.wisdom", c.threads, c.ranks))
            .display()
            .to_string()
    })
}

fn fftw(
    kind: &str,
    shape: &[usize],
    c: &Config,
    transposed: bool,
    iters: usize,
    wisdom: Option<&PathBuf>,
) -> Value {
    let mut cmd = mpi_harness::mpirun_command(c.ranks);
    cmd.arg(repo_root().join("target/bench/fftw_mpi_bench"));
    cmd.args(shape.iter().map(|n| n.to_string()));
    cmd.args([
        iters.to_string(),
        "2".to_string(),
        if transposed { "transposed" } else { "normal" }.to_string(),
        c.threads.to_string(),
        kind.to_string(),
        wisdom_file(wisdom, c),
    ]);
    run_json(cmd, "fftw_mpi_bench")
}

/// The lines of one share when `lines` lines are split into `parts` shares (the largest).
fn share(lines: usize, parts: usize) -> usize {
    lines.div_ceil(parts)
}

/// Complex FFTs forward and backward along every axis length in `axes`, on `data` viewed as
/// contiguous lines: for each length `n`, one share of the array's `lines(n)` lines of it,
/// as one batch (the whole array when `parts` is 1).
fn complex_passes(
    planner: &mut FftPlanner<f64>,
    axes: &[usize],
    total: usize,
    parts: usize,
    data: &mut [Complex<f64>],
) {
    for &n in axes {
        let len = share(total / n, parts) * n;
        for fft in [planner.plan_fft_forward(n), planner.plan_fft_inverse(n)] {
            let mut scratch = vec![Complex::default(); fft.get_inplace_scratch_len()];
            fft.process_with_scratch(&mut data[..len], &mut scratch);
        }
    }
}

/// Seconds of the 1-D FFT work of one forward+backward pair on contiguous lines, split into
/// `parts` equal shares of lines that as many threads transform at once, each in its own
/// buffer (on 2 MiB pages and a cache line, as dfft's blocks): the slowest share of a round,
/// best of three rounds. With one part, one core's time for the whole work; with more, what
/// the cores give while they share the memory system. c2c: complex FFTs along every axis.
/// r2c: a real FFT of every last-axis line (realfft) and its inverse, plus complex FFTs of
/// the other axes' lengths on the half spectrum.
fn fft_floor(kind: &str, shape: &[usize], parts: usize) -> f64 {
    let barrier = std::sync::Barrier::new(parts);
    let times: Vec<[f64; 3]> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..parts)
            .map(|_| s.spawn(|| floor_share(kind, shape, parts, &barrier)))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    (0..3)
        .map(|round| times.iter().map(|t| t[round]).fold(0.0, f64::max))
        .fold(f64::MAX, f64::min)
}

/// One thread's share of [`fft_floor`]: its seconds in each of three rounds, each round
/// started together with the other threads.
fn floor_share(
    kind: &str,
    shape: &[usize],
    parts: usize,
    barrier: &std::sync::Barrier,
) -> [f64; 3] {
    let total: usize = shape.iter().product();
    let (last, rest) = shape.split_last().expect("a shape");
    let mut planner = FftPlanner::new();
    let mut times = [0.0; 3];
    if kind == "c2c" {
        let len = shape
            .iter()
            .map(|&n| share(total / n, parts) * n)
            .max()
            .unwrap();
        let mut data: AlignedBuf<Complex<f64>> = AlignedBuf::new(len);
        data.fill(Complex::new(0.5, -0.25));
        for time in &mut times {
            barrier.wait();
            let t = Instant::now();
            complex_passes(&mut planner, shape, total, parts, &mut data);
            *time = t.elapsed().as_secs_f64();
        }
        return times;
    }
    let lines = share(total / last, parts);
    let half = last / 2 + 1;
    // The half spectrum's lines along the other axes, shared the same way.
    let spec_total = total / last * half;
    let spec_len = rest
        .iter()
        .map(|&n| share(spec_total / n, parts) * n)
        .chain([lines * half])
        .max()
        .unwrap();
    let mut real: AlignedBuf<f64> = AlignedBuf::new(lines * last);
    real.fill(0.5);
    let mut spec: AlignedBuf<Complex<f64>> = AlignedBuf::new(spec_len);
    spec.fill(Complex::new(0.5, -0.25));
    let mut rplanner = RealFftPlanner::<f64>::new();
    let (r2c, c2r) = (
        rplanner.plan_fft_forward(*last),
        rplanner.plan_fft_inverse(*last),
    );
    let mut rscratch = vec![Complex::default(); r2c.get_scratch_len().max(c2r.get_scratch_len())];
    for time in &mut times {
        barrier.wait();
        let t = Instant::now();
        for (x, y) in real
            .chunks_exact_mut(*last)
            .zip(spec.chunks_exact_mut(half))
        {
            r2c.process_with_scratch(x, y, &mut rscratch).unwrap();
        }
        complex_passes(&mut planner, rest, spec_total, parts, &mut spec);
        for (x, y) in real
            .chunks_exact_mut(*last)
            .zip(spec.chunks_exact_mut(half))
        {
            // realfft wants a real DC (and Nyquist) bin; a wrong imaginary part only errors.
            y[0].im = 0.0;
            if last % 2 == 0 {
                y[half - 1].im = 0.0;
            }
            c2r.process_with_scratch(y, x, &mut rscratch).unwrap();
        }
        *time = t.elapsed().as_secs_f64();
    }
    std::hint::black_box(&real);
    times
}

/// The limits a configuration is measured against, timed on its cores in the same run
/// (module docs).
#[derive(Debug, Clone, Copy)]
struct Floors {
    /// The 1-D FFT work on contiguous lines, one core, divided by the configuration's cores.
    work_1d: f64,
    /// The same work in equal shares on all the configuration's cores at once.
    work_1d_all: f64,
    /// One copy of the array on one core.
    copy_1: f64,
    /// One copy of the array split among the configuration's cores, copying at once.
    copy_all: f64,
    /// Floating-point operations per second of the configuration's cores (FMA in registers).
    peak: f64,
}

impl Floors {
    /// Times every floor of `kind` on `shape` for a configuration of `cores` cores.
    fn measure(kind: &str, shape: &[usize], cores: usize) -> Self {
        let bytes = array_bytes(kind, shape);
        let work_1d = fft_floor(kind, shape, 1);
        let copy_1 = floors::copy_seconds(bytes, 1);
        Self {
            work_1d: work_1d / cores as f64,
            work_1d_all: if cores == 1 {
                work_1d
            } else {
                fft_floor(kind, shape, cores)
            },
            copy_1,
            copy_all: if cores == 1 {
                copy_1
            } else {
                floors::copy_seconds(bytes, cores)
            },
            peak: floors::fma_peak(cores),
        }
    }

    /// The best of two measurements: the shorter times, the higher peak.
    fn best(self, other: Self) -> Self {
        Self {
            work_1d: self.work_1d.min(other.work_1d),
            work_1d_all: self.work_1d_all.min(other.work_1d_all),
            copy_1: self.copy_1.min(other.copy_1),
            copy_all: self.copy_all.min(other.copy_all),
            peak: self.peak.max(other.peak),
        }
    }

    /// The memory floor of a forward+backward pair: two read+write passes over the array per
    /// transform (planes in cache, then columns), each at the speed of one copy.
    fn memory(&self) -> f64 {
        4.0 * self.copy_all
    }

    /// The arithmetic floor of a forward+backward pair at the measured peak.
    fn arithmetic(&self, kind: &str, shape: &[usize]) -> f64 {
        2.0 * transform_flops(kind, shape) / self.peak
    }

    /// The larger of the two floors.
    fn floor(&self, kind: &str, shape: &[usize]) -> f64 {
        self.memory().max(self.arithmetic(kind, shape))
    }

    /// The floors and what they come from, for the JSON lines.
    fn json(&self, kind: &str, shape: &[usize]) -> Value {
        json!({"memory_floor_s": self.memory(), "arithmetic_floor_s": self.arithmetic(kind, shape),
               "floor_s": self.floor(kind, shape), "copy_1_s": self.copy_1,
               "copy_all_s": self.copy_all, "array_bytes": array_bytes(kind, shape),
               "flops_per_pair": 2.0 * transform_flops(kind, shape), "peak_flops": self.peak,
               "vector_isa": floors::vector_isa(), "work_1d_s": self.work_1d,
               "work_1d_all_s": self.work_1d_all})
    }
}

/// Bytes of the array the exchanges move: the complex array (c2c) or the complex half
/// spectrum (r2c, about as large as its real input).
fn array_bytes(kind: &str, shape: &[usize]) -> usize {
    let total: usize = shape.iter().product();
    let last = shape[shape.len() - 1];
    16 * if kind == "c2c" {
        total
    } else {
        total / last * (last / 2 + 1)
    }
}

/// The conventional flop count of one transform: 5 N log2 N for c2c, half that for r2c
/// (FFTW's "mflops" convention), whatever the algorithm actually does.
fn transform_flops(kind: &str, shape: &[usize]) -> f64 {
    let n: usize = shape.iter().product();
    let c2c = 5.0 * n as f64 * (n as f64).log2();
    if kind == "c2c" {
        c2c
    } else {
        c2c / 2.0
    }
}

/// Panics unless the run's own verification passed: a wrong setup must not show as a ratio.
fn check(v: &Value, what: &str) {
    for key in ["roundtrip_error", "parseval_error", "reference_error"] {
        if let Some(e) = v.get(key) {
            let e = e.as_f64().unwrap_or(f64::NAN);
            assert!(e <= 1e-9, "{what}: {key} = {e} (expected <= 1e-9):\n{v}");
        }
    }
}

/// dfft against FFTW-MPI on this machine, in one run, as ratios; with the floors.
#[derive(Debug, Parser)]
#[command(
    name = "bench-fft",
    about = "dfft against FFTW-MPI on this machine, in one run, as ratios; with the memory and arithmetic floors",
    long_about = None,
    after_help = "For each kind, shape and configuration (1 rank; 2 ranks; 1 rank x 2 threads) it runs \
`dfft run --json` and the FFTW-MPI driver (target/bench/fftw_mpi_bench), in the normal layout and \
with transposed output; prints a table and writes target/bench/fft-vs-fftw.{csv,jsonl} (--out). Needs \
target/release/dfft (--dfft) and the driver built (scripts/bench-fft does that). --doc FILE \
writes the Markdown table into FILE between <!-- bench-fft:begin --> and <!-- bench-fft:end -->.\n\nExample:\n  \
scripts/bench-fft --shapes 128x128x128 --iters 5 --kinds r2c"
)]
struct Args {
    /// 3-D shapes to measure, comma-separated, each AxBxC (axis 0 slowest).
    #[arg(
        long,
        value_name = "AxBxC,...",
        value_delimiter = ',',
        value_parser = parse_shape3,
        default_value = "128x128x128,256x256x256,384x384x384,250x256x243"
    )]
    shapes: Vec<[usize; 3]>,
    /// Timed forward+backward pairs per run (the minimum is reported).
    #[arg(
        long,
        value_name = "K",
        default_value_t = 10,
        value_parser = at_least_one()
    )]
    iters: usize,
    /// Rounds per configuration: every run of a configuration (both tools, both layouts) is
    /// repeated this many times, one round after the other, and each keeps its best round
    /// (lowest min). On a machine whose speed drifts over minutes, rounds interleave the
    /// tools, so their best runs come from the same stretches of time.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1,
        value_parser = at_least_one()
    )]
    rounds: usize,
    /// Transform kinds, comma-separated: c2c, and r2c (r2c forward with c2r backward).
    #[arg(
        long,
        value_name = "KIND,...",
        value_delimiter = ',',
        value_parser = ["c2c", "r2c"],
        default_value = "c2c,r2c"
    )]
    kinds: Vec<String>,
    /// Folder of FFTW wisdom files (one per configuration: <threads>t-<ranks>r.wisdom), or
    /// `off` to plan without wisdom [default: target/bench/fftw-wisdom].
    #[arg(long, value_name = "DIR|off")]
    fftw_wisdom: Option<PathBuf>,
    /// The `dfft` binary to measure (relative paths from the repository root): the release
    /// build users get.
    #[arg(long, value_name = "PATH", default_value = "target/release/dfft")]
    dfft: PathBuf,
    /// Also write the results as a Markdown table into this file, between the lines
    /// `<!-- bench-fft:begin -->` and `<!-- bench-fft:end -->` (e.g. docs/performance.md).
    #[arg(long, value_name = "FILE")]
    doc: Option<PathBuf>,
    /// Stem of the result files in target/bench: <STEM>.csv and <STEM>.jsonl (a run with
    /// other shapes need not overwrite an earlier one's).
    #[arg(long, value_name = "STEM", default_value = "fft-vs-fftw")]
    out: String,
}

/// The parser of a count that must be at least one (`--iters`, `--rounds`).
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

/// One `--shapes` item: `AxBxC`, three positive axis lengths.
fn parse_shape3(s: &str) -> Result<[usize; 3], String> {
    let lengths = cli_common::parse_shape(s)?;
    <[usize; 3]>::try_from(lengths.as_slice()).map_err(|_| {
        format!(
            "shapes are 3-D (AxBxC), got '{s}' with {} axes",
            lengths.len()
        )
    })
}

/// The machine's rates as the run's floors measured them: the FMA peak per core on one core
/// and on the most cores used, and the copy speed (2 × bytes / s) of the largest array on one
/// core and on the most cores.
#[derive(Debug, Default)]
struct Rates {
    peak: [f64; 2],
    cores: usize,
    bytes: usize,
    copy: [f64; 2],
}

impl Rates {
    fn add(&mut self, kind: &str, shape: &[usize], cores: usize, floors: &Floors) {
        let bytes = array_bytes(kind, shape);
        let speed = |s: f64| 2.0 * bytes as f64 / s / 1e9;
        if cores == 1 {
            self.peak[0] = self.peak[0].max(floors.peak / 1e9);
        } else if cores >= self.cores {
            self.peak[1] = self.peak[1].max(floors.peak / 1e9 / cores as f64);
        }
        if bytes > self.bytes {
            (self.bytes, self.copy) = (bytes, [0.0; 2]);
        }
        if bytes == self.bytes {
            self.copy[0] = self.copy[0].max(speed(floors.copy_1));
            if cores >= self.cores {
                self.copy[1] = self.copy[1].max(speed(floors.copy_all));
            }
        }
        self.cores = self.cores.max(cores);
    }

    /// One sentence for the notes and the document.
    fn sentence(&self) -> String {
        format!(
            "FMA peak ({}) {:.0} Gflop/s on one core, {:.0} per core on {}; copy of the largest \
             array ({:.0} MiB) {:.1} GB/s on one core, {:.1} GB/s on {} (2 × bytes / s)",
            floors::vector_isa(),
            self.peak[0],
            self.peak[1],
            self.cores,
            self.bytes as f64 / (1 << 20) as f64,
            self.copy[0],
            self.copy[1],
            self.cores
        )
    }
}

/// One configuration's results: the best round of each run and the floors.
struct Row<'a> {
    kind: &'a str,
    shape: [usize; 3],
    config: &'a Config,
    /// dfft, FFTW-MPI, dfft transposed, FFTW-MPI transposed.
    runs: [Value; 4],
    /// dfft on the caller's blocks (several ranks only).
    caller: Option<Value>,
    floors: Floors,
}

/// A number field of a run's JSON (NaN when missing).
fn get(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(f64::NAN)
}

impl Row<'_> {
    /// Seconds per pair of the four runs.
    fn seconds(&self) -> [f64; 4] {
        self.runs.each_ref().map(|v| get(v, "min_s"))
    }

    fn shape_name(&self) -> String {
        let [a, b, c] = self.shape;
        format!("{a}x{b}x{c}")
    }

    /// The columns of the CSV, named.
    fn fields(&self) -> Vec<(&'static str, String)> {
        let [d, f, dt, ft] = &self.runs;
        let [d_s, f_s, dt_s, ft_s] = self.seconds();
        let (kind, shape, fl) = (self.kind, &self.shape[..], &self.floors);
        let floor = fl.floor(kind, shape);
        let dc_s = self.caller.as_ref().map_or(f64::NAN, |v| get(v, "min_s"));
        let bytes = array_bytes(kind, shape) as f64;
        let st = &d["stages"];
        let pss = |v: &Value| get(v, "pss_peak_bytes");
        let n = |x: f64| x.to_string();
        vec![
            ("kind", kind.to_string()),
            ("shape", self.shape_name()),
            ("config", self.config.name.to_string()),
            ("ranks", self.config.ranks.to_string()),
            ("threads", self.config.threads.to_string()),
            ("dfft_s", n(d_s)),
            ("fftw_s", n(f_s)),
            ("ratio", n(d_s / f_s)),
            ("dfft_T_s", n(dt_s)),
            ("fftw_T_s", n(ft_s)),
            ("ratio_T", n(dt_s / ft_s)),
            ("dfft_caller_s", n(dc_s)),
            ("ratio_caller", n(dc_s / f_s)),
            ("memory_floor_s", n(fl.memory())),
            ("arithmetic_floor_s", n(fl.arithmetic(kind, shape))),
            ("floor_s", n(floor)),
            ("dfft_over_floor", n(d_s / floor)),
            ("dfft_T_over_floor", n(dt_s / floor)),
            ("copy_1_s", n(fl.copy_1)),
            ("copy_all_s", n(fl.copy_all)),
            ("copy_GBps_1", n(2.0 * bytes / fl.copy_1 / 1e9)),
            ("copy_GBps_all", n(2.0 * bytes / fl.copy_all / 1e9)),
            ("peak_gflops", n(fl.peak / 1e9)),
            ("work_1d_s", n(fl.work_1d)),
            ("dfft_over_work_1d", n(d_s / fl.work_1d)),
            ("dfft_T_over_work_1d", n(dt_s / fl.work_1d)),
            ("work_1d_all_s", n(fl.work_1d_all)),
            ("dfft_over_work_1d_all", n(d_s / fl.work_1d_all)),
            ("dfft_T_over_work_1d_all", n(dt_s / fl.work_1d_all)),
            ("dfft_fft_s", n(get(st, "fft_s"))),
            ("dfft_pack_s", n(get(st, "pack_s"))),
            ("dfft_comm_s", n(get(st, "comm_s"))),
            ("dfft_unpack_s", n(get(st, "unpack_s"))),
            ("dfft_rss", n(get(d, "peak_rss_bytes"))),
            ("fftw_rss", n(get(f, "peak_rss_bytes"))),
            ("dfft_T_rss", n(get(dt, "peak_rss_bytes"))),
            ("fftw_T_rss", n(get(ft, "peak_rss_bytes"))),
            ("dfft_pss", n(get(d, "pss_bytes"))),
            ("fftw_pss", n(get(f, "pss_bytes"))),
            ("dfft_T_pss", n(get(dt, "pss_bytes"))),
            ("fftw_T_pss", n(get(ft, "pss_bytes"))),
            ("dfft_pss_peak", n(pss(d))),
            ("fftw_pss_peak", n(pss(f))),
            ("dfft_T_pss_peak", n(pss(dt))),
            ("fftw_T_pss_peak", n(pss(ft))),
            ("mem_ratio", n(pss(d) / pss(f))),
            ("mem_ratio_T", n(pss(dt) / pss(ft))),
        ]
    }

    /// The console table's header line.
    fn print_header() {
        println!(
            "{:<4} {:<12} {:<18} {:>7} {:>7} {:>5} {:>6} | {:>7} {:>7} {:>5} | {:>7} {:>7} {:>5} {:>5} | {:>7} {:>5} | {:>9} {:>9} {:>5} {:>9} {:>9} {:>5}",
            "kind", "shape", "config", "dfft s", "fftw s", "ratio", "caller", "dfft T", "fftw T",
            "ratio", "mem flr", "ari flr", "x flr", "T flr", "1-D s", "x 1-D", "dfft MiB",
            "fftw MiB", "mem", "dfft TMiB", "fftw TMiB", "T mem"
        );
    }

    /// The console table's line.
    fn print(&self) {
        let [d, f, dt, ft] = &self.runs;
        let [d_s, f_s, dt_s, ft_s] = self.seconds();
        let (kind, shape, fl) = (self.kind, &self.shape[..], &self.floors);
        let floor = fl.floor(kind, shape);
        let dc_s = self.caller.as_ref().map_or(f64::NAN, |v| get(v, "min_s"));
        let mib = |v: &Value, k: &str| get(v, k) / (1024.0 * 1024.0);
        // Peak resident set / peak proportional set (shared pages divided among the ranks;
        // sampled while a pair ran), and dfft's peak PSS over FFTW's.
        let mem = |v: &Value| {
            let (rss, pss) = (mib(v, "peak_rss_bytes"), mib(v, "pss_peak_bytes"));
            format!("{rss:.0}/{pss:.0}")
        };
        let mem_ratio = |d: &Value, f: &Value| get(d, "pss_peak_bytes") / get(f, "pss_peak_bytes");
        println!(
            "{:<4} {:<12} {:<18} {:>7.4} {:>7.4} {:>5.2} {:>6.2} | {:>7.4} {:>7.4} {:>5.2} | {:>7.4} {:>7.4} {:>5.2} {:>5.2} | {:>7.4} {:>5.2} | {:>9} {:>9} {:>5.2} {:>9} {:>9} {:>5.2}",
            kind, self.shape_name(), self.config.name, d_s, f_s, d_s / f_s, dc_s / f_s, dt_s,
            ft_s, dt_s / ft_s, fl.memory(), fl.arithmetic(kind, shape), d_s / floor,
            dt_s / floor, fl.work_1d, d_s / fl.work_1d, mem(d), mem(f), mem_ratio(d, f),
            mem(dt), mem(ft), mem_ratio(dt, ft)
        );
    }

    /// The Markdown table's row (header in `MD_HEADER`).
    fn markdown(&self) -> String {
        let [d, f, ..] = &self.runs;
        let [d_s, f_s, dt_s, ft_s] = self.seconds();
        let (kind, shape, fl) = (self.kind, &self.shape[..], &self.floors);
        let caller = match &self.caller {
            Some(v) => format!("{:.2}", get(v, "min_s") / f_s),
            None => "–".to_string(),
        };
        let mib = |v: &Value| get(v, "pss_peak_bytes") / (1024.0 * 1024.0);
        format!(
            "| {kind} | {} | {} | {d_s:.4} | {f_s:.4} | **{:.2}** | {dt_s:.4} | {ft_s:.4} | **{:.2}** | {caller} | {:.4} | {:.4} | **{:.2}** | {:.2} | {:.0} / {:.0} | {:.3} |",
            self.shape_name().replace('x', "×"),
            self.config.name.replace(" x ", " × "),
            d_s / f_s,
            dt_s / ft_s,
            fl.memory(),
            fl.arithmetic(kind, shape),
            d_s / fl.floor(kind, shape),
            d_s / fl.work_1d,
            mib(d),
            mib(f),
            mib(d) / mib(f),
        )
    }
}

/// The Markdown table's header (rows from [`Row::markdown`]).
const MD_HEADER: &str = "| kind | shape | configuration | dfft s | FFTW-MPI s | dfft / FFTW | dfft s, transposed | FFTW-MPI s, transposed | dfft / FFTW, transposed | caller's blocks / FFTW | memory floor s | arithmetic floor s | dfft / floor | dfft / in-cache 1-D work | peak PSS MiB per rank, dfft / FFTW | memory dfft / FFTW |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

fn main() {
    let args = Args::parse();
    let (shapes, iters, kinds, rounds) = (args.shapes, args.iters, args.kinds, args.rounds);
    let wisdom = match args.fftw_wisdom {
        None => Some(repo_root().join("target/bench/fftw-wisdom")),
        Some(dir) if dir.as_os_str() == "off" => None,
        Some(dir) => Some(dir),
    };
    DFFT.set(args.dfft).expect("set once");
    // Checked before minutes of measuring, not after.
    if let Some(doc) = &args.doc {
        if let Err(e) = replace_marked(doc, "") {
            eprintln!("bench-fft: --doc {}: {e}", doc.display());
            std::process::exit(2);
        }
    }
    let mut md_rows = Vec::new();
    let mut provenance = Value::Null;
    let out_dir = repo_root().join("target/bench");
    std::fs::create_dir_all(&out_dir).unwrap();
    if let Some(dir) = &wisdom {
        std::fs::create_dir_all(dir).unwrap();
    }
    // FFTW planning: seconds, and how many runs planned from the wisdom alone, of how many.
    let (mut plan_s, mut from_wisdom, mut fftw_runs) = (0.0, 0, 0);
    let mut csv = std::fs::File::create(out_dir.join(format!("{}.csv", args.out))).unwrap();
    let mut jsonl = std::fs::File::create(out_dir.join(format!("{}.jsonl", args.out))).unwrap();
    let mut csv_rows = 0;
    // The machine's rates as the floors measured them, for the notes.
    let mut rates = Rates::default();
    Row::print_header();
    for kind in &kinds {
        for shape in &shapes {
            for c in &CONFIGS {
                let cores = c.ranks * c.threads;
                // The floors are timed right before this configuration's runs and after each
                // round (the best), as the runs themselves take their best pair: the VM's
                // speed drifts within a run, and a floor timed minutes apart skews the ratio.
                let mut floors = Floors::measure(kind, shape, cores);
                // Each run's best round (lowest min_s), whole JSON.
                let mut best: [Option<Value>; 5] = Default::default();
                for _ in 0..rounds {
                    let runs = [
                        Some(dfft(kind, shape, c, false, iters, "plan")),
                        Some(fftw(kind, shape, c, false, iters, wisdom.as_ref())),
                        Some(dfft(kind, shape, c, true, iters, "plan")),
                        // With several ranks, also with the caller's own (private) blocks,
                        // whose rows cross ranks through messages: what a caller that
                        // allocates gets.
                        (c.ranks > 1).then(|| dfft(kind, shape, c, false, iters, "caller")),
                        Some(fftw(kind, shape, c, true, iters, wisdom.as_ref())),
                    ];
                    let names = [
                        "dfft",
                        "FFTW-MPI",
                        "dfft --transposed-out",
                        "dfft --alloc caller",
                        "FFTW-MPI TRANSPOSED_OUT",
                    ];
                    for ((run, name), kept) in runs.into_iter().zip(names).zip(&mut best) {
                        let Some(run) = run else { continue };
                        check(&run, name);
                        if run.get("plan_s").is_some() {
                            plan_s += get(&run, "plan_s");
                            from_wisdom += usize::from(run["plan_from_wisdom"] == true);
                            fftw_runs += 1;
                        }
                        if kept
                            .as_ref()
                            .is_none_or(|k| get(&run, "min_s") < get(k, "min_s"))
                        {
                            *kept = Some(run);
                        }
                    }
                    floors = floors.best(Floors::measure(kind, shape, cores));
                }
                let [d, f, dt, caller, ft] = best;
                let runs = [d, f, dt, ft].map(|v| v.expect("every round runs it"));
                if provenance.is_null() {
                    provenance = runs[0]["provenance"].clone();
                }
                let row = Row {
                    kind,
                    shape: *shape,
                    config: c,
                    runs,
                    caller,
                    floors,
                };
                row.print();
                md_rows.push(row.markdown());
                let fields = row.fields();
                if csv_rows == 0 {
                    let names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
                    writeln!(csv, "{}", names.join(",")).unwrap();
                }
                csv_rows += 1;
                let values: Vec<&str> = fields.iter().map(|(_, v)| v.as_str()).collect();
                writeln!(csv, "{}", values.join(",")).unwrap();
                let [d, f, dt, ft] = &row.runs;
                writeln!(
                    jsonl,
                    "{}",
                    json!({"kind": kind, "shape": shape, "config": c.name, "ranks": c.ranks,
                           "threads": c.threads, "dfft": d, "fftw": f, "dfft_transposed": dt,
                           "fftw_transposed": ft, "dfft_caller": row.caller,
                           "floors": row.floors.json(kind, shape)})
                )
                .unwrap();
                rates.add(kind, shape, cores, &row.floors);
            }
        }
    }
    println!("ratio = dfft / FFTW-MPI (min of {iters} forward+backward pairs, best of {rounds} round(s) per run; < 1 means dfft is faster); T = transposed output");
    println!("caller = dfft --alloc caller (the caller's private blocks, rows through messages) / FFTW-MPI; dfft s runs --alloc plan (on one node the plan's blocks share memory and rows move in place)");
    println!("MiB = peak resident set / peak proportional set per rank (TMiB: with transposed output); PSS divides shared pages among the ranks, so it sums to what the node holds; its peak is sampled every ms while one more untimed pair runs (FFTW-MPI's transposes allocate a buffer per execution); mem = dfft's peak PSS / FFTW's");
    println!("kind r2c = r2c forward + c2r backward; mem flr = memory floor: 4 copies of the (half-spectrum) complex array at the copy speed measured on the configuration's cores (two read+write passes per transform); ari flr = arithmetic floor: 2 x 5 N log2 N flops (r2c: half) at the FMA peak measured on those cores; x flr: dfft over the larger floor (T flr: with transposed output); 1-D s = in-cache 1-D work: rustfft/realfft along every axis on contiguous lines, one core, / cores (x 1-D: dfft over it)");
    println!("floors measured in this run: {}", rates.sentence());
    match &wisdom {
        Some(dir) => println!(
            "FFTW planning (FFTW_MEASURE): {plan_s:.1} s in all; {from_wisdom} of {fftw_runs} runs planned from the wisdom alone ({})",
            dir.display()
        ),
        None => println!("FFTW planning (FFTW_MEASURE, no wisdom): {plan_s:.1} s in all"),
    }
    println!("checked: both tools' round-trip errors (and FFTW's Parseval check of its forward output) <= 1e-9");
    println!(
        "wrote {}",
        out_dir.join(format!("{}.csv", args.out)).display()
    );
    if let Some(doc) = &args.doc {
        let p = |k: &str| provenance[k].as_str().unwrap_or("?").to_string();
        let command: Vec<String> = std::env::args().skip(1).collect();
        let wisdom_note = match &wisdom {
            Some(_) => format!("{from_wisdom} of {fftw_runs} FFTW runs planned from wisdom"),
            None => "FFTW planned without wisdom".to_string(),
        };
        let table = format!(
            "Measured by `scripts/bench-fft {}` at {} (commit `{}`, {} build, {}; {}, {}, {} cores; \
             {wisdom_note}). Seconds per forward+backward f64 pair: the minimum of {iters} pairs, \
             best of {rounds} round(s); ratios below 1 mean dfft is faster. Floors measured in \
             the same run: {}.\n\n{MD_HEADER}\n{}\n",
            command.join(" "),
            p("timestamp_utc"),
            p("git_commit"),
            p("build_profile"),
            p("rustc"),
            p("cpu_model"),
            p("cpu_cache"),
            provenance["cores_per_node"],
            rates.sentence(),
            md_rows.join("\n"),
        );
        match replace_marked(doc, &table) {
            Ok(()) => println!("wrote the table into {}", doc.display()),
            Err(e) => {
                eprintln!("bench-fft: --doc {}: {e}", doc.display());
                std::process::exit(1);
            }
        }
    }
}

const BEGIN: &str = "<!-- bench-fft:begin -->";
const END: &str = "<!-- bench-fft:end -->";

/// The text of `doc` with what lies between its `BEGIN` and `END` lines replaced by `table`;
/// an error if the markers are missing. With an empty `table` only the markers are checked.
fn replace_marked(doc: &std::path::Path, table: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(doc).map_err(|e| e.to_string())?;
    let body = splice(&text, table)?;
    if !table.is_empty() {
        std::fs::write(doc, body).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `text` with the lines between the `BEGIN` and `END` marker lines replaced by `table`.
fn splice(text: &str, table: &str) -> Result<String, String> {
    let missing = || format!("no '{BEGIN}' line followed by an '{END}' line");
    let start = text.find(BEGIN).ok_or_else(missing)? + BEGIN.len();
    let end = start + text[start..].find(END).ok_or_else(missing)?;
    Ok(format!("{}\n{table}{}", &text[..start], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_line_and_differ_by_at_most_one() {
        for (lines, parts) in [(256 * 256, 2), (250 * 243, 2), (7, 3), (1, 2), (5, 1)] {
            let s = share(lines, parts);
            assert!(
                s * parts >= lines,
                "{parts} shares of {s} miss some of {lines} lines"
            );
            assert!(
                (s - 1) * parts < lines,
                "shares of {s} exceed {lines} / {parts}"
            );
        }
    }

    #[test]
    fn the_table_replaces_only_what_lies_between_the_markers() {
        let doc = format!("intro\n{BEGIN}\nold\n{END}\nafter\n");
        let out = splice(&doc, "new\n").unwrap();
        assert_eq!(out, format!("intro\n{BEGIN}\nnew\n{END}\nafter\n"));
        assert_eq!(
            splice(&out, "new\n").unwrap(),
            out,
            "regenerating is idempotent"
        );
        assert!(splice("no markers", "x").is_err());
        assert!(splice(&format!("{END}\n{BEGIN}"), "x").is_err());
    }

    #[test]
    fn the_floors_follow_their_formulas() {
        let shape = [256, 256, 256];
        let n = (1usize << 24) as f64;
        assert_eq!(transform_flops("c2c", &shape), 5.0 * n * 24.0);
        assert_eq!(transform_flops("r2c", &shape), 2.5 * n * 24.0);
        assert_eq!(array_bytes("c2c", &shape), 16 << 24);
        assert_eq!(array_bytes("r2c", &[4, 6, 10]), 16 * 4 * 6 * 6);
        let f = Floors {
            work_1d: 1.0,
            work_1d_all: 1.0,
            copy_1: 0.02,
            copy_all: 0.01,
            peak: 1e11,
        };
        assert_eq!(f.memory(), 0.04, "4 copies on all the cores");
        let arithmetic = f.arithmetic("c2c", &shape);
        assert!((arithmetic - 2.0 * 5.0 * n * 24.0 / 1e11).abs() < 1e-15);
        assert_eq!(f.floor("c2c", &shape), arithmetic.max(0.04));
        let slower = Floors {
            peak: 1e10,
            copy_all: 0.02,
            ..f
        };
        assert_eq!(f.best(slower).peak, 1e11);
        assert_eq!(slower.best(f).copy_all, 0.01);
    }

    #[test]
    fn the_floor_runs_every_kind_on_one_and_on_several_cores() {
        for kind in ["c2c", "r2c"] {
            for parts in [1, 2, 3] {
                let t = fft_floor(kind, &[6, 10, 9], parts);
                assert!(t.is_finite() && t > 0.0, "{kind} on {parts}: {t}");
            }
        }
    }
}
