//! In-place real-to-complex transforms (`RealFftPlan::forward_in_place`/`backward_in_place`,
//! FFTW's padded real layout) under real MPI on 1, 2, 3, 4 and 8 ranks: on every grid rank,
//! both output layouts, uneven shapes (ranks that own nothing on 8), each normalization,
//! batched and padded plans, f64 and f32, the in-place results equal the out-of-place ones
//! bit for bit, and those match the serial reference (numpy's `rfftn`: a serial complex FFT
//! of the real data cut to the half spectrum); the padded view indexes the rows FFTW's way;
//! wrong buffers get the same typed error on every rank; the calls allocate nothing; the plan
//! holds no more memory for them than out of place, but for the row padding.

use crate::allocations;
use crate::common::*;
use fft_core::{as_complex, FftError, FftOptions, GridChoice, Normalization, RealFftPlan};
use mpi::topology::Communicator;
use num_complex::Complex;

const BODY: &str = "in_place_real::in_place_real_body";

mpi_harness::launches!(BODY, 300;
    in_place_real_np1 => 1, in_place_real_np2 => 2, in_place_real_np3 => 3,
    in_place_real_np4 => 4, in_place_real_np8 => 8);

/// The dense real block (input layout, C order, rows of `n`) in FFTW's padded layout at the
/// start of a buffer of `len` scalars, the rest `fill`: written row by row, independently
/// of the plan's view.
fn padded<T: Copy>(dense: &[T], n: usize, len: usize, fill: T) -> Vec<T> {
    let p = 2 * (n / 2 + 1);
    let mut buf = vec![fill; len];
    for (r, row) in dense.chunks(n).enumerate() {
        buf[r * p..r * p + n].copy_from_slice(row);
    }
    buf
}

/// In place needs no more memory in all than out of place but FFTW's row padding: the in-place
/// plan's work and its one buffer of `len` scalars against the work, input (`n_in` scalars in
/// rows of `n`) and output (`n_out` complex) of the plan made without the option. Work
/// lengths count complex elements, two scalars each.
fn assert_no_more_memory(
    work: (usize, usize),
    len: usize,
    lens: (usize, usize),
    n: usize,
    what: &str,
) {
    let ((w, q), (n_in, n_out)) = (work, lens);
    let padding = n_in / n * (2 * (n / 2 + 1) - n);
    assert!(
        2 * w + len <= 2 * q + n_in + padding + 2 * n_out,
        "{what}: in place work {w} + buffer {len} scalars > out of place work {q} + input \
         {n_in} scalars + output {n_out} + padding {padding} scalars",
    );
}

/// The real data of the padded rows, dense again.
fn unpadded<T: Copy>(buf: &[T], n: usize, rows: usize) -> Vec<T> {
    let p = 2 * (n / 2 + 1);
    (0..rows)
        .flat_map(|r| buf[r * p..r * p + n].to_vec())
        .collect()
}

#[test]
#[ignore = "MPI body: run by the in_place_real_np* launchers under mpirun"]
fn in_place_real_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let shapes: [&[usize]; 3] = [&[7, 10, 9], &[12, 10], &[6, 5, 8]];
    let norms = [
        Normalization::Backward,
        Normalization::Ortho,
        Normalization::None,
    ];
    let mut cases = 0;
    for (s, shape) in shapes.iter().enumerate() {
        let x = random_real(shape, 700 + s as u64);
        let reference = serial_rfft(&x, shape);
        let n_all: usize = shape.iter().product();
        let forward_scale = match norms[s] {
            Normalization::Ortho => 1.0 / (n_all as f64).sqrt(),
            _ => 1.0,
        };
        let reference: Vec<_> = reference.iter().map(|c| c * forward_scale).collect();
        let tol = 1e-12 * (n_all as f64).log2();
        let n = shape[shape.len() - 1];
        for dims in grids(size, shape.len()) {
            for transposed in [false, true] {
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .transposed_out(transposed)
                    .normalization(norms[s])
                    .piece_bytes(if s % 2 == 0 { 1 } else { usize::MAX })
                    .shared_memory(s != 1);
                let what = format!("shape {shape:?} grid {dims:?} transposed={transposed}");
                let mut plain = RealFftPlan::<f64>::new(&world, shape, opts.clone()).expect(&what);
                let mut plan =
                    RealFftPlan::<f64>::new(&world, shape, opts.in_place(true)).expect(&what);
                let input = local_block(&x, plan.input_layout(), rank);
                let want = local_block(&reference, plan.output_layout(), rank);
                let (n_in, n_out) = (plan.input_len(), plan.output_len());
                let rows = n_in / n;
                let p = 2 * (n / 2 + 1);
                let len = plan.in_place_len();
                assert_eq!(len, (rows * p).max(2 * n_out), "{what}");
                let mut shape_padded = plan.input_layout().local_shape(rank);
                *shape_padded.last_mut().unwrap() = p;
                assert_eq!(plan.padded_input_shape(), shape_padded, "{what}");

                // Out of place, checked against the serial reference.
                let mut out = vec![Complex::default(); n_out];
                plain.forward(&input, &mut out).expect(&what);
                let err = relative_error(&out, &want, max_norm(&reference));
                assert!(err <= tol, "{what}: out-of-place forward error {err:e}");

                // In place from the padded rows, the padding and the tail dirty.
                let mut buf = padded(&input, n, len, f64::NAN);
                let view = plan.padded_input_view(&buf).expect(&what);
                assert!(
                    view == plain.input_view(&input).unwrap(),
                    "{what}: padded view"
                );
                plan.forward_in_place(&mut buf).expect(&what);
                assert!(
                    as_complex(&buf)[..n_out] == out[..],
                    "{what}: in-place forward differs"
                );
                let mut back = vec![0.0; n_in];
                plain.backward(&out, &mut back).expect(&what);
                plan.backward_in_place(&mut buf).expect(&what);
                assert!(
                    unpadded(&buf, n, rows) == back,
                    "{what}: in-place backward differs"
                );
                let inverse = match norms[s] {
                    Normalization::None => 1.0 / n_all as f64,
                    _ => 1.0,
                };
                let round = complexify(&back.iter().map(|v| v * inverse).collect::<Vec<_>>());
                let err = relative_error(&round, &complexify(&input), 1.0);
                assert!(err <= tol, "{what}: in-place round-trip error {err:e}");

                // Again through the view, and with no allocation.
                buf.fill(f64::NAN);
                let mut view = plan.padded_input_view_mut(&mut buf).unwrap();
                view.assign(&plain.input_view(&input).unwrap());
                let before = allocations();
                plan.forward_in_place(&mut buf).expect(&what);
                plan.backward_in_place(&mut buf).expect(&what);
                assert_eq!(allocations(), before, "{what}: in-place calls allocate");
                assert!(unpadded(&buf, n, rows) == back, "{what}: second round trip");
                let work = (plan.work_len(), plain.work_len());
                assert_no_more_memory(work, len, (n_in, n_out), n, &what);
                cases += 1;
            }
        }
    }
    assert!(cases > 0);
    batched_padded_f32(&world, rank, size);
    errors(&world, rank, size);
    mpi.pass();
}

/// Batched (two fields per call), padded (3/2 rule) and f32 plans in place on the balanced
/// grid: bit for bit the out-of-place results.
fn batched_padded_f32(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [8, 6, 10];
    let dims = grids(size, 3).pop().unwrap();
    for (batch, padding) in [(2, None), (1, Some(vec![1.5; 3])), (2, Some(vec![1.5; 3]))] {
        for transposed in [false, true] {
            let mut opts = FftOptions::default()
                .grid(GridChoice::Dims(dims.clone()))
                .transposed_out(transposed)
                .batch(batch);
            if let Some(p) = &padding {
                opts = opts.padding(p.clone());
            }
            let what = format!("grid {dims:?} batch {batch} padding {padding:?} t={transposed}");
            let mut plain = RealFftPlan::<f64>::new(world, &shape, opts.clone()).expect(&what);
            let mut plan =
                RealFftPlan::<f64>::new(world, &shape, opts.clone().in_place(true)).expect(&what);
            let global: Vec<usize> = std::iter::once(batch)
                .chain(plan.global_shape().iter().copied())
                .collect();
            let n = *global.last().unwrap();
            let x = random_real(&global, 17 + batch as u64);
            let input = local_fields(&x, batch, plan.input_layout(), rank);
            same_padded_in_place(&mut plain, &mut plan, &input, n, &what);

            // f32 alike.
            let what = format!("f32 {what}");
            let mut plain = RealFftPlan::<f32>::new(world, &shape, opts.clone()).expect(&what);
            let mut plan =
                RealFftPlan::<f32>::new(world, &shape, opts.in_place(true)).expect(&what);
            let input: Vec<f32> = input.iter().map(|&v| v as f32).collect();
            same_padded_in_place(&mut plain, &mut plan, &input, n, &what);
        }
    }
}

/// Runs `input` (this rank's dense block, rows of `n`) forward and back out of place through
/// `plain` and in place from FFTW's padded rows (the padding and the tail NaN) through
/// `plan`; asserts the plan's padded view of the rows, both directions bit-identical and no
/// more memory in place.
fn same_padded_in_place<T: fft_core::Real>(
    plain: &mut RealFftPlan<T>,
    plan: &mut RealFftPlan<T>,
    input: &[T],
    n: usize,
    what: &str,
) where
    Complex<T>: redist::Element,
{
    let (n_in, n_out) = (plan.input_len(), plan.output_len());
    assert_eq!(input.len(), n_in, "{what}");
    let mut out = vec![Complex::default(); n_out];
    plain.forward(input, &mut out).expect(what);
    let mut buf = padded(input, n, plan.in_place_len(), T::nan());
    assert!(
        plan.padded_input_view(&buf).unwrap() == plain.input_view(input).unwrap(),
        "{what}: padded view"
    );
    plan.forward_in_place(&mut buf).expect(what);
    assert!(
        as_complex(&buf)[..n_out] == out[..],
        "{what}: forward differs"
    );
    let mut back = vec![T::zero(); n_in];
    plain.backward(&out, &mut back).expect(what);
    plan.backward_in_place(&mut buf).expect(what);
    assert!(
        unpadded(&buf, n, n_in / n) == back,
        "{what}: backward differs"
    );
    let work = (plan.work_len(), plain.work_len());
    assert_no_more_memory(work, buf.len(), (n_in, n_out), n, what);
}

/// Wrong in-place calls: a plan made without the option refuses them, and a buffer of the
/// wrong length on one rank is the same error, naming that rank, on every rank (no hang).
fn errors(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [6, 5, 7];
    let mut plain = RealFftPlan::<f64>::new(world, &shape, FftOptions::default()).unwrap();
    let mut buf = vec![0.0; 2 * plain.input_len().max(plain.output_len())];
    assert_eq!(
        plain.forward_in_place(&mut buf),
        Err(FftError::InPlaceNotPlanned)
    );
    let opts = FftOptions::default().in_place(true);
    let mut plan = RealFftPlan::<f64>::new(world, &shape, opts).unwrap();
    let expected = plan.in_place_len();
    assert_eq!(expected % 2, 0);
    let bad = size - 1;
    // The unpadded length, on the last rank only.
    let len = if rank == bad {
        plan.input_len().max(2 * plan.output_len()) - 1
    } else {
        expected
    };
    let mut buf = vec![0.0; len];
    for forward in [true, false] {
        let err = if forward {
            plan.forward_in_place(&mut buf)
        } else {
            plan.backward_in_place(&mut buf)
        };
        match err.unwrap_err() {
            FftError::InPlaceLength {
                rank: r,
                expected: e,
                actual: a,
            } => {
                assert_eq!(r, bad);
                if rank == bad {
                    assert_eq!((e, a), (expected, len));
                }
            }
            other => panic!("rank {rank}: expected InPlaceLength, got {other}"),
        }
    }
    assert!(matches!(
        plan.padded_input_view(&buf[..expected.min(buf.len()) - 1]),
        Err(FftError::BufferLength { .. })
    ));
    // The plan still works afterwards on every rank: all ones give N at the zero mode.
    let mut buf = vec![0.0; expected];
    plan.padded_input_view_mut(&mut buf).unwrap().fill(1.0);
    plan.forward_in_place(&mut buf).unwrap();
    let total: f64 = as_complex(&buf)[..plan.output_len()]
        .iter()
        .map(|c| c.norm())
        .sum();
    assert_ones_spectrum(world, total, shape.iter().product());
}
