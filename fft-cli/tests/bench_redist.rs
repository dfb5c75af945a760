//! `dfft bench-redist` under mpirun (Birkeland & Sørøvik's two sweeps of redistribution, verified exactly
//! on every rank), plus the ergonomics of the CLI: help with examples, `DFFT_LOG` verbosity, no
//! progress bar when stdout is not a terminal.

mod common;

use serde_json::Value;
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

use common::flat;

fn dfft(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(DFFT).args(args);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bench(ranks: usize, shape: &str, grid: &str, method: &str) -> Value {
    let args = [
        "bench-redist",
        "--shape",
        shape,
        "--grid",
        grid,
        "--method",
        method,
        "--repeat",
        "3",
        "--inner",
        "2",
        "--json",
    ];
    let (code, stdout, stderr) = dfft(ranks, &args, &[]);
    assert_eq!(code, 0, "{args:?} on {ranks}:\n{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 1, "one JSON line from rank 0:\n{stdout}");
    assert!(
        !stderr.contains("samples ["),
        "no progress bar without a terminal:\n{stderr}"
    );
    flat(serde_json::from_str(lines[0]).expect("JSON"))
}

#[test]
fn bench_redist_every_grid_rank_on_1_to_6_ranks() {
    for ranks in [1, 3, 4, 6] {
        for (shape, grid_ranks) in [("16,21,10", &[1usize, 2][..]), ("6,5,7,4", &[1, 2, 3][..])] {
            for &r in grid_ranks {
                let method = ["alltoallv", "pairwise"][(ranks + r) % 2];
                let v = bench(ranks, shape, &r.to_string(), method);
                let what = format!("{ranks} ranks, {shape}, r = {r}: {v}");
                assert_eq!(v["ranks"], ranks, "{what}");
                assert_eq!(v["grid_rank"], r, "{what}");
                assert_eq!(v["exchanges"], 2 * r + 1, "{what}");
                assert_eq!(v["verified"], true, "{what}");
                assert_eq!(v["method"], method, "{what}");
                let (min, median) = (
                    v["min_s"].as_f64().unwrap(),
                    v["median_s"].as_f64().unwrap(),
                );
                assert!(min > 0.0 && min <= median, "{what}");
                for key in ["pack_s", "comm_s", "unpack_s"] {
                    assert!(v["stages"][key].as_f64().unwrap() >= 0.0, "{what}");
                }
            }
        }
    }
    // Explicit dimensions, with a grid dimension larger than an axis (ranks own nothing).
    let v = bench(6, "2,12,5", "3x2", "pairwise");
    assert_eq!(v["grid"], serde_json::json!([3, 2]));
    assert_eq!(v["verified"], true);
}

#[test]
fn bench_redist_rejects_bad_grids_once() {
    // A grid of rank r >= d is decided by the command line: a usage error.
    let (code, stdout, stderr) = dfft(2, &["bench-redist", "--shape", "8,8", "--grid", "2"], &[]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert_eq!(stderr.matches("dfft: error:").count(), 1, "{stderr}");
    assert!(stderr.contains("(see --help)"), "{stderr}");
    let (code, _, stderr) = dfft(
        4,
        &["bench-redist", "--shape", "8,8,8", "--grid", "3x2"],
        &[],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("dfft: error:"), "{stderr}");
}

#[test]
fn help_has_examples_and_log_levels_work() {
    for sub in [&[][..], &["run"][..], &["bench-redist"][..]] {
        let out = Command::new(DFFT)
            .args(sub)
            .arg("--help")
            .output()
            .expect("dfft --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sub:?}: {text}");
        assert!(
            text.contains("Examples:"),
            "{sub:?} help lacks examples:\n{text}"
        );
    }
    let quiet = dfft(
        2,
        &["bench-redist", "--shape", "8,6", "--repeat", "1", "--json"],
        &[],
    );
    assert!(!quiet.2.contains("INFO"), "{}", quiet.2);
    let loud = dfft(
        2,
        &["bench-redist", "--shape", "8,6", "--repeat", "1", "--json"],
        &[("DFFT_LOG", "info")],
    );
    assert_eq!(loud.0, 0, "{}", loud.2);
    assert!(loud.2.contains("[dfft INFO rank 0]"), "{}", loud.2);
    assert!(loud.2.contains("[dfft INFO rank 1]"), "{}", loud.2);
}
