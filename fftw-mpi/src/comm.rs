//! The caller's communicator, borrowed from its raw C (or Fortran) handle for one call.

use mpi::ffi::MPI_Comm;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;
use std::mem::ManuallyDrop;

/// A communicator the caller owns, usable as an rsmpi communicator and never freed here (a
/// plan keeps its own duplicate).
pub struct Borrowed(ManuallyDrop<SimpleCommunicator>);

impl std::ops::Deref for Borrowed {
    type Target = SimpleCommunicator;

    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

impl Borrowed {
    /// This process's rank and the number of processes.
    pub fn rank_size(&self) -> (usize, usize) {
        (self.0.rank() as usize, self.0.size() as usize)
    }
}

/// Borrows `raw`; like FFTW, a handle that is not a live intra-communicator is the caller's
/// error, which MPI reports (and by default aborts on).
pub fn borrow(raw: MPI_Comm) -> Borrowed {
    let mut initialized = 0;
    // SAFETY: MPI_Initialized may be called at any time; it writes one int.
    unsafe { mpi::ffi::MPI_Initialized(&mut initialized) };
    if initialized == 0 {
        crate::fatal("MPI is not initialized: call MPI_Init before any fftw_mpi_ function");
    }
    // A bug (a panic) on one process ends the job instead of leaving the others waiting; the
    // program is C or Fortran, so the panic hook is this library's to set.
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(fft_core::abort_on_panic);
    // SAFETY: reading the built-in handles of an initialized MPI.
    let (world, self_comm, null) = unsafe {
        (
            mpi::ffi::RSMPI_COMM_WORLD,
            mpi::ffi::RSMPI_COMM_SELF,
            mpi::ffi::RSMPI_COMM_NULL,
        )
    };
    if raw == null {
        crate::fatal("the communicator is MPI_COMM_NULL");
    }
    let comm = if raw == world {
        SimpleCommunicator::world()
    } else if raw == self_comm {
        SimpleCommunicator::self_comm()
    } else {
        // SAFETY: a communicator the caller passed as live, other than the built-ins (which
        // `from_raw` does not take); `ManuallyDrop` leaves freeing it to its owner.
        unsafe { SimpleCommunicator::from_raw(raw) }
    };
    Borrowed(ManuallyDrop::new(comm))
}

/// Converts a Fortran handle (`integer` of `use mpi`, `%MPI_VAL` of `use mpi_f08`), as
/// FFTW's `_f03` wrappers do with `MPI_Comm_f2c`.
pub fn from_fortran(handle: mpi::ffi::RSMPI_Fint) -> MPI_Comm {
    // SAFETY: MPI_Comm_f2c maps any handle value; an unknown one gives an invalid handle that
    // `borrow` or MPI rejects.
    unsafe { mpi::ffi::RSMPI_Comm_f2c(handle) }
}
