//! FFTW's own MPI test on the drop-in: `scripts/fftw-mpi-check` builds FFTW 3.3.10's
//! `mpi/mpi-bench` (with its `libbench2`) from Debian's `fftw3` source package, cached under
//! `target/fftw-mpi-bench/`, links it against the library this `cargo test` built (no
//! `libfftw3_mpi` loaded: the script checks `ldd`), and runs FFTW's `tests/check.pl --mpi`
//! on random problems (every kind, rank 1–4, `howmany`, in and out of place, transposed in
//! and out), each verified by `mpi-bench --verify` with FFTW's own accuracy tests. A short
//! run per rank count and precision, one with two threads per process; fixed seeds, so a
//! failure reruns as printed. Skipped (printed) only where the script says a fixture is
//! unavailable (no network for `apt-get source`, no perl or mpicc).

mod common;

use std::process::Command;

/// One `scripts/fftw-mpi-check` run; `false` when it reports its fixture unavailable.
fn check(args: &[&str]) -> bool {
    let lib = common::library_dir();
    let out = Command::new(common::repo().join("scripts/fftw-mpi-check"))
        .args(args)
        .arg("--lib-dir")
        .arg(&lib)
        // The programs find the drop-in through their RPATH, as a user's would.
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("scripts/fftw-mpi-check runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        println!("SKIPPED: {}", stderr.trim());
        return false;
    }
    print!("{stdout}");
    assert!(
        out.status.success(),
        "scripts/fftw-mpi-check {args:?} failed:\n{stdout}\n{stderr}"
    );
    let runs = stdout.lines().filter(|l| l.starts_with("check ")).count();
    assert!(runs > 0, "no check ran:\n{stdout}\n{stderr}");
    true
}

#[test]
fn fftw_check_pl_passes_on_1_to_4_processes() {
    if !check(&[
        "--ranks",
        "1 2 3 4",
        "--count",
        "2",
        "--precision",
        "both",
        "--seed",
        "11",
    ]) {
        return;
    }
    check(&[
        "--ranks",
        "2 3",
        "--count",
        "2",
        "--precision",
        "double",
        "--nthreads",
        "2",
        "--seed",
        "13",
    ]);
}
