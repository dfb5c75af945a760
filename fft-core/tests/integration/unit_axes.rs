//! Shapes with axes of length 1 in every position, under real MPI on 1..=8 ranks: c2c and
//! r2c, on every grid rank, normal and transposed output, both exchange methods, between the
//! caller's private buffers and between blocks the plan allocated (on one node: shared-memory
//! windows, where the fused steps move rows straight between the ranks' blocks and
//! synchronize on those blocks' windows). Checked against the serial reference, forward and
//! round trip.
//!
//! Such shapes leave ranks with blocks of different lengths and empty ones, and with rows
//! that are whole runs on some ranks and not on others: every decision that changes what a
//! rank synchronizes on must come out the same on every rank, or the launch hangs (each
//! launch runs under its timeout).

use crate::common::*;
use fft_core::{FftOptions, FftPlan, GridChoice, Method, Normalization, RealFftPlan};
use mpi::topology::Communicator;
use num_complex::Complex;
use rustfft::FftDirection;

const BODY: &str = "unit_axes::unit_axes_body";

mpi_harness::launches!(BODY, 180;
    unit_axes_np1 => 1, unit_axes_np2 => 2, unit_axes_np3 => 3, unit_axes_np4 => 4,
    unit_axes_np5 => 5, unit_axes_np6 => 6, unit_axes_np7 => 7, unit_axes_np8 => 8);

/// Axes of length 1 at every position of 2, 3 and 4 axes, alone and together, beside axes
/// shorter and longer than the rank counts.
const SHAPES: [&[usize]; 12] = [
    &[1, 6],
    &[6, 1],
    &[1, 5, 3],
    &[5, 1, 3],
    &[4, 3, 1],
    &[1, 1, 8],
    &[1, 8, 1],
    &[9, 1, 1],
    &[1, 4, 3, 2],
    &[4, 1, 1, 3],
    &[3, 4, 1, 2],
    &[2, 3, 4, 1],
];

fn tolerance(shape: &[usize]) -> f64 {
    let n: usize = shape.iter().product();
    1e-12 * (n as f64).log2().max(1.0)
}

#[test]
#[ignore = "MPI body: run by the unit_axes_np* launchers under mpirun"]
fn unit_axes_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let size = mpi.size();
    let mut cases = 0;
    for (s, shape) in SHAPES.iter().enumerate() {
        for (g, dims) in grids(size, shape.len()).into_iter().enumerate() {
            for transposed in [false, true] {
                // Both methods over the cases, the other one for r2c.
                let k = s + g + usize::from(transposed);
                let method = Method::ALL[k % 2];
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .normalization(Normalization::Backward)
                    .transposed_out(transposed);
                let what = format!("shape {shape:?} grid {dims:?} transposed={transposed}");
                c2c(&world, shape, opts.clone().method(method), &what);
                r2c(&world, shape, opts.method(Method::ALL[(k + 1) % 2]), &what);
                cases += 1;
            }
        }
    }
    assert!(cases >= 2 * SHAPES.len(), "every shape ran ({cases} cases)");
    mpi.pass();
}

/// A c2c plan, forward and backward, between private buffers and between plan blocks.
fn c2c(world: &impl Communicator, shape: &[usize], opts: FftOptions, what: &str) {
    let rank = world.rank() as usize;
    let what = format!("c2c {what} {}", opts.method);
    let x = random_global(shape, shape.iter().sum::<usize>() as u64);
    let reference = serial_fft(&x, shape, FftDirection::Forward);
    let tol = tolerance(shape);
    let mut plan = FftPlan::<f64>::new(world, shape, opts).expect(&what);
    let input = local_block(&x, plan.input_layout(), rank);
    let want = local_block(&reference, plan.output_layout(), rank);
    let (scale, x_scale) = (max_norm(&reference), max_norm(&x));

    let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
    plan.forward(&input, &mut out).expect(&what);
    let err = relative_error(&out, &want, scale);
    assert!(err <= tol, "{what}: forward error {err:e} > {tol:e}");
    let mut back = vec![Complex::new(f64::NAN, 0.0); plan.input_len()];
    plan.backward(&out, &mut back).expect(&what);
    let err = relative_error(&back, &input, x_scale);
    assert!(err <= tol, "{what}: round-trip error {err:e}");

    let mut field = plan.alloc_input().expect(&what);
    let mut spectrum = plan.alloc_output().expect(&what);
    field.copy_from_slice(&input);
    spectrum.fill(Complex::new(f64::NAN, 1.0));
    plan.forward(&field, &mut spectrum).expect(&what);
    let err = relative_error(&spectrum, &want, scale);
    assert!(
        err <= tol,
        "{what}: forward between plan blocks: error {err:e}"
    );
    field.fill(Complex::new(f64::NAN, 1.0));
    plan.backward(&spectrum, &mut field).expect(&what);
    let err = relative_error(&field, &input, x_scale);
    assert!(
        err <= tol,
        "{what}: round trip between plan blocks: error {err:e}"
    );
}

/// An r2c plan (the last axis real), forward and backward, between private buffers and
/// between plan blocks.
fn r2c(world: &impl Communicator, shape: &[usize], opts: FftOptions, what: &str) {
    let rank = world.rank() as usize;
    let what = format!("r2c {what} {}", opts.method);
    let x = random_real(shape, 7 + shape.iter().sum::<usize>() as u64);
    let reference = serial_rfft(&x, shape);
    let tol = tolerance(shape);
    let mut plan = RealFftPlan::<f64>::new(world, shape, opts).expect(&what);
    let input = local_block(&x, plan.input_layout(), rank);
    let want = local_block(&reference, plan.output_layout(), rank);
    let scale = max_norm(&reference);
    let x_scale = max_norm(&complexify(&x));
    let real_error = |got: &[f64]| relative_error(&complexify(got), &complexify(&input), x_scale);

    let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
    plan.forward(&input, &mut out).expect(&what);
    let err = relative_error(&out, &want, scale);
    assert!(err <= tol, "{what}: forward error {err:e} > {tol:e}");
    let mut back = vec![f64::NAN; plan.input_len()];
    plan.backward(&out, &mut back).expect(&what);
    let err = real_error(&back);
    assert!(err <= tol, "{what}: round-trip error {err:e}");

    let mut field = plan.alloc_input().expect(&what);
    let mut spectrum = plan.alloc_output().expect(&what);
    field.copy_from_slice(&input);
    spectrum.fill(Complex::new(f64::NAN, 1.0));
    plan.forward(&field, &mut spectrum).expect(&what);
    let err = relative_error(&spectrum, &want, scale);
    assert!(
        err <= tol,
        "{what}: forward between plan blocks: error {err:e}"
    );
    field.fill(f64::NAN);
    plan.backward(&spectrum, &mut field).expect(&what);
    let err = real_error(&field);
    assert!(
        err <= tol,
        "{what}: round trip between plan blocks: error {err:e}"
    );
}
