//! Lowering without MPI: the plans of simulated ranks (the fold evaluates every rank), for
//! hundreds of rank counts, asserting the step sequences, fused exchanges and piece counts
//! of slab, pencil, r2c, r2r, padded, batched and transposed plans, and that every rank
//! lowers the same program.

use super::*;
use crate::options::{FftOptions, GridChoice, R2rKind};
use crate::program::{Kernel, Program};
use crate::stages::{pipeline_for, Domain};
use redist::GridShape;

/// What `shape` lowers to on `dims` for the ranks `which` picks: (rank, program).
fn lowered(
    shape: &[usize],
    domain: Domain,
    options: &FftOptions,
    dims: &[usize],
    which: &[usize],
) -> Vec<(usize, Program<f64>)> {
    let spec = Spec::new(shape, options, domain).expect("a valid spec");
    let grid = GridShape::new(dims.to_vec()).expect("a grid");
    let ranks = grid.ranks();
    let pipeline = pipeline_for(&spec.shape, grid, options.transposed_out).expect("a pipeline");
    let fold = every_rank(ranks);
    let env = Env {
        ranks,
        threads: 2,
        piece_bytes: options.piece_bytes,
        shared_memory: options.shared_memory && ranks > 1,
        fold: &fold,
    };
    which
        .iter()
        .map(|&q| {
            let what = format!("{shape:?} on {dims:?}, rank {q}");
            let program = lower::<f64>(&spec, &pipeline, options, &env, q).expect(&what);
            (q, program)
        })
        .collect()
}

/// A pass as text: `fft`, `line`, `planes`, `x<e>`, and fused steps as
/// `x<b>>sweep>x<a>` / `x<b>>planes` / `planes>x<a>` with their piece count in brackets.
fn signature(pass: &Pass<f64>) -> String {
    let steps: Vec<String> = pass
        .steps
        .iter()
        .map(|s| match s {
            Step::Fft(_) => "fft".to_string(),
            Step::Line { .. } => "line".to_string(),
            Step::Planes(_) => "planes".to_string(),
            Step::Exchange { index, .. } => format!("x{index}"),
            Step::Fused(f) => {
                let kernel = match f.kernel {
                    Kernel::Sweep(_) => "sweep",
                    Kernel::Planes(_) => "planes",
                };
                let before = f.before.map_or(String::new(), |b| format!("x{b}>"));
                let after = f.after.map_or(String::new(), |a| format!(">x{a}"));
                format!("{before}{kernel}{after}[{}]", f.pieces.len())
            }
        })
        .collect();
    steps.join(" ")
}

/// The ranks to lower: all of them for few ranks, else the first, last and a middle one.
fn sample(ranks: usize) -> Vec<usize> {
    if ranks <= 8 {
        (0..ranks).collect()
    } else {
        vec![0, ranks / 2, ranks - 1]
    }
}

/// Asserts that every lowered rank has the same program (fingerprint and signatures) and
/// returns the signatures of the forward and backward passes.
fn agreed(programs: &[(usize, Program<f64>)], what: &str) -> (String, String) {
    let (_, first) = &programs[0];
    let want = (signature(&first.forward), signature(&first.backward));
    for (q, p) in programs {
        assert_eq!(
            p.fingerprint(),
            first.fingerprint(),
            "{what}: rank {q} lowered another program: {} / {} against {want:?}",
            signature(&p.forward),
            signature(&p.backward)
        );
    }
    want
}

/// Pieces of a fused slab step: planes of `plane_bytes` per piece of 1 MiB (at least one),
/// as many as the rank with the most planes (`most`) needs.
fn slab_pieces(most: usize, plane_bytes: usize) -> usize {
    let per = (FftOptions::DEFAULT_PIECE_BYTES / plane_bytes).max(1);
    most.div_ceil(per).max(1)
}

#[test]
fn slabs_fuse_the_axis_0_sweep_with_both_exchanges_in_pieces() {
    // 64 × 48 × 40 complex f64 on 2..=200 ranks (from 49 on, some own nothing of axis 1).
    let shape = [64, 48, 40];
    for ranks in 2..=200 {
        let what = format!("slab {shape:?} on {ranks}");
        let programs = lowered(
            &shape,
            Domain::Complex,
            &FftOptions::default(),
            &[ranks],
            &sample(ranks),
        );
        let (forward, backward) = agreed(&programs, &what);
        // L1 splits axis 1: planes of 64 × 40 elements, the most any rank has ⌈48 / P⌉.
        let pieces = slab_pieces(48usize.div_ceil(ranks), 64 * 40 * 16);
        assert_eq!(forward, format!("fft x0>sweep>x1[{pieces}]"), "{what}");
        assert_eq!(backward, format!("x2>sweep>x3[{pieces}] fft"), "{what}");
        for (q, p) in &programs {
            let fused: Vec<_> = p.fused().collect();
            assert!(
                fused.iter().all(|f| f.in_place),
                "{what}: rank {q} in place"
            );
            // In place between the exchanges: the output hosts every layout, no work buffer
            // beyond what uneven splits need.
            assert_eq!(p.forward.dests.last(), Some(&At::Output), "{what}");
        }
    }
}

#[test]
fn transposed_slabs_run_their_planes_straight_into_the_exchange() {
    let shape = [32, 24, 20];
    let options = FftOptions::default().transposed_out(true);
    for ranks in 2..=100 {
        let what = format!("transposed slab {shape:?} on {ranks}");
        let programs = lowered(&shape, Domain::Complex, &options, &[ranks], &sample(ranks));
        let (forward, backward) = agreed(&programs, &what);
        // Forward: the FFTs of axes 2 and 1 plane by plane into the exchange, then the
        // axis-0 sweep; backward: the sweep straight into the exchange (the first step that
        // can take it), then the FFTs. One piece: at most 16 planes of 24 × 20 elements
        // forward and 12 of 32 × 20 backward, under 1 MiB.
        assert_eq!(forward, "planes>x0[1] fft", "{what}");
        assert_eq!(backward, "sweep>x1[1] fft", "{what}");
    }
}

#[test]
fn pencils_fuse_nothing_across_their_contiguous_ffts() {
    let shape = [16, 12, 10];
    for ranks in 2..=150 {
        for r in 2..=2 {
            let Ok(grid) = GridShape::balanced(ranks, r) else {
                continue;
            };
            let dims = grid.dims().to_vec();
            let what = format!("pencil {shape:?} on {dims:?}");
            let programs = lowered(
                &shape,
                Domain::Complex,
                &FftOptions::default(),
                &dims,
                &sample(ranks),
            );
            let (forward, backward) = agreed(&programs, &what);
            assert_eq!(forward, "fft x0 fft x1 fft x2 x3", "{what}");
            assert_eq!(backward, "x4 x5 fft x6 fft x7 fft", "{what}");
        }
    }
}

#[test]
fn real_plans_lower_alike_on_every_rank() {
    // r2c (slab and pencil, normal and transposed, padded), r2r, batched: every rank of
    // 1..=64 ranks lowers the same program, and the kinds of steps are the plan's.
    let cases: Vec<(&str, Vec<usize>, Domain, FftOptions)> = vec![
        (
            "r2c",
            vec![12, 10, 9],
            Domain::RealToComplex,
            FftOptions::default(),
        ),
        (
            "r2c transposed",
            vec![12, 10, 9],
            Domain::RealToComplex,
            FftOptions::default().transposed_out(true),
        ),
        (
            "r2c padded",
            vec![8, 6, 8],
            Domain::RealToComplex,
            FftOptions::default().padding(vec![1.5, 1.5, 1.5]),
        ),
        (
            "r2r",
            vec![9, 7, 6],
            Domain::Real,
            FftOptions::default().axes(vec![
                AxisKind::R2r(R2rKind::Dct2),
                AxisKind::R2r(R2rKind::Dst1),
                AxisKind::R2r(R2rKind::Dct1),
            ]),
        ),
        (
            "batched",
            vec![10, 8, 6],
            Domain::Complex,
            FftOptions::default().batch(3),
        ),
        (
            "unit axes",
            vec![5, 1, 8],
            Domain::RealToComplex,
            FftOptions::default(),
        ),
    ];
    for (name, shape, domain, options) in &cases {
        for ranks in 1..=64 {
            for r in 1..=2 {
                let Ok(grid) = GridShape::balanced(ranks, r) else {
                    continue;
                };
                let dims = grid.dims().to_vec();
                let what = format!("{name} {shape:?} on {dims:?}");
                let programs = lowered(shape, *domain, options, &dims, &sample(ranks));
                let (forward, backward) = agreed(&programs, &what);
                match *domain {
                    Domain::Real => {
                        assert!(
                            !forward.contains("fft") && !forward.contains('>'),
                            "{what}: {forward}"
                        );
                        assert_eq!(forward.matches("line").count(), 3, "{what}: {forward}");
                        let _ = backward;
                    }
                    Domain::RealToComplex => {
                        // One r2c step (alone or with FFTs) forward, one c2r backward.
                        let real =
                            |s: &str| s.matches("line").count() + s.matches("planes").count();
                        assert!(real(&forward) >= 1 && real(&backward) >= 1, "{what}");
                    }
                    Domain::Complex => {}
                }
            }
        }
    }
}

#[test]
fn length_1_axes_lower_alike_on_every_rank_of_every_grid() {
    // Every rank of every grid of 1..=12 ranks: the fused steps, their transports and the
    // buffers each step leaves the data in agree (what ranks synchronize on).
    let shapes: [&[usize]; 8] = [
        &[4, 3, 1],
        &[5, 1, 3],
        &[1, 5, 3],
        &[1, 6, 6],
        &[1, 8, 8, 8],
        &[64, 1, 9],
        &[5, 1, 1, 3],
        &[8, 6, 1],
    ];
    for shape in shapes {
        for ranks in 1..=12 {
            for r in 1..shape.len().min(3) {
                for dims in redist::grid::factorizations(ranks, r) {
                    for transposed in [false, true] {
                        let options = FftOptions::default()
                            .grid(GridChoice::Dims(dims.clone()))
                            .transposed_out(transposed);
                        let what = format!("{shape:?} on {dims:?} transposed={transposed}");
                        let all: Vec<usize> = (0..ranks).collect();
                        let programs = lowered(shape, Domain::Complex, &options, &dims, &all);
                        agreed(&programs, &what);
                        let real = lowered(shape, Domain::RealToComplex, &options, &dims, &all);
                        agreed(&real, &format!("r2c {what}"));
                        let first = &programs[0].1;
                        for (q, p) in &programs {
                            assert_eq!(p.forward.dests, first.forward.dests, "{what}: rank {q}");
                            assert_eq!(p.backward.dests, first.backward.dests, "{what}: rank {q}");
                            let direct =
                                |p: &Program<f64>| p.fused().map(|f| f.direct).collect::<Vec<_>>();
                            assert_eq!(direct(p), direct(first), "{what}: rank {q}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_model_sees_the_plans_fusions() {
    // exchange_fusions is what rank 0 lowers: a slab pair fuses both exchanges in pieces.
    let grid = GridShape::new(vec![2]).unwrap();
    let pipeline = crate::stages::pipeline(&[64, 64, 64], grid, false).unwrap();
    let fused = exchange_fusions(&pipeline, 16, false).unwrap();
    assert_eq!(fused.len(), 4);
    assert!(fused[0].unpack && !fused[0].pack && fused[0].pieces == 2);
    assert!(fused[1].pack && !fused[1].unpack && fused[1].pieces == 2);
    assert!(fused.iter().all(|f| !f.shared));
    // With shared memory the slab's fused exchanges go through windows.
    let shared = exchange_fusions(&pipeline, 16, true).unwrap();
    assert!(shared.iter().all(|f| f.shared), "{shared:?}");
}

/// In-place schedules hold no work block where nothing must move (normal slabs: the FFTs
/// and the fused exchange pair run in the one buffer), no more than out of place otherwise
/// (pencils: as many, or fewer where the output hosts what a work buffer did), except one
/// for a transposed slab's lone exchange, where out of place writes the output; every rank
/// lowers the same one.
#[test]
fn in_place_schedules_hold_a_work_block_only_where_data_must_move() {
    for (shape, dims, transposed) in [
        (vec![11, 7, 13], vec![2], false),
        (vec![16, 12, 10], vec![3], false),
        (vec![16, 12, 10], vec![1], false),
        (vec![11, 7, 13], vec![2], true),
        (vec![11, 7, 13], vec![2, 2], false),
        (vec![16, 12, 10], vec![3, 2], true),
        (vec![9, 7, 5, 6], vec![2, 2, 2], false),
    ] {
        let what = format!("{shape:?} on {dims:?} transposed={transposed}");
        let o = FftOptions::default()
            .grid(GridChoice::Dims(dims.clone()))
            .transposed_out(transposed);
        let ranks: usize = dims.iter().product();
        let plain = lowered(&shape, Domain::Complex, &o, &dims, &sample(ranks));
        let in_place = lowered(
            &shape,
            Domain::Complex,
            &o.in_place(true),
            &dims,
            &sample(ranks),
        );
        for ((q, p), (_, i)) in plain.iter().zip(&in_place) {
            assert!(p.forward.in_place.is_none(), "{what}");
            for pass in [&i.forward, &i.backward] {
                let dests = pass.in_place.as_ref().expect("an in-place schedule");
                assert!(!dests.contains(&At::Input), "{what}: {dests:?}");
                assert_eq!(dests.last(), Some(&At::Output), "{what}");
                if dims.len() == 1 && !transposed {
                    assert!(dests.iter().all(|&d| d == At::Output), "{what}: {dests:?}");
                }
            }
            let work = (i.work, p.work);
            match (dims.len(), transposed) {
                (1, false) => assert_eq!(i.work, [0, 0], "{what} rank {q}"),
                (1, true) => assert!(i.work[0] > 0 && i.work[1] == 0, "{what} {work:?}"),
                _ => assert!((0..2).all(|k| i.work[k] <= p.work[k]), "{what} {work:?}"),
            }
        }
        agreed(&in_place, &what);
    }
}

/// Each pass's profile words, one per step, checked against the pass's steps: one per step,
/// of the step's kind.
fn words(pass: &Pass<f64>) -> Vec<String> {
    assert_eq!(
        pass.info.len(),
        pass.steps.len(),
        "one profile entry per step"
    );
    for (step, info) in pass.steps.iter().zip(&pass.info) {
        assert_eq!(info.kind, step.kind(), "{}", info.what);
    }
    pass.info.iter().map(|i| i.what.clone()).collect()
}

#[test]
fn profile_names_each_step_with_its_blocks_and_flops() {
    let log2 = |n: f64| n.log2();
    // A slab of 64 × 48 × 40 complex f64 on 2 ranks, rank 0: 32 × 48 × 40 before and after.
    let programs = lowered(
        &[64, 48, 40],
        Domain::Complex,
        &FftOptions::default(),
        &[2],
        &[0],
    );
    let p = &programs[0].1;
    println!("slab: {:?} / {:?}", words(&p.forward), words(&p.backward));
    let block = 32 * 48 * 40 * 16;
    let fft = &p.forward.info[0];
    assert_eq!(fft.what, "FFT along axes 2 and 1");
    assert_eq!((fft.read_bytes, fft.write_bytes), (block, block));
    // 32 · 48 lines of 40 points and 32 · 40 lines of 48, 5 n log₂ n each.
    let want = 32.0 * 48.0 * 5.0 * 40.0 * log2(40.0) + 32.0 * 40.0 * 5.0 * 48.0 * log2(48.0);
    assert!(
        (fft.flops - want).abs() < 1e-6 * want,
        "{} != {want}",
        fft.flops
    );
    let fused = &p.forward.info[1];
    let x = "exchange over grid axis 0";
    assert_eq!(fused.what, format!("fused: {x} + FFT along axis 0 + {x}"));
    assert_eq!((fused.read_bytes, fused.write_bytes), (block, block));
    // Between the exchanges rank 0 holds 64 × 24 × 40: 960 lines of 64 points.
    assert_eq!(fused.flops, 960.0 * 5.0 * 64.0 * 6.0);
    assert_eq!(words(&p.backward).len(), 2);

    // A pencil of 16 × 12 × 8 on 2 × 2 ranks: its exchanges name both grid axes.
    let programs = lowered(
        &[16, 12, 8],
        Domain::Complex,
        &FftOptions::default(),
        &[2, 2],
        &[3],
    );
    let p = &programs[0].1;
    let (f, b) = (words(&p.forward), words(&p.backward));
    println!("pencil: {f:?} / {b:?}");
    let all = f.iter().chain(&b).cloned().collect::<Vec<_>>().join("; ");
    assert!(
        all.contains("grid axis 0") && all.contains("grid axis 1"),
        "{all}"
    );
    let flops: f64 = p.forward.info.iter().map(|i| i.flops).sum();
    // Rank 3 holds a quarter of the array: a quarter of each axis's lines.
    let lines = |n: f64| 16.0 * 12.0 * 8.0 / 4.0 / n * 5.0 * n * log2(n);
    let want = lines(16.0) + lines(12.0) + lines(8.0);
    assert!((flops - want).abs() < 1e-6 * want, "{flops} != {want}");

    // r2c of 16 × 12 × 10 reals on 2 ranks, rank 0: 8 × 12 × 10 reals, 8 × 12 × 6 complex.
    let programs = lowered(
        &[16, 12, 10],
        Domain::RealToComplex,
        &FftOptions::default(),
        &[2],
        &[0],
    );
    let p = &programs[0].1;
    println!("r2c: {:?} / {:?}", words(&p.forward), words(&p.backward));
    let planes = &p.forward.info[0];
    assert_eq!(
        planes.what,
        "per plane in cache: r2c along axis 2 + FFT along axis 1"
    );
    assert_eq!(
        (planes.read_bytes, planes.write_bytes),
        (8 * 12 * 10 * 8, 8 * 12 * 6 * 16)
    );
    let want = 96.0 * 2.5 * 10.0 * log2(10.0) + 8.0 * 6.0 * 5.0 * 12.0 * log2(12.0);
    assert!(
        (planes.flops - want).abs() < 1e-6 * want,
        "{} != {want}",
        planes.flops
    );
    let last = p.backward.info.last().expect("a step");
    assert!(last.what.ends_with("c2r along axis 2"), "{}", last.what);
}
