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
mod profile;

pub use candidates::{
    candidates, check_size, factorization_count, factorizations, Candidates, MAX_CANDIDATES,
    MAX_RANKS,
};
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
        }
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
}

/// The same pipeline on a grid whose dimensions are cut to what their axes can use: a grid
/// dimension larger than every axis it splits (in any layout) is replaced by that largest
/// axis (at least 2), because its coordinates from there on own nothing. Rank 0's blocks and
/// boxes, the stage list and each exchange's run lengths stay the same, so [`fusions`] gives
/// the same answer for it while looking at O(N) peers instead of O(P).
fn fusion_pipeline(pipe: &Pipeline, problem: &Problem) -> Result<Option<Pipeline>> {
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
    let cut = problem.pipeline(GridShape::new(dims)?)?;
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
    predict_with(problem, grid, profile, &mut FusionMemo::default())
}

/// The fusions of each (cut) pipeline already lowered: the candidates of a huge rank count
/// cut to a few distinct grids.
#[derive(Default)]
struct FusionMemo {
    lowered: std::collections::HashMap<Vec<usize>, Vec<Fusion>>,
}

impl FusionMemo {
    /// [`all_fusions`] of `pipe`, lowered once per grid (the problem is the same).
    fn fusions(&mut self, pipe: &Pipeline, element_bytes: usize) -> Result<Vec<Fusion>> {
        let dims = pipe.layouts[0].grid().dims();
        if let Some(f) = self.lowered.get(dims) {
            return Ok(f.clone());
        }
        let f = all_fusions(pipe, element_bytes)?;
        self.lowered.insert(dims.to_vec(), f.clone());
        Ok(f)
    }
}

/// [`predict`] with the fusions of earlier candidates of the same problem.
fn predict_with(
    problem: &Problem,
    grid: &GridShape,
    profile: &MachineProfile,
    memo: &mut FusionMemo,
) -> Result<Prediction> {
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
    let pipe = problem.pipeline(grid.clone())?;
    let cpu = Cpu::new(profile, problem.ranks);
    let rates = CopyRates::new(profile);
    let eb = problem.element_bytes as f64;
    let ranks = problem.ranks as f64;
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
        messages: 0,
        bytes: 0,
        idle_ranks: 0,
    };
    for layout in &pipe.layouts {
        let idle = (0..grid.dims().len())
            .map(|j| {
                // Parts of grid dimension j that own nothing of the axis it splits, times the
                // ranks sharing each such coordinate.
                let axis = layout.decomposed()[j];
                let empty = grid.dims()[j].saturating_sub(layout.global_shape()[axis]);
                empty * (problem.ranks / grid.dims()[j])
            })
            .fold(0usize, |acc, x| acc.max(x));
        pred.idle_ranks = pred.idle_ranks.max(idle);
    }
    let cut = fusion_pipeline(&pipe, problem)?;
    let fusion_pipe = cut.as_ref().unwrap_or(&pipe);
    let fused = memo.fusions(fusion_pipe, problem.element_bytes)?;
    // Forward and backward pass the same exchanges (the backward ones mirrored): each distinct
    // (from, to, fusion) is costed once.
    let mut costed: Vec<((usize, usize, Fusion), ExchangeCost)> = Vec::new();
    for (stage, &fusion) in pipe.forward.iter().chain(&pipe.backward).zip(&fused) {
        match *stage {
            Stage::Fft { layout, axis }
            | Stage::Resize {
                from: layout, axis, ..
            } => {
                // A real FFT (or its inverse) of n points costs about what a complex one of
                // n/2 does: half the complex rate per real element, on the real side.
                let (layout, real) = match *stage {
                    Stage::Resize { to, .. } if pipe.real[to] => (to, 0.5),
                    _ if pipe.real[layout] => (layout, 0.5),
                    _ => (layout, 1.0),
                };
                let l = &pipe.layouts[layout];
                // The most loaded rank's block (rank 0's, under the balanced split), and the
                // mean one (the blocks of all ranks make up the global array).
                let most = l.local_len(0) as f64;
                let mean = l.global_shape().iter().map(|&x| x as f64).product::<f64>() / ranks;
                let len = problem.shape[axis];
                let log = if len > 1 { (len as f64).log2() } else { 0.0 };
                let per_element = real * log * profile.fft_s_per_element_log2;
                pred.fft_s += cpu.time(most * per_element, mean * per_element);
                if len > 1 && !crate::stages::is_contiguous(l, axis) {
                    // Strided sweep: lines gathered into a tile and scattered back, each tile
                    // row one run of up to `tile_lines` elements. The gather and scatter
                    // replace the FFT's own read and write of its lines (the FFT rate is
                    // measured on a block that streams from memory), so they cost only what
                    // their shorter runs add.
                    let position = l.memory_order().position_of(axis);
                    let row: usize = l.local_shape_in_memory(0)[position + 1..].iter().product();
                    let width = tile_lines(len, problem.element_bytes).min(row.max(1));
                    let runs = 1.0 / width as f64;
                    pred.memory_s += cpu.time(
                        rates.pattern(2.0 * most * eb, runs),
                        rates.pattern(2.0 * mean * eb, runs),
                    );
                }
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
            }
        }
    }
    pred.predicted_s = pred.latency_s + pred.bandwidth_s + pred.fft_s + pred.memory_s;
    Ok(pred)
}

/// For each stage of `pipe`'s forward then backward stages, which of its copies a fused
/// kernel does instead (only exchanges get any): the plan's own fusion decisions
/// ([`crate::lower`]), as rank 0 lowers them, so the model costs what the plan runs. An
/// exchange no kernel takes over gets [`Fusion::default`].
fn all_fusions(pipe: &Pipeline, element_bytes: usize) -> Result<Vec<Fusion>> {
    let mut lowered = crate::lower::exchange_fusions(pipe, element_bytes)?.into_iter();
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
    let all = all_fusions(pipe, element_bytes)?;
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
    let mut memo = FusionMemo::default();
    for grid in grids {
        let prediction = predict_with(problem, &grid, profile, &mut memo)?;
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
mod tests {
    use super::cost::common_run;
    use super::*;
    use crate::stages::pipeline;

    /// Powers of two, so the sums below are exact in binary floating point.
    const TS: f64 = 1.0 / (1u64 << 20) as f64;
    const TW: f64 = 1.0 / (1u64 << 30) as f64;

    fn seed_problem(n: usize, d: usize, ranks: usize, transposed_out: bool) -> Problem {
        Problem {
            shape: vec![n; d],
            ranks,
            element_bytes: 1, // tw per data item, as in the seed
            transposed_out,
            real_to_complex: false,
        }
    }

    /// Seed 000 (5.2) and (5.3), exact forms, for equal N, equal p and N mod p = 0.
    #[test]
    fn reproduces_seed_w1_and_w2_exactly() {
        let profile = MachineProfile::network_only(TS, TW);
        for (n, d, p, r) in [
            (64usize, 3usize, 4usize, 2usize),
            (32, 3, 2, 2),
            (16, 4, 2, 3),
            (16, 4, 4, 2),
            (12, 2, 3, 1),
        ] {
            let nd = (n as f64).powi(d as i32);
            let pf = p as f64;
            let w1 = r as f64 * (pf - 1.0) * (TS + TW * nd / pf.powi(r as i32 + 1));
            let big_p = p.pow(r as u32);
            let q = big_p as f64;
            let w2 = (q - 1.0) * (TS + TW * nd / (q * q));
            for (transposed, sweeps) in [(false, 4.0), (true, 2.0)] {
                let grid = GridShape::new(vec![p; r]).unwrap();
                let pr = predict(&seed_problem(n, d, big_p, transposed), &grid, &profile).unwrap();
                assert_eq!(pr.predicted_s, sweeps * w1, "W1 n={n} d={d} p={p} r={r}");
                assert_eq!(pr.latency_s, sweeps * r as f64 * (pf - 1.0) * TS);
                assert_eq!((pr.fft_s, pr.memory_s), (0.0, 0.0));
                let slab = GridShape::new(vec![big_p]).unwrap();
                if big_p <= n {
                    let pr =
                        predict(&seed_problem(n, d, big_p, transposed), &slab, &profile).unwrap();
                    assert_eq!(pr.predicted_s, sweeps * w2, "W2 n={n} d={d} P={big_p}");
                    assert_eq!(pr.exchanges, sweeps as usize);
                }
            }
        }
    }

    /// 5×3 on a slab of 2, by hand: L0 rows 3|2, L1 columns 2|1. Rank 0 sends 3·1 = 3 and
    /// receives 2·2 = 4 elements, rank 1 sends 2·2 = 4 and receives 3·1 = 3; one message each.
    /// Each of the 4 exchanges of a pair costs ts + 4·tw.
    #[test]
    fn uneven_slab_by_hand() {
        let profile = MachineProfile::network_only(1.0, 1.0);
        let problem = Problem {
            shape: vec![5, 3],
            ranks: 2,
            element_bytes: 1,
            transposed_out: false,
            real_to_complex: false,
        };
        let pr = predict(&problem, &GridShape::new(vec![2]).unwrap(), &profile).unwrap();
        assert_eq!(pr.latency_s, 4.0);
        assert_eq!(pr.bandwidth_s, 16.0);
        assert_eq!(pr.predicted_s, 20.0);
        assert_eq!((pr.messages, pr.bytes, pr.idle_ranks), (4, 16, 0));
        // Compute terms by hand: 16 bytes per element, 1 s per element·log2 n, 8 B/s copies.
        let mut profile = MachineProfile::network_only(0.0, 0.0);
        profile.fft_s_per_element_log2 = 1.0;
        profile.copy_bytes_per_s = 8.0;
        profile.stream_bytes_per_s = 8.0;
        let problem = Problem::new(&[4, 2], 1);
        let pr = predict(&problem, &GridShape::new(vec![1]).unwrap(), &profile).unwrap();
        // FFT: 2 axes × 2 directions × 8 elements × log2 n (1 for n = 2, 2 for n = 4).
        assert_eq!(pr.fft_s, 2.0 * 8.0 * (1.0 + 2.0));
        // One rank: one pencil, no exchange. Axis 1 is contiguous; the sweep along axis 0 is
        // strided, but with one copy rate for every run length its tile gather and scatter
        // cost nothing beyond the FFT's own pass.
        assert_eq!(pr.exchanges, 0);
        assert_eq!(pr.memory_s, 0.0);
        // Contiguous copies 4× faster than single elements (0.25 s/B vs 1 s/B): the tile rows
        // are runs of 2 elements (the row of axis 1), 0.75/2 s/B extra for gather and scatter
        // of 8 elements × 16 B in each direction.
        profile.copy_bytes_per_s = 1.0;
        profile.stream_bytes_per_s = 4.0;
        let pr = predict(&problem, &GridShape::new(vec![1]).unwrap(), &profile).unwrap();
        assert_eq!(pr.memory_s, 2.0 * 2.0 * 8.0 * 16.0 * (0.75 / 2.0));
    }

    /// Runs contiguous on both sides of a box copy.
    #[test]
    fn common_runs_by_hand() {
        // 2×3 box of a 2×6 row-major block into a compact row-major message: runs of 3.
        assert_eq!(common_run(&[2, 3], &[6, 1], &[3, 1]), 3);
        // The whole block: one run of 12.
        assert_eq!(common_run(&[2, 6], &[6, 1], &[6, 1]), 12);
        // Into column-major: a transpose, single elements.
        assert_eq!(common_run(&[2, 3], &[3, 1], &[1, 4]), 1);
        // Axes of extent 1 do not break a run; slab rows (memory order 1,0,2) keep axis 2.
        assert_eq!(common_run(&[1, 3, 5], &[100, 5, 1], &[7, 5, 1]), 15);
        assert_eq!(common_run(&[2, 3, 5], &[15, 5, 1], &[5, 10, 1]), 5);
    }

    /// Pack runs versus transposing unpacks, by hand. 4×6 on a slab of 2 (2-D: L1 splits
    /// axis 1 in memory order 1,0). Rank 0 owns rows 0..2 (L0) and columns 0..3 (L1).
    /// L0→L1: the message to rank 1 is rows 0..2 × columns 3..6 of a 2×6 row-major block,
    /// runs of 3; the unpack goes into column-major order, single elements. L1→L0: the
    /// message (column-major, rows 2..4 × columns 0..3 of a 4×3 column-major block) has runs
    /// of 2; the unpack transposes back. 6 elements of 16 B each. The plan fuses every FFT
    /// step with the exchange on its far side: the forward's FFTs write the messages and the
    /// own part (no pack, no own copy), the backward's read them (no unpack, no own copy).
    #[test]
    fn copies_are_charged_by_run_length() {
        let mut profile = MachineProfile::network_only(0.0, 0.0);
        profile.copy_bytes_per_s = 1.0; // 1 s/B for single elements
        profile.stream_bytes_per_s = 4.0; // 0.25 s/B for long runs
        let problem = Problem::new(&[4, 6], 2);
        let pipe = pipeline(&[4, 6], GridShape::new(vec![2]).unwrap(), false).unwrap();
        let (pack, unpack) = (
            Fusion {
                pack: true,
                unpack: false,
                pieces: 1,
            },
            Fusion {
                pack: false,
                unpack: true,
                pieces: 1,
            },
        );
        let none = Fusion::default();
        let forward = fusions(&pipe.forward, &pipe, 16).unwrap();
        assert_eq!(forward, vec![none, pack, none, pack]);
        let backward = fusions(&pipe.backward, &pipe, 16).unwrap();
        assert_eq!(backward, vec![unpack, none, unpack, none]);
        let pr = predict(&problem, &GridShape::new(vec![2]).unwrap(), &profile).unwrap();
        let bytes = 6.0 * 16.0;
        let run = |len: f64| bytes * (0.25 + 0.75 / len);
        // Forward: two transposing unpacks; backward: the packs, runs of 3 then of 2.
        let expected = 2.0 * bytes + run(3.0) + run(2.0);
        assert_eq!((pr.exchanges, pr.fft_s), (4, 0.0));
        assert!(
            (pr.memory_s - expected).abs() <= 1e-12 * expected,
            "{} vs {expected}",
            pr.memory_s
        );
        // Without a separate stream rate every copy is a single-element one.
        profile.stream_bytes_per_s = 1.0;
        let pr = predict(&problem, &GridShape::new(vec![2]).unwrap(), &profile).unwrap();
        assert_eq!(pr.memory_s, 4.0 * bytes);
    }

    /// Ranks sharing cores, by hand: 3×2 on a slab of 2, FFT 1 s per element·log2 n, tw
    /// 1 s/B, 1-byte elements. L0 rows 2|1 (axis 1, n = 2: 4 and 2 elements), L1 columns 1|1
    /// (axis 0, n = 3: 3 elements each). Each exchange: both ranks move 2 elements (the
    /// larger of send and receive).
    #[test]
    fn shared_cores_charge_the_mean_rank() {
        let mut profile = MachineProfile::network_only(0.0, 1.0);
        profile.fft_s_per_element_log2 = 1.0;
        profile.ranks_per_node = 2;
        let problem = Problem {
            shape: vec![3, 2],
            ranks: 2,
            element_bytes: 1,
            transposed_out: false,
            real_to_complex: false,
        };
        let grid = GridShape::new(vec![2]).unwrap();
        let log3 = 3f64.log2();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        // A core per rank: the most loaded rank sets the time (4 + 3·log2 3 per direction).
        profile.cores_per_node = 2;
        let pr = predict(&problem, &grid, &profile).unwrap();
        assert!(close(pr.fft_s, 2.0 * (4.0 + 3.0 * log3)), "{}", pr.fft_s);
        assert_eq!(pr.bandwidth_s, 4.0 * 2.0);
        // One core for both ranks: the mean rank's work twice (3 · 2 and 3·log2 3 · 2); the
        // most loaded rank's 4 alone would be less.
        profile.cores_per_node = 1;
        let pr = predict(&problem, &grid, &profile).unwrap();
        assert!(close(pr.fft_s, 2.0 * (6.0 + 6.0 * log3)), "{}", pr.fft_s);
        // Shared-memory transfers share the core too: 2 elements × 2 ranks per exchange.
        assert_eq!(pr.bandwidth_s, 4.0 * 4.0);
    }

    /// The exchange terms against `ExchangePlan::for_rank` for every rank: the most loaded
    /// rank's ts·messages, tw·bytes and copies (each term's own maximum), summed over the
    /// exchanges of a pair.
    #[test]
    fn exchange_costs_match_exchange_plans_for_every_rank() {
        let shapes: [&[usize]; 6] = [
            &[11, 7, 13],
            &[16, 21, 41],
            &[9, 7, 5, 12],
            &[3, 20, 6],
            &[12, 10],
            &[5, 3],
        ];
        let mut profile = MachineProfile::network_only(1.0, 0.01);
        profile.copy_bytes_per_s = 1000.0;
        profile.stream_bytes_per_s = 1000.0;
        for shape in shapes {
            for ranks in 1..=12 {
                for grid in candidates(shape, ranks) {
                    for transposed_out in [false, true] {
                        let problem = Problem {
                            shape: shape.to_vec(),
                            ranks,
                            element_bytes: 16,
                            transposed_out,
                            real_to_complex: false,
                        };
                        let pipe = pipeline(shape, grid.clone(), transposed_out).unwrap();
                        let mut expected = 0.0;
                        let fused: Vec<Fusion> = fusions(&pipe.forward, &pipe, 16)
                            .unwrap()
                            .into_iter()
                            .chain(fusions(&pipe.backward, &pipe, 16).unwrap())
                            .collect();
                        for (stage, fusion) in pipe.forward.iter().chain(&pipe.backward).zip(&fused)
                        {
                            let Stage::Exchange { from, to } = *stage else {
                                continue;
                            };
                            let plan =
                                ExchangePlan::new(&pipe.layouts[from], &pipe.layouts[to]).unwrap();
                            // Each term for its most loaded rank.
                            let worst = (0..ranks)
                                .map(|rank| {
                                    let part = plan.for_rank(rank);
                                    let others = || {
                                        part.peers
                                            .iter()
                                            .filter(move |p| p.peer != part.group_index)
                                    };
                                    let sm = others().filter(|p| !p.send_box.is_empty()).count();
                                    let rm = others().filter(|p| !p.recv_box.is_empty()).count();
                                    let own = part.own().send_box.len();
                                    let copied = if fusion.pack { 0 } else { part.send_len }
                                        + if fusion.unpack { 0 } else { part.recv_len }
                                        + if fusion.pack || fusion.unpack { 0 } else { own };
                                    [
                                        sm.max(rm) as f64 * 1.0,
                                        part.send_len.max(part.recv_len) as f64 * 16.0 * 0.01,
                                        copied as f64 * 16.0 / 1000.0,
                                    ]
                                })
                                .fold([0.0f64; 3], |m, t| {
                                    [m[0].max(t[0]), m[1].max(t[1]), m[2].max(t[2])]
                                });
                            expected += worst.iter().sum::<f64>();
                        }
                        let pr = predict(&problem, &grid, &profile).unwrap();
                        // One copy rate: strided sweeps add nothing to the memory term.
                        let got = pr.latency_s + pr.bandwidth_s + pr.memory_s;
                        assert!(
                            (got - expected).abs() <= 1e-9 * expected.max(1.0),
                            "{shape:?} grid {grid} transposed {transposed_out}: {got} vs {expected}"
                        );
                    }
                }
            }
        }
    }

    /// Node placement against brute force: for every member of rank 0's group in every
    /// exchange, its peers on its own node (rank / ranks_per_node) pay `ts_intra`/`tw_intra`,
    /// the others `ts_inter`/`tw_inter`; the model's latency and bandwidth are the members'
    /// maxima (each side and term for its own most loaded member). Local work is free and the
    /// node's cores unbounded, so nothing else enters.
    #[test]
    fn node_placement_matches_brute_force() {
        let (ts_intra, ts_inter, tw_intra, tw_inter) = (1.0, 8.0, 0.01, 0.5);
        let mut profile = MachineProfile::network_only(ts_intra, tw_intra);
        profile.ts_inter_s = ts_inter;
        profile.tw_inter_s_per_byte = tw_inter;
        profile.cores_per_node = 1 << 30;
        for shape in [
            vec![11usize, 7, 13],
            vec![9, 7, 5, 12],
            vec![16, 21],
            vec![3, 20, 6],
        ] {
            for ranks in 1..=12 {
                for rpn in [1, 2, 3, 5, 8] {
                    profile.ranks_per_node = rpn;
                    for grid in candidates(&shape, ranks) {
                        let problem = Problem {
                            shape: shape.clone(),
                            ranks,
                            element_bytes: 1,
                            transposed_out: true,
                            real_to_complex: false,
                        };
                        let pipe = pipeline(&shape, grid.clone(), true).unwrap();
                        let fused: Vec<Fusion> = fusions(&pipe.forward, &pipe, 1)
                            .unwrap()
                            .into_iter()
                            .chain(fusions(&pipe.backward, &pipe, 1).unwrap())
                            .collect();
                        let (mut latency, mut bandwidth) = (0.0, 0.0);
                        for (stage, fusion) in pipe.forward.iter().chain(&pipe.backward).zip(&fused)
                        {
                            let Stage::Exchange { from, to } = *stage else {
                                continue;
                            };
                            let plan =
                                ExchangePlan::new(&pipe.layouts[from], &pipe.layouts[to]).unwrap();
                            let members = grid.group_members(0, plan.grid_dim());
                            let (mut lat, mut bw) = (0.0f64, 0.0f64);
                            for &member in &members {
                                let part = plan.for_rank(member);
                                let mut sides = [[0.0f64; 2]; 2]; // [send, recv] x [lat, bw]
                                for p in part.peers.iter().filter(|p| p.peer != part.group_index) {
                                    let near = p.peer_rank / rpn == member / rpn;
                                    let (ts, tw) = if near {
                                        (ts_intra, tw_intra)
                                    } else {
                                        (ts_inter, tw_inter)
                                    };
                                    for (side, len) in
                                        [p.send_box.len(), p.recv_box.len()].into_iter().enumerate()
                                    {
                                        if len > 0 {
                                            sides[side][0] += ts;
                                            sides[side][1] += tw * len as f64;
                                        }
                                    }
                                }
                                let pieces = fusion.pieces.max(1) as f64;
                                lat = lat.max(pieces * sides[0][0].max(sides[1][0]));
                                bw = bw.max(sides[0][1].max(sides[1][1]));
                            }
                            latency += lat;
                            bandwidth += bw;
                        }
                        let pr = predict(&problem, &grid, &profile).unwrap();
                        let what = format!("{shape:?} grid {grid} rpn {rpn}");
                        assert!(
                            (pr.latency_s - latency).abs() <= 1e-9 * latency.max(1.0),
                            "{what}: latency {} vs {latency}",
                            pr.latency_s
                        );
                        assert!(
                            (pr.bandwidth_s - bandwidth).abs() <= 1e-9 * bandwidth.max(1.0),
                            "{what}: bandwidth {} vs {bandwidth}",
                            pr.bandwidth_s
                        );
                    }
                }
            }
        }
    }

    /// The cluster terms by hand. 4×4 on a slab of 4 ranks, 2 per node, 1-byte elements:
    /// each exchange sends one element to each of 3 peers, one on the rank's node and two
    /// beyond; a pair has 4 exchanges.
    #[test]
    fn cluster_terms_by_hand() {
        let problem = |shape: &[usize], ranks| Problem {
            shape: shape.to_vec(),
            ranks,
            element_bytes: 1,
            transposed_out: false,
            real_to_complex: false,
        };
        let slab = |p| GridShape::new(vec![p]).unwrap();
        let mut m = MachineProfile::network_only(0.0, 0.0);
        m.ranks_per_node = 2;
        m.tw_inter_s_per_byte = 1.0;
        // Node injection: the node's 2 ranks send 2 bytes each beyond it, 4 bytes through one
        // interface of 1 s/B, slower than each rank's own 2 bytes at 1 s/B.
        m.tw_node_s_per_byte = 1.0;
        let pr = predict(&problem(&[4, 4], 4), &slab(4), &m).unwrap();
        assert_eq!(
            (pr.bandwidth_s, pr.inter_node_s, pr.intra_node_s),
            (16.0, 16.0, 0.0)
        );
        // A faster interface (0.25 s/B: 1 s) leaves each rank's own link (2 s) the limit.
        m.tw_node_s_per_byte = 0.25;
        let pr = predict(&problem(&[4, 4], 4), &slab(4), &m).unwrap();
        assert_eq!(pr.bandwidth_s, 8.0);
        // Intra- and inter-node parts, 1 s and 2 s per exchange: added, or overlapped.
        m.tw_node_s_per_byte = 0.0;
        m.tw_intra_s_per_byte = 1.0;
        for (overlap, per_exchange) in [(0.0, 3.0), (0.5, 2.5), (1.0, 2.0)] {
            m.intra_inter_overlap = overlap;
            let pr = predict(&problem(&[4, 4], 4), &slab(4), &m).unwrap();
            assert_eq!(pr.bandwidth_s, 4.0 * per_exchange, "overlap {overlap}");
            assert_eq!(pr.intra_node_s + pr.inter_node_s, pr.bandwidth_s);
            assert_eq!(pr.intra_node_s * 2.0, pr.inter_node_s);
        }
        // Uplinks: 8 nodes of one rank, 2 nodes per switch, uplinks 3 times thinner. Each node
        // sends 7 bytes, 6/7 of them beyond its switch: 7 · 3 · 6/7 = 18 s per exchange.
        let mut m = MachineProfile::network_only(0.0, 0.0);
        m.ranks_per_node = 1;
        m.tw_node_s_per_byte = 1.0;
        m.switch_nodes = 2;
        m.uplink_taper = 3.0;
        let pr = predict(&problem(&[8, 8], 8), &slab(8), &m).unwrap();
        assert!((pr.bandwidth_s - 72.0).abs() < 1e-12, "{}", pr.bandwidth_s);
        // A non-blocking network (taper 1) or a switch holding every node: 7 s.
        m.uplink_taper = 1.0;
        let pr = predict(&problem(&[8, 8], 8), &slab(8), &m).unwrap();
        assert_eq!(pr.bandwidth_s, 28.0);
        m.uplink_taper = 3.0;
        m.switch_nodes = 8;
        let pr = predict(&problem(&[8, 8], 8), &slab(8), &m).unwrap();
        assert_eq!(pr.bandwidth_s, 28.0);
    }

    /// A real-to-complex transform exchanges the complex half spectrum: 6×10 real moves what
    /// a complex 6×6 does, and its FFT along the last axis costs half a complex one.
    #[test]
    fn real_to_complex_moves_the_half_spectrum() {
        let m = MachineProfile::network_only(1.0, 1.0);
        let grid = GridShape::new(vec![3]).unwrap();
        let r2c = predict(&Problem::new(&[6, 10], 3).real_to_complex(), &grid, &m).unwrap();
        let c2c = predict(&Problem::new(&[6, 6], 3), &grid, &m).unwrap();
        assert_eq!(
            (r2c.latency_s, r2c.bandwidth_s),
            (c2c.latency_s, c2c.bandwidth_s)
        );
        assert_eq!(r2c.bytes, c2c.bytes);
        let mut m = MachineProfile::network_only(0.0, 0.0);
        m.fft_s_per_element_log2 = 1.0;
        let one = GridShape::new(vec![1]).unwrap();
        let pr = predict(&Problem::new(&[4, 8], 1).real_to_complex(), &one, &m).unwrap();
        // Per direction: the real FFT of 4 lines of 8 (half of 32 · 3) and the complex FFT of
        // 5 columns of 4 (20 · 2).
        assert_eq!(pr.fft_s, 2.0 * (0.5 * 32.0 * 3.0 + 20.0 * 2.0));
    }

    /// The fused steps the model costs, as the plan lowers them: a slab of d ≥ 3 fuses its
    /// axis-0 sweep with the exchanges on both sides; with transposed output the FFTs of the
    /// other axes write the exchange's messages instead; pencils, whose FFTs after L0 are all
    /// contiguous, fuse nothing.
    #[test]
    fn fusions_follow_the_slab_layout() {
        let slab = pipeline(&[8, 6, 5], GridShape::new(vec![2]).unwrap(), false).unwrap();
        let f = fusions(&slab.forward, &slab, 16).unwrap();
        // Fft(2), Fft(1), Exchange 0→1, Fft(0), Exchange 1→0.
        assert_eq!(slab.forward.len(), 5);
        let (unpack, pack) = (
            Fusion {
                unpack: true,
                pack: false,
                pieces: 1,
            },
            Fusion {
                unpack: false,
                pack: true,
                pieces: 1,
            },
        );
        assert_eq!(
            f,
            vec![
                Fusion::default(),
                Fusion::default(),
                unpack,
                Fusion::default(),
                pack
            ]
        );
        // Transposed output: the exchange goes to the FFTs of axes 2 and 1 before it, whose
        // whole planes write the messages, not to the last sweep.
        let t = pipeline(&[8, 6, 5], GridShape::new(vec![2]).unwrap(), true).unwrap();
        assert_eq!(fusions(&t.forward, &t, 16).unwrap()[2], pack);
        let pencil = pipeline(&[8, 6, 5], GridShape::new(vec![2, 2]).unwrap(), false).unwrap();
        assert!(fusions(&pencil.forward, &pencil, 16)
            .unwrap()
            .iter()
            .all(|f| *f == Fusion::default()));
    }

    /// Fused slab exchanges move 1 MiB of planes at a time, one collective call per piece.
    /// 64³ on a slab of 2: L1 gives each rank 32 planes of axis 1, a plane is 64·64·16 B =
    /// 64 KiB, so 16 planes per piece and 2 pieces; with 7 ranks, 10 planes of 64 KiB: 1
    /// piece. 256×64×64 on 2 ranks: 32 planes of 256 KiB, 4 per piece, 8 pieces.
    #[test]
    fn fused_exchanges_move_in_pieces() {
        let slab = |shape: &[usize], ranks: usize| {
            let p = pipeline(shape, GridShape::new(vec![ranks]).unwrap(), false).unwrap();
            fusions(&p.forward, &p, 16).unwrap()[2].pieces
        };
        assert_eq!(slab(&[64, 64, 64], 2), 2);
        assert_eq!(slab(&[64, 64, 64], 7), 1);
        assert_eq!(slab(&[256, 64, 64], 2), 8);
        // Latency: ts per message per piece. Natural output: all 4 exchanges are fused, one
        // message each way, 2 pieces.
        let profile = MachineProfile::network_only(1.0, 0.0);
        let pr = predict(
            &Problem::new(&[64, 64, 64], 2),
            &GridShape::new(vec![2]).unwrap(),
            &profile,
        )
        .unwrap();
        assert_eq!((pr.latency_s, pr.messages), (4.0 * 2.0, 4 * 2));
    }

    /// Every factorization of P into r < d dimensions, each once, nothing else.
    #[test]
    fn candidates_are_every_factorization_once() {
        for d in 2..=5 {
            for ranks in 1..=36 {
                let shape = vec![7; d];
                let cands = candidates(&shape, ranks);
                let expected: usize = (1..d).map(|r| factorizations(ranks, r).len()).sum();
                assert_eq!(cands.len(), expected);
                let mut seen = std::collections::HashSet::new();
                for g in &cands {
                    assert!(g.rank() < d && g.ranks() == ranks, "{g}");
                    assert!(seen.insert(g.dims().to_vec()), "{g} twice");
                }
                // Birkeland & Sørøvik's §4 projection: all P ranks on one grid dimension.
                assert!(seen.contains(&vec![ranks]));
            }
        }
    }

    /// The choice never has idle ranks when some candidate has none, always fits P and d, and
    /// is what `resolve_grid_with(Auto)` returns.
    #[test]
    fn nothing_impossible_is_chosen() {
        let profile = MachineProfile::default();
        for shape in [
            vec![3usize, 20, 6],
            vec![2, 2, 64],
            vec![5, 11],
            vec![9, 7, 5, 12],
            vec![64, 64, 64],
        ] {
            for ranks in 1..=40 {
                let problem = Problem::new(&shape, ranks);
                let all = evaluate(&problem, &profile).unwrap();
                assert_eq!(all.iter().filter(|c| c.chosen).count(), 1);
                assert!(all[0].chosen);
                let any_clean = all.iter().any(|c| c.prediction.idle_ranks == 0);
                if any_clean {
                    assert_eq!(all[0].prediction.idle_ranks, 0, "{shape:?} P={ranks}");
                    assert!(all[0].excluded.is_none());
                }
                let grid = resolve_grid(&shape, ranks, &GridChoice::Auto, &profile).unwrap();
                assert_eq!(grid.dims(), all[0].prediction.grid.as_slice());
                assert!(grid.rank() < shape.len() && grid.ranks() == ranks);
                // Listed in order: the chosen one, then by predicted time within each class.
                for w in all[1..].windows(2) {
                    if w[0].excluded.is_some() == w[1].excluded.is_some() {
                        assert!(w[0].prediction.predicted_s <= w[1].prediction.predicted_s);
                    }
                }
            }
        }
    }

    /// Same inputs, same answer, in any order of evaluation and from a copied profile.
    #[test]
    fn choice_is_a_pure_function() {
        let profile = MachineProfile::default();
        let again = profile.clone();
        for ranks in [1, 6, 7, 8, 64, 1000, 4096] {
            let problem = Problem::new(&[256, 256, 256], ranks);
            let a = evaluate(&problem, &profile).unwrap();
            let _ = evaluate(&Problem::new(&[9, 7, 5, 12], 6), &profile).unwrap();
            let b = evaluate(&problem.clone(), &again).unwrap();
            assert_eq!(a, b);
            assert_eq!(
                choose(&problem, &profile).unwrap().dims(),
                a[0].prediction.grid.as_slice()
            );
        }
    }

    /// Birkeland & Sørøvik's qualitative result: a 1-D decomposition for few processes, a pencil beyond.
    /// The 1-D decomposition may be the slab or a grid whose other dimensions are 1 (`4x1`):
    /// they move the same bytes, and with free local work the slab's fused exchanges, which
    /// move 1 MiB pieces (64 of them for 256³ on 4 ranks), pay more latency.
    #[test]
    fn slab_for_few_ranks_pencil_for_many() {
        let profile = MachineProfile::network_only(1e-5, 1e-9);
        let pick = |ranks| choose(&Problem::new(&[256, 256, 256], ranks), &profile).unwrap();
        let split = |g: &GridShape| g.dims().iter().filter(|&&p| p > 1).count();
        assert_eq!(split(&pick(4)), 1);
        assert_eq!(split(&pick(4096)), 2);
        // With the default machine (local work included) the slab itself.
        let pick = |ranks| {
            choose(
                &Problem::new(&[256, 256, 256], ranks),
                &MachineProfile::default(),
            )
            .unwrap()
        };
        assert_eq!(pick(4).rank(), 1);
    }

    /// The exchanges a fused sweep takes over, on the grid cut to what its axes can use, are
    /// those of the real grid: the cut is what lets `predict` skip O(P) peers.
    #[test]
    fn fusions_of_the_cut_grid_are_the_real_ones() {
        let mut cut_some = 0;
        for shape in [
            vec![5usize, 6, 7],
            vec![3, 9, 4],
            vec![2, 3, 4, 5],
            vec![7, 2],
        ] {
            for ranks in 1..=40 {
                for grid in candidates(&shape, ranks) {
                    for transposed_out in [false, true] {
                        let problem = Problem {
                            shape: shape.clone(),
                            ranks,
                            element_bytes: 16,
                            transposed_out,
                            real_to_complex: false,
                        };
                        let pipe = pipeline(&shape, grid.clone(), transposed_out).unwrap();
                        let Some(cut) = fusion_pipeline(&pipe, &problem).unwrap() else {
                            continue;
                        };
                        cut_some += 1;
                        for (stages, cut_stages) in [
                            (&pipe.forward, &cut.forward),
                            (&pipe.backward, &cut.backward),
                        ] {
                            assert_eq!(
                                fusions(stages, &pipe, 16).unwrap(),
                                fusions(cut_stages, &cut, 16).unwrap(),
                                "{shape:?} grid {grid} transposed {transposed_out}"
                            );
                        }
                    }
                }
            }
        }
        assert!(cut_some > 100, "{cut_some}");
    }

    /// Rank counts up to 2^40 answer without walking the ranks: a prime (three candidates),
    /// a power of two and a count with 6720 divisors. Every candidate with a grid dimension
    /// beyond 1024 leaves ranks idle, so the choice is the fastest of them all.
    #[test]
    fn huge_rank_counts_answer() {
        let profile = MachineProfile::default();
        for (ranks, count) in [
            (1_000_000_007usize, 3),
            (1 << 40, 42),
            (1_000_000_000_000, 1 + 13 * 13),
            (963_761_198_400, 6721),
        ] {
            let problem = Problem::new(&[1024, 1024, 1024], ranks);
            let all = evaluate(&problem, &profile).unwrap();
            assert_eq!(all.len(), count, "P = {ranks}");
            assert!(all.iter().all(|c| c.prediction.idle_ranks > 0));
            assert!(all[0].chosen && all[0].prediction.predicted_s > 0.0);
            assert_eq!(all[0].prediction.grid.iter().product::<usize>(), ranks);
        }
        let too_many = Problem::new(&[8, 8, 8], MAX_RANKS + 1);
        assert!(matches!(
            evaluate(&too_many, &profile),
            Err(FftError::TooManyRanks { .. })
        ));
        assert!(matches!(
            predict(
                &too_many,
                &GridShape::new(vec![MAX_RANKS + 1]).unwrap(),
                &profile
            ),
            Err(FftError::TooManyRanks { .. })
        ));
    }

    /// A grid rank or a single grid restricts the candidates.
    #[test]
    fn candidates_can_be_restricted() {
        let profile = MachineProfile::default();
        let problem = Problem::new(&[64, 64, 64], 12);
        let pencils = evaluate_among(&problem, &profile, &Candidates::Rank(2)).unwrap();
        assert_eq!(pencils.len(), 6);
        assert!(pencils.iter().all(|c| c.prediction.grid_rank == 2));
        let one = evaluate_among(&problem, &profile, &Candidates::Grid(vec![4, 3])).unwrap();
        assert_eq!((one.len(), one[0].chosen), (1, true));
        assert!(evaluate_among(&problem, &profile, &Candidates::Grid(vec![4, 4])).is_err());
        assert!(evaluate_among(&problem, &profile, &Candidates::Rank(3)).is_err());
    }
}
