//! `dfft run --kind/--precision/--normalization` end to end under mpirun (issue 5, point 7):
//! the synthetic verification of every kind in both precisions, `.npy` files of every dtype
//! checked against numpy (`/usr/bin/python3` with numpy, as `scripts/setup` installs;
//! `$DFFT_TEST_PYTHON` overrides it), and the exact texts of the usage and runtime errors.
//! Small awkward shapes, 1 to 3 ranks: the whole file runs in well under a minute.

use num_complex::Complex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

/// Runs `dfft <args>` on `ranks` processes; returns (exit code, stdout, stderr).
fn dfft(ranks: usize, args: &[&str]) -> (i32, String, String) {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).args(args);
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(60));
    assert!(!timed_out, "dfft {args:?} on {ranks} ranks hung");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `dfft run <args> --json` must succeed; returns its one JSON line.
fn json_run(ranks: usize, args: &[&str]) -> Value {
    let mut all = vec!["run", "--iters", "2", "--warmup", "1", "--json"];
    all.extend(args);
    let (code, stdout, stderr) = dfft(ranks, &all);
    assert_eq!(
        code, 0,
        "dfft {all:?} on {ranks} ranks:\n{stdout}\n{stderr}"
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 1, "one JSON line from rank 0:\n{stdout}");
    serde_json::from_str(lines[0]).expect("valid JSON")
}

/// DESIGN §5 tolerance for `n` elements.
fn tolerance(precision: &str, n: usize) -> f64 {
    let log = (n as f64).log2().max(1.0);
    if precision == "f32" {
        1e-5 * log
    } else {
        1e-12 * log
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-kinds-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python() -> String {
    std::env::var("DFFT_TEST_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".to_owned())
}

/// Runs a Python script (numpy required; the test fails without it).
fn run_python(script: &str, args: &[String]) -> String {
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python()));
    assert!(
        out.status.success(),
        "{} failed (numpy is required: scripts/setup installs python3-numpy):\n{}",
        python(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes a C-order .npy of `dtype` from complex values (real dtypes keep the real part).
fn write_npy(path: &Path, dtype: npyio::Dtype, shape: &[usize], data: &[Complex<f64>]) {
    let mut bytes = npyio::encode_header(dtype, shape);
    for v in data {
        match dtype {
            npyio::Dtype::F32 => bytes.extend_from_slice(&(v.re as f32).to_le_bytes()),
            npyio::Dtype::F64 => bytes.extend_from_slice(&v.re.to_le_bytes()),
            npyio::Dtype::C64 => {
                bytes.extend_from_slice(&(v.re as f32).to_le_bytes());
                bytes.extend_from_slice(&(v.im as f32).to_le_bytes());
            }
            npyio::Dtype::C128 => {
                bytes.extend_from_slice(&v.re.to_le_bytes());
                bytes.extend_from_slice(&v.im.to_le_bytes());
            }
        }
    }
    std::fs::write(path, bytes).unwrap();
}

/// Deterministic awkward values.
fn values(n: usize) -> Vec<Complex<f64>> {
    (0..n)
        .map(|i| Complex::new((i as f64 * 0.37).sin() + 0.25, (i as f64 * 0.11).cos()))
        .collect()
}

/// One file case checked by numpy: dfft's output file against `numpy.<op>(input)`; the
/// output's dtype and shape must be the expected ones.
struct NumpyCase {
    what: String,
    input: PathBuf,
    output: PathBuf,
    /// A Python expression of `x` (the input array), e.g. `np.fft.rfftn(x)`.
    expr: String,
    dtype: &'static str,
    tolerance: f64,
}

/// Checks every case in one Python process; returns the measured errors.
fn check_with_numpy(cases: &[NumpyCase]) -> Vec<f64> {
    const SCRIPT: &str = r#"
import sys, numpy as np
args = sys.argv[1:]
for i in range(0, len(args), 4):
    inp, out, expr, dtype = args[i:i + 4]
    x = np.load(inp)
    want = eval(expr)
    got = np.load(out)
    if str(got.dtype) != dtype or got.shape != want.shape:
        print(f"MISMATCH {got.dtype} {got.shape} want {dtype} {want.shape}")
        continue
    scale = max(np.abs(want).max(), 1e-300)
    print(float(np.abs(got.astype(np.complex128) - want).max() / scale))
"#;
    let mut args = Vec::new();
    for c in cases {
        args.extend([
            c.input.display().to_string(),
            c.output.display().to_string(),
            c.expr.clone(),
            c.dtype.to_string(),
        ]);
    }
    let out = run_python(SCRIPT, &args);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), cases.len(), "{out}");
    cases
        .iter()
        .zip(lines)
        .map(|(c, line)| {
            let err: f64 = line
                .parse()
                .unwrap_or_else(|_| panic!("{}: {line}", c.what));
            assert!(
                err <= c.tolerance,
                "{}: error {err:e} against numpy above {:e}",
                c.what,
                c.tolerance
            );
            eprintln!("{}: error {err:.2e} against numpy", c.what);
            err
        })
        .collect()
}

/// The synthetic verification of c2c in both precisions and all normalizations, on 1..=3
/// ranks, slab and pencil, plain and transposed output; the JSON names what ran.
#[test]
fn c2c_precisions_and_normalizations_verify() {
    for (ranks, shape, grid, precision, norm, transposed) in [
        (1, "11,7,13", "1", "f32", "none", false),
        (2, "11,7,13", "1", "f64", "ortho", true),
        (3, "6,5,8", "1", "f32", "ortho", false),
        (3, "9,7,5,12", "3x1", "f32", "backward", true),
        (2, "12,10", "auto", "f64", "none", false),
    ] {
        let mut args = vec![
            "--shape",
            shape,
            "--grid",
            grid,
            "--precision",
            precision,
            "--normalization",
            norm,
        ];
        if transposed {
            args.push("--transposed-out");
        }
        let v = json_run(ranks, &args);
        let what = format!("{ranks} ranks {args:?}: {v}");
        assert_eq!(v["kind"], "c2c", "{what}");
        assert_eq!(v["precision"], precision, "{what}");
        assert_eq!(v["normalization"], norm, "{what}");
        assert_eq!(v["batch"], 1, "{what}");
        assert_eq!(v["transposed_out"], transposed, "{what}");
        let n: usize = shape
            .split(',')
            .map(|s| s.parse::<usize>().unwrap())
            .product();
        for key in ["roundtrip_error", "reference_error"] {
            let e = v[key].as_f64().unwrap();
            assert!(e <= tolerance(precision, n), "{key} {e:e}: {what}");
            eprintln!("{ranks} ranks {args:?}: {key} {e:.2e}");
        }
    }
}

/// c2c files in both precisions against numpy.fft.fftn (norm as asked), including transposed
/// output and a real input file of the run's precision.
#[test]
fn c2c_files_match_numpy() {
    let dir = scratch_dir("c2c");
    let mut cases = Vec::new();
    for (i, (ranks, shape, dtype, precision, norm, transposed)) in [
        (
            1,
            vec![6, 5, 4],
            npyio::Dtype::C64,
            "f32",
            "backward",
            false,
        ),
        (2, vec![7, 5, 6], npyio::Dtype::C128, "f64", "ortho", true),
        (3, vec![5, 11], npyio::Dtype::F32, "f32", "none", false),
    ]
    .into_iter()
    .enumerate()
    {
        let n = shape.iter().product();
        let input = dir.join(format!("in-{i}.npy"));
        let output = dir.join(format!("out-{i}.npy"));
        write_npy(&input, dtype, &shape, &values(n));
        let mut args = vec![
            "--input",
            input.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--precision",
            precision,
            "--normalization",
            norm,
        ];
        if transposed {
            args.push("--transposed-out");
        }
        json_run(ranks, &args);
        let numpy_norm = if norm == "ortho" { "ortho" } else { "backward" };
        cases.push(NumpyCase {
            what: format!("c2c {ranks} ranks {shape:?} {dtype} {norm} transposed={transposed}"),
            input,
            output,
            expr: format!("np.fft.fftn(x.astype(np.complex128), norm='{numpy_norm}')"),
            dtype: if precision == "f32" {
                "complex64"
            } else {
                "complex128"
            },
            tolerance: tolerance(precision, n),
        });
    }
    check_with_numpy(&cases);
    std::fs::remove_dir_all(&dir).ok();
}

/// Usage errors: exit 2, one line, printed once.
#[test]
fn bad_flags_are_usage_errors() {
    for (args, needle) in [
        (
            vec!["run", "--shape", "8,6", "--kind", "c2x"],
            "dfft: error: invalid value 'c2x' for '--kind <KIND>': unknown transform kind 'c2x' (expected c2c) (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6", "--precision", "f16"],
            "dfft: error: invalid value 'f16' for '--precision <PRECISION>'",
        ),
        (
            vec!["run", "--shape", "8,6", "--normalization", "forward"],
            "dfft: error: invalid value 'forward' for '--normalization <NORMALIZATION>': unknown normalization 'forward' (expected one of: none, backward, ortho) (see --help)",
        ),
    ] {
        let (code, stdout, stderr) = dfft(2, &args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert_eq!(stderr.matches(needle).count(), 1, "{args:?}:\n{stderr}");
        assert_eq!(stderr.lines().filter(|l| l.contains("dfft:")).count(), 1, "{stderr}");
    }
}

/// A file whose dtype does not fit --kind and --precision: exit 1, one message naming both,
/// no output file.
#[test]
fn dtype_mismatches_name_both_dtypes() {
    let dir = scratch_dir("dtype");
    let f32_file = dir.join("f32.npy");
    let c128_file = dir.join("c128.npy");
    write_npy(&f32_file, npyio::Dtype::F32, &[8, 6], &values(48));
    write_npy(&c128_file, npyio::Dtype::C128, &[8, 6], &values(48));
    let out = dir.join("out.npy");
    let p = |f: &Path| f.display().to_string();
    for (ranks, file, extra, message) in [
        (
            2,
            &f32_file,
            vec![],
            format!(
                "dfft: error: {}: the file holds float32, but --kind c2c --precision f64 reads complex128 (or float64)",
                p(&f32_file)
            ),
        ),
        (
            1,
            &c128_file,
            vec!["--precision", "f32"],
            format!(
                "dfft: error: {}: the file holds complex128, but --kind c2c --precision f32 reads complex64 (or float32)",
                p(&c128_file)
            ),
        ),
    ] {
        let mut args = vec![
            "run",
            "--iters",
            "1",
            "--input",
            file.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let (code, stdout, stderr) = dfft(ranks, &args);
        assert_eq!(code, 1, "{args:?}: {stdout}{stderr}");
        assert_eq!(stderr.matches(&message).count(), 1, "{args:?}:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "no output after a failed run");
    }
    std::fs::remove_dir_all(&dir).ok();
}
