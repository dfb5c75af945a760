//! Plane-at-a-time kernels: an r2c or c2r step with the FFTs of the other trailing axes, one
//! sub-block at a time ([`PlaneSteps`]), and whole planes whose rows come from or go to an
//! exchange ([`PlaneKernel`]).

use super::column::ColumnFft;
use super::line::LineStep;
use super::rows::{spread_apart, Rows, RunMap};
use super::sweep::{Sweep, Through};
use super::Planes;
use crate::real::Real;
use num_complex::Complex;
use rayon::prelude::*;
use redist::alloc::AlignedBuf;
use redist::pack::prefetch_run;

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
    /// [`PlaneSteps::run_writable`], unless the rows are copied digit-swapped,
    /// [`PlaneSteps::swapped_column`]), the sweeps' scratch and the line step's temporaries.
    pub(crate) fn scratch_len(&self, writable: bool) -> usize {
        let in_place = writable && self.swapped_column().is_none();
        let plane = if self.head || in_place {
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
    /// [`PlaneSteps::scratch_len`]`(true)`. An r2c step, or a c2r step that copies its rows
    /// digit-swapped ([`PlaneSteps::swapped_column`]), reads its source as `run` does.
    pub(crate) fn run_writable(
        &self,
        output: &mut [T],
        input: &mut [T],
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        if self.head || self.swapped_column().is_some() {
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
        let swapped = self.swapped_column();
        if let (Some(column), false) = (swapped, self.head) {
            // The source rows copied digit-swapped into the plane, where the column FFT runs
            // in place with no staging block; the source is only read (not written back).
            let plane: &mut [T] = bytemuck::cast_slice_mut(plane);
            let row = self.sweeps[0].row_len() * 2;
            for (i, x) in x.chunks_exact(row).enumerate() {
                let r = column.swapped(i);
                plane[r * row..(r + 1) * row].copy_from_slice(x);
            }
            let plane: &mut [Complex<T>] = bytemuck::cast_slice_mut(plane);
            self.sweeps[0].run_serial(plane, None, None, sweep_scratch, Through::Swapped);
            self.line
                .run_lines(y, bytemuck::cast_slice(&plane[..]), line_scale, tmp);
        } else if let Some(column) = swapped {
            // The rows go straight to the digit-swapped rows the column FFT takes in place,
            // with no staging block: a working set of a task's columns that fits in L2.
            self.line
                .run_lines_to(y, x, line_scale, tmp, |i| column.swapped(i));
            let block: &mut [Complex<T>] = bytemuck::cast_slice_mut(y);
            let sweep = &self.sweeps[0];
            sweep.run_serial(block, None, sweep_scale(0), sweep_scratch, Through::Swapped);
        } else if self.head {
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

    /// The column FFT of a step whose one sweep runs across the line step's rows (a plane:
    /// the sweep's lines are as long as the rows are many). The rows then go digit-swapped
    /// ([`ColumnFft::swapped`]) for the column FFT to run in place with no staging: an r2c
    /// writes them so, a c2r copies its source's so into its plane.
    pub(super) fn swapped_column(&self) -> Option<&ColumnFft> {
        match self.sweeps.as_slice() {
            [sweep] if sweep.position == 0 && sweep.is_strided() => {
                let plane = sweep.outer() == 1 && sweep.len() == self.line.lines();
                sweep.column.as_deref().filter(|_| plane)
            }
            _ => None,
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
            // SAFETY: the caller's contract: `real` holds a source sub-block, only read.
            let x = unsafe { std::slice::from_raw_parts(real, self.line.input_scalars()) };
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
            // SAFETY: the caller's contract: `real` holds a destination sub-block, this
            // call's alone.
            let y = unsafe { std::slice::from_raw_parts_mut(real, self.line.output_scalars()) };
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
    pub(super) in_rows: bool,
    /// Whether each worker holds a plane buffer ([`Self::fit_to`]).
    pub(super) buffer: bool,
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
    pub(super) fn swapped_across(&self) -> Option<(&Sweep<T>, &ColumnFft)> {
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
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            let (buf, scratch) = scratch.split_at_mut(self.buffer_len());
            for t in tasks * w / nworkers..tasks * (w + 1) / nworkers {
                let (o, _) = planes.task(t, 1);
                let ends = (from, to);
                // SAFETY: the caller's contract; plane `o` and its rows are this task's
                // alone, and `buf` is this worker's.
                unsafe { self.run_plane(o, ends, scale, buf, scratch) };
            }
        });
    }

    /// Plane `o` of [`Self::run_mapped`], with this worker's plane buffer `buf` and scratch.
    ///
    /// # Safety
    /// As [`Self::run_mapped`], for plane `o`, which no one else touches meanwhile.
    unsafe fn run_plane(
        &self,
        o: usize,
        ends: (PlaneEnd<'_, T>, PlaneEnd<'_, T>),
        scale: T,
        buf: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) {
        match (&self.op, self.swapped_across()) {
            (PlaneOp::Steps(steps), _) if steps.across().is_some() => {
                // SAFETY: the caller's contract.
                unsafe { self.steps_plane(steps, o, ends, scale, buf, scratch) }
            }
            (PlaneOp::Ffts(sweeps), Some((across, column))) => {
                let along = &sweeps[..sweeps.len() - 1];
                // SAFETY: the caller's contract.
                unsafe { self.swapped_plane((along, across, column), o, ends, scale, buf, scratch) }
            }
            // SAFETY: the caller's contract.
            _ => unsafe { self.plain_plane(o, ends, scale, buf, scratch) },
        }
    }

    /// Plane `o` of a plane step whose sweep across the rows reads or writes the exchange's
    /// rows straight from or to the plane buffer (an r2c's last sweep, a c2r's first).
    ///
    /// # Safety
    /// As [`Self::run_plane`]; the real side is a block.
    unsafe fn steps_plane(
        &self,
        steps: &PlaneSteps<T>,
        o: usize,
        (from, to): (PlaneEnd<'_, T>, PlaneEnd<'_, T>),
        scale: T,
        buf: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) {
        // The complex side: the exchange's rows, or a block's plane.
        let (real, complex, len) = match (steps.head, from, to) {
            (true, PlaneEnd::Block(x), to) => (x.wrapping_add(o * self.in_len), to, self.out_len),
            (false, from, PlaneEnd::Block(y)) => {
                (y.wrapping_add(o * self.out_len), from, self.in_len)
            }
            _ => unreachable!("the real side of a plane step is a block"),
        };
        let rows = match complex {
            PlaneEnd::Rows(r) => r.skip(o * self.rows),
            PlaneEnd::Block(b) => Rows::block(b.wrapping_add(o * len).cast(), self.inner),
        };
        let plane = &mut buf[..self.plane_len()];
        // SAFETY: the caller's contract: plane `o` of the real block and its complex rows
        // are this call's alone, and `plane` is this worker's buffer.
        unsafe { steps.run_rows(real, rows, plane, scale, scratch) };
    }

    /// Plane `o` of FFTs whose sweep across is a column FFT: the rows come in digit-swapped,
    /// into `buf` (the plane goes out to rows) or straight into the destination plane (or,
    /// [`Self::fit_to`]'s `in_rows`, into the destination rows themselves, each transformed
    /// along as it comes in, while in cache); the sweeps along the rows run in place, and the
    /// sweep across in place with no staging, leaving the rows in order.
    ///
    /// # Safety
    /// As [`Self::run_plane`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn swapped_plane(
        &self,
        (along, across, column): (&[Sweep<T>], &Sweep<T>, &ColumnFft),
        o: usize,
        (from, to): (PlaneEnd<'_, T>, PlaneEnd<'_, T>),
        scale: T,
        buf: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) {
        let (rows, inner) = (self.rows, self.inner);
        let row_in = |i: usize| -> *mut Complex<T> {
            match from {
                PlaneEnd::Rows(r) => r.row(o * rows + i),
                PlaneEnd::Block(src) => src
                    .wrapping_add(o * self.in_len)
                    .cast::<Complex<T>>()
                    .wrapping_add(i * inner),
            }
        };
        let p = match to {
            PlaneEnd::Rows(r) if self.in_rows => {
                let p = r.skip(o * rows);
                let bytes = inner * std::mem::size_of::<Complex<T>>();
                for i in 0..rows {
                    if i + 1 < rows {
                        prefetch_run(row_in(i + 1), bytes);
                    }
                    let row = p.row(column.swapped(i));
                    // SAFETY: source and destination rows are valid for `inner` elements,
                    // this task's alone, and do not overlap (the caller's contract).
                    let row = unsafe {
                        std::ptr::copy_nonoverlapping(row_in(i), row, inner);
                        std::slice::from_raw_parts_mut(row, inner)
                    };
                    for sweep in along {
                        sweep.run_serial(row, None, None, scratch, Through::Staging);
                    }
                }
                p
            }
            _ => {
                let p: *mut Complex<T> = match to {
                    PlaneEnd::Rows(_) => buf.as_mut_ptr(),
                    PlaneEnd::Block(dst) => dst.wrapping_add(o * self.out_len).cast(),
                };
                let row_at = |i: usize| p.wrapping_add(column.swapped(i) * inner);
                // SAFETY: the source rows and the plane at `p` (this worker's buffer or this
                // task's destination plane) are valid and do not overlap.
                unsafe { copy_rows(rows, inner, row_in, row_at, row_in) };
                // SAFETY: `p` holds this task's plane of `rows · inner` elements.
                let plane = unsafe { std::slice::from_raw_parts_mut(p, rows * inner) };
                for sweep in along {
                    sweep.run_serial(plane, None, None, scratch, Through::Staging);
                }
                Rows::block(p, inner)
            }
        };
        let s = (scale != T::one()).then_some(scale);
        // SAFETY: the plane's rows at `p` are this task's, digit-swapped as the sweep takes.
        unsafe { across.run_plane_through(p, p, s, scratch, Through::Swapped) };
        if let (PlaneEnd::Rows(r), false) = (to, self.in_rows) {
            let out = |i: usize| r.row(o * rows + i);
            // SAFETY: the buffer's rows and this task's destination rows do not overlap.
            unsafe { copy_rows(rows, inner, |i| p.row(i), out, out) };
        }
    }

    /// Plane `o` through the plane buffer where a side is rows: a gathered source is copied
    /// into `buf` first, and a plane that goes out to rows is transformed in `buf` and copied
    /// out after (or, when the last sweep runs across the rows, written straight to them).
    ///
    /// # Safety
    /// As [`Self::run_plane`].
    unsafe fn plain_plane(
        &self,
        o: usize,
        (from, to): (PlaneEnd<'_, T>, PlaneEnd<'_, T>),
        scale: T,
        buf: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) {
        let (rows, inner) = (self.rows, self.inner);
        let buf = buf.as_mut_ptr();
        let scaled = |last: bool| (last && scale != T::one()).then_some(scale);
        let x: &[T] = match from {
            // SAFETY: plane `o` of the source block is valid and only read.
            PlaneEnd::Block(src) => unsafe {
                std::slice::from_raw_parts(src.add(o * self.in_len), self.in_len)
            },
            PlaneEnd::Rows(r) => {
                let row_in = |i: usize| r.row(o * rows + i);
                // SAFETY: the source rows are valid and do not overlap the buffer, which
                // holds a plane; the plane is then read whole from it.
                unsafe {
                    copy_rows(rows, inner, row_in, |i| buf.wrapping_add(i * inner), row_in);
                    std::slice::from_raw_parts(buf as *const T, self.in_len)
                }
            }
        };
        let y: &mut [T] = match to {
            // SAFETY: plane `o` of the destination block is this task's alone.
            PlaneEnd::Block(dst) => unsafe {
                std::slice::from_raw_parts_mut(dst.add(o * self.out_len), self.out_len)
            },
            PlaneEnd::Rows(_) => {
                debug_assert!(matches!(from, PlaneEnd::Block(_)));
                // SAFETY: the buffer holds a plane and is not the source (a block).
                unsafe { std::slice::from_raw_parts_mut(buf as *mut T, self.out_len) }
            }
        };
        match &self.op {
            PlaneOp::Ffts(sweeps) => {
                let y: &mut [Complex<T>] = bytemuck::cast_slice_mut(y);
                let x: &[Complex<T>] = bytemuck::cast_slice(x);
                let count = sweeps.len();
                // A last sweep across the rows writes straight to the rows that go out (no
                // copy of the plane): its column FFT's second pass, or its tiles' scatter.
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
                    // SAFETY: the plane (source or buffer) and this task's destination rows
                    // are valid and do not overlap.
                    unsafe { sweep.run_plane(from, to, scaled(true), scratch) };
                    return;
                }
            }
            PlaneOp::Steps(steps) => steps.run_one(y, x, scale, scratch),
        }
        if let PlaneEnd::Rows(r) = to {
            let out = |i: usize| r.row(o * rows + i);
            // SAFETY: the buffer's plane and this task's destination rows do not overlap.
            unsafe { copy_rows(rows, inner, |i| buf.wrapping_add(i * inner), out, out) };
        }
    }
}
