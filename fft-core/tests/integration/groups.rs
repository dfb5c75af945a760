//! Batches split into groups ([`FftOptions::groups`]) under real MPI on 1..=8 ranks: c2c, r2c
//! and r2r batches of K fields on every divisor G of P (K a multiple of G and not), slab and
//! pencil caller layouts, against a serial FFT of each field (rustfft one axis at a time) and
//! naive O(n²) r2r sums, every field's block in the caller's layout as in the plain plan;
//! round trips; with `deterministic` the same bits as the plain plan; `Groups::Auto`; and the
//! refusals (G not dividing P, G > K, a transposed output), the same error on every rank.
//!
//! Each `#[test] groups_np{P}` re-launches this binary under `mpirun -n P` running
//! `groups_body`; rank 0 prints `max error <what>: <value>` and `plans: <count>`.

use crate::common::*;
use fft_core::model::MachineProfile;
use fft_core::{
    AxisKind, FftError, FftOptions, FftPlan, GridChoice, Groups, Normalization, R2rKind, R2rPlan,
    RealFftPlan,
};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use rustfft::FftDirection;

const BODY: &str = "groups::groups_body";

mpi_harness::launches!(BODY, 300;
    groups_np1 => 1, groups_np2 => 2, groups_np3 => 3, groups_np4 => 4,
    groups_np5 => 5, groups_np6 => 6, groups_np7 => 7, groups_np8 => 8);

const TOL: f64 = 1e-12 * 8.0;

/// K fields' blocks of `layout` on `rank`, one after another.
fn blocks<T: Copy + Default>(fields: &[Vec<T>], layout: &redist::Layout, rank: usize) -> Vec<T> {
    fields
        .iter()
        .flat_map(|f| local_block(f, layout, rank))
        .collect()
}

/// The largest error over the ranks.
fn worst(world: &impl Communicator, err: f64) -> f64 {
    let mut max = 0.0f64;
    world.all_reduce_into(&err, &mut max, SystemOperation::max());
    max
}

/// The (G, K) cases for P ranks: every divisor G, K = G and K not a multiple of G.
fn cases(size: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for g in (1..=size).filter(|g| size.is_multiple_of(*g)) {
        out.push((g, g));
        out.push((g, 2 * g + 1));
    }
    out
}

/// The caller's grids: a slab and, from 4 ranks, a pencil.
fn caller_grids(size: usize) -> Vec<GridChoice> {
    let mut out = vec![GridChoice::Rank(1)];
    if size >= 4 {
        out.push(GridChoice::Rank(2));
    }
    out
}

fn c2c_case(world: &impl Communicator, g: usize, k: usize, grid: &GridChoice, det: bool) -> f64 {
    let (rank, shape) = (world.rank() as usize, [6usize, 5, 7]);
    let opts = FftOptions::default()
        .batch(k)
        .groups(Groups::Fixed(g))
        .grid(grid.clone())
        .deterministic(det)
        .normalization(Normalization::Backward);
    let mut plan = FftPlan::<f64>::new(world, &shape, opts.clone()).unwrap();
    assert_eq!(plan.groups(), g);
    let fields: Vec<_> = (0..k)
        .map(|f| random_global(&shape, 40 + f as u64))
        .collect();
    let spectra: Vec<_> = fields
        .iter()
        .map(|f| serial_fft(f, &shape, FftDirection::Forward))
        .collect();
    let input = blocks(&fields, plan.input_layout(), rank);
    let expect = blocks(&spectra, plan.output_layout(), rank);
    let mut out = vec![Complex::default(); plan.output_len()];
    plan.forward(&input, &mut out).unwrap();
    let scale = spectra.iter().map(|s| max_norm(s)).fold(0.0, f64::max);
    let mut err = relative_error(&out, &expect, scale);
    let mut back = vec![Complex::default(); plan.input_len()];
    plan.backward(&out, &mut back).unwrap();
    err = err.max(relative_error(&back, &input, 1.0));
    if det {
        // The plain plan of the same batch gives the same bits (deterministic plans do, on
        // any decomposition).
        let plain_opts = opts.groups(Groups::Fixed(1));
        let mut plain = FftPlan::<f64>::new(world, &shape, plain_opts).unwrap();
        let mut plain_out = vec![Complex::default(); plain.output_len()];
        plain.forward(&input, &mut plain_out).unwrap();
        assert!(
            plain_out == out,
            "grouped and plain deterministic bits differ (G={g})"
        );
    }
    err
}

fn r2c_case(world: &impl Communicator, g: usize, k: usize, grid: &GridChoice) -> f64 {
    let (rank, shape) = (world.rank() as usize, [5usize, 6, 8]);
    let opts = FftOptions::default()
        .batch(k)
        .groups(Groups::Fixed(g))
        .grid(grid.clone())
        .normalization(Normalization::Backward);
    let mut plan = RealFftPlan::<f64>::new(world, &shape, opts).unwrap();
    let fields: Vec<_> = (0..k).map(|f| random_real(&shape, 70 + f as u64)).collect();
    let spectra: Vec<_> = fields.iter().map(|f| serial_rfft(f, &shape)).collect();
    let input = blocks(&fields, plan.input_layout(), rank);
    let expect = blocks(&spectra, plan.output_layout(), rank);
    let mut out = vec![Complex::default(); plan.output_len()];
    plan.forward(&input, &mut out).unwrap();
    let scale = spectra.iter().map(|s| max_norm(s)).fold(0.0, f64::max);
    let mut err = relative_error(&out, &expect, scale);
    let mut back = vec![0.0; plan.input_len()];
    plan.backward(&out, &mut back).unwrap();
    let diff = back.iter().zip(&input).map(|(a, b)| (a - b).abs());
    err = err.max(diff.fold(0.0, f64::max));
    err
}

fn r2r_case(world: &impl Communicator, g: usize, k: usize, grid: &GridChoice) -> f64 {
    let (rank, shape) = (world.rank() as usize, [6usize, 7, 5]);
    let kinds = [R2rKind::Dct2, R2rKind::Dst1, R2rKind::Dct3];
    let opts = FftOptions::default()
        .batch(k)
        .groups(Groups::Fixed(g))
        .grid(grid.clone())
        .axes(kinds.iter().map(|&k| AxisKind::R2r(k)).collect());
    let mut plan = R2rPlan::<f64>::new(world, &shape, opts).unwrap();
    let fields: Vec<_> = (0..k).map(|f| random_real(&shape, 90 + f as u64)).collect();
    let reference: Vec<Vec<f64>> = fields
        .iter()
        .map(|f| {
            let mut y = complexify(f);
            for (axis, kind) in kinds.iter().enumerate() {
                y = along_axis(&y, &shape, axis, shape[axis], |l| naive_r2r(kind.name(), l));
            }
            y.iter().map(|z| z.re).collect()
        })
        .collect();
    let input = blocks(&fields, plan.input_layout(), rank);
    let expect = blocks(&reference, plan.output_layout(), rank);
    let mut out = vec![0.0; plan.output_len()];
    plan.forward(&input, &mut out).unwrap();
    let scale = reference
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = out.iter().zip(&expect).map(|(a, b)| (a - b).abs());
    diff.fold(0.0, f64::max) / scale
}

/// Every rank's error text for `result`, checked to be the same on every rank.
fn same_error<T>(world: &impl Communicator, result: fft_core::Result<T>, needle: &str) {
    let text = match result {
        Ok(_) => panic!("expected an error containing '{needle}'"),
        Err(e @ FftError::BadGroups { .. }) => e.to_string(),
        Err(e) => panic!("expected BadGroups, got {e}"),
    };
    assert!(text.contains(needle), "'{text}' lacks '{needle}'");
    let hash = text
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let (mut lo, mut hi) = (0u64, 0u64);
    world.all_reduce_into(&hash, &mut lo, SystemOperation::min());
    world.all_reduce_into(&hash, &mut hi, SystemOperation::max());
    assert_eq!(lo, hi, "ranks disagree on the error");
    if world.rank() == 0 {
        println!("refused: {text}");
    }
}

#[test]
#[ignore = "MPI body: run by the groups_np* launchers under mpirun"]
fn groups_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let mut plans = 0;
    let (mut c2c, mut r2c, mut r2r) = (0.0f64, 0.0f64, 0.0f64);
    for grid in caller_grids(size) {
        for (g, k) in cases(size) {
            c2c = c2c.max(c2c_case(&world, g, k, &grid, false));
            r2c = r2c.max(r2c_case(&world, g, k, &grid));
            r2r = r2r.max(r2r_case(&world, g, k, &grid));
            plans += 3;
        }
    }
    // Deterministic: grouped bits equal the plain plan's, for the largest split.
    c2c = c2c.max(c2c_case(&world, size, size + 1, &GridChoice::Auto, true));
    let (c2c, r2c, r2r) = (worst(&world, c2c), worst(&world, r2c), worst(&world, r2r));
    for (what, err) in [("c2c", c2c), ("r2c", r2c), ("r2r", r2r)] {
        assert!(err <= TOL, "{what} error {err:e} > {TOL:e}");
        if rank == 0 {
            println!("max error {what}: {err:e}");
        }
    }

    // The model's choice: a valid split, bit for bit what forcing it gives. Under a profile
    // whose element-by-element copies are slow (the plain plan's transposing packs) against
    // fast runs (the redistributions'), the model splits on every rank count that allows it.
    let slow_packs = MachineProfile {
        copy_bytes_per_s: 1e7,
        stream_bytes_per_s: 1e10,
        ..MachineProfile::default()
    };
    for (machine, name) in [
        (MachineProfile::default(), "default"),
        (slow_packs, "slow packs"),
    ] {
        let shape = [8, 6, 5];
        let opts = FftOptions::default()
            .batch(6)
            .groups(Groups::Auto)
            .machine(machine);
        let mut auto = FftPlan::<f64>::new(&world, &shape, opts.clone()).unwrap();
        let g = auto.groups();
        assert!(size.is_multiple_of(g) && g <= 6);
        if name == "slow packs" && size > 1 && size != 7 {
            assert!(g > 1, "{name}: the model kept one group on {size} ranks");
        }
        let mut forced =
            FftPlan::<f64>::new(&world, &shape, opts.groups(Groups::Fixed(g))).unwrap();
        let fields: Vec<_> = (0..6)
            .map(|f| random_global(&shape, 90 + f as u64))
            .collect();
        let input = blocks(&fields, auto.input_layout(), rank);
        let (mut a, mut b) = (
            vec![Complex::default(); auto.output_len()],
            vec![Complex::default(); forced.output_len()],
        );
        auto.forward(&input, &mut a).unwrap();
        forced.forward(&input, &mut b).unwrap();
        assert!(a == b, "{name}: auto (G={g}) and forced G={g} bits differ");
        let (mut ba, mut bb) = (
            vec![Complex::default(); auto.input_len()],
            vec![Complex::default(); forced.input_len()],
        );
        auto.backward(&a, &mut ba).unwrap();
        forced.backward(&b, &mut bb).unwrap();
        assert!(
            ba == bb,
            "{name}: auto and forced backward bits differ (G={g})"
        );
        if rank == 0 {
            println!("auto groups for 6 fields of 8x6x5 ({name} profile): {g}");
        }
    }

    // Refusals, the same on every rank.
    let plan = |groups: usize, fields: usize, transposed: bool| {
        let opts = FftOptions::default()
            .batch(fields)
            .groups(Groups::Fixed(groups))
            .transposed_out(transposed);
        FftPlan::<f64>::new(&world, &[6, 5, 7], opts)
    };
    if size > 1 {
        same_error(&world, plan(size, size - 1, false), "groups need at least");
        same_error(
            &world,
            plan(size, size, true),
            "does not take transposed_out",
        );
    }
    if !size.is_multiple_of(2) && size > 1 {
        same_error(
            &world,
            plan(2, 4, false),
            "do not split into 2 equal groups",
        );
    }
    same_error(&world, plan(0, 4, false), "at least one group");
    if rank == 0 {
        println!("plans: {plans}");
    }
    world.barrier();
    mpi.pass();
}
