//! Fault tests: every bad input gets one clear error (printed once, by rank 0) and
//! the right exit status on 1, 2 and 4 ranks; a rank killed with SIGKILL or a panicking rank
//! ends the job promptly and leaves no output file. Every launch runs under a timeout, so a
//! hang fails the test instead of blocking the suite.

mod common;

use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

use common::{descendants, files_in, flat};
const RANKS: [usize; 3] = [1, 2, 4];
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `check` for every rank count of RANKS at once, a thread each: a launch that fails at
/// once is mostly mpirun starting and ending (about a second, little CPU), so they overlap.
/// A failed check fails the test when all have finished.
fn each_rank(check: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for ranks in RANKS {
            let check = &check;
            s.spawn(move || check(ranks));
        }
    });
}

struct Outcome {
    code: i32,
    stderr: String,
    timed_out: bool,
}

fn dfft(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg(DFFT).args(args);
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        timed_out,
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-faults-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A .npy file with a hand-made header (as numpy writes it) and `data_bytes` of data.
fn npy(path: &Path, descr: &str, fortran: bool, shape: &[usize], data_bytes: usize) {
    let shape_text = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let fortran = if fortran { "True" } else { "False" };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0u8, data_bytes));
    std::fs::write(path, bytes).unwrap();
}

/// A float64 file of `shape` with the given values at the start (the rest 1.0).
fn npy_f64(path: &Path, shape: &[usize], first: &[f64]) {
    let n: usize = shape.iter().product();
    let mut bytes = npyio::encode_header(npyio::Dtype::F64, shape);
    for i in 0..n {
        bytes.extend_from_slice(&first.get(i).copied().unwrap_or(1.0).to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// Asserts the outcome: status, the message exactly once, no panic, no hang.
fn expect(ranks: usize, args: &[&str], env: &[(&str, &str)], code: i32, needle: &str) -> String {
    let start = Instant::now();
    let out = dfft(ranks, args, env);
    let what = format!("dfft {args:?} {env:?} on {ranks} rank(s)");
    assert!(!out.timed_out, "{what}: hung\n{}", out.stderr);
    assert_eq!(out.code, code, "{what}: exit status\n{}", out.stderr);
    assert_eq!(
        out.stderr.matches(needle).count(),
        1,
        "{what}: '{needle}' printed once (rank 0 only)\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{what}\n{}", out.stderr);
    assert!(start.elapsed() < Duration::from_secs(30), "{what}: slow");
    out.stderr
}

#[test]
fn usage_errors_exit_2_with_one_line_naming_the_argument() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["run", "--shape", "0,4"],
            "dfft: error: invalid value '0,4' for '--shape <SHAPE>': axis lengths must be at least 1, got 0 in '0,4' (see --help)",
        ),
        (
            &["run", "--shape", "64", "--kind", "r2c"],
            "dfft: error: --shape 64: a 1-D shape is the distributed 1-D transform, --kind c2c only",
        ),
        (
            &["run", "--shape", "4,4", "--grid", "2x"],
            "invalid value '2x' for '--grid <GRID>': malformed grid choice '2x'",
        ),
        (
            &["run", "--shape", "4,4", "--method", "smoke"],
            "invalid value 'smoke' for '--method <METHOD>': unknown exchange method 'smoke' (expected one of: alltoallv, pairwise)",
        ),
        (
            &["run", "--shape", "4,4", "--iters", "0"],
            "invalid value '0' for '--iters <ITERS>'",
        ),
        (&["run", "--shape", "4,4", "--bogus"], "unexpected argument '--bogus'"),
        (
            &["run"],
            "the argument '--shape <SHAPE>' is required unless --input gives the array",
        ),
    ];
    each_rank(|ranks| {
        for (args, needle) in cases {
            let stderr = expect(ranks, args, &[], 2, needle);
            let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("dfft:")).collect();
            assert_eq!(lines.len(), 1, "one line: {stderr}");
        }
    });
}

#[test]
fn bad_input_files_are_rejected_before_any_transform() {
    let dir = scratch_dir("inputs");
    let p = |name: &str| dir.join(name);
    npy(&p("i8.npy"), "<i8", false, &[8, 6, 5], 8 * 240);
    npy(&p("be.npy"), ">f8", false, &[8, 6, 5], 8 * 240);
    npy(&p("fortran.npy"), "<f8", true, &[8, 6, 5], 8 * 240);
    npy(&p("one_axis.npy"), "<f8", false, &[10], 80);
    npy(&p("zero.npy"), "<f8", false, &[8, 0, 5], 0);
    npy(&p("truncated.npy"), "<f8", false, &[8, 6, 5], 8 * 240 - 100);
    npy_f64(&p("ok.npy"), &[8, 6, 5], &[]);
    std::fs::write(p("text.npy"), "hello, not numpy\n").unwrap();
    std::fs::write(p("empty.npy"), "").unwrap();
    let path = |name: &str| p(name).display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec![path("missing.npy")],
            format!(
                "{}: failed to open: No such file or directory",
                path("missing.npy")
            ),
        ),
        (
            vec![path("truncated.npy")],
            format!(
                "{}: file is truncated: header says 1920 bytes of data, file has 1820",
                path("truncated.npy")
            ),
        ),
        (
            vec![path("text.npy")],
            format!("{}: not a .npy file (bad magic bytes)", path("text.npy")),
        ),
        (
            vec![path("empty.npy")],
            format!(
                "{}: header is truncated: it needs 10 bytes, only 0 are present",
                path("empty.npy")
            ),
        ),
        (
            vec![path("i8.npy")],
            format!("{}: dtype '<i8' is not supported", path("i8.npy")),
        ),
        (
            vec![path("be.npy")],
            format!("{}: dtype '>f8' is big-endian", path("be.npy")),
        ),
        (
            vec![path("fortran.npy")],
            format!("{}: array is stored in Fortran order", path("fortran.npy")),
        ),
        (
            vec![path("one_axis.npy")],
            format!(
                "{}: a distributed FFT needs at least 2 axes, the file has shape [10]",
                path("one_axis.npy")
            ),
        ),
        (
            vec![path("zero.npy")],
            format!(
                "{}: every axis of the global shape must be at least 1, got [8, 0, 5]",
                path("zero.npy")
            ),
        ),
        (
            vec![path("ok.npy"), "--shape".into(), "8,6,4".into()],
            format!(
                "--shape [8, 6, 4] disagrees with the shape [8, 6, 5] of {}",
                path("ok.npy")
            ),
        ),
    ];
    each_rank(|ranks| {
        for (extra, needle) in &cases {
            let out = p(&format!("out-{ranks}.npy"));
            let mut args = vec!["run", "--iters", "1", "--input"];
            args.extend(extra.iter().map(String::as_str));
            args.extend(["--output", out.to_str().unwrap()]);
            let stderr = expect(ranks, &args, &[], 1, needle);
            assert!(
                !stderr.contains("dfft run: shape"),
                "rejected before planning: {stderr}"
            );
            assert!(!out.exists(), "no output after a failed run");
        }
    });
    let left: Vec<_> = files_in(&dir)
        .into_iter()
        .filter(|f| f.starts_with("out") || f.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "no output or temporary files: {left:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Extra arguments, environment, expected message.
type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, String);

#[test]
fn bad_shapes_grids_and_memory_limits_fail_on_every_rank() {
    each_rank(|ranks| {
        let mismatch = if ranks == 4 { "3x3" } else { "2x2" };
        let positions = if ranks == 4 { 9 } else { 4 };
        let grid_msg = format!(
            "the grid [{0}] has {positions} positions but there are {ranks} processes",
            mismatch.replace('x', ", ")
        );
        // Above the plan's own estimate (work, messages, scratch, one input and one output
        // block) but below it plus the run's `back` block: refused before the run allocates.
        let (between, copy) = match ranks {
            1 => ("20M", "4.00 MiB"),
            2 => ("14M", "2.00 MiB"),
            _ => ("7M", "1.00 MiB"),
        };
        let cases: Vec<Case> = vec![
            (
                vec!["--shape", "64,64,64"],
                vec![("DFFT_MEMORY_LIMIT", between)],
                format!(
                    "+ the run's round-trip copies {copy} per rank, limit {}iB per rank (DFFT_MEMORY_LIMIT={between})",
                    between.replace('M', ".00 M")
                ),
            ),
            (
                vec!["--shape", "99999999999,99999999999,99999999999"],
                vec![],
                "the global shape [99999999999, 99999999999, 99999999999] has more elements than fit in a usize".into(),
            ),
            (vec!["--shape", "16,16,16", "--grid", mismatch], vec![], grid_msg),
            (
                vec!["--shape", "8,8", "--grid", "3"],
                vec![],
                "a grid of rank 3 cannot distribute a 2-dimensional array (need 1 <= r < d)".into(),
            ),
            (
                vec!["--shape", "64,64,64"],
                vec![("DFFT_MEMORY_LIMIT", "1M")],
                "per rank, limit 1.00 MiB per rank (DFFT_MEMORY_LIMIT=1M); use more ranks or nodes".into(),
            ),
            (
                vec!["--shape", "100000,100000,100000"],
                vec![],
                "dfft: error: not enough memory for the plan: needs ".into(),
            ),
            (
                vec!["--shape", "8,8"],
                vec![("DFFT_MEMORY_LIMIT", "lots")],
                "malformed DFFT_MEMORY_LIMIT 'lots'".into(),
            ),
            (
                vec!["--shape", "8,6", "--kind", "c2r", "--in-place"],
                vec![],
                "--in-place runs c2c, r2c and r2r plans; a c2r run's input is the half spectrum".into(),
            ),
        ];
        for (extra, env, needle) in &cases {
            let mut args = vec!["run", "--iters", "1"];
            args.extend(extra);
            // What the command line alone decides is a usage error (status 2).
            let usage = needle.starts_with("a grid of rank") || needle.starts_with("--in-place");
            let stderr = expect(ranks, &args, env, if usage { 2 } else { 1 }, needle);
            assert!(!stderr.contains("dfft run: shape"), "{stderr}");
        }
    });
}

#[test]
fn output_into_a_missing_directory_fails_cleanly() {
    each_rank(|ranks| {
        expect(
            ranks,
            &[
                "run",
                "--shape",
                "8,6",
                "--iters",
                "1",
                "--output",
                "/nonexistent-dfft-dir/out.npy",
            ],
            &[],
            1,
            "/nonexistent-dfft-dir/out.npy: cannot write into /nonexistent-dfft-dir: No such file or directory",
        );
    });
}

/// NaN and Inf pass through the transforms without a crash; the output is written (IEEE
/// propagation is the right answer) and the run exits 1 because it cannot be verified.
#[test]
fn nan_and_inf_pass_through_and_fail_verification() {
    let dir = scratch_dir("nan");
    let input = dir.join("nan.npy");
    npy_f64(
        &input,
        &[8, 6, 5],
        &[f64::INFINITY, 2.0, f64::NAN, f64::NEG_INFINITY],
    );
    each_rank(|ranks| {
        let out = dir.join(format!("out-{ranks}.npy"));
        let args = [
            "run",
            "--iters",
            "1",
            "--input",
            input.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ];
        expect(
            ranks,
            &args,
            &[],
            1,
            "dfft: error: the input has 3 non-finite values (NaN or Inf): the transforms ran and --output was written but their results cannot be verified",
        );
        let header = npyio::read_header(&out).expect("output written");
        assert_eq!(header.shape, vec![8, 6, 5]);
    });
    assert!(!files_in(&dir).iter().any(|f| f.contains("tmp")));
    std::fs::remove_dir_all(&dir).ok();
}

/// A rank that panics mid-run (test-only `DFFT_TEST_PANIC_RANK`) ends the job through
/// MPI_Abort, promptly, and no output file appears.
#[test]
fn a_panicking_rank_aborts_the_job_and_leaves_no_output() {
    let dir = scratch_dir("panic");
    for ranks in RANKS {
        let out = dir.join(format!("out-{ranks}.npy"));
        let victim = (ranks - 1).to_string();
        let start = Instant::now();
        let o = dfft(
            ranks,
            &[
                "run",
                "--shape",
                "32,32,32",
                "--iters",
                "1000",
                "--output",
                out.to_str().unwrap(),
            ],
            &[("DFFT_TEST_PANIC_RANK", &victim)],
        );
        assert!(!o.timed_out, "{ranks} ranks: hung\n{}", o.stderr);
        assert_ne!(o.code, 0, "{}", o.stderr);
        assert!(
            o.stderr
                .contains(&format!("deliberate panic on rank {victim}")),
            "{}",
            o.stderr
        );
        assert!(
            o.stderr
                .contains(&format!("dfft: rank {victim} panicked; calling MPI_Abort")),
            "{}",
            o.stderr
        );
        assert!(start.elapsed() < Duration::from_secs(30));
        assert!(!out.exists());
    }
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
    std::fs::remove_dir_all(&dir).ok();
}

fn is_dfft(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.file_name() == Path::new(DFFT).file_name())
        .unwrap_or(false)
}

/// One rank SIGKILLed in the middle of a long run: the job ends non-zero within seconds and
/// leaves neither the output file nor a temporary file.
#[test]
fn a_killed_rank_ends_the_job_and_leaves_no_output() {
    let dir = scratch_dir("kill");
    for ranks in RANKS {
        let out = dir.join(format!("out-{ranks}.npy"));
        let mut cmd = mpi_harness::mpirun_command(ranks);
        cmd.arg(DFFT).args([
            "run",
            "--shape",
            "128,128,128",
            "--iters",
            "100000",
            "--output",
            out.to_str().unwrap(),
        ]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().expect("mpirun starts");
        let mpirun = child.id();
        // Wait for every rank to start, then let them get into the timed loop.
        let deadline = Instant::now() + Duration::from_secs(30);
        let ranks_pids = loop {
            let found: Vec<u32> = descendants(mpirun)
                .into_iter()
                .filter(|&p| is_dfft(p))
                .collect();
            if found.len() == ranks || Instant::now() > deadline {
                break found;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(ranks_pids.len(), ranks, "ranks of {ranks} found");
        std::thread::sleep(Duration::from_millis(2000));
        assert!(
            child.try_wait().unwrap().is_none(),
            "still running before the kill"
        );
        let victim = ranks_pids[ranks_pids.len() - 1];
        // SAFETY: plain kill(2) on a process this test started.
        unsafe { libc::kill(victim as i32, libc::SIGKILL) };
        let killed_at = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if killed_at.elapsed() > Duration::from_secs(30) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let elapsed = killed_at.elapsed();
        if status.is_none() {
            for p in descendants(mpirun) {
                // SAFETY: as above.
                unsafe { libc::kill(p as i32, libc::SIGKILL) };
            }
            // SAFETY: as above.
            unsafe { libc::kill(mpirun as i32, libc::SIGKILL) };
            let _ = child.wait();
            panic!("{ranks} ranks: the job still ran 30 s after a rank was killed");
        }
        let status = status.unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).ok();
        assert!(
            !status.success(),
            "{ranks} ranks: killed job exits non-zero"
        );
        assert!(
            elapsed < Duration::from_secs(15),
            "{ranks} ranks: ended {elapsed:?} after the kill\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(200));
        let left: Vec<u32> = ranks_pids.iter().copied().filter(|&p| is_dfft(p)).collect();
        assert!(left.is_empty(), "ranks left running: {left:?}");
        assert!(!out.exists(), "no output file after a killed run");
        eprintln!("{ranks} rank(s): job ended {elapsed:?} after SIGKILL, status {status}");
    }
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
    std::fs::remove_dir_all(&dir).ok();
}

/// `dfft` alone (no mpirun): its status, stdout and stderr.
fn dfft_alone(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(DFFT);
    cmd.args(args).env_remove("RAYON_NUM_THREADS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
    assert!(!timed_out, "dfft {args:?} {env:?} hung");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Usage errors keep clap's detail on their one line: the missing arguments' names, the
/// "similar argument" tip, the accepted values; a negative length and a zero element size
/// are named as such.
#[test]
fn usage_errors_keep_the_names_values_and_tips_on_one_line() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["plan", "--shape", "64,64,64"],
            "dfft: error: the following required arguments were not provided: --ranks <RANKS> (see --help)",
        ),
        (
            &["plan", "--shape", "64,64,64", "--rank", "4"],
            "dfft: error: unexpected argument '--rank' found; tip: a similar argument exists: '--ranks' (see --help)",
        ),
        (
            &["run", "--shape", "4,4", "--precision", "f16"],
            "dfft: error: invalid value 'f16' for '--precision <PRECISION>' [possible values: f32, f64] (see --help)",
        ),
        (
            &["run", "--shape", "4,4", "--alloc", "junk"],
            "dfft: error: invalid value 'junk' for '--alloc <ALLOC>' [possible values: plan, caller] (see --help)",
        ),
        (
            &["redist", "--shape", "4,4", "--from", "grid=1", "--to", "grid=1", "--dtype", "c64"],
            "invalid value 'c64' for '--dtype <DTYPE>' [possible values: f64, c128]",
        ),
        (
            &["run", "--shape", "-4,4"],
            "dfft: error: invalid value '-4,4' for '--shape <SHAPE>': axis length -4 in '-4,4' is negative; axis lengths must be at least 1 (see --help)",
        ),
        (
            &["plan", "--shape", "8,8", "--ranks", "2", "--element-bytes", "0"],
            "dfft: error: invalid value '0' for '--element-bytes <ELEMENT_BYTES>': 0 is not in 1..",
        ),
    ];
    for (args, needle) in cases {
        let (code, _, stderr) = dfft_alone(args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line\n{stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}:\n{stderr}\nwant: {needle}"
        );
    }
}

/// `dfft run`'s own check fails a wrong answer of relative size 1e-11 on a 3x36x5 f64
/// transform (a DST-I defect once passed 1e-10) and accepts 1e-13: the limit is
/// 1e-12·log2(N) for f64, 1e-5·log2(N) for f32. A failed check writes and reports no output.
/// Uses the test-only `DFFT_TEST_PERTURB` (feature `fault-injection`).
#[test]
fn verification_tolerance_follows_precision_and_size() {
    let dir = scratch_dir("tolerance");
    let out = dir.join("out.npy");
    let out_s = out.to_str().unwrap();
    let cases: [(&str, &str, i32); 4] = [
        ("f64", "1e-11", 1),
        ("f64", "1e-13", 0),
        ("f32", "2e-4", 1),
        ("f32", "1e-5", 0),
    ];
    for (precision, delta, code) in cases {
        let args = [
            "run",
            "--shape",
            "3,36,5",
            "--iters",
            "1",
            "--precision",
            precision,
            "--json",
            "--output",
            out_s,
        ];
        let (got, stdout, stderr) = dfft_alone(&args, &[("DFFT_TEST_PERTURB", delta)]);
        let what = format!("{precision} perturbed by {delta}");
        assert_eq!(got, code, "{what}\n{stderr}");
        let report = flat(
            serde_json::from_str(stdout.lines().find(|l| l.starts_with('{')).unwrap()).unwrap(),
        );
        let error = report["reference_error"].as_f64().unwrap();
        let want: f64 = delta.parse().unwrap();
        assert!(
            (error - want).abs() < 0.2 * want,
            "{what}: reference error {error}"
        );
        if code == 1 {
            let limit = if precision == "f64" { "9e-12" } else { "9e-5" };
            assert!(
                stderr.contains("verification failed: reference error")
                    && stderr.contains(&format!("exceeds {limit}")),
                "{what}: {stderr}"
            );
            assert!(!out.exists(), "{what}: no output after a failed check");
            assert_eq!(report["output"], serde_json::Value::Null, "{what}");
        } else {
            assert!(out.exists(), "{what}");
            assert_eq!(report["output"], out_s);
            std::fs::remove_file(&out).unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Fault injection is compiled only with the `fault-injection` feature, which no build users
/// run enables: every `DFFT_TEST_*` variable lives in src/fault.rs, which main.rs includes
/// only under the feature, and the feature is not a default. (The panicking-rank test above
/// shows that the tests' build has it.)
#[test]
fn fault_injection_is_compiled_out_of_user_builds() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if path.file_name().unwrap() != "fault.rs" {
            assert!(
                !text.contains("DFFT_TEST_"),
                "{} reads a test-only variable outside src/fault.rs",
                path.display()
            );
        }
    }
    let main = std::fs::read_to_string(src.join("main.rs")).unwrap();
    assert!(
        main.contains("#[cfg(feature = \"fault-injection\")]\nmod fault;"),
        "src/fault.rs is compiled only with the feature"
    );
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let features = manifest
        .split("[features]")
        .nth(1)
        .expect("a [features] table")
        .split("\n[")
        .next()
        .unwrap();
    assert!(
        !features
            .lines()
            .any(|l| l.trim_start().starts_with("default")),
        "no default features: {features}"
    );
    let dependencies = manifest
        .split("\n[dependencies]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    assert!(!dependencies.contains("fault-injection"), "{dependencies}");
}

/// Threads per rank default to the usable cores divided by the ranks sharing them (never
/// more than the cores), `--threads` sets them, RAYON_NUM_THREADS is capped at the cores, and
/// the count is printed.
#[test]
fn threads_default_to_the_cores_per_rank() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = |out: &std::process::Output| -> u64 {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with('{'))
            .unwrap_or_else(|| panic!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        flat(serde_json::from_str::<Value>(line).unwrap())["threads_per_rank"]
            .as_u64()
            .unwrap()
    };
    for ranks in [1, 2, 4] {
        let mut cmd = mpi_harness::mpirun_command(ranks);
        cmd.env_remove("RAYON_NUM_THREADS")
            .arg(DFFT)
            .args(["run", "--shape", "8,8", "--iters", "1", "--json"]);
        let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
        assert!(!timed_out && out.status.success(), "{out:?}");
        assert_eq!(
            threads(&out),
            (cores / ranks).max(1) as u64,
            "{ranks} rank(s) on {cores} core(s)"
        );
    }
    let start = Instant::now();
    let (code, stdout, stderr) = dfft_alone(
        &["run", "--shape", "8,8", "--json"],
        &[("RAYON_NUM_THREADS", "5000")],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("\"threads_per_rank\":{cores},")),
        "{stdout}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "RAYON_NUM_THREADS=5000: {:?}",
        start.elapsed()
    );
    let (code, stdout, stderr) = dfft_alone(&["run", "--shape", "8,8", "--threads", "3"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("on 1 rank(s) x 3 thread(s)"), "{stdout}");
}

/// `dfft` under `mpirun` (ranks > 0) or alone, with its address space limited to `limit`
/// bytes (as `ulimit -v` does), without RAYON_NUM_THREADS.
fn dfft_limited(ranks: usize, args: &[&str], env: &[(&str, &str)], limit: u64) -> Outcome {
    let mut cmd = if ranks == 0 {
        std::process::Command::new(DFFT)
    } else {
        let mut c = mpi_harness::mpirun_command(ranks);
        c.arg(DFFT);
        c
    };
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
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
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        timed_out,
    }
}

/// `redist` and `bench-redist` estimate their buffers and refuse what does not fit before
/// allocating anything, as `run` does. (Under a 4 GiB address-space
/// limit, so that a regression fails fast instead of filling the machine.)
#[test]
fn redist_and_bench_redist_refuse_what_does_not_fit() {
    let cases: [(usize, &[&str], &str); 3] = [
        (
            1,
            &["redist", "--shape", "100000000,100000000", "--from", "grid=1x1,dist=block", "--to", "grid=1x1,dist=cyclic(4)"],
            "PiB per rank (source and destination blocks 142.11 PiB + message buffers 142.11 PiB), limit ",
        ),
        (
            2,
            &["redist", "--shape", "100000000,100000000", "--from", "grid=2x1,dist=block", "--to", "grid=1x2,dist=cyclic(4)"],
            "dfft: error: not enough memory for dfft redist: needs ",
        ),
        (
            2,
            &["bench-redist", "--shape", "100000,100000,1000", "--grid", "1"],
            "dfft: error: not enough memory for dfft bench-redist: needs ",
        ),
    ];
    for (ranks, args, needle) in cases {
        let start = Instant::now();
        let out = dfft_limited(ranks, args, &[], 4 << 30);
        let what = format!("{args:?} on {ranks} rank(s)");
        assert!(!out.timed_out, "{what}: hung");
        assert_eq!(out.code, 1, "{what}\n{}", out.stderr);
        assert_eq!(
            out.stderr.matches(needle).count(),
            1,
            "{what}\n{}",
            out.stderr
        );
        assert!(start.elapsed() < Duration::from_secs(30), "{what}: slow");
    }
}

/// The memory check honours the address-space limit (`ulimit -v`), and an allocation that
/// fails anyway (the check turned off) is one line per failing rank and exit 1, for the
/// caller's blocks and for the plan's shared-memory windows alike: no backtrace, no abort.
#[test]
fn address_space_limits_are_checked_and_allocation_failures_are_one_line() {
    let gib = 1u64 << 30;
    for ranks in [0, 2] {
        let out = dfft_limited(
            ranks,
            &["run", "--shape", "256,256,256", "--iters", "1"],
            &[],
            gib,
        );
        let what = format!("256^3 under ulimit -v 1 GiB, {ranks} rank(s)");
        assert!(!out.timed_out, "{what}: hung");
        assert_eq!(out.code, 1, "{what}\n{}", out.stderr);
        let needle = "dfft: error: not enough memory for the plan: needs ";
        assert_eq!(
            out.stderr.matches(needle).count(),
            1,
            "{what}\n{}",
            out.stderr
        );
        assert!(
            out.stderr
                .contains("(RLIMIT_AS (ulimit -v) 1.00 GiB minus "),
            "{what}\n{}",
            out.stderr
        );
    }
    // 2 ranks map both ranks' blocks of each shared window: 750 MiB cannot hold them.
    for (ranks, alloc, limit) in [(0, "caller", gib), (0, "plan", gib), (2, "plan", 750 << 20)] {
        let out = dfft_limited(
            ranks,
            &[
                "run",
                "--shape",
                "256,256,256",
                "--iters",
                "1",
                "--alloc",
                alloc,
            ],
            &[("DFFT_MEMORY_LIMIT", "none")],
            limit,
        );
        let what = format!("--alloc {alloc} without the check, {ranks} rank(s)");
        assert!(!out.timed_out, "{what}: hung");
        assert_eq!(out.code, 1, "{what}\n{}", out.stderr);
        let lines: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("dfft:"))
            .collect();
        assert!(
            (1..=ranks.max(1)).contains(&lines.len()),
            "{what}: one line per failing rank\n{}",
            out.stderr
        );
        assert!(
            lines
                .iter()
                .all(|l| l.starts_with("dfft: error: out of memory: allocating ")
                    || l.starts_with("dfft: error: an MPI call failed")),
            "{what}\n{}",
            out.stderr
        );
        for noise in ["backtrace", "panicked", "Signal:", "Aborted"] {
            assert!(
                !out.stderr.contains(noise),
                "{what}: {noise}\n{}",
                out.stderr
            );
        }
    }
}
