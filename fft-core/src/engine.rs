//! The one execution engine behind [`crate::FftPlan`], [`crate::RealFftPlan`] and
//! [`crate::R2rPlan`]: a pipeline of 1-D transform steps and exchanges made ready to run,
//! generic over the precision `T` only. Data moves as scalars (`&[T]`): a complex element is two
//! scalars, so real and complex layouts share the same work buffers (`Complex<T>` storage,
//! viewed through `bytemuck`).

use crate::error::{FftError, Result};
use crate::local::{
    LineOp, LineStep, LocalFft, PlaneEnd, PlaneKernel, PlaneSteps, Planes, R2r, Rows, Sweep,
};
use crate::options::{AxisKind, FftOptions};
use crate::real::Real;
use crate::rows::RunMap;
use crate::shared::{BlockWindow, SharedBlock};
use crate::stages::{pipeline_for, Domain, Pipeline, Stage, TransformShape};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::exchange::Messages;
use redist::plan::RankExchange;
use redist::runs::{window_runs, Run};
use redist::window::GroupWindow;
use redist::{Exchange, ExchangePlan, Layout, MemoryOrder, ProcessGrid, StageTimes};
use rustfft::Fft;
use std::ops::Range;
use std::sync::{Arc, Weak};
use std::time::Instant;

/// What a plan transforms, in global terms, checked: shapes, per-axis kinds and scaling.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    pub shape: TransformShape,
    pub axes: Vec<AxisKind>,
    /// Spectral resolution per axis (`N`: the real length along the r2c axis).
    pub resolution: Vec<usize>,
    pub forward_scale: f64,
    pub backward_scale: f64,
}

impl Spec {
    /// Checks `options` against `shape` (the spectral resolution; the real length along the
    /// last axis of a real-to-complex transform) from global arguments only.
    pub(crate) fn new(shape: &[usize], options: &FftOptions, domain: Domain) -> Result<Self> {
        let d = shape.len();
        if d < 2 {
            return Err(FftError::TooFewDimensions {
                shape: shape.to_vec(),
            });
        }
        redist::layout::check_shape(shape)?;
        let bad = |reason: String| FftError::BadOptions {
            shape: shape.to_vec(),
            reason,
        };
        if options.batch == 0 {
            return Err(bad("batch must be at least 1, got 0".into()));
        }
        let axes = match (&options.axes, domain) {
            (Some(a), _) if a.len() != d => {
                return Err(bad(format!(
                    "axes has {} entries for {d} axes: {a:?}",
                    a.len()
                )))
            }
            (Some(a), _) => a.clone(),
            (None, Domain::Real) => {
                return Err(bad(
                    "a real-to-real plan needs a real-to-real kind for every axis (axes)".into(),
                ))
            }
            (None, _) => vec![AxisKind::Fft; d],
        };
        match domain {
            Domain::RealToComplex if axes[d - 1] != AxisKind::Fft => {
                return Err(bad(format!(
                    "the last axis of a real-to-complex plan must be an FFT axis, got {:?}",
                    axes[d - 1]
                )))
            }
            Domain::Real if axes.contains(&AxisKind::Fft) => {
                return Err(bad(format!(
                    "every axis of a real-to-real plan must be real-to-real, got {axes:?}"
                )))
            }
            _ => {}
        }
        for (axis, (&kind, &n)) in axes.iter().zip(shape).enumerate() {
            if kind == AxisKind::R2r(crate::R2rKind::Dct1) && n < 2 {
                return Err(bad(format!(
                    "DCT-I needs at least 2 points, axis {axis} has {n}"
                )));
            }
        }
        let factors = options.padding.clone().unwrap_or_else(|| vec![1.0; d]);
        if factors.len() != d {
            return Err(bad(format!(
                "padding has {} factors for {d} axes: {factors:?}",
                factors.len()
            )));
        }
        let mut physical = shape.to_vec();
        for (axis, &f) in factors.iter().enumerate() {
            if !f.is_finite() || f < 1.0 {
                return Err(bad(format!(
                    "padding factors must be finite and at least 1, axis {axis} has {f}"
                )));
            }
            let m = (shape[axis] as f64 * f).floor() as usize;
            if m != shape[axis] && axes[axis] != AxisKind::Fft {
                return Err(bad(format!(
                    "padding is supported on FFT axes only, axis {axis} is {:?} with factor {f}",
                    axes[axis]
                )));
            }
            physical[axis] = m;
        }
        redist::layout::check_shape(&physical)?;
        let mut spectral = shape.to_vec();
        if domain == Domain::RealToComplex {
            spectral[d - 1] = shape[d - 1] / 2 + 1;
        }
        let logical: f64 = axes
            .iter()
            .zip(shape)
            .map(|(k, &n)| k.logical_size(n) as f64)
            .product();
        let (mut forward_scale, backward_scale) = options.normalization.factors_f64(logical);
        for axis in 0..d {
            if physical[axis] != shape[axis] {
                forward_scale *= shape[axis] as f64 / physical[axis] as f64;
            }
        }
        Ok(Self {
            shape: TransformShape {
                physical,
                spectral,
                domain,
            },
            axes,
            resolution: shape.to_vec(),
            forward_scale,
            backward_scale,
        })
    }
}

/// A stage made ready to run.
enum Step<T: Real> {
    /// Complex 1-D FFTs along one or more local axes of the current block, in place.
    Fft(LocalFft<T>),
    /// Any other 1-D transform (real, real-to-real, padded), in or out of place.
    Line { step: LineStep<T>, in_place: bool },
    /// An exchange; `real`: the elements are scalars, else complex.
    Exchange { index: usize, real: bool },
    /// A strided complex FFT sweep fused with the exchange before it, after it, or both, or
    /// whole planes of FFTs (or r2c and FFTs) fused with the exchange after them (see
    /// [`Fused`]).
    Fused(Box<Fused<T>>),
    /// An r2c step and FFTs along other trailing axes (or FFTs and a c2r step), one sub-block
    /// at a time in cache; out of place.
    Planes(PlaneSteps<T>),
}

/// A strided sweep whose tiles read their rows straight from where exchange `before` leaves
/// them (the source block for the rank's own part, the receive buffer for the rest; run map
/// `gather`) and write them straight to where exchange `after` takes them (run map
/// `scatter`; the destination block for the own part, the send buffer for the rest). The
/// layout in between is never stored, and nothing is unpacked or packed in a pass of its own.
/// Complex data only, except that a [`Kernel::Planes`] reads the source block as it is (an
/// r2c kernel reads real planes).
///
/// The exchanges move in [`Piece`]s of a few planes of the sweep at a time (cut along the
/// slowest axis of the sweep's layout, which both exchanges scatter or gather): pack, move,
/// transform and move back one piece after another, so the message buffers hold one piece
/// (kept in cache between the copies) instead of a whole block. When the exchange after is
/// the exchange before reversed, the sweep runs in place: every row of the rank's own part
/// is read and written at the same place, and a piece's messages are packed before the rows
/// they came from are unpacked again, so no second block is needed.
struct Fused<T: Real> {
    before: Option<usize>,
    after: Option<usize>,
    kernel: Kernel<T>,
    /// Run maps over the whole block of the sweep; message offsets are into the buffers of
    /// the piece that moves the run.
    gather: Map,
    scatter: Map,
    pieces: Vec<Piece>,
    /// The sweep's planes as `groups` (batch fields) of `count` planes each.
    groups: usize,
    count: usize,
    /// The pieces cut the exchanges' boxes along `axis` into runs of `size` indices.
    axis: usize,
    size: usize,
    /// Source and destination may be one buffer.
    in_place: bool,
    /// The pieces' way through a shared-memory window, when the group is on one node.
    shared: Option<SharedPath>,
    /// Run maps straight into the peers' blocks, for calls whose blocks lie in the plan's
    /// shared-memory windows ([`SharedBlock`]); made when the first such block is allocated.
    direct: Option<Direct>,
}

/// A fused step's rows in the caller's blocks themselves, when every rank's blocks lie in one
/// shared-memory window per kind ([`window_runs`]): `gather` (exchange before) maps each row
/// of the sweep's block to where it lies in the peers' (and this rank's) source blocks,
/// `scatter` (exchange after) to where it goes in their destination blocks, as offsets from
/// region 0 of the window of `src` or `dst`, the buffers the step reads and writes. Every
/// rank reads and writes only the rows of its own block of the sweep's layout, so the step
/// needs one synchronization before (the peers' source rows are written) and one after (its
/// rows are in their destination blocks), and nothing is packed or unpacked.
struct Direct {
    gather: Map,
    scatter: Map,
    src: At,
    dst: At,
}

/// A run map ([`redist::runs`]), shared between the steps that use the same one (see
/// [`intern_maps`]); a grid of rows holds no list ([`RunMap::Grid`]).
type Map = RunMap;

/// Makes every step of `programs` that holds a run map equal to an earlier one share it: an
/// in-place pair's gather and scatter maps, and the forward's and backward's maps of the
/// same exchanges, are often the same rows at the same offsets (a slab's fused pair: one map
/// where there were six). Run maps have a row per row of a block, so this is most of a
/// slab plan's memory besides its buffers.
fn intern_maps<T: Real>(programs: [&mut Program<T>; 2]) {
    let mut seen: Vec<Map> = Vec::new();
    let mut intern = |map: &mut Map| {
        if map.is_empty() {
            return;
        }
        match seen.iter().find(|m| *m == map) {
            Some(m) => *map = m.clone(),
            None => seen.push(map.clone()),
        }
    };
    for program in programs {
        for step in &mut program.steps {
            if let Step::Fused(fused) = step {
                intern(&mut fused.gather);
                intern(&mut fused.scatter);
                if let Some(shared) = &mut fused.shared {
                    intern(&mut shared.gather);
                }
                if let Some(direct) = &mut fused.direct {
                    intern(&mut direct.gather);
                    intern(&mut direct.scatter);
                }
            }
        }
    }
}

/// Lets each in-place FFT step whose sweep across its sub-blocks' rows is a column FFT
/// ([`LocalFft::swappable_rows`]) take those rows digit-swapped from the fused step before it,
/// which writes them through its run map anyway: the map then names the swapped rows, and the
/// sweep runs in place with no staging block (one rank, transposed output: the backward's
/// planes after its axis-0 sweep; 1 MB of staging at 250×256×243). On one rank only, where
/// the fused step writes through no shared-memory window, only through its own map.
fn swap_rows_for_sweeps<T: Real>(steps: &mut [Step<T>], dests: &[At], threads: usize) {
    for i in 1..steps.len() {
        let source = if i == 1 { At::Input } else { dests[i - 2] };
        // In place after a fused step that reads another buffer.
        if dests[i] != dests[i - 1] || source == dests[i - 1] {
            continue;
        }
        let (head, tail) = steps.split_at_mut(i);
        let (Step::Fused(fused), Step::Fft(local)) = (&mut head[i - 1], &mut tail[0]) else {
            continue;
        };
        let Some((rows, inner, swap)) = local.swappable_rows(threads) else {
            continue;
        };
        if fused.after.is_none() || fused.shared.is_some() || fused.kernel.row_len() != inner {
            continue;
        }
        if let Some(scatter) = fused.scatter.swap_rows(inner, rows, swap) {
            fused.scatter = scatter;
            local.take_swapped_rows();
        }
    }
}

/// Plane buffers (all threads together) a plane kernel may always hold; beyond this, only up
/// to half the block it spares (see [`fuse`]).
const PLANE_BUFFERS_BYTES: usize = 16 << 20;

/// What a fused step computes between its exchanges.
enum Kernel<T: Real> {
    /// One strided sweep whose tiles read and write their rows through the run maps.
    Sweep(Sweep<T>),
    /// Whole planes transformed in cache, their rows written through the scatter map (FFTs,
    /// or r2c and FFTs, with an exchange after) or read through the gather map (FFTs, or FFTs
    /// and c2r, with an exchange before); with one exchange only.
    Planes(PlaneKernel<T>),
}

impl<T: Real> Kernel<T> {
    /// Elements per row: the run length of the run maps.
    fn row_len(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.row_len(),
            Kernel::Planes(p) => p.row_len(),
        }
    }

    /// Planes in the block.
    fn outer(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.outer(),
            Kernel::Planes(p) => p.outer(),
        }
    }

    /// Rows per plane.
    fn rows(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.len(),
            Kernel::Planes(p) => p.len(),
        }
    }

    /// Elements of one plane.
    fn plane_len(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.plane_len(),
            Kernel::Planes(p) => p.plane_len(),
        }
    }

    fn scratch_len(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.scratch_len(),
            Kernel::Planes(p) => p.scratch_len(),
        }
    }
}

impl<T: Real> Fused<T> {
    /// The timed sweep of one piece: rows of the exchange before as `gather` says (own rows
    /// in `src`, the rest at `incoming`; the block `src` itself when there is no exchange
    /// before), rows of the exchange after as [`Fused::scatter`] says (own rows in `dst`,
    /// the rest at `outgoing`; the block `dst` when there is none after).
    ///
    /// # Safety
    /// As [`Sweep::run_mapped`]: the maps fit the blocks and message buffers given.
    #[allow(clippy::too_many_arguments)]
    unsafe fn sweep_piece(
        &self,
        piece: &Piece,
        (gather, src, incoming): (&RunMap, *mut Complex<T>, *mut Complex<T>),
        (dst, outgoing): (*mut Complex<T>, *mut Complex<T>),
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
        times: &mut StageTimes,
    ) {
        let inner = self.kernel.row_len();
        let from = Rows::from_map(gather, src, incoming, inner);
        let to = Rows::from_map(&self.scatter, dst, outgoing, inner);
        // SAFETY: the caller's contract.
        unsafe {
            self.sweep(
                piece.planes.clone(),
                (from, to),
                (src, dst),
                scale,
                workers,
                times,
            )
        }
    }

    /// The timed sweep of planes `range` of every group, reading the rows of the exchange
    /// before from `from` (the block `src` itself when there is none) and writing those of
    /// the exchange after to `to` (the block `dst` when there is none).
    ///
    /// # Safety
    /// As [`Sweep::run_mapped`]: the maps fit the blocks and buffers they point into.
    #[allow(clippy::too_many_arguments)]
    unsafe fn sweep(
        &self,
        range: Range<usize>,
        (from, to): (Rows<'_, T>, Rows<'_, T>),
        (src, dst): (*mut Complex<T>, *mut Complex<T>),
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
        times: &mut StageTimes,
    ) {
        let inner = self.kernel.row_len();
        let from = match self.before {
            Some(_) => from,
            None => Rows::block(src, inner),
        };
        let to = match self.after {
            Some(_) => to,
            None => Rows::block(dst, inner),
        };
        let planes = Planes {
            groups: self.groups,
            count: self.count,
            range,
        };
        let t = Instant::now();
        match &self.kernel {
            // SAFETY: the caller's contract.
            Kernel::Sweep(sweep) => unsafe { sweep.run_mapped(from, to, scale, workers, &planes) },
            Kernel::Planes(kernel) => {
                // The side without an exchange is a block of whole planes (scalars: a real
                // one for r2c and c2r).
                let from = match self.before {
                    Some(_) => PlaneEnd::Rows(from),
                    None => PlaneEnd::Block(src as *mut T),
                };
                let to = match self.after {
                    Some(_) => PlaneEnd::Rows(to),
                    None => PlaneEnd::Block(dst as *mut T),
                };
                // SAFETY: the caller's contract; the kernel is fused only on the sides it
                // takes rows on, and with one exchange only.
                unsafe { kernel.run_mapped(from, to, scale, workers, &planes) };
            }
        }
        times.fft += t.elapsed().as_secs_f64();
    }
}

/// How a fused step moves its pieces through a shared-memory window over the exchanges'
/// group: a rank packs (exchange before) or scatters (exchange after) its messages into its
/// own region, and after a [`GroupWindow::sync`] every rank gathers (before) or unpacks
/// (after) its peers' messages straight from their regions. Region layout: the messages of
/// the exchange before, then from `after_offset` those of the exchange after.
struct SharedPath {
    window: GroupWindow,
    /// Like [`Fused::gather`], with message offsets into the whole window.
    gather: Map,
    /// Per piece, the exchange after's messages with receive offsets into the whole window.
    unpacks: Vec<Messages>,
    after_offset: usize,
}

/// One piece of a fused step: planes `planes` of every group, and the messages of the
/// exchanges before and after that carry them.
struct Piece {
    planes: Range<usize>,
    before: Option<Messages>,
    after: Option<Messages>,
}

/// Cuts the fused step around `kernel` (on `layout`, of this rank `rank`) into pieces of about
/// `piece_bytes` (at least one plane each) and maps its runs. `before`/`after`: the exchanges fused before and after. Pieces need the
/// sweep's planes to be the slowest axis of `layout` (after the batch axis) and that axis to
/// be the one both exchanges scatter or gather; otherwise there is one piece, the whole
/// exchange. The piece count depends on global shapes only, so every rank moves the same.
fn cut_into_pieces<T: Real>(
    kernel: Kernel<T>,
    layout: &Layout,
    before: Option<usize>,
    after: Option<usize>,
    in_place_layouts: bool,
    context: &FuseContext<'_>,
) -> Option<Fused<T>> {
    let FuseContext {
        exchanges,
        rank,
        shift,
        piece_bytes,
        threads,
        ..
    } = *context;
    let row = kernel.row_len();
    let order = layout.memory_order().axes();
    let memory_shape = layout.local_shape_in_memory(rank);
    let outer = kernel.outer();
    let axis = order[shift];
    let gathers = |e: Option<usize>, scattered: bool| {
        e.is_none_or(|e| {
            let plan = exchanges[e].plan_axes();
            (if scattered { plan.1 } else { plan.0 }) == axis
        })
    };
    let planes_first = match &kernel {
        Kernel::Sweep(sweep) => sweep.position() == shift + 1,
        Kernel::Planes(_) => true,
    };
    let pieceable = planes_first && gathers(before, true) && gathers(after, false);
    let ranks = layout.grid().ranks();
    let (groups, count, size, pieces) = if pieceable {
        let groups = if shift == 1 { memory_shape[0] } else { 1 };
        let plane = kernel.plane_len() * std::mem::size_of::<Complex<T>>() * groups;
        let most = (0..ranks)
            .map(|r| layout.local_shape(r)[axis])
            .max()
            .unwrap_or(0);
        // Pieces keep the messages in cache; exchanges within one-rank groups have none
        // (the same on every rank: the grid's shape), so they take one piece: a parallel
        // region per piece costs a wake-up of the threads and leaves some idle at its end.
        let alone = [before, after]
            .into_iter()
            .flatten()
            .all(|e| exchanges[e].group_size() == 1);
        let size = if alone {
            most.max(1)
        } else {
            (piece_bytes / plane.max(1)).max(1)
        };
        // A plane kernel shares a piece's planes among the threads: as many for each.
        let size = match kernel {
            Kernel::Planes(_) => size.div_ceil(threads) * threads,
            Kernel::Sweep(_) => size,
        };
        (
            groups,
            memory_shape[shift],
            size,
            most.div_ceil(size).max(1),
        )
    } else {
        (1, outer, usize::MAX / 4, 1)
    };
    let rows = outer * kernel.rows();
    let unset = Run::UNSET;
    let mut gather = vec![unset; if before.is_some() { rows } else { 0 }];
    let mut scatter = vec![unset; if after.is_some() { rows } else { 0 }];
    let mut cut = Vec::with_capacity(pieces);
    for k in 0..pieces {
        let messages =
            |e: Option<usize>, map: &mut Vec<Run>, dst: bool| -> Option<Option<Messages>> {
                let Some(e) = e else { return Some(None) };
                let m = exchanges[e].piece(axis, size, k);
                let ok = if dst {
                    m.rank_part().dst_runs_into(row, map)
                } else {
                    m.rank_part().src_runs_into(row, map)
                };
                ok.then_some(Some(m))
            };
        let b = messages(before, &mut gather, true)?;
        let a = messages(after, &mut scatter, false)?;
        let start = k.saturating_mul(size).min(count);
        cut.push(Piece {
            planes: start..start.saturating_add(size).min(count),
            before: b,
            after: a,
        });
    }
    if gather.iter().chain(&scatter).any(|&r| r == Run::UNSET) {
        return None;
    }
    // In place: both exchanges are one exchange and its reverse, and every own row is read
    // and written at the same offset.
    let in_place = in_place_layouts
        && gather.iter().zip(&scatter).all(|(g, s)| {
            (g.buffer() == redist::runs::RunBuffer::Block)
                == (s.buffer() == redist::runs::RunBuffer::Block)
                && (g.buffer() != redist::runs::RunBuffer::Block || g.offset() == s.offset())
        });
    let scatter = RunMap::new(scatter, row);
    let mut kernel = kernel;
    if let Kernel::Planes(planes) = &mut kernel {
        planes.fit_to(after.map(|_| &scatter));
    }
    Some(Fused {
        before,
        after,
        kernel,
        gather: RunMap::new(gather, row),
        scatter,
        pieces: cut,
        groups,
        count,
        in_place,
        shared: None,
        direct: None,
        axis,
        size,
    })
}

/// `fused`'s [`Direct`] maps when it reads buffer `src` and writes `dst` (see
/// [`Engine::prepare_direct`]); `region` gives the window region length of a caller's buffer.
fn direct_maps<T: Real>(
    fused: &Fused<T>,
    (src, dst): (At, At),
    region: impl Fn(At) -> Option<usize>,
    layouts: &[Layout],
    ends: &[(usize, usize)],
    rank: usize,
) -> Option<Direct> {
    let row = fused.kernel.row_len();
    // One buffer on both sides only when every element stays where it is: the exchange
    // after is the one before reversed.
    let stays = |b: usize, a: usize| fused.in_place && ends[b] == (ends[a].1, ends[a].0);
    if src == dst && !matches!((fused.before, fused.after), (Some(b), Some(a)) if stays(b, a)) {
        return None;
    }
    // The rows of the sweep's layout (`mid`) in the blocks of the exchange's far side.
    let runs = |ends: Option<(usize, usize)>, at: At| match ends {
        Some((mid, far)) => window_runs(&layouts[mid], rank, &layouts[far], row, region(at)?),
        None => Some(Vec::new()),
    };
    let gather = runs(fused.before.map(|b| (ends[b].1, ends[b].0)), src)?;
    let scatter = runs(fused.after.map(|a| ends[a]), dst)?;
    debug_assert_eq!(gather.len(), fused.gather.len());
    debug_assert_eq!(scatter.len(), fused.scatter.len());
    Some(Direct {
        gather: RunMap::new(gather, row),
        scatter: RunMap::new(scatter, row),
        src,
        dst,
    })
}

/// The shared-memory way for `fused` (see [`SharedPath`]), or `None` when its exchanges'
/// group is not on one node or the two exchanges use different groups. Collective over the
/// group.
fn shared_path<T: Real>(fused: &Fused<T>, context: &FuseContext<'_>) -> Result<Option<SharedPath>>
where
    Complex<T>: redist::Element,
{
    let FuseContext {
        exchanges,
        ends,
        layouts,
        ..
    } = *context;
    let (before, after) = (fused.before, fused.after);
    if let (Some(b), Some(a)) = (before, after) {
        if exchanges[b].grid_dim() != exchanges[a].grid_dim() {
            return Ok(None);
        }
    }
    let most = |f: &dyn Fn(&Piece) -> Option<&Messages>| {
        fused
            .pieces
            .iter()
            .filter_map(f)
            .map(Messages::send_len)
            .max()
            .unwrap_or(0)
    };
    // The same region layout on every rank: the exchange after's part starts at the same
    // offset in every region.
    let before_len = (context.most)(most(&|p| p.before.as_ref()));
    let after_len = most(&|p| p.after.as_ref());
    let e = before.or(after).expect("fused with an exchange");
    let bytes = (before_len + after_len) * std::mem::size_of::<Complex<T>>();
    let Some(window) = exchanges[e].group_window(bytes)? else {
        return Ok(None);
    };
    let region = window.region_len::<Complex<T>>();
    // The plans of the exchanges before and after, built once for all pieces.
    let plan = |exchange: Option<usize>| {
        exchange.map(|e| {
            let (from, to) = ends[e];
            ExchangePlan::new(&layouts[from], &layouts[to]).expect("planned before")
        })
    };
    let (before_plan, after_plan) = (plan(before), plan(after));
    // Where each peer's message for this rank starts in the window: its region, the part of
    // the exchange (planned by `plan`), and its own send offset for this rank in that piece.
    let in_window = |plan: &ExchangePlan, part: &RankExchange, k: usize, base: usize| {
        let mut part = part.clone();
        let me = part.group_index;
        for p in part.peers.iter_mut().filter(|p| p.peer != me) {
            let theirs = plan.for_rank(p.peer_rank).piece(fused.axis, fused.size, k);
            p.recv_offset = p.peer * region + base + theirs.peers[me].send_offset;
        }
        part
    };
    let unset = Run::UNSET;
    let row = fused.kernel.row_len();
    let mut gather = vec![unset; fused.gather.len()];
    let mut unpacks = Vec::new();
    for (k, piece) in fused.pieces.iter().enumerate() {
        if let (Some(plan), Some(m)) = (&before_plan, &piece.before) {
            let part = in_window(plan, m.rank_part(), k, 0);
            assert!(
                part.dst_runs_into(row, &mut gather),
                "the same runs as the piece's"
            );
        }
        if let (Some(a), Some(plan), Some(m)) = (after, &after_plan, &piece.after) {
            let part = in_window(plan, m.rank_part(), k, before_len);
            unpacks.push(exchanges[a].messages(part));
        }
    }
    Ok(Some(SharedPath {
        window,
        gather: RunMap::new(gather, row),
        unpacks,
        after_offset: before_len,
    }))
}

/// What fusing needs to know about the plan.
#[derive(Clone, Copy)]
struct FuseContext<'a> {
    exchanges: &'a [Exchange],
    /// The layouts each exchange goes from and to.
    ends: &'a [(usize, usize)],
    layouts: &'a [Layout],
    rank: usize,
    /// 1 with a batch axis (the slowest memory axis of every layout), else 0.
    shift: usize,
    piece_bytes: usize,
    /// The most rayon threads of any rank.
    threads: usize,
    shared_memory: bool,
    /// Whether every rank says yes (collective over the whole plan): fusing decides how many
    /// collective calls an exchange makes, so all ranks must decide alike.
    agree: &'a dyn Fn(bool) -> bool,
    /// The largest of every rank's value (collective over the whole plan).
    most: &'a dyn Fn(usize) -> usize,
}

/// Fuses each complex FFT step that is one strided sweep with the complex exchanges next to
/// it, where their run maps ([`redist::runs`]) show that the sweep's rows are whole runs on
/// the other side. `after[i]` is the layout after step `i`; so is the result's.
fn fuse<T: Real>(
    steps: Vec<Step<T>>,
    after: Vec<usize>,
    context: &FuseContext<'_>,
) -> Result<(Vec<Step<T>>, Vec<usize>)>
where
    Complex<T>: redist::Element,
{
    let FuseContext {
        exchanges,
        ends,
        layouts,
        ..
    } = *context;
    // An exchange that a later sweep can take on both sides (exchange, strided sweep, the
    // same exchange reversed: in place, no work block) is kept for that sweep rather than
    // fused after an earlier one (an r2c plan's axis-1 sweep would otherwise take it).
    // So is an exchange just before a c2r plane step, unless it closes such a pair: the c2r
    // writes a real block, which cannot host the complex layout the exchange leaves, so only
    // c2r planes gathering straight from the exchange spare a work block between them.
    let pairs: Vec<(usize, usize)> = steps
        .windows(3)
        .filter_map(|w| match w {
            [Step::Exchange {
                index: e,
                real: false,
            }, Step::Fft(local), Step::Exchange {
                index: back,
                real: false,
            }] if local.single_strided().is_some()
                && ends[*e] == (ends[*back].1, ends[*back].0) =>
            {
                Some((*e, *back))
            }
            _ => None,
        })
        .collect();
    let c2r = steps.windows(2).filter_map(|w| match w {
        [Step::Exchange {
            index: e,
            real: false,
        }, Step::Planes(planes)]
            if !planes.is_head() && pairs.iter().all(|&(_, back)| back != *e) =>
        {
            Some(*e)
        }
        _ => None,
    });
    let reserved: Vec<usize> = pairs.iter().map(|&(e, _)| e).chain(c2r).collect();
    let mut out: Vec<(Step<T>, usize)> = Vec::with_capacity(steps.len());
    let mut pending = steps.into_iter().zip(after).peekable();
    while let Some((step, layout)) = pending.next() {
        // Every rank asks the same questions in the same order (the steps are global), and
        // each answer is agreed over all ranks.
        let candidate = matches!(&step, Step::Fft(_) | Step::Planes(_))
            && (matches!(out.last(), Some((Step::Exchange { real: false, .. }, _)))
                || matches!(
                    pending.peek(),
                    Some((Step::Exchange { real: false, .. }, _))
                ));
        if !candidate {
            out.push((step, layout));
            continue;
        }
        // One strided sweep; else whole planes (the sub-blocks after the slowest memory
        // position, batch axis aside) of FFTs or of an r2c step and FFTs, when every sweep
        // runs within a plane. Both depend on the layouts only, so every rank picks alike.
        // (The complex plane of a c2r step is its source's, in the layout before it.)
        let first = context.shift + 1;
        let complex_layout = match (&step, out.last()) {
            (Step::Planes(steps), Some((_, before))) if !steps.is_head() => *before,
            _ => layout,
        };
        let memory_shape = layouts[complex_layout].local_shape_in_memory(context.rank);
        let plane_shape = memory_shape.get(first..).unwrap_or(&[]);
        let planes: usize = memory_shape.iter().take(first).product();
        let kernel = match &step {
            Step::Fft(local) => match local.single_strided() {
                Some(sweep) => Some(Kernel::Sweep(sweep.clone())),
                None => local
                    .on_planes(&memory_shape, first)
                    .map(|sweeps| Kernel::Planes(PlaneKernel::ffts(sweeps, planes, plane_shape))),
            },
            Step::Planes(steps) => PlaneKernel::steps(steps, plane_shape).map(Kernel::Planes),
            _ => None,
        };
        // A plane kernel holds a plane per thread: only where that is small outright or
        // beside the block it spares (not, say, a thin slab of huge planes on many threads).
        // Per rank; the decisions below are agreed.
        let kernel = kernel.filter(|k| match k {
            Kernel::Planes(p) => {
                let element = std::mem::size_of::<Complex<T>>();
                let block: usize = memory_shape.iter().product();
                context.threads * p.plane_len() * element
                    <= (block * element / 2).max(PLANE_BUFFERS_BYTES)
            }
            Kernel::Sweep(_) => true,
        });
        let row = kernel.as_ref().map_or(0, Kernel::row_len);
        let before = match out.last() {
            Some((Step::Exchange { index, real: false }, _)) => {
                let ok = match &kernel {
                    Some(Kernel::Sweep(_)) => true,
                    Some(Kernel::Planes(k)) => k.gathers(),
                    None => false,
                } && exchanges[*index].rank_part().has_dst_runs(row);
                (context.agree)(ok).then_some(*index)
            }
            _ => None,
        };
        let after = match pending.peek() {
            Some((Step::Exchange { index, real: false }, _)) => {
                let ok = match &kernel {
                    Some(Kernel::Sweep(_)) => true,
                    // A plane kernel takes one exchange.
                    Some(Kernel::Planes(k)) => k.scatters() && before.is_none(),
                    None => false,
                } && !reserved.contains(index)
                    && exchanges[*index].rank_part().has_src_runs(row);
                (context.agree)(ok).then_some(*index)
            }
            _ => None,
        };
        let Some(kernel) = kernel.filter(|_| before.is_some() || after.is_some()) else {
            out.push((step, layout));
            continue;
        };
        let reversed = match (before, after) {
            (Some(b), Some(a)) => ends[b] == (ends[a].1, ends[a].0),
            _ => false,
        };
        let fused = cut_into_pieces(kernel, &layouts[layout], before, after, reversed, context);
        let agreed = (context.agree)(fused.is_some());
        let Some(mut fused) = fused.filter(|_| agreed) else {
            out.push((step, layout));
            continue;
        };
        // Whether the step writes a new buffer decides where every later step leaves the
        // data, which must be the same buffer on every rank.
        fused.in_place = (context.agree)(fused.in_place);
        if context.shared_memory {
            fused.shared = shared_path(&fused, context)?;
        }
        let mut last = layout;
        if before.is_some() {
            out.pop();
        }
        if after.is_some() {
            last = pending.next().expect("peeked").1;
        }
        out.push((Step::Fused(Box::new(fused)), last));
    }
    Ok(out.into_iter().unzip())
}

/// The FFT plans of a complex FFT group and the memory positions they sweep.
type FftGroup<T> = (Vec<Arc<dyn Fft<T>>>, Vec<usize>);

/// An r2c or c2r step to run per sub-block with an FFT group: its op, its source and
/// destination layouts and its axis.
struct LineSide<T: Real> {
    op: LineOp<T>,
    from: usize,
    to: usize,
    axis: usize,
}

/// The r2c step `line` followed by the FFT group (`head`), or the FFT group followed by the
/// c2r step `line`, as [`PlaneSteps`] over the sub-blocks of the first memory position (after
/// the batch axis), plus the group's FFTs along that position or a slower one, which stay a
/// whole-block step (after the planes when `head`, before them otherwise). `None` when the
/// line step is not along the last memory position or no FFT of the group sweeps a trailing
/// position. The decision depends on layouts and positions only, never on this rank's
/// sizes, so every rank makes the same steps (the exchange fusion after it is collective).
#[allow(clippy::too_many_arguments)]
fn per_sub_block<T: Real>(
    line: LineSide<T>,
    (plans, positions): (&[Arc<dyn Fft<T>>], &[usize]),
    head: bool,
    layouts: &[Layout],
    pipeline: &Pipeline,
    spec: &Spec,
    rank: usize,
    shift: usize,
) -> Option<(PlaneSteps<T>, Option<LocalFft<T>>)> {
    let LineSide { op, from, to, axis } = line;
    let source = &layouts[from];
    let m_src = source.local_shape_in_memory(rank);
    let p = source.memory_order().position_of(axis + shift);
    let first = shift + 1;
    if p + 1 != m_src.len() || p < first {
        return None;
    }
    let m_mid = layouts[if head { to } else { from }].local_shape_in_memory(rank);
    let (group, rest): (Vec<_>, Vec<_>) = plans
        .iter()
        .cloned()
        .zip(positions.iter().copied())
        .partition(|&(_, q)| q >= first);
    if group.is_empty() {
        return None;
    }
    let n_out = layouts[to].global_shape()[axis + shift];
    let line = LineStep::new(
        op,
        &m_src[first..],
        p - first,
        n_out,
        pipeline.real[from],
        pipeline.real[to],
        spec.resolution[axis],
    );
    let sweeps = group
        .into_iter()
        .map(|(plan, q)| Sweep::new(plan, &m_mid[first..], q - first))
        .collect();
    let blocks = m_mid[..first].iter().product();
    let rest = (!rest.is_empty()).then(|| {
        let (plans, positions): (Vec<_>, Vec<_>) = rest.into_iter().unzip();
        LocalFft::new(plans, &m_mid, &positions)
    });
    Some((PlaneSteps::new(line, sweeps, head, blocks), rest))
}

/// Where the data of a transform is between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Input,
    Work(usize),
    Output,
}

/// One direction: its steps, where each leaves the data, and its scale.
struct Program<T: Real> {
    steps: Vec<Step<T>>,
    dests: Vec<At>,
    scale: T,
}

/// The plan's memory: two data buffers of the largest local block over all layouts, and the
/// message buffers of the largest exchange (the part that goes to other ranks). The data
/// buffers move into shared-memory windows with the first block the plan allocates in one
/// ([`Engine::share_work`]).
struct Buffers<T> {
    work: [SharedBlock<Complex<T>>; 2],
    send: AlignedBuf<Complex<T>>,
    recv: AlignedBuf<Complex<T>>,
}

/// `layout` with a leading batch axis of `batch` fields, never distributed, slowest in
/// memory; `layout` itself when `batch` is 1.
pub(crate) fn batched(layout: &Layout, batch: usize) -> Result<Layout> {
    if batch == 1 {
        return Ok(layout.clone());
    }
    let shape: Vec<usize> = std::iter::once(batch)
        .chain(layout.global_shape().iter().copied())
        .collect();
    let decomposed = layout.decomposed().iter().map(|a| a + 1).collect();
    let order = std::iter::once(0)
        .chain(layout.memory_order().axes().iter().map(|a| a + 1))
        .collect();
    Ok(Layout::new(
        &shape,
        layout.grid().clone(),
        decomposed,
        MemoryOrder::new(order)?,
    )?)
}

/// The engine: pipeline, steps of both directions, exchanges and buffers.
pub(crate) struct Engine<T: Real> {
    pub(crate) grid: ProcessGrid,
    pub(crate) pipeline: Pipeline,
    pub(crate) options: FftOptions,
    forward: Program<T>,
    backward: Program<T>,
    exchanges: Vec<Exchange>,
    buffers: Buffers<T>,
    workers: Vec<AlignedBuf<Complex<T>>>,
    pub(crate) times: StageTimes,
    /// This rank's input and output lengths (batch included), computed once: `Layout`'s
    /// queries allocate, and forward/backward check the caller's buffers against these.
    lens: (usize, usize),
    /// The pipeline's layouts with the batch axis, and each exchange's (from, to) layouts.
    layouts: Vec<Layout>,
    ends: Vec<(usize, usize)>,
    /// The shared-memory windows of the blocks this plan allocated ([`SharedBlock`]), with
    /// whether each holds forward inputs (else forward outputs).
    windows: Vec<(Weak<BlockWindow>, bool)>,
}

impl<T: Real> Engine<T>
where
    Complex<T>: redist::Element,
{
    /// Plans `spec` over all processes of `comm`; collective.
    pub(crate) fn new<C: Communicator>(comm: &C, spec: Spec, options: FftOptions) -> Result<Self> {
        let ranks = comm.size() as usize;
        let grid_shape = crate::model::resolve_grid(
            &spec.shape.physical,
            ranks,
            &options.grid,
            &options.machine,
        )?;
        let pipeline = pipeline_for(&spec.shape, grid_shape.clone(), options.transposed_out)?;
        let batch = options.batch;
        // Refuse (on every rank alike) a plan that would not fit, before allocating.
        crate::memory::check_plan_memory(
            comm,
            &pipeline,
            std::mem::size_of::<Complex<T>>(),
            batch,
            options.memory_limit,
        )?;
        let grid = ProcessGrid::new(comm, grid_shape)?;
        let rank = grid.rank();
        let layouts: Vec<Layout> = pipeline
            .layouts
            .iter()
            .map(|l| batched(l, batch))
            .collect::<Result<_>>()?;
        let shift = usize::from(batch > 1);

        let mut exchanges = Vec::new();
        let mut ends = Vec::new();
        let mut ffts = rustfft::FftPlanner::<T>::new();
        let mut reals = realfft::RealFftPlanner::<T>::new();
        let mut dcts = rustdct::DctPlanner::<T>::new();
        // Steps of one direction, and the layout each leaves the data in.
        let mut make_steps = |stages: &[Stage],
                              inverse: bool|
         -> Result<(Vec<Step<T>>, Vec<usize>)> {
            let mut steps = Vec::new();
            let mut after = Vec::new();
            // The last r2c/c2r step's (source layout, axis), and the last complex FFT group's
            // (layout, plans, memory positions), for running them per sub-block together.
            let planes_of = |line: LineSide<T>, group: (&[Arc<dyn Fft<T>>], &[usize]), head| {
                per_sub_block(line, group, head, &layouts, &pipeline, &spec, rank, shift)
            };
            let mut last_resize: Option<(usize, usize)> = None;
            let mut last_fft: Option<(usize, FftGroup<T>)> = None;
            let mut i = 0;
            while i < stages.len() {
                match stages[i] {
                    Stage::Fft { layout, axis } => {
                        let l = &layouts[layout];
                        let memory_shape = l.local_shape_in_memory(rank);
                        let position = l.memory_order().position_of(axis + shift);
                        let real = pipeline.real[layout];
                        if let AxisKind::R2r(kind) = spec.axes[axis] {
                            let kind = if inverse { kind.inverse() } else { kind };
                            let n = spec.resolution[axis];
                            let op = LineOp::R2r(R2r::new(&mut dcts, kind, n));
                            let step = LineStep::new(op, &memory_shape, position, n, real, real, n);
                            steps.push(Step::Line {
                                step,
                                in_place: true,
                            });
                            after.push(layout);
                            i += 1;
                            continue;
                        }
                        // Consecutive complex FFT stages on one layout run as one fused step.
                        let mut plans = Vec::new();
                        let mut positions = Vec::new();
                        while let Some(&Stage::Fft { layout: same, axis }) = stages.get(i) {
                            if same != layout || spec.axes[axis] != AxisKind::Fft {
                                break;
                            }
                            let n = spec.shape.physical[axis];
                            plans.push(if inverse {
                                ffts.plan_fft_inverse(n)
                            } else {
                                ffts.plan_fft_forward(n)
                            });
                            positions.push(l.memory_order().position_of(axis + shift));
                            i += 1;
                        }
                        // An r2c step just before, into this layout: per sub-block together.
                        let resize = last_resize.take();
                        if let (Some((from, r_axis)), Some(Step::Line { step, .. })) =
                            (resize, steps.last())
                        {
                            if step.is_real_complex() && after.last() == Some(&layout) {
                                let src = &layouts[from];
                                let n_in = src.local_shape_in_memory(rank)
                                    [src.memory_order().position_of(r_axis + shift)];
                                let op = LineOp::R2c(reals.plan_fft_forward(n_in));
                                let line = LineSide {
                                    op,
                                    from,
                                    to: layout,
                                    axis: r_axis,
                                };
                                if let Some(planes) = planes_of(line, (&plans, &positions), true) {
                                    steps.pop();
                                    after.pop();
                                    let (planes, rest) = planes;
                                    steps.push(Step::Planes(planes));
                                    after.push(layout);
                                    if let Some(rest) = rest {
                                        steps.push(Step::Fft(rest));
                                        after.push(layout);
                                    }
                                    continue;
                                }
                            }
                        }
                        last_fft = Some((layout, (plans.clone(), positions.clone())));
                        steps.push(Step::Fft(LocalFft::new(plans, &memory_shape, &positions)));
                        after.push(layout);
                    }
                    Stage::Resize { from, to, axis } => {
                        let l = &layouts[from];
                        let memory_shape = l.local_shape_in_memory(rank);
                        let position = l.memory_order().position_of(axis + shift);
                        let n_in = memory_shape[position];
                        let n_out = layouts[to].global_shape()[axis + shift];
                        let (real_in, real_out) = (pipeline.real[from], pipeline.real[to]);
                        let op = match (real_in, real_out) {
                            (true, false) => LineOp::R2c(reals.plan_fft_forward(n_in)),
                            (false, true) => LineOp::C2r(reals.plan_fft_inverse(n_out)),
                            _ => {
                                let m = n_in.max(n_out);
                                LineOp::C2c(if inverse {
                                    ffts.plan_fft_inverse(m)
                                } else {
                                    ffts.plan_fft_forward(m)
                                })
                            }
                        };
                        // A c2r step right after FFTs on its source layout: per sub-block
                        // together (the FFTs of the other trailing axes, then the c2r).
                        let group = last_fft.take();
                        if let (LineOp::C2r(c2r), Some((layout, group)), Some(Step::Fft(_))) =
                            (&op, group, steps.last())
                        {
                            if layout == from && after.last() == Some(&from) {
                                let line = LineSide {
                                    op: LineOp::C2r(c2r.clone()),
                                    from,
                                    to,
                                    axis,
                                };
                                if let Some((planes, rest)) =
                                    planes_of(line, (&group.0, &group.1), false)
                                {
                                    steps.pop();
                                    after.pop();
                                    if let Some(rest) = rest {
                                        steps.push(Step::Fft(rest));
                                        after.push(from);
                                    }
                                    steps.push(Step::Planes(planes));
                                    after.push(to);
                                    i += 1;
                                    continue;
                                }
                            }
                        }
                        let step = LineStep::new(
                            op,
                            &memory_shape,
                            position,
                            n_out,
                            real_in,
                            real_out,
                            spec.resolution[axis],
                        );
                        steps.push(Step::Line {
                            step,
                            in_place: false,
                        });
                        after.push(to);
                        if real_in && !real_out {
                            last_resize = Some((from, axis));
                        }
                        i += 1;
                    }
                    Stage::Exchange { from, to } => {
                        let plan = ExchangePlan::new(&layouts[from], &layouts[to])?;
                        exchanges.push(Exchange::new(&grid, &plan, options.method)?);
                        ends.push((from, to));
                        steps.push(Step::Exchange {
                            index: exchanges.len() - 1,
                            real: pipeline.real[from],
                        });
                        after.push(to);
                        i += 1;
                    }
                }
            }
            Ok((steps, after))
        };
        let (forward_steps, forward_after) = make_steps(&pipeline.forward, false)?;
        let (backward_steps, backward_after) = make_steps(&pipeline.backward, true)?;
        let most = |value: usize| {
            let mut all = 0u64;
            comm.all_reduce_into(&(value as u64), &mut all, SystemOperation::max());
            all as usize
        };
        let context = FuseContext {
            exchanges: &exchanges,
            ends: &ends,
            layouts: &layouts,
            rank,
            shift,
            piece_bytes: options.piece_bytes,
            threads: most(rayon::current_num_threads().max(1)),
            shared_memory: options.shared_memory,
            agree: &|yes: bool| {
                let mut all = 0i32;
                comm.all_reduce_into(&i32::from(yes), &mut all, SystemOperation::min());
                all == 1
            },
            most: &most,
        };
        let fuse = |steps, after| fuse(steps, after, &context);
        let (mut forward_steps, forward_after) = fuse(forward_steps, forward_after)?;
        let (mut backward_steps, backward_after) = fuse(backward_steps, backward_after)?;

        // Steps that write a new buffer by their nature; `schedule` adds the first step when
        // the input is read-only (or nothing else moves).
        let destroy = options.destroy_input;
        let movers = |steps: &[Step<T>]| -> Vec<bool> {
            steps
                .iter()
                .map(|s| {
                    matches!(
                        s,
                        Step::Exchange { .. }
                            | Step::Line {
                                in_place: false,
                                ..
                            }
                    ) || matches!(s, Step::Fused(f) if !f.in_place)
                        || matches!(s, Step::Planes(_))
                })
                .collect()
        };
        // Every rank's block lengths: where the data goes between steps must be the same
        // buffer on every rank (the fused steps' shared-memory paths read and write the
        // peers' buffers, and synchronize on the windows of the buffers they use), so the
        // schedule is decided from every rank's lengths, not this rank's alone.
        let scalars_of = |layout: usize, q: usize| {
            layouts[layout].local_len(q) * if pipeline.real[layout] { 1 } else { 2 }
        };
        let rank_lens = |after: &[usize], output: usize, input: usize| -> Vec<RankLens> {
            (0..ranks)
                .map(|q| RankLens {
                    steps: after.iter().map(|&l| scalars_of(l, q)).collect(),
                    output: scalars_of(output, q),
                    input: destroy.then(|| scalars_of(input, q)),
                })
                .collect()
        };
        let (forward_dests, fw) = schedule(
            &movers(&forward_steps),
            &rank_lens(&forward_after, pipeline.output, pipeline.input),
            rank,
        );
        let (backward_dests, bw) = schedule(
            &movers(&backward_steps),
            &rank_lens(&backward_after, pipeline.input, pipeline.output),
            rank,
        );
        let complex_len = |scalars: usize| scalars.div_ceil(2);
        let work_lens = [complex_len(fw[0].max(bw[0])), complex_len(fw[1].max(bw[1]))];
        let exchange_scalars =
            |len: &dyn Fn(&Exchange) -> usize, piece_len: &dyn Fn(&Messages) -> usize| {
                forward_steps
                    .iter()
                    .chain(&backward_steps)
                    .filter_map(|s| match s {
                        Step::Exchange { index, real } => {
                            Some(len(&exchanges[*index]) * if *real { 1 } else { 2 })
                        }
                        // Through the shared window, a fused step needs no message buffers.
                        Step::Fused(f) if f.shared.is_some() => None,
                        Step::Fused(f) => f
                            .pieces
                            .iter()
                            .flat_map(|p| p.before.iter().chain(&p.after))
                            .map(|m| 2 * piece_len(m))
                            .max(),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0)
            };
        let send_len = complex_len(exchange_scalars(&Exchange::send_len, &Messages::send_len));
        let recv_len = complex_len(exchange_scalars(&Exchange::recv_len, &Messages::recv_len));
        let threads = rayon::current_num_threads().max(1);
        if grid.communicator().size() == 1 {
            swap_rows_for_sweeps(&mut forward_steps, &forward_dests, threads);
            swap_rows_for_sweeps(&mut backward_steps, &backward_dests, threads);
        }
        // A step reads its input where the schedule moves the data (`Engine::run`'s `at`),
        // which decides whether an FFT step's column FFTs need their staging block.
        let step_scratch = |steps: &[Step<T>], dests: &[At]| -> usize {
            steps
                .iter()
                .enumerate()
                .map(|(i, s)| match s {
                    Step::Fft(local) => {
                        let at = if i == 0 { At::Input } else { dests[i - 1] };
                        local.scratch_len(at != dests[i], threads)
                    }
                    Step::Line { step, .. } => step.scratch_len(),
                    Step::Fused(f) => f.kernel.scratch_len(),
                    Step::Planes(planes) => {
                        let at = if i == 0 { At::Input } else { dests[i - 1] };
                        planes.scratch_len(at != At::Input || destroy)
                    }
                    Step::Exchange { .. } => 0,
                })
                .max()
                .unwrap_or(0)
        };
        let scratch_len = step_scratch(&forward_steps, &forward_dests)
            .max(step_scratch(&backward_steps, &backward_dests));
        let workers = (0..threads).map(|_| AlignedBuf::new(scratch_len)).collect();
        let mut engine = Self {
            forward: Program {
                steps: forward_steps,
                dests: forward_dests,
                scale: T::of(spec.forward_scale),
            },
            backward: Program {
                steps: backward_steps,
                dests: backward_dests,
                scale: T::of(spec.backward_scale),
            },
            grid,
            lens: (
                pipeline.layouts[pipeline.input].local_len(rank) * batch,
                pipeline.layouts[pipeline.output].local_len(rank) * batch,
            ),
            pipeline,
            exchanges,
            buffers: Buffers {
                work: [
                    SharedBlock::aligned(work_lens[0]),
                    SharedBlock::aligned(work_lens[1]),
                ],
                send: AlignedBuf::new(send_len),
                recv: AlignedBuf::new(recv_len),
            },
            workers,
            times: StageTimes::default(),
            options,
            layouts,
            ends,
            windows: Vec::new(),
        };
        intern_maps([&mut engine.forward, &mut engine.backward]);
        redist::alloc::release_freed();
        Ok(engine)
    }

    /// Bytes per rank of a shared-memory window holding every rank's forward input
    /// (`forward_input`) or output block: the largest block, in whole cache lines (as
    /// [`GroupWindow::new`] rounds it), the same on every rank.
    fn region_bytes(&self, forward_input: bool) -> usize {
        let layout = if forward_input {
            self.pipeline.input
        } else {
            self.pipeline.output
        };
        let scalars = if self.pipeline.real[layout] { 1 } else { 2 };
        let bytes = self.layouts[layout].max_local_len() * scalars * std::mem::size_of::<T>();
        bytes.max(1).div_ceil(64) * 64
    }

    /// This rank's forward input (`forward_input`) or output block, zeroed: in a shared-memory
    /// window over the plan's ranks when they are all on one node (and more than one), else
    /// private. Collective. The first shared block makes the fused steps' maps into the
    /// windows ([`Direct`]).
    pub(crate) fn alloc_block<E: bytemuck::Pod + Default>(
        &mut self,
        forward_input: bool,
    ) -> Result<SharedBlock<E>> {
        let len = if forward_input {
            self.input_len()
        } else {
            self.output_len()
        };
        let bytes = self.region_bytes(forward_input);
        let window = match self.grid.communicator().size() {
            1 => None,
            _ => GroupWindow::new(self.grid.communicator(), bytes)?,
        };
        let Some(window) = window else {
            return Ok(SharedBlock::aligned(len));
        };
        assert_eq!(
            window.region_bytes(),
            bytes,
            "regions sized alike on every rank"
        );
        if self.windows.is_empty() {
            self.share_work()?;
            self.prepare_direct();
        }
        self.windows.retain(|(w, _)| w.strong_count() > 0);
        let window = Arc::new(BlockWindow { window });
        self.windows.push((Arc::downgrade(&window), forward_input));
        Ok(SharedBlock::in_window(window, len))
    }

    /// Moves the work buffers into shared-memory windows over the plan's ranks, like the
    /// blocks `alloc_block` makes, so that the fused steps that read or write them move their
    /// rows straight between the ranks' buffers too (a c2r backward that keeps its input
    /// transforms it into work buffer 0 and exchanges from there). The memory is the same; it
    /// only moves. Collective; called once, with the first shared block.
    fn share_work(&mut self) -> Result<()> {
        let complex = std::mem::size_of::<Complex<T>>();
        for k in 0..2 {
            let len = self.buffers.work[k].len();
            // Regions sized alike on every rank (the largest buffer, in whole cache lines).
            let mut most = 0u64;
            self.grid.communicator().all_reduce_into(
                &(len as u64),
                &mut most,
                SystemOperation::max(),
            );
            if most == 0 {
                continue;
            }
            let bytes = (most as usize * complex).div_ceil(64) * 64;
            let Some(window) = GroupWindow::new(self.grid.communicator(), bytes)? else {
                return Ok(());
            };
            self.buffers.work[k] = SharedBlock::in_window(Arc::new(BlockWindow { window }), len);
        }
        Ok(())
    }

    /// Maps every fused step whose exchanged sides are the caller's blocks into the windows
    /// of such blocks ([`Direct`]), where the maps exist (whole rows in the peers' blocks)
    /// and running in place across ranks is safe: a step that reads and writes one buffer
    /// only when its exchanges are one and its reverse (every element stays where it is), a
    /// one-sided step only between two buffers.
    fn prepare_direct(&mut self) {
        let rank = self.grid.rank();
        let complex = std::mem::size_of::<Complex<T>>();
        let regions = [
            self.region_bytes(true) / complex,
            self.region_bytes(false) / complex,
        ];
        let work_regions = self
            .buffers
            .work
            .each_ref()
            .map(|w| w.window_arc().map(|w| w.window.region_bytes() / complex));
        let (layouts, ends) = (&self.layouts, &self.ends);
        for (program, forward) in [(&mut self.forward, true), (&mut self.backward, false)] {
            // Region length (complex elements) of the window a buffer of this call lies in.
            let region = |at: At| match at {
                At::Input => Some(regions[usize::from(!forward)]),
                At::Output => Some(regions[usize::from(forward)]),
                At::Work(k) => work_regions[k],
            };
            let mut at = At::Input;
            for (step, &dest) in program.steps.iter_mut().zip(&program.dests) {
                if let Step::Fused(fused) = step {
                    fused.direct = direct_maps(fused, (at, dest), region, layouts, ends, rank);
                }
                at = dest;
            }
        }
        // A step runs straight between the blocks only where every rank can (each one
        // synchronizes on the windows it reads and writes): one agreement for all steps.
        let here: Vec<i32> = fused_steps(&mut self.forward, &mut self.backward)
            .map(|f| i32::from(f.direct.is_some()))
            .collect();
        let mut everywhere = vec![0i32; here.len()];
        self.grid.communicator().all_reduce_into(
            &here[..],
            &mut everywhere[..],
            SystemOperation::min(),
        );
        for (fused, all) in fused_steps(&mut self.forward, &mut self.backward).zip(everywhere) {
            if all == 0 {
                fused.direct = None;
            }
        }
        intern_maps([&mut self.forward, &mut self.backward]);
        redist::alloc::release_freed();
    }

    /// The windows the caller's `input` and `output` lie in (their regions' starts), on every
    /// rank alike: a side counts only where every rank passes a block of the kind the call
    /// reads or writes there (one small all-reduce per call, only once blocks exist).
    fn shared_call(
        &self,
        forward: bool,
        input: *const u8,
        output: *const u8,
    ) -> [Option<Arc<BlockWindow>>; 2] {
        // No live block (blocks are dropped on every rank alike, as freeing a window is
        // collective): nothing to agree on.
        if self.windows.iter().all(|(w, _)| w.strong_count() == 0) {
            return [None, None];
        }
        let find = |at: *const u8, holds_input: bool| {
            self.windows
                .iter()
                .filter(|(_, kind)| *kind == holds_input)
                .filter_map(|(w, _)| w.upgrade())
                .find(|w| std::ptr::eq(w.window.own::<u8>(), at))
        };
        let found = [find(input, forward), find(output, !forward)];
        let mask = i32::from(found[0].is_some()) | (i32::from(found[1].is_some()) << 1);
        let mut all = 0i32;
        self.grid
            .communicator()
            .all_reduce_into(&mask, &mut all, SystemOperation::bitwise_and());
        let [i, o] = found;
        [i.filter(|_| all & 1 != 0), o.filter(|_| all & 2 != 0)]
    }

    /// This rank's elements (not scalars) of the forward input, batch included.
    pub(crate) fn input_len(&self) -> usize {
        self.lens.0
    }

    /// This rank's elements of the forward output, batch included.
    pub(crate) fn output_len(&self) -> usize {
        self.lens.1
    }

    /// `Complex<T>` elements of work memory (see [`crate::FftPlan::work_len`]).
    pub(crate) fn work_len(&self) -> usize {
        let b = &self.buffers;
        b.work.iter().map(|w| w.len()).sum::<usize>()
            + b.send.len()
            + b.recv.len()
            + self.workers.iter().map(|w| w.len()).sum::<usize>()
            + self
                .forward
                .steps
                .iter()
                .chain(&self.backward.steps)
                .filter_map(|s| match s {
                    Step::Fused(f) => f.shared.as_ref(),
                    _ => None,
                })
                .map(|sh| sh.window.region_len::<Complex<T>>())
                .sum::<usize>()
    }

    /// Checks the caller's buffer lengths (in elements).
    fn check(input: usize, input_len: usize, output: usize, output_len: usize) -> Result<()> {
        if input != input_len {
            return Err(FftError::BufferLength {
                buffer: "input",
                expected: input_len,
                actual: input,
            });
        }
        if output != output_len {
            return Err(FftError::BufferLength {
                buffer: "output",
                expected: output_len,
                actual: output,
            });
        }
        Ok(())
    }

    /// Checks the caller's buffers (lengths in elements of their own types: complex, or
    /// real for the real side of a real plan) and runs one direction on scalar views of
    /// them: what every plan kind's `forward`, `backward` and `_destroying` calls do.
    pub(crate) fn transform<I: bytemuck::Pod, O: bytemuck::Pod>(
        &mut self,
        forward: bool,
        input: Source<'_, I>,
        output: &mut [O],
    ) -> Result<()> {
        let (input_len, output_len) = if forward {
            (self.input_len(), self.output_len())
        } else {
            (self.output_len(), self.input_len())
        };
        Self::check(input.len(), input_len, output.len(), output_len)?;
        let input = match input {
            Source::Read(s) => Source::Read(bytemuck::cast_slice(s)),
            Source::Write(s) => Source::Write(bytemuck::cast_slice_mut(s)),
        };
        self.execute(forward, input, bytemuck::cast_slice_mut(output))
    }

    /// Runs one direction on scalar views of the caller's blocks (lengths checked by the
    /// caller). Collective; allocates nothing. A read-only `input` on a plan made with
    /// `destroy_input` is refused (the same on every rank).
    fn execute(&mut self, forward: bool, mut input: Source<'_, T>, output: &mut [T]) -> Result<()> {
        if self.options.destroy_input && matches!(input, Source::Read(_)) {
            return Err(FftError::InputNotWritable {
                direction: if forward { "forward" } else { "backward" },
            });
        }
        let shared = self.shared_call(
            forward,
            input.get().as_ptr() as *const u8,
            output.as_ptr() as *const u8,
        );
        let input = &mut input;
        let program = if forward {
            &self.forward
        } else {
            &self.backward
        };
        let Buffers { work, send, recv } = &mut self.buffers;
        let work_windows = work.each_ref().map(|w| w.window_arc());
        let [w0, w1] = work;
        let mut work: [&mut [T]; 2] = [
            bytemuck::cast_slice_mut(&mut w0[..]),
            bytemuck::cast_slice_mut(&mut w1[..]),
        ];
        let send: &mut [T] = bytemuck::cast_slice_mut(&mut send[..]);
        let recv: &mut [T] = bytemuck::cast_slice_mut(&mut recv[..]);
        let workers = &mut self.workers;
        let times = &mut self.times;
        let steps = &program.steps;
        let dests = &program.dests;
        let last_transform = steps
            .iter()
            .rposition(|s| !matches!(s, Step::Exchange { .. }));
        let mut at = At::Input;
        let mut len = input.len();
        for (i, step) in steps.iter().enumerate() {
            let scale = if Some(i) == last_transform {
                program.scale
            } else {
                T::one()
            };
            match step {
                Step::Fft(local) => {
                    let t = Instant::now();
                    if at != dests[i] {
                        let (src, dst) = split(input, output, &mut work, at, dests[i]);
                        local.run(
                            as_complex_mut(&mut dst[..len]),
                            Some(as_complex(&src[..len])),
                            scale,
                            workers,
                        );
                        at = dests[i];
                    } else {
                        let data = place(input, output, &mut work, at);
                        local.run(as_complex_mut(&mut data[..len]), None, scale, workers);
                    }
                    times.fft += t.elapsed().as_secs_f64();
                }
                Step::Line { step, in_place } => {
                    let t = Instant::now();
                    let out_len = step.output_scalars();
                    if at != dests[i] {
                        debug_assert!(at == At::Input || !in_place);
                        let (src, dst) = split(input, output, &mut work, at, dests[i]);
                        step.run(&mut dst[..out_len], Some(&src[..len]), scale, workers);
                        at = dests[i];
                    } else {
                        let data = place(input, output, &mut work, at);
                        step.run(&mut data[..len], None, scale, workers);
                    }
                    len = out_len;
                    times.fft += t.elapsed().as_secs_f64();
                }
                Step::Planes(planes) => {
                    let t = Instant::now();
                    let out_len = planes.output_scalars();
                    // A source that is not the caller's untouchable input may be transformed
                    // in place on the way (a c2r's FFTs: no copy of each plane).
                    if at != At::Input || self.options.destroy_input {
                        let (src, dst) = split_mut(input, output, &mut work, at, dests[i]);
                        planes.run_writable(&mut dst[..out_len], &mut src[..len], scale, workers);
                    } else {
                        let (src, dst) = split(input, output, &mut work, at, dests[i]);
                        planes.run(&mut dst[..out_len], &src[..len], scale, workers);
                    }
                    at = dests[i];
                    len = out_len;
                    times.fft += t.elapsed().as_secs_f64();
                }
                Step::Exchange { index, real } => {
                    let exchange = &mut self.exchanges[*index];
                    let (src, dst) = split(input, output, &mut work, at, dests[i]);
                    if *real {
                        let (s, d) = (exchange.src_len(), exchange.dst_len());
                        debug_assert_eq!(s, len);
                        exchange.execute(&src[..s], &mut dst[..d], send, recv, times)?;
                        len = d;
                    } else {
                        let (s, d) = (exchange.src_len(), exchange.dst_len());
                        debug_assert_eq!(2 * s, len);
                        exchange.execute(
                            as_complex(&src[..2 * s]),
                            as_complex_mut(&mut dst[..2 * d]),
                            as_complex_mut(send),
                            as_complex_mut(recv),
                            times,
                        )?;
                        len = 2 * d;
                    }
                    at = dests[i];
                }
                Step::Fused(fused) => {
                    let last = fused
                        .after
                        .or(fused.before)
                        .expect("fused with an exchange");
                    // Scalars of the destination: the exchange's, or a c2r kernel's real block.
                    let dst_scalars = match (&fused.kernel, fused.after) {
                        (Kernel::Planes(kernel), None) => kernel.output_scalars(),
                        _ => 2 * self.exchanges[last].dst_len(),
                    };
                    let dst_len = dst_scalars / 2;
                    // Raw views: in place, source and destination are one buffer, which the
                    // pieces read and write in turn (see `Fused`). A real source or
                    // destination (r2c or c2r kernel) is cast to complex only for its address.
                    let (src, src_len, dst) = if fused.in_place && at == dests[i] {
                        let data = as_complex_mut(place(input, output, &mut work, at));
                        (data.as_mut_ptr(), len / 2, data.as_mut_ptr())
                    } else {
                        let (src, dst) = split(input, output, &mut work, at, dests[i]);
                        let dst = dst[..dst_scalars].as_mut_ptr() as *mut Complex<T>;
                        (src.as_ptr() as *mut Complex<T>, len / 2, dst)
                    };
                    // The caller's blocks in the plan's windows: rows straight between the
                    // ranks' blocks.
                    let window = |at: At| match at {
                        At::Input => shared[0].as_deref(),
                        At::Output => shared[1].as_deref(),
                        At::Work(k) => work_windows[k].as_deref(),
                    };
                    if let Some(direct) = &fused.direct {
                        debug_assert_eq!((direct.src, direct.dst), (at, dests[i]));
                        // Each side with an exchange must be a block in a window.
                        let from = fused.before.and(window(direct.src));
                        let to = fused.after.and(window(direct.dst));
                        if from.is_some() == fused.before.is_some()
                            && to.is_some() == fused.after.is_some()
                        {
                            run_direct(
                                fused,
                                direct,
                                (from, to),
                                (src, dst),
                                scale,
                                workers,
                                times,
                            )?;
                            at = dests[i];
                            len = dst_scalars;
                            continue;
                        }
                    }
                    let (send, recv) = (as_complex_mut(send), as_complex_mut(recv));
                    if let Some(shared) = &fused.shared {
                        let exchanges = &self.exchanges;
                        run_shared(
                            fused,
                            shared,
                            exchanges,
                            (src, src_len),
                            (dst, dst_len),
                            scale,
                            workers,
                            times,
                        )?;
                        at = dests[i];
                        len = dst_scalars;
                        continue;
                    }
                    for piece in &fused.pieces {
                        if let (Some(e), Some(m)) = (fused.before, &piece.before) {
                            let exchange = &mut self.exchanges[e];
                            let t = Instant::now();
                            // SAFETY: `src` holds `src_len` elements, not written meanwhile.
                            let src = unsafe { std::slice::from_raw_parts(src, src_len) };
                            exchange.pack_piece(m, src, send);
                            times.pack += t.elapsed().as_secs_f64();
                            let t = Instant::now();
                            exchange.communicate_piece(m, send, recv)?;
                            times.comm += t.elapsed().as_secs_f64();
                        }
                        // SAFETY: the run maps come from the exchanges' pieces for exactly
                        // these block and message lengths; the rows the gather names are only
                        // read and those the scatter names are disjoint; in place, every own
                        // row is read and written at the same offset by the same tile.
                        unsafe {
                            fused.sweep_piece(
                                piece,
                                (&fused.gather, src, recv.as_mut_ptr()),
                                (dst, send.as_mut_ptr()),
                                scale,
                                workers,
                                times,
                            )
                        };
                        if let (Some(e), Some(m)) = (fused.after, &piece.after) {
                            let exchange = &mut self.exchanges[e];
                            let t = Instant::now();
                            exchange.communicate_piece(m, send, recv)?;
                            times.comm += t.elapsed().as_secs_f64();
                            let t = Instant::now();
                            // SAFETY: `dst` holds `dst_len` elements; no other view of it is
                            // in use during the unpack.
                            let dst = unsafe { std::slice::from_raw_parts_mut(dst, dst_len) };
                            exchange.unpack_piece(m, recv, dst);
                            times.unpack += t.elapsed().as_secs_f64();
                        }
                    }
                    at = dests[i];
                    len = dst_scalars;
                }
            }
        }
        debug_assert_eq!(at, At::Output, "every transform ends in the output buffer");
        debug_assert_eq!(len, output.len());
        Ok(())
    }
}

/// The fused steps of both directions, in order.
fn fused_steps<'a, T: Real>(
    forward: &'a mut Program<T>,
    backward: &'a mut Program<T>,
) -> impl Iterator<Item = &'a mut Fused<T>> {
    forward
        .steps
        .iter_mut()
        .chain(backward.steps.iter_mut())
        .filter_map(|s| match s {
            Step::Fused(f) => Some(&mut **f),
            _ => None,
        })
}

/// Runs a fused step through its shared-memory window (see [`SharedPath`]): per piece, pack
/// the exchange before's messages into this rank's region, sync, transform gathering from
/// every region and scattering the exchange after's messages into this rank's region, sync,
/// unpack from every region; a step with one exchange syncs once more per piece, so nobody
/// overwrites a region that a peer still reads. `src` and `dst` are raw views as in
/// [`Engine::execute`].
#[allow(clippy::too_many_arguments)]
fn run_shared<T: Real>(
    fused: &Fused<T>,
    shared: &SharedPath,
    exchanges: &[Exchange],
    (src, src_len): (*mut Complex<T>, usize),
    (dst, dst_len): (*mut Complex<T>, usize),
    scale: T,
    workers: &mut [AlignedBuf<Complex<T>>],
    times: &mut StageTimes,
) -> Result<()>
where
    Complex<T>: redist::Element,
{
    let window = &shared.window;
    let own = window.own::<Complex<T>>();
    let region = window.region_len::<Complex<T>>();
    let one_sided = fused.before.is_none() || fused.after.is_none();
    for (k, piece) in fused.pieces.iter().enumerate() {
        if let (Some(e), Some(m)) = (fused.before, &piece.before) {
            let t = Instant::now();
            // SAFETY: `src` holds `src_len` elements, not written meanwhile; this rank's
            // region is not read by anyone until the sync below.
            let (src, send) = unsafe {
                (
                    std::slice::from_raw_parts(src, src_len),
                    std::slice::from_raw_parts_mut(own, region),
                )
            };
            exchanges[e].pack_piece(m, src, send);
            times.pack += t.elapsed().as_secs_f64();
            let t = Instant::now();
            window.sync()?;
            times.comm += t.elapsed().as_secs_f64();
        }
        // SAFETY: as in the message-buffer path; the peers' regions are only read, and this
        // rank's region (the exchange after's part of it) is written where no peer reads
        // until the next sync.
        unsafe {
            fused.sweep_piece(
                piece,
                (&shared.gather, src, window.base()),
                (dst, own.add(shared.after_offset)),
                scale,
                workers,
                times,
            )
        };
        if let (Some(e), Some(_)) = (fused.after, &piece.after) {
            let t = Instant::now();
            window.sync()?;
            times.comm += t.elapsed().as_secs_f64();
            let t = Instant::now();
            // SAFETY: nobody writes the window until the next sync; `dst` holds `dst_len`
            // elements and no other view of it is in use.
            let (all, dst) = unsafe {
                (
                    window.all::<Complex<T>>(),
                    std::slice::from_raw_parts_mut(dst, dst_len),
                )
            };
            exchanges[e].unpack_piece(&shared.unpacks[k], all, dst);
            times.unpack += t.elapsed().as_secs_f64();
        }
        if one_sided {
            let t = Instant::now();
            window.sync()?;
            times.comm += t.elapsed().as_secs_f64();
        }
    }
    Ok(())
}

/// Runs a fused step straight between the ranks' blocks (see [`Direct`]): sync, every plane
/// of this rank's block of the sweep, reading the exchange before's rows from the windows'
/// blocks (`from`, or the block `src`) and writing the exchange after's rows into them (`to`,
/// or the block `dst`), sync.
#[allow(clippy::too_many_arguments)]
fn run_direct<T: Real>(
    fused: &Fused<T>,
    direct: &Direct,
    (from, to): (Option<&BlockWindow>, Option<&BlockWindow>),
    (src, dst): (*mut Complex<T>, *mut Complex<T>),
    scale: T,
    workers: &mut [AlignedBuf<Complex<T>>],
    times: &mut StageTimes,
) -> Result<()> {
    let sync = |times: &mut StageTimes| -> Result<()> {
        let t = Instant::now();
        match (from, to) {
            (Some(a), Some(b)) if !std::ptr::eq(a, b) => {
                GroupWindow::sync_all(&[&a.window, &b.window])?
            }
            (Some(a), _) | (None, Some(a)) => a.window.sync()?,
            (None, None) => unreachable!("a fused step has an exchange"),
        }
        times.comm += t.elapsed().as_secs_f64();
        Ok(())
    };
    let inner = fused.kernel.row_len();
    let base = |w: Option<&BlockWindow>| w.map_or(std::ptr::null_mut(), |w| w.window.base());
    let rows = (
        Rows::from_map(&direct.gather, std::ptr::null_mut(), base(from), inner),
        Rows::from_map(&direct.scatter, std::ptr::null_mut(), base(to), inner),
    );
    sync(times)?;
    // SAFETY: the maps address every rank's block in the windows, whose regions hold them;
    // this rank reads and writes only the rows of its own block of the sweep's layout, which
    // no other rank touches between the two syncs (`prepare_direct` admits one buffer on
    // both sides only when every element stays where it is).
    unsafe { fused.sweep(0..fused.count, rows, (src, dst), scale, workers, times) };
    sync(times)
}

fn as_complex<T: Real>(s: &[T]) -> &[Complex<T>] {
    bytemuck::cast_slice(s)
}

fn as_complex_mut<T: Real>(s: &mut [T]) -> &mut [Complex<T>] {
    // Odd-length views (real buffers) are cut to whole complex elements.
    let even = s.len() / 2 * 2;
    bytemuck::cast_slice_mut(&mut s[..even])
}

/// The caller's input: read-only, or writable for a plan made with `destroy_input`.
pub(crate) enum Source<'a, T> {
    /// `forward`/`backward`: the steps only read it.
    Read(&'a [T]),
    /// `forward_destroying`/`backward_destroying`: the steps may use it as scratch.
    Write(&'a mut [T]),
}

impl<T> Source<'_, T> {
    fn len(&self) -> usize {
        match self {
            Source::Read(s) => s.len(),
            Source::Write(s) => s.len(),
        }
    }

    fn get(&self) -> &[T] {
        match self {
            Source::Read(s) => s,
            Source::Write(s) => s,
        }
    }

    fn get_mut(&mut self) -> &mut [T] {
        match self {
            Source::Write(s) => s,
            Source::Read(_) => unreachable!("a plan without destroy_input never writes its input"),
        }
    }
}

/// The mutable buffer at `at`.
fn place<'a, T>(
    input: &'a mut Source<'_, T>,
    output: &'a mut [T],
    work: &'a mut [&mut [T]; 2],
    at: At,
) -> &'a mut [T] {
    match at {
        At::Output => output,
        At::Work(k) => &mut *work[k],
        At::Input => input.get_mut(),
    }
}

/// The source buffer at `from` and the (different) destination buffer at `to`.
fn split<'a, T>(
    input: &'a mut Source<'_, T>,
    output: &'a mut [T],
    work: &'a mut [&mut [T]; 2],
    from: At,
    to: At,
) -> (&'a [T], &'a mut [T]) {
    match (from, to) {
        (At::Input, At::Output) => (input.get(), output),
        (At::Input, At::Work(k)) => (input.get(), &mut *work[k]),
        (from, to) => {
            let (src, dst) = split_mut(input, output, work, from, to);
            (src, dst)
        }
    }
}

/// [`split`] with the source writable too: the caller's input (as either buffer) only when
/// the plan may destroy it.
fn split_mut<'a, T>(
    input: &'a mut Source<'_, T>,
    output: &'a mut [T],
    work: &'a mut [&mut [T]; 2],
    from: At,
    to: At,
) -> (&'a mut [T], &'a mut [T]) {
    assert_ne!(from, to, "a moving step needs two buffers");
    let [w0, w1] = work;
    let mut own: [Option<&'a mut [T]>; 3] = [Some(output), Some(&mut **w0), Some(&mut **w1)];
    let mut take = |at: At| match at {
        At::Output => own[0].take(),
        At::Work(k) => own[1 + k].take(),
        At::Input => None,
    };
    match (from, to) {
        (At::Input, to) => (input.get_mut(), take(to).expect("a buffer")),
        (from, At::Input) => (take(from).expect("a buffer"), input.get_mut()),
        (from, to) => {
            let dst = take(to).expect("a buffer");
            (take(from).expect("a buffer"), dst)
        }
    }
}

/// One rank's block lengths (scalars) for [`schedule`]: after each step, of the output, and
/// of the input when the steps may write into it (`destroy_input`).
#[derive(Debug, Clone)]
struct RankLens {
    steps: Vec<usize>,
    output: usize,
    input: Option<usize>,
}

/// Where each step leaves the data (the same on every rank), and the lengths the two work
/// buffers of rank `me` need.
///
/// `moves[i]` says whether step `i` must write a new buffer (an exchange or an out-of-place
/// transform); `ranks[q]` holds rank `q`'s lengths. Without a writable input (or when
/// nothing else moves) the first step moves too (it reads the input and writes elsewhere).
/// Walking back from the end, the last mover writes the output and every earlier one the
/// first buffer that the mover after it does not write and that is long enough on every
/// rank, in the order output, input, work buffer 0, work buffer 1; the first mover never
/// writes the input, which it reads. A plan thus needs no work buffer when the output and a
/// writable input can host every layout in turn, one when only the output can (all of them,
/// for even splits), and two otherwise. With a writable input, the first step runs in place
/// in it or moves out of it, whichever needs less work memory on the rank that needs most.
///
/// The destinations depend on every rank's lengths only, never on which rank asks: the
/// fused steps move rows between the ranks' buffers of one kind and synchronize on those
/// buffers' windows, so every rank must hold the data in the same buffer.
fn schedule(moves: &[bool], ranks: &[RankLens], me: usize) -> (Vec<At>, [usize; 2]) {
    let writable = ranks.first().is_some_and(|r| r.input.is_some());
    let mut moves = moves.to_vec();
    if !writable || !moves.contains(&true) {
        if let Some(first) = moves.first_mut() {
            *first = true;
        }
    }
    let most = |dests: &[At]| {
        ranks
            .iter()
            .map(|r| {
                let [a, b] = work_lens(dests, &r.steps);
                a + b
            })
            .max()
            .unwrap_or(0)
    };
    let mut dests = assign(&moves, ranks);
    if let Some(first) = moves.first_mut() {
        if !*first {
            *first = true;
            let moved = assign(&moves, ranks);
            if most(&moved) < most(&dests) {
                dests = moved;
            }
        }
    }
    let lens = work_lens(&dests, ranks.get(me).map_or(&[][..], |r| &r.steps));
    (dests, lens)
}

/// The destinations for movers `moves` (see [`schedule`]).
fn assign(moves: &[bool], ranks: &[RankLens]) -> Vec<At> {
    let movers: Vec<usize> = (0..moves.len()).filter(|&i| moves[i]).collect();
    let mut assignment: Vec<(usize, At)> = Vec::with_capacity(movers.len());
    for (k, &i) in movers.iter().enumerate().rev() {
        let fits = |at: At| match at {
            At::Output => ranks.iter().all(|r| r.steps[i] <= r.output),
            At::Input => {
                k > 0
                    && ranks
                        .iter()
                        .all(|r| r.input.is_some_and(|len| r.steps[i] <= len))
            }
            At::Work(_) => true,
        };
        let at = match assignment.last() {
            None => At::Output,
            Some(&(_, next)) => [At::Output, At::Input, At::Work(0), At::Work(1)]
                .into_iter()
                .find(|&at| at != next && fits(at))
                .expect("two work buffers always do"),
        };
        assignment.push((i, at));
    }
    let mut dests = vec![At::Output; moves.len()];
    let mut current = At::Input;
    let mut next = assignment.iter().rev().peekable();
    for (i, dest) in dests.iter_mut().enumerate() {
        if let Some(&&(j, at)) = next.peek() {
            if j == i {
                current = at;
                next.next();
            }
        }
        *dest = current;
    }
    dests
}

/// The lengths the two work buffers need to host the blocks `lens` (after each step) at
/// `dests`.
fn work_lens(dests: &[At], lens: &[usize]) -> [usize; 2] {
    let mut work = [0, 0];
    for (&at, &len) in dests.iter().zip(lens) {
        if let At::Work(k) = at {
            work[k] = work[k].max(len);
        }
    }
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`schedule`] for one rank.
    fn schedule1(
        moves: &[bool],
        lens: &[usize],
        output: usize,
        input: Option<usize>,
    ) -> (Vec<At>, [usize; 2]) {
        let rank = RankLens {
            steps: lens.to_vec(),
            output,
            input,
        };
        schedule(moves, &[rank], 0)
    }

    #[test]
    fn one_work_buffer_when_the_output_fits_every_layout_it_hosts() {
        // FFT (reads input), exchange, FFT, exchange: output, work 0, work 0, output.
        let (dests, lens) = schedule1(&[true, true, false, true], &[8, 8, 8, 8], 8, None);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output]
        );
        assert_eq!(lens, [8, 0]);
    }

    #[test]
    fn two_work_buffers_when_an_intermediate_layout_is_bigger_than_the_output() {
        // A bigger intermediate layout in work buffer 0 is fine...
        let (dests, lens) = schedule1(&[true, true, false, true], &[8, 9, 9, 8], 8, None);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output]
        );
        assert_eq!(lens, [9, 0]);
        // ...but a layout too big for the output right before one in work buffer 0 needs the
        // second work buffer; the layout before it fits in the output again.
        let (dests, lens) = schedule1(&[true, true, false, true, true], &[8, 9, 9, 7, 8], 8, None);
        assert_eq!(
            dests,
            vec![
                At::Output,
                At::Work(1),
                At::Work(1),
                At::Work(0),
                At::Output
            ]
        );
        assert_eq!(lens, [7, 9]);
    }

    #[test]
    fn a_writable_input_hosts_layouts_that_fit_in_it() {
        // In-place FFT, out-of-place step, in-place FFT: the first FFT runs in the input, so
        // no work buffer (c2r backward: complex FFTs in the input, then c2r into the output).
        let (dests, lens) = schedule1(&[false, true, false], &[10, 6, 6], 6, Some(10));
        assert_eq!(dests, vec![At::Input, At::Output, At::Output]);
        assert_eq!(lens, [0, 0]);
        // Without destroy_input the first step moves the data out of the input.
        let (dests, lens) = schedule1(&[true, true, false], &[10, 6, 6], 6, None);
        assert_eq!(dests, vec![At::Work(0), At::Output, At::Output]);
        assert_eq!(lens, [10, 0]);
        // FFT, exchange, FFT, exchange, FFT (a pencil forward): in place in the input, the
        // first exchange could not write the input it reads, so the first FFT moves the data
        // to the output instead, and output and input alternate: no work buffer.
        let (dests, lens) = schedule1(&[false, true, false, true, false], &[8; 5], 8, Some(8));
        assert_eq!(
            dests,
            vec![At::Output, At::Input, At::Input, At::Output, At::Output]
        );
        assert_eq!(lens, [0, 0]);
        // The same read-only: output and work buffer 0 alternate.
        let (dests, lens) = schedule1(&[false, true, false, true, false], &[8; 5], 8, None);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output, At::Output]
        );
        assert_eq!(lens, [8, 0]);
        // A layout too big for the input goes to a work buffer.
        let (dests, lens) = schedule1(&[false, true, true], &[8, 9, 8], 8, Some(8));
        assert_eq!(dests, vec![At::Input, At::Work(0), At::Output]);
        assert_eq!(lens, [9, 0]);
    }

    #[test]
    fn every_rank_gets_the_same_buffers_whatever_its_lengths() {
        // Uneven splits: the first layout fits rank 0's output but not rank 1's. Deciding per
        // rank put rank 0's data in the output and rank 1's in a work buffer, and their fused
        // steps then synchronized on different windows (a hang).
        let moves = [true, true, true];
        let ranks = [
            RankLens {
                steps: vec![6, 7, 8],
                output: 8,
                input: None,
            },
            RankLens {
                steps: vec![8, 7, 6],
                output: 6,
                input: None,
            },
        ];
        let (d0, w0) = schedule(&moves, &ranks, 0);
        let (d1, w1) = schedule(&moves, &ranks, 1);
        assert_eq!(d0, d1, "the same buffers on every rank");
        assert_eq!(d0, vec![At::Work(1), At::Work(0), At::Output]);
        for (q, r) in ranks.iter().enumerate() {
            for (i, &at) in d0.iter().enumerate() {
                if at == At::Output {
                    assert!(r.steps[i] <= r.output, "rank {q} step {i} fits its output");
                }
            }
        }
        // Work buffers are sized for each rank's own blocks.
        assert_eq!((w0, w1), ([7, 6], [7, 8]));
        // One rank alone still takes the output where it fits.
        assert_eq!(schedule(&moves, &ranks[..1], 0).0[0], At::Output);
    }

    #[test]
    fn movers_alternate_and_the_last_lands_in_the_output() {
        for input_len in [None, Some(3), Some(1)] {
            for moves in [
                vec![true],
                vec![true, true],
                vec![false, true, false, true],
                vec![true, false, true, false, true, true],
            ] {
                let n = moves.len();
                for out_len in [1, 5] {
                    let (dests, _) = schedule1(&moves, &vec![3; n], out_len, input_len);
                    let what = format!("{moves:?} output {out_len} input {input_len:?}");
                    assert_eq!(dests[n - 1], At::Output, "{what}");
                    let mut prev = At::Input;
                    let mut moved = false;
                    for i in 0..n {
                        if moves[i] || (i == 0 && dests[0] != At::Input) {
                            assert_ne!(dests[i], prev, "{what} step {i}");
                            if !moved {
                                assert_ne!(dests[i], At::Input, "{what}: first mover");
                            }
                            moved = true;
                        } else {
                            assert_eq!(dests[i], prev, "{what} step {i}");
                        }
                        if input_len.is_none() {
                            assert_ne!(dests[i], At::Input, "{what}: read-only input");
                        }
                        prev = dests[i];
                    }
                }
            }
        }
    }

    #[test]
    fn batched_layouts_keep_one_box_per_peer() {
        use redist::GridShape;
        let grid = GridShape::new(vec![3]).unwrap();
        let p = crate::stages::pipeline(&[7, 5, 4], grid, false).unwrap();
        let from = batched(&p.layouts[0], 3).unwrap();
        let to = batched(&p.layouts[1], 3).unwrap();
        let plan = ExchangePlan::new(&from, &to).unwrap();
        for rank in 0..3 {
            let part = plan.for_rank(rank);
            assert_eq!(part.peers.len(), 3, "one message per peer");
            for peer in &part.peers {
                assert_eq!(peer.send_box.ranges[0], 0..3, "all fields in the message");
            }
            assert_eq!(from.local_len(rank), 3 * p.layouts[0].local_len(rank));
        }
    }
}
