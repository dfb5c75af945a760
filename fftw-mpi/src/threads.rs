//! Threads per process: FFTW's `fftw_plan_with_nthreads` sets how many threads the plans made
//! afterwards use.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads for the next double-precision plans (`fftw_plan_with_nthreads`) and
/// single-precision ones (`fftwf_plan_with_nthreads`).
pub static NTHREADS: [AtomicUsize; 2] = [AtomicUsize::new(1), AtomicUsize::new(1)];

/// The threads per process set for a precision (0: double, 1: single).
pub fn planner_threads(precision: usize) -> usize {
    NTHREADS[precision].load(Ordering::Relaxed).max(1)
}
