//! The work behind the exported functions, once for both precisions: `local_size`, planning,
//! and FFTW's generic plan calls on this library's plans ([`crate::exports`] defines the
//! `fftw_*` and `fftwf_*` names over these).

use crate::comm::{self, Borrowed};
use crate::dist::{self, Block, DimRequest};
use crate::plan::{MpiPlan, Request};
use crate::problem::{Problem, Refusal, Transform};
use crate::registry;
use fft_core::Precision;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// `MPI_Comm` as the C API passes it.
pub type Comm = mpi::ffi::MPI_Comm;

/// Writes `value` through an output pointer the caller may have left NULL.
///
/// # Safety
/// `p` is NULL or points to a writable `ptrdiff_t`.
unsafe fn put(p: *mut isize, value: usize) {
    if !p.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *p = value as isize };
    }
}

/// The `rnk` extents at `n`.
///
/// # Safety
/// `n` points to `rnk` readable `ptrdiff_t` when `rnk > 0`.
unsafe fn extents(rnk: c_int, n: *const isize) -> Vec<isize> {
    if rnk <= 0 || n.is_null() {
        return vec![];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(n, rnk as usize) }.to_vec()
}

fn block(b: isize) -> Option<usize> {
    (b > 0).then_some(b as usize)
}

/// FFTW's `local_size` outputs for dimension `dim` of a block (0 past the rank).
fn first(block: &Block, dim: usize) -> (usize, usize) {
    (
        block.n.get(dim).copied().unwrap_or(0),
        block.start.get(dim).copied().unwrap_or(0),
    )
}

/// `fftw_mpi_local_size_many_transposed`: the input distributed along dimension 0 in blocks
/// of `block0`, the output along dimension 1 in blocks of `block1` when `block1 < n[1]`
/// (transposed), else along dimension 0 like the input.
///
/// # Safety
/// FFTW's contract: `n` holds `rnk` extents; the outputs are writable (or NULL).
#[allow(clippy::too_many_arguments)]
pub unsafe fn local_size_many_transposed(
    rnk: c_int,
    n: *const isize,
    howmany: isize,
    block0: isize,
    block1: isize,
    comm: Comm,
    local_n0: *mut isize,
    local_0_start: *mut isize,
    local_n1: *mut isize,
    local_1_start: *mut isize,
) -> isize {
    // SAFETY: the caller's contract.
    let n = unsafe { extents(rnk, n) };
    let howmany = howmany.max(0) as usize;
    if n.is_empty() {
        // SAFETY: the caller's contract.
        unsafe {
            put(local_n0, 1);
            put(local_0_start, 0);
            put(local_n1, 1);
            put(local_1_start, 0);
        }
        return howmany as isize;
    }
    let (pe, procs) = comm::borrow(comm).rank_size();
    let n: Vec<usize> = n.iter().map(|&x| x.max(0) as usize).collect();
    let transposed = n.len() > 1 && (block1 as i128) < n[1] as i128;
    let mut dims: Vec<DimRequest> = n.iter().map(|&x| DimRequest::whole(x)).collect();
    dims[0].block[0] = block(block0);
    if transposed {
        dims[1].block[1] = block(block1);
    } else {
        dims[0].block[1] = block(block0);
    }
    let size = dist::local_size(&dims, howmany, procs, pe, 0, 0);
    let (nx, x0) = first(&size.input, 0);
    let (ny, y0) = if n.len() > 1 {
        first(&size.output, 1)
    } else {
        (nx, x0)
    };
    // SAFETY: the caller's contract.
    unsafe {
        put(local_n0, nx);
        put(local_0_start, x0);
        put(local_n1, ny);
        put(local_1_start, y0);
    }
    size.alloc as isize
}

/// `fftw_mpi_local_size_many_1d`.
///
/// # Safety
/// FFTW's contract: the outputs are writable (or NULL).
#[allow(clippy::too_many_arguments)]
pub unsafe fn local_size_many_1d(
    n0: isize,
    howmany: isize,
    comm: Comm,
    sign: c_int,
    flags: c_uint,
    local_ni: *mut isize,
    local_i_start: *mut isize,
    local_no: *mut isize,
    local_o_start: *mut isize,
) -> isize {
    let (pe, procs) = comm::borrow(comm).rank_size();
    let dims = [DimRequest {
        n: n0.max(0) as usize,
        block: [None, None],
    }];
    let size = dist::local_size(&dims, howmany.max(0) as usize, procs, pe, sign, flags);
    // SAFETY: the caller's contract.
    unsafe {
        put(local_ni, first(&size.input, 0).0);
        put(local_i_start, first(&size.input, 0).1);
        put(local_no, first(&size.output, 0).0);
        put(local_o_start, first(&size.output, 0).1);
    }
    size.alloc as isize
}

/// A planning call as the C API passes it.
pub struct PlanCall {
    /// The function's name, for messages.
    pub name: &'static str,
    /// What is computed.
    pub transform: Transform,
    /// Rank and extents.
    pub rnk: c_int,
    pub n: *const isize,
    /// Tuples, and the input and output block sizes (0: default).
    pub howmany: isize,
    pub block: [isize; 2],
    pub input: *mut c_void,
    pub output: *mut c_void,
    pub comm: Comm,
    pub flags: c_uint,
    pub precision: Precision,
}

/// Makes a plan; NULL when FFTW would return NULL or this library cannot compute it (then
/// with one line on process 0 saying why).
///
/// # Safety
/// FFTW's contract: `n` holds `rnk` extents; the arrays are the caller's.
pub unsafe fn plan(call: PlanCall) -> *mut c_void {
    // SAFETY: the caller's contract.
    let n = unsafe { extents(call.rnk, call.n) };
    let problem = match Problem::new(call.transform, &n, call.howmany, call.block, call.flags) {
        Ok(p) => p,
        Err(_) => return std::ptr::null_mut(),
    };
    let comm = comm::borrow(call.comm);
    let threads = crate::threads::planner_threads(precision_index(call.precision));
    let request = Request {
        problem,
        precision: call.precision,
        comm: &comm,
        input: call.input,
        output: call.output,
        threads,
    };
    match MpiPlan::new(request) {
        Ok(plan) => registry::register(Box::new(plan)),
        Err(refusal) => refuse(&comm, call.name, refusal),
    }
}

/// NULL, with the reason on process 0 when FFTW would have made the plan.
pub fn refuse(comm: &Borrowed, name: &str, refusal: Refusal) -> *mut c_void {
    if let Refusal::Unsupported(why) = refusal {
        crate::note(comm, &format!("{name}: {why}; returning a NULL plan"));
    }
    std::ptr::null_mut()
}

/// 0 for double, 1 for single precision.
pub fn precision_index(precision: Precision) -> usize {
    match precision {
        Precision::F64 => 0,
        Precision::F32 => 1,
    }
}

/// `fftw_execute` on one of this library's plans: `true` when it was one.
pub fn execute(handle: *mut c_void) -> bool {
    registry::with_plan(handle, |p| {
        let (input, output) = p.arrays();
        p.execute_on(input, output)
    })
    .is_some()
}

/// The new-array execute functions on one of this library's plans: `true` when it was one.
pub fn execute_on(handle: *mut c_void, input: *mut c_void, output: *mut c_void) -> bool {
    registry::with_plan(handle, |p| p.execute_on(input, output)).is_some()
}

/// `fftw_destroy_plan` on one of this library's plans (collective, as FFTW's on an MPI
/// plan): `true` when it was one.
pub fn destroy(handle: *mut c_void) -> bool {
    registry::unregister(handle).is_some()
}

/// The split-array execute functions, which FFTW's MPI plans do not take.
pub fn refuse_split(handle: *mut c_void, name: &str) -> bool {
    if registry::is_ours(handle) {
        crate::fatal(&format!(
            "{name} on an MPI plan: FFTW-MPI plans take interleaved complex arrays only"
        ));
    }
    false
}

/// `fftw_flops`: `true` when the plan was one of this library's.
///
/// # Safety
/// The outputs are writable (or NULL).
pub unsafe fn flops(handle: *mut c_void, add: *mut f64, mul: *mut f64, fma: *mut f64) -> bool {
    let Some((a, m, f)) = registry::with_plan(handle, |p| p.flops()) else {
        return false;
    };
    for (ptr, value) in [(add, a), (mul, m), (fma, f)] {
        if !ptr.is_null() {
            // SAFETY: the caller's contract.
            unsafe { *ptr = value };
        }
    }
    true
}

/// `fftw_estimate_cost` and `fftw_cost`: the flop estimate (FFTW's estimate is flops too).
pub fn cost(handle: *mut c_void) -> Option<f64> {
    registry::with_plan(handle, |p| {
        let (a, m, f) = p.flops();
        a + m + 2.0 * f
    })
}

/// `fftw_sprint_plan`: a string the caller frees with `free`, or NULL for another plan.
pub fn sprint(handle: *mut c_void) -> Option<*mut c_char> {
    let text = registry::with_plan(handle, |p| p.describe())?;
    let bytes = text.as_bytes();
    // SAFETY: malloc of the text plus its NUL; the caller frees it with free(), as FFTW's
    // documentation says for this function.
    let out = unsafe { libc::malloc(bytes.len() + 1) } as *mut u8;
    if out.is_null() {
        crate::fatal("out of memory in fftw_sprint_plan");
    }
    // SAFETY: `out` holds `len + 1` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
        *out.add(bytes.len()) = 0;
    }
    Some(out as *mut c_char)
}

/// `fftw_fprint_plan`: `true` when the plan was one of this library's.
///
/// # Safety
/// `file` is a `FILE *` open for writing.
pub unsafe fn fprint(handle: *mut c_void, file: *mut libc::FILE) -> bool {
    let Some(text) = registry::with_plan(handle, |p| p.describe()) else {
        return false;
    };
    let text = std::ffi::CString::new(text).unwrap_or_default();
    // SAFETY: the caller's contract; `text` is NUL-terminated.
    unsafe { libc::fputs(text.as_ptr(), file) };
    true
}

/// `fftw_print_plan`: to C's standard output, as FFTW prints it (so it keeps its place
/// among the program's `printf`s).
///
/// # Safety
/// C's `stdout` is open (as it is unless the program closed it).
pub unsafe fn print(handle: *mut c_void) -> bool {
    extern "C" {
        static stdout: *mut libc::FILE;
    }
    // SAFETY: C's `stdout` stream, open for the life of the program.
    unsafe { fprint(handle, stdout) }
}
