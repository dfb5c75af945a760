//! The FFTs of several axes of one block ([`LocalFft`]): the sweeps along the fastest axes
//! one sub-block at a time while it is in cache, the others over the whole block.

use super::rows::{spread_apart, DigitSwap};
use super::sweep::{Sweep, Through};
use super::BATCH_ELEMENTS;
use crate::real::Real;
use num_complex::Complex;
use rayon::prelude::*;
use redist::alloc::AlignedBuf;
use redist::transport::SendPtr;
use rustfft::Fft;
use std::sync::Arc;

/// Bytes of the L2 cache of one core: a plane larger than this does not stay in it between
/// the two sweeps of the in-cache group (see `LocalFft::swap_rows`).
const L2_BYTES: usize = 2 << 20;

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
    pub(super) rest: Vec<Sweep<T>>,
    sub_len: usize,
    blocks: usize,
    /// Whether the in-cache group, from an input, writes its sub-blocks digit-swapped for
    /// the one sweep left (along memory position 0, one sub-block per element, a column
    /// FFT), so that sweep runs in place without a staging block (`super::column`).
    pub(super) swap: bool,
    /// Whether the in-cache group, from an input, can borrow two output sub-blocks not yet
    /// written as its first sweep's staging block (see [`LocalFft::borrowed_pair`]): that
    /// sweep is a column FFT, the others contiguous, and two sub-blocks hold its staging.
    pub(super) borrow: bool,
    /// Whether the step, in place, finds each sub-block's rows digit-swapped (the fused step
    /// before wrote them so, [`LocalFft::swappable_rows`]): its sweep across them then runs
    /// in place with no staging block.
    rows_swapped: bool,
    /// Whether the in-cache group is a plane's rows and the column FFT across them, on a
    /// plane larger than L2 ([`L2_BYTES`]): from an input, the rows go first, each to row
    /// `swapped(i)` of its plane as it is transformed, then the column FFT runs on them in
    /// place with no staging block. (The column FFT first, through a staging block, leaves
    /// the plane's first columns outside L2 by the time the rows reach them.)
    swap_rows: bool,
    /// Whether the sweeps over the whole block run before the in-cache group (a
    /// deterministic plan whose order puts them first).
    rest_first: bool,
    /// Whether strided sweeps may take column FFTs (not in a deterministic plan).
    columns: bool,
}

impl<T: Real> LocalFft<T> {
    /// Sweeps with `ffts[i]` along memory position `positions[i]` of a block of
    /// `memory_shape`; the positions must be the trailing ones (in any order). The in-cache
    /// group is sized for `threads` workers (at least two sub-blocks per thread).
    ///
    /// `deterministic` ([`crate::FftOptions::deterministic`]): the sweeps run exactly in the
    /// order given (the in-cache group first or last, as that order has it, else none) and
    /// strided ones without column FFTs, so that each axis's lines are transformed by the same
    /// code, in the same order of axes, however the plan splits the axes into steps.
    pub(crate) fn new(
        ffts: Vec<Arc<dyn Fft<T>>>,
        memory_shape: &[usize],
        positions: &[usize],
        threads: usize,
        deterministic: bool,
    ) -> Self {
        // A contiguous sweep (the last memory position) given first goes second instead
        // (sweeps along different axes commute): from an input, the first sweep reads it as
        // it transforms, a strided one in its column FFT's first pass, where a contiguous one
        // copies the lines first. A swap of the first two keeps the order of the axes the
        // same however the sweeps split into the in-cache group and the rest, so a batch
        // stays bit-identical to its fields transformed one by one.
        let (mut ffts, mut positions) = (ffts, positions.to_vec());
        if !deterministic && positions.len() >= 2 && positions[0] + 1 == memory_shape.len() {
            ffts.swap(0, 1);
            positions.swap(0, 1);
        }
        let positions = &positions[..];
        let lowest = *positions.iter().min().expect("at least one sweep");
        let mut sorted = positions.to_vec();
        sorted.sort_unstable();
        // Fusion needs the swept axes to be exactly the trailing memory positions.
        let trailing = sorted.iter().copied().eq(lowest..memory_shape.len());
        let wanted = 2 * threads.max(1);
        let mut first = if trailing {
            (lowest..memory_shape.len())
                .find(|&p| memory_shape[..p].iter().product::<usize>() >= wanted)
                .unwrap_or(memory_shape.len())
        } else {
            memory_shape.len()
        };
        // The in-cache group runs first, or (deterministic) last when the order given has
        // the other sweeps first; an order that interleaves them gets no group.
        let in_group = |p: &usize| *p >= first;
        let group_first = positions
            .iter()
            .skip_while(|p| in_group(p))
            .all(|p| !in_group(p));
        let group_last = positions.iter().skip_while(|p| !in_group(p)).all(in_group);
        let rest_first = deterministic && !group_first && group_last;
        if deterministic && !group_first && !group_last {
            first = memory_shape.len();
        }
        let columns = !deterministic;
        let sub_shape = &memory_shape[first..];
        let sweep = |f: &Arc<dyn Fft<T>>, shape: &[usize], p: usize| {
            Sweep::planned(f.clone(), shape, p, columns)
        };
        let whole = ffts
            .iter()
            .zip(positions)
            .map(|(f, &p)| sweep(f, memory_shape, p))
            .collect();
        let fused: Vec<Sweep<T>> = ffts
            .iter()
            .zip(positions)
            .filter(|(_, &p)| p >= first)
            .map(|(f, &p)| sweep(f, sub_shape, p - first))
            .collect();
        let rest: Vec<Sweep<T>> = ffts
            .iter()
            .zip(positions)
            .filter(|(_, &p)| p < first)
            .map(|(f, &p)| sweep(f, memory_shape, p))
            .collect();
        let blocks: usize = memory_shape[..first].iter().product();
        let swap = match rest.as_slice() {
            [last] => !rest_first && first == 1 && last.column.is_some() && last.n == blocks,
            _ => false,
        };
        let sub_len: usize = sub_shape.iter().product();
        // A plane larger than L2, its rows and the column FFT across them: from an input,
        // the rows go first.
        let plane_bytes = sub_len * std::mem::size_of::<Complex<T>>();
        let swap_rows = !rest_first
            && sub_shape.len() == 2
            && plane_bytes > L2_BYTES
            && fused.len() == 2
            && fused.iter().any(|s| !s.is_strided())
            && fused.iter().any(|s| s.column.is_some() && s.position == 0);
        let borrow = !swap_rows
            && match fused.split_first() {
                Some((first, others)) => {
                    !rest_first
                        && first.column.is_some()
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
            swap_rows,
            rest_first,
            columns,
        }
    }

    /// When the step could take each sub-block's rows digit-swapped, in place, with
    /// `workers` workers: the in-cache group's first sweep runs across the sub-block's rows
    /// as a column FFT and the others along them, and the rows are [`spread_apart`] (else
    /// the staging block is faster). Then `(rows per sub-block, elements per row, the
    /// swap)`: a step before that writes the rows so (see
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
    pub(super) fn in_cache(&self, workers: usize) -> bool {
        self.fused.len() >= 2 && self.blocks >= 2 * workers && self.sub_len > 0
    }

    /// Scratch elements one worker needs, when the step reads an input (`from_input`) or
    /// runs in place: from an input, the in-cache group's column FFT stages in the output
    /// and the axis-0 sweep left needs no staging (see `swap` and `borrow`).
    pub(crate) fn scratch_len(&self, from_input: bool, workers: usize) -> usize {
        if !self.in_cache(workers) || self.rest_first {
            // Every sweep through staging blocks: over the whole block, or (rest first) the
            // in-cache group in place after the others.
            let group = self.fused.iter().map(Sweep::scratch_len);
            let whole = self.whole.iter().map(Sweep::scratch_len);
            return whole.chain(group).max().unwrap_or(0);
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
        // The column FFT on digit-swapped rows: from an input when the rows go first
        // (`swap_rows`), in place when the step before wrote them so (`rows_swapped`).
        let swapped_rows = if from_input {
            self.swap_rows
        } else {
            self.rows_swapped
        };
        let fused = (self.fused.iter()).map(|s| match (borrowed, swapped_rows) {
            _ if !s.is_strided() => s.scratch_len_through(Through::Staging),
            (true, _) => s.scratch_len_through(Through::Destination),
            (false, true) => s.scratch_len_through(Through::Swapped),
            (false, false) => s.scratch_len_through(Through::Staging),
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
                Some(Sweep::planned(s.fft.clone(), plane, p, self.columns))
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
        if self.rest_first {
            self.run_rest_first(data, input, scale, workers);
            return;
        }
        let fused_scale = (self.rest.is_empty() && scale != T::one()).then_some(scale);
        let count = self.fused.len();
        let (blocks, sub_len) = (self.blocks, self.sub_len);
        assert_eq!(data.len(), blocks * sub_len);
        // From an input, sub-block `b` goes to sub-block `target(b)`: `swapped(b)` when the
        // sweep left takes its rows digit-swapped (see `swap`).
        let swap = self.swap && input.is_some();
        let out = SendPtr::new(data.as_mut_ptr());
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
                if let (true, Some(input)) = (self.swap_rows, input) {
                    self.rows_to_swapped(&input[offset..offset + sub_len], block, scratch);
                    let across = self.rows_across().1;
                    across.run_serial(block, None, fused_scale, scratch, Through::Swapped);
                    continue;
                }
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

    /// The in-cache group's sweep along the rows and the one across them (`swap_rows`).
    fn rows_across(&self) -> (&Sweep<T>, &Sweep<T>) {
        match self.fused.as_slice() {
            [a, b] if a.is_strided() => (b, a),
            [a, b] => (a, b),
            _ => unreachable!("swap_rows: the rows and the column FFT across them"),
        }
    }

    /// The in-cache group's rows (`swap_rows`) from `input` into `block`: row `i` of the
    /// plane to row `swapped(i)`, copied a batch at a time and transformed there while in
    /// cache.
    fn rows_to_swapped(
        &self,
        input: &[Complex<T>],
        block: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) {
        let (rows, across) = self.rows_across();
        let column = across.column.as_deref().expect("a column FFT across");
        let n = rows.n;
        let batch = (BATCH_ELEMENTS / n).max(1);
        let at = |i: usize| column.swapped(i) * n..(column.swapped(i) + 1) * n;
        for first in (0..across.n).step_by(batch) {
            let lines = first..(first + batch).min(across.n);
            for i in lines.clone() {
                block[at(i)].copy_from_slice(&input[i * n..(i + 1) * n]);
            }
            for i in lines {
                rows.fft.process_with_scratch(&mut block[at(i)], scratch);
            }
        }
    }

    /// [`LocalFft::run`] with the sweeps over the whole block first (from `input` when
    /// given), then the in-cache group in place, one sub-block at a time; the last sweep of
    /// the group multiplies by `scale`.
    fn run_rest_first(
        &self,
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        for (i, sweep) in self.rest.iter().enumerate() {
            let src = if i == 0 { input } else { None };
            sweep.run(data, src, T::one(), workers);
        }
        let fused_scale = (scale != T::one()).then_some(scale);
        let count = self.fused.len();
        let (blocks, sub_len) = (self.blocks, self.sub_len);
        assert_eq!(data.len(), blocks * sub_len);
        let nworkers = workers.len();
        let out = SendPtr::new(data.as_mut_ptr());
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            for b in self.range(w, nworkers) {
                // SAFETY: workers take disjoint ranges of sub-blocks, so each has one writer.
                let block =
                    unsafe { std::slice::from_raw_parts_mut(out.get().add(b * sub_len), sub_len) };
                for (i, sweep) in self.fused.iter().enumerate() {
                    let s = if i + 1 == count { fused_scale } else { None };
                    sweep.run_serial(block, None, s, scratch, Through::Staging);
                }
            }
        });
    }
}
