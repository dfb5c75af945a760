//! Failures that end a rank at once, reported as one line and exit status 1 instead of an
//! abort with a backtrace per rank: a failed allocation (whatever allocates: the run's
//! blocks, a plan's buffers, a library's vectors) and a failed MPI call on a communicator
//! (an `MPI_Win_allocate_shared` that cannot map its segment, say). The memory check
//! ([`crate::memory_limit`]) refuses what it can foresee before anything is allocated; these
//! catch the rest. When one rank exits 1, mpirun ends the others.

use std::alloc::{GlobalAlloc, Layout, System};
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};

/// This process's rank in `MPI_COMM_WORLD`, once known (−1 before).
static RANK: AtomicI32 = AtomicI32::new(-1);

/// Records the rank the messages name.
pub fn set_rank(rank: i32) {
    RANK.store(rank, Ordering::Relaxed);
}

/// A fixed buffer that formats a message without allocating.
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line {
            buf: [0; 512],
            len: 0,
        }
    }

    fn push(&mut self, text: &[u8]) -> &mut Self {
        let n = text.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&text[..n]);
        self.len += n;
        self
    }

    fn number(&mut self, mut value: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (value % 10) as u8;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        self.push(&digits[i..])
    }

    fn rank(&mut self) -> &mut Self {
        let rank = RANK.load(Ordering::Relaxed);
        if rank >= 0 {
            self.push(b" on rank ").number(rank as u64);
        }
        self
    }

    /// Writes the line to stderr and ends the process with status 1, at once (no unwinding,
    /// no destructors: the heap or MPI may be unusable).
    fn exit(&mut self) -> ! {
        self.push(b"\n");
        // SAFETY: write(2) of our own buffer and _exit(2) are async-signal-safe and need no
        // heap.
        unsafe {
            libc::write(2, self.buf.as_ptr().cast(), self.len);
            libc::_exit(1)
        }
    }
}

/// The system allocator, except that a failed allocation prints one line and exits 1.
pub struct ExitOnOom;

/// Reports a failed allocation of `size` bytes and exits.
#[cold]
fn out_of_memory(size: usize) -> ! {
    Line::new()
        .push(b"dfft: error: out of memory: allocating ")
        .number(size as u64)
        .push(b" bytes failed")
        .rank()
        .push(b" (the memory check did not foresee it; see DFFT_MEMORY_LIMIT in docs/cli.md)")
        .exit()
}

// SAFETY: every call is forwarded to `System` with the same arguments; only a null result
// (which `System` returns for a failed allocation) is handled differently.
unsafe impl GlobalAlloc for ExitOnOom {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the trait requires of the caller.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the trait requires of the caller.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the trait requires of the caller.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the trait requires of the caller.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The error handler of `MPI_COMM_WORLD` and every communicator made from it: one line with
/// MPI's error string, then exit 1. Declared with the two named parameters only; MPI calls it
/// with more (variadic), which the C calling convention lets the callee ignore.
unsafe extern "C" fn on_mpi_error(_comm: *mut mpi::ffi::MPI_Comm, code: *mut c_int) {
    let mut text = [0 as c_char; mpi::ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: MPI passes a valid pointer to the error code; the buffer holds
    // MPI_MAX_ERROR_STRING characters.
    let ok = unsafe {
        mpi::ffi::MPI_Error_string(*code, text.as_mut_ptr(), &mut len)
            == mpi::ffi::MPI_SUCCESS as c_int
    };
    let len = if ok {
        len.clamp(0, text.len() as c_int) as usize
    } else {
        0
    };
    let mut line = Line::new();
    line.push(b"dfft: error: an MPI call failed")
        .rank()
        .push(b": ");
    for &c in &text[..len] {
        line.push(&[c as u8]);
    }
    line.push(b" (if memory is short: see DFFT_MEMORY_LIMIT in docs/cli.md)")
        .exit()
}

/// Sets [`on_mpi_error`] as `MPI_COMM_WORLD`'s error handler (communicators created later
/// inherit it). Call right after `MPI_Init`, before any communicator is made.
pub fn exit_on_mpi_errors() {
    type Handler = unsafe extern "C" fn(*mut mpi::ffi::MPI_Comm, *mut c_int);
    let handler: Handler = on_mpi_error;
    // SAFETY: a two-parameter handler called through the variadic type MPI declares: on the
    // C ABIs MPI runs on, named parameters are passed the same way in both, and the callee
    // never reads the variadic ones. The handler and MPI_COMM_WORLD are valid.
    unsafe {
        let variadic: mpi::ffi::MPI_Comm_errhandler_function = Some(std::mem::transmute::<
            Handler,
            unsafe extern "C" fn(*mut mpi::ffi::MPI_Comm, *mut c_int, ...),
        >(handler));
        let mut errhandler = std::mem::zeroed();
        if mpi::ffi::MPI_Comm_create_errhandler(variadic, &mut errhandler)
            == mpi::ffi::MPI_SUCCESS as c_int
        {
            mpi::ffi::MPI_Comm_set_errhandler(mpi::ffi::RSMPI_COMM_WORLD, errhandler);
        }
    }
}
