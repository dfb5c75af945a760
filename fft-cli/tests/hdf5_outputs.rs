//! `--output file.h5:/dataset` adds or replaces that one dataset and keeps everything else in
//! the file, byte for byte (other datasets, groups, attributes of the file and of every
//! object), all-or-nothing: a failed run leaves the file exactly as it was. A name that is a
//! group, a path without a dataset, a target that is not an HDF5 file or cannot be written
//! are refused before any transform runs. h5py (`/usr/bin/python3`, python3-h5py-serial as
//! `scripts/setup` installs) writes the fixtures and checks the files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");
const TIMEOUT: Duration = Duration::from_secs(60);

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    seconds: f64,
}

/// `dfft args` on `ranks` ranks under the timeout, with `env` set.
fn dfft(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg(DFFT).args(args);
    let start = Instant::now();
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !timed_out,
        "dfft {args:?} on {ranks} rank(s) hung\n{stderr}"
    );
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        seconds: start.elapsed().as_secs_f64(),
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-h5out-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a Python script with h5py and numpy (`/usr/bin/python3`); its standard output.
fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("/usr/bin/python3 runs (scripts/setup installs python3-h5py-serial)");
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A file as a user keeps it: `/u` (complex128 8x6x5, attribute `units`), `/notes` (a string
/// dataset), `/g/v` (int32) in group `/g` (attribute `step`), file attributes `title` and
/// `version`.
const FIXTURE: &str = r#"
import sys, h5py, numpy as np
rng = np.random.default_rng(3)
u = rng.standard_normal((8, 6, 5)) + 1j * rng.standard_normal((8, 6, 5))
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["title"] = "a run kept by a user"
    f.attrs["version"] = np.int64(7)
    d = f.create_dataset("u", data=u)
    d.attrs["units"] = "m/s"
    f.create_dataset("notes", data=np.bytes_("seed 3, nu 0.01"))
    g = f.create_group("g")
    g.attrs["step"] = np.int32(100)
    g.create_dataset("v", data=np.arange(12, dtype=np.int32).reshape(3, 4))
"#;

/// One line per object of the file except `skip`, sorted: its path, kind, dtype, shape, a
/// hash of its bytes and its attributes (name, dtype, value bytes); and the file's attributes.
const DIGEST: &str = r#"
import sys, h5py, hashlib, numpy as np
skip = sys.argv[2]
lines = []
def attrs(obj):
    out = []
    for k in sorted(obj.attrs):
        v = np.asarray(obj.attrs[k])
        out.append("%s:%s:%s" % (k, v.dtype.str, hashlib.sha256(v.tobytes()).hexdigest()[:16]))
    return " ".join(out)
def visit(name, obj):
    if "/" + name == skip:
        return
    if isinstance(obj, h5py.Dataset):
        data = np.asarray(obj[()])
        lines.append("/%s dataset %s %s %s [%s]" % (name, obj.dtype.str, obj.shape,
                     hashlib.sha256(data.tobytes()).hexdigest()[:16], attrs(obj)))
    else:
        lines.append("/%s group [%s]" % (name, attrs(obj)))
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
    lines.append("/ file [%s]" % attrs(f))
print("\n".join(sorted(lines)))
"#;

/// `name` of the file against numpy's fftn of `/u`, scaled by `scale`: the largest error
/// relative to the largest value, and the dataset's `normalization` attribute.
const CHECK: &str = r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    u = f["u"][...]
    got = f[sys.argv[2]][...]
    norm = f[sys.argv[2]].attrs["normalization"]
want = np.fft.fftn(u) * float(sys.argv[3])
print("%.3e %s" % (abs(got - want).max() / abs(want).max(), norm))
"#;

/// The file address of dataset `argv[2]`'s data.
const OFFSET: &str = r#"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print(f[sys.argv[2]].id.get_offset())
"#;

fn digest(file: &Path, skip: &str) -> String {
    python(DIGEST, &[file, Path::new(skip)])
}

/// The transform's error against numpy and the dataset's normalization attribute.
fn check(file: &Path, dataset: &str, scale: f64) -> (f64, String) {
    let out = python(
        CHECK,
        &[file, Path::new(dataset), Path::new(&scale.to_string())],
    );
    let (error, norm) = out.trim().split_once(' ').expect("two fields");
    (error.parse().unwrap(), norm.to_string())
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Adding `/u_hat` to a file that holds `/u`, `/notes`, `/g/v` and attributes keeps all of
/// them byte for byte; a second run replaces `/u_hat` (and says so) and keeps them again; a
/// group's name, a dataset used as a group and a run that fails its verification leave the
/// file's bytes exactly as they were. On 2 ranks.
#[test]
fn an_hdf5_output_adds_or_replaces_one_dataset_and_keeps_the_rest() {
    let dir = scratch_dir("keep");
    let file = dir.join("field.h5");
    python(FIXTURE, &[&file]);
    let before = digest(&file, "/u_hat");
    let input = format!("{}:/u", file.display());
    let output = format!("{}:/u_hat", file.display());
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec![
            "run", "--input", &input, "--output", &output, "--iters", "1",
        ];
        args.extend_from_slice(extra);
        dfft(2, &args, env)
    };

    let out = run(&[], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("output"))
        .unwrap_or("");
    assert!(
        line.contains(&output) && line.contains("added"),
        "{}",
        out.stdout
    );
    assert_eq!(
        digest(&file, "/u_hat"),
        before,
        "the rest of the file changed"
    );
    let (error, norm) = check(&file, "u_hat", 1.0);
    assert!(error < 1e-12, "u_hat against numpy.fft.fftn: {error:.3e}");
    assert_eq!(norm, "backward");

    // The same name again: replaced, as an existing .npy output is, and said so; a dataset
    // of the same shape and type is overwritten in place (same address), so the file grows
    // by no copy of its data: at most HDF5's 4 KiB global-heap block for the new text of its
    // attributes (variable-length strings).
    let size = std::fs::metadata(&file).unwrap().len();
    let address = python(OFFSET, &[&file, Path::new("u_hat")]);
    let out = run(&["--normalization", "ortho"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        python(OFFSET, &[&file, Path::new("u_hat")]),
        address,
        "/u_hat was not overwritten in place"
    );
    let grown = std::fs::metadata(&file).unwrap().len() - size;
    assert!(grown <= 4096, "the file grew by {grown} bytes");
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("output"))
        .unwrap_or("");
    assert!(line.contains("replaced"), "{}", out.stdout);
    assert_eq!(
        digest(&file, "/u_hat"),
        before,
        "the rest of the file changed"
    );
    let (error, norm) = check(&file, "u_hat", 1.0 / (240f64).sqrt());
    assert!(error < 1e-12, "replaced u_hat against numpy: {error:.3e}");
    assert_eq!(norm, "ortho");

    // Refusals and failures leave every byte as it was, and come before any transform.
    let kept = bytes(&file);
    let group = format!("{}:/g", file.display());
    let under_dataset = format!("{}:/notes/x", file.display());
    for (target, needle) in [
        (group.as_str(), "/g is a group"),
        (under_dataset.as_str(), "/notes is a dataset, not a group"),
    ] {
        let args = ["run", "--input", &input, "--output", target, "--iters", "1"];
        let out = dfft(2, &args, &[]);
        assert_eq!(out.code, 1, "{target}: {}", out.stderr);
        assert_eq!(out.stderr.matches(needle).count(), 1, "{}", out.stderr);
        assert!(!out.stdout.contains("forward+backward"), "{target}: ran");
        assert!(bytes(&file) == kept, "{target}: the file changed");
    }
    // A wrong result (test-only fault injection) fails the verification of a synthetic run.
    let args = [
        "run", "--shape", "8,6,5", "--output", &output, "--iters", "1",
    ];
    let out = dfft(2, &args, &[("DFFT_TEST_PERTURB", "1e-6")]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("verification failed"), "{}", out.stderr);
    assert!(bytes(&file) == kept, "a failed run changed the file");
    assert_eq!(common::files_in(&dir), vec!["field.h5".to_string()]);
    std::fs::remove_dir_all(&dir).ok();
}

/// An HDF5 path without a dataset is refused as a usage error (exit 2) instead of being
/// written as a `.npy` named `x.h5`; an `.npy` input that holds HDF5 says so; a dataset name
/// that is empty or the root group, an existing target that is not an HDF5 file, and an
/// `.xmf` description whose path is a directory fail before any transform (a long run that
/// would take minutes fails in seconds) and leave nothing behind.
#[test]
fn hdf5_targets_are_checked_before_the_work() {
    let dir = scratch_dir("paths");
    let ok = dir.join("ok.h5");
    python(FIXTURE, &[&ok]);
    let kept = bytes(&ok);
    let d = |name: &str| dir.join(name).display().to_string();
    let usage: [(&[&str], String); 2] = [
        (
            &["run", "--shape", "8,6", "--output", &d("x.h5")],
            format!("--output {}: an HDF5 file needs a dataset name", d("x.h5")),
        ),
        (
            &["run", "--input", &d("ok.h5")],
            format!("--input {}: an HDF5 file needs a dataset name", d("ok.h5")),
        ),
    ];
    for (args, needle) in &usage {
        let out = dfft(2, args, &[]);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.matches(needle.as_str()).count(),
            1,
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("(see --help)"), "{}", out.stderr);
    }
    // A dataset of a type dfft does not read is named in numpy's terms.
    let out = dfft(
        2,
        &["run", "--input", &format!("{}:/g/v", ok.display())],
        &[],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("dataset /g/v holds int32; expected float32, float64"),
        "{}",
        out.stderr
    );
    std::fs::copy(&ok, dir.join("h5.npy")).unwrap();
    let out = dfft(2, &["run", "--input", &d("h5.npy")], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("is an HDF5 file, not .npy"),
        "{}",
        out.stderr
    );
    std::fs::write(dir.join("text.h5"), "not HDF5\n").unwrap();
    std::fs::create_dir(dir.join("real.xmf")).unwrap();
    // 64^3 with this many pairs takes minutes: each refusal must come first.
    let long = ["run", "--shape", "64,64,64", "--iters", "100000"];
    let cases = [
        (d("new.h5:"), "names no dataset"),
        (d("new.h5:/"), "is the file's root group"),
        (d("text.h5:/u"), "is not an HDF5 file"),
    ];
    for (target, needle) in &cases {
        let mut args = long.to_vec();
        args.extend(["--output", target]);
        let out = dfft(2, &args, &[]);
        assert_eq!(out.code, 1, "{target}: {}", out.stderr);
        assert_eq!(
            out.stderr.matches(needle).count(),
            1,
            "{target}: {}",
            out.stderr
        );
        assert!(
            out.seconds < 20.0,
            "{target}: refused after {:.1} s",
            out.seconds
        );
    }
    // A real 3-D field gets real.xmf beside real.h5: a directory there is refused too.
    let mut args = vec!["run", "--shape", "64,64,64", "--kind", "r2r:dct2,dct2,dct2"];
    args.extend(["--iters", "100000", "--output"]);
    let target = d("real.h5:/p");
    args.push(&target);
    let out = dfft(2, &args, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("real.xmf: is a directory"),
        "{}",
        out.stderr
    );
    assert!(out.seconds < 20.0, "refused after {:.1} s", out.seconds);
    assert!(bytes(&ok) == kept);
    assert_eq!(
        common::files_in(&dir),
        ["h5.npy", "ok.h5", "real.xmf", "text.h5"].map(String::from),
        "nothing created, no temporary left"
    );
    std::fs::remove_dir_all(&dir).ok();
}
