//! `pip install ./python` from a clean virtual environment, as a user would: pip fetches the
//! build backend (maturin) into an isolated build environment from the package index, maturin
//! builds the extension, and pip installs numpy and mpi4py; then the installed package runs
//! a transform on 2 ranks. `pip install ./python/fluidfft-dfft` (setuptools, also fetched)
//! installs the plugin's entry points. Versions are held to python/requirements-test.txt's
//! (`PIP_CONSTRAINT`, which pip also applies to the isolated build environments).
//!
//! Needs `python3` with `venv` and a reachable package index; without them the test prints
//! SKIPPED with the reason.

use mpi_harness::{mpirun_command, run_command};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A command run in the repository root with the pins of requirements-test.txt.
fn in_repo(program: &Path, args: &[&str]) -> Command {
    let root = repo();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(&root)
        .env("PIP_CONSTRAINT", root.join("python/requirements-test.txt"))
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env_remove("PYTHONPATH");
    cmd
}

#[test]
fn pip_install_python_from_a_clean_venv_np2() {
    let test = "pip_install_python_from_a_clean_venv_np2";
    let venv = repo().join("target/tmp/pip-install-venv");
    let _ = std::fs::remove_dir_all(&venv);
    std::fs::create_dir_all(venv.parent().unwrap()).expect("target/tmp");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    match made {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            eprintln!(
                "SKIPPED {test}: python3 -m venv failed: {}",
                text(&out).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: cannot run python3: {e}");
            return;
        }
    }
    let python = venv.join("bin/python");
    let probe = run_command(
        in_repo(
            &python,
            &[
                "-m",
                "pip",
                "index",
                "versions",
                "maturin",
                "--retries",
                "0",
                "--timeout",
                "15",
            ],
        ),
        Duration::from_secs(60),
    );
    if !probe.status.success() {
        let why = text(&probe);
        let last = why.trim().lines().last().unwrap_or("").to_string();
        eprintln!(
            "SKIPPED {test}: the package index is not reachable (pip index versions maturin: \
             {last}); pip install ./python fetches its build backend from it"
        );
        let _ = std::fs::remove_dir_all(&venv);
        return;
    }
    let install = |args: &[&str]| {
        let mut all = vec!["-m", "pip", "install", "--retries", "2", "--timeout", "60"];
        all.extend_from_slice(args);
        let out = run_command(in_repo(&python, &all), Duration::from_secs(1200));
        assert!(
            out.status.success(),
            "pip {} failed ({}):\n{}",
            all[2..].join(" "),
            out.status,
            text(&out)
        );
    };
    install(&["--only-binary", "numpy,mpi4py", "./python"]);
    // The plugin's runtime dependencies (FluidFFT and its own) are the long list of
    // requirements-test.txt: its build and entry points are what is checked here.
    install(&["--no-deps", "./python/fluidfft-dfft"]);

    let script = "\
import importlib.metadata as md
import numpy as np
from mpi4py import MPI
import dfft
names = {e.name for e in md.entry_points(group='fluidfft.plugins')}
assert {'fft3d.mpi_with_dfft', 'fft2d.mpi_with_dfft'} <= names, names
assert dfft.__file__.startswith(__import__('sys').prefix), dfft.__file__
plan = dfft.PFFT(MPI.COMM_WORLD, (8, 6, 10), normalization='forward')
x = np.random.default_rng(3).random(plan.global_shape)
a = plan.alloc()
a[...] = x[plan.local_slice()]
b = plan.forward(a, plan.alloc(True))
want = (np.fft.rfftn(x) / x.size).transpose(plan.spectral_axes)[plan.local_slice(True)]
assert np.allclose(b, want, atol=1e-13), abs(b - want).max()
assert np.allclose(plan.backward(b), x[plan.local_slice()], atol=1e-13)
print('INSTALLED OK', MPI.COMM_WORLD.rank, dfft.__version__)
";
    let mut cmd = mpirun_command(2);
    cmd.arg(&python)
        .args(["-P", "-c", script])
        .current_dir(std::env::temp_dir());
    let out = run_command(cmd, Duration::from_secs(120));
    let all = text(&out);
    assert!(out.status.success(), "the installed dfft failed:\n{all}");
    assert_eq!(all.matches("INSTALLED OK").count(), 2, "{all}");
    let _ = std::fs::remove_dir_all(&venv);
}
