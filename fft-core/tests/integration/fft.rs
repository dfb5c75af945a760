//! Distributed c2c FFTs under real MPI on 1..=8 ranks, checked against a serial reference.
//!
//! Each `#[test] fft_np{P}` re-launches this test binary under `mpirun -n P` running the
//! ignored body `fft_body`, which loops over shapes (d = 2, 3, 4, uneven, an axis shorter than
//! a grid dimension), every grid rank r < d and several grid shapes, both exchange methods and
//! both output layouts.

use crate::common::*;
use fft_core::{
    Direction, FftError, FftOptions, FftPlan, GridChoice, Method, Normalization, RealFftPlan,
    StageTimes, StepProfile,
};
use mpi::topology::Communicator;
use num_complex::Complex;
use rustfft::FftDirection;
use std::time::Instant;

const BODY: &str = "fft::fft_body";

mpi_harness::launches!(BODY, 300;
    fft_np1 => 1, fft_np2 => 2, fft_np3 => 3, fft_np4 => 4,
    fft_np5 => 5, fft_np6 => 6, fft_np7 => 7, fft_np8 => 8);

fn tolerance(shape: &[usize]) -> f64 {
    let n: usize = shape.iter().product();
    1e-12 * (n as f64).log2().max(1.0)
}

#[test]
#[ignore = "MPI body: run by the fft_np* launchers under mpirun"]
fn fft_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());

    let shapes: [&[usize]; 10] = [
        &[11, 7, 13],
        &[16, 21, 41],
        // Axes of 32, 64 and 256 have column FFTs (`fft_core::column`), in memory and in cache,
        // partial vectors too; rows of 6, 3·5 or 5 elements start at every 16-byte offset of
        // a cache line, those of the last shape on whole lines.
        &[32, 64, 6],
        &[256, 3, 5],
        &[16, 32, 8],
        // Transposed on one rank: rows of 36 a grid 2 880 bytes apart, where the forward's
        // planes are transformed in place and the backward's come digit-swapped.
        &[5, 32, 36],
        &[9, 7, 5, 12],
        &[3, 20, 6], // axis 0 shorter than the grid for P > 3
        &[12, 10],
        &[5, 3], // both axes shorter than P for P > 5
    ];
    let mut cases = 0;
    for (s, shape) in shapes.iter().enumerate() {
        let x = random_global(shape, 1000 + s as u64);
        let reference = serial_fft(&x, shape, FftDirection::Forward);
        let scale = max_norm(&reference);
        let tol = tolerance(shape);
        for (g, dims) in grids(size, shape.len()).into_iter().enumerate() {
            for transposed in [false, true] {
                let method = Method::ALL[(s + g + transposed as usize) % 2];
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .method(method)
                    .normalization(Normalization::Backward)
                    .transposed_out(transposed)
                    // Every other case moves its fused exchanges one plane at a time.
                    .piece_bytes(if (s + g) % 2 == 0 { 1 } else { usize::MAX })
                    // ...and half of them through MPI messages instead of shared memory.
                    .shared_memory((s / 2 + g + transposed as usize).is_multiple_of(2));
                let what = format!(
                    "shape {shape:?} grid {dims:?} {method} transposed={transposed} \
                     pieces={} shared={}",
                    opts.piece_bytes, opts.shared_memory
                );
                let mut plan = FftPlan::<f64>::new(&world, shape, opts).expect(&what);
                let input = local_block(&x, plan.input_layout(), rank);
                let want = local_block(&reference, plan.output_layout(), rank);
                let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
                plan.forward(&input, &mut out).expect(&what);
                let err = relative_error(&out, &want, scale);
                assert!(err <= tol, "{what}: forward error {err:e} > {tol:e}");

                let mut back = vec![Complex::new(f64::NAN, 0.0); plan.input_len()];
                plan.backward(&out, &mut back).expect(&what);
                let err = relative_error(&back, &input, max_norm(&x));
                assert!(err <= tol, "{what}: round-trip error {err:e}");

                // Again, with dirty buffers: no hidden state, bit-identical results.
                let mut again = vec![Complex::new(1e300, -7.0); plan.output_len()];
                plan.forward(&input, &mut again).expect(&what);
                assert!(again == out, "{what}: second forward differs");
                plan_allocated_blocks(&mut plan, [&input, &out, &back], &what, size);
                cases += 1;
            }
        }
    }
    assert!(cases > 0);
    large_shared_blocks(&world, rank, size);
    private_blocks_through_work_windows(&world, rank, size);
    normalizations_and_f32(&world, rank, size);
    destroy_input(&world, rank, size);
    mpi.pass();
}

/// The same transforms between blocks the plan allocated (`alloc_input`/`alloc_output`): on
/// more than one rank (all on this node) they lie in shared-memory windows and the fused
/// steps move their rows straight between the ranks' blocks. Bit-identical results to the
/// caller's private blocks; and when only some ranks pass such blocks, the call agrees on the
/// message path. Slabs of 3 or more axes fuse every exchange, so nothing is packed or
/// unpacked there.
fn plan_allocated_blocks(
    plan: &mut FftPlan<f64>,
    [input, out, back]: [&[Complex<f64>]; 3],
    what: &str,
    size: usize,
) {
    let mut field = plan.alloc_input().expect(what);
    let mut spectrum = plan.alloc_output().expect(what);
    assert_eq!(field.is_shared(), size > 1, "{what}: shared blocks");
    assert_eq!(spectrum.is_shared(), size > 1, "{what}: shared blocks");
    // Plan-allocated blocks start on cache lines: windows' regions (OpenMPI's do not by
    // themselves) and private blocks (a large Vec's would start 16 bytes past one).
    for block in [field.as_ptr(), spectrum.as_ptr()] {
        assert!(
            (block as usize).is_multiple_of(64),
            "{what}: plan block at {block:?} (shared: {}), off a cache line",
            size > 1
        );
    }
    field.copy_from_slice(input);
    spectrum.fill(Complex::new(f64::NAN, 1.0));
    plan.reset_times();
    let mut wall = 0.0;
    let t = Instant::now();
    plan.forward(&field, &mut spectrum).expect(what);
    wall += t.elapsed().as_secs_f64();
    assert!(
        &spectrum[..] == out,
        "{what}: forward between shared blocks differs"
    );
    assert!(&field[..] == input, "{what}: the forward wrote its input");
    let t = Instant::now();
    plan.backward(&spectrum, &mut field).expect(what);
    wall += t.elapsed().as_secs_f64();
    assert!(
        &field[..] == back,
        "{what}: backward between shared blocks differs"
    );
    let slab = plan.grid().shape().dims().len() == 1 && plan.global_shape().len() >= 3;
    let t = plan.times();
    if slab && size > 1 && !plan.options().transposed_out {
        assert!(
            t.pack == 0.0 && t.unpack == 0.0,
            "{what}: shared blocks still packed ({} s) or unpacked ({} s)",
            t.pack,
            t.unpack
        );
    }
    // Only rank 0 passes a private output: every rank runs the message path.
    let mut private = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
    let target: &mut [Complex<f64>] = if plan.rank() == 0 {
        &mut private
    } else {
        &mut spectrum
    };
    target.fill(Complex::new(f64::NAN, 0.0));
    field.copy_from_slice(input);
    let t = Instant::now();
    plan.forward(&field, target).expect(what);
    wall += t.elapsed().as_secs_f64();
    let err = relative_error(target, out, max_norm(out).max(1.0));
    assert!(err <= 1e-12, "{what}: mixed blocks: error {err:e}");
    let profile = plan.step_profile();
    let blocks = [plan.input_len(), plan.output_len()].map(|n| 16 * n as u64);
    profile_adds_up(&profile, plan.times(), [2, 1], blocks, wall, what);
}

/// A plan's per-step profile after `calls` forward and backward calls that took `wall`
/// seconds in all: the forward's steps then the backward's, each called once per call of its
/// direction; each direction's first step reads its input block and its last writes its
/// output block (`blocks`: the forward's input and output bytes); their stage splits add up to the plan's stage times, and their seconds to those
/// times within the little each step does outside them (views, the step's own bookkeeping),
/// and to no more than the calls' wall time.
fn profile_adds_up(
    profile: &[StepProfile],
    times: StageTimes,
    calls: [u64; 2],
    blocks: [u64; 2],
    wall: f64,
    what: &str,
) {
    assert!(!profile.is_empty(), "{what}: no steps in the profile");
    let forward = profile
        .iter()
        .take_while(|s| s.direction == Direction::Forward);
    let forward = forward.count();
    let (f, b) = profile.split_at(forward);
    let ends = |steps: &[StepProfile]| [steps[0].read_bytes, steps[steps.len() - 1].write_bytes];
    assert_eq!(ends(f), blocks, "{what}: the forward's blocks");
    assert_eq!(
        ends(b),
        [blocks[1], blocks[0]],
        "{what}: the backward's blocks"
    );
    for (i, step) in profile.iter().enumerate() {
        let (direction, index, calls) = if i < forward {
            (Direction::Forward, i, calls[0])
        } else {
            (Direction::Backward, i - forward, calls[1])
        };
        let at = format!(
            "{what}: step {i} ({:?} {}, {})",
            step.direction, step.index, step.what
        );
        assert_eq!((step.direction, step.index), (direction, index), "{at}");
        assert_eq!(step.calls, calls, "{at}: calls");
        assert!(!step.what.is_empty(), "{at}");
        let split = step.stages.total();
        assert!(
            split <= step.seconds + 1e-9,
            "{at}: split {split} s > {} s",
            step.seconds
        );
    }
    let sum = |f: fn(&StageTimes) -> f64| profile.iter().map(|s| f(&s.stages)).sum::<f64>();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 + 1e-9 * b.abs();
    for (name, f) in [
        ("fft", (|t: &StageTimes| t.fft) as fn(&StageTimes) -> f64),
        ("pack", |t| t.pack),
        ("comm", |t| t.comm),
        ("unpack", |t| t.unpack),
    ] {
        assert!(
            close(sum(f), f(&times)),
            "{what}: steps' {name} {} != {}",
            sum(f),
            f(&times)
        );
    }
    let steps: f64 = profile.iter().map(|s| s.seconds).sum();
    let total = times.total();
    assert!(
        steps >= total - 1e-9 && steps <= total + 0.25 * steps + 5e-3,
        "{what}: steps take {steps} s, the stages {total} s"
    );
    assert!(
        steps <= wall,
        "{what}: steps take {steps} s, the calls {wall} s"
    );
}

/// Slabs of blocks of 2 MiB and more, whose windows lie on huge pages where the system
/// allows (a POSIX shared-memory mapping instead of an MPI window; on 2 to 4 ranks here):
/// the same results between plan-allocated blocks as between private ones.
fn large_shared_blocks(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [128, 64, 64];
    let x = random_global(&shape, 77);
    let reference = serial_fft(&x, &shape, FftDirection::Forward);
    let tol = tolerance(&shape);
    let opts = FftOptions::default().grid(GridChoice::Rank(1));
    let what = format!("shape {shape:?} slabs on {size} rank(s)");
    let mut plan = FftPlan::<f64>::new(world, &shape, opts).expect(&what);
    let input = local_block(&x, plan.input_layout(), rank);
    let want = local_block(&reference, plan.output_layout(), rank);
    let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
    plan.forward(&input, &mut out).expect(&what);
    let err = relative_error(&out, &want, max_norm(&reference));
    assert!(err <= tol, "{what}: forward error {err:e} > {tol:e}");
    let mut back = vec![Complex::new(f64::NAN, 0.0); plan.input_len()];
    plan.backward(&out, &mut back).expect(&what);
    plan_allocated_blocks(&mut plan, [&input, &out, &back], &what, size);
}

/// r2c slabs with a transposed output that keep their input: the c2r backward's first FFTs
/// write a work buffer, which on more than one rank (all on this node) lies in a
/// shared-memory window from the plan's creation on, so its fused step reads the peers' rows
/// straight from their work buffers even between the caller's private blocks: no pack, no
/// unpack. The results are those of the message path bit for bit (a plan without shared
/// memory), and of plan-allocated blocks, and they undo the forward; blocks of 2 MiB and
/// more (huge-page windows) and small ones.
fn private_blocks_through_work_windows(world: &impl Communicator, rank: usize, size: usize) {
    for shape in [[12usize, 10, 6], [64, 64, 128]] {
        let opts = FftOptions::default()
            .grid(GridChoice::Rank(1))
            .transposed_out(true)
            .normalization(Normalization::Backward);
        let real = random_real(&shape, 92);
        let half = serial_rfft(&real, &shape);
        let what = format!("r2c shape {shape:?} transposed slabs, private blocks");
        let mut plan = RealFftPlan::<f64>::new(world, &shape, opts.clone()).expect(&what);
        let mut messages =
            RealFftPlan::<f64>::new(world, &shape, opts.clone().shared_memory(false)).expect(&what);
        let input = local_block(&real, plan.input_layout(), rank);
        let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
        plan.forward(&input, &mut out).expect(&what);
        let want = local_block(&half, plan.output_layout(), rank);
        let err = relative_error(&out, &want, max_norm(&half));
        assert!(err <= tolerance(&shape), "{what}: forward error {err:e}");
        plan.reset_times();
        let mut back = vec![f64::NAN; plan.input_len()];
        let wall = Instant::now();
        plan.backward(&out, &mut back).expect(&what);
        let wall = wall.elapsed().as_secs_f64();
        let t = plan.times();
        let blocks = [8 * plan.input_len() as u64, 16 * plan.output_len() as u64];
        profile_adds_up(&plan.step_profile(), t, [0, 1], blocks, wall, &what);
        if size > 1 {
            assert!(
                t.pack == 0.0 && t.unpack == 0.0,
                "{what}: backward packed ({} s) or unpacked ({} s)",
                t.pack,
                t.unpack
            );
        }
        let err = (back.iter().zip(&input))
            .map(|(b, x)| (b - x).abs())
            .fold(0.0, f64::max);
        assert!(
            err <= 10.0 * tolerance(&shape),
            "{what}: round-trip error {err:e}"
        );
        let mut via = vec![f64::NAN; plan.input_len()];
        messages.backward(&out, &mut via).expect(&what);
        assert!(via == back, "{what}: differs from the message path");
        let mut spectrum = plan.alloc_output().expect(&what);
        let mut field = plan.alloc_input().expect(&what);
        spectrum.copy_from_slice(&out);
        plan.backward(&spectrum, &mut field).expect(&what);
        assert!(field[..] == back[..], "{what}: differs from plan blocks");
    }
}

/// `None` and `Ortho` scaling, and the f32 path, on one uneven 3-D shape.
fn normalizations_and_f32(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [10, 9, 7];
    let x = random_global(&shape, 7);
    let reference = serial_fft(&x, &shape, FftDirection::Forward);
    let n = shape.iter().product::<usize>() as f64;
    let tol = tolerance(&shape);
    for (norm, fwd_scale, rt_scale) in [
        (Normalization::None, 1.0, n),
        (Normalization::Ortho, 1.0 / n.sqrt(), 1.0),
    ] {
        let opts = FftOptions::default()
            .grid(GridChoice::Rank(2))
            .normalization(norm);
        let mut plan = FftPlan::<f64>::new(world, &shape, opts).unwrap();
        let input = local_block(&x, plan.input_layout(), rank);
        let want: Vec<_> = local_block(&reference, plan.output_layout(), rank)
            .iter()
            .map(|v| v * fwd_scale)
            .collect();
        let mut out = vec![Complex::default(); plan.output_len()];
        plan.forward(&input, &mut out).unwrap();
        let err = relative_error(&out, &want, max_norm(&reference) * fwd_scale);
        assert!(err <= tol, "{norm:?} forward {err:e}");
        let mut back = vec![Complex::default(); plan.input_len()];
        plan.backward(&out, &mut back).unwrap();
        let scaled: Vec<_> = input.iter().map(|v| v * rt_scale).collect();
        let err = relative_error(&back, &scaled, max_norm(&x) * rt_scale);
        assert!(err <= tol, "{norm:?} round trip {err:e}");
    }
    // f32: the same code path at single precision.
    let tol32 = 1e-5 * n.log2();
    let opts = FftOptions::default().normalization(Normalization::Backward);
    let mut plan = FftPlan::<f32>::new(world, &shape, opts).unwrap();
    let input64 = local_block(&x, plan.input_layout(), rank);
    let input: Vec<Complex<f32>> = input64
        .iter()
        .map(|v| Complex::new(v.re as f32, v.im as f32))
        .collect();
    let mut out = vec![Complex::<f32>::default(); plan.output_len()];
    plan.forward(&input, &mut out).unwrap();
    let out64: Vec<_> = out
        .iter()
        .map(|v| Complex::new(v.re as f64, v.im as f64))
        .collect();
    let want = local_block(&reference, plan.output_layout(), rank);
    let err = relative_error(&out64, &want, max_norm(&reference));
    assert!(err <= tol32, "f32 forward {err:e} (ranks {size})");
    let mut back = vec![Complex::<f32>::default(); plan.input_len()];
    plan.backward(&out, &mut back).unwrap();
    let back64: Vec<_> = back
        .iter()
        .map(|v| Complex::new(v.re as f64, v.im as f64))
        .collect();
    let err = relative_error(&back64, &input64, max_norm(&x));
    assert!(err <= tol32, "f32 round trip {err:e}");
}

/// Plans made with `destroy_input`: `forward`/`backward` refuse a read-only input with the
/// same typed error on every rank; the `_destroying` calls match the serial reference (c2c on
/// every grid, both layouts; r2c/c2r on the balanced grids) and are bit-identical to the
/// plan that preserves its input, and the plan never holds more work memory than that one
/// (as much for transposed c2c slabs, less for the slab c2r, where the input hosts a block).
fn destroy_input(world: &impl Communicator, rank: usize, size: usize) {
    let shape = [10, 12, 7];
    let x = random_global(&shape, 77);
    let reference = serial_fft(&x, &shape, FftDirection::Forward);
    let tol = tolerance(&shape);
    for dims in grids(size, shape.len()) {
        for transposed in [false, true] {
            let opts = FftOptions::default()
                .grid(GridChoice::Dims(dims.clone()))
                .transposed_out(transposed)
                .normalization(Normalization::Backward)
                .piece_bytes(1);
            let what = format!("c2c destroy_input grid {dims:?} transposed={transposed}");
            let mut keep = FftPlan::<f64>::new(world, &shape, opts.clone()).expect(&what);
            let mut plan =
                FftPlan::<f64>::new(world, &shape, opts.destroy_input(true)).expect(&what);
            let input = local_block(&x, plan.input_layout(), rank);
            let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
            assert_eq!(
                plan.forward(&input, &mut out),
                Err(FftError::InputNotWritable {
                    direction: "forward"
                }),
                "{what}"
            );
            let mut scratch = input.clone();
            plan.forward_destroying(&mut scratch, &mut out)
                .expect(&what);
            let want = local_block(&reference, plan.output_layout(), rank);
            let err = relative_error(&out, &want, max_norm(&reference));
            assert!(err <= tol, "{what}: forward error {err:e}");
            let mut kept = vec![Complex::default(); keep.output_len()];
            keep.forward(&input, &mut kept).expect(&what);
            assert!(
                kept == out,
                "{what}: differs from the plan that keeps its input"
            );
            let mut back = vec![Complex::new(f64::NAN, 0.0); plan.input_len()];
            assert!(plan.backward(&out, &mut back).is_err(), "{what}");
            plan.backward_destroying(&mut out, &mut back).expect(&what);
            let err = relative_error(&back, &input, max_norm(&x));
            assert!(err <= tol, "{what}: round-trip error {err:e}");
            assert!(
                plan.work_len() <= keep.work_len(),
                "{what}: more work memory"
            );
            if dims.len() == 1 && transposed {
                // The slab's first FFTs run per plane from the input straight into the
                // exchange, so keeping the input costs no work block...
                assert_eq!(
                    keep.work_len(),
                    plan.work_len(),
                    "{what}: the plan that keeps its input holds more work memory"
                );
                // ...and the estimate's messages and scratch (its planes included) bound
                // what it holds, without the two work blocks the estimate also counts.
                let e = fft_core::memory::estimate_memory(
                    keep.pipeline(),
                    16,
                    rayon::current_num_threads(),
                );
                assert!(
                    (keep.work_len() * 16) as u64 <= e.message_bytes + e.scratch_bytes,
                    "{what}: work {} bytes > messages and scratch {e}",
                    keep.work_len() * 16
                );
            }
        }
    }
    // Planes larger than the estimate's tiles of lines: the estimate counts them too.
    let shape = [8, 96, 96];
    let opts = FftOptions::default()
        .grid(GridChoice::Dims(vec![size]))
        .transposed_out(true);
    let plan = FftPlan::<f64>::new(world, &shape, opts).expect("a transposed slab");
    let e = fft_core::memory::estimate_memory(plan.pipeline(), 16, rayon::current_num_threads());
    assert!(
        (plan.work_len() * 16) as u64 <= e.message_bytes + e.scratch_bytes,
        "transposed slab {shape:?}: work {} bytes > messages and scratch {e}",
        plan.work_len() * 16
    );
    // r2c forward, c2r backward.
    let real = random_real(&shape, 78);
    let spectrum = serial_rfft(&real, &shape);
    for r in 1..shape.len() {
        let opts = FftOptions::default()
            .grid(GridChoice::Rank(r))
            .normalization(Normalization::Backward);
        let what = format!("r2c destroy_input grid rank {r}");
        let mut keep = RealFftPlan::<f64>::new(world, &shape, opts.clone()).expect(&what);
        let mut plan =
            RealFftPlan::<f64>::new(world, &shape, opts.destroy_input(true)).expect(&what);
        let input = local_block(&real, plan.input_layout(), rank);
        let mut scratch = input.clone();
        let mut out = vec![Complex::new(f64::NAN, 0.0); plan.output_len()];
        plan.forward_destroying(&mut scratch, &mut out)
            .expect(&what);
        if r == 1 {
            // On a slab the r2c forward's only moving step is the r2c into the output, so it
            // writes nothing into its input (the benchmark's r2c rows rely on it).
            assert!(
                scratch == input,
                "{what}: the slab r2c forward wrote its input"
            );
        }
        let want = local_block(&spectrum, plan.output_layout(), rank);
        let err = relative_error(&out, &want, max_norm(&spectrum));
        assert!(err <= tol, "{what}: forward error {err:e}");
        let mut back = vec![f64::NAN; plan.input_len()];
        assert_eq!(
            plan.backward(&out, &mut back),
            Err(FftError::InputNotWritable {
                direction: "backward"
            }),
            "{what}"
        );
        let mut kept = vec![0.0; keep.input_len()];
        keep.backward(&out, &mut kept).expect(&what);
        plan.backward_destroying(&mut out, &mut back).expect(&what);
        assert!(
            kept == back,
            "{what}: differs from the plan that keeps its input"
        );
        let err = back
            .iter()
            .zip(&input)
            .map(|(b, x)| (b - x).abs())
            .fold(0.0, f64::max);
        assert!(err <= tol * 10.0, "{what}: round-trip error {err:e}");
        assert!(
            plan.work_len() <= keep.work_len(),
            "{what}: more work memory"
        );
        if r == 1 && size == 1 {
            // The c2r backward's complex FFTs run in its input: no complex work block.
            assert!(
                plan.work_len() + plan.output_len() <= keep.work_len(),
                "{what}: c2r should need no work block ({} vs {})",
                plan.work_len(),
                keep.work_len()
            );
        }
    }
}
