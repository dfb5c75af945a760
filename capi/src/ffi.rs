//! The C entry points that make, query and destroy plans.

use crate::agree::plan_agreed;
use crate::comm::borrow;
use crate::plan::{dfft_r2r_kind, DfftPlan, Kind, RawRequest};
use crate::status::{guard, Failure, Outcome, DFFT_SUCCESS};
use mpi::ffi::MPI_Comm;
use std::ffi::{c_char, c_int, c_uint};

/// Writes the new plan (or NULL on failure) to `out`.
///
/// # Safety
/// `out` is NULL (refused) or writable.
pub(crate) unsafe fn make_plan(
    out: *mut *mut DfftPlan,
    body: impl FnOnce() -> Outcome<DfftPlan>,
) -> c_int {
    if !out.is_null() {
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { out.write(std::ptr::null_mut()) };
    }
    guard(|| {
        if out.is_null() {
            return Err(Failure::null("plan (the output argument)"));
        }
        let plan = Box::into_raw(Box::new(body()?));
        // SAFETY: as above.
        unsafe { out.write(plan) };
        Ok(())
    })
}

/// Reads a C constructor's arguments (the array: `d`, `n`, `howmany` and the r2r `kinds`;
/// the grid: `grid_rank` and `grid_dims`) and makes the plan.
///
/// # Safety
/// As the C constructors.
unsafe fn construct(
    kind: Kind,
    single: bool,
    (d, n, howmany, kinds): (c_int, *const isize, isize, *const dfft_r2r_kind),
    comm: MPI_Comm,
    (grid_rank, grid_dims): (c_int, *const c_int),
    flags: c_uint,
    plan: *mut *mut DfftPlan,
) -> c_int {
    let raw = RawRequest {
        d,
        n,
        howmany,
        kinds,
        grid_rank,
        grid_dims,
        flags,
        fortran: false,
    };
    // SAFETY: the caller's contract, passed on.
    unsafe { make_plan(plan, || plan_agreed(raw.read(kind, single), borrow(comm))) }
}

/// Reads a partial transform's arguments (`naxes` axes in `axes`) and makes the plan.
///
/// # Safety
/// As the C constructors with axes.
#[allow(clippy::too_many_arguments)]
unsafe fn construct_axes(
    kind: Kind,
    single: bool,
    (d, n, howmany): (c_int, *const isize, isize),
    (naxes, axes): (c_int, *const c_int),
    comm: MPI_Comm,
    (grid_rank, grid_dims): (c_int, *const c_int),
    flags: c_uint,
    plan: *mut *mut DfftPlan,
) -> c_int {
    let raw = RawRequest {
        d,
        n,
        howmany,
        kinds: std::ptr::null(),
        grid_rank,
        grid_dims,
        flags,
        fortran: false,
    };
    // SAFETY: the caller's contract, passed on.
    unsafe {
        make_plan(plan, || {
            raw.read(kind, single)?
                .only_axes(naxes, axes)?
                .plan(&borrow(comm)?)
        })
    }
}

/// The plan constructors of one precision (`$single`), named as FFTW names its own:
/// `dfft_plan_*` for `double`, `dfftf_plan_*` for `float`. cbindgen reads items, not macro
/// expansions, so the header declares them with the C macro `DFFT_DEFINE_PLANS` (in
/// `cbindgen.toml`'s trailer, which documents each), as FFTW's `fftw3.h` declares its
/// precisions with `FFTW_DEFINE_API`; `tests/header.rs` checks every symbol against it.
macro_rules! plan_constructors {
    (
        $single:expr,
        [$dft:ident, $dft_r2c:ident, $r2r:ident],
        [$dft_axes:ident, $dft_r2c_axes:ident]
    ) => {
        /// A complex-to-complex plan (see `DFFT_DEFINE_PLANS` in the header).
        ///
        /// # Safety
        /// `n` points to `d` extents, `grid_dims` is NULL or points to `grid_rank` entries,
        /// `comm` is a live communicator and `plan` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $dft(
            d: c_int,
            n: *const isize,
            howmany: isize,
            comm: MPI_Comm,
            grid_rank: c_int,
            grid_dims: *const c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
        ) -> c_int {
            let kinds = std::ptr::null();
            let grid = (grid_rank, grid_dims);
            // SAFETY: the caller's contract, passed on.
            unsafe {
                construct(
                    Kind::C2c,
                    $single,
                    (d, n, howmany, kinds),
                    comm,
                    grid,
                    flags,
                    plan,
                )
            }
        }

        /// A real-to-complex plan (see `DFFT_DEFINE_PLANS` in the header).
        ///
        /// # Safety
        /// As the complex-to-complex constructor.
        #[no_mangle]
        pub unsafe extern "C" fn $dft_r2c(
            d: c_int,
            n: *const isize,
            howmany: isize,
            comm: MPI_Comm,
            grid_rank: c_int,
            grid_dims: *const c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
        ) -> c_int {
            let kinds = std::ptr::null();
            let grid = (grid_rank, grid_dims);
            // SAFETY: the caller's contract, passed on.
            unsafe {
                construct(
                    Kind::R2c,
                    $single,
                    (d, n, howmany, kinds),
                    comm,
                    grid,
                    flags,
                    plan,
                )
            }
        }

        /// A real-to-real plan (see `DFFT_DEFINE_PLANS` in the header).
        ///
        /// # Safety
        /// `n` and `kinds` point to `d` entries; otherwise as the complex-to-complex
        /// constructor.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $r2r(
            d: c_int,
            n: *const isize,
            howmany: isize,
            kinds: *const dfft_r2r_kind,
            comm: MPI_Comm,
            grid_rank: c_int,
            grid_dims: *const c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
        ) -> c_int {
            let grid = (grid_rank, grid_dims);
            // SAFETY: the caller's contract, passed on.
            unsafe {
                construct(
                    Kind::R2r,
                    $single,
                    (d, n, howmany, kinds),
                    comm,
                    grid,
                    flags,
                    plan,
                )
            }
        }
        /// A complex-to-complex plan along the listed axes only (see `DFFT_DEFINE_PLANS`).
        ///
        /// # Safety
        /// `axes` points to `naxes` entries; otherwise as the complex-to-complex
        /// constructor.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $dft_axes(
            d: c_int,
            n: *const isize,
            howmany: isize,
            naxes: c_int,
            axes: *const c_int,
            comm: MPI_Comm,
            grid_rank: c_int,
            grid_dims: *const c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
        ) -> c_int {
            let (array, listed, grid) = ((d, n, howmany), (naxes, axes), (grid_rank, grid_dims));
            // SAFETY: the caller's contract, passed on.
            unsafe { construct_axes(Kind::C2c, $single, array, listed, comm, grid, flags, plan) }
        }

        /// A real-to-complex plan along the listed axes only (see `DFFT_DEFINE_PLANS`).
        ///
        /// # Safety
        /// As the complex-to-complex constructor along listed axes.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $dft_r2c_axes(
            d: c_int,
            n: *const isize,
            howmany: isize,
            naxes: c_int,
            axes: *const c_int,
            comm: MPI_Comm,
            grid_rank: c_int,
            grid_dims: *const c_int,
            flags: c_uint,
            plan: *mut *mut DfftPlan,
        ) -> c_int {
            let (array, listed, grid) = ((d, n, howmany), (naxes, axes), (grid_rank, grid_dims));
            // SAFETY: the caller's contract, passed on.
            unsafe { construct_axes(Kind::R2c, $single, array, listed, comm, grid, flags, plan) }
        }
    };
}

plan_constructors!(
    false,
    [dfft_plan_dft, dfft_plan_dft_r2c, dfft_plan_r2r],
    [dfft_plan_dft_axes, dfft_plan_dft_r2c_axes]
);
plan_constructors!(
    true,
    [dfftf_plan_dft, dfftf_plan_dft_r2c, dfftf_plan_r2r],
    [dfftf_plan_dft_axes, dfftf_plan_dft_r2c_axes]
);

/// The plan as `&`, or the NULL failure.
///
/// # Safety
/// `plan` is NULL or a live plan.
pub(crate) unsafe fn plan_ref<'a>(plan: *const DfftPlan) -> Outcome<&'a DfftPlan> {
    // SAFETY: the caller's contract.
    unsafe { plan.as_ref() }.ok_or_else(|| Failure::null("plan"))
}

/// Writes `values` to `out` unless it is NULL.
///
/// # Safety
/// `out` is NULL or points to `values.len()` writable elements.
pub(crate) unsafe fn write_opt<E: Copy>(out: *mut E, values: &[E]) {
    if !out.is_null() {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), out, values.len()) };
    }
}

/// This rank's element counts: `*in_count` elements of the forward input (real for r2c and
/// r2r plans, complex for c2c) and `*out_count` of the forward output, all `howmany` fields
/// included. Allocate at least these (or use `dfft_alloc_input`/`dfft_alloc_output`). Either
/// pointer may be NULL. Local; no communication.
///
/// # Safety
/// `plan` is NULL or a live plan; the others NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dfft_local_size(
    plan: *const DfftPlan,
    in_count: *mut isize,
    out_count: *mut isize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let plan = unsafe { plan_ref(plan) }?;
        let (input, output) = plan.counts();
        // SAFETY: the caller's contract (one element each, or NULL).
        unsafe {
            write_opt(in_count, &[input as isize]);
            write_opt(out_count, &[output as isize]);
        }
        Ok(())
    })
}

/// This rank's element count of the one buffer of an in-place call (`dfft_forward(plan, buf,
/// buf)` on a plan made with `DFFT_IN_PLACE`): complex elements for c2c, real ones for r2c
/// (the real rows padded, FFTW's in-place layout: see `DFFT_IN_PLACE`) and r2r; 0 for a plan
/// made without the flag. Allocate this many. Local; no communication.
///
/// # Safety
/// `plan` is NULL or a live plan; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dfft_local_in_place(plan: *const DfftPlan, count: *mut isize) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let plan = unsafe { plan_ref(plan) }?;
        // SAFETY: the caller's contract (one element, or NULL).
        unsafe { write_opt(count, &[plan.in_place_count() as isize]) };
        Ok(())
    })
}

/// Writes one layout's block of this rank (`d` entries per array, C order; NULL skips one).
///
/// # Safety
/// As `dfft_local_input`.
unsafe fn local_block(
    plan: *const DfftPlan,
    input: bool,
    local_n: *mut isize,
    local_start: *mut isize,
    strides: *mut isize,
    fortran: bool,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let mut block = unsafe { plan_ref(plan) }?.block(input);
        if fortran {
            block.local_n.reverse();
            block.start.reverse();
            block.strides.reverse();
        }
        // SAFETY: the caller's contract: each non-NULL array holds `d` entries.
        unsafe {
            write_opt(local_n, &block.local_n);
            write_opt(local_start, &block.start);
            write_opt(strides, &block.strides);
        }
        Ok(())
    })
}

/// This rank's block of the forward input (and backward output), one entry per axis in C
/// order (the global axis order): `local_n[i]` elements along axis i starting at global index
/// `local_start[i]`, element `(j_0, ..., j_{d-1})` of the block (0-based within it) at
/// `sum_i j_i * strides[i]` elements from the start of the field. Field f of `howmany` starts
/// at `f * prod(local_n)`. The input layout is C order with the leading axes split over the
/// grid, like FFTW-MPI's slabs and pencils. Any array may be NULL. A rank may own nothing
/// (some `local_n[i] == 0`). Local.
///
/// # Safety
/// `plan` is NULL or a live plan; each non-NULL array has room for `d` entries.
#[no_mangle]
pub unsafe extern "C" fn dfft_local_input(
    plan: *const DfftPlan,
    local_n: *mut isize,
    local_start: *mut isize,
    strides: *mut isize,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { local_block(plan, true, local_n, local_start, strides, false) }
}

/// This rank's block of the forward output (and backward input), as `dfft_local_input`
/// describes it: extents along the spectral shape (the last axis `n/2 + 1` for r2c); with
/// `DFFT_TRANSPOSED_OUT` the strides are not C order's (the memory order of the last
/// pencil), so index with the strides.
///
/// # Safety
/// As `dfft_local_input`.
#[no_mangle]
pub unsafe extern "C" fn dfft_local_output(
    plan: *const DfftPlan,
    local_n: *mut isize,
    local_start: *mut isize,
    strides: *mut isize,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { local_block(plan, false, local_n, local_start, strides, false) }
}

/// The processor grid the plan uses: `*grid_rank` dimensions (1 to d-1) written to
/// `grid_dims` (room for d-1 entries; either pointer may be NULL). Grid dimension j splits
/// axis j of the input layout. Local.
///
/// # Safety
/// `plan` is NULL or a live plan; `grid_rank` NULL or writable; `grid_dims` NULL or with room
/// for d-1 entries.
#[no_mangle]
pub unsafe extern "C" fn dfft_grid(
    plan: *const DfftPlan,
    grid_rank: *mut c_int,
    grid_dims: *mut c_int,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { grid(plan, grid_rank, grid_dims, false) }
}

/// `dfft_grid`, optionally in Fortran's order.
///
/// # Safety
/// As `dfft_grid`.
pub(crate) unsafe fn grid(
    plan: *const DfftPlan,
    grid_rank: *mut c_int,
    grid_dims: *mut c_int,
    fortran: bool,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let mut dims: Vec<c_int> = unsafe { plan_ref(plan) }?
            .grid_dims()
            .into_iter()
            .map(|g| g as c_int)
            .collect();
        if fortran {
            dims.reverse();
        }
        // SAFETY: the caller's contract.
        unsafe {
            write_opt(grid_rank, &[dims.len() as c_int]);
            write_opt(grid_dims, &dims);
        }
        Ok(())
    })
}

/// Destroys a plan (NULL: nothing to do). Collective over the plan's communicator (it frees
/// the communicators the plan duplicated); call it on every rank before `MPI_Finalize`.
///
/// # Safety
/// `plan` is NULL or a live plan, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn dfft_destroy(plan: *mut DfftPlan) -> c_int {
    guard(|| {
        if !plan.is_null() {
            // SAFETY: a live plan from `Box::into_raw` in `make_plan`, destroyed once.
            drop(unsafe { Box::from_raw(plan) });
        }
        Ok(())
    })
}

/// Sets the memory per rank (bytes) that the plans constructed afterwards may use; 0 (the
/// default) checks nothing. A constructor estimates its work and message buffers, FFT
/// scratch and the caller's two blocks before allocating anything and returns
/// `DFFT_ERROR_MEMORY` on every rank above the smallest limit of its ranks. dfft reads no
/// environment variable: a program that wants one reads it and calls this. Local; call it on
/// every rank. Returns `DFFT_SUCCESS`.
#[no_mangle]
pub extern "C" fn dfft_set_memory_limit(bytes: u64) -> c_int {
    crate::plan::MEMORY_LIMIT.store(bytes, std::sync::atomic::Ordering::Relaxed);
    DFFT_SUCCESS
}

/// Sets how the plans constructed afterwards split a batch (`howmany` fields) over the
/// ranks, like FFTW's `fftw_plan_with_nthreads`: `groups` = G ≥ 1 has G groups of P/G ranks
/// transform about howmany/G fields each on their own sub-communicators (1, the default: every
/// rank transforms every field); 0 lets the complexity model choose. The blocks are the same
/// either way. A G that does not divide P or exceeds `howmany`, or with `DFFT_IN_PLACE` or
/// `DFFT_TRANSPOSED_OUT`, makes the constructor return `DFFT_ERROR_BAD_ARGUMENT` on every
/// rank. Local; call it on every rank. Returns `DFFT_SUCCESS`, or `DFFT_ERROR_BAD_ARGUMENT`
/// for a negative `groups` (nothing changes).
#[no_mangle]
pub extern "C" fn dfft_plan_with_groups(groups: c_int) -> c_int {
    crate::status::guard(|| {
        let g = u64::try_from(groups).map_err(|_| {
            crate::status::Failure::argument(format!(
                "groups = {groups}: must be 0 (the model chooses) or a group count >= 1"
            ))
        })?;
        crate::plan::GROUPS.store(g, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })
}

/// The library's version, e.g. `"0.1.0"`.
#[no_mangle]
pub extern "C" fn dfft_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Writes one layout's block in Fortran's order (the Fortran module's `dfft_local_*`).
///
/// # Safety
/// As `dfft_local_input`.
pub(crate) unsafe fn local_block_fortran(
    plan: *const DfftPlan,
    input: bool,
    local_n: *mut isize,
    local_start: *mut isize,
    strides: *mut isize,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { local_block(plan, input, local_n, local_start, strides, true) }
}
