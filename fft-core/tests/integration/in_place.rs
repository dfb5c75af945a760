//! In-place c2c transforms (`forward_in_place`/`backward_in_place`) under real MPI on 1..=8
//! ranks: on every grid rank, both output layouts, uneven shapes, batched and padded plans,
//! the in-place results equal the out-of-place ones bit for bit and match the serial
//! reference; the plan needs no more work memory for them; wrong buffers get the same typed
//! error on every rank.

use crate::common::*;
use fft_core::{FftError, FftOptions, FftPlan, GridChoice, Normalization};
use mpi::topology::Communicator;
use num_complex::Complex;
use rustfft::FftDirection;

const BODY: &str = "in_place::in_place_body";

mpi_harness::launches!(BODY, 300;
    in_place_np1 => 1, in_place_np2 => 2, in_place_np3 => 3, in_place_np4 => 4,
    in_place_np5 => 5, in_place_np6 => 6, in_place_np7 => 7, in_place_np8 => 8);

fn tolerance(shape: &[usize]) -> f64 {
    let n: usize = shape.iter().product();
    1e-12 * (n as f64).log2().max(1.0)
}

/// Runs `input` forward and back out of place through the c2c plan `plain` and in place
/// through `plan` (the buffer past the input filled with `dirt`), asserts both directions
/// bit-identical, and returns the out-of-place output and the in-place buffer after the
/// round trip.
fn same_in_place(
    plain: &mut FftPlan<f64>,
    plan: &mut FftPlan<f64>,
    input: &[Complex<f64>],
    dirt: Complex<f64>,
    what: &str,
) -> (Vec<Complex<f64>>, Vec<Complex<f64>>) {
    let (n_in, n_out) = (plan.input_len(), plan.output_len());
    assert_eq!(input.len(), n_in, "{what}");
    let mut out = vec![Complex::default(); n_out];
    plain.forward(input, &mut out).expect(what);
    let mut buf = vec![dirt; plan.in_place_len()];
    buf[..n_in].copy_from_slice(input);
    plan.forward_in_place(&mut buf).expect(what);
    assert!(buf[..n_out] == out[..], "{what}: in-place forward differs");
    let mut back = vec![Complex::default(); n_in];
    plain.backward(&out, &mut back).expect(what);
    plan.backward_in_place(&mut buf).expect(what);
    assert!(buf[..n_in] == back[..], "{what}: in-place backward differs");
    (out, buf)
}

#[test]
#[ignore = "MPI body: run by the in_place_np* launchers under mpirun"]
fn in_place_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let shapes: [&[usize]; 5] = [
        &[11, 7, 13],
        &[16, 12, 10],
        &[5, 32, 36],
        &[9, 7, 5, 6],
        &[12, 10],
    ];
    let mut cases = 0;
    for (s, shape) in shapes.iter().enumerate() {
        let x = random_global(shape, 500 + s as u64);
        let reference = serial_fft(&x, shape, FftDirection::Forward);
        let tol = tolerance(shape);
        for dims in grids(size, shape.len()) {
            for transposed in [false, true] {
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .transposed_out(transposed)
                    .normalization(Normalization::Backward)
                    .piece_bytes(if s % 2 == 0 { 1 } else { usize::MAX })
                    .shared_memory(s % 3 != 1);
                let what = format!("shape {shape:?} grid {dims:?} transposed={transposed}");
                let mut plain = FftPlan::<f64>::new(&world, shape, opts.clone()).expect(&what);
                let mut plan =
                    FftPlan::<f64>::new(&world, shape, opts.in_place(true)).expect(&what);
                let input = local_block(&x, plan.input_layout(), rank);
                let want = local_block(&reference, plan.output_layout(), rank);
                let (n_in, n_out) = (plan.input_len(), plan.output_len());
                assert_eq!(plan.in_place_len(), n_in.max(n_out), "{what}");

                // In place (the tail past the input block dirty) against out of place (the
                // plan without the option), which is checked against the serial reference.
                let dirt = Complex::new(1e300, -3.0);
                let (out, buf) = same_in_place(&mut plain, &mut plan, &input, dirt, &what);
                let err = relative_error(&out, &want, max_norm(&reference));
                assert!(err <= tol, "{what}: out-of-place forward error {err:e}");
                let err = relative_error(&buf[..n_in], &input, max_norm(&x));
                assert!(err <= tol, "{what}: in-place round-trip error {err:e}");

                // The plan's out-of-place calls still work, and bit-identically.
                let mut again = vec![Complex::default(); n_out];
                plan.forward(&input, &mut again).expect(&what);
                assert!(
                    again == out,
                    "{what}: out-of-place forward of the in-place plan"
                );

                // In place needs no more memory in all than out of place, up to the
                // difference of the blocks (a transposed slab's lone exchange needs a work
                // block of the larger size where out of place writes the output); which
                // schedules hold work blocks: the lowering tests. (On one rank an in-place
                // FFT of a block this small stages all of it through worker scratch, which
                // out of place reads from the input instead.)
                let (w, p) = (plan.work_len(), plain.work_len());
                assert!(
                    size == 1 || w + n_in.max(n_out) <= p + 2 * n_in.max(n_out),
                    "{what}: in place work {w} + buffer > out of place work {p} + {n_in} + {n_out}",
                );
                cases += 1;
            }
        }
    }
    assert!(cases > 0);
    batched_and_padded(&world, rank, size);
    real_to_real(&world, rank, size);
    errors(&world, rank, size);
    mpi.pass();
}

/// Batched (two fields per call) and padded (3/2 rule) plans in place, on the balanced grid
/// of each rank: bit for bit the out-of-place results.
fn batched_and_padded(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [8, 6, 10];
    for dims in grids(size, 3) {
        for (batch, padding) in [(2, None), (1, Some(vec![1.5; 3])), (3, Some(vec![1.5; 3]))] {
            for transposed in [false, true] {
                let mut opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .transposed_out(transposed)
                    .batch(batch);
                if let Some(p) = &padding {
                    opts = opts.padding(p.clone());
                }
                let what = format!(
                    "grid {dims:?} batch {batch} padding {padding:?} transposed={transposed}"
                );
                let mut plain = FftPlan::<f64>::new(world, &shape, opts.clone()).expect(&what);
                let mut plan =
                    FftPlan::<f64>::new(world, &shape, opts.in_place(true)).expect(&what);
                let global: Vec<usize> = std::iter::once(batch)
                    .chain(plan.global_shape().iter().copied())
                    .collect();
                let x = random_global(&global, 9 + batch as u64);
                let input = local_fields(&x, batch, plan.input_layout(), rank);
                let nan = Complex::new(f64::NAN, 0.0);
                same_in_place(&mut plain, &mut plan, &input, nan, &what);
                let m = plan.input_len().max(plan.output_len());
                let (w, p) = (plan.work_len(), plain.work_len());
                assert!(w + m <= p + 2 * m, "{what}: more memory");
            }
        }
    }
}

/// Real-to-real plans (all axes DCT/DST) and c2c plans with a real-to-real axis, in place:
/// bit for bit the out-of-place results, both output layouts, every grid.
fn real_to_real(world: &impl Communicator, rank: usize, size: usize) {
    use fft_core::{AxisKind, R2rKind, R2rPlan};
    let shape = [9, 7, 6];
    let kinds = [R2rKind::Dct2, R2rKind::Dst1, R2rKind::Dct4];
    let x = random_global(&shape, 31);
    let real: Vec<f64> = x.iter().map(|c| c.re).collect();
    for dims in grids(size, 3) {
        for transposed in [false, true] {
            let what = format!("r2r grid {dims:?} transposed={transposed}");
            let opts = FftOptions::default()
                .grid(GridChoice::Dims(dims.clone()))
                .transposed_out(transposed);
            let r2r = opts
                .clone()
                .axes(kinds.iter().map(|&k| AxisKind::R2r(k)).collect());
            let mut plain = R2rPlan::<f64>::new(world, &shape, r2r.clone()).expect(&what);
            let mut plan = R2rPlan::<f64>::new(world, &shape, r2r.in_place(true)).expect(&what);
            let input = local_block(&real, plan.input_layout(), rank);
            let (n_in, n_out) = (plan.input_len(), plan.output_len());
            let mut out = vec![0.0; n_out];
            plain.forward(&input, &mut out).expect(&what);
            let mut buf = vec![f64::NAN; plan.in_place_len()];
            buf[..n_in].copy_from_slice(&input);
            plan.forward_in_place(&mut buf).expect(&what);
            assert!(buf[..n_out] == out[..], "{what}: in-place forward differs");
            let mut back = vec![0.0; n_in];
            plain.backward(&out, &mut back).expect(&what);
            plan.backward_in_place(&mut buf).expect(&what);
            assert!(buf[..n_in] == back[..], "{what}: in-place backward differs");

            let what = format!("c2c with a DCT axis, grid {dims:?} transposed={transposed}");
            let mixed = opts.axes(vec![
                AxisKind::R2r(R2rKind::Dct2),
                AxisKind::Fft,
                AxisKind::Fft,
            ]);
            let mut plain = FftPlan::<f64>::new(world, &shape, mixed.clone()).expect(&what);
            let mut plan = FftPlan::<f64>::new(world, &shape, mixed.in_place(true)).expect(&what);
            let input = local_block(&x, plan.input_layout(), rank);
            let nan = Complex::new(f64::NAN, 0.0);
            same_in_place(&mut plain, &mut plan, &input, nan, &what);
        }
    }
}

/// Wrong in-place calls: a plan made without the option refuses them, and a buffer of the
/// wrong length on one rank is the same error, naming that rank, on every rank (no hang).
fn errors(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [6, 5, 7];
    let mut plain = FftPlan::<f64>::new(world, &shape, FftOptions::default()).unwrap();
    let mut buf = vec![Complex::default(); plain.input_len().max(plain.output_len())];
    assert_eq!(
        plain.forward_in_place(&mut buf),
        Err(FftError::InPlaceNotPlanned)
    );
    let bad = size - 1;
    // Out of place too: one rank's long output buffer is the same error on every rank.
    let input = vec![Complex::default(); plain.input_len()];
    let long = plain.output_len() + usize::from(rank == bad);
    let mut output = vec![Complex::default(); long];
    match plain.forward(&input, &mut output).unwrap_err() {
        FftError::CallBufferLength {
            rank: r,
            buffer,
            expected,
            actual,
        } => {
            assert_eq!((r, buffer), (bad, "output"), "rank {rank}");
            assert_eq!(actual, expected + 1, "rank {rank}");
        }
        other => panic!("rank {rank}: expected CallBufferLength, got {other}"),
    }
    let opts = FftOptions::default().in_place(true);
    let mut plan = FftPlan::<f64>::new(world, &shape, opts).unwrap();
    let expected = plan.in_place_len();
    let len = if rank == bad { expected + 1 } else { expected };
    let mut buf = vec![Complex::default(); len];
    let err = plan.backward_in_place(&mut buf).unwrap_err();
    // Every rank names the last rank and its numbers (which every rank can check: its
    // block's length is the same function of the rank).
    match err {
        FftError::InPlaceLength {
            rank: r,
            expected: e,
            actual: a,
        } => {
            assert_eq!(r, bad);
            assert_eq!(a, e + 1);
            if rank == bad {
                assert_eq!(e, expected);
            }
        }
        other => panic!("rank {rank}: expected InPlaceLength, got {other}"),
    }
    // The plan still works afterwards on every rank.
    let mut buf = vec![Complex::new(1.0, 0.0); expected];
    plan.forward_in_place(&mut buf).unwrap();
    let total: f64 = buf[..plan.output_len()].iter().map(|c| c.norm()).sum();
    assert_ones_spectrum(world, total, shape.iter().product());
}
