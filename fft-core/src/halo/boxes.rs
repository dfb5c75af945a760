//! The pure part of a halo exchange: for any rank of a layout, which boxes of its extended
//! block come from which rank's block (or are filled), computed from global arguments only.
//!
//! Along each axis, the extended range of a rank (its block's global range widened by the
//! width on both sides) is cut into segments that each map onto one run of one owner's block:
//! cut where the global index wraps (periodic), where it leaves the array (filled), and where
//! the owner along that axis changes. A box is one segment per axis; its source rank has, for
//! each grid dimension, the owner coordinate of the segment of the axis that dimension
//! splits. Widths larger than a neighbour's block (or than the axis) simply give more
//! segments, from further ranks, wrapping as often as needed (`numpy.pad(x, w, "wrap")`).

use redist::Layout;
use std::ops::Range;

/// What fills the cells past the global boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    /// The array repeats (the indices wrap modulo the axis length).
    Periodic,
    /// A fill value.
    Fill,
}

/// One run of an extended range along one axis.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    /// First extended index and length.
    dst: usize,
    len: usize,
    /// The owner's coordinate along the grid dimension that splits the axis (0 when none
    /// does) and the first index in the owner's block; `None` past a filled boundary.
    src: Option<(usize, usize)>,
}

/// A box of one rank's extended block: where it lies there, and where its values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HaloBox {
    /// First index in the extended block per logical axis.
    pub dst: Vec<usize>,
    /// Length per logical axis.
    pub len: Vec<usize>,
    /// The source rank and the first index in its block per logical axis; `None`: filled.
    pub src: Option<(usize, Vec<usize>)>,
}

impl HaloBox {
    /// Elements in the box.
    pub(crate) fn elements(&self) -> usize {
        self.len.iter().product()
    }
}

/// The geometry of every rank's extended block for one layout and widths.
#[derive(Debug, Clone)]
pub(crate) struct Extents {
    layout: Layout,
    widths: Vec<usize>,
    edge: Edge,
    /// Per axis: each grid coordinate's global range along the axis (one range, the whole
    /// axis, when no grid dimension splits it).
    owners: Vec<Vec<Range<usize>>>,
}

impl Extents {
    /// The extents of `layout` widened by `widths[a]` cells on both sides of each axis `a`.
    pub(crate) fn new(layout: &Layout, widths: &[usize], edge: Edge) -> Self {
        let grid = layout.grid();
        let owners = (0..layout.ndim())
            .map(|a| match layout.grid_dim_of(a) {
                None => std::iter::once(0..layout.global_shape()[a]).collect(),
                Some(j) => (0..grid.dims()[j])
                    .map(|c| {
                        let mut coords = vec![0; grid.rank()];
                        coords[j] = c;
                        layout.global_range(grid.rank_of(&coords), a)
                    })
                    .collect(),
            })
            .collect();
        Self {
            layout: layout.clone(),
            widths: widths.to_vec(),
            edge,
            owners,
        }
    }

    /// The layout.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Rank `q`'s extended shape, logical order: its block's plus twice the width per axis.
    pub(crate) fn shape(&self, q: usize) -> Vec<usize> {
        let local = self.layout.local_shape(q);
        (local.iter().zip(&self.widths))
            .map(|(n, w)| n + 2 * w)
            .collect()
    }

    /// Memory strides (elements) per logical axis of rank `q`'s extended block: the layout's
    /// memory order over the extended shape.
    pub(crate) fn strides(&self, q: usize) -> Vec<usize> {
        strides_in(&self.shape(q), self.layout.memory_order().axes())
    }

    /// Elements of rank `q`'s extended block (one field).
    pub(crate) fn len(&self, q: usize) -> usize {
        self.shape(q).iter().product()
    }

    /// The width per axis.
    pub(crate) fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// The segments of rank `q`'s extended range along `axis`.
    fn segments(&self, q: usize, axis: usize) -> Vec<Segment> {
        let n = self.layout.global_shape()[axis] as i64;
        let own = self.layout.global_range(q, axis);
        let w = self.widths[axis] as i64;
        let ext = own.len() as i64 + 2 * w;
        let owners = &self.owners[axis];
        let mut out = Vec::new();
        let mut t = 0i64;
        while t < ext {
            let i = own.start as i64 - w + t;
            let (len, src) = if (0..n).contains(&i) || (self.edge == Edge::Periodic && n > 0) {
                let g = i.rem_euclid(n) as usize;
                let c = owners
                    .iter()
                    .position(|r| r.contains(&g))
                    .expect("every index has an owner");
                let run = (owners[c].end - g) as i64;
                (run, Some((c, g - owners[c].start)))
            } else if i < 0 {
                (-i, None)
            } else {
                (ext - t, None)
            };
            let len = len.min(ext - t);
            out.push(Segment {
                dst: t as usize,
                len: len as usize,
                src,
            });
            t += len;
        }
        out
    }

    /// Whether segment `s` of rank `q` along `axis` is the rank's own block in place.
    fn interior(&self, q: usize, axis: usize, s: &Segment) -> bool {
        let own = self.layout.global_range(q, axis);
        let w = self.widths[axis];
        let coord = match self.layout.grid_dim_of(axis) {
            Some(j) => self.layout.grid().coords_of(q)[j],
            None => 0,
        };
        s.dst >= w && s.dst + s.len <= w + own.len() && s.src == Some((coord, s.dst - w))
    }

    /// Rank `q`'s boxes, every combination of one segment per axis in C order, except the
    /// box of its own block in place (the interior) when `with_interior` is false. Empty
    /// boxes (a rank that owns nothing) are left out.
    pub(crate) fn boxes(&self, q: usize, with_interior: bool) -> Vec<HaloBox> {
        let d = self.layout.ndim();
        let grid = self.layout.grid();
        let segments: Vec<Vec<Segment>> = (0..d).map(|a| self.segments(q, a)).collect();
        let mut out = Vec::new();
        let mut pick = vec![0usize; d];
        if segments.iter().any(|s| s.is_empty()) {
            return out;
        }
        loop {
            let chosen: Vec<&Segment> = (0..d).map(|a| &segments[a][pick[a]]).collect();
            let inside = (0..d).all(|a| self.interior(q, a, chosen[a]));
            if with_interior || !inside {
                let src = chosen.iter().map(|s| s.src).collect::<Option<Vec<_>>>();
                let src = src.map(|per_axis| {
                    let mut coords = vec![0; grid.rank()];
                    for (a, &(c, _)) in per_axis.iter().enumerate() {
                        if let Some(j) = self.layout.grid_dim_of(a) {
                            coords[j] = c;
                        }
                    }
                    let start = per_axis.iter().map(|&(_, s)| s).collect();
                    (grid.rank_of(&coords), start)
                });
                out.push(HaloBox {
                    dst: chosen.iter().map(|s| s.dst).collect(),
                    len: chosen.iter().map(|s| s.len).collect(),
                    src,
                });
            }
            // The next combination (C order: the last axis fastest).
            let mut a = d;
            loop {
                if a == 0 {
                    return out;
                }
                a -= 1;
                pick[a] += 1;
                if pick[a] < segments[a].len() {
                    break;
                }
                pick[a] = 0;
            }
        }
    }
}

/// Strides per logical axis of a block of `shape` (logical order) stored in memory order
/// `order` (slowest first).
pub(crate) fn strides_in(shape: &[usize], order: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut s = 1;
    for &axis in order.iter().rev() {
        strides[axis] = s;
        s *= shape[axis];
    }
    strides
}

/// Copies the box of lengths `len` (logical axes) from `src` (strides `src_strides`) to
/// `dst` (strides `dst_strides`), walking the axes in memory `order`: the fastest axis as
/// runs (one `memcpy` where both sides store it contiguously), the next one as a strided loop
/// of runs, the slower ones by an index counter with offsets carried along.
///
/// # Safety
/// Every element of the box lies inside the allocations behind `src` and `dst` at the given
/// strides, and the two boxes do not overlap.
pub(crate) unsafe fn copy_box<S: Copy>(
    (src, src_strides): (*const S, &[usize]),
    (dst, dst_strides): (*mut S, &[usize]),
    len: &[usize],
    order: &[usize],
) {
    if len.contains(&0) {
        return;
    }
    let d = len.len();
    let inner = order[d - 1];
    let (run, s_in, d_in) = (len[inner], src_strides[inner], dst_strides[inner]);
    let contiguous = s_in == 1 && d_in == 1;
    // The second fastest memory axis, looped over with its strides (a length-1 axis when
    // the block has one axis).
    let (rows, s_row, d_row) = match d {
        1 => (1, 0, 0),
        _ => {
            let a = order[d - 2];
            (len[a], src_strides[a], dst_strides[a])
        }
    };
    let outer_axes = &order[..d.saturating_sub(2)];
    let outer: usize = outer_axes.iter().map(|&a| len[a]).product();
    let mut index = vec![0usize; d];
    let (mut src_at, mut dst_at) = (0usize, 0usize);
    for _ in 0..outer {
        for r in 0..rows {
            let (s0, d0) = (src_at + r * s_row, dst_at + r * d_row);
            // SAFETY: the caller's contract: the run lies inside both boxes, which are
            // disjoint.
            unsafe {
                if contiguous {
                    std::ptr::copy_nonoverlapping(src.add(s0), dst.add(d0), run);
                } else {
                    for k in 0..run {
                        *dst.add(d0 + k * d_in) = *src.add(s0 + k * s_in);
                    }
                }
            }
        }
        // The next outer index, the fastest of the outer axes first, offsets carried along.
        for &a in outer_axes.iter().rev() {
            index[a] += 1;
            src_at += src_strides[a];
            dst_at += dst_strides[a];
            if index[a] < len[a] {
                break;
            }
            src_at -= len[a] * src_strides[a];
            dst_at -= len[a] * dst_strides[a];
            index[a] = 0;
        }
    }
}

/// Writes `value` into the box of lengths `len` of `dst` (strides `dst_strides`).
///
/// # Safety
/// Every element of the box lies inside the allocation behind `dst`.
pub(crate) unsafe fn fill_box<S: Copy>(
    (dst, dst_strides): (*mut S, &[usize]),
    len: &[usize],
    value: S,
) {
    if len.contains(&0) {
        return;
    }
    let d = len.len();
    let total: usize = len.iter().product();
    let mut index = vec![0usize; d];
    let mut at = 0usize;
    for _ in 0..total {
        // SAFETY: the caller's contract.
        unsafe { *dst.add(at) = value };
        for a in (0..d).rev() {
            index[a] += 1;
            at += dst_strides[a];
            if index[a] < len[a] {
                break;
            }
            at -= len[a] * dst_strides[a];
            index[a] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redist::{GridShape, MemoryOrder};

    /// The extended block of every rank assembled from the boxes (values: global linear
    /// indices, −1 for filled cells) against `numpy.pad(x, w, mode)` sliced to the rank,
    /// written out element by element.
    fn check(layout: &Layout, widths: &[usize], edge: Edge) -> usize {
        let shape = layout.global_shape();
        let d = shape.len();
        let ext = Extents::new(layout, widths, edge);
        let global = |g: &[usize]| {
            g.iter()
                .zip(shape)
                .fold(0i64, |acc, (i, n)| acc * *n as i64 + *i as i64)
        };
        let mut boxes = 0;
        for q in 0..layout.grid().ranks() {
            let eshape = ext.shape(q);
            let estrides = ext.strides(q);
            let mut got = vec![i64::MIN; ext.len(q)];
            for b in ext.boxes(q, true) {
                boxes += 1;
                let mut index = vec![0usize; d];
                for _ in 0..b.elements() {
                    let at: usize = (0..d).map(|a| (b.dst[a] + index[a]) * estrides[a]).sum();
                    assert_eq!(got[at], i64::MIN, "rank {q}: box {b:?} overlaps another");
                    got[at] = match &b.src {
                        None => -1,
                        Some((p, start)) => {
                            let ranges = layout.global_ranges(*p);
                            let g: Vec<usize> = (0..d)
                                .map(|a| ranges[a].start + start[a] + index[a])
                                .collect();
                            for a in 0..d {
                                assert!(ranges[a].contains(&g[a]), "rank {p} owns {g:?}");
                            }
                            global(&g)
                        }
                    };
                    for a in (0..d).rev() {
                        index[a] += 1;
                        if index[a] < b.len[a] {
                            break;
                        }
                        index[a] = 0;
                    }
                }
            }
            // numpy.pad, sliced: extended index t along axis a is global s − w + t.
            let ranges = layout.global_ranges(q);
            let mut index = vec![0usize; d];
            for _ in 0..got.len() {
                let at: usize = (0..d).map(|a| index[a] * estrides[a]).sum();
                let mut g = Vec::with_capacity(d);
                let mut filled = false;
                for a in 0..d {
                    let i = ranges[a].start as i64 - widths[a] as i64 + index[a] as i64;
                    let n = shape[a] as i64;
                    match edge {
                        Edge::Periodic => g.push(i.rem_euclid(n) as usize),
                        Edge::Fill => {
                            filled |= !(0..n).contains(&i);
                            g.push(i.clamp(0, n - 1) as usize);
                        }
                    }
                }
                let want = if filled { -1 } else { global(&g) };
                assert_eq!(
                    got[at], want,
                    "rank {q} extended index {index:?} of {eshape:?}"
                );
                for a in (0..d).rev() {
                    index[a] += 1;
                    if index[a] < eshape[a] {
                        break;
                    }
                    index[a] = 0;
                }
            }
        }
        boxes
    }

    #[test]
    fn boxes_tile_every_extended_block_like_numpy_pad() {
        let mut boxes = 0;
        let cases: [(&[usize], &[usize], &[usize]); 6] = [
            (&[11, 7, 13], &[3], &[1, 1, 1]),
            (&[11, 7, 13], &[2, 3], &[2, 0, 1]),
            (&[5, 3], &[7], &[4, 2]), // ranks that own nothing; widths past the axis
            (&[9, 4, 6], &[4, 2], &[5, 9, 3]),
            (&[6, 5, 4, 3], &[2, 2, 2], &[1, 2, 1, 4]),
            (&[16, 8], &[1], &[0, 3]),
        ];
        for (shape, dims, widths) in cases {
            let grid = GridShape::new(dims.to_vec()).unwrap();
            let d = shape.len();
            let natural = Layout::pencil(shape, grid.clone()).unwrap();
            // A transposed layout too: the last axis split, axis 0 fastest in memory.
            let mut decomposed: Vec<usize> = (d - dims.len()..d).collect();
            decomposed.reverse();
            let order = MemoryOrder::new((1..d).chain([0]).collect()).unwrap();
            let other = Layout::new(shape, grid, decomposed, order).unwrap();
            for layout in [natural, other] {
                for edge in [Edge::Periodic, Edge::Fill] {
                    boxes += check(&layout, widths, edge);
                }
            }
        }
        assert!(boxes > 500, "{boxes}");
    }

    #[test]
    fn copies_follow_strides() {
        // A 3×4 box out of a 5×6 block (C order) into a 4×5 one stored column-major.
        let src: Vec<u32> = (0..30).collect();
        let mut dst = vec![0u32; 20];
        let dst_strides = strides_in(&[4, 5], &[1, 0]);
        // SAFETY: both boxes lie inside their vectors.
        unsafe {
            copy_box(
                (src.as_ptr().add(6 + 1), &[6, 1]),
                (
                    dst.as_mut_ptr().add(dst_strides[0] + dst_strides[1]),
                    &dst_strides,
                ),
                &[3, 4],
                &[0, 1],
            );
            fill_box((dst.as_mut_ptr(), &dst_strides), &[1, 5], 99);
        }
        for i in 0..3 {
            for j in 0..4 {
                let at = (i + 1) * dst_strides[0] + (j + 1) * dst_strides[1];
                assert_eq!(dst[at], (6 * (i + 1) + j + 1) as u32);
            }
        }
        assert!((0..5).all(|j| dst[j * dst_strides[1]] == 99));
    }
}
