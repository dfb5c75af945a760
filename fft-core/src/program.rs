//! A plan lowered for one rank ([`Program`]): plain data that the runner ([`crate::run`])
//! executes step by step and the model ([`crate::model`]) costs. [`crate::lower`] makes it
//! from the global problem alone; nothing here talks to MPI.

use crate::kernels::{LineStep, LocalFft, PlaneKernel, PlaneSteps, RunMap, Sweep};
use crate::memory::MemoryEstimate;
use crate::profile::{StepInfo, StepKind};
use crate::real::Real;
use redist::plan::RankExchange;
use redist::{ExchangePlan, Layout};
use std::hash::{Hash, Hasher};
use std::ops::Range;

/// Where the data of a transform is between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum At {
    Input,
    Work(usize),
    Output,
}

/// A step of one direction.
pub(crate) enum Step<T: Real> {
    /// Complex 1-D FFTs along one or more local axes of the current block, in place.
    Fft(LocalFft<T>),
    /// Any other 1-D transform (real, real-to-real, padded), in or out of place.
    Line { step: LineStep<T>, in_place: bool },
    /// Exchange `index` of [`Program::exchanges`]; `real`: the elements are scalars, else
    /// complex.
    Exchange { index: usize, real: bool },
    /// A kernel fused with the exchange before it, after it, or both ([`Fused`]).
    Fused(Box<Fused<T>>),
    /// An r2c step and FFTs along other trailing axes (or FFTs and a c2r step), one sub-block
    /// at a time in cache; out of place.
    Planes(PlaneSteps<T>),
}

impl<T: Real> Step<T> {
    /// The kind a step profile reports for this step.
    pub(crate) fn kind(&self) -> StepKind {
        match self {
            Step::Fft(_) => StepKind::Fft,
            Step::Line { .. } => StepKind::Line,
            Step::Planes(_) => StepKind::Planes,
            Step::Exchange { .. } => StepKind::Exchange,
            Step::Fused(_) => StepKind::Fused,
        }
    }
}

/// What a fused step computes between its exchanges.
pub(crate) enum Kernel<T: Real> {
    /// One strided sweep whose tiles read and write their rows through the run maps.
    Sweep(Sweep<T>),
    /// Whole planes transformed in cache, their rows written through the scatter map (FFTs,
    /// or r2c and FFTs, with an exchange after) or read through the gather map (FFTs, or FFTs
    /// and c2r, with an exchange before); with one exchange only.
    Planes(PlaneKernel<T>),
}

impl<T: Real> Kernel<T> {
    /// Elements per row: the run length of the run maps.
    pub(crate) fn row_len(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.row_len(),
            Kernel::Planes(p) => p.row_len(),
        }
    }

    /// Planes in the block.
    pub(crate) fn outer(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.outer(),
            Kernel::Planes(p) => p.outer(),
        }
    }

    /// Rows per plane.
    pub(crate) fn rows(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.len(),
            Kernel::Planes(p) => p.len(),
        }
    }

    /// Elements of one plane.
    pub(crate) fn plane_len(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.plane_len(),
            Kernel::Planes(p) => p.plane_len(),
        }
    }

    pub(crate) fn scratch_len(&self) -> usize {
        match self {
            Kernel::Sweep(s) => s.scratch_len(),
            Kernel::Planes(p) => p.scratch_len(),
        }
    }

    /// The memory position (of the kernel's layout; `shift` 1 with a batch axis) after which
    /// the positions make up a row: the same on every rank, whose rows may differ in length.
    pub(crate) fn row_position(&self, shift: usize) -> usize {
        match self {
            Kernel::Sweep(s) => s.position(),
            Kernel::Planes(_) => shift + 1,
        }
    }
}

/// A kernel whose rows come straight from where exchange `before` leaves them (the source
/// block for the rank's own part, the received messages for the rest; run map `gather`)
/// and go straight to where exchange `after` takes them (run map `scatter`; the destination
/// block for the own part, the messages to send for the rest). The layout in between is
/// never stored, and nothing is unpacked or packed in a pass of its own. Complex data only,
/// except that a [`Kernel::Planes`] reads or writes the block on its other side as it is (an
/// r2c kernel reads real planes, a c2r kernel writes them).
///
/// The exchanges move in pieces of a few planes of the kernel at a time (cut along the
/// slowest axis of the kernel's layout, which both exchanges scatter or gather): pack, move,
/// transform and move back one piece after another, so the message buffers hold one piece
/// (kept in cache between the copies) instead of a whole block. When the exchange after is
/// the exchange before reversed, the step may run in place: every row of the rank's own part
/// is read and written at the same place, and a piece's messages are packed before the rows
/// they came from are unpacked again.
pub(crate) struct Fused<T: Real> {
    pub before: Option<usize>,
    pub after: Option<usize>,
    pub kernel: Kernel<T>,
    /// Run maps over the whole block of the kernel; message offsets are into the buffers of
    /// the piece that moves the run.
    pub gather: RunMap,
    pub scatter: RunMap,
    /// The planes each piece moves (of every group), in order. Piece `k` of exchange `e` is
    /// its plan's piece `k` cut along `axis` into runs of `size` indices.
    pub pieces: Vec<Range<usize>>,
    /// The kernel's planes as `groups` (batch fields) of `count` planes each.
    pub groups: usize,
    pub count: usize,
    pub axis: usize,
    pub size: usize,
    /// Source and destination may be one buffer (the same on every rank).
    pub in_place: bool,
    /// Whether the pieces may move through a shared-memory window over the exchanges' group
    /// (used where the group is on one node).
    pub shared: bool,
    /// Complex elements of a shared-memory window region: the largest piece of the exchange
    /// before over all ranks (the same region layout everywhere), then this rank's largest
    /// piece of the exchange after.
    pub region: (usize, usize),
    /// Complex elements of the message buffers the pieces need without a window: the
    /// largest piece's sends and receives, both exchanges.
    pub messages: (usize, usize),
    /// Whether the step may move its rows straight between the ranks' blocks where every
    /// rank's source and destination lie in shared-memory windows (every rank's rows are
    /// whole runs of the peers' blocks; decided for all ranks alike).
    pub direct: bool,
}

/// One direction: its steps, where each leaves the data, and its scale.
pub(crate) struct Pass<T: Real> {
    pub steps: Vec<Step<T>>,
    /// What each step does, for the profile ([`crate::profile`]).
    pub info: Vec<StepInfo>,
    pub dests: Vec<At>,
    /// Where each step leaves the data in an in-place call (plans made with
    /// [`crate::FftOptions::in_place`]): the data starts and ends in [`At::Output`], the one
    /// buffer the caller passes, and [`At::Input`] is never used.
    pub in_place: Option<Vec<At>>,
    pub scale: T,
}

/// What an exchange of the plan moves: its plan, the layouts it connects (indices into
/// [`Program::layouts`]), and this rank's message lengths (elements: complex, or scalars
/// for a real exchange).
pub(crate) struct ExchangeStep {
    pub plan: ExchangePlan,
    pub ends: (usize, usize),
    pub send_len: usize,
    pub recv_len: usize,
}

/// One rank's plan lowered to plain data: both directions' steps with their kernels and
/// fused exchanges, and every buffer size.
pub(crate) struct Program<T: Real> {
    pub forward: Pass<T>,
    pub backward: Pass<T>,
    /// The pipeline's layouts with the batch axis (when batched).
    pub layouts: Vec<Layout>,
    pub exchanges: Vec<ExchangeStep>,
    /// Complex elements of the two work buffers on this rank, and the most any rank needs.
    pub work: [usize; 2],
    pub work_most: [usize; 2],
    /// Complex elements of one worker's scratch, and the workers (the most threads of any
    /// rank).
    pub scratch: usize,
    pub workers: usize,
    /// This rank's elements of the forward input and output (batch included).
    pub lens: (usize, usize),
    /// Scalars of this rank's buffer of an in-place call (0 without
    /// [`crate::FftOptions::in_place`]): the largest of its input block, its output block
    /// and, for a real-to-complex plan, its padded real rows.
    pub in_place_scalars: usize,
    /// A real-to-complex plan's real rows in an in-place call (FFTW's padded layout).
    pub padded: Option<PaddedRows>,
    /// Processes of the plan.
    pub ranks: usize,
    /// 1 with a batch axis (the slowest memory axis of every layout), else 0.
    pub shift: usize,
    /// This rank's rank.
    pub rank: usize,
    /// Scalars of this rank's forward input and output blocks (batch included).
    pub block_scalars: (usize, usize),
    /// Region lengths of the windows the plan's buffers lie in when they are shared (see
    /// [`Regions`]).
    pub regions: Regions,
}

/// Region lengths (complex elements) of the windows the plan's buffers lie in when they are
/// shared: the forward input's and output's blocks, and the two work buffers (`None`: no
/// window). The same on every rank: each rank's region is the largest block, in whole cache
/// lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Regions {
    pub input: usize,
    pub output: usize,
    pub work: [Option<usize>; 2],
}

impl Regions {
    /// The region length of the window buffer `at` lies in, in the forward (`forward`) or
    /// backward direction.
    pub(crate) fn of(&self, at: At, forward: bool) -> Option<usize> {
        match at {
            At::Input if forward => Some(self.input),
            At::Input => Some(self.output),
            At::Output if forward => Some(self.output),
            At::Output => Some(self.input),
            At::Work(k) => self.work[k],
        }
    }
}

/// A fused step's rows in the caller's blocks themselves, when every rank's blocks lie in one
/// shared-memory window per kind: `gather` (exchange before) maps each row of the kernel's
/// block to where it lies in the peers' (and this rank's) source blocks, `scatter` (exchange
/// after) to where it goes in their destination blocks, as offsets from region 0 of the
/// window of `src` or `dst`, the buffers the step reads and writes. Every rank reads and
/// writes only the rows of its own block of the kernel's layout, so the step needs one
/// synchronization before (the peers' source rows are written) and one after (its rows are
/// in their destination blocks), and nothing is packed or unpacked.
pub(crate) struct Direct {
    pub gather: RunMap,
    pub scatter: RunMap,
    pub src: At,
    pub dst: At,
}

/// How a fused step moves its pieces through a shared-memory window over the exchanges'
/// group, as lowering maps it for a window of `region` complex elements per member: a rank
/// packs (exchange before) or scatters (exchange after) its messages into its own region, and
/// every rank gathers (before) or unpacks (after) its peers' messages straight from their
/// regions. Region layout: the messages of the exchange before, then from `after_offset`
/// those of the exchange after.
pub(crate) struct SharedPlan {
    /// Like [`Fused::gather`], with message offsets into the whole window.
    pub gather: RunMap,
    /// Per piece, this rank's part of the exchange after, with receive offsets into the
    /// whole window.
    pub unpacks: Vec<RankExchange>,
    pub after_offset: usize,
}

/// The real block of a real-to-complex plan in an in-place buffer, FFTW's padded layout:
/// `rows` rows of `n` reals (the contiguous last axis, batch included; with untransformed
/// axes after the real-to-complex one, a row is the block of those axes, `n` and `padded`
/// both times their size), each starting `padded = 2·(n/2 + 1)` scalars after the one
/// before, so that the row's half spectrum fits in its bytes. The schedule itself runs on dense rows: an in-place call packs the
/// rows before the forward and spreads them after the backward, in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PaddedRows {
    pub rows: usize,
    pub n: usize,
    pub padded: usize,
}

impl PaddedRows {
    /// Moves the rows from the padded layout to dense rows at the start of `buffer`
    /// (ascending, so no row is overwritten before it moves).
    pub(crate) fn pack<T: Copy>(&self, buffer: &mut [T]) {
        for r in 1..self.rows {
            let from = r * self.padded;
            buffer.copy_within(from..from + self.n, r * self.n);
        }
    }

    /// Moves dense rows at the start of `buffer` to the padded layout (descending).
    pub(crate) fn spread<T: Copy>(&self, buffer: &mut [T]) {
        for r in (1..self.rows).rev() {
            let from = r * self.n;
            buffer.copy_within(from..from + self.n, r * self.padded);
        }
    }
}

/// Which copies of an exchange a fused kernel takes over: what the model charges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ExchangeFusion {
    /// The kernel after the exchange reads the received data and the own part in place.
    pub unpack: bool,
    /// The kernel before the exchange writes the messages and the own part in place.
    pub pack: bool,
    /// Pieces a fused exchange moves in, one collective call each (1: whole).
    pub pieces: usize,
    /// The fused step may move its pieces through a shared-memory window ([`Fused::shared`]):
    /// it does where the exchange's group lies on one node.
    pub shared: bool,
}

impl<T: Real> Program<T> {
    /// Both directions' steps, forward first.
    pub(crate) fn steps(&self) -> impl Iterator<Item = &Step<T>> {
        self.forward.steps.iter().chain(&self.backward.steps)
    }

    /// The fused steps of both directions, forward first.
    pub(crate) fn fused(&self) -> impl Iterator<Item = &Fused<T>> {
        self.steps().filter_map(|s| match s {
            Step::Fused(f) => Some(&**f),
            _ => None,
        })
    }

    /// Message buffer lengths (complex elements: send, receive) of every exchange not fused
    /// and of every fused step that moves its pieces through messages (`windowed(i)` says
    /// whether fused step `i`, counted as [`Program::fused`] does, has a shared-memory
    /// window instead).
    pub(crate) fn message_lens(&self, windowed: impl Fn(usize) -> bool) -> (usize, usize) {
        let mut fused = 0;
        let (mut send, mut recv) = (0, 0);
        for step in self.steps() {
            let (s, r) = match step {
                Step::Exchange { index, real } => {
                    let e = &self.exchanges[*index];
                    // Scalars of a real exchange in complex elements.
                    let complex = |len: usize| if *real { len.div_ceil(2) } else { len };
                    (complex(e.send_len), complex(e.recv_len))
                }
                Step::Fused(f) => {
                    fused += 1;
                    if windowed(fused - 1) {
                        (0, 0)
                    } else {
                        f.messages
                    }
                }
                _ => (0, 0),
            };
            send = send.max(s);
            recv = recv.max(r);
        }
        (send, recv)
    }

    /// What this rank holds, in bytes by purpose: the two work buffers, the message buffers
    /// of every exchange and fused step (and the regions of the shared-memory windows a fused
    /// step may move its pieces through instead), every worker's scratch, and the caller's
    /// input and output blocks. An upper bound of the plan's `work_len` (plus the blocks)
    /// whichever way its fused steps move.
    pub(crate) fn memory(&self) -> MemoryEstimate {
        let complex = (2 * std::mem::size_of::<T>()) as u64;
        let scalar = std::mem::size_of::<T>() as u64;
        let (send, recv) = self.message_lens(|_| false);
        let windows: usize = self
            .fused()
            .filter(|f| f.shared)
            .map(|f| f.region.0 + f.region.1)
            .sum();
        let elements = |n: usize| (n as u64).saturating_mul(complex);
        MemoryEstimate {
            work_bytes: elements(self.work[0]).saturating_add(elements(self.work[1])),
            message_bytes: elements(send + recv).saturating_add(elements(windows)),
            scratch_bytes: elements(self.workers.saturating_mul(self.scratch)),
            data_bytes: ((self.block_scalars.0 + self.block_scalars.1) as u64)
                .saturating_mul(scalar),
        }
    }

    /// Makes every run map of the program, and the `extra` maps of its routes, equal to an
    /// earlier one share it: an in-place pair's gather and scatter maps, and the forward's and
    /// backward's maps of the same exchanges, are often the same rows at the same offsets (a
    /// slab's fused pair: one map where there were six). Run maps have a row per row of a
    /// block, so this is most of a slab plan's memory besides its buffers.
    pub(crate) fn intern_maps<'a>(&'a mut self, extra: impl Iterator<Item = &'a mut RunMap>) {
        let mut seen: Vec<RunMap> = Vec::new();
        let mut intern = |map: &mut RunMap| {
            if map.is_empty() {
                return;
            }
            match seen.iter().find(|m| *m == map) {
                Some(m) => *map = m.clone(),
                None => seen.push(map.clone()),
            }
        };
        let Program {
            forward, backward, ..
        } = self;
        for step in forward.steps.iter_mut().chain(backward.steps.iter_mut()) {
            if let Step::Fused(fused) = step {
                intern(&mut fused.gather);
                intern(&mut fused.scatter);
            }
        }
        for map in extra {
            intern(map);
        }
    }

    /// A digest of every decision that decides which collective calls a rank makes and which
    /// buffers its peers' data lie in: the step sequence, the fused exchanges and their
    /// pieces, in-place steps, transports, and where each step leaves the data. Every rank
    /// must lower the same one.
    pub(crate) fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for pass in [&self.forward, &self.backward] {
            pass.dests.hash(&mut h);
            pass.in_place.hash(&mut h);
            for step in &pass.steps {
                match step {
                    Step::Fft(_) => 0u8.hash(&mut h),
                    Step::Line { in_place, .. } => (1u8, in_place).hash(&mut h),
                    Step::Exchange { index, real } => (2u8, index, real).hash(&mut h),
                    Step::Planes(_) => 3u8.hash(&mut h),
                    Step::Fused(f) => {
                        (4u8, f.before, f.after, f.pieces.len()).hash(&mut h);
                        (f.axis, f.size, f.in_place, f.shared, f.direct).hash(&mut h);
                        f.region.0.hash(&mut h);
                    }
                }
            }
        }
        self.workers.hash(&mut h);
        self.work_most.hash(&mut h);
        h.finish()
    }
}

/// Which copies of each of `exchanges` exchanges (forward first) a fused step among `steps`
/// does instead, and in how many pieces: what the model charges. From the fused steps
/// alone, so that the model needs only lowering's first stages (not the schedules, which
/// visit every rank).
pub(crate) fn exchange_fusions_of<'a, T: Real + 'a>(
    exchanges: usize,
    steps: impl Iterator<Item = &'a Step<T>>,
) -> Vec<ExchangeFusion> {
    let whole = ExchangeFusion {
        pieces: 1,
        ..Default::default()
    };
    let mut out = vec![whole; exchanges];
    for step in steps {
        let Step::Fused(f) = step else { continue };
        if let Some(b) = f.before {
            out[b].unpack = true;
            out[b].pieces = f.pieces.len();
            out[b].shared = f.shared;
        }
        if let Some(a) = f.after {
            out[a].pack = true;
            out[a].pieces = f.pieces.len();
            out[a].shared = f.shared;
        }
    }
    out
}
