//! Return codes, the per-thread message of the last failure, and the guard that turns every
//! failure (and any panic) into a code instead of an unwind across the FFI.

use fft_core::FftError;
use redist::RedistError;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The call succeeded.
pub const DFFT_SUCCESS: c_int = 0;
/// A required pointer argument was NULL (the plan, `n`, an output argument, a buffer).
pub const DFFT_ERROR_NULL_POINTER: c_int = 1;
/// A bad size, count, kind or flag (`d < 2`, `n[i] < 1`, `howmany < 1`, unknown flag bits,
/// an unsupported real-to-real kind, options that do not fit the transform).
pub const DFFT_ERROR_BAD_ARGUMENT: c_int = 2;
/// A grid request that cannot be met (grid rank `>= d`, dimensions whose product is not the
/// communicator's size, a dimension `< 1`).
pub const DFFT_ERROR_BAD_GRID: c_int = 3;
/// A buffer dfft cannot use: misaligned for its element type, or overlapping the other one.
pub const DFFT_ERROR_BAD_BUFFER: c_int = 4;
/// `input == output` on a plan made without `DFFT_IN_PLACE` (every kind can be made with
/// it): plan with it, or pass two buffers.
pub const DFFT_ERROR_IN_PLACE: c_int = 5;
/// The plan would not fit in memory (see the message for the numbers).
pub const DFFT_ERROR_MEMORY: c_int = 6;
/// MPI is not initialized (or already finalized), the communicator is unusable
/// (`MPI_COMM_NULL`, an inter-communicator), or an MPI call failed.
pub const DFFT_ERROR_MPI: c_int = 7;
/// `dfft_free` of a pointer that `dfft_alloc_input`/`dfft_alloc_output` did not return (or
/// that was freed already).
pub const DFFT_ERROR_UNKNOWN_BLOCK: c_int = 8;
/// Another rank's arguments to this collective call were rejected (its own call returned
/// their code and message); this rank returns without transforming.
pub const DFFT_ERROR_OTHER_RANK: c_int = 9;
/// A bug inside dfft (a Rust panic, caught at the API boundary). Please report it.
pub const DFFT_ERROR_INTERNAL: c_int = 10;

/// A failed call: its code and the message with the offending values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) code: c_int,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: c_int, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn null(what: &str) -> Self {
        Self::new(DFFT_ERROR_NULL_POINTER, format!("{what} is NULL"))
    }

    pub(crate) fn argument(message: impl Into<String>) -> Self {
        Self::new(DFFT_ERROR_BAD_ARGUMENT, message)
    }
}

/// fft-core's errors, classified by what the caller got wrong.
impl From<FftError> for Failure {
    fn from(e: FftError) -> Self {
        let code = match &e {
            FftError::Redist(r) => match r {
                RedistError::BadGridDims { .. }
                | RedistError::GridSizeMismatch { .. }
                | RedistError::GridRankTooLarge { .. }
                | RedistError::ZeroGridRank
                | RedistError::BadGridSpec { .. } => DFFT_ERROR_BAD_GRID,
                RedistError::Mpi { .. } => DFFT_ERROR_MPI,
                _ => DFFT_ERROR_BAD_ARGUMENT,
            },
            FftError::BadGridChoice { .. } => DFFT_ERROR_BAD_GRID,
            FftError::InsufficientMemory { .. } => DFFT_ERROR_MEMORY,
            FftError::InPlaceNotPlanned => DFFT_ERROR_IN_PLACE,
            _ => DFFT_ERROR_BAD_ARGUMENT,
        };
        Self::new(code, e.to_string())
    }
}

pub(crate) type Outcome<T = ()> = Result<T, Failure>;

thread_local! {
    /// The last failure on this thread, as returned by `dfft_error_message` for its code.
    static LAST: RefCell<Option<(c_int, CString)>> = const { RefCell::new(None) };
}

/// Runs `body`, records a failure (or a panic, as [`DFFT_ERROR_INTERNAL`]) for
/// `dfft_error_message`, and returns the code. Nothing unwinds out of here.
pub(crate) fn guard(body: impl FnOnce() -> Outcome) -> c_int {
    let failure = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return DFFT_SUCCESS,
        Ok(Err(failure)) => failure,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Failure::new(
                DFFT_ERROR_INTERNAL,
                format!("internal error in dfft (please report it): {what}"),
            )
        }
    };
    record(&failure);
    failure.code
}

fn record(failure: &Failure) {
    // A message with an interior NUL (never produced by dfft) is cut there.
    let text = failure.message.split('\0').next().unwrap_or_default();
    let message = CString::new(format!("dfft: {text}")).unwrap_or_default();
    LAST.with(|last| *last.borrow_mut() = Some((failure.code, message)));
}

/// The fixed description of each code.
pub(crate) fn description(code: c_int) -> &'static CStr {
    match code {
        DFFT_SUCCESS => c"dfft: success",
        DFFT_ERROR_NULL_POINTER => c"dfft: a required pointer argument is NULL",
        DFFT_ERROR_BAD_ARGUMENT => c"dfft: bad size, count, kind or flag",
        DFFT_ERROR_BAD_GRID => c"dfft: the processor grid request cannot be met",
        DFFT_ERROR_BAD_BUFFER => c"dfft: a buffer is misaligned or overlaps the other one",
        DFFT_ERROR_IN_PLACE => {
            c"dfft: input == output on a plan made without DFFT_IN_PLACE; plan with it or pass two buffers"
        }
        DFFT_ERROR_MEMORY => c"dfft: not enough memory for the plan",
        DFFT_ERROR_MPI => {
            c"dfft: MPI is not usable (not initialized, bad communicator, or a failed call)"
        }
        DFFT_ERROR_UNKNOWN_BLOCK => {
            c"dfft: the pointer was not allocated by dfft_alloc_input/dfft_alloc_output"
        }
        DFFT_ERROR_OTHER_RANK => c"dfft: another rank's arguments were rejected",
        DFFT_ERROR_INTERNAL => c"dfft: internal error (please report it)",
        _ => c"dfft: unknown error code",
    }
}

/// The message of the most recent failure on the calling thread that returned `code`, with
/// the offending values; the fixed description of `code` when no failure on this thread
/// returned it (`DFFT_SUCCESS` included). The string belongs to dfft: it stays valid until
/// the next failing dfft call on this thread; copy it to keep it. Never NULL.
#[no_mangle]
pub extern "C" fn dfft_error_message(code: c_int) -> *const c_char {
    LAST.with(|last| match &*last.borrow() {
        // The CString stays in the thread-local until the next failure replaces it.
        Some((c, message)) if *c == code => message.as_ptr(),
        _ => description(code).as_ptr(),
    })
}

/// [`guard`] for the crate's tests (a panic must come back as a code); not part of the C API.
#[doc(hidden)]
pub fn guard_for_tests(body: impl FnOnce() -> Result<(), (c_int, String)>) -> c_int {
    guard(|| body().map_err(|(code, message)| Failure::new(code, message)))
}
