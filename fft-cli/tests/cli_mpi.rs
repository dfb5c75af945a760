//! `dfft run` end to end under mpirun: JSON reports on 1..=8 ranks for d = 2, 3, 4, uneven
//! shapes and every grid rank; the .npy path against a serial transform; usage errors.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

use common::flat;

/// Runs `dfft <args>` on `ranks` processes; returns (exit code, stdout, stderr).
fn dfft(ranks: usize, args: &[&str]) -> (i32, String, String) {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).args(args);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_run(ranks: usize, shape: &str, grid: &str, method: &str, transposed: bool) -> Value {
    let mut args = vec![
        "run", "--shape", shape, "--grid", grid, "--method", method, "--iters", "2", "--warmup",
        "1", "--json",
    ];
    if transposed {
        args.push("--transposed-out");
    }
    let (code, stdout, stderr) = dfft(ranks, &args);
    assert_eq!(
        code, 0,
        "dfft {args:?} on {ranks} ranks failed:\n{stdout}\n{stderr}"
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(
        lines.len(),
        1,
        "exactly one JSON line from rank 0, got:\n{stdout}"
    );
    flat(serde_json::from_str(lines[0]).expect("valid JSON"))
}

fn check_report(v: &Value, ranks: usize, shape: &str, grid_rank: usize) {
    let what = format!("{ranks} ranks, shape {shape}, grid rank {grid_rank}: {v}");
    assert_eq!(v["ranks"], ranks, "{what}");
    let dims: Vec<usize> = v["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(dims.len(), grid_rank, "{what}");
    assert_eq!(dims.iter().product::<usize>(), ranks, "{what}");
    for key in ["roundtrip_error", "reference_error"] {
        let e = v[key].as_f64().unwrap();
        assert!(e < 1e-12, "{key} = {e:e}: {what}");
    }
    for key in ["min_s", "median_s", "peak_rss_bytes"] {
        assert!(v[key].as_f64().unwrap() > 0.0, "{key}: {what}");
    }
    for key in ["fft_s", "pack_s", "comm_s", "unpack_s"] {
        assert!(v["stages"][key].as_f64().is_some(), "stages.{key}: {what}");
    }
}

/// Every grid rank for d = 2, 3, 4 and uneven shapes, on one rank count.
fn sweep(ranks: usize) {
    for (i, shape) in ["12,10", "11,7,13", "16,21,41", "9,7,5,12"]
        .iter()
        .enumerate()
    {
        let d = shape.split(',').count();
        for r in 1..d {
            let method = ["alltoallv", "pairwise"][(i + r) % 2];
            let v = json_run(ranks, shape, &r.to_string(), method, (i + r) % 3 == 0);
            check_report(&v, ranks, shape, r);
        }
    }
}

#[test]
fn run_json_np1() {
    sweep(1);
}
#[test]
fn run_json_np2() {
    sweep(2);
}
#[test]
fn run_json_np3() {
    sweep(3);
}
#[test]
fn run_json_np4() {
    sweep(4);
}
#[test]
fn run_json_np5() {
    sweep(5);
}
#[test]
fn run_json_np6() {
    sweep(6);
}
#[test]
fn run_json_np7() {
    sweep(7);
}
#[test]
fn run_json_np8() {
    sweep(8);
}

/// Works with no launcher at all (a singleton MPI process).
#[test]
fn run_without_launcher() {
    let out = mpi_harness::run_command(
        {
            let mut c = Command::new(DFFT);
            c.args(["run", "--shape", "8,6,5", "--iters", "1", "--json"]);
            c
        },
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = flat(serde_json::from_slice(&out.stdout).unwrap());
    check_report(&v, 1, "8,6,5", 1);
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-cli-test-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a C-order complex128 .npy file by hand (header as numpy writes it).
fn write_npy_c128(path: &Path, shape: &[usize], data: &[num_complex::Complex<f64>]) {
    let mut bytes = npyio::encode_header(npyio::Dtype::C128, shape);
    for v in data {
        bytes.extend_from_slice(&v.re.to_le_bytes());
        bytes.extend_from_slice(&v.im.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

fn read_npy_c128(path: &Path) -> (Vec<usize>, Vec<num_complex::Complex<f64>>) {
    let header = npyio::read_header(path).unwrap();
    assert_eq!(header.dtype, npyio::Dtype::C128);
    let bytes = std::fs::read(path).unwrap();
    let data = bytes[header.data_offset as usize..]
        .chunks_exact(16)
        .map(|c| {
            num_complex::Complex::new(
                f64::from_le_bytes(c[..8].try_into().unwrap()),
                f64::from_le_bytes(c[8..].try_into().unwrap()),
            )
        })
        .collect();
    (header.shape, data)
}

/// Serial d-dimensional FFT with rustfft, axis by axis.
fn serial_fft(
    data: &[num_complex::Complex<f64>],
    shape: &[usize],
) -> Vec<num_complex::Complex<f64>> {
    let mut out = data.to_vec();
    let mut planner = rustfft::FftPlanner::new();
    for axis in 0..shape.len() {
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        let fft = planner.plan_fft_forward(n);
        let mut line = vec![num_complex::Complex::default(); n];
        for o in 0..outer {
            for c in 0..inner {
                for i in 0..n {
                    line[i] = out[(o * n + i) * inner + c];
                }
                fft.process(&mut line);
                for i in 0..n {
                    out[(o * n + i) * inner + c] = line[i];
                }
            }
        }
    }
    out
}

#[test]
fn npy_input_output_matches_serial_transform() {
    let dir = scratch_dir("npy");
    for (ranks, shape, grid, transposed) in [
        (1, vec![6, 5, 4], "auto", false),
        (3, vec![7, 5, 6], "1", false),
        (3, vec![7, 5, 6], "1", true),
        (4, vec![9, 7, 5, 6], "2x2", false),
        (4, vec![9, 7, 5, 6], "2x2", true),
        (4, vec![3, 10, 6], "2", false),
        (6, vec![5, 11], "auto", true),
    ] {
        let n: usize = shape.iter().product();
        let data: Vec<_> = (0..n)
            .map(|i| num_complex::Complex::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
            .collect();
        let input = dir.join(format!("in-{ranks}.npy"));
        let output = dir.join(format!("out-{ranks}.npy"));
        let _ = std::fs::remove_file(&output);
        write_npy_c128(&input, &shape, &data);
        let mut args = vec![
            "run",
            "--input",
            input.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--grid",
            grid,
            "--iters",
            "1",
            "--json",
        ];
        if transposed {
            // The spectrum stays in the last pencil; the file must still be C order.
            args.push("--transposed-out");
        }
        let (code, stdout, stderr) = dfft(ranks, &args);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let (out_shape, got) = read_npy_c128(&output);
        assert_eq!(out_shape, shape);
        let want = serial_fft(&data, &shape);
        let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let err = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max)
            / scale;
        assert!(
            err < 1e-13,
            "{ranks} ranks {shape:?} transposed={transposed}: error {err:e}"
        );
        // No temporary file left beside the output.
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_errors_exit_2_once() {
    for (args, needle) in [
        (vec!["run", "--shape", "64,0,64"], "at least 1"),
        (vec!["run", "--shape", "64,x,64"], "not a positive integer"),
        (
            vec!["run", "--shape", "64,64", "--method", "smoke"],
            "unknown exchange method",
        ),
        (
            vec!["run", "--shape", "64,64", "--grid", "4x"],
            "malformed grid",
        ),
        (
            vec!["run", "--shape", "8,6,5", "--axes", "1,3"],
            "an axis is out of range",
        ),
        (
            vec!["run", "--shape", "8,6,5", "--axes", "2,2"],
            "an axis is listed twice",
        ),
    ] {
        let (code, stdout, stderr) = dfft(4, &args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert_eq!(
            stderr.matches(needle).count(),
            1,
            "{args:?}: printed once\n{stderr}"
        );
    }
}

#[test]
fn bad_grid_is_an_error_on_every_rank() {
    let (code, _, stderr) = dfft(3, &["run", "--shape", "16,16,16", "--grid", "2x2"]);
    assert_ne!(code, 0);
    assert_eq!(
        stderr
            .matches("the grid [2, 2] has 4 positions but there are 3 processes")
            .count(),
        1,
        "{stderr}"
    );
}

/// Makes the inputs and numpy's partial transforms of them (`/usr/bin/python3`, Debian's
/// numpy): `c.npy` (complex128) and `r.npy` (float64) of shape 7×5×6, and for each case
/// `want-<name>.npy` = `numpy.fft.fftn(c, axes=…)` or `numpy.fft.rfftn(r, axes=…)`.
const PARTIAL_FIXTURE: &str = r#"
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(40)
c = rng.standard_normal((7, 5, 6)) + 1j * rng.standard_normal((7, 5, 6))
r = rng.standard_normal((7, 5, 6))
np.save(d + "/c.npy", c)
np.save(d + "/r.npy", r)
for spec in sys.argv[2:]:
    name, kind, axes = spec.split(":")
    axes = tuple(int(a) for a in axes.split(","))
    want = np.fft.fftn(c, axes=axes) if kind == "c2c" else np.fft.rfftn(r, axes=axes)
    np.save(d + "/want-" + name + ".npy", np.ascontiguousarray(want, dtype=np.complex128))
"#;

/// `dfft run --axes` transforms only the listed axes: c2c and r2c outputs (`--input`,
/// `--output`) on an uneven 7×5×6 shape against `numpy.fft.fftn(x, axes=…)` and
/// `numpy.fft.rfftn(x, axes=…)` (r2c halves the highest listed axis), 1 to 8 ranks, slab and
/// pencil grids; the report's problem carries the axes.
#[test]
fn partial_transforms_match_numpy() {
    let dir = scratch_dir("axes");
    let cases: [(&str, usize, &str, &str, &str); 8] = [
        ("a", 1, "c2c", "1,2", "auto"),
        ("b", 2, "c2c", "0", "auto"),
        ("c", 3, "c2c", "0,2", "1"),
        ("d", 4, "c2c", "1,2", "2x2"),
        ("e", 5, "r2c", "0,1", "auto"),
        ("f", 6, "c2c", "2", "3x2"),
        ("g", 7, "r2c", "1,2", "auto"),
        ("h", 8, "c2c", "0,1", "2x4"),
    ];
    let specs: Vec<String> = cases
        .iter()
        .map(|(name, _, kind, axes, _)| format!("{name}:{kind}:{axes}"))
        .collect();
    let out = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(PARTIAL_FIXTURE)
        .arg(&dir)
        .args(&specs)
        .output()
        .expect("/usr/bin/python3 runs (scripts/setup installs python3-numpy)");
    assert!(
        out.status.success(),
        "numpy fixture failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, ranks, kind, axes, grid) in cases {
        let input = dir.join(if kind == "c2c" { "c.npy" } else { "r.npy" });
        let output = dir.join(format!("out-{name}.npy"));
        let args = [
            "run",
            "--input",
            input.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--kind",
            kind,
            "--axes",
            axes,
            "--grid",
            grid,
            "--iters",
            "1",
            "--warmup",
            "0",
            "--json",
        ];
        let (code, stdout, stderr) = dfft(ranks, &args);
        assert_eq!(code, 0, "{args:?} on {ranks} ranks:\n{stdout}\n{stderr}");
        let report: Value = stdout
            .lines()
            .find(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .unwrap_or_else(|| panic!("no JSON report in {stdout}"));
        let listed: Vec<usize> = axes.split(',').map(|a| a.parse().unwrap()).collect();
        assert_eq!(
            report["problem"]["axes"],
            serde_json::json!(listed),
            "{report}"
        );
        let (got_shape, got) = read_npy_c128(&output);
        let (want_shape, want) = read_npy_c128(&dir.join(format!("want-{name}.npy")));
        assert_eq!(got_shape, want_shape, "{kind} --axes {axes}");
        let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let err = (got.iter().zip(&want))
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max)
            / scale;
        println!("{kind} --axes {axes} on {ranks} ranks, grid {grid}: error {err:.1e}");
        assert!(
            err < 1e-12,
            "{kind} --axes {axes} on {ranks} ranks, grid {grid}: error {err:e}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
