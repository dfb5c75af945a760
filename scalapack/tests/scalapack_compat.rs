//! The drop-in against the real ScaLAPACK (Debian's libscalapack-openmpi): the C tester of
//! `tests/c/mr2d_tester.c` compares `libdfft_scalapack`'s p?gemr2d/p?trmr2d with ScaLAPACK's,
//! element by element, on random descriptors under mpirun on 1-8 ranks; and an unmodified
//! ScaLAPACK program (`tests/c/plain_scalapack.c`) runs on dfft with `LD_PRELOAD`; one
//! process's bad descriptor (`tests/c/bad_descriptor.c`) ends the job with one agreed error.
//!
//! Both programs are compiled here with `mpicc`; a machine without it or without ScaLAPACK
//! prints SKIPPED with the reason (scripts/setup installs both).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// `libdfft_scalapack.so` as cargo built it for this test run.
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable");
    let deps = exe.parent().expect("the test executable's folder");
    [deps, deps.parent().unwrap_or(deps)]
        .iter()
        .map(|d| d.join("libdfft_scalapack.so"))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("libdfft_scalapack.so is not next to {}", exe.display()))
}

/// Compiles `tests/c/<source>.c` (linked with ScaLAPACK, then `extra`), or says why not.
fn compile(source: &str, extra: &[&str]) -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join(source);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{source}.c"));
    let status = Command::new("mpicc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .arg("-lscalapack-openmpi")
        .args(extra)
        .arg("-ldl")
        .output();
    match status {
        Err(e) => Err(format!("mpicc cannot run ({e})")),
        Ok(o) if !o.status.success() => {
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            if err.contains("scalapack") && err.contains("cannot find") {
                Err(format!("ScaLAPACK is not installed: {err}"))
            } else {
                panic!("mpicc failed on {}:\n{err}", src.display())
            }
        }
        Ok(_) => Ok(out),
    }
}

/// `tests/c/<source>.c` linked with ScaLAPACK and with dfft's library (its `dfft_`-prefixed
/// entry points), or why not. The library is found through an `RPATH` (old tags), which
/// wins over the `LD_LIBRARY_PATH` cargo sets for tests: that can name another build's copy.
fn with_dfft(source: &str) -> Result<PathBuf, String> {
    let lib = library();
    let dir = lib.parent().unwrap().to_str().unwrap().to_string();
    compile(
        source,
        &[
            &format!("-L{dir}"),
            "-Wl,--disable-new-dtags",
            &format!("-Wl,-rpath,{dir}"),
            "-ldfft_scalapack",
        ],
    )
}

/// The tester, linked with ScaLAPACK first (so `Cpdgemr2d` is ScaLAPACK's) and dfft's
/// library second (its `dfft_`-prefixed entry points); built once per test run.
fn tester() -> Option<&'static PathBuf> {
    static TESTER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = TESTER.get_or_init(|| with_dfft("mr2d_tester"));
    match built {
        Ok(p) => Some(p),
        Err(why) => {
            println!("SKIPPED: {why}");
            None
        }
    }
}

/// Runs the tester on `ranks` processes with `cases` random cases from `seed`; it fails on
/// any differing element, and prints the summary line.
fn compare(ranks: usize, seed: u64, cases: usize) {
    let Some(tester) = tester() else { return };
    let name = format!("mr2d_tester_np{ranks}");
    let out = mpi_harness::Launch::new(&name, ranks)
        .program(tester.to_str().unwrap())
        .args([name.clone(), seed.to_string(), cases.to_string()])
        .timeout_secs(240)
        .run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .find(|l| l.contains("elements differ ("))
        .expect("the tester's summary");
    println!("{summary}");
    assert!(summary.contains(": 0 of "), "{summary}");
}

#[test]
fn same_as_scalapack_np1() {
    compare(1, 1, 40);
}

#[test]
fn same_as_scalapack_np2() {
    compare(2, 2, 40);
}

#[test]
fn same_as_scalapack_np3() {
    compare(3, 3, 40);
}

#[test]
fn same_as_scalapack_np4() {
    compare(4, 4, 40);
}

#[test]
fn same_as_scalapack_np5() {
    compare(5, 5, 30);
}

#[test]
fn same_as_scalapack_np6() {
    compare(6, 6, 30);
}

#[test]
fn same_as_scalapack_np7() {
    compare(7, 7, 25);
}

#[test]
fn same_as_scalapack_np8() {
    compare(8, 8, 25);
}

/// An unmodified ScaLAPACK program: its `pdgemr2d_` is ScaLAPACK's, and with the drop-in
/// preloaded it is dfft's, with the same (checked) result.
#[test]
fn unmodified_program_runs_on_dfft_when_preloaded() {
    let program = match compile("plain_scalapack", &[]) {
        Ok(p) => p,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let lib = library();
    for ranks in [1, 4] {
        for preload in [false, true] {
            let name = "plain_scalapack";
            let mut launch = mpi_harness::Launch::new(name, ranks)
                .program(program.to_str().unwrap())
                .arg(name)
                .timeout_secs(120);
            if preload {
                launch = launch.env("LD_PRELOAD", lib.to_str().unwrap());
            }
            let out = launch.run();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let line = stdout
                .lines()
                .find(|l| l.starts_with("pdgemr2d_ from "))
                .expect("the program's report");
            println!("{ranks} ranks, preload {preload}: {line}");
            assert!(line.ends_with(": 0 of 44000 elements wrong"), "{line}");
            let from = if preload {
                "libdfft_scalapack"
            } else {
                "libscalapack"
            };
            assert!(line.contains(from), "expected {from}: {line}");
        }
    }
}

/// One process's bad B descriptor in a repeated call (a leading dimension below its local
/// rows, or a block size the others do not share) ends the job promptly, as ScaLAPACK's
/// parameter check does, with the error found alike on every process and printed once,
/// naming the offending process and its values. (Before, only that process noticed: it
/// printed an error without its number and ended the job.)
#[test]
fn one_bad_descriptor_ends_the_job_with_one_agreed_error() {
    let program = match with_dfft("bad_descriptor") {
        Ok(p) => p,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    for (ranks, mode) in [(1, "lda"), (3, "lda"), (4, "mb")] {
        let last = ranks - 1;
        let mut cmd = mpi_harness::mpirun_command(ranks);
        cmd.arg(&program).arg(mode);
        let start = std::time::Instant::now();
        let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(60));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let context = format!("{ranks} ranks, {mode}:\n{stdout}\n{stderr}");
        assert!(!timed_out, "hung: {context}");
        assert!(!out.status.success(), "the job went on: {context}");
        assert!(stdout.contains("first call done"), "{context}");
        assert!(!stdout.contains("returned"), "{context}");
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("dfft_scalapack pdgemr2d: "))
            .collect();
        assert_eq!(errors.len(), 1, "one report: {context}");
        let want = match mode {
            "lda" => {
                format!("B: bad lda arg on process {last}: LLD_=1 but its local array has 4 rows")
            }
            _ => {
                format!("disagree about its row block MB_: 2 on process 0 and 3 on process {last}")
            }
        };
        assert!(errors[0].contains(&want), "{want}: {context}");
        println!(
            "{ranks} ranks, {mode}: {} ({:.1} s)",
            errors[0],
            start.elapsed().as_secs_f64()
        );
    }
}
