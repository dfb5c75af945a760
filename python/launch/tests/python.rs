//! The Python suites under mpirun, one launch per rank count, each under a timeout: the
//! `dfft` package's own tests (python/tests), FluidFFT's generic test suites on the
//! `fft3d.mpi_with_dfft` / `fft2d.mpi_with_dfft` plugin, and FluidSim's ns3d solver on the
//! plugin against FluidFFT's sequential pyfftw class.
//!
//! They need the virtual environment that `scripts/setup` makes (`target/venv`, or the Python
//! named by `DFFT_PYTHON`); without it each test prints SKIPPED with the reason.

use mpi_harness::{mpirun_command, run_command, run_command_timed, Launch};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// The venv's Python with dfft and the plugin installed, or why there is none.
fn python() -> Result<PathBuf, String> {
    let path = match std::env::var_os("DFFT_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => repo().join("target/venv/bin/python"),
    };
    if !path.exists() {
        return Err(format!(
            "{} does not exist (scripts/setup makes the venv)",
            path.display()
        ));
    }
    let probe = Command::new(&path)
        .args(["-P", "-c", "import dfft, fluidfft_dfft, fluidsim, pytest"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    if !probe.status.success() {
        return Err(format!(
            "{} cannot import dfft, fluidfft_dfft, fluidsim and pytest (scripts/setup installs \
             them): {}",
            path.display(),
            String::from_utf8_lossy(&probe.stderr).trim()
        ));
    }
    Ok(path)
}

/// pytest on `paths` (relative to python/) under `mpirun -n ranks`, as mpi-harness launch
/// `test`; the markers come from python/conftest.py.
fn pytest(test: &str, ranks: usize, paths: &[&str], timeout_secs: u64) -> Option<Launch> {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            return None;
        }
    };
    let root = repo().join("python");
    let ini = root.join("pytest.ini");
    let mut launch = Launch::new(test, ranks)
        .program(python.to_str().expect("a UTF-8 path"))
        .args([
            "-P",
            "-m",
            "pytest",
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
            "--color=no",
        ])
        .args([
            "-c",
            ini.to_str().unwrap(),
            "--rootdir",
            root.to_str().unwrap(),
        ])
        .env("DFFT_HARNESS_TEST", test)
        .timeout_secs(timeout_secs);
    for p in paths {
        launch = launch.arg(root.join(p).to_str().unwrap());
    }
    Some(launch)
}

const SUITES: [&str; 3] = [
    "tests",
    "fluidfft-dfft/tests/test_fluidfft_suite.py",
    "fluidfft-dfft/tests/test_plugin.py",
];

#[test]
fn python_suites_np1() {
    if let Some(l) = pytest("python_suites_np1", 1, &SUITES, 300) {
        l.run();
    }
}

#[test]
fn python_suites_np2() {
    if let Some(l) = pytest("python_suites_np2", 2, &SUITES, 300) {
        l.run();
    }
}

#[test]
fn python_suites_np3() {
    if let Some(l) = pytest("python_suites_np3", 3, &["tests"], 300) {
        l.run();
    }
}

#[test]
fn python_suites_np4() {
    if let Some(l) = pytest("python_suites_np4", 4, &SUITES, 400) {
        l.run();
    }
}

/// The distributed 1-D tests (ordered and scrambled orders against numpy) on 5 to 8 ranks,
/// oversubscribed; the suites above run them on 1 to 4.
#[test]
fn python_one_d_np5_to_np8() {
    for ranks in 5..=8 {
        let test = format!("python_one_d_np{ranks}");
        if let Some(l) = pytest(&test, ranks, &["tests/test_one_d.py"], 180) {
            l.run();
        }
    }
}

/// FluidSim's ns3d Taylor-Green run on the plugin (2 ranks) against the same run on FluidFFT's
/// sequential pyfftw class (one process, run first).
#[test]
fn fluidsim_ns3d_matches_pyfftw_np2() {
    let test = "fluidsim_ns3d_matches_pyfftw_np2";
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            return;
        }
    };
    let scratch = std::env::temp_dir().join(format!("dfft-fluidsim-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch directory");
    let reference = scratch.join("pyfftw.json");
    let script = repo().join("python/fluidfft-dfft/tests/taylor_green.py");
    let mut cmd = mpirun_command(1);
    cmd.arg(&python)
        .arg("-P")
        .arg(&script)
        .arg("fft3d.with_pyfftw")
        .arg("--out")
        .arg(&reference)
        .env("FLUIDSIM_PATH", &scratch);
    let out = run_command(cmd, Duration::from_secs(300));
    assert!(
        out.status.success() && reference.exists(),
        "the sequential pyfftw reference run failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let launch = pytest(test, 2, &["fluidfft-dfft/tests/test_fluidsim_ns3d.py"], 300)
        .expect("the venv was found above")
        .env("DFFT_FLUIDSIM_REFERENCE", reference.to_str().unwrap())
        .env("FLUIDSIM_PATH", scratch.to_str().unwrap());
    let out = launch.run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("max relative energy difference"))
        .expect("the comparison ran and printed its result");
    println!("{line}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `python -m dfft --version` names dfft, numpy, mpi4py and the MPI library.
#[test]
fn python_m_dfft_version() {
    let test = "python_m_dfft_version";
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            return;
        }
    };
    let mut cmd = mpirun_command(1);
    cmd.arg(&python).args(["-P", "-m", "dfft", "--version"]);
    let out = run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(concat!("dfft ", env!("CARGO_PKG_VERSION"))),
        "{stdout}"
    );
    for prefix in ["numpy ", "mpi4py ", "MPI "] {
        assert!(
            lines.iter().any(|l| l.starts_with(prefix)),
            "no line starts with {prefix:?}:\n{stdout}"
        );
    }
    // The MPI line names the library mpi4py loaded, the one dfft links (checked at import).
    assert!(stdout.contains("Open MPI"), "{stdout}");
}

/// A panic inside dfft on rank 1 of 2 while rank 0 waits in the same collective step: the
/// job ends through `MPI_Abort` with the message on stderr, instead of hanging or ending
/// silently (one rank alone gets a `PanicException`: python/tests/test_errors.py).
#[test]
fn a_panic_on_one_rank_aborts_the_job_with_its_message_np2() {
    let test = "a_panic_on_one_rank_aborts_the_job_with_its_message_np2";
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            return;
        }
    };
    let mut cmd = mpirun_command(2);
    cmd.arg(&python).args([
        "-P",
        "-c",
        "from mpi4py import MPI\nfrom dfft import _dfft\n\
         _dfft._panic_in_collective(MPI.COMM_WORLD, on_rank=1)\nprint('RETURNED')",
    ]);
    let (out, timed_out) = run_command_timed(cmd, Duration::from_secs(120));
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!timed_out, "the job hung:\n{text}");
    assert!(!out.status.success(), "the job succeeded:\n{text}");
    assert!(
        text.contains(
            "dfft: internal error (panic) on rank 1 of 2: a panic for the tests on rank 1; \
             aborting the MPI job"
        ),
        "{text}"
    );
    assert!(!text.contains("RETURNED"), "{text}");
}
