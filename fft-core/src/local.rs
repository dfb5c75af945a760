//! Local 1-D FFT sweeps along one axis of a rank's block, in parallel over lines.
//!
//! A [`Sweep`] is planned once per (layout, axis): contiguous lines are transformed in place in
//! cache-sized batches; lines along a strided axis are gathered a tile at a time into the
//! worker's scratch, transformed there and scattered back, or transformed where they lie by
//! a column FFT (the private `column` module) where the length has one, in memory and in
//! cache alike. Each rayon worker owns one
//! scratch buffer made at plan time, so a sweep allocates nothing.

use crate::column::{ColumnFft, MAX_LEN};
use crate::options::R2rKind;
use crate::real::Real;
pub(crate) use crate::rows::Rows;
use crate::rows::{spread_apart, DigitSwap, RunMap};
use crate::transpose::{gather, scatter};
use num_complex::Complex;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealToComplex};
use redist::alloc::AlignedBuf;
use redist::pack::prefetch_run;
use rustfft::Fft;
use std::sync::Arc;

/// Most lines of a strided axis gathered per tile. Wide tiles matter: each row of a tile is
/// read and written as one run of that many elements, and short runs spread over many rows
/// leave the hardware prefetchers idle (a 256-line axis-0 sweep of a 128×256×256 block: 16
/// lines 53–70 ms, 64 lines 33–40 ms, contiguous lines 27–29 ms, CPU time on one core).
const TILE_LINES: usize = 64;
/// Fewest lines per tile, for very long axes.
const MIN_TILE_LINES: usize = 4;
/// Bytes of one tile to aim at (half of a 2 MiB L2 cache), which caps the lines of long axes.
const TILE_BYTES: usize = 1 << 20;

/// Lines per tile of a strided sweep along an axis of `n` elements.
fn tile_lines<T>(n: usize) -> usize {
    (TILE_BYTES / (n.max(1) * std::mem::size_of::<Complex<T>>())).clamp(MIN_TILE_LINES, TILE_LINES)
}
/// Most columns per task of a column FFT ([`crate::column`]). Each pass reads or writes 8–16
/// rows at once, a run of the task's columns from each, so wider tasks give the prefetchers
/// longer runs (an axis-0 sweep of 256³ in place on one core, CPU time: 64 columns 30 ms, 128
/// columns 25–27 ms, 256 columns 24–27 ms, against 34–36 ms for tiles of 64 lines).
const COLUMN_LINES: usize = 256;
/// Bytes of a column FFT's staging block to aim at (half of a 2 MiB L2 cache), which caps the
/// columns of long axes.
const COLUMN_BYTES: usize = 1 << 20;

/// Columns per task of a column FFT of length `n` (complex `f64`).
fn column_lines(n: usize) -> usize {
    (COLUMN_BYTES / (n.max(1) * 16)).clamp(4, COLUMN_LINES)
}

/// Complex elements of a worker's staging block for a column FFT along an axis of at most
/// `n` elements, whether or not the length has one: a bound for `memory`'s estimate.
pub(crate) fn column_staging_bound(n: usize) -> usize {
    // Every length up to MAX_LEN takes COLUMN_LINES columns, so the staging grows with `n`.
    let n = n.min(MAX_LEN);
    crate::column::staging_len(n, column_lines(n))
}

/// Target elements per batch of contiguous lines (fits in L2 for complex f64).
const BATCH_ELEMENTS: usize = 1 << 14;

/// Distance in elements between the lines of a strided sweep's tile: the line length padded
/// by two cache lines, so that lines of a power-of-two length do not all fall into the same
/// cache set (the gather writes, and the scatter reads, one element of every line in turn).
fn tile_stride<T>(n: usize) -> usize {
    let per_line = (64 / std::mem::size_of::<Complex<T>>()).max(1);
    n + 2 * per_line
}

/// Rows ahead of the one being copied that a strided tile's gather and scatter prefetch (one
/// or two ahead were 9-10 % faster than none on axis-0 sweeps of 128³-256³ blocks, eight
/// ahead slower: rows a power of two apart then evict each other from L1 before use).
pub(crate) const PREFETCH_ROWS: usize = 2;

/// One worker's share of a contiguous sweep: (index, (its lines, its scratch)).
type WorkerChunk<'a, T> = (
    usize,
    (&'a mut [Complex<T>], &'a mut AlignedBuf<Complex<T>>),
);

/// Where the lines lie in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `lines` consecutive lines of length `n`.
    Contiguous { lines: usize },
    /// Memory shape `[outer, n, inner]`: lines have stride `inner`.
    Strided { outer: usize, inner: usize },
}

/// How a strided task's column FFT reaches its rows (the `column` module's two forms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Through {
    /// Through the worker's staging block: in place, or mapped rows that may overlap.
    Staging,
    /// Straight through the destination rows: out of place (no source row is a destination
    /// row), no staging.
    Destination,
    /// Straight through the destination rows, in place, no staging: each plane's rows come
    /// digit-swapped (element `i` of a column in row [`ColumnFft::swapped`]`(i)`) and leave
    /// in order.
    Swapped,
}

/// A planned sweep of 1-D FFTs along one axis of a local block: the building block of
/// [`crate::FftPlan`], usable alone for local transforms.
///
/// ```
/// use fft_core::local::Sweep;
/// use num_complex::Complex;
/// use redist::alloc::AlignedBuf;
/// use rustfft::FftPlanner;
/// // A 4×8 block in C order: transform along axis 0 (strided, memory position 0).
/// let fft = FftPlanner::<f64>::new().plan_fft_forward(4);
/// let sweep = Sweep::new(fft, &[4, 8], 0);
/// let mut data = vec![Complex::new(1.0, 0.0); 32];
/// // Scratch per worker thread, on cache lines (rows in it stay aligned like the block's).
/// let mut workers = [AlignedBuf::new(sweep.scratch_len()), AlignedBuf::new(sweep.scratch_len())];
/// sweep.run(&mut data, None, 1.0, &mut workers);
/// assert_eq!(data[0], Complex::new(4.0, 0.0)); // DC of a column of ones
/// assert_eq!(data[8], Complex::new(0.0, 0.0));
/// ```
#[derive(Clone)]
pub struct Sweep<T: Real> {
    fft: Arc<dyn Fft<T>>,
    n: usize,
    shape: Shape,
    position: usize,
    /// The column FFT that transforms a strided sweep's rows where they lie instead of
    /// gathering them into tiles, where this length and element have one ([`crate::column`]).
    column: Option<Arc<ColumnFft>>,
}

impl<T: Real> Sweep<T> {
    /// A sweep with `fft` along the axis at memory position `position` of a block with
    /// memory shape `memory_shape` (slowest first).
    pub fn new(fft: Arc<dyn Fft<T>>, memory_shape: &[usize], position: usize) -> Self {
        let n = memory_shape[position];
        let outer: usize = memory_shape[..position].iter().product();
        let inner: usize = memory_shape[position + 1..].iter().product();
        let shape = if inner == 1 {
            Shape::Contiguous { lines: outer }
        } else {
            Shape::Strided { outer, inner }
        };
        let column = match shape {
            Shape::Strided { .. } => ColumnFft::new(&*fft, std::mem::size_of::<T>()).map(Arc::new),
            Shape::Contiguous { .. } => None,
        };
        Self {
            fft,
            n,
            shape,
            position,
            column,
        }
    }

    /// Length of the lines.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Memory position of the swept axis.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// Planes of a strided sweep (the product of the memory axes before the swept one); lines
    /// of a contiguous one.
    pub(crate) fn outer(&self) -> usize {
        match self.shape {
            Shape::Strided { outer, .. } => outer,
            Shape::Contiguous { lines } => lines,
        }
    }

    /// Elements of one plane (line length times [`Sweep::row_len`]).
    pub(crate) fn plane_len(&self) -> usize {
        self.n * self.row_len()
    }

    /// Columns per task of a strided sweep: a column FFT's columns where this length has
    /// one, else a tile's lines.
    fn lines(&self) -> usize {
        match self.column {
            Some(_) => column_lines(self.n),
            None => tile_lines::<T>(self.n),
        }
    }

    /// Scratch elements one worker needs for this sweep.
    pub fn scratch_len(&self) -> usize {
        self.scratch_len_through(Through::Staging)
    }

    /// Scratch elements one worker needs for this sweep when its column FFT (if any) runs
    /// `through` that way: only the staging form needs a staging block.
    fn scratch_len_through(&self, through: Through) -> usize {
        let fft_scratch = self.fft.get_inplace_scratch_len();
        match self.shape {
            Shape::Contiguous { .. } => fft_scratch,
            // A task is at most a row wide.
            Shape::Strided { inner, .. } => match &self.column {
                Some(column) if through == Through::Staging => {
                    column.staging_len(self.lines().min(inner))
                }
                Some(_) => 0,
                None => fft_scratch + self.lines().min(inner) * tile_stride::<T>(self.n),
            },
        }
    }

    /// Transforms one task of a strided sweep: the lines `c0..c0 + lines` (clipped) of plane
    /// `o`, where `task = o · blocks + c0 / lines`, `blocks = ⌈inner / lines⌉` and `lines` is
    /// [`Sweep::lines`]. Row `i` of plane `o`
    /// (the run of `inner` elements at line position `i`) is read from `from.row(o · n + i)`
    /// and written to `to.row(o · n + i)`, scaled on the way. Where this length has a column
    /// FFT, it transforms the rows where they are (the `column` module), whatever their
    /// alignment (a vector across two cache lines costs two accesses, still less than a
    /// tile's two copies: item 21 of docs/performance.md); otherwise the lines are
    /// gathered into a tile (one line every [`tile_stride`] elements, by
    /// [`crate::transpose`]'s 4 × 4 blocks where it can), transformed there and scattered.
    ///
    /// # Safety
    /// Every row `from` and `to` name for this task is valid for `inner` elements; rows that
    /// `to` names for different tasks' columns are not touched by anyone else meanwhile, and
    /// `from`'s rows are not written by anyone meanwhile (they may be `to`'s own rows, as in
    /// an in-place sweep, since a tile is gathered before it is scattered, and a column FFT
    /// reads every row before it writes one).
    ///
    /// `through` says how a column FFT reaches the rows; with [`Through::Swapped`], row `i` of
    /// the plane is read from `from.row(o · n + swapped(i))`, which must be `to`'s same row.
    #[allow(clippy::too_many_arguments)]
    unsafe fn strided_task(
        &self,
        from: Rows<'_, T>,
        to: Rows<'_, T>,
        inner: usize,
        lines: usize,
        task: usize,
        scale: Option<T>,
        scratch: &mut [Complex<T>],
        through: Through,
    ) {
        let n = self.n;
        let stride = tile_stride::<T>(n);
        let blocks = inner.div_ceil(lines);
        let (o, block) = (task / blocks, task % blocks);
        let c0 = block * lines;
        let width = lines.min(inner - c0);
        if let Some(column) = self.column.as_deref() {
            // A column FFT exists only for complex f64 of at most MAX_LEN (`Sweep::new`), so
            // `T` is `f64` and the rows fit.
            debug_assert!(n <= MAX_LEN && std::mem::size_of::<T>() == 8);
            let mut rows_in = [std::ptr::null::<Complex<f64>>(); MAX_LEN];
            let mut rows_out = [std::ptr::null_mut::<Complex<f64>>(); MAX_LEN];
            for i in 0..n {
                let at = match through {
                    Through::Swapped => column.swapped(i),
                    Through::Staging | Through::Destination => i,
                };
                rows_in[i] = from.row(o * n + at).add(c0) as *const Complex<f64>;
                rows_out[i] = to.row(o * n + i).add(c0) as *mut Complex<f64>;
            }
            let scale = scale.map(|s| s.to_f64().expect("a finite scale"));
            if through == Through::Staging {
                let staging = std::slice::from_raw_parts_mut(
                    scratch.as_mut_ptr() as *mut Complex<f64>,
                    scratch.len(),
                );
                column.run(&rows_in[..n], &rows_out[..n], width, scale, staging);
            } else {
                // SAFETY (run_direct's extra condition): `Destination` is out of place, and
                // `Swapped` reads row `swapped(i)` of `to` itself as element `i`.
                column.run_direct(&rows_in[..n], &rows_out[..n], width, scale);
            }
            return;
        }
        debug_assert!(
            through != Through::Swapped,
            "only column FFTs take swapped rows"
        );
        let (tile, fft_scratch) = scratch.split_at_mut(lines.min(inner) * stride);
        let src = |i| from.row(o * n + i).add(c0) as *const _;
        gather(src, n, width, tile.as_mut_ptr(), stride);
        for c in 0..width {
            let line = &mut tile[c * stride..c * stride + n];
            self.fft.process_with_scratch(line, fft_scratch);
        }
        let dst = |i| to.row(o * n + i).add(c0);
        scatter(tile.as_ptr(), stride, n, width, dst, scale);
    }

    /// One plane of this strided sweep on the calling thread, through the staging block:
    /// row `i` read from `from.row(i)` and written to `to.row(i)`, scaled by `scale`.
    ///
    /// # Safety
    /// As for [`Sweep::strided_task`], for every task of plane 0.
    unsafe fn run_plane(
        &self,
        from: Rows<'_, T>,
        to: Rows<'_, T>,
        scale: Option<T>,
        scratch: &mut [Complex<T>],
    ) {
        // SAFETY: the caller's contract.
        unsafe { self.run_plane_through(from, to, scale, scratch, Through::Staging) }
    }

    /// [`Sweep::run_plane`], the column FFT going `through` the given way (see
    /// [`Sweep::strided_task`]).
    ///
    /// # Safety
    /// As for [`Sweep::strided_task`], for every task of plane 0.
    unsafe fn run_plane_through(
        &self,
        from: Rows<'_, T>,
        to: Rows<'_, T>,
        scale: Option<T>,
        scratch: &mut [Complex<T>],
        through: Through,
    ) {
        let Shape::Strided { inner, .. } = self.shape else {
            panic!("run_plane needs a strided sweep");
        };
        let lines = self.lines();
        for task in 0..inner.div_ceil(lines) {
            // SAFETY: the caller's contract.
            unsafe { self.strided_task(from, to, inner, lines, task, scale, scratch, through) };
        }
    }

    /// Whether this sweep runs along a strided axis (lines gathered into tiles), the only
    /// kind [`Sweep::run_mapped`] takes.
    pub(crate) fn is_strided(&self) -> bool {
        matches!(self.shape, Shape::Strided { .. }) && self.n > 0
    }

    /// Elements per row of a strided sweep (the product of the memory axes after the swept
    /// one): the run length of the row maps [`Sweep::run_mapped`] takes.
    pub(crate) fn row_len(&self) -> usize {
        match self.shape {
            Shape::Strided { inner, .. } => inner,
            Shape::Contiguous { .. } => 1,
        }
    }

    /// A strided sweep whose rows are read from `from` and written to `to` instead of one
    /// block in place: with run maps of the exchanges around it, the sweep reads its lines
    /// straight from where an exchange leaves them and writes them straight to where the next
    /// one takes them, so neither unpacks nor packs in a pass of its own. In parallel over
    /// tiles, like [`Sweep::run`].
    ///
    /// # Safety
    /// The sweep is strided; `from` and `to` each name `outer · n` rows of `inner` valid
    /// elements, the rows `to` names are disjoint, and no row of `from` overlaps one of `to`
    /// unless it is the same row (an in-place sweep).
    pub(crate) unsafe fn run_mapped(
        &self,
        from: Rows<'_, T>,
        to: Rows<'_, T>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
        planes: &Planes,
    ) {
        let Shape::Strided { outer, inner } = self.shape else {
            panic!("run_mapped needs a strided sweep");
        };
        debug_assert_eq!(planes.groups * planes.count, outer);
        let scale = (scale != T::one()).then_some(scale);
        let blocks = inner.div_ceil(self.lines());
        let tasks = planes.tasks(blocks);
        let nworkers = workers.len();
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            for t in tasks * w / nworkers..tasks * (w + 1) / nworkers {
                let (plane, block) = planes.task(t, blocks);
                let task = plane * blocks + block;
                // SAFETY: the caller's contract; tasks cover disjoint (plane, column-block)
                // sets, so workers write disjoint elements.
                unsafe {
                    self.strided_task(
                        from,
                        to,
                        inner,
                        self.lines(),
                        task,
                        scale,
                        scratch,
                        Through::Staging,
                    )
                };
            }
        });
    }

    /// Transforms `data` (one block of this sweep's memory shape) in place on the calling
    /// thread, with one worker's `scratch`. `input` and `scale` as in [`Sweep::run`].
    fn run_serial(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: Option<T>,
        scratch: &mut [Complex<T>],
        through: Through,
    ) {
        let n = self.n;
        if n == 0 || data.is_empty() {
            return;
        }
        let fft = &*self.fft;
        match self.shape {
            Shape::Contiguous { .. } => {
                let batch = (BATCH_ELEMENTS / n).max(1) * n;
                for (b, lines) in data.chunks_mut(batch).enumerate() {
                    if let Some(input) = input {
                        let from = b * batch;
                        lines.copy_from_slice(&input[from..from + lines.len()]);
                    }
                    fft.process_with_scratch(lines, scratch);
                    if let Some(s) = scale {
                        crate::transpose::scale(lines, s);
                    }
                }
            }
            Shape::Strided { outer, inner } => {
                // In cache, through a staging block even from an input where one is at hand
                // (`through`): straight through the destination (pass 2 in place over 16 rows
                // 2-4 KiB apart, which share L1 sets) was slower (128³ on one rank 0.0226 →
                // 0.029 s per pair), and narrower tasks, a quarter of the staging, slower too
                // (256³ 0.236 → 0.253 s, 250×256×243 0.353 → 0.39 s).
                debug_assert!(through != Through::Destination || input.is_some());
                let lines = self.lines();
                let (from, to) = Rows::in_or_out(data, input, inner);
                for task in 0..outer * inner.div_ceil(lines) {
                    // SAFETY: `data` holds outer·n·inner elements and is borrowed mutably;
                    // `from` is the input (only read, same length) or `data` itself.
                    unsafe {
                        self.strided_task(from, to, inner, lines, task, scale, scratch, through)
                    };
                }
            }
        }
    }

    /// Transforms `data` in place. With `input`, the lines are first copied from it (for
    /// contiguous lines the copy is fused with the transform, batch by batch, while the batch
    /// is in cache). Every element is multiplied by `scale` when it is not one. `workers` holds
    /// one scratch buffer of at least [`Sweep::scratch_len`] elements per parallel worker (on a
    /// cache line, like the rows of the planes and tiles it holds); the lines are split among
    /// them (rayon), so nothing is allocated.
    pub fn run(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        self.run_through(data, input, scale, workers, false);
    }

    /// [`Sweep::run`]; with `swapped` (in place, a column FFT, one plane), element `i` of
    /// each column comes in row [`ColumnFft::swapped`]`(i)` and leaves in row `i`, and the
    /// workers need no staging block.
    fn run_through(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
        swapped: bool,
    ) {
        if self.n == 0 || data.is_empty() {
            return;
        }
        let n = self.n;
        let fft = &*self.fft;
        let scale = (scale != T::one()).then_some(scale);
        match self.shape {
            Shape::Contiguous { lines } => {
                let per_worker = lines.div_ceil(workers.len()).max(1) * n;
                let batch = (BATCH_ELEMENTS / n).max(1) * n;
                let work = |(chunk_index, (chunk, scratch)): WorkerChunk<'_, T>| {
                    let start = chunk_index * per_worker;
                    for (b, lines) in chunk.chunks_mut(batch).enumerate() {
                        if let Some(input) = input {
                            let from = start + b * batch;
                            lines.copy_from_slice(&input[from..from + lines.len()]);
                        }
                        fft.process_with_scratch(lines, scratch);
                        if let Some(s) = scale {
                            crate::transpose::scale(lines, s);
                        }
                    }
                };
                data.par_chunks_mut(per_worker)
                    .zip(workers.par_iter_mut())
                    .enumerate()
                    .for_each(work);
            }
            Shape::Strided { outer, inner } => {
                let lines = self.lines();
                let tasks = outer * inner.div_ceil(lines);
                let nworkers = workers.len();
                assert_eq!(data.len(), outer * n * inner);
                // From an input, through the staging block too: straight through the
                // destination, pass 2 in place over rows a power of two apart, which share
                // L1 sets, was slower (256×16384 on one rank 0.061–0.062 → 0.064–0.066 s).
                let through = match (swapped, input) {
                    (true, None) => Through::Swapped,
                    _ => Through::Staging,
                };
                debug_assert!(through != Through::Swapped || self.column.is_some());
                // With an input, the tiles gather from it directly (no copy first).
                let (from, to) = Rows::in_or_out(data, input, inner);
                workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
                    let first = tasks * w / nworkers;
                    let last = tasks * (w + 1) / nworkers;
                    for task in first..last {
                        // SAFETY: tasks cover disjoint (outer, column-block) sets, so workers
                        // touch disjoint elements of the block of outer·n·inner elements;
                        // `from` is the input (only read) or `data` itself.
                        unsafe {
                            self.strided_task(from, to, inner, lines, task, scale, scratch, through)
                        };
                    }
                });
            }
        }
    }
}

/// Which planes of a strided sweep to run: the sweep's planes are `groups` groups of `count`
/// consecutive planes each (e.g. fields of a batch), and `range` picks the same planes of
/// every group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planes {
    pub groups: usize,
    pub count: usize,
    pub range: std::ops::Range<usize>,
}

impl Planes {
    /// Tasks of these planes, `blocks` per plane.
    fn tasks(&self, blocks: usize) -> usize {
        self.groups * self.range.len() * blocks
    }

    /// The plane (among all the sweep's planes) and the block of task `t`.
    fn task(&self, t: usize, blocks: usize) -> (usize, usize) {
        let per_group = self.range.len() * blocks;
        let (group, rest) = (t / per_group, t % per_group);
        (
            group * self.count + self.range.start + rest / blocks,
            rest % blocks,
        )
    }
}

#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);
// SAFETY: workers write disjoint elements (see `LineStep::run`).
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}
impl<T> SharedMut<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

/// Several sweeps over the same block, along axes that occupy the trailing memory positions
/// (the local axes of the first pencil). The sweeps along the fastest of these axes split the
/// block into independent sub-blocks (one per index of the slower memory positions); when
/// there are enough of them, each worker runs those sweeps on one sub-block after another
/// while it is in cache, and only the remaining (slowest) axes stream the whole block through
/// memory, one sweep each. Sweeps along different axes commute, so the in-cache group runs
/// first.
pub(crate) struct LocalFft<T: Real> {
    /// Sweeps over the whole block, in the order given.
    whole: Vec<Sweep<T>>,
    /// The sweeps along memory positions `first..` over one sub-block.
    fused: Vec<Sweep<T>>,
    /// The sweeps along positions before `first`, over the whole block.
    rest: Vec<Sweep<T>>,
    sub_len: usize,
    blocks: usize,
    /// Whether the in-cache group, from an input, writes its sub-blocks digit-swapped for
    /// the one sweep left (along memory position 0, one sub-block per element, a column
    /// FFT), so that sweep runs in place without a staging block (`crate::column`).
    swap: bool,
    /// Whether the in-cache group, from an input, can borrow two output sub-blocks not yet
    /// written as its first sweep's staging block (see [`LocalFft::borrowed_pair`]): that
    /// sweep is a column FFT, the others contiguous, and two sub-blocks hold its staging.
    borrow: bool,
    /// Whether the step, in place, finds each sub-block's rows digit-swapped (the fused step
    /// before wrote them so, [`LocalFft::swappable_rows`]): its sweep across them then runs
    /// in place with no staging block.
    rows_swapped: bool,
}

impl<T: Real> LocalFft<T> {
    /// Sweeps with `ffts[i]` along memory position `positions[i]` of a block of
    /// `memory_shape`; the positions must be the trailing ones (in any order). The in-cache
    /// group is sized for the current rayon pool (at least two sub-blocks per thread).
    pub(crate) fn new(
        ffts: Vec<Arc<dyn Fft<T>>>,
        memory_shape: &[usize],
        positions: &[usize],
    ) -> Self {
        // A contiguous sweep (the last memory position) given first goes second instead
        // (sweeps along different axes commute): from an input, the first sweep reads it as
        // it transforms, a strided one in its column FFT's first pass, where a contiguous one
        // copies the lines first (256³ c2c on 2 ranks: 0.069–0.072 → 0.066–0.068 s per
        // pair). A swap of the first two keeps the order of the axes the same however the
        // sweeps split into the in-cache group and the rest, so a batch stays bit-identical
        // to its fields transformed one by one.
        let (mut ffts, mut positions) = (ffts, positions.to_vec());
        if positions.len() >= 2 && positions[0] + 1 == memory_shape.len() {
            ffts.swap(0, 1);
            positions.swap(0, 1);
        }
        let positions = &positions[..];
        let lowest = *positions.iter().min().expect("at least one sweep");
        let mut sorted = positions.to_vec();
        sorted.sort_unstable();
        // Fusion needs the swept axes to be exactly the trailing memory positions.
        let trailing = sorted.iter().copied().eq(lowest..memory_shape.len());
        let wanted = 2 * rayon::current_num_threads().max(1);
        let first = if trailing {
            (lowest..memory_shape.len())
                .find(|&p| memory_shape[..p].iter().product::<usize>() >= wanted)
                .unwrap_or(memory_shape.len())
        } else {
            memory_shape.len()
        };
        let sub_shape = &memory_shape[first..];
        let whole = ffts
            .iter()
            .zip(positions)
            .map(|(f, &p)| Sweep::new(f.clone(), memory_shape, p))
            .collect();
        let fused: Vec<Sweep<T>> = ffts
            .iter()
            .zip(positions)
            .filter(|(_, &p)| p >= first)
            .map(|(f, &p)| Sweep::new(f.clone(), sub_shape, p - first))
            .collect();
        let rest: Vec<Sweep<T>> = ffts
            .iter()
            .zip(positions)
            .filter(|(_, &p)| p < first)
            .map(|(f, &p)| Sweep::new(f.clone(), memory_shape, p))
            .collect();
        let blocks: usize = memory_shape[..first].iter().product();
        let swap = match rest.as_slice() {
            [last] => first == 1 && last.column.is_some() && last.n == blocks,
            _ => false,
        };
        let sub_len: usize = sub_shape.iter().product();
        let borrow = match fused.split_first() {
            Some((first, others)) => {
                first.column.is_some()
                    && others.iter().all(|s| !s.is_strided())
                    && first.scratch_len_through(Through::Staging) <= 2 * sub_len
            }
            None => false,
        };
        Self {
            whole,
            fused,
            rest,
            sub_len,
            blocks,
            swap,
            borrow,
            rows_swapped: false,
        }
    }

    /// When the step could take each sub-block's rows digit-swapped, in place, with
    /// `workers` workers: the in-cache group's first sweep runs across the sub-block's rows
    /// as a column FFT and the others along them, and the rows are [`spread_apart`] (else
    /// the staging block is faster: 4 % of a 128³ transposed pair). Then `(rows per sub-block, elements per
    /// row, the swap)`: a step before that writes the rows so (see
    /// [`RunMap::swap_rows`]) lets the sweep across run in place with no staging block
    /// ([`LocalFft::take_swapped_rows`]).
    pub(crate) fn swappable_rows(&self, workers: usize) -> Option<(usize, usize, DigitSwap)> {
        let (across, along) = self.fused.split_first()?;
        let column = across.column.as_deref()?;
        let row_bytes = self.sub_len / across.n.max(1) * std::mem::size_of::<Complex<T>>();
        let fits = self.in_cache(workers)
            && spread_apart(row_bytes)
            && across.position == 0
            && across.is_strided()
            && along.iter().all(|s| !s.is_strided());
        fits.then(|| (across.n, self.sub_len / across.n, column.digit_swap()))
    }

    /// Lets the step, run in place only, take its sub-blocks' rows digit-swapped
    /// ([`LocalFft::swappable_rows`]).
    pub(crate) fn take_swapped_rows(&mut self) {
        self.rows_swapped = true;
    }

    /// Where the in-cache group writes sub-block `b`: `swapped(b)` when the sweep left takes
    /// its rows digit-swapped (from an input, `swap`), else `b`.
    fn target(&self, swap: bool, b: usize) -> usize {
        match self.rest.first().and_then(|s| s.column.as_deref()) {
            Some(column) if swap => column.swapped(b),
            _ => b,
        }
    }

    /// Two sub-blocks of a worker's `range`, the range's last and one whose target lies just
    /// before or after its target (lower target first), when the range has at least three:
    /// the worker runs them last, and until then the two output sub-blocks they will fill,
    /// one after the other in memory, serve as its first sweep's staging block; the pair
    /// itself goes straight through the destination, from the input.
    fn borrowed_pair(&self, swap: bool, range: std::ops::Range<usize>) -> Option<(usize, usize)> {
        if !self.borrow || range.len() < 3 {
            return None;
        }
        let last = range.end - 1;
        let t = self.target(swap, last);
        range
            .rev()
            .skip(1)
            .find_map(|b| match self.target(swap, b) {
                u if u + 1 == t => Some((b, last)),
                u if u == t + 1 => Some((last, b)),
                _ => None,
            })
    }

    /// Worker `w`'s range of sub-blocks in the in-cache group, of `workers`.
    fn range(&self, w: usize, workers: usize) -> std::ops::Range<usize> {
        self.blocks * w / workers..self.blocks * (w + 1) / workers
    }

    /// Whether [`LocalFft::run`] takes the in-cache group with `workers` workers.
    fn in_cache(&self, workers: usize) -> bool {
        self.fused.len() >= 2 && self.blocks >= 2 * workers && self.sub_len > 0
    }

    /// Scratch elements one worker needs, when the step reads an input (`from_input`) or
    /// runs in place: from an input, the in-cache group's column FFT stages in the output
    /// and the axis-0 sweep left needs no staging (see `swap` and `borrow`).
    pub(crate) fn scratch_len(&self, from_input: bool, workers: usize) -> usize {
        if !self.in_cache(workers) {
            return self.whole.iter().map(Sweep::scratch_len).max().unwrap_or(0);
        }
        // The in-cache group through staging blocks (borrowed from the output where every
        // worker can), then the sweeps left, the one along position 0 on digit-swapped rows
        // from an input.
        let swap = from_input && self.swap;
        let borrowed = from_input
            && (0..workers).all(|w| self.borrowed_pair(swap, self.range(w, workers)).is_some());
        let rest = if swap {
            Through::Swapped
        } else {
            Through::Staging
        };
        let fused = (self.fused.iter()).map(|s| match borrowed && s.is_strided() {
            true => s.scratch_len_through(Through::Destination),
            false if self.rows_swapped && !from_input && s.is_strided() => {
                s.scratch_len_through(Through::Swapped)
            }
            false => s.scratch_len_through(Through::Staging),
        });
        let left = (self.rest.iter()).map(|s| s.scratch_len_through(rest));
        fused.chain(left).max().unwrap_or(0)
    }

    /// The sweeps planned again on one plane of a block of `memory_shape` (the sub-block at
    /// memory positions `first..`), in order, when every sweep runs along one of those
    /// positions (see [`PlaneKernel`]).
    pub(crate) fn on_planes(&self, memory_shape: &[usize], first: usize) -> Option<Vec<Sweep<T>>> {
        let plane = memory_shape.get(first..).filter(|p| !p.is_empty())?;
        self.whole
            .iter()
            .map(|s| {
                let p = s.position.checked_sub(first)?;
                Some(Sweep::new(s.fft.clone(), plane, p))
            })
            .collect()
    }

    /// The sweep, when there is exactly one and it is strided (the kind an exchange can be
    /// fused with; see [`Sweep::run_mapped`]).
    pub(crate) fn single_strided(&self) -> Option<&Sweep<T>> {
        match self.whole.as_slice() {
            [sweep] if sweep.is_strided() => Some(sweep),
            _ => None,
        }
    }

    /// Runs every sweep on `data` (in place; from `input` when given); the last sweep
    /// multiplies by `scale`.
    pub(crate) fn run(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        assert!(
            !self.rows_swapped || (input.is_none() && self.in_cache(workers.len())),
            "swapped rows only in place, in cache"
        );
        if !self.in_cache(workers.len()) {
            let count = self.whole.len();
            for (i, sweep) in self.whole.iter().enumerate() {
                let last = i + 1 == count;
                let src = if i == 0 { input } else { None };
                sweep.run(data, src, if last { scale } else { T::one() }, workers);
            }
            return;
        }
        let fused_scale = (self.rest.is_empty() && scale != T::one()).then_some(scale);
        let count = self.fused.len();
        let (blocks, sub_len) = (self.blocks, self.sub_len);
        assert_eq!(data.len(), blocks * sub_len);
        // From an input, sub-block `b` goes to sub-block `target(b)`: `swapped(b)` when the
        // sweep left takes its rows digit-swapped (see `swap`).
        let swap = self.swap && input.is_some();
        let out = SharedMut(data.as_mut_ptr());
        let nworkers = workers.len();
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            let range = self.range(w, nworkers);
            let pair = input.and(self.borrowed_pair(swap, range.clone()));
            let others = range.filter(|&b| pair.is_none_or(|(p, q)| b != p && b != q));
            let last = pair.into_iter().flat_map(|(p, q)| [p, q]);
            for b in others.chain(last) {
                // SAFETY: `target` is a permutation of the sub-blocks and workers take
                // disjoint ranges of them, so each sub-block of `data` has one writer; a
                // borrowed pair's two sub-blocks lie one after the other and are written
                // last, by this worker, when nothing else is staged in them.
                let (block, mut staging) = unsafe {
                    let at = |b: usize| out.get().add(self.target(swap, b) * sub_len);
                    let block = std::slice::from_raw_parts_mut(at(b), sub_len);
                    let staging = match pair {
                        Some((p, q)) if b != p && b != q => {
                            Some(std::slice::from_raw_parts_mut(at(p), 2 * sub_len))
                        }
                        _ => None,
                    };
                    (block, staging)
                };
                let offset = b * sub_len;
                for (i, sweep) in self.fused.iter().enumerate() {
                    let s = if i + 1 == count { fused_scale } else { None };
                    let Some(input) = input.filter(|_| i == 0) else {
                        let through = match self.rows_swapped && sweep.is_strided() {
                            true => Through::Swapped,
                            false => Through::Staging,
                        };
                        sweep.run_serial(block, None, s, scratch, through);
                        continue;
                    };
                    let src = Some(&input[offset..offset + sub_len]);
                    match (&pair, staging.as_deref_mut()) {
                        (None, _) => sweep.run_serial(block, src, s, scratch, Through::Staging),
                        (Some(_), Some(staging)) => {
                            sweep.run_serial(block, src, s, staging, Through::Staging)
                        }
                        (Some(_), None) => {
                            sweep.run_serial(block, src, s, scratch, Through::Destination)
                        }
                    }
                }
            }
        });
        let count = self.rest.len();
        for (i, sweep) in self.rest.iter().enumerate() {
            let last = i + 1 == count;
            let s = if last { scale } else { T::one() };
            sweep.run_through(data, None, s, workers, swap);
        }
    }
}

/// A real-to-real transform of one length, FFTW-scaled (rustdct computes half of FFTW's
/// REDFT/RODFT sums; [`R2r::process`] leaves that factor to the caller, see
/// [`R2r::FFTW_FACTOR`]).
#[derive(Clone)]
pub(crate) enum R2r<T: Real> {
    Dct1(Arc<dyn rustdct::Dct1<T>>),
    Dst1(Arc<dyn rustdct::Dst1<T>>),
    Type23(Arc<dyn rustdct::TransformType2And3<T>>, R2rKind),
    Type4(Arc<dyn rustdct::TransformType4<T>>, R2rKind),
}

impl<T: Real> R2r<T> {
    /// rustdct's transforms are FFTW's divided by this.
    pub(crate) const FFTW_FACTOR: f64 = 2.0;

    /// Plans `kind` for lines of `n` points.
    pub(crate) fn new(planner: &mut rustdct::DctPlanner<T>, kind: R2rKind, n: usize) -> Self {
        match kind {
            R2rKind::Dct1 => R2r::Dct1(planner.plan_dct1(n)),
            R2rKind::Dst1 => R2r::Dst1(planner.plan_dst1(n)),
            R2rKind::Dct2 => R2r::Type23(planner.plan_dct2(n), kind),
            R2rKind::Dct3 => R2r::Type23(planner.plan_dct3(n), kind),
            R2rKind::Dst2 => R2r::Type23(planner.plan_dst2(n), kind),
            R2rKind::Dst3 => R2r::Type23(planner.plan_dst3(n), kind),
            R2rKind::Dct4 => R2r::Type4(planner.plan_dct4(n), kind),
            R2rKind::Dst4 => R2r::Type4(planner.plan_dst4(n), kind),
        }
    }

    fn scratch_len(&self) -> usize {
        match self {
            R2r::Dct1(t) => t.get_scratch_len(),
            R2r::Dst1(t) => t.get_scratch_len(),
            R2r::Type23(t, _) => t.get_scratch_len(),
            R2r::Type4(t, _) => t.get_scratch_len(),
        }
    }

    /// The transform of `line` in place (rustdct's scaling).
    fn process(&self, line: &mut [T], scratch: &mut [T]) {
        match self {
            R2r::Dct1(t) => t.process_dct1_with_scratch(line, scratch),
            R2r::Dst1(t) => {
                // rustdct's DST-I from length 25 on (`Dst1ConvertToFft`) writes the odd
                // extension of the line into scratch but never its two zeros (entries 0 and
                // n + 1 of the FFT input), so it reads whatever the scratch held: the previous
                // line's FFT output, when one scratch serves every line. A zeroed scratch is
                // what rustdct's own `process_dst1` hands it.
                scratch.fill(T::zero());
                t.process_dst1_with_scratch(line, scratch)
            }
            R2r::Type23(t, R2rKind::Dct2) => t.process_dct2_with_scratch(line, scratch),
            R2r::Type23(t, R2rKind::Dct3) => t.process_dct3_with_scratch(line, scratch),
            R2r::Type23(t, R2rKind::Dst2) => t.process_dst2_with_scratch(line, scratch),
            R2r::Type23(t, _) => t.process_dst3_with_scratch(line, scratch),
            R2r::Type4(t, R2rKind::Dct4) => t.process_dct4_with_scratch(line, scratch),
            R2r::Type4(t, _) => t.process_dst4_with_scratch(line, scratch),
        }
    }
}

/// The 1-D transform a [`LineStep`] applies to each line.
#[derive(Clone)]
pub(crate) enum LineOp<T: Real> {
    /// A complex FFT of `max(n_in, n_out)` points; when the lengths differ, the spectral side
    /// keeps the `min(n_in, n_out)` lowest modes (truncation forward, zero-padding backward;
    /// the Nyquist mode of an even spectral length is dropped).
    C2c(Arc<dyn Fft<T>>),
    /// A real-to-complex FFT of `n_in` points; the output keeps the `n_out` lowest modes of a
    /// spectral real length `spectral` (Nyquist dropped when padded).
    R2c(Arc<dyn RealToComplex<T>>),
    /// A complex-to-real FFT of `n_out` points from `n_in` modes (zero-padded).
    C2r(Arc<dyn ComplexToReal<T>>),
    /// A real-to-real transform (on complex data: on the real and imaginary parts).
    R2r(R2r<T>),
}

/// 1-D transforms along one axis of a block, in or out of place, that may change the axis
/// length (padding/truncation) and the element type (real ↔ complex). Lines are gathered a
/// tile at a time into the worker's scratch (or read and written directly when contiguous and
/// out of place), so nothing is allocated per call; the gather and the scatter move 4 × 4
/// blocks of elements where the CPU can ([`crate::transpose`]: complex `f64`, complex `f32`
/// and real `f64`), and the tile's lines are padded like a sweep's ([`tile_stride`]). Data is
/// passed as scalars (`T`); complex elements are two scalars.
#[derive(Clone)]
pub(crate) struct LineStep<T: Real> {
    op: LineOp<T>,
    /// Line lengths in elements.
    n_in: usize,
    n_out: usize,
    /// Scalars per element (1 real, 2 complex).
    c_in: usize,
    c_out: usize,
    /// Memory shape `[outer, n, inner]` of both blocks.
    outer: usize,
    inner: usize,
    /// The spectral length (real length along the r2c axis) for the mode map.
    spectral: usize,
    /// Extra factor applied with every line (rustdct's scaling for r2r).
    factor: T,
}

/// Whether index `j` of `n` modes is the Nyquist mode (`n` even, `j = n/2`).
fn is_nyquist(n: usize, j: usize) -> bool {
    n & 1 == 0 && j == n / 2
}

/// Spectral index `j` of `n` modes → index in a spectrum of `m ≥ n` points, or `None` for the
/// Nyquist mode of an even `n` (dropped when padding or truncating).
fn mode_index(n: usize, m: usize, j: usize) -> Option<usize> {
    if is_nyquist(n, j) {
        return None;
    }
    Some(if j < n.div_ceil(2) { j } else { m - (n - j) })
}

impl<T: Real> LineStep<T> {
    /// A step along memory position `position` of a source block of memory shape
    /// `memory_shape` (only that axis differs between source and destination). `spectral`: see
    /// the field; `real_in`/`real_out`: element types.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        op: LineOp<T>,
        memory_shape: &[usize],
        position: usize,
        n_out: usize,
        real_in: bool,
        real_out: bool,
        spectral: usize,
    ) -> Self {
        let factor = match op {
            LineOp::R2r(_) => T::of(R2r::<T>::FFTW_FACTOR),
            _ => T::one(),
        };
        Self {
            op,
            n_in: memory_shape[position],
            n_out,
            c_in: if real_in { 1 } else { 2 },
            c_out: if real_out { 1 } else { 2 },
            outer: memory_shape[..position].iter().product(),
            inner: memory_shape[position + 1..].iter().product(),
            spectral,
            factor,
        }
    }

    /// Scalars of the destination block.
    pub(crate) fn output_scalars(&self) -> usize {
        self.outer * self.inner * self.n_out * self.c_out
    }

    fn tile_width(&self) -> usize {
        tile_lines::<T>(self.n_in.max(self.n_out)).min(self.inner.max(1))
    }

    /// Scalars of the per-line temporaries and the transform's own scratch.
    fn tmp_len(&self) -> usize {
        let m = self.n_in.max(self.n_out);
        match &self.op {
            LineOp::C2c(f) => 2 * (m + f.get_inplace_scratch_len()),
            LineOp::R2c(f) => self.n_in + 2 * (self.n_in / 2 + 1) + 2 * f.get_scratch_len(),
            LineOp::C2r(f) => 2 * (self.n_out / 2 + 1) + 2 * f.get_scratch_len(),
            LineOp::R2r(t) => self.n_in + t.scratch_len(),
        }
    }

    /// Scalars between the lines of a tile of `n` elements of `c` scalars each: the line
    /// padded by two cache lines, as in [`tile_stride`], so that lines of a power-of-two
    /// length do not all fall into the same cache sets.
    fn tile_line(&self, n: usize, c: usize) -> usize {
        n * c + 128 / std::mem::size_of::<T>()
    }

    /// Scratch elements (`Complex<T>`) one worker needs.
    pub(crate) fn scratch_len(&self) -> usize {
        let w = self.tile_width();
        let lines = self.tile_line(self.n_in, self.c_in) + self.tile_line(self.n_out, self.c_out);
        (w * lines + self.tmp_len()).div_ceil(2)
    }

    /// Transforms one line: `input` (`n_in` elements) into `output` (`n_out` elements).
    fn apply(&self, input: &[T], output: &mut [T], tmp: &mut [T], scale: T) {
        let scale = scale * self.factor;
        let scaled = |x: Complex<T>| x * scale;
        match &self.op {
            LineOp::C2c(fft) => {
                let m = self.n_in.max(self.n_out);
                let (buf, scratch) = tmp.split_at_mut(2 * m);
                let buf: &mut [Complex<T>] = bytemuck::cast_slice_mut(buf);
                let scratch: &mut [Complex<T>] =
                    bytemuck::cast_slice_mut(&mut scratch[..2 * fft.get_inplace_scratch_len()]);
                let input: &[Complex<T>] = bytemuck::cast_slice(input);
                let output: &mut [Complex<T>] = bytemuck::cast_slice_mut(output);
                if self.n_in >= self.n_out {
                    buf.copy_from_slice(input);
                    fft.process_with_scratch(buf, scratch);
                    if self.n_in == self.n_out {
                        output
                            .iter_mut()
                            .zip(buf.iter())
                            .for_each(|(o, &b)| *o = scaled(b));
                    } else {
                        for (j, o) in output.iter_mut().enumerate() {
                            *o = match mode_index(self.n_out, m, j) {
                                Some(i) => scaled(buf[i]),
                                None => Complex::default(),
                            };
                        }
                    }
                } else {
                    buf.fill(Complex::default());
                    for (j, &x) in input.iter().enumerate() {
                        if let Some(i) = mode_index(self.n_in, m, j) {
                            buf[i] = x;
                        }
                    }
                    fft.process_with_scratch(buf, scratch);
                    output
                        .iter_mut()
                        .zip(buf.iter())
                        .for_each(|(o, &b)| *o = scaled(b));
                }
            }
            LineOp::R2c(fft) => {
                let m = self.n_in;
                let (real, rest) = tmp.split_at_mut(m);
                let (spec, scratch) = rest.split_at_mut(2 * (m / 2 + 1));
                let spec: &mut [Complex<T>] = bytemuck::cast_slice_mut(spec);
                let scratch: &mut [Complex<T>] =
                    bytemuck::cast_slice_mut(&mut scratch[..2 * fft.get_scratch_len()]);
                real.copy_from_slice(input);
                let output: &mut [Complex<T>] = bytemuck::cast_slice_mut(output);
                let padded = m != self.spectral;
                let n = self.spectral;
                if !padded {
                    // The whole half spectrum is kept: transform straight into the output.
                    fft.process_with_scratch(real, output, scratch)
                        .expect("r2c buffer lengths are planned");
                    if scale != T::one() {
                        output.iter_mut().for_each(|x| *x = *x * scale);
                    }
                    return;
                }
                fft.process_with_scratch(real, spec, scratch)
                    .expect("r2c buffer lengths are planned");
                for (j, o) in output.iter_mut().enumerate() {
                    *o = if padded && is_nyquist(n, j) {
                        Complex::default()
                    } else {
                        scaled(spec[j])
                    };
                }
            }
            LineOp::C2r(fft) => {
                let m = self.n_out;
                let (spec, scratch) = tmp.split_at_mut(2 * (m / 2 + 1));
                let spec: &mut [Complex<T>] = bytemuck::cast_slice_mut(spec);
                let scratch: &mut [Complex<T>] =
                    bytemuck::cast_slice_mut(&mut scratch[..2 * fft.get_scratch_len()]);
                let input: &[Complex<T>] = bytemuck::cast_slice(input);
                let padded = m != self.spectral;
                let n = self.spectral;
                spec.fill(Complex::default());
                for (j, &x) in input.iter().enumerate() {
                    if !(padded && is_nyquist(n, j)) {
                        spec[j] = x;
                    }
                }
                // The imaginary parts of the DC and Nyquist modes do not exist in a real
                // signal's spectrum; they are ignored, as numpy's irfft does.
                spec[0].im = T::zero();
                if m & 1 == 0 {
                    spec[m / 2].im = T::zero();
                }
                let _ = fft.process_with_scratch(spec, output, scratch);
                if scale != T::one() {
                    output.iter_mut().for_each(|x| *x = *x * scale);
                }
            }
            LineOp::R2r(r2r) => {
                let n = self.n_in;
                let (line, scratch) = tmp.split_at_mut(n);
                let c = self.c_in;
                if c == 1 {
                    // Real lines: plain copies, which vectorize.
                    line.copy_from_slice(input);
                    r2r.process(line, scratch);
                    output
                        .iter_mut()
                        .zip(&*line)
                        .for_each(|(o, &v)| *o = v * scale);
                    return;
                }
                for part in 0..c {
                    for (j, v) in line.iter_mut().enumerate() {
                        *v = input[j * c + part];
                    }
                    r2r.process(line, scratch);
                    for (j, &v) in line.iter().enumerate() {
                        output[j * c + part] = v * scale;
                    }
                }
            }
        }
    }

    /// Runs the step: from `input` into `data` when given (out of place; `input` has the
    /// source shape), else in place on `data` (same lengths and element type). Scalars.
    pub(crate) fn run(
        &self,
        data: &mut [T],
        input: Option<&[T]>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        let (outer, inner) = (self.outer, self.inner);
        if outer * inner == 0 || self.n_in == 0 {
            return;
        }
        let (n_in, n_out, c_in, c_out) = (self.n_in, self.n_out, self.c_in, self.c_out);
        let in_line = n_in * c_in;
        let out_line = n_out * c_out;
        assert_eq!(data.len(), outer * inner * out_line);
        if let Some(input) = input {
            assert_eq!(input.len(), outer * inner * in_line);
        } else {
            assert_eq!(
                (n_in, c_in),
                (n_out, c_out),
                "in place keeps the line shape"
            );
        }
        let width = self.tile_width();
        let blocks = inner.div_ceil(width);
        let tasks = outer * blocks;
        let nworkers = workers.len();
        let dst = SharedMut(data.as_mut_ptr());
        let src = input.map(|s| SharedConst(s.as_ptr()));
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            let scratch: &mut [T] = bytemuck::cast_slice_mut(&mut scratch[..]);
            let (in_stride, out_stride) =
                (self.tile_line(n_in, c_in), self.tile_line(n_out, c_out));
            let (tile_in, rest) = scratch.split_at_mut(width * in_stride);
            let (tile_out, tmp) = rest.split_at_mut(width * out_stride);
            let first = tasks * w / nworkers;
            let last = tasks * (w + 1) / nworkers;
            for task in first..last {
                let (o, block) = (task / blocks, task % blocks);
                let c0 = block * width;
                let cols = width.min(inner - c0);
                // SAFETY: tasks cover disjoint (outer, column-block) sets, so workers read and
                // write disjoint lines; all offsets stay inside the blocks (lengths asserted).
                unsafe {
                    let (from, from_base) = match &src {
                        Some(s) => (s.get(), (o * n_in * inner + c0) * c_in),
                        None => (dst.get() as *const T, (o * n_in * inner + c0) * c_in),
                    };
                    let to = dst.get();
                    let to_base = (o * n_out * inner + c0) * c_out;
                    if inner == 1 {
                        // A contiguous line: straight from the input, or in place from a copy.
                        let mut input = std::slice::from_raw_parts(from.add(from_base), in_line);
                        if src.is_none() {
                            tile_in[..in_line].copy_from_slice(input);
                            input = &tile_in[..in_line];
                        }
                        let output = std::slice::from_raw_parts_mut(to.add(to_base), out_line);
                        self.apply(input, output, tmp, scale);
                        continue;
                    }
                    // Gather `cols` lines into the tile (line c at c·in_stride), in blocks of
                    // elements (complex or real) where the CPU can.
                    let rows = |j: usize| from.add(from_base + j * inner * c_in);
                    let tile = tile_in.as_mut_ptr();
                    if c_in == 2 {
                        let rows = |j| rows(j) as *const Complex<T>;
                        gather(rows, n_in, cols, tile as *mut Complex<T>, in_stride / 2);
                    } else {
                        gather(rows, n_in, cols, tile, in_stride);
                    }
                    for c in 0..cols {
                        self.apply(
                            &tile_in[c * in_stride..c * in_stride + in_line],
                            &mut tile_out[c * out_stride..c * out_stride + out_line],
                            tmp,
                            scale,
                        );
                    }
                    let rows = |j: usize| to.add(to_base + j * inner * c_out);
                    let tile = tile_out.as_ptr();
                    if c_out == 2 {
                        let rows = |j| rows(j) as *mut Complex<T>;
                        let tile = tile as *const Complex<T>;
                        scatter(tile, out_stride / 2, n_out, cols, rows, None::<T>);
                    } else {
                        scatter(tile, out_stride, n_out, cols, rows, None::<T>);
                    }
                }
            }
        });
    }
}

#[derive(Clone, Copy)]
struct SharedConst<T>(*const T);
// SAFETY: only read, while the owner keeps the slice borrowed (see `LineStep::run`).
unsafe impl<T: Sync> Send for SharedConst<T> {}
unsafe impl<T: Sync> Sync for SharedConst<T> {}
impl<T> SharedConst<T> {
    fn get(&self) -> *const T {
        self.0
    }
}

impl<T: Real> LineStep<T> {
    /// Whether the lines are contiguous (the step runs along the last memory position).
    pub(crate) fn is_contiguous(&self) -> bool {
        self.inner == 1
    }

    /// Whether the step turns real lines into complex ones (or back): an r2c or a c2r.
    pub(crate) fn is_real_complex(&self) -> bool {
        matches!(self.op, LineOp::R2c(_) | LineOp::C2r(_))
    }

    /// Scalars of one source block.
    fn input_scalars(&self) -> usize {
        self.outer * self.inner * self.n_in * self.c_in
    }

    /// The contiguous lines of `input` into `output` on the calling thread, with `tmp` of at
    /// least `tmp_len()` scalars.
    fn run_lines(&self, output: &mut [T], input: &[T], scale: T, tmp: &mut [T]) {
        debug_assert!(self.is_contiguous());
        let (in_line, out_line) = (self.n_in * self.c_in, self.n_out * self.c_out);
        for (x, y) in input
            .chunks_exact(in_line)
            .zip(output.chunks_exact_mut(out_line))
        {
            self.apply(x, y, tmp, scale);
        }
    }
}

/// An r2c line step and the FFTs along other trailing memory axes (or those FFTs and a c2r
/// step), run one sub-block at a time while it is in cache instead of one pass over the block
/// each: for a slab, the r2c of a plane's rows and the FFT along the plane's other axis
/// (`head`: the line step first, forward), or the FFTs and then the c2r (backward). The
/// sub-blocks are the indices of the memory positions before the trailing ones; each worker
/// takes a contiguous range of them.
#[derive(Clone)]
pub(crate) struct PlaneSteps<T: Real> {
    /// The line step over one sub-block (contiguous lines).
    line: LineStep<T>,
    /// The FFT sweeps over one complex sub-block.
    sweeps: Vec<Sweep<T>>,
    /// Line step first (r2c) or last (c2r).
    head: bool,
    blocks: usize,
    /// Complex elements of one complex sub-block.
    mid_len: usize,
}

impl<T: Real> PlaneSteps<T> {
    /// `line` and `sweeps` are planned on one sub-block; `blocks` sub-blocks.
    pub(crate) fn new(line: LineStep<T>, sweeps: Vec<Sweep<T>>, head: bool, blocks: usize) -> Self {
        debug_assert!(line.is_contiguous());
        // The c2r side gathers its plane from the source with the first sweep.
        debug_assert!(
            head || !sweeps.is_empty(),
            "a c2r plane step runs its FFTs first"
        );
        let mid_len = if head {
            line.output_scalars() / 2
        } else {
            line.input_scalars() / 2
        };
        Self {
            line,
            sweeps,
            head,
            blocks,
            mid_len,
        }
    }

    /// Scalars of the destination block.
    pub(crate) fn output_scalars(&self) -> usize {
        self.blocks * self.line.output_scalars()
    }

    /// Scratch elements one worker needs: a complex sub-block (c2r from a read-only source:
    /// the sweeps run on a copy of the source's; `writable`: they run on the source's own,
    /// [`PlaneSteps::run_writable`]), the sweeps' scratch and the line step's temporaries.
    pub(crate) fn scratch_len(&self, writable: bool) -> usize {
        let plane = if self.head || writable {
            0
        } else {
            self.mid_len
        };
        plane + self.sweeps_scratch() + self.line.tmp_len().div_ceil(2)
    }

    /// Scratch elements [`PlaneSteps::run_rows`] needs besides its plane: the sweeps' and
    /// the line step's.
    fn rows_scratch_len(&self) -> usize {
        self.sweeps_scratch() + self.line.tmp_len().div_ceil(2)
    }

    /// Scratch elements of the sweeps (the most any of them needs).
    fn sweeps_scratch(&self) -> usize {
        self.sweeps
            .iter()
            .map(Sweep::scratch_len)
            .max()
            .unwrap_or(0)
    }

    /// The scalars of one source and one destination sub-block and the sub-blocks per
    /// worker, for blocks of `input` and `output` scalars (checked); `None` when there is
    /// nothing to transform.
    fn split_blocks(
        &self,
        input: usize,
        output: usize,
        workers: usize,
    ) -> Option<(usize, usize, usize)> {
        let (in_len, out_len) = (self.line.input_scalars(), self.line.output_scalars());
        assert_eq!(input, self.blocks * in_len);
        assert_eq!(output, self.blocks * out_len);
        (self.blocks > 0 && in_len > 0 && out_len > 0)
            .then(|| (in_len, out_len, self.blocks.div_ceil(workers)))
    }

    /// From `input` (scalars of the source blocks) into `output`; the last operation scales
    /// by `scale`. In parallel over sub-blocks; allocates nothing.
    pub(crate) fn run(
        &self,
        output: &mut [T],
        input: &[T],
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        let Some((in_len, out_len, per_worker)) =
            self.split_blocks(input.len(), output.len(), workers.len())
        else {
            return;
        };
        output
            .par_chunks_mut(per_worker * out_len)
            .zip(input.par_chunks(per_worker * in_len))
            .zip(workers.par_iter_mut())
            .for_each(|((output, input), scratch)| {
                for (y, x) in output
                    .chunks_exact_mut(out_len)
                    .zip(input.chunks_exact(in_len))
                {
                    self.run_one(y, x, scale, scratch);
                }
            });
    }

    /// [`PlaneSteps::run`] from a source it may overwrite: a c2r step runs its FFTs in place
    /// on each source sub-block (no copy of it) before the c2r reads it; scratch as
    /// [`PlaneSteps::scratch_len`]`(true)`. An r2c step reads its source as `run` does.
    pub(crate) fn run_writable(
        &self,
        output: &mut [T],
        input: &mut [T],
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        if self.head {
            return self.run(output, input, scale, workers);
        }
        let Some((in_len, out_len, per_worker)) =
            self.split_blocks(input.len(), output.len(), workers.len())
        else {
            return;
        };
        output
            .par_chunks_mut(per_worker * out_len)
            .zip(input.par_chunks_mut(per_worker * in_len))
            .zip(workers.par_iter_mut())
            .for_each(|((output, input), scratch)| {
                let (sweep_scratch, tmp) = scratch.split_at_mut(self.sweeps_scratch());
                let tmp: &mut [T] = bytemuck::cast_slice_mut(tmp);
                for (y, x) in output
                    .chunks_exact_mut(out_len)
                    .zip(input.chunks_exact_mut(in_len))
                {
                    let plane: &mut [Complex<T>] = bytemuck::cast_slice_mut(x);
                    for sweep in &self.sweeps {
                        sweep.run_serial(plane, None, None, sweep_scratch, Through::Staging);
                    }
                    self.line
                        .run_lines(y, bytemuck::cast_slice(plane), scale, tmp);
                }
            });
    }

    /// One sub-block: from `x` (the source sub-block's scalars) into `y`, on the calling
    /// thread with one worker's `scratch` ([`PlaneSteps::scratch_len`]); the last operation
    /// scales by `scale`.
    fn run_one(&self, y: &mut [T], x: &[T], scale: T, scratch: &mut [Complex<T>]) {
        let sweep_scale = |i: usize| {
            let last = i + 1 == self.sweeps.len();
            let s = if self.head && last { scale } else { T::one() };
            (s != T::one()).then_some(s)
        };
        let line_scale = if self.head && !self.sweeps.is_empty() {
            T::one()
        } else {
            scale
        };
        let (plane, rest) = scratch.split_at_mut(if self.head { 0 } else { self.mid_len });
        let (sweep_scratch, tmp) = rest.split_at_mut(self.sweeps_scratch());
        let tmp: &mut [T] = bytemuck::cast_slice_mut(tmp);
        if self.head {
            self.line.run_lines(y, x, line_scale, tmp);
            let block: &mut [Complex<T>] = bytemuck::cast_slice_mut(y);
            for (i, sweep) in self.sweeps.iter().enumerate() {
                sweep.run_serial(block, None, sweep_scale(i), sweep_scratch, Through::Staging);
            }
        } else {
            let source: &[Complex<T>] = bytemuck::cast_slice(x);
            for (i, sweep) in self.sweeps.iter().enumerate() {
                let from = (i == 0).then_some(source);
                sweep.run_serial(plane, from, None, sweep_scratch, Through::Staging);
            }
            self.line
                .run_lines(y, bytemuck::cast_slice(&plane[..]), line_scale, tmp);
        }
    }

    /// The sweep across a sub-block's rows (the first memory position of the complex
    /// sub-block, strided), when it is the one next to the complex side: the last sweep of an
    /// r2c step, the first of a c2r step. A [`PlaneKernel`] runs it between its plane
    /// buffer and the exchange's rows.
    fn across(&self) -> Option<&Sweep<T>> {
        let sweep = if self.head {
            self.sweeps.last()
        } else {
            self.sweeps.first()
        };
        sweep.filter(|s| s.position == 0 && s.is_strided())
    }

    /// One sub-block whose complex side is the rows `rows` (row `i` at `rows.row(i)`) instead
    /// of a block, with `plane` (a complex sub-block) as its buffer, on the calling thread;
    /// the last operation scales by `scale`. r2c (`head`): from the real sub-block at `real`
    /// into `plane`, the sweeps but the last in `plane`, and the last, [`Self::across`],
    /// from `plane` straight to the rows. c2r: the first sweep from the rows into `plane`,
    /// the others in `plane`, and the c2r into the real sub-block at `real`. No row is
    /// copied in a pass of its own.
    ///
    /// # Safety
    /// [`Self::across`] is some; `real` is valid for a source sub-block's scalars (r2c, only
    /// read) or a destination sub-block's (c2r, not read or written by anyone else
    /// meanwhile); the rows are valid for the sub-block's complex rows, disjoint, not
    /// overlapping `real` or `plane`, and only this call touches them meanwhile.
    unsafe fn run_rows(
        &self,
        real: *mut T,
        rows: Rows<'_, T>,
        plane: &mut [Complex<T>],
        scale: T,
        scratch: &mut [Complex<T>],
    ) {
        let across = self.across().expect("a sweep across the rows");
        let (sweep_scratch, tmp) = scratch.split_at_mut(self.sweeps_scratch());
        let tmp: &mut [T] = bytemuck::cast_slice_mut(tmp);
        let scale = (scale != T::one()).then_some(scale);
        debug_assert_eq!(plane.len(), self.mid_len);
        let block = Rows::block(plane.as_mut_ptr(), across.row_len());
        let count = self.sweeps.len();
        if self.head {
            let x = std::slice::from_raw_parts(real as *const T, self.line.input_scalars());
            self.line
                .run_lines(bytemuck::cast_slice_mut(plane), x, T::one(), tmp);
            for sweep in &self.sweeps[..count - 1] {
                sweep.run_serial(plane, None, None, sweep_scratch, Through::Staging);
            }
            // SAFETY: the caller's contract; `plane` is this call's own.
            unsafe { across.run_plane(block, rows, scale, sweep_scratch) };
        } else {
            // SAFETY: as above.
            unsafe { across.run_plane(rows, block, None, sweep_scratch) };
            for sweep in &self.sweeps[1..] {
                sweep.run_serial(plane, None, None, sweep_scratch, Through::Staging);
            }
            let y = std::slice::from_raw_parts_mut(real, self.line.output_scalars());
            let line_scale = scale.unwrap_or(T::one());
            self.line
                .run_lines(y, bytemuck::cast_slice(&plane[..]), line_scale, tmp);
        }
    }

    /// Whether the line step comes first (r2c then FFTs).
    pub(crate) fn is_head(&self) -> bool {
        self.head
    }
}

/// Copies row `i` of `inner` elements from `from(i)` to `to(i)` for every `i < rows`,
/// prefetching row `i + 1` of `ahead` (the side scattered over memory) before each copy.
///
/// # Safety
/// Every row named is valid for `inner` elements, and no source row overlaps a destination
/// row.
unsafe fn copy_rows<T, F, G, A>(rows: usize, inner: usize, from: F, to: G, ahead: A)
where
    F: Fn(usize) -> *mut Complex<T>,
    G: Fn(usize) -> *mut Complex<T>,
    A: Fn(usize) -> *mut Complex<T>,
{
    let bytes = inner * std::mem::size_of::<Complex<T>>();
    for i in 0..rows {
        if i + 1 < rows {
            prefetch_run(ahead(i + 1), bytes);
        }
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(from(i), to(i), inner) };
    }
}

/// What a [`PlaneKernel`] does to one plane.
#[derive(Clone)]
pub(crate) enum PlaneOp<T: Real> {
    /// Complex FFT sweeps planned on one plane, in order.
    Ffts(Vec<Sweep<T>>),
    /// An r2c step and then FFT sweeps, or FFT sweeps and then a c2r step ([`PlaneSteps`]
    /// whose sub-blocks are the planes).
    Steps(PlaneSteps<T>),
}

/// Where a [`PlaneKernel`] reads its planes from or writes them to.
#[derive(Clone, Copy)]
pub(crate) enum PlaneEnd<'a, T> {
    /// A block of whole planes one after another (scalars).
    Block(*mut T),
    /// Complex rows where a run map says (the side of a fused exchange).
    Rows(Rows<'a, T>),
}

// SAFETY: as for `Rows`: only dereferenced under `PlaneKernel::run_mapped`'s contract, which
// keeps workers on disjoint planes.
unsafe impl<T: Send> Send for PlaneEnd<'_, T> {}
unsafe impl<T: Send> Sync for PlaneEnd<'_, T> {}

/// The transforms of whole planes (the sub-blocks at the memory positions after the slowest
/// one), one plane at a time in a worker's cache-sized buffer, whose complex rows come from,
/// or go to, where a run map says: the kernel of a fused step with an exchange on one side.
/// The block on that side of the transforms is then never stored whole: a forward transform
/// with transposed output runs its first FFTs (or its r2c and FFTs) from the caller's input
/// straight into the exchange, and the c2r backward gathers its planes straight from it.
#[derive(Clone)]
pub(crate) struct PlaneKernel<T: Real> {
    op: PlaneOp<T>,
    /// Planes in the block.
    planes: usize,
    /// Rows per complex plane on the exchange's side, and elements per row.
    rows: usize,
    inner: usize,
    /// Scalars of one source and one destination plane.
    in_len: usize,
    out_len: usize,
    /// Whether each plane is transformed in the rows it goes to ([`Self::fit_to`]).
    in_rows: bool,
    /// Whether each worker holds a plane buffer ([`Self::fit_to`]).
    buffer: bool,
}

impl<T: Real> PlaneKernel<T> {
    /// `planes` planes of FFT sweeps planned on one plane of memory shape `plane_shape`.
    pub(crate) fn ffts(mut sweeps: Vec<Sweep<T>>, planes: usize, plane_shape: &[usize]) -> Self {
        assert!(!sweeps.is_empty() && !plane_shape.is_empty());
        // The sweep across the rows goes last, so that it can write straight to the rows
        // that go out (sweeps along different axes commute).
        sweeps.sort_by_key(|s| s.position == 0);
        let len: usize = plane_shape.iter().product();
        Self {
            op: PlaneOp::Ffts(sweeps),
            planes,
            rows: plane_shape[0],
            inner: plane_shape[1..].iter().product(),
            in_len: 2 * len,
            out_len: 2 * len,
            in_rows: false,
            buffer: true,
        }
    }

    /// The planes of `steps`, whose complex sub-blocks have memory shape `plane_shape` (the
    /// destination's of an r2c step, the source's of a c2r step).
    pub(crate) fn steps(steps: &PlaneSteps<T>, plane_shape: &[usize]) -> Option<Self> {
        let len: usize = plane_shape.iter().product();
        if plane_shape.is_empty() || len != steps.mid_len {
            return None;
        }
        let mut steps = steps.clone();
        // The sweep across the rows goes next to the exchange (last after an r2c, first
        // before a c2r), so that it reads or writes the exchange's rows straight from or to
        // the plane buffer (sweeps along different axes commute).
        let head = steps.head;
        steps.sweeps.sort_by_key(|s| (s.position == 0) == head);
        Some(Self {
            in_len: steps.line.input_scalars(),
            out_len: steps.line.output_scalars(),
            planes: steps.blocks,
            op: PlaneOp::Steps(steps),
            rows: plane_shape[0],
            inner: plane_shape[1..].iter().product(),
            in_rows: false,
            buffer: true,
        })
    }

    /// Whether the kernel can read its planes from rows (no r2c: its source is real).
    pub(crate) fn gathers(&self) -> bool {
        !matches!(&self.op, PlaneOp::Steps(steps) if steps.head)
    }

    /// Whether the kernel can write its planes to rows (no c2r: its destination is real).
    pub(crate) fn scatters(&self) -> bool {
        !matches!(&self.op, PlaneOp::Steps(steps) if !steps.head)
    }

    /// Planes in the block.
    pub(crate) fn outer(&self) -> usize {
        self.planes
    }

    /// Rows per complex plane.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// Complex elements per row (the run length of the row map on the exchange's side).
    pub(crate) fn row_len(&self) -> usize {
        self.inner
    }

    /// Scalars of the whole destination block.
    pub(crate) fn output_scalars(&self) -> usize {
        self.planes * self.out_len
    }

    /// Complex elements of one complex plane.
    pub(crate) fn plane_len(&self) -> usize {
        self.rows * self.inner
    }

    /// The last of FFT sweeps when it runs across the rows (memory position 0) as a column
    /// FFT: the kernel then lays each plane's rows digit-swapped ([`ColumnFft::swapped`])
    /// as it brings them in, and that sweep runs in place with no staging block.
    fn swapped_across(&self) -> Option<(&Sweep<T>, &ColumnFft)> {
        let PlaneOp::Ffts(sweeps) = &self.op else {
            return None;
        };
        let last = sweeps
            .last()
            .filter(|s| s.position == 0 && s.is_strided())?;
        Some((last, last.column.as_deref()?))
    }

    /// Fits the kernel to where it writes: the rows of the exchange after (`scatter`, its
    /// run map) or a block (`None`).
    ///
    /// * A kernel whose sweep across is a column FFT ([`Self::swapped_across`]) needs no
    ///   plane buffer when it writes a block: it transforms each plane there.
    /// * When it writes rows, it transforms each plane in those rows, with no plane buffer,
    ///   where that costs nothing: its sweeps along the rows are contiguous, and `scatter`
    ///   lays the rows `step` elements apart within a plane ([`RunMap::Grid`]), a step that
    ///   is no multiple of 512 bytes. The 16 rows a column FFT's pass works on then fall in
    ///   different L1 sets, and it runs in place on them as fast as in a buffer (a
    ///   transposed slab of an uneven shape on one rank: rows 972 000 bytes apart at
    ///   250×256×243). Rows a power of two apart (128³: 256 KiB) would all share one set;
    ///   they keep the buffer.
    pub(crate) fn fit_to(&mut self, scatter: Option<&RunMap>) {
        if self.swapped_across().is_none() {
            return;
        }
        let along_rows = match &self.op {
            PlaneOp::Ffts(sweeps) => sweeps[..sweeps.len() - 1].iter().all(|s| !s.is_strided()),
            PlaneOp::Steps(_) => false,
        };
        let spread = match scatter.and_then(RunMap::pitch) {
            Some((per, step)) => {
                let bytes = step.unsigned_abs() * std::mem::size_of::<Complex<T>>();
                per == self.rows && spread_apart(bytes)
            }
            None => false,
        };
        self.in_rows = scatter.is_some() && along_rows && spread;
        self.buffer = scatter.is_some() && !self.in_rows;
    }

    /// Complex elements of the plane buffer each worker holds.
    fn buffer_len(&self) -> usize {
        if self.buffer {
            self.plane_len()
        } else {
            0
        }
    }

    /// Scratch elements one worker needs: a complex plane (unless [`Self::fit_to`] found
    /// none needed) and the transforms' own scratch (a plane step with a
    /// sweep across the rows runs its complex plane in the first; a swapped sweep across
    /// needs none).
    pub(crate) fn scratch_len(&self) -> usize {
        self.buffer_len()
            + match &self.op {
                PlaneOp::Ffts(sweeps) if self.swapped_across().is_some() => sweeps
                    [..sweeps.len() - 1]
                    .iter()
                    .map(Sweep::scratch_len)
                    .max()
                    .unwrap_or(0),
                PlaneOp::Ffts(sweeps) => sweeps.iter().map(Sweep::scratch_len).max().unwrap_or(0),
                PlaneOp::Steps(steps) if steps.across().is_some() => steps.rows_scratch_len(),
                PlaneOp::Steps(steps) => steps.scratch_len(false),
            }
    }

    /// Transforms the planes `planes` picks: plane `o` from `from` (its row `i` at
    /// `rows.row(o · rows + i)`, or the `o`-th plane of a block) to `to` (likewise); the last
    /// transform scales by `scale`. One side is a block, the other rows, or both blocks. In
    /// parallel over planes; allocates nothing.
    ///
    /// # Safety
    /// Every plane and row named is valid; `from`'s are not written meanwhile, `to`'s rows
    /// are disjoint and neither side overlaps the other; a [`PlaneEnd::Rows`] source only
    /// with [`Self::gathers`], a [`PlaneEnd::Rows`] destination only with [`Self::scatters`].
    pub(crate) unsafe fn run_mapped(
        &self,
        from: PlaneEnd<'_, T>,
        to: PlaneEnd<'_, T>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
        planes: &Planes,
    ) {
        debug_assert_eq!(planes.groups * planes.count, self.planes);
        let tasks = planes.tasks(1);
        let nworkers = workers.len();
        let (inner, rows) = (self.inner, self.rows);
        let scaled = |last: bool| (last && scale != T::one()).then_some(scale);
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            let (buf, scratch) = scratch.split_at_mut(self.buffer_len());
            let buf = buf.as_mut_ptr();
            for t in tasks * w / nworkers..tasks * (w + 1) / nworkers {
                let (o, _) = planes.task(t, 1);
                // SAFETY (this block): the caller's contract; plane `o` and its rows are this
                // task's alone, and `buf` is this worker's (a gathered source and a plane to
                // scatter are never both in it).
                unsafe {
                    // An r2c's last sweep writes the rows straight from `buf`, a c2r's first
                    // reads them straight into it.
                    if let PlaneOp::Steps(steps) = &self.op {
                        if steps.across().is_some() {
                            // The complex side: the exchange's rows, or a block's plane.
                            let (real, complex, len) = match (steps.head, from, to) {
                                (true, PlaneEnd::Block(x), to) => {
                                    (x.add(o * self.in_len), to, self.out_len)
                                }
                                (false, from, PlaneEnd::Block(y)) => {
                                    (y.add(o * self.out_len), from, self.in_len)
                                }
                                _ => unreachable!("the real side of a plane step is a block"),
                            };
                            let rows = match complex {
                                PlaneEnd::Rows(r) => r.skip(o * rows),
                                PlaneEnd::Block(b) => Rows::block(b.add(o * len).cast(), inner),
                            };
                            let plane = std::slice::from_raw_parts_mut(buf, self.plane_len());
                            steps.run_rows(real, rows, plane, scale, scratch);
                            continue;
                        }
                    }
                    // FFTs whose sweep across is a column FFT: the rows come in digit-swapped,
                    // into `buf` (the plane goes out to rows) or straight into the destination
                    // plane; the other sweeps (along the rows) run in place, and the sweep
                    // across in place with no staging, leaving the rows in order.
                    if let (PlaneOp::Ffts(sweeps), Some((across, column))) =
                        (&self.op, self.swapped_across())
                    {
                        let row_in = |i: usize| -> *mut Complex<T> {
                            match from {
                                PlaneEnd::Rows(r) => r.row(o * rows + i),
                                PlaneEnd::Block(src) => {
                                    src.add(o * self.in_len).cast::<Complex<T>>().add(i * inner)
                                }
                            }
                        };
                        let along = &sweeps[..sweeps.len() - 1];
                        let p = match to {
                            // In the rows themselves: each row is transformed along as it
                            // comes in, while in cache.
                            PlaneEnd::Rows(r) if self.in_rows => {
                                let p = r.skip(o * rows);
                                let bytes = inner * std::mem::size_of::<Complex<T>>();
                                for i in 0..rows {
                                    if i + 1 < rows {
                                        prefetch_run(row_in(i + 1), bytes);
                                    }
                                    let row = p.row(column.swapped(i));
                                    std::ptr::copy_nonoverlapping(row_in(i), row, inner);
                                    let row = std::slice::from_raw_parts_mut(row, inner);
                                    for sweep in along {
                                        sweep.run_serial(
                                            row,
                                            None,
                                            None,
                                            scratch,
                                            Through::Staging,
                                        );
                                    }
                                }
                                p
                            }
                            _ => {
                                let p: *mut Complex<T> = match to {
                                    PlaneEnd::Rows(_) => buf,
                                    PlaneEnd::Block(dst) => dst.add(o * self.out_len).cast(),
                                };
                                let row_at = |i: usize| p.add(column.swapped(i) * inner);
                                copy_rows(rows, inner, row_in, row_at, row_in);
                                let plane = std::slice::from_raw_parts_mut(p, rows * inner);
                                for sweep in along {
                                    sweep.run_serial(plane, None, None, scratch, Through::Staging);
                                }
                                Rows::block(p, inner)
                            }
                        };
                        let s = scaled(true);
                        across.run_plane_through(p, p, s, scratch, Through::Swapped);
                        if let (PlaneEnd::Rows(r), false) = (to, self.in_rows) {
                            let out = |i: usize| r.row(o * rows + i);
                            copy_rows(rows, inner, |i| p.row(i), out, out);
                        }
                        continue;
                    }
                    // A gathered source goes into `buf` first.
                    let x: &[T] = match from {
                        PlaneEnd::Block(src) => {
                            std::slice::from_raw_parts(src.add(o * self.in_len), self.in_len)
                        }
                        PlaneEnd::Rows(r) => {
                            let row_in = |i: usize| r.row(o * rows + i);
                            copy_rows(rows, inner, row_in, |i| buf.add(i * inner), row_in);
                            std::slice::from_raw_parts(buf as *const T, self.in_len)
                        }
                    };
                    // Where the plane goes: `buf` when it is scattered afterwards.
                    let y: &mut [T] = match to {
                        PlaneEnd::Block(dst) => {
                            std::slice::from_raw_parts_mut(dst.add(o * self.out_len), self.out_len)
                        }
                        PlaneEnd::Rows(_) => {
                            debug_assert!(matches!(from, PlaneEnd::Block(_)));
                            std::slice::from_raw_parts_mut(buf as *mut T, self.out_len)
                        }
                    };
                    match &self.op {
                        PlaneOp::Ffts(sweeps) => {
                            let y: &mut [Complex<T>] = bytemuck::cast_slice_mut(y);
                            let x: &[Complex<T>] = bytemuck::cast_slice(x);
                            let count = sweeps.len();
                            // A last sweep across the rows writes straight to the rows that
                            // go out (no copy of the plane): its column FFT's second pass, or
                            // its tiles' scatter.
                            let across = match to {
                                PlaneEnd::Rows(r) => sweeps
                                    .last()
                                    .filter(|s| s.position == 0 && s.is_strided())
                                    .map(|s| (s, r.skip(o * rows))),
                                PlaneEnd::Block(_) => None,
                            };
                            let in_buffer = count - usize::from(across.is_some());
                            for (i, sweep) in sweeps[..in_buffer].iter().enumerate() {
                                let input = (i == 0).then_some(x);
                                let scale = scaled(i + 1 == count);
                                sweep.run_serial(y, input, scale, scratch, Through::Staging);
                            }
                            if let Some((sweep, to)) = across {
                                let src = if in_buffer == 0 {
                                    x.as_ptr()
                                } else {
                                    y.as_ptr()
                                };
                                let from = Rows::block(src as *mut Complex<T>, inner);
                                sweep.run_plane(from, to, scaled(true), scratch);
                                continue;
                            }
                        }
                        PlaneOp::Steps(steps) => steps.run_one(y, x, scale, scratch),
                    }
                    if let PlaneEnd::Rows(r) = to {
                        let out = |i: usize| r.row(o * rows + i);
                        copy_rows(rows, inner, |i| buf.add(i * inner), out, out);
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redist::runs::{Run, RunBuffer};

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
    fn column_staging_bound_covers_the_scratch() {
        let mut planner = rustfft::FftPlanner::<f64>::new();
        for n in (1..=300).chain([512, 1024]) {
            let fft = planner.plan_fft_forward(n);
            for inner in [1, 3, 8, 1000] {
                let sweep = Sweep::new(fft.clone(), &[2, n, inner + 1], 1);
                let tiles = (tile_lines::<f64>(n) * tile_stride::<f64>(n)
                    + fft.get_inplace_scratch_len()) as isize;
                let over = sweep.scratch_len() as isize - tiles;
                assert!(
                    over <= 0 || sweep.scratch_len() <= column_staging_bound(n),
                    "n {n}: scratch {} > bound {}",
                    sweep.scratch_len(),
                    column_staging_bound(n)
                );
            }
        }
    }

    /// A 3-D FFT from an input, whose in-cache group writes its planes digit-swapped so the
    /// axis-0 column FFT runs in place without staging, against rustfft axis by axis; the
    /// workers get only the scratch `scratch_len` asks for (the in-cache axes' tiles, or
    /// nothing where their column FFT stages in output planes not yet written: too small for
    /// any task through staging), and the input is left as it was.
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
            let local = LocalFft::new(ffts, &shape, &[0, 1, 2]);
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
                let plain = LocalFft::new(ffts.clone(), &shape, &[1, 2]);
                let mut swapped = LocalFft::new(ffts, &shape, &[1, 2]);
                let Some((rows, inner, swap)) = swapped.swappable_rows(2) else {
                    assert!(
                        !crate::column::available(),
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
    fn scattered_rows(count: usize, inner: usize) -> Vec<redist::runs::Run> {
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
        runs: &[redist::runs::Run],
        block: &[Complex<f64>],
        message: &[Complex<f64>],
        inner: usize,
    ) -> Vec<Complex<f64>> {
        runs.iter()
            .flat_map(|run| {
                let buffer = match run.buffer() {
                    redist::runs::RunBuffer::Block => block,
                    redist::runs::RunBuffer::Message => message,
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
        Sweep::new(across.clone(), &[planes, rows, inner], 1).run(
            &mut want,
            None,
            0.5,
            &mut workers(),
        );
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
                redist::runs::RunBuffer::Block => &mut block,
                redist::runs::RunBuffer::Message => &mut message,
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
            assert_eq!(swapped, crate::column::available());
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
}
