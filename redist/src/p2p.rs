//! The nonblocking point-to-point calls that the redistribution schedules and Thakur's
//! methods share, as thin wrappers that turn MPI error codes into [`RedistError::Mpi`].

use crate::element::Element;
use crate::error::{RedistError, Result};
use mpi::ffi;
use std::ffi::c_void;

/// `Ok` if `code` is `MPI_SUCCESS`, else the error naming `call`.
pub(crate) fn check(call: &'static str, code: i32) -> Result<()> {
    if code == ffi::MPI_SUCCESS as i32 {
        Ok(())
    } else {
        Err(RedistError::Mpi { call, code })
    }
}

/// Posts a receive of `len` elements (at most `i32::MAX`) from `peer` into `buf`.
///
/// # Safety
/// `buf` must point to `len` writable elements that nothing else touches until `request`
/// completes.
pub(crate) unsafe fn irecv<T: Element>(
    buf: *mut T,
    len: usize,
    peer: usize,
    tag: i32,
    comm: ffi::MPI_Comm,
    request: &mut ffi::MPI_Request,
) -> Result<()> {
    let code = ffi::MPI_Irecv(
        buf as *mut c_void,
        len as i32,
        T::mpi_datatype(),
        peer as i32,
        tag,
        comm,
        request,
    );
    check("MPI_Irecv", code)
}

/// Posts a send of `len` elements (at most `i32::MAX`) from `buf` to `peer`.
///
/// # Safety
/// `buf` must point to `len` elements that nobody writes until `request` completes.
pub(crate) unsafe fn isend<T: Element>(
    buf: *const T,
    len: usize,
    peer: usize,
    tag: i32,
    comm: ffi::MPI_Comm,
    request: &mut ffi::MPI_Request,
) -> Result<()> {
    let code = ffi::MPI_Isend(
        buf as *const c_void,
        len as i32,
        T::mpi_datatype(),
        peer as i32,
        tag,
        comm,
        request,
    );
    check("MPI_Isend", code)
}

/// Waits for one of `requests` to complete and returns its index (the request becomes null).
///
/// # Safety
/// Every request must be live or null, posted by [`irecv`] or [`isend`].
pub(crate) unsafe fn wait_any(requests: &mut [ffi::MPI_Request]) -> Result<usize> {
    let mut index = 0i32;
    let code = ffi::MPI_Waitany(
        requests.len() as i32,
        requests.as_mut_ptr(),
        &mut index,
        ffi::RSMPI_STATUS_IGNORE,
    );
    check("MPI_Waitany", code)?;
    Ok(index as usize)
}

/// Waits for every one of `requests` to complete.
///
/// # Safety
/// As [`wait_any`].
pub(crate) unsafe fn wait_all(requests: &mut [ffi::MPI_Request]) -> Result<()> {
    let code = ffi::MPI_Waitall(
        requests.len() as i32,
        requests.as_mut_ptr(),
        ffi::RSMPI_STATUSES_IGNORE,
    );
    check("MPI_Waitall", code)
}
