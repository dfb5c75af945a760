//! Navier–Stokes checkpoints in parallel HDF5 under mpirun: a run of N steps and a run of N/2
//! steps restarted from its checkpoint for N/2 more end in bit-identical states (the `û`
//! datasets compared byte for byte by h5py, and the diagnostics printed at step N); a restart
//! on another number of ranks continues to round-off; a checkpoint of another shape, or a
//! missing file, is refused with a message.

use std::path::Path;
use std::time::Duration;

const NS: &str = env!("CARGO_BIN_EXE_navier-stokes");

fn run(ranks: usize, args: &[&str]) -> std::process::Output {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(NS).args(args);
    mpi_harness::run_command(cmd, Duration::from_secs(120))
}

/// The JSON line of step `step`.
fn diagnostics(out: &std::process::Output, step: u64) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
        .find(|v| v["step"] == step)
        .unwrap_or_else(|| panic!("no line for step {step}"))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_restarted_run_continues_bit_identically() {
    let dir = std::env::temp_dir().join(format!("dfft-checkpoint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (straight, half, resumed, other) = (
        dir.join("straight.h5"),
        dir.join("half.h5"),
        dir.join("resumed.h5"),
        dir.join("other.h5"),
    );
    // An uneven shape, the 3/2 rule and a transposed spectrum on a 2x1 grid.
    let common = [
        "--shape", "12,10,14", "--nu", "0.02", "--dt", "0.05", "--every", "3", "--json",
    ];
    fn with<'a>(common: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [common, extra].concat()
    }

    let full = run(
        2,
        &with(
            &common,
            &[
                "--grid",
                "2x1",
                "--steps",
                "6",
                "--checkpoint",
                path(&straight),
            ],
        ),
    );
    let at_6 = diagnostics(&full, 6);
    let first = run(
        2,
        &with(
            &common,
            &[
                "--grid",
                "2x1",
                "--steps",
                "3",
                "--checkpoint",
                path(&half),
                "--checkpoint-every",
                "1",
            ],
        ),
    );
    assert_eq!(diagnostics(&first, 3)["step"], 3);
    let second = run(
        2,
        &with(
            &common,
            &[
                "--grid",
                "2x1",
                "--steps",
                "3",
                "--restart",
                path(&half),
                "--checkpoint",
                path(&resumed),
            ],
        ),
    );
    // The same numbers to the last bit (JSON prints the shortest round-trip form).
    assert_eq!(diagnostics(&second, 6), at_6);

    // On 3 ranks (another grid and split) the continuation agrees to round-off.
    let third = run(
        3,
        &with(
            &common,
            &[
                "--steps",
                "3",
                "--restart",
                path(&half),
                "--checkpoint",
                path(&other),
            ],
        ),
    );
    let moved = diagnostics(&third, 6);
    let (e, e3) = (
        at_6["energy"].as_f64().unwrap(),
        moved["energy"].as_f64().unwrap(),
    );
    assert!((e - e3).abs() <= 1e-14 * e, "energy {e} vs {e3} on 3 ranks");
    assert_eq!(moved["t"], at_6["t"]);

    let check = std::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(
            r#"
import sys, h5py, numpy as np
def load(p):
    f = h5py.File(p, "r")
    return f["u_hat"][...], dict(f["u_hat"].attrs)
a, aa = load(sys.argv[1])
b, ba = load(sys.argv[2])
c, ca = load(sys.argv[3])
assert a.shape == (3, 12, 10, 8) and a.dtype == np.complex128, (a.shape, a.dtype)
assert np.abs(a).max() > 0.01, "a non-trivial field"
assert a.tobytes() == b.tobytes(), "bitwise: %g" % np.abs(a - b).max()
assert aa["steps"] == ba["steps"] == ca["steps"] == "6", (aa, ba)
assert aa["time"] == ba["time"], (aa["time"], ba["time"])
assert aa["modes"] == "12,10,14" and aa["dealias"] == "pad", aa
err = np.abs(c - a).max() / np.abs(a).max()
assert err < 1e-13, err
print("checkpoints ok", err)
"#,
        )
        .args([&straight, &resumed, &other])
        .output()
        .expect("python3 runs");
    assert!(
        check.status.success(),
        "h5py (scripts/setup installs python3-h5py-serial):\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );

    // Refusals: another shape, a missing file; one message, exit 1.
    let missing = dir.join("missing.h5");
    for (args, message) in [
        (
            vec!["--shape", "16", "--restart", path(&half)],
            format!(
                "checkpoint {}: its dataset shape (3 components x the spectrum of --shape) is [3, 12, 10, 8], but this run's is [3, 16, 16, 9]",
                half.display()
            ),
        ),
        (
            vec!["--shape", "16", "--restart", path(&missing)],
            format!("checkpoint {}:", missing.display()),
        ),
    ] {
        let out = run(2, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(&message).count(), 1, "{args:?}: {stderr}");
    }

    // Nothing but the checkpoints: no temporaries left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["half.h5", "other.h5", "resumed.h5", "straight.h5"],
        "{names:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
