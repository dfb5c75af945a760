//! Every value `dfft` takes (flags, environment, files, the ranks' command lines) is checked
//! before anything collective: a bad flag, value or combination is one line ending in "(see
//! --help)" and exit 2, printed once; a runtime failure one line and exit 1; every file
//! `dfft` reads is a regular file under a size cap; nothing hangs, panics or prints a
//! backtrace. Every launch runs under a timeout.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");
const TIMEOUT: Duration = Duration::from_secs(60);

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `dfft args` on `ranks` ranks (0: alone, without mpirun), with `env`, under the timeout.
fn dfft(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut cmd = if ranks == 0 {
        Command::new(DFFT)
    } else {
        let mut c = mpi_harness::mpirun_command(ranks);
        c.arg(DFFT);
        c
    };
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(cmd, &format!("dfft {args:?} {env:?} on {ranks} rank(s)"))
}

fn run(cmd: Command, what: &str) -> Outcome {
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!timed_out, "{what}: hung\n{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{what}: a panic\n{stderr}"
    );
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    }
}

/// Asserts exit `code` and `needle` exactly once on stderr (one rank printed it).
fn expect(out: &Outcome, code: i32, needle: &str, what: &str) {
    assert_eq!(out.code, code, "{what}: exit status\n{}", out.stderr);
    assert_eq!(
        out.stderr.matches(needle).count(),
        1,
        "{what}: '{needle}' once\n{}",
        out.stderr
    );
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-args-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Flags and combinations that cannot work, and counts no run could finish, are usage
/// errors: exit 2, one line ending in "(see --help)", before MPI starts.
#[test]
fn bad_combinations_and_counts_are_usage_errors() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["run", "--shape", "8,6", "--in-place", "--kind", "c2r"],
            "--in-place runs c2c, r2c and r2r plans",
        ),
        (
            &["run", "--shape", "8,6,4", "--grid", "2x2x1"],
            "a grid of rank 3 cannot distribute a 3-dimensional array",
        ),
        (
            &["run", "--shape", "1,8", "--kind", "r2r:dct1,dct2"],
            "DCT-I needs at least 2 points, axis 0 has 1",
        ),
        (
            &["bench-redist", "--shape", "8,8,8", "--grid", "3"],
            "a grid of rank 3 cannot distribute a 3-dimensional array",
        ),
        (
            &["run", "--shape", "8,6", "--iters", "4294967296"],
            "invalid value '4294967296' for '--iters <ITERS>'",
        ),
        (
            &["run", "--shape", "8,6", "--warmup", "99999999999"],
            "invalid value '99999999999' for '--warmup <WARMUP>'",
        ),
        (
            &["bench-redist", "--shape", "8,8,8", "--repeat", "4294967296"],
            "invalid value '4294967296' for '--repeat <REPEAT>'",
        ),
        (
            &["run", "--shape", "8,6", "--roundtrip-output", "rt.h5"],
            "--roundtrip-output rt.h5: an HDF5 file needs a dataset name",
        ),
    ];
    for (args, needle) in cases {
        let what = format!("{args:?}");
        let out = dfft(2, args, &[]);
        expect(&out, 2, needle, &what);
        let line = out.stderr.lines().find(|l| l.contains(needle)).unwrap();
        assert!(line.ends_with("(see --help)"), "{what}: {line}");
    }
    // The model's flags: values that make every prediction infinite or NaN.
    for (flag, value) in [("--tw", "1e308"), ("--ts", "inf"), ("--fft-rate", "nan")] {
        let args = ["plan", "--shape", "64,64,64", "--ranks", "4", flag, value];
        let out = dfft(0, &args, &[]);
        let needle = format!("invalid value '{value}' for '{flag}");
        expect(&out, 2, &needle, &format!("{args:?}"));
    }
}

/// `dfft plan --batch` answers each line with a prediction or an error naming what is wrong:
/// an unknown key, a line that is not a JSON object, a line over the size cap; a blank line
/// is skipped. One answer per line, in order.
#[test]
fn plan_batch_refuses_unknown_keys_and_lines_that_are_not_objects() {
    let input = [
        r#"{"shape": [64, 64, 64], "ranks": 4}"#.to_string(),
        r#"{"shape": [64, 64, 64], "ranks": 4, "rank": 8}"#.to_string(),
        "[64, 64, 64]".to_string(),
        format!(
            r#"{{"shape": [64, 64, 64], "ranks": 4, "x": "{}"}}"#,
            "y".repeat(2 << 20)
        ),
        r#"{"shape": [64, 64, 64], "ranks": 8}"#.to_string(),
    ];
    let mut child = Command::new(DFFT)
        .args(["plan", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let text = input.join("\n") + "\n";
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].contains("\"predicted_s\""), "{}", lines[0]);
    assert!(lines[1].contains("unknown key 'rank'"), "{}", lines[1]);
    assert!(lines[2].contains("expected a JSON object"), "{}", lines[2]);
    assert!(
        lines[3].contains("longer than"),
        "{}",
        &lines[3][..lines[3].len().min(200)]
    );
    assert!(lines[4].contains("\"predicted_s\""), "{}", lines[4]);
}

/// mkfifo(3).
fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A machine profile (`--machine`, `DFFT_MACHINE`, `dfft plan --machine`) that is a FIFO, a
/// link to `/dev/zero` or larger than the cap is refused at once with its path, instead of
/// blocking forever or reading until memory runs out.
#[test]
fn every_file_dfft_reads_is_a_regular_file_under_a_size_cap() {
    let dir = scratch_dir("files");
    let pipe = dir.join("profile.fifo");
    fifo(&pipe);
    let zero = dir.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let big = dir.join("big.json");
    std::fs::write(&big, format!("{{\"ts\": 1e-6{}}}", " ".repeat(2 << 20))).unwrap();
    let d = |p: &Path| p.display().to_string();
    fn plan_args(file: &str) -> [&str; 7] {
        [
            "plan",
            "--shape",
            "64,64,64",
            "--ranks",
            "4",
            "--machine",
            file,
        ]
    }
    fn run_args(file: &str) -> [&str; 7] {
        ["run", "--shape", "16,16", "--iters", "1", "--machine", file]
    }
    let fifo_needle = "is a FIFO, not a regular file";
    // Every way a profile is named reads it through the same function: the FIFO three ways,
    // the device and the large file one way each.
    let out = dfft(0, &plan_args(&d(&pipe)), &[]);
    expect(&out, 1, fifo_needle, "plan --machine FIFO");
    let out = dfft(2, &run_args(&d(&pipe)), &[]);
    expect(&out, 1, fifo_needle, "run --machine FIFO");
    let out = dfft(
        2,
        &["run", "--shape", "16,16", "--iters", "1"],
        &[("DFFT_MACHINE", &d(&pipe))],
    );
    expect(&out, 1, fifo_needle, "DFFT_MACHINE=FIFO");
    let out = dfft(2, &run_args(&d(&zero)), &[]);
    expect(
        &out,
        1,
        "is a character device, not a regular file",
        "run --machine /dev/zero link",
    );
    let out = dfft(0, &plan_args(&d(&big)), &[]);
    expect(
        &out,
        1,
        "is larger than 1048576 bytes",
        "plan --machine 2 MiB",
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `DFFT_MEMORY_LIMIT` takes a whole number of bytes (with a suffix) up to 16 EiB, or
/// `none`/`off`/`0`: a fraction that rounds to nothing, a value above the maximum and a
/// malformed one are refused with the value, instead of turning the check off.
#[test]
fn memory_limits_that_are_not_limits_are_refused() {
    // (Every form is parsed by unit tests; here the run's refusal, on every rank alike.)
    for value in ["0.5", "99999999999999999999"] {
        let out = dfft(
            2,
            &["run", "--shape", "16,16", "--iters", "1"],
            &[("DFFT_MEMORY_LIMIT", value)],
        );
        let needle = format!("DFFT_MEMORY_LIMIT '{value}'");
        expect(&out, 1, &needle, &format!("DFFT_MEMORY_LIMIT={value}"));
    }
    let out = dfft(
        2,
        &["run", "--shape", "100000,100000,100000"],
        &[("DFFT_MEMORY_LIMIT", "0.5G")],
    );
    expect(
        &out,
        1,
        "not enough memory for the plan",
        "a fractional limit",
    );
}

/// An MPMD launch whose ranks get different command lines (`mpirun -n 1 dfft run --iters 3 :
/// -n 1 dfft run --iters 1`) is refused on every rank before anything collective, naming the
/// ranks' arguments, instead of hanging; the same arguments run.
#[test]
fn ranks_started_with_different_arguments_are_refused() {
    let mut cmd = mpi_harness::mpirun_command(1);
    cmd.args([
        DFFT, "run", "--shape", "16,16", "--iters", "3", ":", "-n", "1",
    ])
    .args([DFFT, "run", "--shape", "16,16", "--iters", "1"]);
    let out = run(cmd, "MPMD with different --iters");
    expect(
        &out,
        2,
        "the ranks were started with different arguments",
        "MPMD",
    );
    assert!(out.stderr.contains("--iters 1"), "{}", out.stderr);
    let mut cmd = mpi_harness::mpirun_command(1);
    cmd.args([
        DFFT, "run", "--shape", "16,16", "--iters", "1", ":", "-n", "1",
    ])
    .args([DFFT, "run", "--shape", "16,16", "--iters", "1"]);
    let out = run(cmd, "MPMD with the same arguments");
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Finite input whose transform overflows (values near f64's largest) is reported as an
/// overflow of the data, not as a wrong result of dfft.
#[test]
fn an_overflowing_transform_says_the_data_overflowed() {
    let dir = scratch_dir("overflow");
    let path = dir.join("big.npy");
    let mut bytes = npyio::encode_header(npyio::Dtype::F64, &[8, 6]);
    for _ in 0..48 {
        bytes.extend_from_slice(&1e308f64.to_le_bytes());
    }
    std::fs::write(&path, bytes).unwrap();
    let out = dfft(
        2,
        &[
            "run",
            "--kind",
            "r2c",
            "--iters",
            "1",
            "--input",
            path.to_str().unwrap(),
        ],
        &[],
    );
    expect(&out, 1, "overflowed", "1e308 input");
    assert!(
        !out.stderr.contains("verification failed"),
        "{}",
        out.stderr
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Thread-pool creation that fails (the address space too small for the threads' stacks) is
/// one line and exit 1, like a failed allocation, instead of a panic with a backtrace.
#[test]
fn a_thread_pool_that_cannot_start_is_one_line_and_exit_1() {
    let mut cmd = mpi_harness::mpirun_command(2);
    cmd.args([
        DFFT,
        "run",
        "--shape",
        "16,16",
        "--iters",
        "1",
        "--threads",
        "1000",
    ]);
    let limit: u64 = 1 << 30;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let out = run(cmd, "1000 threads under ulimit -v 1 GiB");
    assert_eq!(out.code, 1, "{}", out.stderr);
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("cannot start"))
        .collect();
    assert!(!lines.is_empty(), "{}", out.stderr);
    assert!(
        lines[0].starts_with("dfft: error: cannot start 1000 threads"),
        "{}",
        out.stderr
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    let _ = out.stdout;
}
