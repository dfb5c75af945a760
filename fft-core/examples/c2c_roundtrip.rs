//! A distributed 3-D complex FFT and its inverse. The input is one Fourier mode plus a
//! constant, so the exact spectrum has two non-zero coefficients: every coefficient of every
//! rank is checked against it, then the round trip against the input.
//!
//! `mpirun -n 4 target/release/examples/c2c_roundtrip`

use fft_core::mpi::collective::SystemOperation;
use fft_core::mpi::traits::*;
use fft_core::ndarray::Dimension;
use fft_core::{Complex, FftOptions, FftPlan, Normalization};
use std::f64::consts::PI;

// `pub`: fft-core/tests/integration/examples.rs runs it under mpirun.
pub fn main() -> Result<(), fft_core::FftError> {
    let universe = fft_core::mpi::initialize().expect("MPI initializes");
    fft_core::abort_on_panic();
    let world = universe.world();
    let n = [16, 12, 10];
    let opts = FftOptions::default().normalization(Normalization::Backward);
    let mut plan = FftPlan::<f64>::new(&world, &n, opts)?;

    // u = exp(2πi (2x/n0 − 3y/n1 + z/n2)) + 1/2 at grid point (x, y, z).
    let mode = [2, n[1] - 3, 1];
    let mut u = plan.input_array();
    u.fill_with(|g| {
        let phase: f64 = (0..3).map(|a| (mode[a] * g[a]) as f64 / n[a] as f64).sum();
        Complex::from_polar(1.0, 2.0 * PI * phase) + 0.5
    });
    let mut u_hat = plan.output_array();
    plan.forward_array(&u, &mut u_hat)?;

    let points = (n[0] * n[1] * n[2]) as f64;
    let mut spectrum_error = 0.0f64;
    for (k, &value) in u_hat.global_iter() {
        let exact = match k.slice() {
            [0, 0, 0] => points / 2.0,
            k if k == mode => points,
            _ => 0.0,
        };
        spectrum_error = spectrum_error.max((value - exact).norm() / points);
    }

    let mut back = plan.input_array();
    plan.backward_array(&u_hat, &mut back)?;
    let pairs = back.as_slice().iter().zip(u.as_slice());
    let round_trip_error = pairs.map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);

    let local = [spectrum_error, round_trip_error];
    let mut global = [0.0; 2];
    world.all_reduce_into(&local[..], &mut global[..], SystemOperation::max());
    if world.rank() == 0 {
        println!(
            "c2c {n:?} on {} ranks: spectrum error {:.1e}, round-trip error {:.1e}",
            world.size(),
            global[0],
            global[1]
        );
    }
    assert!(global[0] < 1e-13 && global[1] < 1e-13, "errors {global:?}");
    Ok(())
}
