//! Partial transforms ([`AxisKind::Identity`] axes) under real MPI on 1..=8 ranks: c2c, r2c
//! and r2r plans transformed along every subset of the axes of uneven 2-, 3- and 4-D shapes,
//! on every grid rank (every factorization for r ≤ 2), both output layouts, against naive
//! O(n²) sums along the transformed axes only (numpy's `fftn(x, axes=…)`, `rfftn(x,
//! axes=…)`, scipy's `dctn`/`dstn` with `norm=None`); round trips; and the exchanges each
//! plan runs: one per transformed axis the input layout splits (none for a slab transformed
//! along axes 1..).
//!
//! Each `#[test] partial_np{P}` re-launches this binary under `mpirun -n P` running
//! `partial_body`; rank 0 prints `max error <what>: <value>` and `plans: <count>`.

use crate::common::*;
use fft_core::stages::Stage;
use fft_core::{
    as_complex, AxisKind, FftOptions, FftPlan, GridChoice, Method, Normalization, R2rKind, R2rPlan,
    RealFftPlan,
};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use std::collections::BTreeMap;

const BODY: &str = "partial::partial_body";

mpi_harness::launches!(BODY, 300;
    partial_np1 => 1, partial_np2 => 2, partial_np3 => 3, partial_np4 => 4,
    partial_np5 => 5, partial_np6 => 6, partial_np7 => 7, partial_np8 => 8);

/// The suite's f64 tolerance, 1e-12·log2 N.
fn tolerance(n: usize) -> f64 {
    1e-12 * (n as f64).log2().max(1.0)
}

/// Largest error per kind, reduced over ranks at the end.
#[derive(Default)]
struct Errors(BTreeMap<String, f64>);

impl Errors {
    fn check(&mut self, what: &str, key: &str, err: f64, tol: f64) {
        assert!(err <= tol, "{what}: {key} error {err:e} > {tol:e}");
        let e = self.0.entry(key.to_string()).or_insert(0.0);
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

/// The naive transform of `kinds` along each axis (nothing along identity axes).
fn naive_partial(x: &[Complex<f64>], shape: &[usize], kinds: &[AxisKind]) -> Vec<Complex<f64>> {
    let mut y = x.to_vec();
    for (axis, kind) in kinds.iter().enumerate() {
        y = match kind {
            AxisKind::Identity => y,
            AxisKind::Fft => along_axis(&y, shape, axis, shape[axis], |l| naive_dft_line(l, -1.0)),
            AxisKind::R2r(k) => {
                along_axis(&y, shape, axis, shape[axis], |l| naive_r2r(k.name(), l))
            }
        };
    }
    y
}

/// Every non-empty subset of the axes of a d-dimensional array for d ≤ 3; a selection for
/// d = 4 (the last axis untransformed among them, as FFTW's interleaved `howmany`).
fn subsets(d: usize) -> Vec<Vec<usize>> {
    if d <= 3 {
        return (1..1usize << d)
            .map(|m| (0..d).filter(|a| m >> a & 1 == 1).collect())
            .collect();
    }
    vec![
        vec![1, 2, 3],
        vec![0, 3],
        vec![2],
        vec![0, 1, 2],
        vec![1, 3],
    ]
}

/// Exchanges a plan of `transformed` axes on `dims` runs forward: one per transformed axis
/// the first pencil splits (a slab of d ≥ 3 needs one for axis 0 only), each way unless the
/// output is transposed; none on one process with natural output.
fn exchanges_expected(dims: &[usize], transformed: &[bool], transposed: bool) -> usize {
    let ranks: usize = dims.iter().product();
    if ranks == 1 && !transposed {
        return 0;
    }
    let moved = (0..dims.len()).filter(|&j| transformed[j]).count();
    moved * if transposed { 1 } else { 2 }
}

fn exchanges_of(stages: &[Stage]) -> usize {
    (stages.iter())
        .filter(|s| matches!(s, Stage::Exchange { .. }))
        .count()
}

#[test]
#[ignore = "MPI body: run by the partial_np* launchers under mpirun"]
fn partial_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let mut errors = Errors::default();
    let mut plans = 0;
    let shapes: [&[usize]; 4] = [&[11, 7, 13], &[3, 20, 6], &[12, 10], &[9, 7, 5, 12]];
    for (s, shape) in shapes.iter().enumerate() {
        let d = shape.len();
        for (a, axes) in subsets(d).into_iter().enumerate() {
            let transformed: Vec<bool> = (0..d).map(|i| axes.contains(&i)).collect();
            for (g, dims) in grids(size, d).into_iter().enumerate() {
                for transposed in [false, true] {
                    let case = Case {
                        shape,
                        axes: &axes,
                        transformed: &transformed,
                        dims: &dims,
                        transposed,
                        method: Method::ALL[(s + a + g + transposed as usize) % 2],
                        seed: (100 * s + 10 * a + g) as u64,
                    };
                    // The mixed and real kinds on the balanced grid of each rank, one
                    // output layout each.
                    let balanced = redist::GridShape::balanced(size, dims.len()).unwrap();
                    let others = balanced.dims() == &dims[..] && (a % 2 == 0) == transposed;
                    plans += complex(&world, rank, &case, others, &mut errors);
                    if others {
                        plans += real_to_complex(&world, rank, &case, &mut errors);
                        plans += real_to_real(&world, rank, &case, &mut errors);
                    }
                }
            }
        }
    }
    plans += in_place_howmany(&world, rank, size, &mut errors);
    errors.report(&world, rank);
    if rank == 0 {
        println!("plans: {plans}");
    }
    mpi.pass();
}

/// One partial transform to check.
struct Case<'a> {
    shape: &'a [usize],
    axes: &'a [usize],
    transformed: &'a [bool],
    dims: &'a [usize],
    transposed: bool,
    method: Method,
    seed: u64,
}

impl Case<'_> {
    fn options(&self, kinds: Vec<AxisKind>) -> FftOptions {
        FftOptions::default()
            .grid(GridChoice::Dims(self.dims.to_vec()))
            .method(self.method)
            .normalization(Normalization::Backward)
            .transposed_out(self.transposed)
            .axes(kinds)
    }

    fn describe(&self, kind: &str) -> String {
        format!(
            "{kind} shape {:?} axes {:?} grid {:?} {} transposed={}",
            self.shape, self.axes, self.dims, self.method, self.transposed
        )
    }

    fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    fn check_exchanges(&self, what: &str, forward: &[Stage], backward: &[Stage]) {
        let want = exchanges_expected(self.dims, self.transformed, self.transposed);
        assert_eq!(exchanges_of(forward), want, "{what}: forward exchanges");
        assert_eq!(exchanges_of(backward), want, "{what}: backward exchanges");
    }
}

/// c2c: FFT along the listed axes; with `mixed`, also DCT-II and FFT mixed with the identity
/// axes.
fn complex(
    world: &impl Communicator,
    rank: usize,
    case: &Case,
    mixed: bool,
    errors: &mut Errors,
) -> usize {
    let d = case.shape.len();
    let x = random_global(case.shape, case.seed);
    let fft = AxisKind::partial(d, case.axes, AxisKind::Fft).unwrap();
    let mut with_r2r = fft.clone();
    if case.axes.len() > 1 {
        with_r2r[case.axes[0]] = AxisKind::R2r(R2rKind::Dct2);
    }
    let mut kinds = vec![(fft, "c2c")];
    if mixed {
        kinds.push((with_r2r, "c2c with r2r and identity axes"));
    }
    let count = kinds.len();
    for (kinds, key) in kinds {
        let what = case.describe(key);
        let reference = naive_partial(&x, case.shape, &kinds);
        let mut plan = FftPlan::<f64>::new(world, case.shape, case.options(kinds)).expect(&what);
        case.check_exchanges(&what, &plan.pipeline().forward, &plan.pipeline().backward);
        let input = local_block(&x, plan.input_layout(), rank);
        let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
        plan.forward(&input, &mut out).expect(&what);
        let want = local_block(&reference, plan.output_layout(), rank);
        let tol = tolerance(case.elements());
        errors.check(&what, key, error_vs(&out, &want, max_norm(&reference)), tol);
        let mut back = vec![Complex::new(f64::NAN, 0.0); plan.input_len()];
        plan.backward(&out, &mut back).expect(&what);
        let round = format!("{key} round trip");
        errors.check(&what, &round, error_vs(&back, &input, 1.0), tol);
    }
    count
}

/// r2c: the real FFT along the last listed axis, FFTs along the others (numpy's `rfftn(x,
/// axes)` for sorted axes).
fn real_to_complex(
    world: &impl Communicator,
    rank: usize,
    case: &Case,
    errors: &mut Errors,
) -> usize {
    let d = case.shape.len();
    let half = *case.axes.last().unwrap();
    let what = case.describe("r2c");
    let x = random_real(case.shape, case.seed + 7);
    let kinds = AxisKind::partial(d, case.axes, AxisKind::Fft).unwrap();
    let full = naive_partial(&complexify(&x), case.shape, &kinds);
    let h = case.shape[half] / 2 + 1;
    let reference = along_axis(&full, case.shape, half, h, |l| l[..h].to_vec());
    let mut plan = RealFftPlan::<f64>::new(world, case.shape, case.options(kinds)).expect(&what);
    let mut spectral = case.shape.to_vec();
    spectral[half] = h;
    assert_eq!(plan.spectral_shape(), &spectral[..], "{what}");
    case.check_exchanges(&what, &plan.pipeline().forward, &plan.pipeline().backward);
    let input = local_block(&x, plan.input_layout(), rank);
    let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
    plan.forward(&input, &mut out).expect(&what);
    let want = local_block(&reference, plan.output_layout(), rank);
    let tol = tolerance(case.elements());
    errors.check(
        &what,
        "r2c",
        error_vs(&out, &want, max_norm(&reference)),
        tol,
    );
    let mut back = vec![f64::NAN; plan.input_len()];
    plan.backward(&out, &mut back).expect(&what);
    let err = error_vs(&complexify(&back), &complexify(&input), 1.0);
    errors.check(&what, "c2r round trip", err, tol);
    1
}

/// r2r: DST-II along the listed axes.
fn real_to_real(world: &impl Communicator, rank: usize, case: &Case, errors: &mut Errors) -> usize {
    let d = case.shape.len();
    let what = case.describe("r2r");
    let x = random_real(case.shape, case.seed + 11);
    let kinds = AxisKind::partial(d, case.axes, AxisKind::R2r(R2rKind::Dst2)).unwrap();
    let reference = naive_partial(&complexify(&x), case.shape, &kinds);
    let mut plan = R2rPlan::<f64>::new(world, case.shape, case.options(kinds)).expect(&what);
    case.check_exchanges(&what, &plan.pipeline().forward, &plan.pipeline().backward);
    let input = local_block(&x, plan.input_layout(), rank);
    let mut out = vec![f64::NAN; plan.output_len()];
    plan.forward(&input, &mut out).expect(&what);
    let want = local_block(&reference, plan.output_layout(), rank);
    let tol = tolerance(case.elements());
    errors.check(
        &what,
        "r2r",
        error_vs(&complexify(&out), &want, max_norm(&reference)),
        tol,
    );
    let mut back = vec![f64::NAN; plan.input_len()];
    plan.backward(&out, &mut back).expect(&what);
    let err = error_vs(&complexify(&back), &complexify(&input), 1.0);
    errors.check(&what, "r2r round trip", err, tol);
    1
}

/// FFTW's interleaved `howmany` as an untransformed last axis, in place: r2c on slabs of
/// `[n0, n1, h]` with the real rows in FFTW's padded layout (`n0 × 2(n1/2+1) × h` scalars),
/// bit for bit the out-of-place plan and within tolerance of the naive reference, the padded
/// view indexing the same rows; c2c and r2r in place on every grid, bit for bit out of place.
fn in_place_howmany(
    world: &impl Communicator,
    rank: usize,
    size: usize,
    errors: &mut Errors,
) -> usize {
    let mut plans = 0;
    let shapes: [&[usize]; 2] = [&[9, 10, 3], &[7, 6, 5, 2]];
    for (s, shape) in shapes.iter().enumerate() {
        let d = shape.len();
        let (half, h) = (d - 2, shape[d - 1]);
        let axes: Vec<usize> = (0..d - 1).collect();
        let x = random_real(shape, 900 + s as u64);
        let kinds = AxisKind::partial(d, &axes, AxisKind::Fft).unwrap();
        let full = naive_partial(&complexify(&x), shape, &kinds);
        let m = shape[half] / 2 + 1;
        let reference = along_axis(&full, shape, half, m, |l| l[..m].to_vec());
        let tol = tolerance(shape.iter().product());
        for transposed in [false, true] {
            let what = format!("r2c in place shape {shape:?} howmany {h} transposed={transposed}");
            let opts = FftOptions::default()
                .grid(GridChoice::Rank(1))
                .normalization(Normalization::Backward)
                .transposed_out(transposed)
                .axes(kinds.clone());
            let mut out_of_place = RealFftPlan::<f64>::new(world, shape, opts.clone()).unwrap();
            let mut plan = RealFftPlan::<f64>::new(world, shape, opts.in_place(true)).expect(&what);
            let input = local_block(&x, plan.input_layout(), rank);
            let mut want = vec![Complex::default(); plan.output_len()];
            out_of_place.forward(&input, &mut want).unwrap();
            let exact = local_block(&reference, plan.output_layout(), rank);
            errors.check(
                &what,
                "r2c howmany",
                error_vs(&want, &exact, max_norm(&reference)),
                tol,
            );
            // The padded rows written by hand: each row is the block [n, h] of the r2c axis
            // and the howmany axis, padded to [2(n/2+1), h].
            let (row, padded) = (shape[half] * h, 2 * m * h);
            let mut buffer = vec![f64::NAN; plan.in_place_len()];
            for (r, chunk) in input.chunks(row).enumerate() {
                buffer[r * padded..r * padded + row].copy_from_slice(chunk);
            }
            let mut shape_in_memory = plan.input_layout().local_shape(rank);
            shape_in_memory[half] = 2 * m;
            assert_eq!(plan.padded_input_shape(), shape_in_memory, "{what}");
            let view = plan.padded_input_view(&buffer).unwrap();
            let dense = plan.input_view(&input).unwrap();
            assert!(view == dense, "{what}: the padded view indexes other rows");
            plan.forward_in_place(&mut buffer).expect(&what);
            let spectrum = &as_complex(&buffer)[..plan.output_len()];
            assert!(
                spectrum == &want[..],
                "{what}: in place differs from out of place"
            );
            plan.backward_in_place(&mut buffer).expect(&what);
            let rows = input.len() / row.max(1);
            let back: Vec<f64> = (0..rows)
                .flat_map(|r| buffer[r * padded..r * padded + row].to_vec())
                .collect();
            let err = error_vs(&complexify(&back), &complexify(&input), 1.0);
            errors.check(&what, "r2c howmany in place round trip", err, tol);
            plans += 2;
        }
        // c2c (FFT) and r2r (DCT-II) with the howmany axis, in place, on every grid.
        let xc = random_global(shape, 950 + s as u64);
        for dims in grids(size, d) {
            for (k, kind) in [AxisKind::Fft, AxisKind::R2r(R2rKind::Dct2)]
                .into_iter()
                .enumerate()
            {
                let what = format!("in place {kind:?} shape {shape:?} grid {dims:?}");
                let kinds = AxisKind::partial(d, &axes, kind).unwrap();
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .transposed_out(k == 1)
                    .axes(kinds.clone());
                let reference = naive_partial(&xc, shape, &kinds);
                let scale = max_norm(&reference);
                if k == 0 {
                    let mut a = FftPlan::<f64>::new(world, shape, opts.clone()).unwrap();
                    let mut b = FftPlan::<f64>::new(world, shape, opts.in_place(true)).unwrap();
                    let input = local_block(&xc, a.input_layout(), rank);
                    let mut want = vec![Complex::default(); a.output_len()];
                    a.forward(&input, &mut want).unwrap();
                    let exact = local_block(&reference, a.output_layout(), rank);
                    errors.check(&what, "c2c howmany", error_vs(&want, &exact, scale), tol);
                    let mut buffer = vec![Complex::new(f64::NAN, 0.0); b.in_place_len()];
                    buffer[..input.len()].copy_from_slice(&input);
                    b.forward_in_place(&mut buffer).expect(&what);
                    assert!(buffer[..want.len()] == want[..], "{what}: in place differs");
                } else {
                    let xr: Vec<f64> = xc.iter().map(|c| c.re).collect();
                    let reference = naive_partial(&complexify(&xr), shape, &kinds);
                    let mut a = R2rPlan::<f64>::new(world, shape, opts.clone()).unwrap();
                    let mut b = R2rPlan::<f64>::new(world, shape, opts.in_place(true)).unwrap();
                    let input = local_block(&xr, a.input_layout(), rank);
                    let mut want = vec![0.0; a.output_len()];
                    a.forward(&input, &mut want).unwrap();
                    let exact = local_block(&reference, a.output_layout(), rank);
                    let err = error_vs(&complexify(&want), &exact, max_norm(&reference));
                    errors.check(&what, "r2r howmany", err, tol);
                    let mut buffer = vec![f64::NAN; b.in_place_len()];
                    buffer[..input.len()].copy_from_slice(&input);
                    b.forward_in_place(&mut buffer).expect(&what);
                    assert!(buffer[..want.len()] == want[..], "{what}: in place differs");
                }
                plans += 2;
            }
        }
    }
    plans
}
