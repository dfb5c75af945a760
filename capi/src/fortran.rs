//! The entries behind the Fortran module (`fortran/dfft.f90`, `bind(c)` interfaces): the
//! communicator as a Fortran handle (`MPI_Comm_f2c`), and every per-axis array in Fortran's
//! order, fastest axis first (the reverse of C's), so that a Fortran array `u(n(1), ...,
//! n(d))` is the C-order global array seen column-major. Grid dimensions are reversed alike.

use crate::agree::plan_agreed;
use crate::comm::borrow_fortran;
use crate::ffi::{grid, local_block_fortran, make_plan};
use crate::plan::{dfft_r2r_kind, DfftPlan, Kind, RawRequest};
use crate::status::dfft_error_message;
use mpi::ffi::RSMPI_Fint;
use std::ffi::{c_char, c_int, c_uint, CStr};

/// The Fortran constructors of one kind in both precisions.
macro_rules! fortran_constructors {
    ($double:ident, $single:ident, $kind:expr) => {
        fortran_constructors!(@one $double, $kind, false);
        fortran_constructors!(@one $single, $kind, true);
    };
    (@one $name:ident, $kind:expr, $single:expr) => {
        /// The Fortran module's constructor (arrays in Fortran's order, a Fortran
        /// communicator handle; `grid_dims` NULL when absent).
        ///
        /// # Safety
        /// As the C constructor of the same kind.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            d: c_int,
            n: *const isize,
            howmany: isize,
            comm: RSMPI_Fint,
            grid_rank: c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
            grid_dims: *const c_int,
        ) -> c_int {
            let raw = RawRequest { d, n, howmany, kinds: std::ptr::null(), grid_rank, grid_dims, flags, fortran: true };
            // SAFETY: the caller's contract, passed on.
            unsafe { make_plan(plan, || plan_agreed(raw.read($kind, $single), borrow_fortran(comm))) }
        }
    };
}

fortran_constructors!(dfft_f_plan_dft, dfftf_f_plan_dft, Kind::C2c);
fortran_constructors!(dfft_f_plan_dft_r2c, dfftf_f_plan_dft_r2c, Kind::R2c);

/// The Fortran real-to-real constructors.
macro_rules! fortran_r2r {
    ($name:ident, $single:expr) => {
        /// The Fortran module's real-to-real constructor (`kinds` in Fortran's order).
        ///
        /// # Safety
        /// As `dfft_plan_r2r`.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            d: c_int,
            n: *const isize,
            howmany: isize,
            kinds: *const dfft_r2r_kind,
            comm: RSMPI_Fint,
            grid_rank: c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
            grid_dims: *const c_int,
        ) -> c_int {
            let raw = RawRequest {
                d,
                n,
                howmany,
                kinds,
                grid_rank,
                grid_dims,
                flags,
                fortran: true,
            };
            // SAFETY: the caller's contract, passed on.
            unsafe {
                make_plan(plan, || {
                    plan_agreed(raw.read(Kind::R2r, $single), borrow_fortran(comm))
                })
            }
        }
    };
}

fortran_r2r!(dfft_f_plan_r2r, false);
fortran_r2r!(dfftf_f_plan_r2r, true);

/// `dfft_local_input` in Fortran's order.
///
/// # Safety
/// As `dfft_local_input`.
#[no_mangle]
pub unsafe extern "C" fn dfft_f_local_input(
    plan: *const DfftPlan,
    local_n: *mut isize,
    local_start: *mut isize,
    strides: *mut isize,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { local_block_fortran(plan, true, local_n, local_start, strides) }
}

/// `dfft_local_output` in Fortran's order.
///
/// # Safety
/// As `dfft_local_input`.
#[no_mangle]
pub unsafe extern "C" fn dfft_f_local_output(
    plan: *const DfftPlan,
    local_n: *mut isize,
    local_start: *mut isize,
    strides: *mut isize,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { local_block_fortran(plan, false, local_n, local_start, strides) }
}

/// `dfft_grid` in Fortran's order.
///
/// # Safety
/// As `dfft_grid`.
#[no_mangle]
pub unsafe extern "C" fn dfft_f_grid(
    plan: *const DfftPlan,
    grid_rank: *mut c_int,
    grid_dims: *mut c_int,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { grid(plan, grid_rank, grid_dims, true) }
}

/// `dfft_error_message(code)` copied into a Fortran `character(len=len)` buffer, blank-padded
/// (cut at `len`).
///
/// # Safety
/// `buffer` is NULL or has room for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn dfft_f_error_message(code: c_int, buffer: *mut c_char, len: c_int) {
    let Ok(len) = usize::try_from(len) else {
        return;
    };
    if buffer.is_null() || len == 0 {
        return;
    }
    // SAFETY: dfft_error_message never returns NULL; its strings end with a NUL.
    let message = unsafe { CStr::from_ptr(dfft_error_message(code)) }.to_bytes();
    let copied = message.len().min(len);
    // SAFETY: `buffer` has room for `len >= copied` bytes; the message is ours, so the ranges
    // do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr().cast::<c_char>(), buffer, copied);
        std::ptr::write_bytes(buffer.add(copied), b' ', len - copied);
    }
}
