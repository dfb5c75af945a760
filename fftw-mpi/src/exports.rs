//! The exported symbols: FFTW-MPI's API in double (`fftw_`) and single (`fftwf_`) precision,
//! its Fortran 2003 entry points (`*_f03`, taking a Fortran communicator handle), and FFTW's
//! generic plan calls, written once in [`fftw_mpi_api!`] as FFTW's own header writes its
//! prototypes once (`FFTW_MPI_DEFINE_API`). Everything here converts arguments and calls
//! [`crate::api`].

use crate::api::{self, Comm, PlanCall};
use crate::problem::Transform;
use crate::serial::next_functions;
use fft_core::Precision;
use mpi::ffi::RSMPI_Fint as Fint;
use num_complex::Complex;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// Defines one precision's functions. `$x` is the prefix (`fftw_`, `fftwf_`), `$r` the real
/// type, `$prec` the [`Precision`] and `$next` the module of the real FFTW's functions.
macro_rules! fftw_mpi_api {
    ($x:ident, $r:ty, $prec:expr, $next:ident) => { pastey::paste! {

/// The real FFTW's generic plan calls of this precision.
mod $next {
    use super::*;
    next_functions! {
        pub fn [<$x execute>](p: *mut c_void);
        pub fn [<$x destroy_plan>](p: *mut c_void);
        pub fn [<$x execute_dft>](p: *mut c_void, i: *mut Complex<$r>, o: *mut Complex<$r>);
        pub fn [<$x execute_split_dft>](p: *mut c_void, ri: *mut $r, ii: *mut $r, ro: *mut $r, io: *mut $r);
        pub fn [<$x execute_dft_r2c>](p: *mut c_void, i: *mut $r, o: *mut Complex<$r>);
        pub fn [<$x execute_split_dft_r2c>](p: *mut c_void, i: *mut $r, ro: *mut $r, io: *mut $r);
        pub fn [<$x execute_dft_c2r>](p: *mut c_void, i: *mut Complex<$r>, o: *mut $r);
        pub fn [<$x execute_split_dft_c2r>](p: *mut c_void, ri: *mut $r, ii: *mut $r, o: *mut $r);
        pub fn [<$x execute_r2r>](p: *mut c_void, i: *mut $r, o: *mut $r);
        pub fn [<$x flops>](p: *const c_void, add: *mut f64, mul: *mut f64, fma: *mut f64);
        pub fn [<$x estimate_cost>](p: *const c_void) -> f64;
        pub fn [<$x cost>](p: *const c_void) -> f64;
        pub fn [<$x print_plan>](p: *const c_void);
        pub fn [<$x fprint_plan>](p: *const c_void, f: *mut libc::FILE);
        pub fn [<$x sprint_plan>](p: *const c_void) -> *mut c_char;
        pub fn [<$x cleanup>]();
        pub fn [<$x export_wisdom_to_string>]() -> *mut c_char;
        pub fn [<$x import_wisdom_from_string>](s: *const c_char) -> c_int;
    }
    pub static PLAN_WITH_NTHREADS: crate::serial::NextSymbol =
        crate::serial::NextSymbol::new(
            // SAFETY: the literal ends with its NUL.
            unsafe { std::ffi::CStr::from_bytes_with_nul_unchecked(
                concat!(stringify!([<$x plan_with_nthreads>]), "\0").as_bytes()) });
}

// ---- FFTW's generic plan calls: this library's plans here, the others to the real FFTW.

/// `fftw_execute`: runs the plan (collective for an MPI plan).
///
/// # Safety
/// FFTW's contract: a live plan.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute>](p: *mut c_void) {
    if !api::execute(p) {
        // SAFETY: not ours: the real FFTW's plan.
        unsafe { $next::[<$x execute>](p) }
    }
}

/// `fftw_destroy_plan` (collective for an MPI plan).
///
/// # Safety
/// FFTW's contract: a live plan or NULL.
#[no_mangle]
pub unsafe extern "C" fn [<$x destroy_plan>](p: *mut c_void) {
    if !api::destroy(p) {
        // SAFETY: not ours: the real FFTW's plan (or NULL, which FFTW ignores).
        unsafe { $next::[<$x destroy_plan>](p) }
    }
}

/// `fftw_execute_dft`: the plan on other arrays.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_dft>](p: *mut c_void, i: *mut Complex<$r>, o: *mut Complex<$r>) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_dft>](p, i, o) }
    }
}

/// `fftw_execute_split_dft` (serial plans only).
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_split_dft>](p: *mut c_void, ri: *mut $r, ii: *mut $r, ro: *mut $r, io: *mut $r) {
    if !api::refuse_split(p, stringify!([<$x execute_split_dft>])) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_split_dft>](p, ri, ii, ro, io) }
    }
}

/// `fftw_execute_dft_r2c`: the plan on other arrays.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_dft_r2c>](p: *mut c_void, i: *mut $r, o: *mut Complex<$r>) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_dft_r2c>](p, i, o) }
    }
}

/// `fftw_execute_split_dft_r2c` (serial plans only).
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_split_dft_r2c>](p: *mut c_void, i: *mut $r, ro: *mut $r, io: *mut $r) {
    if !api::refuse_split(p, stringify!([<$x execute_split_dft_r2c>])) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_split_dft_r2c>](p, i, ro, io) }
    }
}

/// `fftw_execute_dft_c2r`: the plan on other arrays.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_dft_c2r>](p: *mut c_void, i: *mut Complex<$r>, o: *mut $r) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_dft_c2r>](p, i, o) }
    }
}

/// `fftw_execute_split_dft_c2r` (serial plans only).
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_split_dft_c2r>](p: *mut c_void, ri: *mut $r, ii: *mut $r, o: *mut $r) {
    if !api::refuse_split(p, stringify!([<$x execute_split_dft_c2r>])) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_split_dft_c2r>](p, ri, ii, o) }
    }
}

/// `fftw_execute_r2r`: the plan on other arrays.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x execute_r2r>](p: *mut c_void, i: *mut $r, o: *mut $r) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_r2r>](p, i, o) }
    }
}

/// `fftw_flops`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x flops>](p: *const c_void, add: *mut f64, mul: *mut f64, fma: *mut f64) {
    // SAFETY: the caller's contract.
    if !unsafe { api::flops(p as *mut c_void, add, mul, fma) } {
        // SAFETY: not ours.
        unsafe { $next::[<$x flops>](p, add, mul, fma) }
    }
}

/// `fftw_estimate_cost`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x estimate_cost>](p: *const c_void) -> f64 {
    // SAFETY: not ours: the real FFTW's plan.
    api::cost(p as *mut c_void).unwrap_or_else(|| unsafe { $next::[<$x estimate_cost>](p) })
}

/// `fftw_cost`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x cost>](p: *const c_void) -> f64 {
    // SAFETY: not ours: the real FFTW's plan.
    api::cost(p as *mut c_void).unwrap_or_else(|| unsafe { $next::[<$x cost>](p) })
}

/// `fftw_print_plan`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x print_plan>](p: *const c_void) {
    // SAFETY: FFTW's contract: C's stdout is the program's.
    if !unsafe { api::print(p as *mut c_void) } {
        // SAFETY: not ours.
        unsafe { $next::[<$x print_plan>](p) }
    }
}

/// `fftw_fprint_plan`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x fprint_plan>](p: *const c_void, f: *mut libc::FILE) {
    // SAFETY: the caller's contract.
    if !unsafe { api::fprint(p as *mut c_void, f) } {
        // SAFETY: not ours.
        unsafe { $next::[<$x fprint_plan>](p, f) }
    }
}

/// `fftw_sprint_plan`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x sprint_plan>](p: *const c_void) -> *mut c_char {
    // SAFETY: not ours: the real FFTW's plan.
    api::sprint(p as *mut c_void).unwrap_or_else(|| unsafe { $next::[<$x sprint_plan>](p) })
}

/// `fftw_plan_with_nthreads`: the threads per process of later plans, this library's and
/// (when the program links FFTW's threads library) the real FFTW's.
#[no_mangle]
pub extern "C" fn [<$x plan_with_nthreads>](n: c_int) {
    crate::threads::NTHREADS[api::precision_index($prec)]
        .store(n.max(1) as usize, std::sync::atomic::Ordering::Relaxed);
    crate::serial::plan_with_nthreads(&$next::PLAN_WITH_NTHREADS, n);
}

// ---- FFTW-MPI.

/// `fftw_mpi_init`: nothing to set up (FFTW registers its MPI planners here).
#[no_mangle]
pub extern "C" fn [<$x mpi_init>]() {}

/// `fftw_mpi_cleanup`: FFTW's `fftw_cleanup` (the program's serial FFTW, its wisdom).
#[no_mangle]
pub extern "C" fn [<$x mpi_cleanup>]() {
    // SAFETY: FFTW's cleanup takes no arguments.
    unsafe { $next::[<$x cleanup>]() }
}

/// `fftw_mpi_local_size_many_transposed`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_many_transposed>](
    rnk: c_int, n: *const isize, howmany: isize, block0: isize, block1: isize, comm: Comm,
    local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize,
) -> isize {
    // SAFETY: the caller's contract.
    unsafe { api::local_size_many_transposed(rnk, n, howmany, block0, block1, comm,
        local_n0, local_0_start, local_n1, local_1_start) }
}

/// `fftw_mpi_local_size_many`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_many>](
    rnk: c_int, n: *const isize, howmany: isize, block0: isize, comm: Comm,
    local_n0: *mut isize, local_0_start: *mut isize,
) -> isize {
    let (mut n1, mut s1) = (0, 0);
    // SAFETY: the caller's contract; `n` holds `rnk` extents.
    let whole = if rnk > 1 { unsafe { *n.add(1) } } else { 0 };
    // SAFETY: the caller's contract.
    unsafe { api::local_size_many_transposed(rnk, n, howmany, block0, whole, comm,
        local_n0, local_0_start, &mut n1, &mut s1) }
}

/// `fftw_mpi_local_size_transposed`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_transposed>](
    rnk: c_int, n: *const isize, comm: Comm,
    local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize,
) -> isize {
    // SAFETY: the caller's contract.
    unsafe { api::local_size_many_transposed(rnk, n, 1, 0, 0, comm,
        local_n0, local_0_start, local_n1, local_1_start) }
}

/// `fftw_mpi_local_size`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size>](
    rnk: c_int, n: *const isize, comm: Comm, local_n0: *mut isize, local_0_start: *mut isize,
) -> isize {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_local_size_many>](rnk, n, 1, 0, comm, local_n0, local_0_start) }
}

/// `fftw_mpi_local_size_many_1d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_many_1d>](
    n0: isize, howmany: isize, comm: Comm, sign: c_int, flags: c_uint,
    local_ni: *mut isize, local_i_start: *mut isize, local_no: *mut isize, local_o_start: *mut isize,
) -> isize {
    // SAFETY: the caller's contract.
    unsafe { api::local_size_many_1d(n0, howmany, comm, sign, flags,
        local_ni, local_i_start, local_no, local_o_start) }
}

/// `fftw_mpi_local_size_1d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_1d>](
    n0: isize, comm: Comm, sign: c_int, flags: c_uint,
    local_ni: *mut isize, local_i_start: *mut isize, local_no: *mut isize, local_o_start: *mut isize,
) -> isize {
    // SAFETY: the caller's contract.
    unsafe { api::local_size_many_1d(n0, 1, comm, sign, flags,
        local_ni, local_i_start, local_no, local_o_start) }
}

/// `fftw_mpi_local_size_2d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_2d>](
    n0: isize, n1: isize, comm: Comm, local_n0: *mut isize, local_0_start: *mut isize,
) -> isize {
    let n = [n0, n1];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_local_size>](2, n.as_ptr(), comm, local_n0, local_0_start) }
}

/// `fftw_mpi_local_size_2d_transposed`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_2d_transposed>](
    n0: isize, n1: isize, comm: Comm,
    local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize,
) -> isize {
    let n = [n0, n1];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_local_size_transposed>](2, n.as_ptr(), comm,
        local_n0, local_0_start, local_n1, local_1_start) }
}

/// `fftw_mpi_local_size_3d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_3d>](
    n0: isize, n1: isize, n2: isize, comm: Comm, local_n0: *mut isize, local_0_start: *mut isize,
) -> isize {
    let n = [n0, n1, n2];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_local_size>](3, n.as_ptr(), comm, local_n0, local_0_start) }
}

/// `fftw_mpi_local_size_3d_transposed`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_local_size_3d_transposed>](
    n0: isize, n1: isize, n2: isize, comm: Comm,
    local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize,
) -> isize {
    let n = [n0, n1, n2];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_local_size_transposed>](3, n.as_ptr(), comm,
        local_n0, local_0_start, local_n1, local_1_start) }
}

/// `fftw_mpi_plan_many_transpose`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_many_transpose>](
    n0: isize, n1: isize, howmany: isize, block0: isize, block1: isize,
    i: *mut $r, o: *mut $r, comm: Comm, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { crate::transpose::plan(stringify!([<$x mpi_plan_many_transpose>]),
        [n0, n1], howmany, [block0, block1], i.cast(), o.cast(), comm, flags, $prec) }
}

/// `fftw_mpi_plan_transpose`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_transpose>](
    n0: isize, n1: isize, i: *mut $r, o: *mut $r, comm: Comm, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_many_transpose>](n0, n1, 1, 0, 0, i, o, comm, flags) }
}

/// `fftw_mpi_plan_many_dft`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_many_dft>](
    rnk: c_int, n: *const isize, howmany: isize, block: isize, tblock: isize,
    i: *mut Complex<$r>, o: *mut Complex<$r>, comm: Comm, sign: c_int, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { api::plan(PlanCall {
        name: stringify!([<$x mpi_plan_many_dft>]), transform: Transform::Dft { sign },
        rnk, n, howmany, block: [block, tblock], input: i.cast(), output: o.cast(), comm,
        flags, precision: $prec,
    }) }
}

/// `fftw_mpi_plan_dft`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft>](
    rnk: c_int, n: *const isize, i: *mut Complex<$r>, o: *mut Complex<$r>, comm: Comm,
    sign: c_int, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_many_dft>](rnk, n, 1, 0, 0, i, o, comm, sign, flags) }
}

/// `fftw_mpi_plan_dft_1d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_1d>](
    n0: isize, i: *mut Complex<$r>, o: *mut Complex<$r>, comm: Comm, sign: c_int, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft>](1, &n0, i, o, comm, sign, flags) }
}

/// `fftw_mpi_plan_dft_2d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_2d>](
    n0: isize, n1: isize, i: *mut Complex<$r>, o: *mut Complex<$r>, comm: Comm, sign: c_int,
    flags: c_uint,
) -> *mut c_void {
    let n = [n0, n1];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft>](2, n.as_ptr(), i, o, comm, sign, flags) }
}

/// `fftw_mpi_plan_dft_3d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_3d>](
    n0: isize, n1: isize, n2: isize, i: *mut Complex<$r>, o: *mut Complex<$r>, comm: Comm,
    sign: c_int, flags: c_uint,
) -> *mut c_void {
    let n = [n0, n1, n2];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft>](3, n.as_ptr(), i, o, comm, sign, flags) }
}

/// `fftw_mpi_plan_many_r2r`.
///
/// # Safety
/// FFTW's contract: `kind` holds `rnk` kinds.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_many_r2r>](
    rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize,
    i: *mut $r, o: *mut $r, comm: Comm, kind: *const c_int, flags: c_uint,
) -> *mut c_void {
    let kinds = if rnk > 0 && !kind.is_null() {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(kind, rnk as usize) }.to_vec()
    } else {
        vec![]
    };
    // SAFETY: the caller's contract.
    unsafe { api::plan(PlanCall {
        name: stringify!([<$x mpi_plan_many_r2r>]), transform: Transform::R2r(kinds),
        rnk, n, howmany, block: [iblock, oblock], input: i.cast(), output: o.cast(), comm,
        flags, precision: $prec,
    }) }
}

/// `fftw_mpi_plan_r2r`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_r2r>](
    rnk: c_int, n: *const isize, i: *mut $r, o: *mut $r, comm: Comm, kind: *const c_int,
    flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_many_r2r>](rnk, n, 1, 0, 0, i, o, comm, kind, flags) }
}

/// `fftw_mpi_plan_r2r_2d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_r2r_2d>](
    n0: isize, n1: isize, i: *mut $r, o: *mut $r, comm: Comm, kind0: c_int, kind1: c_int,
    flags: c_uint,
) -> *mut c_void {
    let (n, k) = ([n0, n1], [kind0, kind1]);
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_r2r>](2, n.as_ptr(), i, o, comm, k.as_ptr(), flags) }
}

/// `fftw_mpi_plan_r2r_3d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_r2r_3d>](
    n0: isize, n1: isize, n2: isize, i: *mut $r, o: *mut $r, comm: Comm, kind0: c_int,
    kind1: c_int, kind2: c_int, flags: c_uint,
) -> *mut c_void {
    let (n, k) = ([n0, n1, n2], [kind0, kind1, kind2]);
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_r2r>](3, n.as_ptr(), i, o, comm, k.as_ptr(), flags) }
}

/// `fftw_mpi_plan_many_dft_r2c`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_many_dft_r2c>](
    rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize,
    i: *mut $r, o: *mut Complex<$r>, comm: Comm, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { api::plan(PlanCall {
        name: stringify!([<$x mpi_plan_many_dft_r2c>]), transform: Transform::R2c,
        rnk, n, howmany, block: [iblock, oblock], input: i.cast(), output: o.cast(), comm,
        flags, precision: $prec,
    }) }
}

/// `fftw_mpi_plan_dft_r2c`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_r2c>](
    rnk: c_int, n: *const isize, i: *mut $r, o: *mut Complex<$r>, comm: Comm, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_many_dft_r2c>](rnk, n, 1, 0, 0, i, o, comm, flags) }
}

/// `fftw_mpi_plan_dft_r2c_2d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_r2c_2d>](
    n0: isize, n1: isize, i: *mut $r, o: *mut Complex<$r>, comm: Comm, flags: c_uint,
) -> *mut c_void {
    let n = [n0, n1];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft_r2c>](2, n.as_ptr(), i, o, comm, flags) }
}

/// `fftw_mpi_plan_dft_r2c_3d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_r2c_3d>](
    n0: isize, n1: isize, n2: isize, i: *mut $r, o: *mut Complex<$r>, comm: Comm, flags: c_uint,
) -> *mut c_void {
    let n = [n0, n1, n2];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft_r2c>](3, n.as_ptr(), i, o, comm, flags) }
}

/// `fftw_mpi_plan_many_dft_c2r`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_many_dft_c2r>](
    rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize,
    i: *mut Complex<$r>, o: *mut $r, comm: Comm, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { api::plan(PlanCall {
        name: stringify!([<$x mpi_plan_many_dft_c2r>]), transform: Transform::C2r,
        rnk, n, howmany, block: [iblock, oblock], input: i.cast(), output: o.cast(), comm,
        flags, precision: $prec,
    }) }
}

/// `fftw_mpi_plan_dft_c2r`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_c2r>](
    rnk: c_int, n: *const isize, i: *mut Complex<$r>, o: *mut $r, comm: Comm, flags: c_uint,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_many_dft_c2r>](rnk, n, 1, 0, 0, i, o, comm, flags) }
}

/// `fftw_mpi_plan_dft_c2r_2d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_c2r_2d>](
    n0: isize, n1: isize, i: *mut Complex<$r>, o: *mut $r, comm: Comm, flags: c_uint,
) -> *mut c_void {
    let n = [n0, n1];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft_c2r>](2, n.as_ptr(), i, o, comm, flags) }
}

/// `fftw_mpi_plan_dft_c2r_3d`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_plan_dft_c2r_3d>](
    n0: isize, n1: isize, n2: isize, i: *mut Complex<$r>, o: *mut $r, comm: Comm, flags: c_uint,
) -> *mut c_void {
    let n = [n0, n1, n2];
    // SAFETY: the caller's contract.
    unsafe { [<$x mpi_plan_dft_c2r>](3, n.as_ptr(), i, o, comm, flags) }
}

/// `fftw_mpi_gather_wisdom`: every process's wisdom into process 0's.
#[no_mangle]
pub extern "C" fn [<$x mpi_gather_wisdom>](comm: Comm) {
    crate::wisdom::gather(comm, crate::wisdom::Wisdom {
        export: $next::[<$x export_wisdom_to_string>],
        import: $next::[<$x import_wisdom_from_string>],
    });
}

/// `fftw_mpi_broadcast_wisdom`: process 0's wisdom into every process's.
#[no_mangle]
pub extern "C" fn [<$x mpi_broadcast_wisdom>](comm: Comm) {
    crate::wisdom::broadcast(comm, crate::wisdom::Wisdom {
        export: $next::[<$x export_wisdom_to_string>],
        import: $next::[<$x import_wisdom_from_string>],
    });
}

/// `fftw_mpi_execute_dft`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_execute_dft>](p: *mut c_void, i: *mut Complex<$r>, o: *mut Complex<$r>) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours: FFTW runs any plan here as a real-to-real one.
        unsafe { $next::[<$x execute_r2r>](p, i.cast(), o.cast()) }
    }
}

/// `fftw_mpi_execute_dft_r2c`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_execute_dft_r2c>](p: *mut c_void, i: *mut $r, o: *mut Complex<$r>) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_r2r>](p, i, o.cast()) }
    }
}

/// `fftw_mpi_execute_dft_c2r`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_execute_dft_c2r>](p: *mut c_void, i: *mut Complex<$r>, o: *mut $r) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_r2r>](p, i.cast(), o) }
    }
}

/// `fftw_mpi_execute_r2r`.
///
/// # Safety
/// FFTW's contract.
#[no_mangle]
pub unsafe extern "C" fn [<$x mpi_execute_r2r>](p: *mut c_void, i: *mut $r, o: *mut $r) {
    if !api::execute_on(p, i.cast(), o.cast()) {
        // SAFETY: not ours.
        unsafe { $next::[<$x execute_r2r>](p, i, o) }
    }
}

// ---- The Fortran 2003 entry points: a Fortran communicator handle, else the C call.

crate::exports::f03_wrappers! { $x, $r,
    local_size_many_transposed(rnk: c_int, n: *const isize, howmany: isize, block0: isize, block1: isize; local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize) -> isize;
    local_size_many(rnk: c_int, n: *const isize, howmany: isize, block0: isize; local_n0: *mut isize, local_0_start: *mut isize) -> isize;
    local_size_transposed(rnk: c_int, n: *const isize; local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize) -> isize;
    local_size(rnk: c_int, n: *const isize; local_n0: *mut isize, local_0_start: *mut isize) -> isize;
    local_size_many_1d(n0: isize, howmany: isize; sign: c_int, flags: c_uint, local_ni: *mut isize, local_i_start: *mut isize, local_no: *mut isize, local_o_start: *mut isize) -> isize;
    local_size_1d(n0: isize; sign: c_int, flags: c_uint, local_ni: *mut isize, local_i_start: *mut isize, local_no: *mut isize, local_o_start: *mut isize) -> isize;
    local_size_2d(n0: isize, n1: isize; local_n0: *mut isize, local_0_start: *mut isize) -> isize;
    local_size_2d_transposed(n0: isize, n1: isize; local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize) -> isize;
    local_size_3d(n0: isize, n1: isize, n2: isize; local_n0: *mut isize, local_0_start: *mut isize) -> isize;
    local_size_3d_transposed(n0: isize, n1: isize, n2: isize; local_n0: *mut isize, local_0_start: *mut isize, local_n1: *mut isize, local_1_start: *mut isize) -> isize;
    plan_many_transpose(n0: isize, n1: isize, howmany: isize, block0: isize, block1: isize, i: *mut $r, o: *mut $r; flags: c_uint) -> *mut c_void;
    plan_transpose(n0: isize, n1: isize, i: *mut $r, o: *mut $r; flags: c_uint) -> *mut c_void;
    plan_many_dft(rnk: c_int, n: *const isize, howmany: isize, block: isize, tblock: isize, i: *mut Complex<$r>, o: *mut Complex<$r>; sign: c_int, flags: c_uint) -> *mut c_void;
    plan_dft(rnk: c_int, n: *const isize, i: *mut Complex<$r>, o: *mut Complex<$r>; sign: c_int, flags: c_uint) -> *mut c_void;
    plan_dft_1d(n0: isize, i: *mut Complex<$r>, o: *mut Complex<$r>; sign: c_int, flags: c_uint) -> *mut c_void;
    plan_dft_2d(n0: isize, n1: isize, i: *mut Complex<$r>, o: *mut Complex<$r>; sign: c_int, flags: c_uint) -> *mut c_void;
    plan_dft_3d(n0: isize, n1: isize, n2: isize, i: *mut Complex<$r>, o: *mut Complex<$r>; sign: c_int, flags: c_uint) -> *mut c_void;
    plan_many_r2r(rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize, i: *mut $r, o: *mut $r; kind: *const c_int, flags: c_uint) -> *mut c_void;
    plan_r2r(rnk: c_int, n: *const isize, i: *mut $r, o: *mut $r; kind: *const c_int, flags: c_uint) -> *mut c_void;
    plan_r2r_2d(n0: isize, n1: isize, i: *mut $r, o: *mut $r; kind0: c_int, kind1: c_int, flags: c_uint) -> *mut c_void;
    plan_r2r_3d(n0: isize, n1: isize, n2: isize, i: *mut $r, o: *mut $r; kind0: c_int, kind1: c_int, kind2: c_int, flags: c_uint) -> *mut c_void;
    plan_many_dft_r2c(rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize, i: *mut $r, o: *mut Complex<$r>; flags: c_uint) -> *mut c_void;
    plan_dft_r2c(rnk: c_int, n: *const isize, i: *mut $r, o: *mut Complex<$r>; flags: c_uint) -> *mut c_void;
    plan_dft_r2c_2d(n0: isize, n1: isize, i: *mut $r, o: *mut Complex<$r>; flags: c_uint) -> *mut c_void;
    plan_dft_r2c_3d(n0: isize, n1: isize, n2: isize, i: *mut $r, o: *mut Complex<$r>; flags: c_uint) -> *mut c_void;
    plan_many_dft_c2r(rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize, i: *mut Complex<$r>, o: *mut $r; flags: c_uint) -> *mut c_void;
    plan_dft_c2r(rnk: c_int, n: *const isize, i: *mut Complex<$r>, o: *mut $r; flags: c_uint) -> *mut c_void;
    plan_dft_c2r_2d(n0: isize, n1: isize, i: *mut Complex<$r>, o: *mut $r; flags: c_uint) -> *mut c_void;
    plan_dft_c2r_3d(n0: isize, n1: isize, n2: isize, i: *mut Complex<$r>, o: *mut $r; flags: c_uint) -> *mut c_void;
}

/// `fftw_mpi_gather_wisdom_f03`.
#[no_mangle]
pub extern "C" fn [<$x mpi_gather_wisdom_f03>](comm: Fint) {
    [<$x mpi_gather_wisdom>](crate::comm::from_fortran(comm))
}

/// `fftw_mpi_broadcast_wisdom_f03`.
#[no_mangle]
pub extern "C" fn [<$x mpi_broadcast_wisdom_f03>](comm: Fint) {
    [<$x mpi_broadcast_wisdom>](crate::comm::from_fortran(comm))
}

    } };
}

/// Defines `<prefix>mpi_<name>_f03` for each listed function: the arguments before the `;`,
/// then the Fortran communicator, then those after it, as FFTW's `f03-wrap.c` orders them;
/// each converts the handle and calls the C function.
macro_rules! f03_wrappers {
    ($x:ident, $r:ty, $($name:ident($($a:ident: $at:ty),*; $($b:ident: $bt:ty),*) -> $ret:ty;)+) => { pastey::paste! { $(
        #[doc = concat!("`", stringify!([<$x mpi_ $name _f03>]), "`: `", stringify!([<$x mpi_ $name>]),
                        "` with a Fortran communicator handle.")]
        ///
        /// # Safety
        /// FFTW's contract for the C function.
        #[no_mangle]
        pub unsafe extern "C" fn [<$x mpi_ $name _f03>]($($a: $at,)* f_comm: Fint, $($b: $bt),*) -> $ret {
            // SAFETY: the caller's contract.
            unsafe { [<$x mpi_ $name>]($($a,)* crate::comm::from_fortran(f_comm), $($b),*) }
        }
    )+ } };
}
pub(crate) use f03_wrappers;

fftw_mpi_api!(fftw_, f64, Precision::F64, real_fftw);
fftw_mpi_api!(fftwf_, f32, Precision::F32, real_fftwf);
