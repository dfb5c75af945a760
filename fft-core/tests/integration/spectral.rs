//! The spectral-solver plans under real MPI on 1..=8 ranks, checked against serial references:
//! r2c/c2r ([`RealFftPlan`]) against numpy's `rfftn` convention (a serial complex FFT of the
//! real data cut to the half spectrum), on every grid rank and factorization (r ≤ 2), both
//! output layouts, f64 and f32, round trips, dirty buffers; batches against one-by-one;
//! real-to-real kinds against the naive formulas; padding against the unpadded transform on
//! band-limited data and a dealiased product against its exact spectrum.
//!
//! Each `#[test] spectral_np{P}` re-launches this binary under `mpirun -n P` running
//! `spectral_body`. The largest error of each kind and precision (max over ranks and cases)
//! is printed by rank 0 as `max error <what>: <value>`. The body ends with the allocation
//! checks (forward/backward allocate nothing after planning, pencils and fused slabs), which
//! `no_allocation_threads_np3` repeats with two rayon threads per rank.

use crate::allocations;
use crate::common::*;
use fft_core::{
    wavenumber, AxisKind, FftOptions, FftPlan, GridChoice, Method, Normalization, R2rKind, R2rPlan,
    Real, RealFftPlan, SharedBlock,
};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use std::collections::BTreeMap;

const BODY: &str = "spectral::spectral_body";

mpi_harness::launches!(BODY, 300;
    spectral_np1 => 1, spectral_np2 => 2, spectral_np3 => 3, spectral_np4 => 4,
    spectral_np5 => 5, spectral_np6 => 6, spectral_np7 => 7, spectral_np8 => 8);

/// The cases on the balanced grid of `size` processes of each rank in `ranks`, with natural
/// and transposed output: `(r, dims, transposed, options)`, the options on that grid with
/// backward normalization.
fn balanced_cases(
    size: usize,
    ranks: std::ops::Range<usize>,
) -> impl Iterator<Item = (usize, Vec<usize>, bool, FftOptions)> {
    ranks.flat_map(move |r| {
        let dims = balanced(size, r);
        [false, true].map(|transposed| {
            let opts = FftOptions::default()
                .grid(GridChoice::Dims(dims.clone()))
                .normalization(Normalization::Backward)
                .transposed_out(transposed);
            (r, dims.clone(), transposed, opts)
        })
    })
}

const THREADS_BODY: &str = "spectral::no_allocation_threads_body";

/// The allocation checks again with two rayon threads per rank (the launches above run one),
/// where the transforms' parallel loops hand jobs to rayon's pool.
#[test]
fn no_allocation_threads_np3() {
    mpi_harness::Launch::new(THREADS_BODY, 3)
        .env("RAYON_NUM_THREADS", "2")
        .timeout_secs(120)
        .run();
}

/// The suite's tolerance (1e-12·log2 N in f64, 1e-5·log2 N in f32) for `n` elements at the precision of `T`.
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
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let mut errors = Errors::default();
    real_to_complex::<f64>(&world, rank, size, &mut errors, true);
    real_to_complex::<f32>(&world, rank, size, &mut errors, false);
    real_normalizations(&world, rank, &mut errors);
    batches(&world, rank, size, &mut errors);
    real_to_real::<f64>(&world, rank, size, &mut errors);
    real_to_real::<f32>(&world, rank, size, &mut errors);
    mixed_axes(&world, rank, size, &mut errors);
    padding(&world, rank, size, &mut errors);
    no_allocation(&world, rank);
    no_allocation_fused_slabs(&world, rank);
    errors.report(&world, rank);
    mpi.pass();
}

#[test]
#[ignore = "MPI body: run by no_allocation_threads_np3 under mpirun"]
fn no_allocation_threads_body() {
    let Some(mpi) = mpi_harness::start(THREADS_BODY) else {
        return;
    };
    let world = mpi.world();
    let rank = mpi.rank();
    assert_eq!(
        rayon::current_num_threads(),
        2,
        "RAYON_NUM_THREADS=2 reaches the ranks"
    );
    no_allocation(&world, rank);
    no_allocation_fused_slabs(&world, rank);
    mpi.pass();
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
            (1..d).map(|r| balanced(size, r)).collect()
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

/// The plan's memory estimate bounds its work memory.
fn check_estimate(
    pipeline: &fft_core::stages::Pipeline,
    batch: usize,
    work_len: usize,
    what: &str,
) {
    let e = fft_core::memory::estimate_memory_batched(
        pipeline,
        16,
        rayon::current_num_threads(),
        batch,
    );
    let bound = e.total() - e.data_bytes;
    assert!(
        (work_len * 16) as u64 <= bound,
        "{what}: work {} bytes > estimate {bound}",
        work_len * 16
    );
}

/// Runs `$plan`'s forward and backward between blocks it allocates (`alloc_input`/
/// `alloc_output`: shared-memory windows on one node) and asserts both results bit-identical
/// to `$out` and `$back`, the same transforms of `$input` between private vectors. On slabs
/// of 3 or more axes every exchange is fused and moves rows straight between the ranks'
/// blocks and work buffers: nothing is packed or unpacked (a c2r backward keeps its input and
/// exchanges from a work buffer, which is then in a window too). A macro: the plan kinds
/// share no trait.
macro_rules! same_between_plan_blocks {
    ($plan:ident, $input:ident, $out:ident, $back:ident, $kind:literal, $what:ident) => {{
        let mut x = $plan.alloc_input().unwrap();
        let mut y = $plan.alloc_output().unwrap();
        x.copy_from_slice(&$input);
        $plan.reset_times();
        $plan.forward(&x, &mut y).unwrap();
        assert!(
            y[..] == $out[..],
            "{}: {} forward between plan blocks differs",
            $what,
            $kind
        );
        $plan.backward(&y, &mut x).unwrap();
        assert!(
            x[..] == $back[..],
            "{}: {} backward between plan blocks differs",
            $what,
            $kind
        );
        let slab = $plan.grid().shape().dims().len() == 1 && $plan.global_shape().len() >= 3;
        let t = $plan.times();
        if slab && x.is_shared() && !$plan.options().transposed_out {
            assert!(
                t.pack == 0.0 && t.unpack == 0.0,
                "{}: {} between plan blocks still packed ({} s) or unpacked ({} s)",
                $what,
                $kind,
                t.pack,
                t.unpack
            );
        }
    }};
}

/// Batches of 3 fields (c2c, r2c, r2r) against the same plan applied field by field.
fn batches(world: &impl Communicator, rank: usize, size: usize, errors: &mut Errors) {
    let k = 3;
    for (s, shape) in [&[9usize, 7, 5][..], &[11, 7, 13]].into_iter().enumerate() {
        let d = shape.len();
        for (r, dims, transposed, base) in balanced_cases(size, 1..d) {
            let base = base.method(Method::ALL[(s + r) % 2]);
            let what = format!("batch {k} shape {shape:?} grid {dims:?} transposed={transposed}");
            // Complex.
            let mut one = FftPlan::<f64>::new(world, shape, base.clone()).unwrap();
            // One plane per piece of the fused exchanges: the same numbers either way.
            let mut many =
                FftPlan::<f64>::new(world, shape, base.clone().batch(k).piece_bytes(1)).unwrap();
            assert_eq!(many.input_len(), k * one.input_len());
            check_estimate(many.pipeline(), k, many.work_len(), &what);
            let fields: Vec<Vec<Complex<f64>>> = (0..k)
                .map(|f| {
                    local_block(
                        &random_global(shape, 70 + f as u64),
                        one.input_layout(),
                        rank,
                    )
                })
                .collect();
            let input: Vec<_> = fields.concat();
            let mut out = vec![Complex::default(); many.output_len()];
            many.forward(&input, &mut out).unwrap();
            let mut back = vec![Complex::default(); many.input_len()];
            many.backward(&out, &mut back).unwrap();
            // The same batch between blocks the plan allocated (shared on this node).
            same_between_plan_blocks!(many, input, out, back, "c2c batch", what);
            let block = one.output_len();
            let mut identical = true;
            for (f, field) in fields.iter().enumerate() {
                let mut single = vec![Complex::default(); block];
                one.forward(field, &mut single).unwrap();
                let got = &out[f * block..(f + 1) * block];
                identical &= got == &single[..];
                let err = error_vs(got, &single, max_norm(&single).max(1.0));
                errors.check(&what, "batch vs one-by-one c2c f64".into(), err, 1e-14);
                let err = error_vs(&back[f * field.len()..(f + 1) * field.len()], field, 1.0);
                errors.check(&what, "batch round trip c2c f64".into(), err, 1e-12);
            }
            assert!(
                identical,
                "{what}: c2c batch not bit-identical to one by one"
            );
            // Real to complex.
            let mut one = RealFftPlan::<f64>::new(world, shape, base.clone()).unwrap();
            let mut many = RealFftPlan::<f64>::new(world, shape, base.clone().batch(k)).unwrap();
            check_estimate(many.pipeline(), k, many.work_len(), &what);
            let fields: Vec<Vec<f64>> = (0..k)
                .map(|f| local_block(&random_real(shape, 80 + f as u64), one.input_layout(), rank))
                .collect();
            let input: Vec<f64> = fields.concat();
            let mut out = vec![Complex::default(); many.output_len()];
            many.forward(&input, &mut out).unwrap();
            let mut back = vec![0.0; many.input_len()];
            many.backward(&out, &mut back).unwrap();
            same_between_plan_blocks!(many, input, out, back, "r2c/c2r batch", what);
            let block = one.output_len();
            for (f, field) in fields.iter().enumerate() {
                let mut single = vec![Complex::default(); block];
                one.forward(field, &mut single).unwrap();
                let got = &out[f * block..(f + 1) * block];
                assert!(got == &single[..], "{what}: r2c batch not bit-identical");
                let part = &back[f * field.len()..(f + 1) * field.len()];
                let err = error_vs(&complexify(part), &complexify(field), 1.0);
                errors.check(&what, "batch round trip r2c f64".into(), err, 1e-12);
            }
            // Real to real.
            let kinds = vec![AxisKind::R2r(R2rKind::Dct2); d];
            let mut one =
                R2rPlan::<f64>::new(world, shape, base.clone().axes(kinds.clone())).unwrap();
            let mut many =
                R2rPlan::<f64>::new(world, shape, base.clone().axes(kinds).batch(k)).unwrap();
            check_estimate(many.pipeline(), k, many.work_len(), &what);
            let input: Vec<f64> = fields.concat();
            let mut out = vec![0.0; many.output_len()];
            many.forward(&input, &mut out).unwrap();
            let block = one.output_len();
            for (f, field) in fields.iter().enumerate() {
                let mut single = vec![0.0; block];
                one.forward(field, &mut single).unwrap();
                assert!(
                    out[f * block..(f + 1) * block] == single[..],
                    "{what}: r2r batch"
                );
            }
        }
    }
}

/// Applies the naive real-to-real `kinds` (or the naive DFT for `None`) along every axis.
fn naive_separable(
    x: &[Complex<f64>],
    shape: &[usize],
    kinds: &[Option<R2rKind>],
) -> Vec<Complex<f64>> {
    let mut y = x.to_vec();
    for (axis, kind) in kinds.iter().enumerate() {
        y = along_axis(&y, shape, axis, shape[axis], |line| match kind {
            Some(k) => naive_r2r(k.name(), line),
            None => naive_dft_line(line, -1.0),
        });
    }
    y
}

/// Every real-to-real kind alone on a 3-D array (all axes that kind) against the naive
/// formulas, forward and round trip, on the balanced grids of each rank and both layouts.
fn real_to_real<T: Real>(world: &impl Communicator, rank: usize, size: usize, errors: &mut Errors)
where
    Complex<T>: redist::Element,
{
    let shape = [7usize, 6, 5];
    let n: usize = shape.iter().product();
    let x = random_real(&shape, 99);
    let p = precision::<T>();
    for kind in R2rKind::ALL {
        let reference = naive_separable(&complexify(&x), &shape, &[Some(kind); 3]);
        let scale = max_norm(&reference);
        for (_, dims, transposed, opts) in balanced_cases(size, 1..3) {
            let opts = opts.axes(vec![AxisKind::R2r(kind); 3]);
            let what = format!("r2r {kind} {p} grid {dims:?} transposed={transposed}");
            let mut plan = R2rPlan::<T>::new(world, &shape, opts).expect(&what);
            let input: Vec<T> = to_t(&local_block(&x, plan.input_layout(), rank));
            let want: Vec<_> = local_block(&reference, plan.output_layout(), rank);
            let mut out = vec![T::of(f64::NAN); plan.output_len()];
            plan.forward(&input, &mut out).expect(&what);
            let err = error_vs(&real_to_c64(&out), &want, scale);
            errors.check(&what, format!("r2r {kind} {p}"), err, tolerance::<T>(n));
            let mut back = vec![T::of(f64::NAN); plan.input_len()];
            plan.backward(&out, &mut back).expect(&what);
            let err = error_vs(&real_to_c64(&back), &real_to_c64(&input), 1.0);
            errors.check(&what, format!("r2r round trip {p}"), err, tolerance::<T>(n));
        }
    }
}

/// Real-to-real axes mixed with FFT axes: in a complex plan (re and im separately) and on the
/// non-last axes of a real-to-complex plan.
fn mixed_axes(world: &impl Communicator, rank: usize, size: usize, errors: &mut Errors) {
    let shape = [9usize, 7, 6];
    let n: usize = shape.iter().product();
    let tol = tolerance::<f64>(n);
    let dct2 = Some(R2rKind::Dct2);
    let dst1 = Some(R2rKind::Dst1);
    let axes = |k: &[Option<R2rKind>]| -> Vec<AxisKind> {
        k.iter()
            .map(|k| k.map_or(AxisKind::Fft, AxisKind::R2r))
            .collect()
    };
    for (_, dims, transposed, base) in balanced_cases(size, 1..3) {
        // Complex data: DCT-II, FFT, DST-I; with transposed output R2HC, FFT, DHT.
        let kinds = if transposed {
            [Some(R2rKind::R2hc), None, Some(R2rKind::Dht)]
        } else {
            [dct2, None, dst1]
        };
        let what = format!("c2c+r2r {kinds:?} grid {dims:?} transposed={transposed}");
        let x = random_global(&shape, 31);
        let reference = naive_separable(&x, &shape, &kinds);
        let mut plan = FftPlan::<f64>::new(world, &shape, base.clone().axes(axes(&kinds))).unwrap();
        let input = local_block(&x, plan.input_layout(), rank);
        let mut out = vec![Complex::default(); plan.output_len()];
        plan.forward(&input, &mut out).unwrap();
        let want = local_block(&reference, plan.output_layout(), rank);
        let err = error_vs(&out, &want, max_norm(&reference));
        errors.check(&what, "c2c with r2r axes f64".into(), err, tol);
        let mut back = vec![Complex::default(); plan.input_len()];
        plan.backward(&out, &mut back).unwrap();
        let err = error_vs(&back, &input, 1.0);
        errors.check(&what, "c2c with r2r axes round trip f64".into(), err, tol);
        // Real data: DST-I, DCT-II, then the real FFT on the last axis.
        let kinds = [dst1, dct2, None];
        let what = format!("r2c+r2r {kinds:?} grid {dims:?} transposed={transposed}");
        let xr = random_real(&shape, 32);
        let full = naive_separable(&complexify(&xr), &shape, &kinds);
        let h = shape[2] / 2 + 1;
        let reference: Vec<_> = full
            .chunks(shape[2])
            .flat_map(|l| l[..h].to_vec())
            .collect();
        let mut plan =
            RealFftPlan::<f64>::new(world, &shape, base.clone().axes(axes(&kinds))).unwrap();
        let input = local_block(&xr, plan.input_layout(), rank);
        let mut out = vec![Complex::default(); plan.output_len()];
        plan.forward(&input, &mut out).unwrap();
        let want = local_block(&reference, plan.output_layout(), rank);
        let err = error_vs(&out, &want, max_norm(&reference));
        errors.check(&what, "r2c with r2r axes f64".into(), err, tol);
        let mut back = vec![0.0; plan.input_len()];
        plan.backward(&out, &mut back).unwrap();
        let err = error_vs(&complexify(&back), &complexify(&input), 1.0);
        errors.check(&what, "r2c with r2r axes round trip f64".into(), err, tol);
    }
}

/// Fourier coefficients of a band-limited field: modes with |k_i| < n_i/3 on every axis.
type Modes = BTreeMap<Vec<i64>, Complex<f64>>;

fn band_limited(n: &[usize], seed: u64, real: bool) -> Modes {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let ranges: Vec<Vec<i64>> = n
        .iter()
        .map(|&ni| {
            let lim = ni as i64;
            (-lim..=lim).filter(|k| 3 * k.abs() < lim).collect()
        })
        .collect();
    let mut modes = Modes::new();
    let mut idx = vec![0usize; n.len()];
    'outer: loop {
        let k: Vec<i64> = idx.iter().zip(&ranges).map(|(&i, r)| r[i]).collect();
        let c = Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
        modes.insert(k, c);
        for a in (0..n.len()).rev() {
            idx[a] += 1;
            if idx[a] < ranges[a].len() {
                continue 'outer;
            }
            idx[a] = 0;
        }
        break;
    }
    if real {
        // Coefficients of the real part: (c_k + conj(c_{-k})) / 2.
        let sym: Modes = modes
            .iter()
            .map(|(k, c)| {
                let minus: Vec<i64> = k.iter().map(|v| -v).collect();
                (k.clone(), (c + modes[&minus].conj()) * 0.5)
            })
            .collect();
        return sym;
    }
    modes
}

/// The field of `modes` sampled on a grid of `shape` (C order), by direct summation.
fn synthesize(modes: &Modes, shape: &[usize]) -> Vec<Complex<f64>> {
    let total: usize = shape.iter().product();
    (0..total)
        .map(|mut lin| {
            let mut x = vec![0usize; shape.len()];
            for a in (0..shape.len()).rev() {
                x[a] = lin % shape[a];
                lin /= shape[a];
            }
            modes
                .iter()
                .map(|(k, c)| {
                    let phase: f64 = k
                        .iter()
                        .zip(&x)
                        .zip(shape)
                        .map(|((&k, &x), &m)| k as f64 * x as f64 / m as f64)
                        .sum();
                    c * Complex::from_polar(1.0, 2.0 * std::f64::consts::PI * phase)
                })
                .sum()
        })
        .collect()
}

/// `total · modes` at the spectral indices of shape `spectral` (the last axis halved when
/// `half`), zero at Nyquist indices and absent modes.
fn spectrum_of(modes: &Modes, n: &[usize], half: bool, total: f64) -> Vec<Complex<f64>> {
    let d = n.len();
    let mut spectral = n.to_vec();
    if half {
        spectral[d - 1] = n[d - 1] / 2 + 1;
    }
    let len: usize = spectral.iter().product();
    (0..len)
        .map(|mut lin| {
            let mut k = vec![0i64; d];
            let mut nyquist = false;
            for a in (0..d).rev() {
                let j = lin % spectral[a];
                lin /= spectral[a];
                nyquist |= n[a] & 1 == 0 && j == n[a] / 2;
                k[a] = if half && a == d - 1 {
                    j as i64
                } else {
                    wavenumber(n[a], j)
                };
            }
            match modes.get(&k) {
                Some(c) if !nyquist => c * total,
                _ => Complex::default(),
            }
        })
        .collect()
}

/// Padded (3/2 rule) plans: forward on the padded grid equals the unpadded spectrum of
/// band-limited data, backward samples the same polynomial on the padded grid, and a product
/// of two band-limited fields formed on the padded grid has its exact spectrum (no aliasing),
/// while the same product on the unpadded grid is aliased.
fn padding(world: &impl Communicator, rank: usize, size: usize, errors: &mut Errors) {
    let n = [8usize, 7, 10];
    let m = [12usize, 10, 15];
    let total = n.iter().product::<usize>() as f64;
    let tol = tolerance::<f64>(m.iter().product());
    for (_, dims, transposed, opts) in balanced_cases(size, 1..3) {
        let opts = opts.padding(vec![1.5; 3]);
        let what = format!("padded grid {dims:?} transposed={transposed}");
        // Complex.
        let c = band_limited(&n, 5, false);
        let u_m = synthesize(&c, &m);
        let want_global = spectrum_of(&c, &n, false, total);
        let mut plan = FftPlan::<f64>::new(world, &n, opts.clone()).expect(&what);
        assert_eq!(plan.global_shape(), &m[..]);
        assert_eq!(plan.spectral_shape(), &n[..]);
        check_estimate(plan.pipeline(), 1, plan.work_len(), &what);
        let input = local_block(&u_m, plan.input_layout(), rank);
        let mut out = vec![Complex::default(); plan.output_len()];
        plan.forward(&input, &mut out).unwrap();
        let want = local_block(&want_global, plan.output_layout(), rank);
        let err = error_vs(&out, &want, max_norm(&want_global));
        errors.check(&what, "padded c2c forward f64".into(), err, tol);
        let mut back = vec![Complex::default(); plan.input_len()];
        plan.backward(&out, &mut back).unwrap();
        let err = error_vs(&back, &input, max_norm(&u_m));
        errors.check(&what, "padded c2c backward f64".into(), err, tol);

        // Real, and the dealiased product.
        let cu = band_limited(&n, 6, true);
        let cv = band_limited(&n, 7, true);
        let um: Vec<f64> = synthesize(&cu, &m).iter().map(|z| z.re).collect();
        let vm: Vec<f64> = synthesize(&cv, &m).iter().map(|z| z.re).collect();
        let mut plan = RealFftPlan::<f64>::new(world, &n, opts.clone()).expect(&what);
        assert_eq!(plan.global_shape(), &m[..]);
        check_estimate(plan.pipeline(), 1, plan.work_len(), &what);
        let u = local_block(&um, plan.input_layout(), rank);
        let v = local_block(&vm, plan.input_layout(), rank);
        let mut uh = vec![Complex::default(); plan.output_len()];
        plan.forward(&u, &mut uh).unwrap();
        let want_global = spectrum_of(&cu, &n, true, total);
        let want = local_block(&want_global, plan.output_layout(), rank);
        let err = error_vs(&uh, &want, max_norm(&want_global));
        errors.check(&what, "padded r2c forward f64".into(), err, tol);
        let mut back = vec![0.0; plan.input_len()];
        plan.backward(&uh, &mut back).unwrap();
        let u_scale = um.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let err = error_vs(&complexify(&back), &complexify(&u), u_scale);
        errors.check(&what, "padded c2r backward f64".into(), err, tol);

        let mut product = Modes::new();
        for (ka, a) in &cu {
            for (kb, b) in &cv {
                let k: Vec<i64> = ka.iter().zip(kb).map(|(x, y)| x + y).collect();
                *product.entry(k).or_default() += a * b;
            }
        }
        let w: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a * b).collect();
        let mut wh = vec![Complex::default(); plan.output_len()];
        plan.forward(&w, &mut wh).unwrap();
        let exact_global = spectrum_of(&product, &n, true, total);
        let exact = local_block(&exact_global, plan.output_layout(), rank);
        let err = error_vs(&wh, &exact, max_norm(&exact_global));
        errors.check(&what, "dealiased product f64".into(), err, tol);

        // The same product on the unpadded grid is aliased (the check above means something).
        let plain_opts = FftOptions {
            padding: None,
            ..opts.clone()
        };
        let mut plain = RealFftPlan::<f64>::new(world, &n, plain_opts).unwrap();
        let un: Vec<f64> = synthesize(&cu, &n).iter().map(|z| z.re).collect();
        let vn: Vec<f64> = synthesize(&cv, &n).iter().map(|z| z.re).collect();
        let wn: Vec<f64> = un.iter().zip(&vn).map(|(a, b)| a * b).collect();
        let mut wh = vec![Complex::default(); plain.output_len()];
        plain
            .forward(&local_block(&wn, plain.input_layout(), rank), &mut wh)
            .unwrap();
        let exact = local_block(&exact_global, plain.output_layout(), rank);
        let mut aliased = error_vs(&wh, &exact, max_norm(&exact_global));
        let mut worst = 0.0f64;
        world.all_reduce_into(&aliased, &mut worst, SystemOperation::max());
        aliased = worst;
        assert!(
            aliased > 1e-3,
            "{what}: the unpadded product should be aliased ({aliased:e})"
        );
    }
}

/// forward and backward allocate nothing, for every plan kind, with batches, r2r axes,
/// padding and both output layouts (after a first call, which may warm up lazy state).
fn no_allocation(world: &impl Communicator, rank: usize) {
    let shape = [9usize, 8, 10];
    for transposed in [false, true] {
        let opts = FftOptions::default()
            .grid(GridChoice::Rank(2))
            .normalization(Normalization::Ortho)
            .transposed_out(transposed)
            .batch(2);
        let mut c = FftPlan::<f64>::new(
            world,
            &shape,
            opts.clone()
                .axes(vec![
                    AxisKind::Fft,
                    AxisKind::R2r(R2rKind::Dct2),
                    AxisKind::Fft,
                ])
                .padding(vec![1.5, 1.0, 1.5]),
        )
        .unwrap();
        let mut r =
            RealFftPlan::<f32>::new(world, &shape, opts.clone().padding(vec![1.5; 3])).unwrap();
        let mut t = R2rPlan::<f64>::new(
            world,
            &shape,
            opts.clone().axes(vec![AxisKind::R2r(R2rKind::Dst3); 3]),
        )
        .unwrap();
        let xc = vec![Complex::new(0.5, 0.25); c.input_len()];
        let mut yc = vec![Complex::default(); c.output_len()];
        let mut bc = vec![Complex::default(); c.input_len()];
        let xr = vec![0.5f32; r.input_len()];
        let mut yr = vec![Complex::default(); r.output_len()];
        let mut br = vec![0.0f32; r.input_len()];
        let xt = vec![0.5; t.input_len()];
        let mut yt = vec![0.0; t.output_len()];
        let mut bt = vec![0.0; t.input_len()];
        // Warm up (first calls may set up lazy state), then count over many calls. Rayon's
        // job queue allocates one block per 63 jobs injected from outside its pool (a few jobs
        // per call), so a correct plan shows far fewer allocations than calls; any allocation
        // per call (a Vec in a hot path) shows at least one per call.
        let mut round = || {
            c.forward(&xc, &mut yc).unwrap();
            c.backward(&yc, &mut bc).unwrap();
            r.forward(&xr, &mut yr).unwrap();
            r.backward(&yr, &mut br).unwrap();
            t.forward(&xt, &mut yt).unwrap();
            t.backward(&yt, &mut bt).unwrap();
        };
        round();
        let before = allocations();
        let rounds = 20;
        for _ in 0..rounds {
            round();
        }
        let count = allocations() - before;
        let calls = 6 * rounds;
        assert!(
            2 * count < calls,
            "rank {rank}: {count} allocations in {calls} forward/backward calls"
        );
    }
}

/// The fused slab path allocates nothing either: on a slab grid each strided sweep is fused
/// with the exchanges next to it, which are cut into pieces (here also one plane per piece:
/// many pieces) and move through MPI messages or the shared-memory window. c2c and r2c, both
/// output layouts, each direction counted alone (after a first call).
///
/// With one rayon thread nothing leaves the calling thread, so the count must be 0. With more,
/// rayon allocates one block of its injector queue (1520 bytes) per 63 jobs injected from
/// outside its pool, and a fused step injects one job per piece (the sweep's parallel loop
/// over its workers) besides the other steps' jobs: a fraction of an allocation per call, while
/// an allocation per call or per piece shows at least one per call.
fn no_allocation_fused_slabs(world: &impl Communicator, rank: usize) {
    let rounds = 20;
    let threads = rayon::current_num_threads();
    for transposed in [false, true] {
        // Private blocks through MPI messages or the pieces' window, or blocks the plan
        // allocated (shared-memory windows on this node: rows straight between the blocks).
        for (shared, plan_blocks) in [(false, false), (true, false), (true, true)] {
            for piece_bytes in [1, FftOptions::DEFAULT_PIECE_BYTES] {
                let opts = FftOptions::default()
                    .grid(GridChoice::Rank(1))
                    .normalization(Normalization::Backward)
                    .transposed_out(transposed)
                    .shared_memory(shared)
                    .piece_bytes(piece_bytes);
                let what = format!(
                    "rank {rank}, slabs, transposed={transposed} shared={shared} \
                     plan_blocks={plan_blocks} piece_bytes={piece_bytes} threads={threads}"
                );
                let mut c = FftPlan::<f64>::new(world, &[9, 8, 10], opts.clone()).expect(&what);
                let mut r = RealFftPlan::<f64>::new(world, &[12, 6, 5], opts).expect(&what);
                let xc = vec![Complex::new(0.5, 0.25); c.input_len()];
                let xr = vec![0.5f64; r.input_len()];
                let (mut yc, mut bc, mut yr, mut br): (
                    SharedBlock<_>,
                    SharedBlock<_>,
                    SharedBlock<_>,
                    SharedBlock<_>,
                ) = if plan_blocks {
                    (
                        c.alloc_output().expect(&what),
                        c.alloc_input().expect(&what),
                        r.alloc_output().expect(&what),
                        r.alloc_input().expect(&what),
                    )
                } else {
                    (
                        vec![Complex::default(); c.output_len()].into(),
                        vec![Complex::default(); c.input_len()].into(),
                        vec![Complex::default(); r.output_len()].into(),
                        vec![0.0f64; r.input_len()].into(),
                    )
                };
                let counts = [
                    (
                        "c2c forward",
                        allocations_in(rounds, || c.forward(&xc, &mut yc).unwrap()),
                    ),
                    (
                        "c2c backward",
                        allocations_in(rounds, || c.backward(&yc, &mut bc).unwrap()),
                    ),
                    (
                        "r2c forward",
                        allocations_in(rounds, || r.forward(&xr, &mut yr).unwrap()),
                    ),
                    (
                        "c2r backward",
                        allocations_in(rounds, || r.backward(&yr, &mut br).unwrap()),
                    ),
                ];
                for (call, count) in counts {
                    let ok = if threads == 1 {
                        count == 0
                    } else {
                        2 * count < rounds
                    };
                    assert!(ok, "{what}: {count} allocations in {rounds} {call} calls");
                }
            }
        }
    }
}

/// Heap allocations made by `rounds` calls of `call`, after one call that may set up lazy
/// state.
fn allocations_in(rounds: usize, mut call: impl FnMut()) -> usize {
    call();
    let before = allocations();
    for _ in 0..rounds {
        call();
    }
    allocations() - before
}
