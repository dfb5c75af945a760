//! Communicators from mpi4py, collective agreement on errors, and panics that end the job.

use crate::errors::{value_error, DfftError};
use mpi::collective::SystemOperation;
use mpi::ffi;
use mpi::raw::FromRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Whether MPI is initialized and not yet finalized.
fn mpi_is_live() -> bool {
    let (mut init, mut fin): (c_int, c_int) = (0, 0);
    // SAFETY: both calls may be made at any time and only write their flag.
    unsafe {
        ffi::MPI_Initialized(&mut init);
        ffi::MPI_Finalized(&mut fin);
    }
    init != 0 && fin == 0
}

fn require_mpi() -> PyResult<()> {
    if mpi_is_live() {
        Ok(())
    } else {
        Err(PyRuntimeError::new_err(
            "MPI is not initialized (or already finalized): import mpi4py.MPI first",
        ))
    }
}

/// `MPI_Get_library_version`.
pub fn library_version() -> PyResult<String> {
    // 8192 bytes: MPICH's MPI_MAX_LIBRARY_VERSION_STRING, the largest in use (Open MPI: 256).
    let mut buf = vec![0 as c_char; 8192];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds at least MPI_MAX_LIBRARY_VERSION_STRING characters; the call
    // may be made before MPI_Init.
    let code = unsafe { ffi::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    if code != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "MPI_Get_library_version failed with code {code}"
        )));
    }
    let bytes: Vec<u8> = buf[..len.max(0) as usize]
        .iter()
        .map(|&c| c as u8)
        .collect();
    Ok(String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .trim_end()
        .to_string())
}

/// The thread level MPI was initialized with.
pub fn thread_level() -> c_int {
    let mut level: c_int = 0;
    // SAFETY: MPI is initialized (checked by the callers); the call only writes `level`.
    unsafe { ffi::MPI_Query_thread(&mut level) };
    level
}

/// MPI objects (communicators, and plans and runners holding them) kept by a Python object
/// that any Python thread may use: Rust cannot see that moving them between threads is sound.
pub(crate) struct MpiOwned<T>(T);

// SAFETY: the wrapped MPI handles are plain values that MPI allows any thread to use when
// it was initialized with MPI_THREAD_SERIALIZED or higher (mpi4py's default is
// MPI_THREAD_MULTIPLE), one call at a time: PyO3's borrow checking of the owning object
// gives each call exclusive access (a concurrent call raises RuntimeError), and every
// collective entry point first checks `thread_allowed` for lower levels.
unsafe impl<T> Send for MpiOwned<T> {}
// SAFETY: as above; shared references only read the plan's plain data (layouts, sizes).
unsafe impl<T> Sync for MpiOwned<T> {}

impl<T> MpiOwned<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(value)
    }

    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for MpiOwned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for MpiOwned<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// Whether this thread may make MPI calls: any thread from `MPI_THREAD_SERIALIZED` on (plans
/// work from any Python thread, one call at a time); below that only the thread that
/// initialized MPI. This rank's verdict, for agreeing before anything collective.
pub fn thread_allowed(rank: i32) -> Result<(), String> {
    if thread_level() >= serialized_level() {
        return Ok(());
    }
    let mut main: c_int = 0;
    // SAFETY: MPI is initialized (the plan exists); the call only writes `main`.
    unsafe { ffi::MPI_Is_thread_main(&mut main) };
    if main != 0 {
        return Ok(());
    }
    Err(format!(
        "rank {rank}: called from a thread other than the one that initialized MPI, whose \
         thread level is below MPI_THREAD_SERIALIZED: call dfft from that thread, or \
         initialize MPI with mpi4py.rc.thread_level = 'serialized' or 'multiple' (mpi4py's \
         default)"
    ))
}

/// `MPI_THREAD_SERIALIZED`: what running MPI calls from a rayon worker thread needs.
pub fn serialized_level() -> c_int {
    // SAFETY: a constant of the MPI library.
    unsafe { ffi::RSMPI_THREAD_SERIALIZED }
}

/// A private duplicate of an mpi4py intra-communicator (freed when dropped): dfft's
/// messages never mix with the caller's, and the caller may free its own communicator.
pub fn from_mpi4py(comm: &Bound<'_, PyAny>) -> PyResult<SimpleCommunicator> {
    let py = comm.py();
    let mpi = py.import("mpi4py.MPI")?;
    let comm_type = mpi.getattr("Intracomm")?;
    if !comm.is_instance(&comm_type)? {
        return Err(PyTypeError::new_err(format!(
            "comm must be an mpi4py intra-communicator (mpi4py.MPI.Intracomm, e.g. \
             MPI.COMM_WORLD), got {}",
            comm.get_type().name()?
        )));
    }
    if comm.eq(mpi.getattr("COMM_NULL")?)? {
        return Err(value_error("comm is MPI.COMM_NULL".to_string()));
    }
    require_mpi()?;
    let handle: usize = comm.getattr("handle")?.extract()?;
    // Open MPI's MPI_Comm is a pointer, and mpi4py's `handle` its address.
    let raw = ffi::MPI_Comm(handle as *mut _);
    let mut dup = raw;
    // SAFETY: `raw` is the live intra-communicator handle of the mpi4py object (checked
    // above, and mpi4py shares this process's libmpi: checked at import); MPI_Comm_dup
    // writes a new handle that we own from here on.
    let code = unsafe { ffi::MPI_Comm_dup(raw, &mut dup) };
    if code != 0 {
        return Err(PyRuntimeError::new_err(format!(
            "MPI_Comm_dup failed with code {code}"
        )));
    }
    // SAFETY: `dup` is a live intra-communicator that nothing else refers to, neither
    // MPI_COMM_WORLD nor MPI_COMM_SELF; the SimpleCommunicator frees it when dropped.
    Ok(unsafe { SimpleCommunicator::from_raw(dup) })
}

/// Number of ranks of `comm` on this node (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`).
/// Collective.
pub fn ranks_on_node(comm: &SimpleCommunicator) -> usize {
    comm.split_shared(comm.rank()).size().max(1) as usize
}

/// Agrees on a check that each rank made alone: `Ok` on every rank if it passed everywhere,
/// else the message of the lowest failing rank on every rank. Collective; one `MPI_Allreduce`
/// of an `int` when all is well.
pub fn agree(comm: &SimpleCommunicator, local: Result<(), String>) -> Result<(), String> {
    let (rank, size) = (comm.rank(), comm.size());
    let mine: c_int = if local.is_err() { rank } else { size };
    let mut first: c_int = size;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == size {
        return Ok(());
    }
    let root = comm.process_at_rank(first);
    let mut message = match &local {
        Err(m) if rank == first => m.clone().into_bytes(),
        _ => Vec::new(),
    };
    let mut len = message.len() as u64;
    root.broadcast_into(&mut len);
    message.resize(len as usize, 0);
    // (An empty slice's dangling pointer is OpenMPI's MPI_IN_PLACE: never broadcast one.)
    if !message.is_empty() {
        root.broadcast_into(&mut message[..]);
    }
    Err(String::from_utf8_lossy(&message).into_owned())
}

/// Agrees on a constructor's arguments once the communicator is duplicated: `local` is this
/// rank's check of its arguments, `args` their text. Every rank fails when any rank's check
/// failed or its arguments differ from rank 0's (a rank that failed raises an exception of its
/// own error's type, the others a `DfftError`) instead of the others going on into the plan's
/// collective set-up; every rank's message is the same: the lowest failing rank's, naming it.
/// Collective: one broadcast of rank 0's text and one `MPI_Allreduce`.
pub fn agree_on_arguments<T>(
    comm: &SimpleCommunicator,
    local: PyResult<T>,
    args: &str,
) -> PyResult<T> {
    let root = comm.process_at_rank(0);
    let mut text = args.as_bytes().to_vec();
    let mut len = text.len() as u64;
    root.broadcast_into(&mut len);
    text.resize(len as usize, 0);
    if !text.is_empty() {
        root.broadcast_into(&mut text[..]);
    }
    let rank = comm.rank();
    // The exception's own text, without its type's name.
    let message_of = |e: &PyErr| Python::attach(|py| e.value(py).to_string());
    let mine = match &local {
        Err(e) => Err(format!("rank {rank}: {}", message_of(e))),
        Ok(_) if text != args.as_bytes() => Err(format!(
            "rank {rank}: the arguments differ from rank 0's: {args} (rank 0: {})",
            String::from_utf8_lossy(&text)
        )),
        Ok(_) => Ok(()),
    };
    // Every rank raises the same message (the lowest failing rank's, naming it); a rank whose
    // own check failed keeps its exception's type.
    match agree(comm, mine) {
        Ok(()) => local,
        Err(message) => Err(match local.err() {
            Some(e) => Python::attach(|py| PyErr::from_type(e.get_type(py), message)),
            None => DfftError::new_err(message),
        }),
    }
}

/// Runs a collective step; a panic inside it (a bug in dfft) ends the MPI job with the message
/// when other ranks may be waiting in the same step, and becomes Python's `PanicException` on a
/// single rank.
pub fn collective<R>(comm: &SimpleCommunicator, step: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(step)) {
        Ok(r) => r,
        Err(payload) => {
            if comm.size() > 1 {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".to_string());
                eprintln!(
                    "dfft: internal error (panic) on rank {} of {}: {what}; aborting the MPI job",
                    comm.rank(),
                    comm.size()
                );
                comm.abort(70)
            }
            resume_unwind(payload)
        }
    }
}
