//! `dfft run --deterministic` gives the same bits whatever the decomposition
//! (`FftOptions::deterministic`): for each kind (c2c, r2c, r2r) the forward output file and
//! the round trip's file (`--roundtrip-output`, the backward transform) of 12 runs on 1 to 8
//! ranks, grid ranks 1 and 2 of several shapes, 1 or 2 threads per rank, both allocation
//! modes and both exchange methods are compared byte for byte with `cmp` against the
//! 1-rank run's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

/// (ranks, grid, threads per rank, --alloc, --method): every rank count 1..=8, grid ranks 1
/// and 2 in several factorizations, both allocation modes, both exchange methods.
const CONFIGS: [(usize, &str, usize, &str, &str); 12] = [
    (1, "1", 1, "plan", "alltoallv"),
    (1, "1", 2, "caller", "alltoallv"),
    (2, "1", 1, "plan", "alltoallv"),
    (2, "1", 2, "caller", "pairwise"),
    (3, "1", 1, "caller", "alltoallv"),
    (4, "2", 1, "plan", "pairwise"),
    (4, "2x2", 2, "caller", "alltoallv"),
    (5, "1", 2, "plan", "alltoallv"),
    (6, "3x2", 1, "plan", "alltoallv"),
    (6, "2x3", 1, "caller", "pairwise"),
    (7, "7x1", 1, "plan", "pairwise"),
    (8, "2x4", 1, "plan", "alltoallv"),
];

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-repro-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cmp -s a b` (the files' bytes; exit 0 equal, 1 different).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let status = Command::new("cmp")
        .arg("-s")
        .arg(a)
        .arg(b)
        .status()
        .expect("cmp (diffutils) runs");
    assert!(
        status.code().is_some_and(|c| c <= 1),
        "cmp {a:?} {b:?}: {status}"
    );
    status.success()
}

/// Runs every configuration of `kind` on `shape` with `extra` options and compares each
/// run's files with the first run's.
fn check_kind(name: &str, kind: &str, shape: &str, extra: &[&str]) {
    let dir = scratch_dir(name);
    let mut reference: Option<(PathBuf, PathBuf)> = None;
    let mut differ = Vec::new();
    for (i, &(ranks, grid, threads, alloc, method)) in CONFIGS.iter().enumerate() {
        let forward = dir.join(format!("forward-{i}.npy"));
        let round_trip = dir.join(format!("roundtrip-{i}.npy"));
        let threads = threads.to_string();
        let mut cmd = mpi_harness::mpirun_command(ranks);
        cmd.arg(DFFT)
            .args(["run", "--deterministic", "--kind", kind, "--shape", shape]);
        cmd.args([
            "--grid",
            grid,
            "--threads",
            &threads,
            "--alloc",
            alloc,
            "--method",
            method,
        ]);
        cmd.args(["--iters", "1", "--warmup", "0"]).args(extra);
        cmd.arg("--output").arg(&forward);
        cmd.arg("--roundtrip-output").arg(&round_trip);
        let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(60));
        let config = format!("{ranks} ranks, grid {grid}, {threads} threads, {alloc}, {method}");
        assert!(!timed_out, "{name}: {config} hung");
        assert!(
            out.status.success(),
            "{name}: {config}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        match &reference {
            None => reference = Some((forward, round_trip)),
            Some((f0, b0)) => {
                if !same_bytes(&forward, f0) {
                    differ.push(format!("forward: {config}"));
                }
                if !same_bytes(&round_trip, b0) {
                    differ.push(format!("backward: {config}"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        differ.is_empty(),
        "{name} on {shape}: files differ from the 1-rank run's:\n{}",
        differ.join("\n")
    );
    println!(
        "{name} {shape}: {} configurations byte-identical",
        CONFIGS.len()
    );
}

#[test]
fn c2c_same_bits_on_every_decomposition() {
    check_kind("c2c", "c2c", "12,10,14", &[]);
}

#[test]
fn r2c_same_bits_on_every_decomposition() {
    check_kind(
        "r2c",
        "r2c",
        "9,10,7,8",
        &["--precision", "f32", "--normalization", "ortho"],
    );
}

#[test]
fn r2r_same_bits_on_every_decomposition() {
    check_kind(
        "r2r",
        "r2r:dct2,dst1,dht",
        "11,16,13",
        &["--transposed-out"],
    );
}
