//! 1-D FFTs along one axis of a block ([`Sweep`]), in parallel over lines: contiguous lines
//! in cache-sized batches; lines along a strided axis gathered a tile at a time into the
//! worker's scratch, transformed there and scattered back, or transformed where they lie by a
//! column FFT ([`super::column`]) where the length has one.

use super::column::{ColumnFft, MAX_LEN};
use super::rows::Rows;
use super::transpose::{gather, scatter};
use super::{column_lines, column_task_lines, tile_lines, tile_stride, Planes, BATCH_ELEMENTS};
use crate::real::Real;
use num_complex::Complex;
use rayon::prelude::*;
use redist::alloc::AlignedBuf;
use rustfft::Fft;
use std::sync::Arc;

/// One worker's share of a contiguous sweep: (index, (its lines, its scratch)).
type WorkerChunk<'a, T> = (
    usize,
    (&'a mut [Complex<T>], &'a mut AlignedBuf<Complex<T>>),
);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `lines` consecutive lines of length `n`.
    Contiguous { lines: usize },
    /// Memory shape `[outer, n, inner]`: lines have stride `inner`.
    Strided { outer: usize, inner: usize },
}

/// How a strided task's column FFT reaches its rows (the `column` module's two forms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Through {
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
    pub(super) fft: Arc<dyn Fft<T>>,
    pub(super) n: usize,
    shape: Shape,
    pub(super) position: usize,
    /// The column FFT that transforms a strided sweep's rows where they lie instead of
    /// gathering them into tiles, where this length and element have one ([`super::column`]).
    pub(super) column: Option<Arc<ColumnFft>>,
}

impl<T: Real> Sweep<T> {
    /// A sweep with `fft` along the axis at memory position `position` of a block with
    /// memory shape `memory_shape` (slowest first).
    pub fn new(fft: Arc<dyn Fft<T>>, memory_shape: &[usize], position: usize) -> Self {
        Self::planned(fft, memory_shape, position, true)
    }

    /// [`Sweep::new`]; with `columns` false a strided sweep never takes a column FFT (it
    /// gathers its lines into tiles for `fft` itself), so that every line of a length is
    /// transformed by the same code whatever its stride: a deterministic plan's sweeps
    /// ([`crate::FftOptions::deterministic`]).
    pub(crate) fn planned(
        fft: Arc<dyn Fft<T>>,
        memory_shape: &[usize],
        position: usize,
        columns: bool,
    ) -> Self {
        let n = memory_shape[position];
        let outer: usize = memory_shape[..position].iter().product();
        let inner: usize = memory_shape[position + 1..].iter().product();
        let shape = if inner == 1 {
            Shape::Contiguous { lines: outer }
        } else {
            Shape::Strided { outer, inner }
        };
        let column = match shape {
            Shape::Strided { .. } if columns => {
                ColumnFft::new(&*fft, std::mem::size_of::<T>()).map(Arc::new)
            }
            Shape::Strided { .. } | Shape::Contiguous { .. } => None,
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
        match (&self.column, self.shape) {
            (Some(_), Shape::Strided { inner, .. }) => column_task_lines(self.n, inner),
            (Some(_), Shape::Contiguous { .. }) => column_lines(self.n),
            (None, _) => tile_lines::<T>(self.n),
        }
    }

    /// Scratch elements one worker needs for this sweep.
    pub fn scratch_len(&self) -> usize {
        self.scratch_len_through(Through::Staging)
    }

    /// Scratch elements one worker needs for this sweep when its column FFT (if any) runs
    /// `through` that way: only the staging form needs a staging block.
    pub(super) fn scratch_len_through(&self, through: Through) -> usize {
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
    /// tile's two copies); otherwise the lines are
    /// gathered into a tile (one line every [`tile_stride`] elements, by
    /// [`super::transpose`]'s 4 × 4 blocks where it can), transformed there and scattered.
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
                rows_in[i] = from.row(o * n + at).wrapping_add(c0).cast_const().cast();
                rows_out[i] = to.row(o * n + i).wrapping_add(c0).cast();
            }
            let scale = scale.map(|s| s.to_f64().expect("a finite scale"));
            let (rows_in, rows_out) = (&rows_in[..n], &rows_out[..n]);
            if through == Through::Staging {
                let staging = scratch.as_mut_ptr().cast::<Complex<f64>>();
                // SAFETY: `T` is `f64` (above), so the scratch is `scratch.len()` complex
                // f64s; the rows are valid for the task's columns (the caller's contract).
                unsafe {
                    let staging = std::slice::from_raw_parts_mut(staging, scratch.len());
                    column.run(rows_in, rows_out, width, scale, staging)
                };
            } else {
                // SAFETY: as above; run_direct's extra condition holds: `Destination` is out
                // of place, and `Swapped` reads row `swapped(i)` of `to` itself as element
                // `i`.
                unsafe { column.run_direct(rows_in, rows_out, width, scale) };
            }
            return;
        }
        debug_assert!(
            through != Through::Swapped,
            "only column FFTs take swapped rows"
        );
        let (tile, fft_scratch) = scratch.split_at_mut(lines.min(inner) * stride);
        let src = |i| from.row(o * n + i).wrapping_add(c0).cast_const();
        // SAFETY: the task's source rows are valid for its columns and the tile holds
        // `width` lines `stride` apart (the caller's contract, `scratch_len`).
        unsafe { gather(src, n, width, tile.as_mut_ptr(), stride) };
        for c in 0..width {
            let line = &mut tile[c * stride..c * stride + n];
            self.fft.process_with_scratch(line, fft_scratch);
        }
        let dst = |i| to.row(o * n + i).wrapping_add(c0);
        // SAFETY: the task's destination rows are valid and its own (the caller's contract).
        unsafe { scatter(tile.as_ptr(), stride, n, width, dst, scale) };
    }

    /// One plane of this strided sweep on the calling thread, through the staging block:
    /// row `i` read from `from.row(i)` and written to `to.row(i)`, scaled by `scale`.
    ///
    /// # Safety
    /// As for [`Sweep::strided_task`], for every task of plane 0.
    pub(super) unsafe fn run_plane(
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
    pub(super) unsafe fn run_plane_through(
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
    pub(super) fn run_serial(
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
                        super::transpose::scale(lines, s);
                    }
                }
            }
            Shape::Strided { outer, inner } => {
                // In cache, through a staging block even from an input where one is at hand
                // (`through`): straight through the destination (pass 2 in place over 16 rows
                // a few KiB apart, which share L1 sets) is slower, and so are narrower tasks
                // with less staging.
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
    pub(super) fn run_through(
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
                            super::transpose::scale(lines, s);
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
                // L1 sets, is slower.
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
