//! The nonblocking point-to-point calls, as thin wrappers that turn MPI error codes into
//! [`crate::RedistError::Mpi`], and one step of a pairwise schedule with chunked messages.

use super::chunks::message_chunks;
use super::{check_mpi, null_request};
use crate::element::Element;
use crate::error::Result;
use mpi::ffi;
use std::ffi::c_void;

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
    debug_assert!(len <= i32::MAX as usize);
    let code = ffi::MPI_Irecv(
        buf as *mut c_void,
        len as i32,
        T::mpi_datatype(),
        peer as i32,
        tag,
        comm,
        request,
    );
    check_mpi("MPI_Irecv", code)
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
    debug_assert!(len <= i32::MAX as usize);
    let code = ffi::MPI_Isend(
        buf as *const c_void,
        len as i32,
        T::mpi_datatype(),
        peer as i32,
        tag,
        comm,
        request,
    );
    check_mpi("MPI_Isend", code)
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
    check_mpi("MPI_Waitany", code)?;
    Ok(index as usize)
}

/// Waits for every one of `requests` to complete.
///
/// # Safety
/// As [`wait_any`].
pub(crate) unsafe fn wait_all(requests: &mut [ffi::MPI_Request]) -> Result<()> {
    if requests.is_empty() {
        return Ok(());
    }
    let code = ffi::MPI_Waitall(
        requests.len() as i32,
        requests.as_mut_ptr(),
        ffi::RSMPI_STATUSES_IGNORE,
    );
    check_mpi("MPI_Waitall", code)
}

/// One step of a pairwise schedule: what goes to whom and comes from whom.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// The communicator.
    pub comm: ffi::MPI_Comm,
    /// The message tag.
    pub tag: i32,
    /// Largest element count of one MPI message.
    pub max_count: usize,
    /// The rank sent to.
    pub to: usize,
    /// The elements of the send buffer sent (empty: nothing).
    pub send: std::ops::Range<usize>,
    /// The rank received from.
    pub from: usize,
    /// Where the received elements go in the receive buffer (empty: nothing).
    pub recv: std::ops::Range<usize>,
}

/// Sends `send[step.send]` to `step.to` and receives `recv[step.recv]` from `step.from` as
/// consecutive chunks of at most `step.max_count` elements ([`message_chunks`]; chunks of one
/// pair share a tag, and MPI keeps their order), then waits for all of them. `requests` must
/// have capacity for the chunks of both messages so that nothing is allocated.
pub(crate) fn sendrecv<T: Element>(
    step: Step,
    send: &[T],
    recv: &mut [T],
    requests: &mut Vec<ffi::MPI_Request>,
) -> Result<()> {
    assert!(step.send.end <= send.len() && step.recv.end <= recv.len());
    requests.clear();
    let result = (|| -> Result<()> {
        for (offset, len) in message_chunks(step.recv.len(), step.max_count) {
            let mut request = null_request();
            // SAFETY: the chunk lies inside `recv` (asserted above); the request completes in
            // the wait below before the buffer is touched again.
            unsafe {
                let buf = recv.as_mut_ptr().add(step.recv.start + offset);
                irecv(buf, len, step.from, step.tag, step.comm, &mut request)?;
            }
            requests.push(request);
        }
        for (offset, len) in message_chunks(step.send.len(), step.max_count) {
            let mut request = null_request();
            // SAFETY: as above, inside `send`, which nobody writes until the wait.
            unsafe {
                let buf = send.as_ptr().add(step.send.start + offset);
                isend(buf, len, step.to, step.tag, step.comm, &mut request)?;
            }
            requests.push(request);
        }
        Ok(())
    })();
    // SAFETY: every request was started above; waiting completes them all (also after an
    // error, so no transfer outlives the buffers).
    let waited = unsafe { wait_all(requests) };
    result?;
    waited
}
