//! The one transport layer of the crate: how messages move between ranks, shared by the pencil
//! exchanges ([`crate::exchange::Exchange`]) and the block-cyclic redistributions
//! ([`crate::cyclic::run::Redistribution`], [`crate::cyclic::thakur`]).
//!
//! * [`chunks`]: MPI's 32-bit count limit and the split of longer messages into chunks;
//! * [`p2p`]: the nonblocking point-to-point calls and the chunked send/receive of one step
//!   of a pairwise schedule;
//! * [`counts`]: per-peer counts and displacements of a packed exchange, moved by one
//!   `MPI_Alltoallv` or by pairwise steps;
//! * [`window`]: MPI-3 shared-memory windows (a raw locked segment, and [`window::GroupWindow`]
//!   with one region per member).
//!
//! Every MPI error code becomes [`RedistError::Mpi`] through [`check_mpi`].

pub mod chunks;
pub mod counts;
#[cfg(target_os = "linux")]
mod huge;
pub mod p2p;
pub mod window;

use crate::error::{RedistError, Result};
use mpi::ffi;

pub use chunks::{chunk_count, message_chunks, MPI_MAX_COUNT};
pub use counts::PeerCounts;

/// `Ok` if `code` is `MPI_SUCCESS`, else the error naming `call`.
pub fn check_mpi(call: &'static str, code: i32) -> Result<()> {
    if code == ffi::MPI_SUCCESS as i32 {
        Ok(())
    } else {
        Err(RedistError::Mpi { call, code })
    }
}

/// `MPI_REQUEST_NULL`.
pub(crate) fn null_request() -> ffi::MPI_Request {
    // SAFETY: reading a constant the MPI library initializes at load time.
    unsafe { ffi::RSMPI_REQUEST_NULL }
}

/// A raw pointer that may cross threads: the one wrapper for the parallel copy loops (each
/// piece touches its own elements) and for shared-memory windows (whose owners synchronize
/// through MPI). Whoever dereferences it upholds the aliasing rules; the wrapper only lets
/// the pointer travel.
#[derive(Debug)]
#[repr(transparent)]
pub struct SendPtr<T>(*mut T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SendPtr<T> {}

// SAFETY: a plain address; every dereference is an `unsafe` operation of its user, who
// guarantees that the threads touch disjoint elements or synchronize.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above; sharing the address shares no data by itself.
unsafe impl<T: Send> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// Wraps a mutable pointer.
    pub fn new(ptr: *mut T) -> Self {
        Self(ptr)
    }

    /// Wraps a pointer that will only be read through.
    pub fn from_const(ptr: *const T) -> Self {
        Self(ptr as *mut T)
    }

    /// The null pointer.
    pub fn null() -> Self {
        Self(std::ptr::null_mut())
    }

    /// The pointer (a method, not a field, so that closures capture the whole wrapper).
    #[inline(always)]
    pub fn get(self) -> *mut T {
        self.0
    }

    /// The pointer, for reads.
    #[inline(always)]
    pub fn get_const(self) -> *const T {
        self.0
    }

    /// The same address as a pointer to `U`.
    pub fn cast<U>(self) -> SendPtr<U> {
        SendPtr(self.0 as *mut U)
    }
}
