//! `dfft redist` under mpirun: every schedule, different grids, scatter and gather, verified
//! on every rank (`wrong` = 0); malformed SPECs are usage errors printed once with status 2.
mod common;

use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

use common::flat;

fn dfft(ranks: usize, args: &[&str]) -> std::process::Output {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).arg("redist").args(args);
    mpi_harness::run_command(cmd, Duration::from_secs(120))
}

fn json(out: &std::process::Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "status {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 1, "one JSON line from rank 0: {stdout}");
    flat(serde_json::from_str(lines[0]).unwrap())
}

#[test]
fn every_schedule_and_grid_change_verifies() {
    for (ranks, shape, from, to) in [
        (
            4,
            "300,200",
            "grid=2x2,dist=cyclic(11)",
            "grid=4x1,order=col,dist=cyclic(3)",
        ),
        (3, "97,45", "grid=1x1,dist=block", "grid=3,dist=cyclic(4),*"), // scatter
        (3, "97,45", "grid=3,dist=*,cyclic(5)", "grid=1x1,dist=block"), // gather
        (
            2,
            "100000",
            "grid=2,dist=cyclic(15)",
            "grid=2,dist=cyclic(10)",
        ),
    ] {
        for method in ["alltoallv", "caterpillar", "async", "pipelined", "shared"] {
            let out = dfft(
                ranks,
                &[
                    "--shape", shape, "--from", from, "--to", to, "--method", method, "--iters",
                    "2", "--packet", "1000", "--dtype", "c128", "--json",
                ],
            );
            let v = json(&out);
            assert_eq!(v["wrong"], 0, "{v}");
            assert_eq!(v["method"], method);
            assert!(v["min_s"].as_f64().unwrap() > 0.0);
            assert!(v["median_s"].as_f64().unwrap() >= v["min_s"].as_f64().unwrap());
            assert!(v["bytes_moved"].as_u64().unwrap() > 0, "{v}");
        }
    }
}

#[test]
fn malformed_specs_are_usage_errors_printed_once() {
    for (from, needle) in [
        ("grid=2x1,dist=cyclic(0)", "cyclic(0)"),
        ("grid=2x1,dist=cyclic(3", "closing ')'"),
        ("grid=2x1,order=diagonal,dist=block", "order=diagonal"),
        ("grid=2,dist=block,block", "grid=2"),
        ("grid=2x1,dist=block,block,block", "3 distributions"),
        ("grid=3x1,dist=block", "needs 3 processes"),
    ] {
        let out = dfft(
            2,
            &[
                "--shape",
                "100,100",
                "--from",
                from,
                "--to",
                "grid=1x2,dist=block",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{from}: {stderr}");
        assert_eq!(stderr.matches("dfft: error").count(), 1, "{from}: {stderr}");
        assert!(stderr.contains(needle), "{from}: {stderr}");
    }
}

#[test]
fn thakur_per_axis_and_its_usage_errors() {
    // cyclic(15) -> cyclic(10) along axis 1 of a 2-D array (axis 0 local), LCM, both modes.
    for receive in ["sync", "async"] {
        let out = dfft(
            3,
            &[
                "--shape",
                "20,301",
                "--from",
                "grid=3,dist=*,cyclic(15)",
                "--to",
                "grid=3,dist=*,cyclic(10)",
                "--thakur",
                "lcm",
                "--receive",
                receive,
                "--iters",
                "2",
                "--json",
            ],
        );
        let v = json(&out);
        assert_eq!(v["wrong"], 0, "{v}");
        assert_eq!(v["method"], format!("thakur-lcm-{receive}"));
        assert!(v["stages"].is_null(), "{v}");
    }
    // Not applicable (x is not a multiple of y), and two axes changed.
    for (to, method, needle) in [
        ("grid=3,dist=cyclic(10),*", "ky_to_y", "x = k·y"),
        ("grid=3,dist=*,cyclic(10)", "lcm", "one changed axis"),
    ] {
        let out = dfft(
            3,
            &[
                "--shape",
                "20,301",
                "--from",
                "grid=3,dist=cyclic(15),*",
                "--to",
                to,
                "--thakur",
                method,
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {stderr}");
        assert_eq!(stderr.matches("dfft: error").count(), 1, "{to}: {stderr}");
        assert!(stderr.contains(needle), "{to}: {stderr}");
    }
}
