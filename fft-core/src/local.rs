//! Local 1-D FFT sweeps along one axis of a rank's block, in parallel over lines.
//!
//! A [`Sweep`] is planned once per (layout, axis): contiguous lines are transformed in place in
//! cache-sized batches; lines along a strided axis are gathered a tile at a time into the
//! worker's scratch, transformed there and scattered back. Each rayon worker owns one scratch
//! buffer made at plan time, so a sweep allocates nothing.

use crate::real::Real;
use num_complex::Complex;
use rayon::prelude::*;
use rustfft::Fft;
use std::sync::Arc;

/// Lines of a strided axis gathered per tile.
const TILE_LINES: usize = 16;
/// Target elements per batch of contiguous lines (fits in L2 for complex f64).
const BATCH_ELEMENTS: usize = 1 << 14;

/// One worker's share of a contiguous sweep: (index, (its lines, its scratch)).
type WorkerChunk<'a, T> = (usize, (&'a mut [Complex<T>], &'a mut Vec<Complex<T>>));

/// Where the lines lie in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `lines` consecutive lines of length `n`.
    Contiguous { lines: usize },
    /// Memory shape `[outer, n, inner]`: lines have stride `inner`.
    Strided { outer: usize, inner: usize },
}

/// A planned sweep of 1-D FFTs along one axis of a local block: the building block of
/// [`crate::FftPlan`], usable alone for local transforms.
///
/// ```
/// use fft_core::local::Sweep;
/// use num_complex::Complex;
/// use rustfft::FftPlanner;
/// // A 4×8 block in C order: transform along axis 0 (strided, memory position 0).
/// let fft = FftPlanner::<f64>::new().plan_fft_forward(4);
/// let sweep = Sweep::new(fft, &[4, 8], 0);
/// let mut data = vec![Complex::new(1.0, 0.0); 32];
/// let mut workers = vec![vec![Complex::default(); sweep.scratch_len()]; 2];
/// sweep.run(&mut data, None, 1.0, &mut workers);
/// assert_eq!(data[0], Complex::new(4.0, 0.0)); // DC of a column of ones
/// assert_eq!(data[8], Complex::new(0.0, 0.0));
/// ```
pub struct Sweep<T: Real> {
    fft: Arc<dyn Fft<T>>,
    n: usize,
    shape: Shape,
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
        Self { fft, n, shape }
    }

    /// Scratch elements one worker needs for this sweep.
    pub fn scratch_len(&self) -> usize {
        let fft_scratch = self.fft.get_inplace_scratch_len();
        match self.shape {
            Shape::Contiguous { .. } => fft_scratch,
            Shape::Strided { .. } => fft_scratch + TILE_LINES * self.n,
        }
    }

    /// Transforms `data` (one block of this sweep's memory shape) in place on the calling
    /// thread, with one worker's `scratch`. `input` and `scale` as in [`Sweep::run`].
    fn run_serial(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: Option<T>,
        scratch: &mut [Complex<T>],
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
                        lines.iter_mut().for_each(|x| *x = *x * s);
                    }
                }
            }
            Shape::Strided { outer, inner } => {
                if let Some(input) = input {
                    data.copy_from_slice(input);
                }
                let (tile, fft_scratch) = scratch.split_at_mut(TILE_LINES * n);
                for o in 0..outer {
                    let plane = &mut data[o * n * inner..(o + 1) * n * inner];
                    let mut c0 = 0;
                    while c0 < inner {
                        let width = TILE_LINES.min(inner - c0);
                        for i in 0..n {
                            let row = &plane[i * inner + c0..i * inner + c0 + width];
                            for (c, &v) in row.iter().enumerate() {
                                tile[c * n + i] = v;
                            }
                        }
                        let lines = &mut tile[..width * n];
                        fft.process_with_scratch(lines, fft_scratch);
                        if let Some(s) = scale {
                            lines.iter_mut().for_each(|x| *x = *x * s);
                        }
                        for i in 0..n {
                            let row = &mut plane[i * inner + c0..i * inner + c0 + width];
                            for (c, v) in row.iter_mut().enumerate() {
                                *v = tile[c * n + i];
                            }
                        }
                        c0 += width;
                    }
                }
            }
        }
    }

    /// Transforms `data` in place. With `input`, the lines are first copied from it (for
    /// contiguous lines the copy is fused with the transform, batch by batch, while the batch
    /// is in cache). Every element is multiplied by `scale` when it is not one. `workers` holds
    /// one scratch buffer of at least [`Sweep::scratch_len`] elements per parallel worker; the
    /// lines are split among them (rayon), so nothing is allocated.
    pub fn run(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: T,
        workers: &mut [Vec<Complex<T>>],
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
                            lines.iter_mut().for_each(|x| *x = *x * s);
                        }
                    }
                };
                data.par_chunks_mut(per_worker)
                    .zip(workers.par_iter_mut())
                    .enumerate()
                    .for_each(work);
            }
            Shape::Strided { outer, inner } => {
                if let Some(input) = input {
                    data.copy_from_slice(input);
                }
                let blocks = inner.div_ceil(TILE_LINES);
                let tasks = outer * blocks;
                let nworkers = workers.len();
                let base = SharedMut(data.as_mut_ptr());
                let total = data.len();
                assert_eq!(total, outer * n * inner);
                workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
                    let first = tasks * w / nworkers;
                    let last = tasks * (w + 1) / nworkers;
                    let (tile, fft_scratch) = scratch.split_at_mut(TILE_LINES * n);
                    for task in first..last {
                        let (o, block) = (task / blocks, task % blocks);
                        let c0 = block * TILE_LINES;
                        let width = TILE_LINES.min(inner - c0);
                        let origin = o * n * inner + c0;
                        // SAFETY: tasks cover disjoint (outer, column-block) sets, so workers
                        // touch disjoint elements; all indices are < outer·n·inner = total.
                        unsafe {
                            let p = base.get();
                            for i in 0..n {
                                let row = p.add(origin + i * inner);
                                for c in 0..width {
                                    *tile.get_unchecked_mut(c * n + i) = *row.add(c);
                                }
                            }
                            let lines = &mut tile[..width * n];
                            fft.process_with_scratch(lines, fft_scratch);
                            if let Some(s) = scale {
                                lines.iter_mut().for_each(|x| *x = *x * s);
                            }
                            for i in 0..n {
                                let row = p.add(origin + i * inner);
                                for c in 0..width {
                                    *row.add(c) = *tile.get_unchecked(c * n + i);
                                }
                            }
                        }
                    }
                });
            }
        }
    }
}

#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);
// SAFETY: workers write disjoint elements (see `Sweep::run`).
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}
impl<T> SharedMut<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

/// Several sweeps over the same block, along axes that occupy the trailing memory positions
/// (the local axes of the first pencil). The block splits into independent sub-blocks (one per
/// index of the leading memory positions); when there are enough of them, each worker runs
/// every sweep on one sub-block after another while it is in cache, instead of streaming the
/// whole block through memory once per axis.
pub(crate) struct LocalFft<T: Real> {
    /// Sweeps over the whole block, for too few sub-blocks.
    whole: Vec<Sweep<T>>,
    /// The same sweeps over one sub-block.
    fused: Vec<Sweep<T>>,
    sub_len: usize,
    blocks: usize,
}

impl<T: Real> LocalFft<T> {
    /// Sweeps with `ffts[i]` along memory position `positions[i]` of a block of
    /// `memory_shape`; the positions must be the trailing ones (in any order).
    pub(crate) fn new(
        ffts: Vec<Arc<dyn Fft<T>>>,
        memory_shape: &[usize],
        positions: &[usize],
    ) -> Self {
        let first = *positions.iter().min().expect("at least one sweep");
        let mut sorted = positions.to_vec();
        sorted.sort_unstable();
        // Fusion needs the swept axes to be exactly the trailing memory positions.
        let trailing = sorted.iter().copied().eq(first..memory_shape.len());
        let first = if trailing { first } else { memory_shape.len() };
        let sub_shape = &memory_shape[first..];
        let whole = ffts
            .iter()
            .zip(positions)
            .map(|(f, &p)| Sweep::new(f.clone(), memory_shape, p))
            .collect();
        let fused = if trailing {
            ffts.into_iter()
                .zip(positions)
                .map(|(f, &p)| Sweep::new(f, sub_shape, p - first))
                .collect()
        } else {
            Vec::new()
        };
        Self {
            whole,
            fused,
            sub_len: sub_shape.iter().product(),
            blocks: memory_shape[..first].iter().product(),
        }
    }

    /// Scratch elements one worker needs.
    pub(crate) fn scratch_len(&self) -> usize {
        self.whole.iter().map(Sweep::scratch_len).max().unwrap_or(0)
    }

    /// Runs every sweep in order on `data` (in place; from `input` when given); the last sweep
    /// multiplies by `scale`.
    pub(crate) fn run(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: T,
        workers: &mut [Vec<Complex<T>>],
    ) {
        let count = self.whole.len();
        if self.fused.len() < 2 || self.blocks < 2 * workers.len() || self.sub_len == 0 {
            for (i, sweep) in self.whole.iter().enumerate() {
                let last = i + 1 == count;
                let src = if i == 0 { input } else { None };
                sweep.run(data, src, if last { scale } else { T::one() }, workers);
            }
            return;
        }
        let scale = (scale != T::one()).then_some(scale);
        let per_worker = self.blocks.div_ceil(workers.len()) * self.sub_len;
        data.par_chunks_mut(per_worker)
            .zip(workers.par_iter_mut())
            .enumerate()
            .for_each(|(w, (chunk, scratch))| {
                for (b, block) in chunk.chunks_mut(self.sub_len).enumerate() {
                    let offset = w * per_worker + b * self.sub_len;
                    for (i, sweep) in self.fused.iter().enumerate() {
                        let src = match (i, input) {
                            (0, Some(input)) => Some(&input[offset..offset + self.sub_len]),
                            _ => None,
                        };
                        let s = if i + 1 == count { scale } else { None };
                        sweep.run_serial(block, src, s, scratch);
                    }
                }
            });
    }
}
