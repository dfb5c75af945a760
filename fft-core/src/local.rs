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

/// A planned sweep of 1-D FFTs along one axis.
pub(crate) struct Sweep<T: Real> {
    fft: Arc<dyn Fft<T>>,
    n: usize,
    shape: Shape,
}

impl<T: Real> Sweep<T> {
    /// A sweep along the axis at memory position `position` of a block with memory shape
    /// `memory_shape` (slowest first).
    pub(crate) fn new(fft: Arc<dyn Fft<T>>, memory_shape: &[usize], position: usize) -> Self {
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
    pub(crate) fn scratch_len(&self) -> usize {
        let fft_scratch = self.fft.get_inplace_scratch_len();
        match self.shape {
            Shape::Contiguous { .. } => fft_scratch,
            Shape::Strided { .. } => fft_scratch + TILE_LINES * self.n,
        }
    }

    /// Transforms `data` in place. With `input`, the lines are first copied from it (the
    /// copy is fused with the transform, batch by batch, while the batch is in cache); only
    /// for contiguous sweeps. Every element is multiplied by `scale` when it is not one.
    pub(crate) fn run(
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
                assert!(input.is_none(), "fused input copy needs contiguous lines");
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
