//! # dfft-fftw-mpi
//!
//! A drop-in for FFTW-MPI: `libdfft_fftw3_mpi.so` (and `.a`) exports every function of FFTW
//! 3.3's `fftw3-mpi.h` in double (`fftw_mpi_*`) and single (`fftwf_mpi_*`) precision, and the
//! `*_f03` entry points FFTW's Fortran 2003 module `fftw3-mpi.f03` binds to, so that an
//! unchanged FFTW-MPI program runs its distributed transforms on dfft: link
//! `-ldfft_fftw3_mpi` in place of `-lfftw3_mpi` (and `-lfftw3f_mpi`), or run a program linked
//! with FFTW-MPI under `LD_PRELOAD=libdfft_fftw3_mpi.so`. The real `libfftw3_mpi` is never
//! called (under `LD_PRELOAD` it is loaded, and every `fftw_mpi_*` symbol resolves here).
//!
//! FFTW's generic plan calls (`fftw_execute`, `fftw_destroy_plan`, `fftw_execute_dft`, …,
//! `fftw_flops`, `fftw_cost`, `fftw_print_plan`, …) are defined here too: they run this
//! library's plans and hand any other plan to the program's serial FFTW ([`serial`]), so a
//! program's serial transforms keep working. Long double (`fftwl_mpi_*`) is refused with a
//! message.
//!
//! The semantics are FFTW-MPI's ([`dist`]: block distributions of the first dimension,
//! transposed layouts, `local_size` allocations; [`problem`]: which dfft plan computes a
//! planning call). The library translates layouts and flags into dfft plans and does nothing
//! else.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod api;
pub mod comm;
pub mod dist;
mod exports;
pub mod long_double;
pub mod plan;
pub mod problem;
pub mod registry;
pub mod serial;
pub mod threads;
pub mod transpose;
pub mod wisdom;

use std::io::Write;

/// Prints `dfft_fftw3_mpi: {message}` and ends the job (every process, through
/// `MPI_Abort`), as FFTW ends a program that breaks its contract.
pub fn fatal(message: &str) -> ! {
    // One write, so that the lines of processes failing together do not interleave.
    let _ = std::io::stderr().write_all(format!("dfft_fftw3_mpi: {message}\n").as_bytes());
    let mut initialized = 0;
    let mut finalized = 0;
    // SAFETY: MPI_Initialized and MPI_Finalized may be called at any time.
    unsafe {
        mpi::ffi::MPI_Initialized(&mut initialized);
        mpi::ffi::MPI_Finalized(&mut finalized);
    }
    if initialized != 0 && finalized == 0 {
        // SAFETY: aborting the world communicator of an initialized MPI.
        unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 1) };
    }
    std::process::abort()
}

/// Prints `dfft_fftw3_mpi: {message}` once per job: on process 0 of `comm`.
pub fn note(comm: &comm::Borrowed, message: &str) {
    if comm.rank_size().0 == 0 {
        let _ = std::io::stderr().write_all(format!("dfft_fftw3_mpi: {message}\n").as_bytes());
    }
}
