//! FFTW-MPI's data layouts as plan options under real MPI on 1..=8 ranks: the split axis of
//! the input and output layouts in given blocks (FFTW's default ⌈n/P⌉, so trailing ranks
//! own nothing, and other sizes), transposed input and output (`TRANSPOSED_IN`/`_OUT`) in
//! every combination, r2c/c2r and r2r plans, in place and batched, threads per plan; and the
//! distributed 1-D c2c transform (prime, odd and power-of-two lengths, ordered and scrambled
//! ends, FFTW's blocks, an interleaved `howmany`, a batch, in place).
//! Every rank's block is checked against FFTW's local ranges computed here independently
//! (`fftw_range`) and against a serial FFT of the whole array sliced to that block.

use crate::common::*;
use fft_core::{
    AxisKind, FftOptions, FftPlan, GridChoice, Normalization, OneD, R2rKind, R2rPlan, RealFftPlan,
};
use mpi::topology::Communicator;
use num_complex::Complex;
use rustfft::FftDirection;
use std::ops::Range;

const BODY: &str = "fftw_layouts::fftw_layouts_body";

mpi_harness::launches!(BODY, 300;
    fftw_layouts_np1 => 1, fftw_layouts_np2 => 2, fftw_layouts_np3 => 3, fftw_layouts_np4 => 4,
    fftw_layouts_np5 => 5, fftw_layouts_np6 => 6, fftw_layouts_np7 => 7, fftw_layouts_np8 => 8);

fn tolerance(shape: &[usize]) -> f64 {
    let n: usize = shape.iter().product();
    1e-12 * (n as f64).log2().max(1.0)
}

/// FFTW-MPI's range of rank `p` along an axis of `n` cut in blocks of `b`
/// (`fftw_mpi_local_size`'s `local_n`, `local_start`; zero length past the last block).
fn fftw_range(n: usize, b: usize, p: usize) -> Range<usize> {
    let start = (p * b).min(n);
    start..(start + b).min(n)
}

/// Per axis, `block` on `axis` and nothing elsewhere.
fn on_axis(d: usize, axis: usize, block: usize) -> Vec<Option<usize>> {
    (0..d).map(|a| (a == axis).then_some(block)).collect()
}

/// The split axis of FFTW's layout: axis 1 when transposed, else axis 0.
fn split(transposed: bool) -> usize {
    usize::from(transposed)
}

#[test]
#[ignore = "MPI body: run by the fftw_layouts_np* launchers under mpirun"]
fn fftw_layouts_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    complex_layouts(&world, rank, size);
    real_layouts(&world, rank, size);
    threads_per_plan(&world, rank, size);
    one_d(&world, rank, size);
    one_d_errors(&world);
    mpi.pass();
}

/// c2c on slabs with FFTW's blocks in every combination of transposed input and output, and
/// with other blocks (one more than FFTW's; the whole axis on rank 0), in and out of place,
/// a batch of two.
fn complex_layouts(world: &impl Communicator, rank: usize, size: usize) {
    for shape in [vec![10usize, 6], vec![7, 5, 6], vec![5, 3]] {
        let d = shape.len();
        let x = random_global(&shape, 7);
        let want = serial_fft(&x, &shape, FftDirection::Forward);
        let tol = tolerance(&shape);
        let fftw = |axis: usize| shape[axis].div_ceil(size);
        for (tin, tout) in [(false, false), (true, false), (false, true), (true, true)] {
            let (a_in, a_out) = (split(tin), split(tout));
            for (b_in, b_out) in [(fftw(a_in), fftw(a_out)), (fftw(a_in) + 1, shape[a_out])] {
                let what = format!("c2c {shape:?} in {tin}/{b_in} out {tout}/{b_out} P {size}");
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(vec![size]))
                    .normalization(Normalization::Backward)
                    .transposed_in(tin)
                    .transposed_out(tout)
                    .input_blocks(on_axis(d, a_in, b_in))
                    .output_blocks(on_axis(d, a_out, b_out))
                    .in_place(true)
                    .batch(2);
                let mut plan = FftPlan::<f64>::new(world, &shape, opts).expect(&what);
                let (li, lo) = (plan.input_layout().clone(), plan.output_layout().clone());
                assert_eq!(
                    li.global_range(rank, a_in),
                    fftw_range(shape[a_in], b_in, rank)
                );
                assert_eq!(
                    lo.global_range(rank, a_out),
                    fftw_range(shape[a_out], b_out, rank)
                );
                // Transposed layouts keep axes 0 and 1 swapped in memory, the rest in order.
                for (l, t) in [(&li, tin), (&lo, tout)] {
                    let mut order: Vec<usize> = (0..d).collect();
                    if t {
                        order.swap(0, 1);
                    }
                    assert_eq!(l.memory_order().axes(), &order[..], "{what}");
                }
                // Two fields: the array and its negative.
                let field = local_block(&x, &li, rank);
                let input: Vec<_> = field.iter().chain(field.iter()).copied().collect();
                let input: Vec<_> = (input.iter().enumerate())
                    .map(|(i, v)| if i < field.len() { *v } else { -v })
                    .collect();
                let mut out = vec![Complex::default(); plan.output_len()];
                plan.forward(&input, &mut out).expect(&what);
                let spectrum = local_block(&want, &lo, rank);
                let (first, second) = out.split_at(spectrum.len());
                let negated: Vec<_> = spectrum.iter().map(|v| -v).collect();
                let scale = max_norm(&want);
                assert!(relative_error(first, &spectrum, scale) < tol, "{what}");
                assert!(relative_error(second, &negated, scale) < tol, "{what}");
                let mut back = vec![Complex::default(); plan.input_len()];
                plan.backward(&out, &mut back).expect(&what);
                assert!(
                    relative_error(&back, &input, 1.0) < tol,
                    "{what} round trip"
                );
                // In place: bit for bit the same.
                let mut buffer = vec![Complex::new(f64::NAN, 0.0); plan.in_place_len()];
                buffer[..input.len()].copy_from_slice(&input);
                plan.forward_in_place(&mut buffer).expect(&what);
                assert_eq!(&buffer[..out.len()], &out[..], "{what} in place");
            }
        }
    }
}

/// r2r with a transposed input (FFTW's DCT-II × R2HC plan with `TRANSPOSED_IN`); r2c into a
/// transposed output and c2r back from it, both in FFTW's blocks, out of place and in place
/// in the padded layout.
fn real_layouts(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [7usize, 6];
    let fftw = |axis: usize| shape[axis].div_ceil(size);
    let x = random_real(&shape, 11);
    let kinds = [R2rKind::Dct2, R2rKind::R2hc];
    let mut want = complexify(&x);
    for (axis, kind) in kinds.iter().enumerate() {
        let out = shape[axis];
        want = along_axis(&want, &shape, axis, out, |l| naive_r2r(kind.name(), l));
    }
    let opts = FftOptions::default()
        .grid(GridChoice::Dims(vec![size]))
        .transposed_in(true)
        .input_blocks(on_axis(2, 1, fftw(1)))
        .output_blocks(on_axis(2, 0, fftw(0)))
        .axes(kinds.iter().map(|&k| AxisKind::R2r(k)).collect());
    let what = format!("r2r {kinds:?} transposed in, P {size}");
    let mut plan = R2rPlan::<f64>::new(world, &shape, opts).expect(&what);
    let li = plan.input_layout().clone();
    assert_eq!(
        li.global_range(rank, 1),
        fftw_range(6, fftw(1), rank),
        "{what}"
    );
    assert_eq!(li.memory_order().axes(), &[1, 0], "{what}");
    let input: Vec<f64> = local_block(&x, &li, rank);
    let mut out = vec![0.0; plan.output_len()];
    plan.forward(&input, &mut out).expect(&what);
    let spectrum = local_block(&want, plan.output_layout(), rank);
    let err = relative_error(&complexify(&out), &spectrum, max_norm(&want));
    assert!(err < tolerance(&shape), "{what}: {err:e}");

    let shape = [6usize, 5, 8];
    let fftw = |axis: usize| shape[axis].div_ceil(size);
    let x = random_real(&shape, 13);
    let want = serial_rfft(&x, &shape);
    for in_place in [false, true] {
        let what = format!("r2c {shape:?} transposed out in place {in_place}, P {size}");
        let opts = FftOptions::default()
            .grid(GridChoice::Dims(vec![size]))
            .normalization(Normalization::Backward)
            .transposed_out(true)
            .input_blocks(on_axis(3, 0, fftw(0)))
            .output_blocks(on_axis(3, 1, fftw(1)))
            .in_place(in_place);
        let mut plan = RealFftPlan::<f64>::new(world, &shape, opts).expect(&what);
        let (li, lo) = (plan.input_layout().clone(), plan.output_layout().clone());
        assert_eq!(
            li.global_range(rank, 0),
            fftw_range(6, fftw(0), rank),
            "{what}"
        );
        assert_eq!(
            lo.global_range(rank, 1),
            fftw_range(5, fftw(1), rank),
            "{what}"
        );
        let input: Vec<f64> = local_block(&x, &li, rank);
        let spectrum = local_block(&want, &lo, rank);
        let (out, back) = if in_place {
            let mut buffer = vec![f64::NAN; plan.in_place_len()];
            plan.padded_input_view_mut(&mut buffer)
                .expect(&what)
                .iter_mut()
                .zip(
                    fft_core::ndarray::ArrayView::from_shape(li.local_shape(rank), &input).unwrap(),
                )
                .for_each(|(b, v)| *b = *v);
            plan.forward_in_place(&mut buffer).expect(&what);
            let out = fft_core::as_complex(&buffer)[..plan.output_len()].to_vec();
            plan.backward_in_place(&mut buffer).expect(&what);
            let back = plan.padded_input_view_mut(&mut buffer).expect(&what);
            (out, back.iter().copied().collect::<Vec<f64>>())
        } else {
            let mut out = vec![Complex::default(); plan.output_len()];
            plan.forward(&input, &mut out).expect(&what);
            let mut back = vec![0.0; plan.input_len()];
            plan.backward(&out, &mut back).expect(&what);
            (out, back)
        };
        let err = relative_error(&out, &spectrum, max_norm(&want));
        assert!(err < tolerance(&shape), "{what}: {err:e}");
        let err = relative_error(&complexify(&back), &complexify(&input), 1.0);
        assert!(err < tolerance(&shape), "{what} round trip: {err:e}");
    }
}

/// A plan's threads per rank as an option: its kernels are cut for that many workers, and
/// the results do not depend on it (bit for bit), nor on the pool they run in.
fn threads_per_plan(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [12usize, 10, 9];
    let x = random_global(&shape, 17);
    let mut outputs = Vec::new();
    for threads in [1, 3] {
        let opts = FftOptions::default()
            .grid(GridChoice::Dims(vec![size]))
            .threads(Some(threads));
        let mut plan = FftPlan::<f64>::new(world, &shape, opts).unwrap();
        assert_eq!(plan.threads(), threads);
        let input = local_block(&x, plan.input_layout(), rank);
        let mut out = vec![Complex::default(); plan.output_len()];
        plan.forward(&input, &mut out).unwrap();
        outputs.push(out);
    }
    assert_eq!(outputs[0], outputs[1], "threads change no bit");
    let e = FftPlan::<f64>::new(world, &shape, FftOptions::default().threads(Some(0)));
    assert!(e
        .unwrap_err()
        .to_string()
        .contains("threads must be at least 1"));
}

/// Position `p` of a distributed 1-D transform's input holds `x[in_map(p)]`, of its output
/// `X[out_map(p)]`: the identity when ordered; FFTW-MPI's scrambled orders of a `rows × cols`
/// axis otherwise.
fn in_map(p: usize, (rows, cols): (usize, usize), scrambled: bool) -> usize {
    if scrambled {
        (p % rows) * cols + p / rows
    } else {
        p
    }
}

fn out_map(p: usize, (rows, cols): (usize, usize), scrambled: bool) -> usize {
    if scrambled {
        p / cols + rows * (p % cols)
    } else {
        p
    }
}

/// The distributed 1-D c2c transform on prime, odd and power-of-two lengths, every
/// combination of ordered and scrambled ends, the balanced split and FFTW's blocks, with an
/// interleaved `howmany` of 3 (an identity axis) and a batch of 2: forward against a serial
/// FFT, backward round trips, in place bit for bit.
fn one_d(world: &impl Communicator, rank: usize, size: usize) {
    for (n, howmany, batch) in [
        (97usize, 1usize, 1usize),
        (45, 3, 1),
        (64, 1, 2),
        (60, 2, 1),
    ] {
        let shape: Vec<usize> = if howmany > 1 {
            vec![n, howmany]
        } else {
            vec![n]
        };
        let x = random_global(&[n * howmany * batch], (n + howmany) as u64);
        // The reference: FFTs along axis 0 of each field's n × howmany array.
        let field = n * howmany;
        let want: Vec<Complex<f64>> = x
            .chunks(field)
            .flat_map(|f| {
                along_axis(f, &[n, howmany], 0, n, |l| {
                    serial_fft(l, &[n], FftDirection::Forward)
                })
            })
            .collect();
        let tol = tolerance(&[n]);
        for (sin, sout) in [(false, false), (true, false), (false, true), (true, true)] {
            for fftw_blocks in [false, true] {
                let what = format!(
                    "1-D n {n} howmany {howmany} batch {batch} scrambled {sin}/{sout} FFTW blocks {fftw_blocks} P {size}"
                );
                let mut opts = FftOptions::default()
                    .normalization(Normalization::Backward)
                    .batch(batch)
                    .in_place(true)
                    .one_d(OneD {
                        columns: None,
                        scrambled_in: sin,
                        scrambled_out: sout,
                    });
                if howmany > 1 {
                    opts = opts.axes(vec![AxisKind::Fft, AxisKind::Identity]);
                }
                let probe = FftPlan::<f64>::new(world, &shape, opts.clone()).expect(&what);
                let (rows, cols) = probe.one_d().expect("a 1-D plan");
                assert_eq!(rows * cols, n, "{what}");
                // FFTW's blocks: whole rows of the split axis, ⌈split / P⌉ of them.
                let block = |scrambled_l1: bool| {
                    let (split, row) = if scrambled_l1 {
                        (cols, rows)
                    } else {
                        (rows, cols)
                    };
                    split.div_ceil(size) * row
                };
                if fftw_blocks {
                    let pad = |b: usize| {
                        std::iter::once(Some(b))
                            .chain(std::iter::repeat_n(None, shape.len() - 1))
                            .collect::<Vec<_>>()
                    };
                    opts = opts
                        .input_blocks(pad(block(sin)))
                        .output_blocks(pad(block(!sout)));
                }
                let mut plan = FftPlan::<f64>::new(world, &shape, opts).expect(&what);
                let (ri, ro) = (
                    plan.input_range_1d().unwrap(),
                    plan.output_range_1d().unwrap(),
                );
                if fftw_blocks {
                    assert_eq!(ri, fftw_range(n, block(sin), rank), "{what}");
                    assert_eq!(ro, fftw_range(n, block(!sout), rank), "{what}");
                }
                let rc = (rows, cols);
                let mut input = Vec::new();
                let mut expect = Vec::new();
                for f in 0..batch {
                    for p in ri.clone() {
                        let j = in_map(p, rc, sin);
                        input.extend((0..howmany).map(|v| x[f * field + j * howmany + v]));
                    }
                    for p in ro.clone() {
                        let k = out_map(p, rc, sout);
                        expect.extend((0..howmany).map(|v| want[f * field + k * howmany + v]));
                    }
                }
                assert_eq!(input.len(), plan.input_len(), "{what}");
                let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
                plan.forward(&input, &mut out).expect(&what);
                let err = relative_error(&out, &expect, max_norm(&want));
                assert!(err < tol, "{what}: error {err:e}");
                let mut back = vec![Complex::default(); plan.input_len()];
                plan.backward(&out, &mut back).expect(&what);
                let err = relative_error(&back, &input, 1.0);
                assert!(err < tol, "{what}: round trip {err:e}");
                let mut buffer = vec![Complex::new(f64::NAN, 0.0); plan.in_place_len()];
                buffer[..input.len()].copy_from_slice(&input);
                plan.forward_in_place(&mut buffer).expect(&what);
                assert_eq!(&buffer[..out.len()], &out[..], "{what} in place");
            }
        }
    }
}

/// A 1-D transform's bad options are errors naming the values, on every rank alike.
fn one_d_errors(world: &impl Communicator) {
    let plan = |shape: &[usize], opts: FftOptions| {
        FftPlan::<f64>::new(world, shape, opts)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let cols = |c| {
        FftOptions::default().one_d(OneD {
            columns: Some(c),
            ..OneD::default()
        })
    };
    assert!(plan(&[60], cols(7)).contains("must divide the axis of 60 points, got 7"));
    let blocks = cols(10).input_blocks(vec![Some(15)]);
    assert!(plan(&[60], blocks).contains("positive multiple of 10, got 15"));
    let e = plan(&[60, 2], cols(10).axes(vec![AxisKind::Fft, AxisKind::Fft]));
    assert!(e.contains("takes the axes"), "{e}");
    let e = plan(&[60], FftOptions::default().transposed_out(true));
    assert!(e.contains("scrambled orders"), "{e}");
    let real = RealFftPlan::<f64>::new(world, &[60], FftOptions::default());
    assert!(real
        .unwrap_err()
        .to_string()
        .contains("1-D is complex only"));
}
