//! The end-to-end half of a calibration: one real distributed transform, on the calibrating
//! ranks, the way `dfft run` runs it, and the profile scaled so that the model predicts it.
//!
//! The microbenchmarks of `calibrate_cmd` give the model's terms their shape (latency against
//! bandwidth, FFT rate per length, copies, memory), but each measures something other than
//! what a run does: `MPI_Alltoall` moves a message with two copies through MPI's shared
//! segment where a run on one node exchanges through its plan's shared-memory windows, fused
//! into the FFT sweeps (one copy); the FFT rate and the memory bandwidth come from one rank or
//! from `memcpy` streams, not from every rank sweeping its block at once on shared cores.
//! On 4 ranks over 2 cores that made a quick profile predict three times the time the run
//! took. So the calibration also times one complex transform of [`anchor_shape`] (about
//! 8 MiB per rank) on the grid the model picks for it, with the plan's own blocks, warm-up
//! pairs and the fastest timed pair (what `dfft run` reports), and [`fit_anchor`] scales the
//! compute terms (FFT rate) by measured over predicted FFT sweeps, the terms of the exchanges
//! it ran by measured over predicted exchanges, and the node's memory bandwidth, which bounds
//! both, by the smaller factor. On one node the anchor's exchanges go through shared-memory
//! windows: only the window terms (`ts_window_s`, `tw_window_s_per_byte`) are scaled, and
//! exchanges through messages (a pencil grid's, caller-allocated blocks', other nodes') keep
//! the `MPI_Alltoall` probe's terms. Across nodes its exchanges are messages, and their
//! terms (ts, tw, call overhead, copy rates) are scaled instead.

use fft_core::model::{self, MachineProfile, Problem};
use fft_core::{Complex, FftError, FftOptions, FftPlan, GridChoice};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use redist::GridShape;
use serde::Serialize;
use std::time::Instant;

/// Complex f64 elements per rank of the anchor transform (8 MiB).
const PER_RANK: usize = 1 << 19;

/// The most a scale factor may move a term (a measurement disturbed beyond this is not
/// trusted further).
const MOST_SCALE: f64 = 50.0;

/// What the anchor transform measured: seconds per forward+backward pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AnchorTimes {
    /// The fastest timed pair (max over ranks).
    pub pair_s: f64,
    /// Its FFT sweeps (the pair's share of the plan's FFT stage time).
    pub fft_s: f64,
    /// Its exchanges (pack, transfer, unpack).
    pub exchange_s: f64,
}

/// The anchor: what was run, measured and predicted, and the scale factors fitted to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnchorFit {
    /// The global shape (complex f64).
    pub shape: Vec<usize>,
    /// The grid (the model's choice with the microbenchmarks' profile).
    pub grid: Vec<usize>,
    /// Timed pairs after the warm-up.
    pub pairs: usize,
    /// What it measured.
    pub measured: AnchorTimes,
    /// What the microbenchmarks' profile predicted for it.
    pub predicted_before: AnchorTimes,
    /// What the scaled profile predicts.
    pub predicted_after: AnchorTimes,
    /// The factor on the FFT rate (and, the smaller of the two, on the memory bandwidth's
    /// seconds per byte).
    pub compute_scale: f64,
    /// The factor on the terms of the exchanges the anchor ran ([`AnchorFit::scaled`]).
    pub exchange_scale: f64,
    /// Which exchange terms `exchange_scale` applies to: "windows" (`ts_window_s`,
    /// `tw_window_s_per_byte`), "messages" (ts, tw, call overhead, copy rates), "windows and
    /// messages", or "none" (no exchange).
    pub scaled: &'static str,
}

/// Which kinds of exchange a prediction holds: (through windows, through messages).
fn kinds(p: &model::Prediction) -> (bool, bool) {
    (p.window_exchanges > 0, p.exchanges > p.window_exchanges)
}

/// The name of the exchange terms `kinds` scales ([`AnchorFit::scaled`]).
fn kinds_name((windows, messages): (bool, bool)) -> &'static str {
    match (windows, messages) {
        (true, true) => "windows and messages",
        (true, false) => "windows",
        (false, true) => "messages",
        (false, false) => "none",
    }
}

/// The anchor's global shape for `ranks`: a power of two of about [`PER_RANK`] elements per
/// rank, its exponent spread over three axes (the larger first): 128³ on 4 ranks.
pub fn anchor_shape(ranks: usize) -> Vec<usize> {
    let total = (PER_RANK as u128 * ranks.max(1) as u128).next_power_of_two();
    let bits = total.trailing_zeros() as usize;
    (0..3).map(|i| 1usize << ((bits + 2 - i) / 3)).collect()
}

/// The model's (fft, exchange, pair) seconds for `problem` on `grid` with `profile`, and the
/// kinds of exchange it holds.
fn predicted(
    problem: &Problem,
    grid: &GridShape,
    profile: &MachineProfile,
) -> fft_core::Result<(AnchorTimes, (bool, bool))> {
    let p = model::predict(problem, grid, profile)?;
    Ok((
        AnchorTimes {
            pair_s: p.predicted_s,
            fft_s: p.fft_s,
            exchange_s: p.latency_s + p.bandwidth_s + p.memory_s,
        },
        kinds(&p),
    ))
}

/// `profile` with its compute terms scaled by `compute` and the terms of the exchange kinds
/// `(windows, messages)` by `exchange` (seconds per unit multiplied, rates divided). The
/// node's memory bandwidth bounds both the FFT sweeps and the exchanges' copies, so it takes
/// the smaller factor: a bound that neither part of the measured transform reached must not
/// hold the other part up.
fn scaled(
    profile: &MachineProfile,
    compute: f64,
    exchange: f64,
    (windows, messages): (bool, bool),
) -> MachineProfile {
    let mut p = profile.clone();
    p.fft_s_per_element_log2 *= compute;
    p.tw_memory_s_per_byte *= compute.min(exchange);
    if windows {
        p.ts_window_s *= exchange;
        p.tw_window_s_per_byte *= exchange;
    }
    if messages {
        p.ts_intra_s *= exchange;
        p.tw_intra_s_per_byte *= exchange;
        p.ts_inter_s *= exchange;
        p.tw_inter_s_per_byte *= exchange;
        p.tw_node_s_per_byte *= exchange;
        p.exchange_overhead_s *= exchange;
        p.copy_bytes_per_s /= exchange;
        p.stream_bytes_per_s /= exchange;
    }
    p
}

/// Scales `base` so that the model predicts `measured` for `problem` on `grid`: the FFT terms
/// by measured over predicted FFT sweeps, the exchange terms by measured over predicted
/// exchanges, a few rounds (the node's memory bandwidth bounds both, so one scale moves the
/// other's prediction a little). Each factor stays within 1/50..50; a part the run did not
/// have (no exchange on one rank) keeps its terms. Pure.
pub fn fit_anchor(
    base: &MachineProfile,
    problem: &Problem,
    grid: &GridShape,
    measured: AnchorTimes,
    pairs: usize,
) -> fft_core::Result<(MachineProfile, AnchorFit)> {
    let (before, which) = predicted(problem, grid, base)?;
    let (mut compute, mut exchange) = (1.0f64, 1.0f64);
    let mut now = before;
    let step = |want: f64, got: f64| {
        if want > 0.0 && got > 0.0 && want.is_finite() {
            want / got
        } else {
            1.0
        }
    };
    for _ in 0..6 {
        compute = (compute * step(measured.fft_s, now.fft_s)).clamp(1.0 / MOST_SCALE, MOST_SCALE);
        exchange = (exchange * step(measured.exchange_s, now.exchange_s))
            .clamp(1.0 / MOST_SCALE, MOST_SCALE);
        now = predicted(problem, grid, &scaled(base, compute, exchange, which))?.0;
    }
    let profile = scaled(base, compute, exchange, which);
    profile.validate()?;
    Ok((
        profile,
        AnchorFit {
            shape: problem.shape.clone(),
            grid: grid.dims().to_vec(),
            pairs,
            measured,
            predicted_before: before,
            predicted_after: now,
            compute_scale: compute,
            exchange_scale: exchange,
            scaled: kinds_name(which),
        },
    ))
}

fn max_over(world: &SimpleCommunicator, x: f64) -> f64 {
    let mut out = 0.0;
    world.all_reduce_into(&x, &mut out, SystemOperation::max());
    out
}

/// Times the anchor transform on `world` (collective) and fits `base` to it: a c2c f64
/// transform of [`anchor_shape`] on the model's grid, the forward output and the round trip
/// in the plan's blocks (shared-memory windows on one node, as `dfft run`'s default), two
/// warm-up pairs, then pairs from a barrier for about `target` seconds (3 to 20 of them).
/// `base` describes the launch as the run's model will (ranks per node, threads per rank).
pub fn measure_anchor(
    world: &SimpleCommunicator,
    base: &MachineProfile,
    target: f64,
) -> Result<(MachineProfile, AnchorFit), FftError> {
    let ranks = world.size() as usize;
    let shape = anchor_shape(ranks);
    // Run as `dfft run` runs it: fused exchanges through shared-memory windows on one node.
    let problem = Problem::new(&shape, ranks).through_windows(true);
    let grid = model::choose(&problem, base)?;
    let options = FftOptions::default()
        .grid(GridChoice::Dims(grid.dims().to_vec()))
        .machine(base.clone());
    let mut plan = FftPlan::<f64>::new(world, &shape, options)?;
    let offset = world.rank() as usize * plan.input_len();
    // Any data works; distinct values keep the FFTs honest (no zeros to skip).
    let input: Vec<Complex<f64>> = (0..plan.input_len())
        .map(|i| {
            let x = ((offset + i) % 1021) as f64;
            Complex::new(x.sin(), x.cos())
        })
        .collect();
    let mut output = plan.alloc_output()?;
    let mut back = plan.alloc_input()?;
    let mut pair = |plan: &mut FftPlan<f64>| -> Result<f64, FftError> {
        world.barrier();
        let t = Instant::now();
        plan.forward(&input, &mut output)?;
        plan.backward(&output, &mut back)?;
        Ok(max_over(world, t.elapsed().as_secs_f64()))
    };
    pair(&mut plan)?;
    let first = pair(&mut plan)?;
    let pairs = ((target / first.max(1e-6)) as usize).clamp(3, 20);
    plan.reset_times();
    let mut best = f64::INFINITY;
    for _ in 0..pairs {
        best = best.min(pair(&mut plan)?);
    }
    let times = plan.times();
    let fft = max_over(world, times.fft);
    let exchange = max_over(world, times.pack + times.comm + times.unpack);
    // The fastest pair, split as the stages' totals over all timed pairs.
    let share = if fft + exchange > 0.0 {
        fft / (fft + exchange)
    } else {
        1.0
    };
    let measured = AnchorTimes {
        pair_s: best,
        fft_s: best * share,
        exchange_s: best * (1.0 - share),
    };
    fit_anchor(base, &problem, &grid, measured, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_shapes_hold_about_8_mib_per_rank() {
        assert_eq!(anchor_shape(4), vec![128, 128, 128]);
        assert_eq!(anchor_shape(1), vec![128, 64, 64]);
        assert_eq!(anchor_shape(2), vec![128, 128, 64]);
        assert_eq!(anchor_shape(8), vec![256, 128, 128]);
        // 6 ranks: the next power of two, 2^22 elements.
        assert_eq!(anchor_shape(6), vec![256, 128, 128]);
        for p in [1usize, 3, 5, 64, 4096] {
            let n: usize = anchor_shape(p).iter().product();
            assert!(n >= PER_RANK * p && n < 2 * PER_RANK * p, "{p}: {n}");
        }
    }

    /// Times made by the model from a "true" profile (FFTs 2.5× faster, exchanges 3× faster
    /// than the microbenchmarks said) are met by the fitted profile, and the factors come
    /// back; a measurement with no exchange leaves the exchange terms alone.
    #[test]
    fn the_fit_meets_the_measured_transform() {
        let base = MachineProfile {
            cores_per_node: 2,
            ranks_per_node: 4,
            ..MachineProfile::default()
        };
        let messages = (false, true);
        let truth = scaled(&base, 0.4, 1.0 / 3.0, messages);
        let problem = Problem::new(&[128, 128, 128], 4);
        let grid = GridShape::new(vec![4]).unwrap();
        let (want, which) = predicted(&problem, &grid, &truth).unwrap();
        assert_eq!(which, messages);
        let (fitted, fit) = fit_anchor(&base, &problem, &grid, want, 10).unwrap();
        let got = predicted(&problem, &grid, &fitted).unwrap().0;
        for (g, w) in [
            (got.pair_s, want.pair_s),
            (got.fft_s, want.fft_s),
            (got.exchange_s, want.exchange_s),
        ] {
            assert!((g / w - 1.0).abs() < 0.02, "{got:?} vs {want:?}: {fit:?}");
        }
        assert!((fit.compute_scale - 0.4).abs() < 0.02, "{fit:?}");
        assert!((fit.exchange_scale - 1.0 / 3.0).abs() < 0.02, "{fit:?}");
        assert_eq!(fit.scaled, "messages");
        assert!(fit.predicted_before.pair_s > 2.0 * want.pair_s, "{fit:?}");
        // One rank: no exchange measured or predicted, the exchange terms untouched.
        let one = Problem::new(&[128, 64, 64], 1);
        let g1 = GridShape::new(vec![1]).unwrap();
        let mut times = predicted(&one, &g1, &truth).unwrap().0;
        times.exchange_s = 0.0;
        let (fitted, fit) = fit_anchor(&base, &one, &g1, times, 5).unwrap();
        assert_eq!(fit.exchange_scale, 1.0);
        assert_eq!(fitted.ts_intra_s, base.ts_intra_s);
        assert!((fit.compute_scale - 0.4).abs() < 0.02, "{fit:?}");
    }

    /// On one node the anchor's slab exchanges go through windows: the fit scales the window
    /// terms alone, and a pencil grid's exchanges (messages) are predicted as before it.
    #[test]
    fn a_window_anchor_leaves_message_exchanges_alone() {
        let base = MachineProfile {
            cores_per_node: 2,
            ranks_per_node: 4,
            ..MachineProfile::default()
        };
        let problem = Problem::new(&[128, 128, 128], 4).through_windows(true);
        let slab = GridShape::new(vec![4]).unwrap();
        let truth = scaled(&base, 0.5, 0.25, (true, false));
        let (want, which) = predicted(&problem, &slab, &truth).unwrap();
        assert_eq!(which, (true, false));
        let (fitted, fit) = fit_anchor(&base, &problem, &slab, want, 10).unwrap();
        assert_eq!(fit.scaled, "windows");
        assert!((fit.exchange_scale - 0.25).abs() < 0.02, "{fit:?}");
        assert_eq!(fitted.ts_intra_s, base.ts_intra_s);
        assert_eq!(fitted.copy_bytes_per_s, base.copy_bytes_per_s);
        let pencil = GridShape::new(vec![2, 2]).unwrap();
        let p = model::predict(&problem, &pencil, &fitted).unwrap();
        let q = model::predict(&problem, &pencil, &base).unwrap();
        assert_eq!(p.window_exchanges, 0, "{p:?}");
        assert_eq!((p.latency_s, p.bandwidth_s), (q.latency_s, q.bandwidth_s));
    }
}
