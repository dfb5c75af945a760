//! Poisson's equation ∇²u = f on the periodic box [0, 2π)³ in one forward and one backward
//! real-to-complex FFT: û = −f̂/|k|², with |k|² of this rank's spectral block from the plan.
//!
//! `mpirun -n 4 target/release/examples/poisson`

use fft_core::mpi::collective::SystemOperation;
use fft_core::mpi::traits::*;
use fft_core::ndarray::{Dimension, Zip};
use fft_core::{Complex, FftOptions, Normalization, RealFftPlan};
use std::f64::consts::PI;

/// The exact solution, zero-mean: u = sin x cos 2y sin 3z + cos(x − z), and f = ∇²u.
fn exact([x, y, z]: [f64; 3]) -> (f64, f64) {
    let (a, b) = (x.sin() * (2.0 * y).cos() * (3.0 * z).sin(), (x - z).cos());
    (a + b, -14.0 * a - 2.0 * b)
}

// `pub`: fft-core/tests/integration/examples.rs runs it under mpirun.
pub fn main() -> Result<(), fft_core::FftError> {
    let universe = fft_core::mpi::initialize().expect("MPI initializes");
    fft_core::abort_on_panic();
    let world = universe.world();
    let n = [32, 30, 28];
    let opts = FftOptions::default()
        .normalization(Normalization::Backward)
        .transposed_out(true);
    let mut plan = RealFftPlan::<f64>::new(&world, &n, opts)?;
    let coords = |g: &[usize]| [0, 1, 2].map(|a| 2.0 * PI * g[a] as f64 / n[a] as f64);

    let mut f = plan.input_array();
    f.fill_with(|g| exact(coords(g)).1);
    let mut u_hat = plan.output_array();
    plan.forward_array(&f, &mut u_hat)?;
    // û = −f̂/|k|²; û₀ = 0 picks the zero-mean solution.
    let k2 = plan.spectral_grid().k2();
    let solve = |z: &mut Complex<f64>, &k2: &f64| *z = if k2 > 0.0 { -*z / k2 } else { 0.0.into() };
    Zip::from(u_hat.view_mut()).and(&k2).for_each(solve);
    let mut u = plan.input_array();
    plan.backward_array(&u_hat, &mut u)?;

    let local = u
        .global_iter()
        .map(|(g, &value)| (value - exact(coords(g.slice())).0).abs())
        .fold(0.0, f64::max);
    let mut error = 0.0;
    world.all_reduce_into(&local, &mut error, SystemOperation::max());
    if world.rank() == 0 {
        println!(
            "poisson {n:?} on {} ranks: max error {error:.1e}",
            world.size()
        );
    }
    assert!(error < 1e-12, "max error {error:e}");
    Ok(())
}
