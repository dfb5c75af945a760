//! fft-core's integration tests, in one test executable so that fft-core's generic plan code is
//! compiled and linked for the tests once, not once per file. A module per subject:
//!
//! - MPI transforms checked against serial references on 1..8 ranks: [`fft`] (c2c),
//!   [`spectral`] (r2c/c2r, r2r, padding, no allocation), [`in_place`], [`in_place_real`],
//!   [`fftw_layouts`], [`partial`] (subsets of axes), [`groups`] (batches in rank groups),
//!   [`halo`], [`unit_axes`] (length-1 axes);
//! - the library as a user outside this repository gets it: the ndarray API and local
//!   spectral grids ([`ndarray_api`]), the examples under mpirun ([`examples`]), the crates'
//!   packaging down to a new crate that depends on fft-core alone ([`packaging`]);
//! - [`serial_reference`]: the serial reference ([`common`]) against the naive DFT.
//!
//! An MPI test `x_np{P}` re-launches this executable under `mpirun -n P` running the ignored
//! body by its path here (`x::x_body`). One module's tests:
//! `cargo test --release -p fft-core --test integration halo::`.

// Shared with fft-core's unit tests (`src/kernels` includes `common/naive.rs`).
#[path = "../common/mod.rs"]
mod common;
mod examples;
mod fft;
mod fftw_layouts;
mod groups;
mod halo;
mod in_place;
mod in_place_real;
mod ndarray_api;
mod packaging;
mod partial;
mod serial_reference;
mod spectral;
mod unit_axes;

// The examples' sources, as `cargo build --examples` builds them.
#[path = "../../examples/c2c_roundtrip.rs"]
mod c2c_roundtrip;
#[path = "../../examples/poisson.rs"]
mod poisson;
#[path = "../../examples/r2c_derivative.rs"]
mod r2c_derivative;

use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts heap allocations of the Rust side, to prove that the transforms allocate nothing
/// after planning ([`spectral`], [`in_place_real`]).
struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from the system allocator with `layout`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` came from the system allocator with `layout`.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations (and reallocations) of this process so far, on every thread. The MPI
/// bodies run alone in their process (`--exact --test-threads=1`), so a difference across a
/// call counts that call's allocations.
fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}
