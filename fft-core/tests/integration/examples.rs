//! The examples in `fft-core/examples/` under real mpirun. Each example file is compiled into
//! this test executable as a module (the same source that `cargo build --examples` builds),
//! and its `main` runs as the body of a launch on every rank. Each example checks its results
//! against exact answers and panics (ending the job with MPI_Abort) when they are off; the
//! launch also checks that rank 0 printed the example's result line.

use crate::{c2c_roundtrip, poisson, r2c_derivative};
use fft_core::FftError;

/// The body of a launch: the example's `main` (which initializes MPI) between this rank's
/// markers.
fn body(name: &str, main: fn() -> Result<(), FftError>) {
    mpi_harness::program_body(name, || main().expect("the example succeeds"));
}

/// Launches body `name` (its path in this test executable) on `ranks` processes and checks that the output has `expect`.
fn launch(name: &str, ranks: usize, expect: &str) {
    let out = mpi_harness::Launch::new(name, ranks)
        .timeout_secs(120)
        .run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(expect),
        "{name} on {ranks} ranks: no line with {expect:?}\n{stdout}"
    );
}

#[test]
#[ignore = "MPI body: run by c2c_roundtrip_np3"]
fn c2c_roundtrip_body() {
    body("examples::c2c_roundtrip_body", c2c_roundtrip::main);
}

#[test]
fn c2c_roundtrip_np3() {
    launch(
        "examples::c2c_roundtrip_body",
        3,
        "c2c [16, 12, 10] on 3 ranks: spectrum error",
    );
}

#[test]
#[ignore = "MPI body: run by r2c_derivative_np4"]
fn r2c_derivative_body() {
    body("examples::r2c_derivative_body", r2c_derivative::main);
}

#[test]
fn r2c_derivative_np4() {
    launch(
        "examples::r2c_derivative_body",
        4,
        "r2c derivative [24, 20, 18] on 4 ranks: max error",
    );
}

#[test]
#[ignore = "MPI body: run by the poisson_np* launchers"]
fn poisson_body() {
    body("examples::poisson_body", poisson::main);
}

#[test]
fn poisson_np1() {
    launch(
        "examples::poisson_body",
        1,
        "poisson [32, 30, 28] on 1 ranks: max error",
    );
}

#[test]
fn poisson_np4() {
    launch(
        "examples::poisson_body",
        4,
        "poisson [32, 30, 28] on 4 ranks: max error",
    );
}

#[test]
fn the_poisson_example_is_under_60_lines() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/poisson.rs");
    let lines = std::fs::read_to_string(path).unwrap().lines().count();
    assert!(lines < 60, "examples/poisson.rs has {lines} lines");
}
