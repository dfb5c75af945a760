//! dfft against FFTW-MPI on the same machine, in one run, as ratios; with the floor.
//!
//! For each shape and each configuration (1 rank; 2 ranks; 1 rank × 2 threads) it runs
//! `dfft run --json` and the FFTW-MPI driver (`benches/fftw/fftw_mpi_bench.c`, FFTW_MEASURE),
//! both in the normal layout and with transposed output, and measures here:
//! * the floor: the 1-D FFT work alone (rustfft, forward and backward along every axis, on
//!   contiguous lines), single-threaded, divided by the cores the configuration uses;
//! * one memory copy of the data, divided likewise.
//!
//! Prints a table and writes `target/bench/fft-vs-fftw.csv` and `.jsonl`.
//! Usage: `bench-fft [--shapes 128x128x128,256x256x256] [--iters K]` (scripts/bench-fft).

use num_complex::Complex;
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

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
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
        (true, Some(line)) => serde_json::from_str(line).expect("valid JSON"),
        _ => panic!(
            "{what} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn dfft(shape: &[usize], c: &Config, transposed: bool, iters: usize) -> Value {
    let mut cmd = mpi_harness::mpirun_command(c.ranks);
    cmd.args(["-x", &format!("RAYON_NUM_THREADS={}", c.threads)]);
    let bin = repo_root().join("target/release/dfft");
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
    ]);
    if transposed {
        cmd.arg("--transposed-out");
    }
    run_json(cmd, "dfft run")
}

fn fftw(shape: &[usize], c: &Config, transposed: bool, iters: usize) -> Value {
    let mut cmd = mpi_harness::mpirun_command(c.ranks);
    cmd.arg(repo_root().join("target/bench/fftw_mpi_bench"));
    cmd.args(shape.iter().map(|n| n.to_string()));
    cmd.args([
        iters.to_string(),
        "2".to_string(),
        if transposed { "transposed" } else { "normal" }.to_string(),
        c.threads.to_string(),
    ]);
    run_json(cmd, "fftw_mpi_bench")
}

/// Seconds of the 1-D FFT work of one forward+backward pair on contiguous lines, one core.
fn fft_floor(shape: &[usize]) -> f64 {
    let total: usize = shape.iter().product();
    let mut data = vec![Complex::new(0.5f64, -0.25); total];
    let mut planner = FftPlanner::new();
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        for &n in shape {
            for fft in [planner.plan_fft_forward(n), planner.plan_fft_inverse(n)] {
                let mut scratch = vec![Complex::default(); fft.get_inplace_scratch_len()];
                // All N/n lines of length n, contiguous: the whole array as a batch.
                fft.process_with_scratch(&mut data, &mut scratch);
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// Seconds of one copy of the whole array, one core.
fn copy_floor(shape: &[usize]) -> f64 {
    let total: usize = shape.iter().product();
    let src: Vec<Complex<f64>> = redist::alloc::huge_vec(total);
    let mut dst: Vec<Complex<f64>> = redist::alloc::huge_vec(total);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        dst.copy_from_slice(&src);
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    best
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut shapes = vec![
        vec![128, 128, 128],
        vec![256, 256, 256],
        vec![384, 384, 384],
        vec![250, 256, 243],
    ];
    let mut iters = 10usize;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--shapes" => {
                shapes = args[i + 1]
                    .split(',')
                    .map(|s| s.split('x').map(|n| n.parse().expect("shape")).collect())
                    .collect();
                i += 2;
            }
            "--iters" => {
                iters = args[i + 1].parse().expect("iters");
                i += 2;
            }
            other => panic!(
                "unknown argument {other}; usage: bench-fft [--shapes AxBxC,...] [--iters K]"
            ),
        }
    }
    let out_dir = repo_root().join("target/bench");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut csv = std::fs::File::create(out_dir.join("fft-vs-fftw.csv")).unwrap();
    let mut jsonl = std::fs::File::create(out_dir.join("fft-vs-fftw.jsonl")).unwrap();
    writeln!(
        csv,
        "shape,config,ranks,threads,dfft_s,fftw_s,ratio,dfft_T_s,fftw_T_s,ratio_T,floor_s,dfft_over_floor,copy_s,dfft_rss,fftw_rss,dfft_fft_s,dfft_pack_s,dfft_comm_s,dfft_unpack_s"
    )
    .unwrap();
    println!(
        "{:<14} {:<19} {:>8} {:>8} {:>6} | {:>8} {:>8} {:>6} | {:>7} {:>6} {:>7} | {:>8} {:>8}",
        "shape",
        "config",
        "dfft s",
        "fftw s",
        "ratio",
        "dfft T",
        "fftw T",
        "ratio",
        "floor",
        "x flr",
        "copy s",
        "dfft MiB",
        "fftw MiB"
    );
    for shape in &shapes {
        let floor_1 = fft_floor(shape);
        let copy_1 = copy_floor(shape);
        for c in &CONFIGS {
            let cores = (c.ranks * c.threads) as f64;
            let d = dfft(shape, c, false, iters);
            let f = fftw(shape, c, false, iters);
            let dt = dfft(shape, c, true, iters);
            let ft = fftw(shape, c, true, iters);
            let get = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
            let (d_s, f_s, dt_s, ft_s) = (
                get(&d, "min_s"),
                get(&f, "min_s"),
                get(&dt, "min_s"),
                get(&ft, "min_s"),
            );
            let floor = floor_1 / cores;
            let copy = copy_1 / cores;
            let mib = |v: &Value| get(v, "peak_rss_bytes") / (1024.0 * 1024.0);
            let shape_s = format!("{}x{}x{}", shape[0], shape[1], shape[2]);
            println!(
                "{:<14} {:<19} {:>8.4} {:>8.4} {:>6.2} | {:>8.4} {:>8.4} {:>6.2} | {:>7.4} {:>6.2} {:>7.4} | {:>8.0} {:>8.0}",
                shape_s, c.name, d_s, f_s, d_s / f_s, dt_s, ft_s, dt_s / ft_s, floor, d_s / floor, copy,
                mib(&d), mib(&f)
            );
            let st = &d["stages"];
            writeln!(
                csv,
                "{shape_s},{},{},{},{d_s},{f_s},{},{dt_s},{ft_s},{},{floor},{},{copy},{},{},{},{},{},{}",
                c.name, c.ranks, c.threads, d_s / f_s, dt_s / ft_s, d_s / floor,
                get(&d, "peak_rss_bytes"), get(&f, "peak_rss_bytes"),
                get(st, "fft_s"), get(st, "pack_s"), get(st, "comm_s"), get(st, "unpack_s")
            )
            .unwrap();
            writeln!(
                jsonl,
                "{}",
                json!({"shape": shape, "config": c.name, "ranks": c.ranks, "threads": c.threads,
                       "dfft": d, "fftw": f, "dfft_transposed": dt, "fftw_transposed": ft,
                       "floor_s": floor, "copy_s": copy})
            )
            .unwrap();
        }
    }
    println!("ratio = dfft / FFTW-MPI (min of {iters} forward+backward pairs; < 1 means dfft is faster); T = transposed output");
    println!("floor = rustfft 1-D work on contiguous lines / cores; copy = one copy of the array / cores");
    println!("wrote {}", out_dir.join("fft-vs-fftw.csv").display());
}
