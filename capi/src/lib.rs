//! # libdfft: the C API of dfft
//!
//! FFTW-MPI-shaped C calls over [`fft_core`]'s plans, built as `libdfft.so` and `libdfft.a`,
//! with the header `include/dfft.h` generated from this crate by cbindgen (`build.rs`; a test
//! fails when the checked-in copy is stale) and a Fortran module (`fortran/dfft.f90`).
//! Usage, the Fortran conventions and installation: `docs/c-fortran.md`.
//!
//! * Plans: `dfft_plan_dft`, `dfft_plan_dft_r2c`, `dfft_plan_r2r` and their single-precision
//!   `dfftf_` twins, over the caller's `MPI_Comm` (borrowed, never freed: the plans keep
//!   duplicates), with a grid request and flags; `dfft_destroy`.
//! * Blocks: `dfft_local_size`, `dfft_local_input`, `dfft_local_output`, `dfft_grid`,
//!   `dfft_local_in_place` (the one buffer of `DFFT_IN_PLACE` calls);
//!   `dfft_alloc_input`/`dfft_alloc_output` (shared-memory blocks on one node), `dfft_free`.
//! * Transforms: `dfft_forward`, `dfft_backward`.
//! * Errors: every call returns a code (`DFFT_SUCCESS` = 0); `dfft_error_message(code)` says
//!   what was wrong with which values. Nothing aborts the caller: a panic inside is caught
//!   and returned as `DFFT_ERROR_INTERNAL` (in builds with `panic = "unwind"`, the default of
//!   the release profile), never unwound across the FFI.

#![deny(clippy::undocumented_unsafe_blocks)]

mod agree;
mod blocks;
mod comm;
mod exec;
mod ffi;
mod fortran;
mod halo;
mod plan;
mod status;

pub use blocks::{dfft_alloc_input, dfft_alloc_output, dfft_free};
pub use exec::{dfft_backward, dfft_forward};
pub use ffi::{
    dfft_destroy, dfft_grid, dfft_local_in_place, dfft_local_input, dfft_local_output,
    dfft_local_size, dfft_plan_dft, dfft_plan_dft_axes, dfft_plan_dft_r2c, dfft_plan_dft_r2c_axes,
    dfft_plan_r2r, dfft_plan_with_groups, dfft_set_memory_limit, dfft_version, dfftf_plan_dft,
    dfftf_plan_dft_axes, dfftf_plan_dft_r2c, dfftf_plan_dft_r2c_axes, dfftf_plan_r2r,
};
pub use fortran::{
    dfft_f_error_message, dfft_f_grid, dfft_f_local_input, dfft_f_local_output, dfft_f_plan_dft,
    dfft_f_plan_dft_r2c, dfft_f_plan_r2r, dfftf_f_plan_dft, dfftf_f_plan_dft_r2c, dfftf_f_plan_r2r,
};
pub use halo::{dfft_halo_destroy, dfft_halo_exchange, dfft_halo_local, dfft_halo_plan, DfftHalo};
pub use plan::*;
pub use status::{
    dfft_error_message, guard_for_tests, DFFT_ERROR_BAD_ARGUMENT, DFFT_ERROR_BAD_BUFFER,
    DFFT_ERROR_BAD_GRID, DFFT_ERROR_INTERNAL, DFFT_ERROR_IN_PLACE, DFFT_ERROR_MEMORY,
    DFFT_ERROR_MPI, DFFT_ERROR_NULL_POINTER, DFFT_ERROR_OTHER_RANK, DFFT_ERROR_UNKNOWN_BLOCK,
    DFFT_SUCCESS,
};
