//! (Ignored) the r2c and c2r plane steps of 384 × 384 real planes (384 × 193 complex) on one
//! thread, planes streamed from memory one after another as the steps run them: the step
//! against its parts (the rows' r2c or c2r alone, the column FFT alone) and against the
//! column FFT staged on rows in order.

use super::line::LineOp;
use super::split::{plan_c2r, plan_r2c};
use super::sweep::Through;
use super::tests::best;
use super::*;
use num_complex::Complex;
use redist::alloc::AlignedBuf;

/// `cargo test --release -p fft-core --lib plane_speed -- --ignored --nocapture`: µs per
/// plane, best of 5 sweeps over 48 planes.
#[test]
#[ignore]
fn plane_speed() {
    let (planes, rows, n) = (48, 384, 384);
    let half = n / 2 + 1;
    let mut reals = realfft::RealFftPlanner::<f64>::new();
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    let r2c = plan_r2c(&mut reals, &mut ffts, n);
    let c2r = plan_c2r(&mut reals, &mut ffts, n);
    let fwd_line = LineStep::new(LineOp::R2c(r2c), &[rows, n], 1, half, true, false, n);
    let bwd_line = LineStep::new(LineOp::C2r(c2r), &[rows, half], 1, n, false, true, n);
    let fwd_sweep = Sweep::new(ffts.plan_fft_forward(rows), &[rows, half], 0);
    let bwd_sweep = Sweep::new(ffts.plan_fft_inverse(rows), &[rows, half], 0);
    let fwd = PlaneSteps::new(fwd_line.clone(), vec![fwd_sweep.clone()], true, planes);
    let bwd = PlaneSteps::new(bwd_line.clone(), vec![bwd_sweep.clone()], false, planes);
    let len = fwd.scratch_len(false).max(bwd.scratch_len(true));
    let mut workers = [AlignedBuf::<Complex<f64>>::new(len)];
    let mut scratch = AlignedBuf::<Complex<f64>>::new(len);
    let mut tmp = vec![0.0; fwd_line.tmp_len().max(bwd_line.tmp_len())];

    let mut real = AlignedBuf::<f64>::new(planes * rows * n);
    for (i, v) in real.iter_mut().enumerate() {
        *v = (i % 7) as f64 - 3.0;
    }
    let mut cplx = AlignedBuf::<f64>::new(planes * rows * half * 2);
    let (rl, cl) = (rows * n, rows * half * 2);
    let per = |t: f64| t / planes as f64 * 1e6;

    let r2c_rows = best(5, || {
        for p in 0..planes {
            let (y, x) = (&mut cplx[p * cl..(p + 1) * cl], &real[p * rl..(p + 1) * rl]);
            fwd_line.run_lines(y, x, 1.0, &mut tmp);
        }
    });
    let fwd_cols = best(5, || {
        for p in 0..planes {
            let y: &mut [Complex<f64>] = bytemuck::cast_slice_mut(&mut cplx[p * cl..(p + 1) * cl]);
            fwd_sweep.run_serial(y, None, None, &mut scratch, Through::Staging);
        }
    });
    // The step (rows into digit-swapped rows, then the column FFT in place unstaged)
    // against rows in order and the column FFT through its staging block.
    let fwd_step = best(5, || fwd.run(&mut cplx, &real, 1.0, &mut workers));
    let fwd_staged = best(5, || {
        for p in 0..planes {
            let (y, x) = (&mut cplx[p * cl..(p + 1) * cl], &real[p * rl..(p + 1) * rl]);
            fwd_line.run_lines(y, x, 1.0, &mut tmp);
            let y: &mut [Complex<f64>] = bytemuck::cast_slice_mut(y);
            fwd_sweep.run_serial(y, None, None, &mut scratch, Through::Staging);
        }
    });
    println!(
        "r2c: rows {:.0} µs + columns {:.0} µs = {:.0}; step {:.0} µs; in order and staged \
         {:.0} µs",
        per(r2c_rows),
        per(fwd_cols),
        per(r2c_rows + fwd_cols),
        per(fwd_step),
        per(fwd_staged)
    );

    let bwd_cols = best(5, || {
        for p in 0..planes {
            let y: &mut [Complex<f64>] = bytemuck::cast_slice_mut(&mut cplx[p * cl..(p + 1) * cl]);
            bwd_sweep.run_serial(y, None, None, &mut scratch, Through::Staging);
        }
    });
    let c2r_rows = best(5, || {
        for p in 0..planes {
            let (y, x) = (&mut real[p * rl..(p + 1) * rl], &cplx[p * cl..(p + 1) * cl]);
            bwd_line.run_lines(y, x, 1.0, &mut tmp);
        }
    });
    // The step (the rows copied digit-swapped into the worker's plane, the column FFT
    // there in place unstaged, then the rows) against the column FFT staged, in place on
    // the source or from it into the plane, then the rows.
    let bwd_step = best(5, || {
        bwd.run_writable(&mut real, &mut cplx, 1.0, &mut workers)
    });
    let bwd_in_place = best(5, || {
        for p in 0..planes {
            let x = &mut cplx[p * cl..(p + 1) * cl];
            let plane: &mut [Complex<f64>] = bytemuck::cast_slice_mut(x);
            bwd_sweep.run_serial(plane, None, None, &mut scratch, Through::Staging);
            let y = &mut real[p * rl..(p + 1) * rl];
            bwd_line.run_lines(y, bytemuck::cast_slice(plane), 1.0, &mut tmp);
        }
    });
    let mut plane = AlignedBuf::<Complex<f64>>::new(cl / 2);
    let bwd_staged = best(5, || {
        for p in 0..planes {
            let x: &[Complex<f64>] = bytemuck::cast_slice(&cplx[p * cl..(p + 1) * cl]);
            bwd_sweep.run_serial(&mut plane, Some(x), None, &mut scratch, Through::Staging);
            let y = &mut real[p * rl..(p + 1) * rl];
            bwd_line.run_lines(y, bytemuck::cast_slice(&plane[..]), 1.0, &mut tmp);
        }
    });
    println!(
        "c2r: columns {:.0} µs + rows {:.0} µs = {:.0}; step {:.0} µs; staged in place \
         {:.0} µs, staged into a plane {:.0} µs",
        per(bwd_cols),
        per(c2r_rows),
        per(bwd_cols + c2r_rows),
        per(bwd_step),
        per(bwd_in_place),
        per(bwd_staged)
    );
    // In cache: one plane over and over.
    let one_cols = best(30, || {
        let y: &mut [Complex<f64>] = bytemuck::cast_slice_mut(&mut cplx[..cl]);
        bwd_sweep.run_serial(y, None, None, &mut scratch, Through::Staging);
    });
    let one_rows = best(30, || {
        bwd_line.run_lines(&mut real[..rl], &cplx[..cl], 1.0, &mut tmp)
    });
    let one_r2c = best(30, || {
        fwd_line.run_lines(&mut cplx[..cl], &real[..rl], 1.0, &mut tmp)
    });
    println!(
        "one plane again and again: c2r columns {:.0} µs, c2r rows {:.0} µs, r2c rows {:.0} µs",
        one_cols * 1e6,
        one_rows * 1e6,
        one_r2c * 1e6
    );
}
