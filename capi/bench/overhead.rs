//! The C API's overhead over the Rust plan: one c2c plan driven through `dfft_forward` and
//! `dfft_backward` (the C ABI, with its pointer checks, the agreement over ranks and the
//! panic guard) and an identical [`FftPlan`] driven through `forward`/`backward`, on blocks
//! each plan allocated, alternating pair by pair; the minimum pair time of each (the slowest
//! rank's), and their ratio.
//!
//! ```sh
//! mpirun -n 2 target/release/deps/overhead-* [n0 n1 n2 [pairs]]   # scripts/bench-capi
//! ```

use dfft::{dfft_alloc_input, dfft_alloc_output, dfft_backward, dfft_destroy, dfft_forward};
use dfft::{dfft_free, dfft_plan_dft, DfftPlan, DFFT_NORMALIZE_BACKWARD, DFFT_SUCCESS};
use fft_core::{FftOptions, FftPlan, Normalization};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::Communicator;
use mpi::traits::AsRaw;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments: n0 n1 n2 [pairs]"))
        .collect();
    let shape = if args.len() >= 3 {
        args[..3].to_vec()
    } else {
        vec![128, 128, 128]
    };
    let pairs = args.get(3).copied().unwrap_or(20);

    // Normalized, so that the data stay the same size over the pairs.
    let options = FftOptions::default().normalization(Normalization::Backward);
    let mut rust = FftPlan::<f64>::new(&world, &shape, options).expect("Rust plan");
    let mut rust_in = rust.alloc_input().expect("Rust input block");
    let mut rust_out = rust.alloc_output().expect("Rust output block");
    for (i, x) in rust_in.iter_mut().enumerate() {
        *x = num_complex::Complex::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos());
    }

    let n: Vec<isize> = shape.iter().map(|&x| x as isize).collect();
    let mut plan: *mut DfftPlan = null_mut();
    let (mut c_in, mut c_out): (*mut c_void, *mut c_void) = (null_mut(), null_mut());
    // SAFETY: `n` holds 3 extents, no grid dimensions, the world communicator is live, the
    // output arguments are writable; the blocks come from the plan and hold its counts, and
    // the C input is filled from the Rust one (the same layout: the same options and ranks).
    unsafe {
        let code = dfft_plan_dft(
            3,
            n.as_ptr(),
            1,
            world.as_raw(),
            0,
            null(),
            DFFT_NORMALIZE_BACKWARD,
            &mut plan,
        );
        assert_eq!(code, DFFT_SUCCESS, "C plan");
        assert_eq!(dfft_alloc_input(plan, &mut c_in), DFFT_SUCCESS);
        assert_eq!(dfft_alloc_output(plan, &mut c_out), DFFT_SUCCESS);
        std::ptr::copy_nonoverlapping(
            rust_in.as_ptr().cast(),
            c_in.cast::<num_complex::Complex<f64>>(),
            rust_in.len(),
        );
    }

    let slowest = |seconds: f64| {
        let mut max = 0.0;
        world.all_reduce_into(&seconds, &mut max, SystemOperation::max());
        max
    };
    let (mut best_rust, mut best_c) = (f64::INFINITY, f64::INFINITY);
    // Two warm-up pairs each, then alternate.
    for pair in 0..pairs + 2 {
        world.barrier();
        let t = mpi::time();
        rust.forward(&rust_in, &mut rust_out).expect("Rust forward");
        rust.backward(&rust_out, &mut rust_in)
            .expect("Rust backward");
        let rust_time = slowest(mpi::time() - t);
        world.barrier();
        let t = mpi::time();
        // SAFETY: the plan and its blocks, as above.
        unsafe {
            assert_eq!(dfft_forward(plan, c_in, c_out), DFFT_SUCCESS);
            assert_eq!(dfft_backward(plan, c_out, c_in), DFFT_SUCCESS);
        }
        let c_time = slowest(mpi::time() - t);
        if pair >= 2 {
            best_rust = best_rust.min(rust_time);
            best_c = best_c.min(c_time);
        }
    }
    if world.rank() == 0 {
        println!(
            "overhead: c2c {}x{}x{} ranks={} pairs={pairs} rust_seconds_per_pair={best_rust:.4e} capi_seconds_per_pair={best_c:.4e} ratio={:.4}",
            shape[0],
            shape[1],
            shape[2],
            world.size(),
            best_c / best_rust
        );
    }
    // SAFETY: the blocks and plan from above, freed once, collectively, before MPI ends.
    unsafe {
        assert_eq!(dfft_free(c_out), DFFT_SUCCESS);
        assert_eq!(dfft_free(c_in), DFFT_SUCCESS);
        assert_eq!(dfft_destroy(plan), DFFT_SUCCESS);
    }
}
