//! The kernels against rustfft: plane kernels and steps, digit-swapped rows, sub-blocks in
//! cache, and the scratch bounds.

use super::line::LineOp;
use super::plane::PlaneEnd;
use super::rows::{Rows, RunMap};
use super::*;
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::piecewise::{Run, RunBuffer};
use rustfft::Fft;
use std::sync::Arc;

/// Seconds of the best of `reps` calls of `f` (the ignored speed tests).
pub(super) fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Deterministic data in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = (i as u64 + 1).wrapping_mul(6364136223846793005) ^ seed;
            ((x >> 11) % 2000) as f64 / 1000.0 - 1.0
        })
        .collect()
}

/// The memory estimate's bound covers a strided sweep's scratch (tiles or column
/// staging) for every length up to past the longest column FFT, short and long rows.
#[test]
fn swapped_planes_need_no_staging() {
    let mut planner = rustfft::FftPlanner::<f64>::new();
    // The last two: the in-cache group's first sweep is a column FFT too, staged in two
    // output planes not yet written (`borrowed_pair`).
    for shape in [
        [64usize, 8, 12],
        [32, 6, 16],
        [16, 3, 5],
        [12, 4, 8],
        [32, 32, 16],
        [16, 64, 32],
    ] {
        let len: usize = shape.iter().product();
        let input: Vec<Complex<f64>> = data(2 * len, 3)
            .chunks(2)
            .map(|p| Complex::new(p[0], p[1]))
            .collect();
        let ffts: Vec<Arc<dyn Fft<f64>>> =
            shape.iter().map(|&n| planner.plan_fft_forward(n)).collect();
        // Reference: each axis in turn, lines copied out and back.
        let mut want = input.clone();
        for (axis, fft) in ffts.iter().enumerate() {
            let n = shape[axis];
            let stride: usize = shape[axis + 1..].iter().product();
            for start in (0..len).filter(|i| (i / stride).is_multiple_of(n)) {
                let mut line: Vec<_> = (0..n).map(|i| want[start + i * stride]).collect();
                fft.process(&mut line);
                for (i, v) in line.into_iter().enumerate() {
                    want[start + i * stride] = v;
                }
            }
        }
        let local = LocalFft::new(
            ffts,
            &shape,
            &[0, 1, 2],
            rayon::current_num_threads(),
            false,
        );
        let threads = rayon::current_num_threads().max(1);
        let swaps = local.swap && local.in_cache(threads);
        let column = local.rest.first().is_some_and(|s| s.column.is_some());
        assert_eq!(
            swaps, column,
            "shape {shape:?}: swaps where axis 0 has a column FFT"
        );
        let scratch = local.scratch_len(true, threads);
        if swaps {
            assert!(scratch < local.scratch_len(false, threads), "{shape:?}");
        }
        if local.borrow {
            // Only rustfft's scratch for the contiguous sweep: no staging at all.
            assert!(scratch <= shape[2], "{shape:?}: scratch {scratch}");
        }
        let mut workers: Vec<_> = (0..threads).map(|_| AlignedBuf::new(scratch)).collect();
        let mut got = vec![Complex::new(f64::NAN, 0.0); len];
        let kept = input.clone();
        local.run(&mut got, Some(&input), 0.5, &mut workers);
        assert_eq!(input, kept, "the input is kept");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w * 0.5).norm() < 1e-12 * len as f64,
                "{shape:?} at {i}: {g} != {w}"
            );
        }
    }
}

/// An in-place step whose sweep across each sub-block's rows is a column FFT takes those
/// rows digit-swapped (`take_swapped_rows`) with no staging block, and gives what it
/// gives on rows in order.
#[test]
fn in_place_steps_take_rows_digit_swapped() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        let mut planner = rustfft::FftPlanner::<f64>::new();
        for shape in [[8usize, 16, 12], [6, 32, 40], [5, 64, 3]] {
            let len: usize = shape.iter().product();
            let input: Vec<Complex<f64>> = bytemuck::cast_slice(&data(2 * len, 9)).to_vec();
            let ffts: Vec<Arc<dyn Fft<f64>>> = shape[1..]
                .iter()
                .map(|&n| planner.plan_fft_inverse(n))
                .collect();
            let plain = LocalFft::new(
                ffts.clone(),
                &shape,
                &[1, 2],
                rayon::current_num_threads(),
                false,
            );
            let mut swapped =
                LocalFft::new(ffts, &shape, &[1, 2], rayon::current_num_threads(), false);
            let Some((rows, inner, swap)) = swapped.swappable_rows(2) else {
                assert!(
                    !super::column::available(),
                    "{shape:?}: a column FFT across"
                );
                continue;
            };
            assert_eq!((rows, inner), (shape[1], shape[2]));
            swapped.take_swapped_rows();
            // Rows of 512 bytes would share L1 sets: those keep the staging block.
            let aliased = LocalFft::new(
                vec![planner.plan_fft_inverse(rows), planner.plan_fft_inverse(32)],
                &[shape[0], rows, 32],
                &[1, 2],
                rayon::current_num_threads(),
                false,
            );
            assert!(aliased.swappable_rows(2).is_none(), "{shape:?}: rows of 32");
            let staging = plain.scratch_len(false, 2);
            let scratch = swapped.scratch_len(false, 2);
            assert!(
                scratch < staging && scratch <= 2 * shape[2],
                "{shape:?}: {scratch}"
            );
            let mut want = input.clone();
            let mut workers: Vec<_> = (0..2).map(|_| AlignedBuf::new(staging)).collect();
            plain.run(&mut want, None, 0.5, &mut workers);
            // Row `i` of each sub-block in row `swap(i)`.
            let mut got = input.clone();
            for (b, sub) in input.chunks(rows * inner).enumerate() {
                for (i, row) in sub.chunks(inner).enumerate() {
                    let at = (b * rows + swap.apply(i)) * inner;
                    got[at..at + inner].copy_from_slice(row);
                }
            }
            let mut workers: Vec<_> = (0..2).map(|_| AlignedBuf::new(scratch)).collect();
            swapped.run(&mut got, None, 0.5, &mut workers);
            let error = max_diff(&got, &want);
            assert!(error < 1e-12, "{shape:?}: error {error}");
        }
    });
}

/// An FFT plane kernel whose sweep across is a column FFT transforms each plane in the
/// rows it writes when they lie a grid apart by no multiple of 512 bytes (`fit_to`),
/// with no plane buffer, and keeps the buffer for rows a power of two apart; it needs
/// none either way when it writes a block. Against rustfft line by line.
#[test]
fn plane_kernels_transform_in_rows_a_spread_grid_apart() {
    let (planes, rows, inner) = (3, 16, 36);
    let count = planes * rows;
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    let all = Planes {
        groups: 1,
        count: planes,
        range: 0..planes,
    };
    let x: Vec<Complex<f64>> = bytemuck::cast_slice(&data(2 * count * inner, 7)).to_vec();
    let (along, down) = (ffts.plan_fft_forward(inner), ffts.plan_fft_forward(rows));
    let want = plane_ffts(&x, (planes, rows, inner), &*along, &*down, 1.0);
    // A transposed slab's rows: plane `o`'s row `i` at row `i · planes + o` (rows 1 728
    // bytes apart), or 64 rows apart (36 864 bytes, a multiple of 4 KiB).
    for (spacing, spread) in [(planes, true), (64, false)] {
        let runs: Vec<Run> = (0..count)
            .map(|r| Run::new(RunBuffer::Block, ((r % rows) * spacing + r / rows) * inner))
            .collect();
        let map = RunMap::new(runs.clone(), inner);
        let mut kernel = PlaneKernel::ffts(
            vec![
                Sweep::new(down.clone(), &[rows, inner], 0),
                Sweep::new(along.clone(), &[rows, inner], 1),
            ],
            planes,
            &[rows, inner],
        );
        let buffered = kernel.scratch_len();
        kernel.fit_to(Some(&map));
        let column = kernel.swapped_across().is_some();
        assert_eq!(kernel.in_rows, column && spread, "spacing {spacing}");
        if kernel.in_rows {
            assert!(
                kernel.scratch_len() + rows * inner <= buffered,
                "no plane buffer"
            );
        }
        let len = kernel.scratch_len();
        let mut workers = [AlignedBuf::<Complex<f64>>::new(len), AlignedBuf::new(len)];
        let mut block = vec![Complex::new(f64::NAN, 0.0); rows * spacing * inner];
        let to = Rows::from_map(&map, block.as_mut_ptr(), std::ptr::null_mut(), inner);
        let src = PlaneEnd::Block(x.as_ptr() as *mut f64);
        // SAFETY: the map names every row once, within `block`.
        unsafe { kernel.run_mapped(src, PlaneEnd::Rows(to), 1.0, &mut workers, &all) };
        let got = read_rows(&runs, &block, &[], inner);
        let error = max_diff(&got, &want);
        assert!(error < 1e-10, "spacing {spacing}: error {error}");
    }
    // Writing a block, a swapping kernel needs no plane buffer.
    let mut kernel = PlaneKernel::ffts(
        vec![
            Sweep::new(down, &[rows, inner], 0),
            Sweep::new(along, &[rows, inner], 1),
        ],
        planes,
        &[rows, inner],
    );
    kernel.fit_to(None);
    assert_eq!(kernel.buffer, kernel.swapped_across().is_none());
}

#[test]
fn planes_match_the_steps_one_after_another() {
    // Four planes of 6 × 10 reals: r2c along the rows (10 → 6 modes), then an FFT of
    // length 6 along the plane's other axis; and back with a c2r.
    let (planes, rows, n) = (4, 6, 10);
    let half = n / 2 + 1;
    let mut reals = realfft::RealFftPlanner::<f64>::new();
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    let workers = || [AlignedBuf::<Complex<f64>>::new(4096), AlignedBuf::new(4096)];
    let input = data(planes * rows * n, 1);

    // Forward, step by step over the whole block.
    let mut r2c = |shape: &[usize], position| {
        LineStep::new(
            LineOp::R2c(reals.plan_fft_forward(n)),
            shape,
            position,
            half,
            true,
            false,
            n,
        )
    };
    let whole_line = r2c(&[planes, rows, n], 2);
    let mut want = vec![0.0; planes * rows * half * 2];
    whole_line.run(&mut want, Some(&input), 1.0, &mut workers());
    let forward = ffts.plan_fft_forward(rows);
    let sweep = Sweep::new(forward.clone(), &[planes, rows, half], 1);
    sweep.run(
        bytemuck::cast_slice_mut(&mut want),
        None,
        0.5,
        &mut workers(),
    );

    // The same per plane.
    let steps = PlaneSteps::new(
        r2c(&[rows, n], 1),
        vec![Sweep::new(forward, &[rows, half], 0)],
        true,
        planes,
    );
    assert!(steps.scratch_len(false) <= 4096);
    let mut got = vec![f64::NAN; steps.output_scalars()];
    steps.run(&mut got, &input, 0.5, &mut workers());
    assert_eq!(got, want, "r2c then FFT per plane");

    // Backward: inverse FFT along the plane's axis, then c2r (6 modes → 10 reals).
    let spectrum = data(planes * rows * half * 2, 2);
    let inverse = ffts.plan_fft_inverse(rows);
    let mut mid = spectrum.clone();
    Sweep::new(inverse.clone(), &[planes, rows, half], 1).run(
        bytemuck::cast_slice_mut(&mut mid),
        None,
        1.0,
        &mut workers(),
    );
    let mut c2r = |shape: &[usize], position| {
        LineStep::new(
            LineOp::C2r(reals.plan_fft_inverse(n)),
            shape,
            position,
            n,
            false,
            true,
            n,
        )
    };
    let mut want = vec![0.0; planes * rows * n];
    c2r(&[planes, rows, half], 2).run(&mut want, Some(&mid), 0.25, &mut workers());
    let steps = PlaneSteps::new(
        c2r(&[rows, half], 1),
        vec![Sweep::new(inverse, &[rows, half], 0)],
        false,
        planes,
    );
    let mut got = vec![f64::NAN; steps.output_scalars()];
    steps.run(&mut got, &spectrum, 0.25, &mut workers());
    assert_eq!(got, want, "FFT then c2r per plane");
    // The source is only read.
    assert_eq!(spectrum, data(planes * rows * half * 2, 2));
    // From a source it may overwrite, with only the scratch that asks for (no plane).
    let writable = steps.scratch_len(true);
    assert!(writable < steps.scratch_len(false));
    let mut workers = [AlignedBuf::new(writable), AlignedBuf::new(writable)];
    let mut source = spectrum.clone();
    let mut got = vec![f64::NAN; steps.output_scalars()];
    steps.run_writable(&mut got, &mut source, 0.25, &mut workers);
    assert_eq!(got, want, "FFT in place then c2r per plane");
}

/// Rows `0..count` of `inner` elements scattered over a block (even rows, backwards) and a
/// message buffer (odd rows), as an exchange's run map puts them.
fn scattered_rows(count: usize, inner: usize) -> Vec<redist::piecewise::Run> {
    let evens = count.div_ceil(2);
    (0..count)
        .map(|r| match r % 2 {
            0 => Run::new(RunBuffer::Block, (evens - 1 - r / 2) * inner),
            _ => Run::new(RunBuffer::Message, (r / 2) * inner),
        })
        .collect()
}

/// The rows of a run map read back in row order.
fn read_rows(
    runs: &[redist::piecewise::Run],
    block: &[Complex<f64>],
    message: &[Complex<f64>],
    inner: usize,
) -> Vec<Complex<f64>> {
    runs.iter()
        .flat_map(|run| {
            let buffer = match run.buffer() {
                redist::piecewise::RunBuffer::Block => block,
                redist::piecewise::RunBuffer::Message => message,
            };
            buffer[run.offset()..run.offset() + inner].to_vec()
        })
        .collect()
}

/// The largest distance between corresponding elements.
fn max_diff(got: &[Complex<f64>], want: &[Complex<f64>]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max)
}

/// `x` as `planes` planes of `rows` rows of `inner`: `along` each row, then `down` each
/// column of every plane, times `scale` (rustfft line by line).
fn plane_ffts(
    x: &[Complex<f64>],
    (planes, rows, inner): (usize, usize, usize),
    along: &dyn Fft<f64>,
    down: &dyn Fft<f64>,
    scale: f64,
) -> Vec<Complex<f64>> {
    let mut want = x.to_vec();
    want.chunks_exact_mut(inner).for_each(|l| along.process(l));
    for p in 0..planes {
        for k in 0..inner {
            let at = |i: usize| (p * rows + i) * inner + k;
            let mut column: Vec<_> = (0..rows).map(|i| want[at(i)]).collect();
            down.process(&mut column);
            for (i, v) in column.into_iter().enumerate() {
                want[at(i)] = v * scale;
            }
        }
    }
    want
}

#[test]
fn plane_kernels_write_and_read_rows_where_the_map_says() {
    let (planes, rows, inner) = (5, 6, 8);
    let count = planes * rows;
    let runs = scattered_rows(count, inner);
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    let workers = || [AlignedBuf::<Complex<f64>>::new(4096), AlignedBuf::new(4096)];
    let all = |range: std::ops::Range<usize>| Planes {
        groups: 1,
        count: planes,
        range,
    };
    let complex = |seed| -> Vec<Complex<f64>> {
        bytemuck::cast_slice(&data(2 * count * inner, seed)).to_vec()
    };

    // FFTs along both axes of each plane, to the rows of the map, two pieces of planes.
    let x = complex(3);
    let (along_rows, across) = (ffts.plan_fft_forward(inner), ffts.plan_fft_forward(rows));
    let mut want = x.clone();
    Sweep::new(along_rows.clone(), &[planes, rows, inner], 2).run(
        &mut want,
        None,
        1.0,
        &mut workers(),
    );
    Sweep::new(across.clone(), &[planes, rows, inner], 1).run(&mut want, None, 0.5, &mut workers());
    let kernel = PlaneKernel::ffts(
        vec![
            Sweep::new(along_rows, &[rows, inner], 1),
            Sweep::new(across, &[rows, inner], 0),
        ],
        planes,
        &[rows, inner],
    );
    assert!(kernel.scratch_len() <= 4096);
    let mut block = vec![Complex::new(f64::NAN, 0.0); count.div_ceil(2) * inner];
    let mut message = vec![Complex::new(f64::NAN, 0.0); count / 2 * inner];
    let to = Rows::mapped(&runs, block.as_mut_ptr(), message.as_mut_ptr(), inner);
    let src = PlaneEnd::Block(x.as_ptr() as *mut f64);
    for range in [0..2, 2..planes] {
        // SAFETY: the map names every row once, within `block` and `message`.
        unsafe { kernel.run_mapped(src, PlaneEnd::Rows(to), 0.5, &mut workers(), &all(range)) };
    }
    assert_eq!(
        read_rows(&runs, &block, &message, inner),
        want,
        "FFTs to rows"
    );

    // A c2r kernel gathering its complex planes from the rows of the map.
    let n = 2 * (inner - 1);
    let mut reals = realfft::RealFftPlanner::<f64>::new();
    let c2r = LineStep::new(
        LineOp::C2r(reals.plan_fft_inverse(n)),
        &[rows, inner],
        1,
        n,
        false,
        true,
        n,
    );
    let inverse = ffts.plan_fft_inverse(rows);
    let steps = PlaneSteps::new(
        c2r,
        vec![Sweep::new(inverse, &[rows, inner], 0)],
        false,
        planes,
    );
    let spectrum = complex(4);
    let mut want = vec![f64::NAN; steps.output_scalars()];
    steps.run(
        &mut want,
        bytemuck::cast_slice(&spectrum),
        0.25,
        &mut workers(),
    );
    // Put the spectrum's rows where the map says.
    for (r, run) in runs.iter().enumerate() {
        let buffer = match run.buffer() {
            redist::piecewise::RunBuffer::Block => &mut block,
            redist::piecewise::RunBuffer::Message => &mut message,
        };
        buffer[run.offset()..run.offset() + inner]
            .copy_from_slice(&spectrum[r * inner..(r + 1) * inner]);
    }
    let kernel = PlaneKernel::steps(&steps, &[rows, inner]).expect("a c2r plane kernel");
    assert!(kernel.gathers() && !kernel.scatters());
    let from = Rows::mapped(&runs, block.as_mut_ptr(), message.as_mut_ptr(), inner);
    let mut got = vec![f64::NAN; kernel.output_scalars()];
    let dst = PlaneEnd::Block(got.as_mut_ptr());
    // SAFETY: the map names every row once; `got` holds every plane.
    unsafe {
        kernel.run_mapped(
            PlaneEnd::Rows(from),
            dst,
            0.25,
            &mut workers(),
            &all(0..planes),
        )
    };
    assert_eq!(got, want, "c2r from rows");
}

/// FFT plane kernels whose sweep across the rows is a column FFT (16 rows) lay the rows
/// digit-swapped and run it in place with no staging block: to the rows of a map from a
/// block, and from them into a block, against rustfft line by line.
#[test]
fn plane_kernels_swap_rows_for_a_column_fft_across() {
    let (planes, rows, inner) = (3, 16, 8);
    let count = planes * rows;
    let runs = scattered_rows(count, inner);
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    let all = Planes {
        groups: 1,
        count: planes,
        range: 0..planes,
    };
    let x: Vec<Complex<f64>> = bytemuck::cast_slice(&data(2 * count * inner, 5)).to_vec();
    let mut reference = |inverse: bool, x: &[Complex<f64>], scale: f64| {
        let (along, down) = match inverse {
            false => (ffts.plan_fft_forward(inner), ffts.plan_fft_forward(rows)),
            true => (ffts.plan_fft_inverse(inner), ffts.plan_fft_inverse(rows)),
        };
        let want = plane_ffts(x, (planes, rows, inner), &*along, &*down, scale);
        (want, along, down)
    };
    let close = |got: &[Complex<f64>], want: &[Complex<f64>], what: &str| {
        let error = max_diff(got, want);
        assert!(error < 1e-12, "{what}: error {error}");
    };
    for inverse in [false, true] {
        let (want, along, down) = reference(inverse, &x, 0.5);
        let kernel = PlaneKernel::ffts(
            vec![
                Sweep::new(down, &[rows, inner], 0),
                Sweep::new(along, &[rows, inner], 1),
            ],
            planes,
            &[rows, inner],
        );
        let swapped = kernel.swapped_across().is_some();
        // Where this CPU has the column FFT, the kernel swaps and needs no staging.
        assert_eq!(swapped, super::column::available());
        if swapped {
            assert!(kernel.scratch_len() < rows * inner + 64, "no staging block");
        }
        let workers = || {
            let len = kernel.scratch_len();
            [AlignedBuf::<Complex<f64>>::new(len), AlignedBuf::new(len)]
        };
        let mut block = vec![Complex::new(f64::NAN, 0.0); count.div_ceil(2) * inner];
        let mut message = vec![Complex::new(f64::NAN, 0.0); count / 2 * inner];
        let to = Rows::mapped(&runs, block.as_mut_ptr(), message.as_mut_ptr(), inner);
        let src = PlaneEnd::Block(x.as_ptr() as *mut f64);
        // SAFETY: the map names every row once, within `block` and `message`.
        unsafe { kernel.run_mapped(src, PlaneEnd::Rows(to), 0.5, &mut workers(), &all) };
        let got = read_rows(&runs, &block, &message, inner);
        close(&got, &want, "to rows");
        let from = Rows::mapped(&runs, block.as_mut_ptr(), message.as_mut_ptr(), inner);
        let mut back = vec![Complex::new(f64::NAN, 0.0); count * inner];
        let dst = PlaneEnd::Block(back.as_mut_ptr() as *mut f64);
        // SAFETY: as above; `back` holds every plane.
        unsafe { kernel.run_mapped(PlaneEnd::Rows(from), dst, 0.5, &mut workers(), &all) };
        let (twice, _, _) = reference(inverse, &want, 0.5);
        close(&back, &twice, "from rows");
    }
}

/// An r2c plane kernel writes its last sweep (across the rows) straight to the rows of a
/// map, and a c2r kernel reads its first straight from them: both against rustfft and
/// realfft line by line, with rows where a column FFT exists (16) and where none does (6).
#[test]
fn plane_steps_move_rows_straight_through_the_sweep_across() {
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    let mut reals = realfft::RealFftPlanner::<f64>::new();
    for (planes, rows, n) in [(5, 6, 14), (3, 16, 16)] {
        let inner = n / 2 + 1;
        let count = planes * rows;
        let runs = scattered_rows(count, inner);
        let all = Planes {
            groups: 1,
            count: planes,
            range: 0..planes,
        };
        let x = data(count * n, 7);
        // The reference: r2c of every row, then the FFT down every column, halved.
        let mut want = vec![Complex::new(0.0, 0.0); count * inner];
        let r2c = reals.plan_fft_forward(n);
        for (line, out) in x.chunks_exact(n).zip(want.chunks_exact_mut(inner)) {
            r2c.process(&mut line.to_vec(), out).expect("r2c lengths");
        }
        let down = ffts.plan_fft_forward(rows);
        for p in 0..planes {
            for k in 0..inner {
                let at = |i: usize| (p * rows + i) * inner + k;
                let mut column: Vec<_> = (0..rows).map(|i| want[at(i)]).collect();
                down.process(&mut column);
                for (i, v) in column.into_iter().enumerate() {
                    want[at(i)] = v * 0.5;
                }
            }
        }
        let line = LineStep::new(
            LineOp::R2c(r2c.clone()),
            &[rows, n],
            1,
            inner,
            true,
            false,
            n,
        );
        let sweep = Sweep::new(down, &[rows, inner], 0);
        let steps = PlaneSteps::new(line, vec![sweep], true, planes);
        let kernel = PlaneKernel::steps(&steps, &[rows, inner]).expect("an r2c plane kernel");
        assert!(kernel.scatters() && !kernel.gathers());
        let workers = || {
            let len = kernel.scratch_len();
            [AlignedBuf::<Complex<f64>>::new(len), AlignedBuf::new(len)]
        };
        let mut block = vec![Complex::new(f64::NAN, 0.0); count.div_ceil(2) * inner];
        let mut message = vec![Complex::new(f64::NAN, 0.0); count / 2 * inner];
        let to = Rows::mapped(&runs, block.as_mut_ptr(), message.as_mut_ptr(), inner);
        let src = PlaneEnd::Block(x.as_ptr() as *mut f64);
        // SAFETY: the map names every row once, within `block` and `message`.
        unsafe { kernel.run_mapped(src, PlaneEnd::Rows(to), 0.5, &mut workers(), &all) };
        let got = read_rows(&runs, &block, &message, inner);
        let error = max_diff(&got, &want);
        assert!(error < 1e-12, "r2c to rows, {rows} rows: error {error}");

        // And back: the c2r kernel from the same rows gives x again (times 0.5 · n ·
        // rows, undone by the scale).
        let line = LineStep::new(
            LineOp::C2r(reals.plan_fft_inverse(n)),
            &[rows, inner],
            1,
            n,
            false,
            true,
            n,
        );
        let sweep = Sweep::new(ffts.plan_fft_inverse(rows), &[rows, inner], 0);
        let steps = PlaneSteps::new(line, vec![sweep], false, planes);
        let kernel = PlaneKernel::steps(&steps, &[rows, inner]).expect("a c2r plane kernel");
        let from = Rows::mapped(&runs, block.as_mut_ptr(), message.as_mut_ptr(), inner);
        let mut back = vec![f64::NAN; count * n];
        let scale = 2.0 / (n * rows) as f64;
        let dst = PlaneEnd::Block(back.as_mut_ptr());
        // SAFETY: as above; `back` holds every plane.
        unsafe { kernel.run_mapped(PlaneEnd::Rows(from), dst, scale, &mut workers(), &all) };
        let error = back
            .iter()
            .zip(&x)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(error < 1e-12, "c2r from rows, {rows} rows: error {error}");
    }
}

/// A column FFT's tasks: whole vectors, at most `column_lines` wide, as few as that allows,
/// covering the row with no sliver.
#[test]
fn column_tasks_are_whole_vectors_of_even_width() {
    assert_eq!(column_task_lines(384, 193), 100);
    assert_eq!(column_task_lines(384, 384), 128);
    assert_eq!(column_task_lines(256, 3), 4);
    for n in [12, 16, 96, 256, 384] {
        let most = column_lines(n);
        assert!(most.is_multiple_of(4), "n {n}");
        for inner in [1, 3, 4, 5, 97, 193, 255, 256, 384, 1000, 74112] {
            let lines = column_task_lines(n, inner);
            let tasks = inner.div_ceil(lines);
            assert!(
                lines.is_multiple_of(4) && lines <= most,
                "n {n} inner {inner}: {lines}"
            );
            assert_eq!(tasks, inner.div_ceil(most), "n {n} inner {inner}: {lines}");
            let last = inner - (tasks - 1) * lines;
            assert!(
                tasks == 1 || last + 4 * tasks > lines,
                "n {n} inner {inner}: sliver {last}"
            );
        }
    }
}

/// Planes larger than L2 (384²) from an input run their rows first, into digit-swapped rows,
/// then the column FFT across them in place, whatever the order given; planes that fit keep
/// the column FFT first, staged in the output. From an input and in place, scaled, against
/// the naive DFT of each row, then of each column, plane by plane.
#[test]
fn large_planes_take_their_rows_first() {
    use super::lengths::naive::naive_dft;
    use rustfft::FftDirection;
    let mut planner = rustfft::FftPlanner::<f64>::new();
    let cases = [
        (384, FftDirection::Forward, [2, 1]),
        (384, FftDirection::Inverse, [1, 2]),
        (256, FftDirection::Inverse, [2, 1]),
    ];
    for (n, direction, positions) in cases {
        let shape = [2, n, n];
        let plane = n * n;
        let input: Vec<Complex<f64>> = bytemuck::cast_slice(&data(4 * plane, 5)).to_vec();
        let fft = super::row::plan_fft(&mut planner, n, direction);
        let local = LocalFft::new(vec![fft.clone(), fft], &shape, &positions, 1, false);
        if super::column::available() {
            // The column FFT first borrows its staging block from the output.
            assert_eq!(
                local.borrow,
                n == 256,
                "n {n}: column FFT first from an input"
            );
        }
        let mut workers = vec![AlignedBuf::new(local.scratch_len(true, 1))];
        let mut got = vec![Complex::new(f64::NAN, 0.0); input.len()];
        local.run(&mut got, Some(&input), 0.5, &mut workers);
        let mut workers = vec![AlignedBuf::new(local.scratch_len(false, 1))];
        let mut in_place = input.clone();
        local.run(&mut in_place, None, 0.5, &mut workers);
        let sign = if direction == FftDirection::Forward {
            -1.0
        } else {
            1.0
        };
        let mut want = input.clone();
        for rows in want.chunks_mut(n) {
            rows.copy_from_slice(&naive_dft(rows, sign));
        }
        for p in want.chunks_mut(plane) {
            for c in 0..n {
                let column: Vec<_> = (0..n).map(|i| p[i * n + c]).collect();
                for (i, v) in naive_dft(&column, sign).into_iter().enumerate() {
                    p[i * n + c] = v;
                }
            }
        }
        want.iter_mut().for_each(|v| *v *= 0.5);
        for (how, got) in [("from an input", got), ("in place", in_place)] {
            let error = max_diff(&got, &want);
            assert!(error < 1e-9, "n {n} {positions:?} {how}: error {error:e}");
        }
    }
}

/// An r2c plane step whose one sweep runs across the rows with a column FFT writes its rows
/// digit-swapped and runs the column FFT on them in place: scaled, against the naive DFT of
/// each real row (its half spectrum), then of each column, plane by plane. The c2r step
/// copies its rows so into its plane first: back to the real input.
#[test]
fn plane_steps_take_their_rows_digit_swapped() {
    use super::lengths::naive::naive_dft;
    let mut reals = realfft::RealFftPlanner::<f64>::new();
    let mut ffts = rustfft::FftPlanner::<f64>::new();
    for (rows, n) in [(384, 384), (24, 10), (16, 36)] {
        let (planes, half) = (2, n / 2 + 1);
        let x = data(planes * rows * n, 9);
        let r2c = super::split::plan_r2c(&mut reals, &mut ffts, n);
        let line = LineStep::new(LineOp::R2c(r2c), &[rows, n], 1, half, true, false, n);
        let down = super::row::plan_fft(&mut ffts, rows, rustfft::FftDirection::Forward);
        let sweep = Sweep::new(down, &[rows, half], 0);
        let steps = PlaneSteps::new(line, vec![sweep], true, planes);
        assert_eq!(steps.swapped_column().is_some(), column::available());
        let mut workers = [AlignedBuf::new(steps.scratch_len(false))];
        let mut got = vec![f64::NAN; steps.output_scalars()];
        steps.run(&mut got, &x, 0.5, &mut workers);

        let mut want = Vec::with_capacity(planes * rows * half);
        for row in x.chunks_exact(n) {
            let row: Vec<_> = row.iter().map(|&v| Complex::new(v, 0.0)).collect();
            want.extend_from_slice(&naive_dft(&row, -1.0)[..half]);
        }
        for p in want.chunks_mut(rows * half) {
            for c in 0..half {
                let column: Vec<_> = (0..rows).map(|i| p[i * half + c]).collect();
                for (i, v) in naive_dft(&column, -1.0).into_iter().enumerate() {
                    p[i * half + c] = v * 0.5;
                }
            }
        }
        let error = max_diff(bytemuck::cast_slice(&got), &want);
        assert!(error < 1e-9, "{rows} × {n}: error {error:e}");

        // And back: the c2r step copies its rows digit-swapped into its plane, from a
        // read-only source and from one it may overwrite; x again (times 0.5 · n · rows,
        // undone by the scale).
        let c2r = super::split::plan_c2r(&mut reals, &mut ffts, n);
        let line = LineStep::new(LineOp::C2r(c2r), &[rows, half], 1, n, false, true, n);
        let up = super::row::plan_fft(&mut ffts, rows, rustfft::FftDirection::Inverse);
        let sweep = Sweep::new(up, &[rows, half], 0);
        let steps = PlaneSteps::new(line, vec![sweep], false, planes);
        assert_eq!(steps.swapped_column().is_some(), column::available());
        let scale = 2.0 / (n * rows) as f64;
        for writable in [false, true] {
            let mut workers = [AlignedBuf::new(steps.scratch_len(writable))];
            let mut source = got.clone();
            let mut back = vec![f64::NAN; x.len()];
            match writable {
                true => steps.run_writable(&mut back, &mut source, scale, &mut workers),
                false => steps.run(&mut back, &source, scale, &mut workers),
            }
            let error = (back.iter().zip(&x))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                error < 1e-12,
                "c2r {rows} × {n} ({writable}): error {error:e}"
            );
        }
    }
}
