//! Strided box copies: the pack and unpack kernels, with the local transpose fused in.
//!
//! A [`CopyPlan`] copies a d-dimensional box between two strided buffers (strides given per
//! logical axis, so source and destination may have different memory orders). It is planned
//! once: unit-extent axes are dropped, the axis contiguous in the destination becomes the
//! fast inner axis, and when the source is contiguous along another axis the two are copied
//! in cache-sized tiles (a blocked transpose). Execution allocates nothing and runs in
//! parallel with rayon over independent pieces of the destination.

use crate::transport::SendPtr;
use rayon::prelude::*;

/// One loop of a copy: extent and the strides (in elements) on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dim {
    extent: usize,
    src_stride: usize,
    dst_stride: usize,
}

/// A planned strided box copy. See the module documentation.
///
/// ```
/// use redist::pack::CopyPlan;
/// // Transpose a 2×3 row-major matrix into a 3×2 row-major one.
/// let src = [0, 1, 2, 3, 4, 5];
/// let mut dst = [0; 6];
/// let plan = CopyPlan::new(&[2, 3], &[3, 1], &[1, 2]);
/// plan.run(&src, 0, &mut dst, 0);
/// assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyPlan {
    /// Outer loops, slowest destination stride first.
    outer: Vec<Dim>,
    /// The slow inner axis (split into work pieces).
    slow: Dim,
    /// The fast inner axis (smallest destination stride).
    fast: Dim,
    /// Whether (slow, fast) is copied in tiles (source contiguous along `slow`).
    tiled: bool,
    len: usize,
    src_span: usize,
    dst_span: usize,
}

/// Edge of the square tile of a transposing copy (a tile of complex doubles is 16 KiB).
const TILE: usize = 32;

/// Minimum elements in one parallel work piece.
const MIN_PIECE: usize = 1 << 14;

impl CopyPlan {
    /// Plans copying a box of `extent` (logical frame) from a buffer with per-axis strides
    /// `src_strides` into one with `dst_strides`. The destination strides must map distinct
    /// indices of the box to distinct offsets (true for any box of a compact array).
    pub fn new(extent: &[usize], src_strides: &[usize], dst_strides: &[usize]) -> Self {
        assert!(extent.len() == src_strides.len() && extent.len() == dst_strides.len());
        let len: usize = extent.iter().product();
        let span = |strides: &[usize]| -> usize {
            if len == 0 {
                0
            } else {
                1 + extent
                    .iter()
                    .zip(strides)
                    .map(|(&n, &s)| (n - 1) * s)
                    .sum::<usize>()
            }
        };
        let (src_span, dst_span) = (span(src_strides), span(dst_strides));
        let unit = Dim {
            extent: 1,
            src_stride: 0,
            dst_stride: 0,
        };
        let mut dims: Vec<Dim> = extent
            .iter()
            .zip(src_strides.iter().zip(dst_strides))
            .filter(|(&n, _)| n != 1)
            .map(|(&n, (&s, &d))| Dim {
                extent: n,
                src_stride: s,
                dst_stride: d,
            })
            .collect();
        if len == 0 {
            dims.clear();
        }
        // Destination-major loop order: slowest destination stride first.
        dims.sort_by_key(|d| std::cmp::Reverse(d.dst_stride));
        let fast = dims.pop().unwrap_or(unit);
        // The axis the source is contiguous along, if it is not `fast`, is tiled against it.
        let src_fast = dims
            .iter()
            .enumerate()
            .min_by_key(|(_, d)| d.src_stride)
            .map(|(i, d)| (i, *d));
        let (slow, tiled) = match src_fast {
            Some((i, d)) if d.src_stride < fast.src_stride && d.src_stride == 1 => {
                dims.remove(i);
                (d, true)
            }
            _ => (dims.pop().unwrap_or(unit), false),
        };
        Self {
            outer: dims,
            slow,
            fast,
            tiled,
            len: if len == 0 { 0 } else { len },
            src_span,
            dst_span,
        }
    }

    /// Number of elements copied.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the box is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies the box from `src[src_offset..]` into `dst[dst_offset..]`, in parallel.
    ///
    /// # Panics
    /// If the box does not fit in either buffer at the given offsets.
    pub fn run<T: Copy + Default + Send + Sync>(
        &self,
        src: &[T],
        src_offset: usize,
        dst: &mut [T],
        dst_offset: usize,
    ) {
        if self.len == 0 {
            return;
        }
        assert!(
            src_offset + self.src_span <= src.len(),
            "copy source out of bounds"
        );
        assert!(
            dst_offset + self.dst_span <= dst.len(),
            "copy destination out of bounds"
        );
        // In bounds: the offsets plus the spans fit the buffers (asserted above).
        let src_ptr = SendPtr::from_const(src.as_ptr().wrapping_add(src_offset));
        let dst_ptr = SendPtr::new(dst.as_mut_ptr().wrapping_add(dst_offset));
        let outer_count: usize = self.outer.iter().map(|d| d.extent).product();
        let chunk = self.slow_chunk(outer_count);
        let pieces_per_outer = self.slow.extent.div_ceil(chunk);
        let pieces = outer_count * pieces_per_outer;
        let work = |piece: usize| {
            let (outer_index, slow_piece) = (piece / pieces_per_outer, piece % pieces_per_outer);
            let (mut so, mut d_o) = (0usize, 0usize);
            let mut rest = outer_index;
            for dim in self.outer.iter().rev() {
                let i = rest % dim.extent;
                rest /= dim.extent;
                so += i * dim.src_stride;
                d_o += i * dim.dst_stride;
            }
            let start = slow_piece * chunk;
            let end = (start + chunk).min(self.slow.extent);
            // SAFETY: the box lies inside both buffers (checked above); pieces cover disjoint
            // (outer index, slow range) sets, which the injective destination strides map to
            // disjoint destination elements.
            unsafe {
                self.inner(src_ptr.get().add(so), dst_ptr.get().add(d_o), start..end);
            }
        };
        if pieces == 1 || self.len < 2 * MIN_PIECE {
            (0..pieces).for_each(work);
        } else {
            (0..pieces).into_par_iter().for_each(work);
        }
    }

    /// How many slow-axis indices make one parallel piece.
    fn slow_chunk(&self, outer_count: usize) -> usize {
        let per_slow = self.fast.extent.max(1);
        let threads = rayon::current_num_threads().max(1);
        let wanted_pieces = 4 * threads;
        let mut chunk = self.slow.extent;
        if outer_count < wanted_pieces {
            let per_outer = wanted_pieces.div_ceil(outer_count);
            chunk = self.slow.extent.div_ceil(per_outer);
        }
        let min_rows = MIN_PIECE.div_ceil(per_slow);
        chunk = chunk.max(min_rows).max(1);
        if self.tiled {
            chunk = chunk.div_ceil(TILE) * TILE;
        }
        chunk.min(self.slow.extent).max(1)
    }

    /// The (slow, fast) kernel over slow indices `rows`.
    ///
    /// # Safety
    /// `src` and `dst` must be valid for the whole box.
    #[inline]
    unsafe fn inner<T: Copy + Default>(
        &self,
        src: *const T,
        dst: *mut T,
        rows: std::ops::Range<usize>,
    ) {
        let (slow, fast) = (self.slow, self.fast);
        if self.tiled {
            // Buffered tile transpose: TILE source rows (one per fast index, contiguous along
            // the slow axis) are read whole into an L1-resident buffer, then TILE destination
            // rows (one per slow index, contiguous along the fast axis) are written whole from
            // it. Main memory is only touched in contiguous runs, so power-of-two strides
            // cannot make tile rows evict each other.
            let mut tmp = [T::default(); TILE * TILE];
            let mut i0 = rows.start;
            while i0 < rows.end {
                let w = TILE.min(rows.end - i0);
                let mut j0 = 0;
                while j0 < fast.extent {
                    let h = TILE.min(fast.extent - j0);
                    for jj in 0..h {
                        let s = src.add(i0 * slow.src_stride + (j0 + jj) * fast.src_stride);
                        std::ptr::copy_nonoverlapping(s, tmp.as_mut_ptr().add(jj * TILE), w);
                    }
                    for ii in 0..w {
                        let d = dst.add((i0 + ii) * slow.dst_stride + j0 * fast.dst_stride);
                        for jj in 0..h {
                            *d.add(jj * fast.dst_stride) = *tmp.get_unchecked(jj * TILE + ii);
                        }
                    }
                    j0 += h;
                }
                i0 += w;
            }
        } else if fast.src_stride == 1 && fast.dst_stride == 1 {
            // Destination rows that lie apart (an unpack) get the next one prefetched. Not
            // the source's: a pack (rows apart, into one message stream) measured slower
            // with it, an unpack faster with its destination's.
            let bytes = fast.extent * std::mem::size_of::<T>();
            let dst_apart = slow.dst_stride != fast.extent;
            for i in rows.clone() {
                if dst_apart && i + 1 < rows.end {
                    prefetch_run(dst.wrapping_add((i + 1) * slow.dst_stride), bytes);
                }
                std::ptr::copy_nonoverlapping(
                    src.add(i * slow.src_stride),
                    dst.add(i * slow.dst_stride),
                    fast.extent,
                );
            }
        } else {
            for i in rows {
                let s = src.add(i * slow.src_stride);
                let d = dst.add(i * slow.dst_stride);
                for j in 0..fast.extent {
                    *d.add(j * fast.dst_stride) = *s.add(j * fast.src_stride);
                }
            }
        }
    }
}

/// Asks the cache for the `bytes` bytes at `ptr`, one cache line at a time: a hint that never
/// faults, whatever the address. The copy kernels (here and in `fft-core`'s sweeps) call it
/// for the row after the one they copy: rows that lie far apart each start on a page of their
/// own, where the hardware prefetchers have no stream to follow yet (row copies 12–14 %
/// faster, axis-0 FFT sweeps 9–10 %, on this project's benchmark machine).
///
/// ```
/// let row = vec![0.0f64; 512];
/// redist::pack::prefetch_run(row.as_ptr(), 4096);
/// ```
#[inline(always)]
pub fn prefetch_run<E>(ptr: *const E, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = ptr.cast::<i8>();
        let mut off = 0;
        while off < bytes {
            // SAFETY: prefetching is a hint that never faults, whatever the address.
            unsafe { _mm_prefetch(p.wrapping_add(off), _MM_HINT_T0) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, bytes);
}

/// Compact strides of a box of `extent` stored in memory order `order` (logical axes, slowest
/// first), expressed per logical axis.
///
/// ```
/// use redist::pack::compact_strides;
/// assert_eq!(compact_strides(&[2, 3, 4], &[0, 1, 2]), vec![12, 4, 1]);
/// assert_eq!(compact_strides(&[2, 3, 4], &[2, 0, 1]), vec![3, 1, 6]);
/// ```
pub fn compact_strides(extent: &[usize], order: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; extent.len()];
    let mut s = 1;
    for &axis in order.iter().rev() {
        strides[axis] = s;
        s *= extent[axis];
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: element-by-element copy over all indices of the box.
    fn brute(
        extent: &[usize],
        src: &[u64],
        so: usize,
        ss: &[usize],
        dst: &mut [u64],
        d_o: usize,
        ds: &[usize],
    ) {
        let total: usize = extent.iter().product();
        for mut lin in 0..total {
            let (mut a, mut b) = (so, d_o);
            for k in (0..extent.len()).rev() {
                let i = lin % extent[k];
                lin /= extent[k];
                a += i * ss[k];
                b += i * ds[k];
            }
            dst[b] = src[a];
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn matches_brute_force(
            extent in prop::collection::vec(prop_oneof![1usize..4, 1usize..70], 1..5),
            src_perm_seed in any::<u64>(),
            dst_perm_seed in any::<u64>(),
            src_pad in 0usize..3,
            dst_pad in 0usize..3,
        ) {
            let d = extent.len();
            let perm = |seed: u64| {
                let mut p: Vec<usize> = (0..d).collect();
                let mut s = seed;
                for i in (1..d).rev() {
                    let j = (s % (i as u64 + 1)) as usize;
                    s /= i as u64 + 1;
                    p.swap(i, j);
                }
                p
            };
            // Both sides are boxes inside bigger arrays, so neither has compact strides.
            let src_extent: Vec<usize> = extent.iter().map(|n| n + src_pad).collect();
            let dst_extent: Vec<usize> = extent.iter().map(|n| n + dst_pad).collect();
            let ss = compact_strides(&src_extent, &perm(src_perm_seed));
            let ds = compact_strides(&dst_extent, &perm(dst_perm_seed));
            let src_len: usize = src_extent.iter().product();
            let dst_len: usize = dst_extent.iter().product();
            let src: Vec<u64> = (0..src_len as u64).collect();
            let mut want = vec![u64::MAX; dst_len + 3];
            let mut got = vec![u64::MAX; dst_len + 3];
            let so = if src_pad > 0 { ss.iter().sum::<usize>() } else { 0 };
            let d_o = 2 + if dst_pad > 0 { ds.iter().sum::<usize>() } else { 0 };
            brute(&extent, &src, so, &ss, &mut want, d_o, &ds);
            CopyPlan::new(&extent, &ss, &ds).run(&src, so, &mut got, d_o);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn large_tiled_transpose_in_parallel() {
        let (n0, n1, n2) = (37, 129, 67);
        let src: Vec<u64> = (0..(n0 * n1 * n2) as u64).collect();
        let ss = compact_strides(&[n0, n1, n2], &[0, 1, 2]);
        for order in [[2, 0, 1], [1, 2, 0], [0, 2, 1], [2, 1, 0]] {
            let ds = compact_strides(&[n0, n1, n2], &order);
            let mut want = vec![0; src.len()];
            let mut got = vec![0; src.len()];
            brute(&[n0, n1, n2], &src, 0, &ss, &mut want, 0, &ds);
            CopyPlan::new(&[n0, n1, n2], &ss, &ds).run(&src, 0, &mut got, 0);
            assert_eq!(got, want, "order {order:?}");
        }
    }

    #[test]
    fn empty_box_copies_nothing() {
        let plan = CopyPlan::new(&[3, 0, 2], &[0, 2, 1], &[0, 2, 1]);
        assert!(plan.is_empty());
        plan.run::<u8>(&[], 0, &mut [], 0);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn out_of_bounds_panics() {
        let plan = CopyPlan::new(&[2, 3], &[3, 1], &[3, 1]);
        plan.run(&[0u8; 6], 1, &mut [0u8; 6], 0);
    }
}
