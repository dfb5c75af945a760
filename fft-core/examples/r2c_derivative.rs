//! The x-derivative of a real field by a distributed real-to-complex FFT: û → i·k_x·û →
//! back, with the wavenumbers of this rank's (transposed) spectral block from
//! `plan.spectral_grid()`, checked against the exact derivative at every point.
//!
//! `mpirun -n 4 target/release/examples/r2c_derivative`

use fft_core::mpi::collective::SystemOperation;
use fft_core::mpi::traits::*;
use fft_core::ndarray::{Dimension, Zip};
use fft_core::{Complex, FftOptions, Normalization, RealFftPlan};
use std::f64::consts::PI;

// `pub`: fft-core/tests/integration/examples.rs runs it under mpirun.
pub fn main() -> Result<(), fft_core::FftError> {
    let universe = fft_core::mpi::initialize().expect("MPI initializes");
    fft_core::abort_on_panic();
    let world = universe.world();
    let n = [24, 20, 18];
    let opts = FftOptions::default()
        .normalization(Normalization::Backward)
        .transposed_out(true); // the spectrum stays in the last pencil: fewer exchanges
    let mut plan = RealFftPlan::<f64>::new(&world, &n, opts)?;

    // u = sin 3x cos y + cos(x − 2z) on the grid of [0, 2π)³.
    let coords = |g: &[usize]| [0, 1, 2].map(|a| 2.0 * PI * g[a] as f64 / n[a] as f64);
    let u_at = |[x, y, z]: [f64; 3]| (3.0 * x).sin() * y.cos() + (x - 2.0 * z).cos();
    let du_dx_at = |[x, y, z]: [f64; 3]| 3.0 * (3.0 * x).cos() * y.cos() - (x - 2.0 * z).sin();

    let mut u = plan.input_array();
    u.fill_with(|g| u_at(coords(g)));
    let mut u_hat = plan.output_array();
    plan.forward_array(&u, &mut u_hat)?;

    // k_x has shape [local n0, 1, 1]: it broadcasts over the block, whatever its memory order.
    let grid = plan.spectral_grid();
    Zip::from(u_hat.view_mut())
        .and_broadcast(grid.k(0))
        .for_each(|z, &kx| *z *= Complex::new(0.0, kx));
    let mut du_dx = plan.input_array();
    plan.backward_array(&u_hat, &mut du_dx)?;

    let local = du_dx
        .global_iter()
        .map(|(g, &value)| (value - du_dx_at(coords(g.slice()))).abs())
        .fold(0.0, f64::max);
    let mut error = 0.0;
    world.all_reduce_into(&local, &mut error, SystemOperation::max());
    if world.rank() == 0 {
        println!(
            "r2c derivative {n:?} on {} ranks: max error {error:.1e}",
            world.size()
        );
    }
    assert!(error < 1e-11, "max error {error:e}");
    Ok(())
}
