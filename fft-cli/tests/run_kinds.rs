//! `dfft run --kind/--precision/--normalization` end to end under mpirun:
//! the synthetic verification of every kind in both precisions, `.npy` files of every dtype
//! checked against numpy (`/usr/bin/python3` with numpy, as `scripts/setup` installs;
//! `$DFFT_TEST_PYTHON` overrides it), and the exact texts of the usage and runtime errors.
//! Small awkward shapes, 1 to 3 ranks: the whole file runs in well under a minute.

mod common;

use num_complex::Complex;
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
    flat(serde_json::from_str(lines[0]).expect("valid JSON"))
}

/// The suite's tolerance (1e-12·log2 N in f64, 1e-5·log2 N in f32) for `n` elements.
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

def r2r_matrix(t, n):
    # fft_core::R2rKind's table (FFTW REDFT/RODFT), row k, column n.
    k = np.arange(n)[:, None].astype(float)
    j = np.arange(n)[None, :].astype(float)
    pi = np.pi
    if t == "dct1":
        m = 2 * np.cos(pi * j * k / (n - 1))
        m[:, 0] = 1
        m[:, n - 1] = (-1.0) ** k[:, 0]
    elif t == "dct2":
        m = 2 * np.cos(pi * (j + 0.5) * k / n)
    elif t == "dct3":
        m = 2 * np.cos(pi * j * (k + 0.5) / n)
        m[:, 0] = 1
    elif t == "dct4":
        m = 2 * np.cos(pi * (j + 0.5) * (k + 0.5) / n)
    elif t == "dst1":
        m = 2 * np.sin(pi * (j + 1) * (k + 1) / (n + 1))
    elif t == "dst2":
        m = 2 * np.sin(pi * (j + 0.5) * (k + 1) / n)
    elif t == "dst3":
        m = 2 * np.sin(pi * (j + 1) * (k + 0.5) / n)
        m[:, n - 1] = (-1.0) ** k[:, 0]
    elif t == "dst4":
        m = 2 * np.sin(pi * (j + 0.5) * (k + 0.5) / n)
    elif t == "r2hc":
        # FFTW's halfcomplex order: Re X_k at row k <= n/2, Im X_{n-k} at row k > n/2.
        m = np.where(2 * k <= n, np.cos(2 * pi * j * k / n), -np.sin(2 * pi * j * (n - k) / n))
    elif t == "hc2r":
        m = n * np.linalg.inv(r2r_matrix("r2hc", n))
    elif t == "dht":
        m = np.cos(2 * pi * j * k / n) + np.sin(2 * pi * j * k / n)
    return m

def r2r(x, types):
    # Naive real-to-real transform, one matrix per axis (unnormalized).
    for axis, t in enumerate(types.split(",")):
        m = r2r_matrix(t, x.shape[axis])
        x = np.moveaxis(np.tensordot(m, x, axes=([1], [axis])), 0, axis)
    return x

def fields(f, x):
    # f applied to every field along the leading (batch) axis.
    return np.stack([f(x[i]) for i in range(x.shape[0])])

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

/// The value after `name` in `args`, if `name` is there.
fn flag<'a>(args: &[&'a str], name: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| *a == name)?;
    Some(args[i + 1])
}

/// Runs the synthetic verification `dfft run <flags>` (flags separated by spaces) on `ranks`
/// ranks: the JSON must name what the flags ask (`--kind` c2c, `--batch` 1 and
/// `--precision` f64 where they are left out), report its timings and memory, and both
/// errors must be within the tolerance for the shape and precision.
fn verify_synthetic(ranks: usize, flags: &str) {
    let args: Vec<&str> = flags.split_whitespace().collect();
    let flag = |name: &str| flag(&args, name);
    let kind = flag("--kind").unwrap_or("c2c");
    let precision = flag("--precision").unwrap_or("f64");
    let batch = flag("--batch").unwrap_or("1");
    let transposed = args.contains(&"--transposed-out");
    let v = json_run(ranks, &args);
    let what = format!("{ranks} ranks {flags}: {v}");
    assert_eq!(v["kind"], kind, "{what}");
    assert_eq!(v["precision"], precision, "{what}");
    assert_eq!(
        v["normalization"],
        flag("--normalization").unwrap(),
        "{what}"
    );
    assert_eq!(v["batch"], batch.parse::<u64>().unwrap(), "{what}");
    assert_eq!(v["transposed_out"], transposed, "{what}");
    assert_eq!(
        v["destroy_input"],
        args.contains(&"--destroy-input"),
        "{what}"
    );
    let in_place = args.contains(&"--in-place");
    assert_eq!(v["in_place"], in_place, "{what}");
    for (key, name) in [
        ("scrambled_in", "--scrambled-in"),
        ("scrambled_out", "--scrambled-out"),
    ] {
        assert_eq!(v[key], args.contains(&name), "{key}: {what}");
    }
    // An in-place run's one buffer is its own.
    let alloc = if in_place {
        "caller"
    } else {
        flag("--alloc").unwrap_or("plan")
    };
    assert_eq!(v["alloc"], alloc, "{what}");
    // Scripts parse these as before.
    for key in [
        "min_s",
        "median_s",
        "peak_rss_bytes",
        "pss_bytes",
        "pss_peak_bytes",
        "plan_work_bytes",
    ] {
        assert!(v[key].as_f64().unwrap() > 0.0, "{key}: {what}");
    }
    let n: usize = flag("--shape")
        .unwrap()
        .split(',')
        .map(|s| s.parse::<usize>().unwrap())
        .product();
    for key in ["roundtrip_error", "reference_error"] {
        let e = v[key].as_f64().unwrap();
        assert!(e <= tolerance(precision, n), "{key} {e:e}: {what}");
        eprintln!("{ranks} ranks {flags}: {key} {e:.2e}");
    }
}

/// The synthetic verification of c2c (the default kind) in both precisions and all
/// normalizations, on 1..=3 ranks, slab and pencil, plain and transposed output; the JSON
/// names what ran.
#[test]
fn c2c_precisions_and_normalizations_verify() {
    #[rustfmt::skip] // one case a line
    let cases = [
        (1, "--shape 11,7,13 --grid 1 --precision f32 --normalization none"),
        (2, "--shape 11,7,13 --grid 1 --precision f64 --normalization ortho --transposed-out"),
        (3, "--shape 6,5,8 --grid 1 --precision f32 --normalization ortho"),
        (3, "--shape 9,7,5,12 --grid 3x1 --precision f32 --normalization backward --transposed-out"),
        (2, "--shape 12,10 --grid auto --precision f64 --normalization none"),
    ];
    for (ranks, flags) in cases {
        verify_synthetic(ranks, flags);
    }
}

/// The distributed 1-D transform in order and in FFTW-MPI's scrambled orders (input, output,
/// both) on 1 to 8 ranks: prime, odd and power-of-two lengths against the exact spectrum of
/// the synthetic plane waves, and the round trip.
#[test]
fn one_d_orders_verify_on_1_to_8_ranks() {
    #[rustfmt::skip] // one case a line
    let cases = [
        (1, "--shape 64 --normalization backward --scrambled-out"),
        (2, "--shape 45 --normalization none --scrambled-in --scrambled-out"),
        (3, "--shape 128 --normalization ortho --scrambled-in"),
        (4, "--shape 97 --normalization backward --scrambled-out --in-place"),
        (5, "--shape 45 --precision f32 --normalization backward --scrambled-in"),
        (6, "--shape 60 --normalization none --scrambled-out --batch 2"),
        (7, "--shape 97 --normalization backward --scrambled-in --scrambled-out"),
        (8, "--shape 64 --normalization backward --scrambled-out --alloc caller"),
        (8, "--shape 45 --normalization backward"),
    ];
    for (ranks, flags) in cases {
        verify_synthetic(ranks, flags);
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

/// The synthetic verification of r2c, c2r and r2r (and batches) in both precisions, every
/// normalization, 1..=3 ranks, slab and pencil, plain and transposed output; c2c in place.
#[test]
fn every_kind_verifies_without_a_gather() {
    #[rustfmt::skip] // one case a line
    let cases = [
        (1, "--kind r2c --shape 11,7,13 --grid auto --precision f64 --normalization backward --batch 1"),
        (2, "--kind r2c --shape 9,7,5,12 --grid 2x1 --precision f32 --normalization ortho --batch 1 --transposed-out --destroy-input"),
        (3, "--kind r2c --shape 6,5,8 --grid 1 --precision f64 --normalization none --batch 3 --alloc caller"),
        (1, "--kind c2r --shape 12,10 --grid 1 --precision f32 --normalization none --batch 1"),
        (2, "--kind c2r --shape 11,7,13 --grid 1 --precision f64 --normalization backward --batch 2 --transposed-out --destroy-input"),
        (3, "--kind c2r --shape 9,7,5,12 --grid 3x1 --precision f64 --normalization ortho --batch 1"),
        (1, "--kind r2r:dct1,dct2,dct3 --shape 5,6,7 --grid auto --precision f64 --normalization none --batch 1"),
        (2, "--kind r2r:dct4,dst1,dst2 --shape 11,7,13 --grid 1 --precision f32 --normalization ortho --batch 1 --transposed-out"),
        (3, "--kind r2r:dst3,dst4,dct2,dst1 --shape 9,7,5,12 --grid 3x1 --precision f64 --normalization backward --batch 2 --destroy-input"),
        (3, "--kind r2r:dct2,dct3 --shape 12,10 --grid 1 --precision f32 --normalization backward --batch 3 --transposed-out"),
        (2, "--kind r2r:r2hc,dht,hc2r --shape 11,7,12 --grid 1 --precision f64 --normalization backward --batch 1"),
        (3, "--kind c2c --shape 97 --grid auto --precision f64 --normalization backward --batch 1"),
        (2, "--kind c2c --shape 60 --grid 1 --precision f32 --normalization none --batch 2 --in-place"),
        (3, "--kind c2c --shape 64 --grid 1 --precision f64 --normalization ortho --batch 1 --alloc caller"),
        (2, "--kind c2c --shape 11,7,13 --grid 1 --precision f32 --normalization none --batch 3 --transposed-out --destroy-input"),
        (2, "--kind c2c --shape 11,7,13 --grid 1 --precision f64 --normalization backward --batch 1 --alloc caller"),
        (2, "--kind c2c --shape 11,7,13 --grid 1 --precision f64 --normalization backward --batch 2 --in-place"),
        (3, "--kind c2c --shape 9,7,5,12 --grid 3x1 --precision f32 --normalization none --batch 1 --transposed-out --in-place"),
        (2, "--kind r2r:dct2,dst1,dct4 --shape 11,7,13 --grid 2x1 --precision f64 --normalization backward --batch 1 --in-place"),
        (3, "--kind r2c --shape 7,10,9 --grid 1 --precision f64 --normalization backward --batch 2 --in-place"),
        (2, "--kind r2c --shape 12,10 --grid 1 --precision f32 --normalization ortho --batch 1 --transposed-out --in-place"),
    ];
    for (ranks, flags) in cases {
        verify_synthetic(ranks, flags);
    }
}

/// r2c output files match numpy.fft.rfftn on 1, 2 and 3 ranks (uneven shapes, odd and even
/// last axes, transposed output, both precisions); c2r matches numpy.fft.irfftn on a half
/// spectrum that is not Hermitian (the modes that must be real carry imaginary parts, which
/// both ignore); r2r matches the table's naive transforms; a batch file holds its fields
/// along a leading axis.
#[test]
fn real_kind_files_match_numpy() {
    let dir = scratch_dir("real");
    // (ranks, flags besides --input and --output, the input file's shape, numpy of it)
    let cases: [(usize, &str, &[usize], &str); 10] = [
        (
            1,
            "--kind r2c --precision f64 --grid auto",
            &[6, 5, 4],
            "np.fft.rfftn(x)",
        ),
        (
            2,
            "--kind r2c --precision f32 --grid 1 --transposed-out",
            &[7, 5, 6],
            "np.fft.rfftn(x.astype(np.float64))",
        ),
        (
            3,
            "--kind r2c --precision f64 --grid 1 --normalization ortho --destroy-input",
            &[11, 7, 13],
            "np.fft.rfftn(x, norm='ortho')",
        ),
        (
            3,
            "--kind r2c --precision f64 --grid 3x1 --transposed-out",
            &[9, 7, 5, 12],
            "np.fft.rfftn(x)",
        ),
        (
            2,
            "--kind c2r --precision f64 --grid 1 --shape 7,5,6 --transposed-out --destroy-input",
            &[7, 5, 4],
            "np.fft.irfftn(x, s=(7, 5, 6))",
        ),
        (
            3,
            "--kind c2r --precision f32 --grid 1 --shape 11,7,13 --normalization none",
            &[11, 7, 7],
            "np.fft.irfftn(x.astype(np.complex128), s=(11, 7, 13), norm='forward')",
        ),
        (
            2,
            "--kind r2r:dct1,dst2,dct4 --precision f64 --grid 1 --transposed-out",
            &[6, 5, 7],
            "r2r(x, 'dct1,dst2,dct4')",
        ),
        (
            3,
            "--kind r2r:r2hc,hc2r,dht --precision f64 --grid 1",
            &[6, 5, 8],
            "r2r(x, 'r2hc,hc2r,dht')",
        ),
        (
            3,
            "--kind r2r:dct2,dct3,dst1,dst3 --precision f32 --grid 3x1 --normalization ortho",
            &[9, 7, 5, 12],
            "r2r(x.astype(np.float64), 'dct2,dct3,dst1,dst3') / np.sqrt(18 * 14 * 12 * 24)",
        ),
        (
            2,
            "--kind r2c --precision f64 --grid 1 --batch 3 --transposed-out",
            &[3, 7, 5, 6],
            "fields(np.fft.rfftn, x)",
        ),
    ];
    let mut checks = Vec::new();
    for (i, (ranks, flags, file_shape, expr)) in cases.into_iter().enumerate() {
        let flag_list: Vec<&str> = flags.split_whitespace().collect();
        let kind = flag(&flag_list, "--kind").unwrap();
        let precision = flag(&flag_list, "--precision").unwrap();
        let n: usize = file_shape.iter().product();
        let complex_in = kind == "c2r";
        let dtype = match (complex_in, precision) {
            (true, "f32") => npyio::Dtype::C64,
            (true, _) => npyio::Dtype::C128,
            (false, "f32") => npyio::Dtype::F32,
            (false, _) => npyio::Dtype::F64,
        };
        let input = dir.join(format!("in-{i}.npy"));
        let output = dir.join(format!("out-{i}.npy"));
        write_npy(&input, dtype, file_shape, &values(n));
        let mut args = vec![
            "--input",
            input.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
        ];
        args.extend(&flag_list);
        let v = json_run(ranks, &args);
        assert!(
            v["reference_error"].is_null(),
            "no reference with --input: {v}"
        );
        let rt = v["roundtrip_error"].as_f64().unwrap();
        assert!(rt <= tolerance(precision, n), "{args:?}: round trip {rt:e}");
        let real_out = kind.starts_with("r2r") || kind == "c2r";
        checks.push(NumpyCase {
            what: format!("{ranks} ranks {flags} file {file_shape:?}"),
            input,
            output,
            expr: expr.to_string(),
            dtype: match (real_out, precision) {
                (true, "f32") => "float32",
                (true, _) => "float64",
                (false, "f32") => "complex64",
                (false, _) => "complex128",
            },
            tolerance: tolerance(precision, n),
        });
    }
    check_with_numpy(&checks);
    std::fs::remove_dir_all(&dir).ok();
}

/// Usage errors: exit 2, one line, printed once.
#[test]
fn bad_flags_are_usage_errors() {
    for (args, needle) in [
        (
            vec!["run", "--shape", "8,6", "--kind", "c2x"],
            "dfft: error: invalid value 'c2x' for '--kind <KIND>': unknown transform kind 'c2x' (expected c2c, r2c, c2r or r2r:<types>, e.g. r2r:dct2,dct2,dst1) (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6", "--kind", "r2r:dct2,dct5"],
            "dfft: error: invalid value 'r2r:dct2,dct5' for '--kind <KIND>': unknown real-to-real type 'dct5' in 'r2r:dct2,dct5' (expected dct1, dct2, dct3, dct4, dst1, dst2, dst3, dst4, r2hc, hc2r or dht) (see --help)",
        ),
        (
            vec!["run", "--shape", "8", "--kind", "r2c"],
            "dfft: error: --shape 8: a 1-D shape is the distributed 1-D transform, --kind c2c only (a r2c transform needs at least 2 axes) (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6", "--scrambled-in"],
            "dfft: error: --scrambled-in and --scrambled-out need a 1-D --shape (the distributed 1-D transform), got 2 axes (see --help)",
        ),
        (
            vec!["run", "--shape", "8", "--output", "x.npy"],
            "dfft: error: --shape 8: the distributed 1-D transform runs on synthetic data (no --input or --output) (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6", "--kind", "r2r"],
            "dfft: error: invalid value 'r2r' for '--kind <KIND>': 'r2r' needs one real-to-real type per axis after a colon, e.g. r2r:dct2,dct2,dst1 (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6,5", "--kind", "r2r:dct2,dct2"],
            "dfft: error: --kind r2r:dct2,dct2 gives 2 real-to-real type(s) but the shape [8, 6, 5] has 3 axes (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6", "--batch", "0"],
            "dfft: error: invalid value '0' for '--batch <BATCH>': a batch holds at least 1 field, got 0 (see --help)",
        ),
        (
            vec!["run", "--kind", "c2r", "--input", "half.npy"],
            "dfft: error: the argument '--shape <SHAPE>' is required with --kind c2r (the real output's shape: the half spectrum does not tell an even last axis from an odd one) (see --help)",
        ),
        (
            vec!["run", "--shape", "8,6", "--precision", "f16"],
            "dfft: error: invalid value 'f16' for '--precision <PRECISION>'",
        ),
        (
            vec!["run", "--shape", "8,6", "--normalization", "unitary"],
            "dfft: error: invalid value 'unitary' for '--normalization <NORMALIZATION>': unknown normalization 'unitary' (expected one of: none, backward, ortho, forward) (see --help)",
        ),
    ] {
        let (code, stdout, stderr) = dfft(2, &args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert_eq!(stderr.matches(needle).count(), 1, "{args:?}:\n{stderr}");
        assert_eq!(stderr.lines().filter(|l| l.contains("dfft:")).count(), 1, "{stderr}");
    }
}

/// A file whose dtype or shape does not fit --kind, --precision, --shape or --batch: exit 1,
/// one message naming both sides, no output file.
#[test]
fn file_mismatches_name_both_sides() {
    let dir = scratch_dir("dtype");
    let f32_file = dir.join("f32.npy");
    let c128_file = dir.join("c128.npy");
    write_npy(&f32_file, npyio::Dtype::F32, &[8, 6], &values(48));
    write_npy(&c128_file, npyio::Dtype::C128, &[8, 6], &values(48));
    let out = dir.join("out.npy");
    let p = |f: &Path| f.display().to_string();
    let f64_file = dir.join("f64.npy");
    let c64_file = dir.join("c64.npy");
    write_npy(&f64_file, npyio::Dtype::F64, &[8, 6, 5], &values(240));
    write_npy(&c64_file, npyio::Dtype::C64, &[8, 6, 3], &values(144));
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
        (
            2,
            &f32_file,
            vec!["--kind", "r2c"],
            format!(
                "dfft: error: {}: the file holds float32, but --kind r2c --precision f64 reads float64",
                p(&f32_file)
            ),
        ),
        (
            3,
            &c128_file,
            vec!["--kind", "r2r:dct2,dst2"],
            format!(
                "dfft: error: {}: the file holds complex128, but --kind r2r:dct2,dst2 --precision f64 reads float64",
                p(&c128_file)
            ),
        ),
        (
            2,
            &f64_file,
            vec!["--kind", "c2r", "--shape", "8,6,5"],
            format!(
                "dfft: error: {}: the file holds float64, but --kind c2r --precision f64 reads complex128",
                p(&f64_file)
            ),
        ),
        (
            2,
            &c64_file,
            vec!["--kind", "c2r", "--precision", "f32", "--shape", "8,6,6"],
            format!(
                "dfft: error: --kind c2r --shape [8, 6, 6] reads the half spectrum [8, 6, 4], but {} has shape [8, 6, 3]",
                p(&c64_file)
            ),
        ),
        (
            1,
            &f64_file,
            vec!["--kind", "r2r:dct2,dct2"],
            "dfft: error: --kind r2r:dct2,dct2 gives 2 real-to-real type(s) but the shape [8, 6, 5] has 3 axes".to_string(),
        ),
        (
            2,
            &f64_file,
            vec!["--batch", "3"],
            format!(
                "dfft: error: {}: --batch 3 reads 3 fields along the first axis, but the file has shape [8, 6, 5]",
                p(&f64_file)
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

/// `dfft run --kind r2c --output x.h5:/f` on 3 ranks (uneven shape): h5py reads one complex
/// dataset of the half-spectrum shape that equals numpy.fft.rfftn of the input to 1e-12, with
/// its attributes; the file reads back as `--input out.h5:/f` of a c2r run on 2 ranks whose
/// real output `back.h5:/g/x` equals the input to 1e-12 and comes with an XDMF file that
/// Python's xml parses, naming the dataset and its dimensions.
#[test]
fn hdf5_output_matches_numpy_rfftn() {
    let dir = std::env::temp_dir().join(format!("dfft-h5-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("x.npy");
    let output = dir.join("out.h5");
    let shape = [11usize, 7, 13];
    let n: usize = shape.iter().product();
    let mut bytes = npyio::encode_header(npyio::Dtype::F64, &shape);
    for i in 0..n {
        bytes.extend_from_slice(&(((i * 37) % 101) as f64 / 7.0 - 3.0).to_le_bytes());
    }
    std::fs::write(&input, bytes).unwrap();
    let target = format!("{}:/f", output.display());
    let mut cmd = mpi_harness::mpirun_command(3);
    cmd.arg(env!("CARGO_BIN_EXE_dfft")).args([
        "run",
        "--kind",
        "r2c",
        "--iters",
        "1",
        "--grid",
        "3x1",
        "--input",
        input.to_str().unwrap(),
        "--output",
        &target,
    ]);
    let out = mpi_harness::run_command(cmd, std::time::Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Back on 2 ranks (another split), into a group of a real-valued file.
    let back = dir.join("back.h5");
    let back_target = format!("{}:/g/x", back.display());
    let mut cmd = mpi_harness::mpirun_command(2);
    cmd.arg(env!("CARGO_BIN_EXE_dfft")).args([
        "run",
        "--kind",
        "c2r",
        "--shape",
        "11,7,13",
        "--normalization",
        "backward",
        "--iters",
        "1",
        "--input",
        &target,
        "--output",
        &back_target,
    ]);
    let out = mpi_harness::run_command(cmd, std::time::Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let check = std::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(
            r#"
import sys, h5py, numpy as np, xml.etree.ElementTree as ET
x = np.load(sys.argv[1])
b = h5py.File(sys.argv[3], "r")["g/x"]
assert b.dtype == np.float64 and b.shape == x.shape, (b.dtype, b.shape)
assert np.abs(b[...] - x).max() < 1e-12 * np.abs(x).max(), np.abs(b[...] - x).max()
assert b.attrs["kind"] == "c2r", dict(b.attrs)
root = ET.parse(sys.argv[4]).getroot()
items = [d for d in root.iter("DataItem") if d.get("Format") == "HDF"]
assert len(items) == 1, [i.attrib for i in items]
assert items[0].get("Dimensions") == "11 7 13" and items[0].get("Precision") == "8", items[0].attrib
assert items[0].text.strip() == "back.h5:/g/x", items[0].text
topology = next(root.iter("Topology"))
assert topology.get("Dimensions") == "11 7 13", topology.attrib
f = h5py.File(sys.argv[2], "r")["f"]
got = f[...]
want = np.fft.rfftn(x)
assert got.dtype == np.complex128 and got.shape == want.shape, (got.dtype, got.shape)
err = np.abs(got - want).max() / np.abs(want).max()
assert err < 1e-12, err
assert f.attrs["kind"] == "r2c" and f.attrs["shape"] == "11,7,7", dict(f.attrs)
print("rfftn ok", err)
"#,
        )
        .arg(&input)
        .arg(&output)
        .arg(&back)
        .arg(dir.join("back.xmf"))
        .output()
        .unwrap();
    assert!(
        check.status.success() && String::from_utf8_lossy(&check.stdout).contains("rfftn ok"),
        "{}\n{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!files.iter().any(|f| f.contains("tmp")), "{files:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The HDF5 path and the `.npy` path of `dfft run` give the same bits: an index-valued c2c
/// input written by numpy (`x.npy`) and by h5py (`x.h5:/x`), transformed on 1 to 4 ranks
/// with the transposed plan (whose output `dfft` reorders before writing), one run reading
/// and writing `.npy` and one HDF5; the outputs are equal bit for bit on every rank count and
/// equal numpy.fft.fftn to 1e-12.
#[test]
fn hdf5_and_npy_paths_agree_on_1_to_4_ranks() {
    let dir = scratch_dir("h5-npy");
    let shape = "6,5,7";
    let script = r#"
import sys, h5py, numpy as np
i = np.arange(6 * 5 * 7, dtype=np.float64).reshape(6, 5, 7)
x = i - 0.5j * i
np.save(sys.argv[1] + "/x.npy", x)
with h5py.File(sys.argv[1] + "/x.h5", "w") as f:
    f["x"] = x
"#;
    let made = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(&dir)
        .output()
        .expect("python3 runs");
    assert!(
        made.status.success(),
        "h5py and numpy (scripts/setup): {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let file = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    for ranks in 1..=4usize {
        let npy_out = file(&format!("y{ranks}.npy"));
        let h5_out = format!("{}:/y", file(&format!("y{ranks}.h5")));
        let h5_in = format!("{}:/x", file("x.h5"));
        for (input, output) in [(file("x.npy"), npy_out), (h5_in, h5_out)] {
            json_run(
                ranks,
                &[
                    "--shape",
                    shape,
                    "--transposed-out",
                    "--input",
                    &input,
                    "--output",
                    &output,
                ],
            );
        }
    }
    let check = Command::new(python())
        .arg("-c")
        .arg(
            r#"
import sys, h5py, numpy as np
d = sys.argv[1]
x = np.load(d + "/x.npy")
want = np.fft.fftn(x)
for r in range(1, 5):
    a = np.load(d + "/y%d.npy" % r)
    b = h5py.File(d + "/y%d.h5" % r, "r")["y"][...]
    assert a.dtype == b.dtype == np.complex128 and a.shape == b.shape == x.shape, (a.dtype, b.dtype, b.shape)
    assert a.tobytes() == b.tobytes(), (r, np.abs(a - b).max())
    err = np.abs(b - want).max() / np.abs(want).max()
    assert err < 1e-12, (r, err)
print("npy == h5 on 1-4 ranks")
"#,
        )
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}
