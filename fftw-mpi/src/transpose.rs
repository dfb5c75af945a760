//! `fftw_mpi_plan_many_transpose`: FFTW-MPI's distributed transposes.

use crate::api::Comm;
use fft_core::Precision;
use std::ffi::{c_uint, c_void};

/// Plans the transpose of an `n[0] × n[1]` array of `howmany`-tuples distributed along its
/// first dimension into the `n[1] × n[0]` array distributed along its first.
///
/// # Safety
/// FFTW's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe fn plan(
    name: &str,
    n: [isize; 2],
    howmany: isize,
    block: [isize; 2],
    _input: *mut c_void,
    _output: *mut c_void,
    comm: Comm,
    _flags: c_uint,
    _precision: Precision,
) -> *mut c_void {
    if n[0] <= 0 || n[1] <= 0 || howmany < 0 || block[0] < 0 || block[1] < 0 {
        return std::ptr::null_mut();
    }
    let comm = crate::comm::borrow(comm);
    crate::note(
        &comm,
        &format!("{name}: distributed transposes need FFTW's block sizes in dfft's layouts (not yet in redist); returning a NULL plan"),
    );
    std::ptr::null_mut()
}
