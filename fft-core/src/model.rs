//! The complexity model: the predicted time of a full forward+backward transform on every
//! candidate processor grid, and the choice among them (Birkeland and Sørøvik, "Parallel
//! pencil-decomposed FFTs", §4–§5). Pure, no MPI, no files or environment: any rank (or
//! `dfft plan` on a laptop) computes the same numbers from the same global inputs and the
//! [`MachineProfile`] its caller passes.
//!
//! For a candidate grid the model walks the stage list of [`crate::stages::pipeline`] for
//! both directions and adds, per stage, what the most loaded rank pays (each exchange is a
//! collective inside its group, so the slowest member sets its time):
//!
//! * **latency**: `ts` per message (per non-empty peer other than the rank itself, the larger
//!   of the send and receive side), plus `exchange_overhead_s` per exchange whose group has
//!   more than one member (the fixed cost of one collective call);
//! * **bandwidth**: `tw` per byte that leaves (or arrives at) the rank, the larger side;
//! * **memory**: every local element is copied once per exchange (pack + unpack for what
//!   travels, one direct copy for the rank's own part), except what a fused FFT sweep reads
//!   or writes in place. A copy in contiguous runs of `L` elements costs
//!   `bytes · (1/stream + (1/copy − 1/stream)/L)` on one core: packing moves runs (messages
//!   keep the source's memory order), an unpack into another memory order single elements
//!   (`L` = 1, the transpose rate `copy_bytes_per_s`). A strided FFT sweep's tile gather and
//!   scatter replace the FFT's own pass over its lines and are charged only the short-run
//!   part, `2 · bytes · (1/copy − 1/stream)/L` with `L` the tile width;
//! * **fft**: `fft_s_per_element_log2 · n · log2 n` per line of length n, per core.
//!
//! Messages between ranks of one node (row-major rank numbering, `ranks_per_node` per node)
//! use `ts_intra`/`tw_intra`, others `ts_inter`/`tw_inter`. The ranks of a node share its
//! cores: FFTs, copies and intra-node transfers (copies through shared memory) take the larger
//! of the most loaded rank's time and the mean rank's time × ranks on the node / cores (so an
//! oversubscribed node slows everyone down by that ratio, and a rank with less work, or none,
//! leaves its share of the cores to the others); intra-node latency grows by the same ratio.
//!
//! With equal axes N, equal grid dimensions p and N mod p = 0 one exchange costs exactly
//! `(p − 1)(ts + tw·N^d/p^(r+1))`, eq. (5.1) of the paper; the r exchanges of one sweep give
//! its W1 (5.2), and the slab of P = p^r ranks (the §4 projection onto a 1-D grid) its W2
//! (5.3). A forward+backward pair is 4 sweeps (2 with transposed output).
//!
//! **Idle ranks.** A grid dimension larger than an axis it splits leaves ranks with nothing.
//! Such candidates are still evaluated (charged: the most loaded rank carries the work the
//! idle ones do not) and listed, but marked `excluded` and chosen only if every candidate has
//! idle ranks.
//!
//! **Size.** A prediction never walks the ranks: one exchange visits the coordinates of its
//! grid dimension that own something (O(min(p, N))), in O(d) memory, and the candidates come
//! from the prime factorization of P. P is limited to [`MAX_RANKS`] (2^40) and one evaluation
//! to [`MAX_CANDIDATES`] grids; beyond either the model returns an error naming the numbers.
//!
//! ```
//! use fft_core::model::{choose, MachineProfile, Problem};
//! let problem = Problem::new(&[512, 512, 512], 4096);
//! let profile = MachineProfile::default();
//! let grid = choose(&problem, &profile).unwrap();
//! assert_eq!(grid.rank(), 2); // 4096 > 512 ranks: a slab cannot use them all
//! ```

mod candidates;
mod cost;
pub mod groups;
mod nodes;
mod profile;

pub use candidates::{
    candidates, check_size, factorization_count, factorizations, Candidates, MAX_CANDIDATES,
    MAX_RANKS,
};
pub use groups::{evaluate_groups, explain_groups, GroupCandidate};
pub use profile::MachineProfile;

use crate::error::{FftError, Result};
use crate::options::GridChoice;
use crate::stages::{pipeline_for, Domain, Pipeline, Stage, TransformShape};
use cost::{exchange_cost, tile_lines, CopyRates, Cpu, ExchangeCost};
use redist::{ExchangePlan, GridShape, RedistError};
use serde::Serialize;

/// The global inputs of a prediction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Global array shape (C order).
    pub shape: Vec<usize>,
    /// Number of processes P.
    pub ranks: usize,
    /// Bytes per array element (16 for complex f64).
    pub element_bytes: usize,
    /// Whether the forward output stays in the last pencil (no exchanges back).
    pub transposed_out: bool,
    /// A real-to-complex transform (`dfft run --kind r2c`): the forward input is real, the
    /// last axis becomes `n/2 + 1` complex elements first, and every exchange moves complex
    /// elements of `element_bytes`. Otherwise complex-to-complex.
    pub real_to_complex: bool,
    /// Whether the plan may move fused exchanges through shared-memory windows
    /// ([`crate::FftOptions::shared_memory`], dfft's default): an exchange whose group lies on
    /// one node then costs one copy through shared memory (`ts_window_s`,
    /// `tw_window_s_per_byte`) instead of messages. `false` for other libraries' runs (the
    /// published tables) and in [`Problem::new`].
    pub windows: bool,
}

impl Problem {
    /// A complex f64 transform with natural (not transposed) output.
    pub fn new(shape: &[usize], ranks: usize) -> Self {
        Self {
            shape: shape.to_vec(),
            ranks,
            element_bytes: 16,
            transposed_out: false,
            real_to_complex: false,
            windows: false,
        }
    }

    /// The same problem as dfft's plans run it: fused exchanges of groups on one node through
    /// shared-memory windows (see [`Problem::windows`]).
    pub fn through_windows(mut self, windows: bool) -> Self {
        self.windows = windows;
        self
    }

    /// The same problem as a real-to-complex transform.
    pub fn real_to_complex(mut self) -> Self {
        self.real_to_complex = true;
        self
    }

    /// The global shapes the transform goes through.
    fn transform_shape(&self) -> TransformShape {
        if !self.real_to_complex {
            return TransformShape::complex(&self.shape);
        }
        let mut spectral = self.shape.clone();
        if let Some(last) = spectral.last_mut() {
            *last = *last / 2 + 1;
        }
        TransformShape {
            physical: self.shape.clone(),
            spectral,
            domain: Domain::RealToComplex,
        }
    }

    /// The pipeline of this problem on `grid`.
    fn pipeline(&self, grid: GridShape) -> Result<Pipeline> {
        pipeline_for(&self.transform_shape(), grid, self.transposed_out)
    }

    /// The pipeline of this problem on `grid`, transforming only the axes with
    /// `transformed[a]` (exchanges only where a transformed axis must become local).
    fn pipeline_of(&self, grid: GridShape, transformed: &[bool]) -> Result<Pipeline> {
        crate::stages::pipeline_partial(
            &self.transform_shape(),
            grid,
            self.transposed_out,
            transformed,
        )
    }
}

/// The predicted cost of one candidate grid, split into terms (seconds per forward+backward
/// pair, each stage charged for its most loaded rank).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// Grid dimensions.
    pub grid: Vec<usize>,
    /// Grid rank r.
    pub grid_rank: usize,
    /// Sum of the four terms.
    pub predicted_s: f64,
    /// `ts` × messages.
    pub latency_s: f64,
    /// `tw` × bytes: the transfer time of the exchanges, `intra_node_s + inter_node_s`.
    pub bandwidth_s: f64,
    /// The share of `bandwidth_s` spent on transfers between ranks of one node.
    pub intra_node_s: f64,
    /// The share of `bandwidth_s` spent on transfers between nodes (each rank's link, the
    /// node's shared interface or the switch's uplinks, whichever is slowest).
    pub inter_node_s: f64,
    /// Local 1-D FFTs.
    pub fft_s: f64,
    /// Pack, unpack, own-part copies and strided-FFT tile copies.
    pub memory_s: f64,
    /// Exchanges in the pair.
    pub exchanges: usize,
    /// Of these, the exchanges through shared-memory windows (see [`Problem::windows`]).
    pub window_exchanges: usize,
    /// Messages of the most loaded rank, summed over the exchanges.
    pub messages: u64,
    /// Bytes the most loaded rank sends (or receives, the larger), summed over the exchanges.
    pub bytes: u64,
    /// Most ranks that own nothing in any one layout (0: every rank has work throughout).
    pub idle_ranks: usize,
}

/// One line of the model's answer: a prediction, whether it was chosen, and why not if not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The prediction.
    #[serde(flatten)]
    pub prediction: Prediction,
    /// Whether this is the model's choice.
    pub chosen: bool,
    /// Why a candidate with idle ranks is not chosen (`None` if it may be).
    pub excluded: Option<String>,
}

/// Which copies of an exchange a fused FFT sweep takes over (see [`fusions`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Fusion {
    /// The sweep after the exchange reads the received data and the own part in place.
    unpack: bool,
    /// The sweep before the exchange writes the messages and the own part in place.
    pack: bool,
    /// Pieces a fused exchange moves in, one collective call each (0 or 1: whole).
    pieces: usize,
    /// The fused exchange may go through a shared-memory window (it does where its group
    /// lies on one node).
    window: bool,
}

/// The same pipeline on a grid whose dimensions are cut to what their axes can use: a grid
/// dimension larger than every axis it splits (in any layout) is replaced by that largest
/// axis (at least 2), because its coordinates from there on own nothing. Rank 0's blocks and
/// boxes, the stage list and each exchange's run lengths stay the same, so [`fusions`] gives
/// the same answer for it while looking at O(N) peers instead of O(P).
fn fusion_pipeline(
    pipe: &Pipeline,
    problem: &Problem,
    transformed: &[bool],
) -> Result<Option<Pipeline>> {
    let grid = pipe.layouts[0].grid();
    let mut dims = grid.dims().to_vec();
    for (j, p) in dims.iter_mut().enumerate() {
        let widest = pipe
            .layouts
            .iter()
            .map(|l| l.global_shape()[l.decomposed()[j]])
            .max()
            .unwrap_or(1);
        *p = (*p).min(widest.max(2));
    }
    if dims == grid.dims() {
        return Ok(None);
    }
    let cut = problem.pipeline_of(GridShape::new(dims)?, transformed)?;
    let same = cut.forward == pipe.forward && cut.backward == pipe.backward;
    Ok(same.then_some(cut))
}

/// Predicts the forward+backward time of `problem` on `grid`.
///
/// ```
/// use fft_core::model::{predict, MachineProfile, Problem};
/// use redist::GridShape;
/// // Eq. (5.1): one exchange of N^3 on a p×p grid costs (p−1)(ts + tw N^3/p^3); a
/// // forward+backward pair has 4 sweeps of r = 2 exchanges.
/// let (n, p, ts, tw) = (64.0, 4.0, 1e-6, 1e-9);
/// let profile = MachineProfile::network_only(ts, tw / 16.0); // tw per element of 16 bytes
/// let pr = predict(&Problem::new(&[64, 64, 64], 16), &GridShape::new(vec![4, 4]).unwrap(),
///                  &profile).unwrap();
/// let w1 = 2.0 * (p - 1.0) * (ts + tw * n * n * n / (p * p * p));
/// assert!((pr.predicted_s - 4.0 * w1).abs() < 1e-12 * w1);
/// ```
pub fn predict(
    problem: &Problem,
    grid: &GridShape,
    profile: &MachineProfile,
) -> Result<Prediction> {
    let all = vec![true; problem.shape.len()];
    predict_with(problem, grid, profile, &all, &mut FusionMemo::default())
}

/// [`predict`] of a partial transform: only the axes listed in `axes` are transformed, the
/// others left as they are (`AxisKind::Identity`), so only the exchanges that bring a
/// transformed axis into a rank's memory are costed: a 3-D field transformed along axes 1
/// and 2 on a slab (split along axis 0) needs none.
///
/// ```
/// use fft_core::model::{predict_partial, MachineProfile, Problem};
/// use redist::GridShape;
/// let problem = Problem::new(&[64, 64, 64], 4);
/// let slab = GridShape::new(vec![4]).unwrap();
/// let p = predict_partial(&problem, &[1, 2], &slab, &MachineProfile::default()).unwrap();
/// assert_eq!((p.exchanges, p.messages, p.bytes), (0, 0, 0));
/// ```
pub fn predict_partial(
    problem: &Problem,
    axes: &[usize],
    grid: &GridShape,
    profile: &MachineProfile,
) -> Result<Prediction> {
    let transformed = transformed_axes(problem, axes)?;
    predict_with(
        problem,
        grid,
        profile,
        &transformed,
        &mut FusionMemo::default(),
    )
}

/// Which of `problem`'s axes `axes` transforms (checked as `AxisKind::partial` checks them).
fn transformed_axes(problem: &Problem, axes: &[usize]) -> Result<Vec<bool>> {
    let d = problem.shape.len();
    let kinds = crate::AxisKind::partial(d, axes, crate::AxisKind::Fft)?;
    Ok(kinds
        .iter()
        .map(|k| *k != crate::AxisKind::Identity)
        .collect())
}

/// The fusions of each (cut) pipeline already lowered: the candidates of a huge rank count
/// cut to a few distinct grids.
#[derive(Default)]
struct FusionMemo {
    lowered: std::collections::HashMap<Vec<usize>, Vec<Fusion>>,
}

impl FusionMemo {
    /// [`all_fusions`] of `pipe`, lowered once per grid (the problem is the same).
    fn fusions(&mut self, pipe: &Pipeline, problem: &Problem) -> Result<Vec<Fusion>> {
        let dims = pipe.layouts[0].grid().dims();
        if let Some(f) = self.lowered.get(dims) {
            return Ok(f.clone());
        }
        let f = all_fusions(pipe, problem.element_bytes, problem.windows)?;
        self.lowered.insert(dims.to_vec(), f.clone());
        Ok(f)
    }
}

/// [`predict`] with the fusions of earlier candidates of the same problem.
fn predict_with(
    problem: &Problem,
    grid: &GridShape,
    profile: &MachineProfile,
    transformed: &[bool],
    memo: &mut FusionMemo,
) -> Result<Prediction> {
    check_inputs(problem, grid, profile)?;
    let pipe = problem.pipeline_of(grid.clone(), transformed)?;
    let mut pred = Prediction {
        grid: grid.dims().to_vec(),
        grid_rank: grid.rank(),
        predicted_s: 0.0,
        latency_s: 0.0,
        bandwidth_s: 0.0,
        intra_node_s: 0.0,
        inter_node_s: 0.0,
        fft_s: 0.0,
        memory_s: 0.0,
        exchanges: 0,
        window_exchanges: 0,
        messages: 0,
        bytes: 0,
        idle_ranks: idle_ranks(&pipe, grid),
    };
    let fused = stage_fusions(&pipe, problem, transformed, memo)?;
    let cpu = Cpu::new(profile, problem.ranks);
    // Forward and backward pass the same exchanges (the backward ones mirrored): each distinct
    // (from, to, fusion) is costed once.
    let mut costed: Vec<((usize, usize, Fusion), ExchangeCost)> = Vec::new();
    for (stage, &fusion) in pipe.forward.iter().chain(&pipe.backward).zip(&fused) {
        match *stage {
            Stage::Fft { .. } | Stage::Resize { .. } => {
                let (fft_s, memory_s) = sweep_cost(stage, &pipe, problem, profile, cpu);
                pred.fft_s += fft_s;
                pred.memory_s += memory_s;
            }
            Stage::Exchange { from, to } => {
                let key = (from, to, fusion);
                let c = match costed.iter().find(|(k, _)| *k == key) {
                    Some((_, c)) => *c,
                    None => {
                        let plan = ExchangePlan::new(&pipe.layouts[from], &pipe.layouts[to])?;
                        let c = exchange_cost(&plan, problem, profile, cpu, fusion);
                        costed.push((key, c));
                        c
                    }
                };
                pred.latency_s += c.latency_s;
                pred.bandwidth_s += c.bandwidth_s;
                pred.intra_node_s += c.intra_s;
                pred.inter_node_s += c.inter_s;
                pred.memory_s += c.memory_s;
                pred.messages += c.messages;
                pred.bytes += c.bytes;
                pred.exchanges += 1;
                pred.window_exchanges += usize::from(c.window);
            }
        }
    }
    pred.predicted_s = pred.latency_s + pred.bandwidth_s + pred.fft_s + pred.memory_s;
    Ok(pred)
}

/// Refuses a profile, grid or rank count the model cannot cost.
fn check_inputs(problem: &Problem, grid: &GridShape, profile: &MachineProfile) -> Result<()> {
    profile.validate()?;
    if grid.ranks() != problem.ranks {
        return Err(RedistError::GridSizeMismatch {
            dims: grid.dims().to_vec(),
            product: grid.ranks(),
            ranks: problem.ranks,
        }
        .into());
    }
    if problem.ranks > MAX_RANKS {
        return Err(FftError::TooManyRanks {
            ranks: problem.ranks as u64,
            limit: MAX_RANKS as u64,
        });
    }
    Ok(())
}

/// Most ranks that own nothing in any one layout of `pipe`.
fn idle_ranks(pipe: &Pipeline, grid: &GridShape) -> usize {
    let mut most = 0;
    for layout in &pipe.layouts {
        let idle = (0..grid.dims().len())
            .map(|j| {
                // Parts of grid dimension j that own nothing of the axis it splits, times the
                // ranks sharing each such coordinate.
                let axis = layout.decomposed()[j];
                let empty = grid.dims()[j].saturating_sub(layout.global_shape()[axis]);
                empty * (grid.ranks() / grid.dims()[j])
            })
            .fold(0usize, |acc, x| acc.max(x));
        most = most.max(idle);
    }
    most
}

/// Which copies each stage's fused kernel takes over (forward then backward stages).
fn stage_fusions(
    pipe: &Pipeline,
    problem: &Problem,
    transformed: &[bool],
    memo: &mut FusionMemo,
) -> Result<Vec<Fusion>> {
    // Beyond 2^20 ranks the blocks are tiny and the candidate grids many (thousands, each
    // lowered in a few hundred microseconds): the exchanges are costed unfused. So are
    // partial transforms' (the lowering the model asks is that of a full transform).
    if problem.ranks > 1 << 20 || transformed.iter().any(|&t| !t) {
        return Ok(vec![
            Fusion::default();
            pipe.forward.len() + pipe.backward.len()
        ]);
    }
    let cut = fusion_pipeline(pipe, problem, transformed)?;
    memo.fusions(cut.as_ref().unwrap_or(pipe), problem)
}

/// (FFT seconds, copy seconds) of one FFT sweep (`Stage::Fft` or `Stage::Resize`): the lines
/// of the most loaded rank's block (or the node's share of its cores and memory bandwidth),
/// and for a strided sweep the short runs of its tile copies.
fn sweep_cost(
    stage: &Stage,
    pipe: &Pipeline,
    problem: &Problem,
    profile: &MachineProfile,
    cpu: Cpu,
) -> (f64, f64) {
    let (layout, axis) = match *stage {
        Stage::Fft { layout, axis } => (layout, axis),
        Stage::Resize { from, axis, .. } => (from, axis),
        Stage::Exchange { .. } => return (0.0, 0.0),
    };
    // A real FFT (or its inverse) of n points costs about what a complex one of n/2 does:
    // half the complex rate per real element, on the real side.
    let (layout, real) = match *stage {
        Stage::Resize { to, .. } if pipe.real[to] => (to, 0.5),
        _ if pipe.real[layout] => (layout, 0.5),
        _ => (layout, 1.0),
    };
    let l = &pipe.layouts[layout];
    let eb = problem.element_bytes as f64;
    // The most loaded rank's block (rank 0's, under the balanced split), and the mean one
    // (the blocks of all ranks make up the global array).
    let most = l.local_len(0) as f64;
    let mean = l.global_shape().iter().map(|&x| x as f64).product::<f64>() / problem.ranks as f64;
    let len = problem.shape[axis];
    let log = if len > 1 { (len as f64).log2() } else { 0.0 };
    let per_element = real * log * profile.fft_s_per_element_log2;
    // The sweep reads and writes the block once (a real element is half a complex one).
    let fft_s = cpu.memory_time(most * per_element, mean * per_element, mean * eb * real);
    if len < 2 || crate::stages::is_contiguous(l, axis) {
        return (fft_s, 0.0);
    }
    // Strided sweep: lines gathered into a tile and scattered back, each tile row one run of
    // up to `tile_lines` elements. The gather and scatter replace the FFT's own read and
    // write of its lines (the FFT rate is measured on a block that streams from memory), so
    // they cost only what their shorter runs add.
    let position = l.memory_order().position_of(axis);
    let row: usize = l.local_shape_in_memory(0)[position + 1..].iter().product();
    let width = tile_lines(len, problem.element_bytes).min(row.max(1));
    let runs = 1.0 / width as f64;
    let rates = CopyRates::new(profile);
    let copies = cpu.time(
        rates.pattern(2.0 * most * eb, runs),
        rates.pattern(2.0 * mean * eb, runs),
    );
    (fft_s, copies)
}

/// For each stage of `pipe`'s forward then backward stages, which of its copies a fused
/// kernel does instead (only exchanges get any): the plan's own fusion decisions
/// ([`crate::lower`]), as rank 0 lowers them, so the model costs what the plan runs. An
/// exchange no kernel takes over gets [`Fusion::default`].
fn all_fusions(pipe: &Pipeline, element_bytes: usize, windows: bool) -> Result<Vec<Fusion>> {
    // Lowering maps every row of rank 0's block: beyond this size that would cost the
    // planner memory in proportion to the data (before the plan's memory check can refuse
    // it), so such problems are costed unfused.
    const MOST_ELEMENTS: usize = 1 << 26;
    let elements = pipe
        .layouts
        .iter()
        .map(|l| l.local_len(0))
        .max()
        .unwrap_or(0);
    if elements > MOST_ELEMENTS {
        return Ok(vec![
            Fusion::default();
            pipe.forward.len() + pipe.backward.len()
        ]);
    }
    let mut lowered = crate::lower::exchange_fusions(pipe, element_bytes, windows)?.into_iter();
    Ok(pipe
        .forward
        .iter()
        .chain(&pipe.backward)
        .map(|stage| match stage {
            Stage::Exchange { .. } => match lowered.next() {
                Some(f) if f.pack || f.unpack => Fusion {
                    unpack: f.unpack,
                    pack: f.pack,
                    pieces: f.pieces,
                    window: f.shared,
                },
                _ => Fusion::default(),
            },
            _ => Fusion::default(),
        })
        .collect())
}

/// [`all_fusions`] of the stages `stages` (`pipe.forward` or `pipe.backward`).
#[cfg(test)]
fn fusions(stages: &[Stage], pipe: &Pipeline, element_bytes: usize) -> Result<Vec<Fusion>> {
    let all = all_fusions(pipe, element_bytes, false)?;
    let n = pipe.forward.len();
    Ok(if stages == pipe.forward.as_slice() {
        all[..n].to_vec()
    } else {
        all[n..].to_vec()
    })
}

/// Evaluates every candidate of [`candidates`] (see [`evaluate_among`]).
pub fn evaluate(problem: &Problem, profile: &MachineProfile) -> Result<Vec<Candidate>> {
    evaluate_among(problem, profile, &Candidates::All)
}

/// Evaluates the candidates `which` selects; the chosen one comes first, the others follow
/// by predicted time. The choice is the fastest candidate without idle ranks (the fastest of
/// all if every one has idle ranks); ties (within 1e-9 relative) go to the lower grid rank,
/// then to the lexicographically larger dimensions, so the answer is a pure function of the
/// inputs. Refuses more than [`MAX_RANKS`] ranks or [`MAX_CANDIDATES`] candidates before
/// enumerating anything.
pub fn evaluate_among(
    problem: &Problem,
    profile: &MachineProfile,
    which: &Candidates,
) -> Result<Vec<Candidate>> {
    let all: Vec<usize> = (0..problem.shape.len()).collect();
    evaluate_partial(problem, &all, profile, which)
}

/// [`evaluate_among`] for a partial transform of the axes `axes` (see [`predict_partial`]):
/// the grids that keep the untransformed axes distributed need fewer exchanges, or none, and
/// the choice weighs that.
pub fn evaluate_partial(
    problem: &Problem,
    axes: &[usize],
    profile: &MachineProfile,
    which: &Candidates,
) -> Result<Vec<Candidate>> {
    let d = problem.shape.len();
    if d < 2 {
        return Err(FftError::TooFewDimensions {
            shape: problem.shape.clone(),
        });
    }
    redist::layout::check_shape(&problem.shape)?;
    if problem.ranks == 0 {
        return Err(RedistError::BadGridDims { dims: vec![0] }.into());
    }
    profile.validate()?;
    check_size(&problem.shape, problem.ranks, which)?;
    let grids: Vec<GridShape> = match which {
        Candidates::All => candidates(&problem.shape, problem.ranks),
        Candidates::Rank(r) => {
            if *r == 0 || *r >= d {
                return Err(RedistError::GridRankTooLarge {
                    grid_rank: *r,
                    array_rank: d,
                }
                .into());
            }
            factorizations(problem.ranks, *r)
                .into_iter()
                .map(GridShape::new)
                .collect::<std::result::Result<_, _>>()?
        }
        Candidates::Grid(dims) => {
            vec![resolve_grid(
                &problem.shape,
                problem.ranks,
                &GridChoice::Dims(dims.clone()),
                profile,
            )?]
        }
    };
    let mut out = Vec::with_capacity(grids.len());
    let transformed = transformed_axes(problem, axes)?;
    let mut memo = FusionMemo::default();
    for grid in grids {
        let prediction = predict_with(problem, &grid, profile, &transformed, &mut memo)?;
        let excluded = (prediction.idle_ranks > 0).then(|| {
            format!(
                "{} rank(s) own nothing in some layout (a grid dimension exceeds an axis it splits)",
                prediction.idle_ranks
            )
        });
        out.push(Candidate {
            prediction,
            chosen: false,
            excluded,
        });
    }
    let all_excluded = out.iter().all(|c| c.excluded.is_some());
    out.sort_by(|x, y| {
        let (px, py) = (&x.prediction, &y.prediction);
        let ex = x.excluded.is_some() && !all_excluded;
        let ey = y.excluded.is_some() && !all_excluded;
        ex.cmp(&ey)
            .then(px.predicted_s.total_cmp(&py.predicted_s))
            .then(px.grid_rank.cmp(&py.grid_rank))
            .then(py.grid.cmp(&px.grid))
    });
    // Near-ties (within rounding, 1e-9 relative) go to the lower grid rank, then to the
    // lexicographically larger dimensions, whatever the rounding of the sums did.
    if let Some(first) = out.first() {
        let limit = first.prediction.predicted_s * (1.0 + 1e-9);
        let first_excluded = first.excluded.is_some();
        let best = (0..out.len())
            .filter(|&i| {
                out[i].excluded.is_some() == first_excluded
                    && out[i].prediction.predicted_s <= limit
            })
            .min_by(|&i, &j| {
                let (pi, pj) = (&out[i].prediction, &out[j].prediction);
                pi.grid_rank.cmp(&pj.grid_rank).then(pj.grid.cmp(&pi.grid))
            })
            .unwrap_or(0);
        let chosen = out.remove(best);
        out.insert(0, chosen);
    }
    if let Some(first) = out.first_mut() {
        first.chosen = true;
        if all_excluded {
            first.excluded = None;
        }
    }
    Ok(out)
}

/// The model's grid for `problem` (the first of [`evaluate`]).
pub fn choose(problem: &Problem, profile: &MachineProfile) -> Result<GridShape> {
    let best = evaluate(problem, profile)?;
    Ok(GridShape::new(best[0].prediction.grid.clone())?)
}

/// One or two sentences on why the first candidate of `evaluated` was chosen: how it compares
/// with the best of every other grid rank and which term makes the difference.
pub fn explain(evaluated: &[Candidate]) -> String {
    let Some(best) = evaluated.first() else {
        return "no candidate".into();
    };
    let b = &best.prediction;
    let name = |p: &Prediction| {
        p.grid
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("x")
    };
    let dominant = |p: &Prediction| {
        let terms = [
            ("latency", p.latency_s),
            ("bandwidth", p.bandwidth_s),
            ("fft", p.fft_s),
            ("memory", p.memory_s),
        ];
        terms
            .iter()
            .copied()
            .fold(("latency", f64::MIN), |m, t| if t.1 > m.1 { t } else { m })
            .0
    };
    let mut s = format!(
        "chose {} (r = {}): predicted {:.3e} s per forward+backward pair, dominated by {}",
        name(b),
        b.grid_rank,
        b.predicted_s,
        dominant(b)
    );
    if evaluated.len() == 1 {
        s.push_str("; it is the only candidate.");
        return s;
    }
    let mut ranks: Vec<usize> = evaluated.iter().map(|c| c.prediction.grid_rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    for r in ranks {
        let Some(other) = evaluated
            .iter()
            .skip(1)
            .find(|c| c.prediction.grid_rank == r)
        else {
            continue;
        };
        let o = &other.prediction;
        let diffs = [
            ("latency", o.latency_s - b.latency_s),
            ("bandwidth", o.bandwidth_s - b.bandwidth_s),
            ("fft", o.fft_s - b.fft_s),
            ("memory", o.memory_s - b.memory_s),
        ];
        let (term, delta) =
            diffs
                .iter()
                .copied()
                .fold(("latency", f64::MIN), |m, t| if t.1 > m.1 { t } else { m });
        s.push_str(&format!(
            "; best r = {r} alternative {} is {:.2}x slower",
            name(o),
            o.predicted_s / b.predicted_s.max(f64::MIN_POSITIVE)
        ));
        if delta > 0.0 {
            s.push_str(&format!(" (+{delta:.2e} s {term})"));
        }
        if let Some(why) = &other.excluded {
            s.push_str(&format!(", excluded: {why}"));
        }
    }
    s.push('.');
    s
}

/// Turns a [`GridChoice`] into grid dimensions for `ranks` processes and `shape`:
/// [`GridChoice::Auto`] asks the model ([`choose`], complex f64, natural output) with
/// `profile`; a grid rank takes the balanced dimensions `MPI_Dims_create` would; explicit
/// dimensions are checked against `ranks` and `shape`. A pure function of its arguments, so
/// every rank that calls it with the same ones gets the same grid.
///
/// ```
/// use fft_core::{model::{resolve_grid, MachineProfile}, GridChoice};
/// let m = MachineProfile::default();
/// assert_eq!(resolve_grid(&[8, 8, 8], 6, &GridChoice::Rank(2), &m).unwrap().dims(), &[3, 2]);
/// assert!(resolve_grid(&[8, 8, 8], 6, &GridChoice::Dims(vec![4, 2]), &m).is_err());
/// assert!(resolve_grid(&[8, 8], 4, &GridChoice::Rank(2), &m).is_err());
/// assert_eq!(resolve_grid(&[4, 64, 4], 8, &GridChoice::Auto, &m).unwrap().ranks(), 8);
/// ```
pub fn resolve_grid(
    shape: &[usize],
    ranks: usize,
    choice: &GridChoice,
    profile: &MachineProfile,
) -> Result<GridShape> {
    let d = shape.len();
    if d < 2 {
        return Err(FftError::TooFewDimensions {
            shape: shape.to_vec(),
        });
    }
    let grid = match choice {
        GridChoice::Auto => choose(&Problem::new(shape, ranks), profile)?,
        GridChoice::Rank(r) => {
            if *r >= d {
                return Err(RedistError::GridRankTooLarge {
                    grid_rank: *r,
                    array_rank: d,
                }
                .into());
            }
            GridShape::balanced(ranks, *r)?
        }
        GridChoice::Dims(dims) => {
            let grid = GridShape::new(dims.clone())?;
            if grid.ranks() != ranks {
                return Err(RedistError::GridSizeMismatch {
                    dims: dims.clone(),
                    product: grid.ranks(),
                    ranks,
                }
                .into());
            }
            if grid.rank() >= d {
                return Err(RedistError::GridRankTooLarge {
                    grid_rank: grid.rank(),
                    array_rank: d,
                }
                .into());
            }
            grid
        }
    };
    Ok(grid)
}

#[cfg(test)]
mod tests;
