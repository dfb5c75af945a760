//! FFTW's generic plan calls on the drop-in, and what it refuses:
//!
//! - `tests/c/generic_calls.c` mixes serial FFTW plans (double and single precision, one
//!   threaded) with MPI plans in one program: the serial ones are computed, printed, costed,
//!   executed on new arrays and destroyed by the real FFTW through the drop-in's symbols (and
//!   checked against naive DFTs), the MPI ones by the drop-in (`fftw_sprint_plan` says
//!   which); wisdom measured on one process reaches every process through
//!   `fftw_mpi_gather_wisdom` and `fftw_mpi_broadcast_wisdom`; `fftw_plan_with_nthreads`
//!   reaches FFTW's threads library. On 1-4 processes.
//! - `tests/c/long_double.c`: `fftwl_mpi_init` ends the job with one message, on 2 processes.

mod common;

use common::{compile_or_skip, mpirun, show, Link};
use std::time::Duration;

#[test]
fn serial_plans_stay_fftws_beside_mpi_plans() {
    let Some(program) = compile_or_skip("c/generic_calls.c", Link::Dfft) else {
        return;
    };
    for ranks in 1..=4 {
        let out = mpirun(&program, &[], ranks, &[], Duration::from_secs(60));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("generic_calls: ok"),
            "{ranks} ranks: {}",
            show(&out)
        );
        println!("{ranks} ranks: {}", stdout.trim());
    }
}

#[test]
fn long_double_is_refused_with_a_message() {
    let Some(program) = compile_or_skip("c/long_double.c", Link::Dfft) else {
        return;
    };
    let out = mpirun(&program, &[], 2, &[], Duration::from_secs(60));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "the job went on: {}", show(&out));
    assert!(!stdout.contains("returned"), "{}", show(&out));
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("dfft_fftw3_mpi: fftwl_mpi_init: long double"))
        .collect();
    assert!(!lines.is_empty(), "no message: {}", show(&out));
    println!("{}", lines[0]);
}
