//! Shared by the tests that build C and Fortran programs against the drop-in: where the
//! library `cargo test` built lies, how to compile against it or against Debian's FFTW-MPI
//! (the peer), and how to run a program under mpirun.

#![allow(dead_code)] // each test uses part of it

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The workspace root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The folder of `libdfft_fftw3_mpi.so` as this `cargo test` built it from the sources now
/// (`<target>/<profile>/deps`; the copy one level up is the last `cargo build`'s).
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable");
    let deps = exe.parent().expect("its folder").to_path_buf();
    assert!(
        deps.join("libdfft_fftw3_mpi.so").is_file(),
        "libdfft_fftw3_mpi.so is missing from {} (fftw-mpi/Cargo.toml's crate-type)",
        deps.display()
    );
    deps
}

/// Which library a program links for `fftw_mpi_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// `-ldfft_fftw3_mpi` in place of `-lfftw3_mpi -lfftw3f_mpi`.
    Dfft,
    /// Debian's FFTW-MPI.
    Fftw,
}

/// Compiles `tests/<path>` (C with mpicc, Fortran with mpif90) against FFTW's installed
/// headers and `link`'s library, into the test's temporary folder, or says why it cannot
/// (no compiler, no FFTW-MPI: the caller prints SKIPPED). The drop-in is found through an
/// RPATH (old tags), which wins over the LD_LIBRARY_PATH cargo sets for tests.
pub fn compile(path: &str, link: Link) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(path);
    let stem = src.file_stem().unwrap().to_str().unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{stem}-{}",
        if link == Link::Dfft { "dfft" } else { "fftw" }
    ));
    let fortran = path.ends_with(".f90");
    let compiler = if fortran { "mpif90" } else { "mpicc" };
    let mut cmd = Command::new(compiler);
    cmd.args(["-O1", "-o"]).arg(&out).arg(&src);
    if fortran {
        cmd.arg("-I/usr/include");
    } else {
        cmd.arg("-Wall");
    }
    match link {
        Link::Dfft => {
            let dir = library_dir();
            cmd.arg(format!("-L{}", dir.display()))
                .arg("-Wl,--disable-new-dtags")
                .arg(format!("-Wl,-rpath,{}", dir.display()))
                .arg("-ldfft_fftw3_mpi");
        }
        Link::Fftw => {
            cmd.args(["-lfftw3_mpi", "-lfftw3f_mpi"]);
        }
    }
    cmd.args([
        "-lfftw3_threads",
        "-lfftw3f_threads",
        "-lfftw3",
        "-lfftw3f",
        "-lm",
    ]);
    let output = match cmd.output() {
        Err(e) => return Err(format!("{compiler} cannot run ({e})")),
        Ok(o) => o,
    };
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr).to_string();
        if err.contains("fftw3") && (err.contains("cannot find") || err.contains("No such file")) {
            return Err(format!("FFTW-MPI is not installed: {err}"));
        }
        panic!("{compiler} failed on {}:\n{err}", src.display());
    }
    Ok(out)
}

/// `compile`, or SKIPPED printed and `None`.
pub fn compile_or_skip(path: &str, link: Link) -> Option<PathBuf> {
    match compile(path, link) {
        Ok(p) => Some(p),
        Err(why) => {
            println!("SKIPPED: {why}");
            None
        }
    }
}

/// Runs `program args` on `ranks` processes with extra environment variables for every rank,
/// and returns its output; panics when it hangs past `timeout`. The programs find their
/// libraries as a user's would: without the LD_LIBRARY_PATH cargo sets for tests.
pub fn mpirun(
    program: &Path,
    args: &[String],
    ranks: usize,
    env: &[(&str, String)],
    timeout: Duration,
) -> Output {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.env_remove("LD_LIBRARY_PATH");
    cmd.args(["-x", "RAYON_NUM_THREADS=1"]);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(program).args(args);
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, timeout);
    assert!(
        !timed_out,
        "{} on {ranks} ranks hung:\n{}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Stdout and stderr of a run, for messages.
pub fn show(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
