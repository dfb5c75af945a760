//! The `poisson` and `navier-stokes` binaries under `mpirun`: JSON lines with errors at the
//! level the library tests demand, and usage / runtime errors printed once with the right
//! status.

use std::time::Duration;

fn run(ranks: usize, program: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(program).args(args);
    mpi_harness::run_command(cmd, Duration::from_secs(60))
}

fn json_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

#[test]
fn poisson_json_on_1_and_3_ranks() {
    for ranks in [1, 3] {
        let out = run(
            ranks,
            env!("CARGO_BIN_EXE_poisson"),
            &["--shape", "11,7,13", "--json"],
        );
        assert!(out.status.success(), "{out:?}");
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 1, "one line from rank 0: {lines:?}");
        assert_eq!(lines[0]["ranks"], ranks);
        let err = lines[0]["relative_error"].as_f64().unwrap();
        assert!(err < 1e-13, "relative error {err:e}");
    }
}

#[test]
fn navier_stokes_beltrami_json_on_2_ranks() {
    let out = run(
        2,
        env!("CARGO_BIN_EXE_navier-stokes"),
        &[
            "--flow",
            "beltrami",
            "--shape",
            "12,10,14",
            "--kappa",
            "2",
            "--mean",
            "0.3,-0.2,0.1",
            "--nu",
            "0.05",
            "--dt",
            "0.05",
            "--steps",
            "10",
            "--every",
            "5",
            "--grid",
            "2",
            "--json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    // Steps 0, 5, 10 and the summary.
    assert_eq!(lines.len(), 4, "{lines:?}");
    let summary = &lines[3];
    assert_eq!(summary["grid"], serde_json::json!([2, 1]));
    let error = summary["max_error"].as_f64().unwrap();
    let bound = summary["rk4_error_bound"].as_f64().unwrap();
    assert!(error > 0.0 && error <= bound + 1e-13, "{summary}");
    assert!(summary["step_min_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn navier_stokes_taylor_green_text() {
    let out = run(
        1,
        env!("CARGO_BIN_EXE_navier-stokes"),
        &[
            "--shape", "16", "--dt", "0.02", "--steps", "10", "--every", "10",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    // The recorded value of docs/solvers.md at step 10.
    assert!(text.contains("1.235069265857785e-1"), "{text}");
    assert!(text.contains("time per step"), "{text}");
}

#[test]
fn usage_and_runtime_errors_are_printed_once() {
    let ns = env!("CARGO_BIN_EXE_navier-stokes");
    for (args, status, message) in [
        (
            &["--shape", "16,0,16"][..],
            2,
            "axis lengths must be at least 1, got 0 in '16,0,16'",
        ),
        (&["--dealias", "3/4"], 2, "unknown dealiasing rule '3/4'"),
        (&["--flow", "vortex"], 2, "unknown flow 'vortex'"),
        (
            &["--flow", "beltrami", "--kappa", "8", "--shape", "16", "--steps", "1"],
            1,
            "the beltrami flow needs wavenumbers up to 8 on every axis, but [16, 16, 16] modes with pad dealiasing keep only |k| <= [7, 7, 7]",
        ),
        (
            &["--dt=-1"],
            2,
            "navier-stokes: error: invalid value '-1' for '--dt <DT>': expected a finite number > 0, got '-1'",
        ),
        (
            &["--dt", "-0.01"],
            2,
            "navier-stokes: error: invalid value '-0.01' for '--dt <DT>': expected a finite number > 0, got '-0.01'",
        ),
        (
            &["--nu", "NaN"],
            2,
            "invalid value 'NaN' for '--nu <NU>': expected a finite number >= 0, got 'NaN'",
        ),
        (
            &["--steps", "18446744073709551615"],
            2,
            "invalid value '18446744073709551615' for '--steps <STEPS>': 18446744073709551615 is not in 0..=100000000",
        ),
        (&["--every", "0"], 2, "invalid value '0' for '--every <EVERY>': 0 is not in 1.."),
    ] {
        let out = run(2, ns, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(message).count(), 1, "{args:?}: {stderr}");
    }
}

/// Too few points for the manufactured solution is a usage error (exit 2, "(see --help)"),
/// decided from the command line before MPI starts.
#[test]
fn poisson_shape_too_small_is_a_usage_error() {
    let out = run(2, env!("CARGO_BIN_EXE_poisson"), &["--shape", "6"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let message = "poisson: error: invalid value '6' for '--shape <SHAPE>': every axis length must be at least 7 (the manufactured solution has |k| = 3), got 6 (see --help)";
    assert_eq!(stderr.matches(message).count(), 1, "{stderr}");
}

#[test]
fn poisson_tolerance_must_be_a_finite_number_at_least_zero() {
    for value in ["NaN", "-1", "inf"] {
        let out = run(
            2,
            env!("CARGO_BIN_EXE_poisson"),
            &["--shape", "8", "--tolerance", value],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {stderr}");
        let message = format!(
            "poisson: error: invalid value '{value}' for '--tolerance <TOLERANCE>': expected a finite number >= 0, got '{value}'"
        );
        assert_eq!(stderr.matches(&message).count(), 1, "{stderr}");
    }
}

/// A run that diverges (dt far above the stability limit) stops at the first report whose
/// energy is not finite, with exit 1 and one message; the Beltrami check never prints a NaN
/// error next to its bound.
#[test]
fn a_diverging_run_stops_with_exit_1() {
    let ns = env!("CARGO_BIN_EXE_navier-stokes");
    for (flow, every) in [("taylor-green", "1"), ("beltrami", "5")] {
        let out = run(
            2,
            ns,
            &[
                "--flow", flow, "--shape", "16", "--dt", "5", "--nu", "0.0001", "--steps", "40",
                "--every", every,
            ],
        );
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{flow}: {stdout}\n{stderr}");
        let message = "the run diverged; a smaller --dt or a larger --nu keeps it stable";
        assert_eq!(stderr.matches(message).count(), 1, "{flow}: {stderr}");
        assert!(
            stderr.contains("navier-stokes: error: the energy is NaN at step"),
            "{flow}: {stderr}"
        );
        for line in stdout.lines() {
            assert!(
                !line.contains("NaN") && !line.contains("inf"),
                "{flow}: {line}"
            );
        }
        assert!(!stdout.contains("max |u - u_exact|"), "{flow}: {stdout}");
    }
}
