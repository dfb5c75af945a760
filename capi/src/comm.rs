//! The caller's communicator, borrowed from its raw C handle for the length of one call.

use crate::status::{Failure, Outcome, DFFT_ERROR_MPI};
use mpi::ffi::MPI_Comm;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::AsRaw;
use std::mem::ManuallyDrop;

/// A communicator the caller owns: usable as an rsmpi communicator, never freed by dfft (the
/// plans duplicate what they keep).
pub(crate) struct Borrowed(ManuallyDrop<SimpleCommunicator>);

impl std::ops::Deref for Borrowed {
    type Target = SimpleCommunicator;

    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

/// Whether MPI is initialized and not finalized.
fn mpi_usable() -> bool {
    let mut initialized = 0;
    let mut finalized = 0;
    // SAFETY: MPI_Initialized and MPI_Finalized may be called at any time, even before
    // MPI_Init and after MPI_Finalize; they write one int each.
    unsafe {
        mpi::ffi::MPI_Initialized(&mut initialized);
        mpi::ffi::MPI_Finalized(&mut finalized);
    }
    initialized != 0 && finalized == 0
}

fn not_initialized() -> Failure {
    Failure::new(
        DFFT_ERROR_MPI,
        "MPI is not initialized (or is finalized): call MPI_Init before planning",
    )
}

/// Borrows `raw` (the C handle the caller passed), refusing what a plan cannot run on.
pub(crate) fn borrow(raw: MPI_Comm) -> Outcome<Borrowed> {
    if !mpi_usable() {
        return Err(not_initialized());
    }
    // SAFETY: MPI is initialized; `MPI_COMM_NULL` is recognized by value before any use.
    if raw == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
        return Err(Failure::new(
            DFFT_ERROR_MPI,
            "the communicator is MPI_COMM_NULL",
        ));
    }
    // An all-zero handle is no communicator in any MPI (a NULL pointer in Open MPI, whose
    // MPI_Comm_f2c also returns one for an unknown Fortran handle; 0 in MPICH, whose handles
    // carry a kind in their high bits). Refused before MPI sees it: with the default error
    // handler MPI would abort the caller.
    // SAFETY: MPI_Comm is a pointer or an integer, for which all-zero bytes are a valid value.
    if raw == unsafe { std::mem::zeroed::<MPI_Comm>() } {
        return Err(Failure::new(
            DFFT_ERROR_MPI,
            "the communicator handle is 0/NULL, not a communicator (from Fortran: an unknown handle)",
        ));
    }
    let mut inter = 0;
    // SAFETY: `raw` is a communicator handle the caller passed as live (the C API's
    // contract); MPI_Comm_test_inter writes one int and reports an invalid handle through its
    // return code (with the default error handler it aborts, as any MPI call on a bad handle).
    let rc = unsafe { mpi::ffi::MPI_Comm_test_inter(raw, &mut inter) };
    if rc != 0 {
        return Err(Failure::new(
            DFFT_ERROR_MPI,
            format!("MPI_Comm_test_inter on the communicator failed with code {rc}"),
        ));
    }
    if inter != 0 {
        return Err(Failure::new(
            DFFT_ERROR_MPI,
            "the communicator is an inter-communicator; plans need an intra-communicator",
        ));
    }
    // The built-ins by value: rsmpi's `from_raw` is for user communicators only.
    // SAFETY: reading the built-in handles of an initialized MPI.
    let (world, self_comm) = unsafe { (mpi::ffi::RSMPI_COMM_WORLD, mpi::ffi::RSMPI_COMM_SELF) };
    let comm = if raw == world {
        SimpleCommunicator::world()
    } else if raw == self_comm {
        SimpleCommunicator::self_comm()
    } else {
        // SAFETY: a live intra-communicator other than the built-ins, as `from_raw` requires.
        // rsmpi would free it on drop; `ManuallyDrop` below leaves that to its owner, the
        // caller.
        unsafe { SimpleCommunicator::from_raw(raw) }
    };
    debug_assert!(comm.as_raw() == raw);
    Ok(Borrowed(ManuallyDrop::new(comm)))
}

/// Converts a Fortran communicator handle (`integer`, or `type(MPI_Comm)%MPI_VAL`).
pub(crate) fn borrow_fortran(handle: mpi::ffi::RSMPI_Fint) -> Outcome<Borrowed> {
    if !mpi_usable() {
        return Err(not_initialized());
    }
    // SAFETY: MPI is initialized; MPI_Comm_f2c maps any handle value (an invalid one to
    // MPI_COMM_NULL or an invalid handle, which `borrow` then rejects or MPI reports).
    let raw = unsafe { mpi::ffi::RSMPI_Comm_f2c(handle) };
    borrow(raw)
}
