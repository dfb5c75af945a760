//! Block layouts of a d-dimensional array over an r-dimensional processor grid: pure data.
//!
//! A [`Layout`] answers, for any rank, which global index range of each axis it owns, the
//! local shape, and how the local block is laid out in memory. Two frames are kept apart:
//! the *logical* frame (global axis order; axis 0 slowest, as numpy's C order) and the
//! *memory* frame (the order of the axes in the rank's local buffer, slowest first), related by
//! [`MemoryOrder`].

use crate::error::{RedistError, Result};
use crate::grid::GridShape;
use crate::split::{balanced_owner, balanced_range, block_owner, block_range};
use std::ops::Range;

/// A permutation of the logical axes giving the local memory layout: `memory_order[k]` is the
/// logical axis stored at memory position `k` (position 0 varies slowest, the last position
/// is contiguous).
///
/// ```
/// use redist::layout::MemoryOrder;
/// let order = MemoryOrder::new(vec![1, 2, 0]).unwrap();
/// assert_eq!(order.contiguous_axis(), 0);
/// assert_eq!(order.position_of(2), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemoryOrder(Vec<usize>);

impl MemoryOrder {
    /// A permutation; errors if `order` is not one.
    pub fn new(order: Vec<usize>) -> Result<Self> {
        let d = order.len();
        let mut seen = vec![false; d];
        for &a in &order {
            if a >= d || seen[a] {
                return Err(RedistError::BadMemoryOrder {
                    memory_order: order,
                    array_rank: d,
                });
            }
            seen[a] = true;
        }
        Ok(Self(order))
    }

    /// C order: memory order equals the logical order.
    pub fn natural(d: usize) -> Self {
        Self((0..d).collect())
    }

    /// The natural order with `axis` moved to the end (made contiguous).
    ///
    /// ```
    /// use redist::layout::MemoryOrder;
    /// assert_eq!(MemoryOrder::natural(4).with_contiguous(1).axes(), &[0, 2, 3, 1]);
    /// ```
    pub fn with_contiguous(&self, axis: usize) -> Self {
        let mut order: Vec<usize> = self.0.iter().copied().filter(|&a| a != axis).collect();
        order.push(axis);
        Self(order)
    }

    /// Logical axes in memory order, slowest first.
    pub fn axes(&self) -> &[usize] {
        &self.0
    }

    /// The logical axis that is contiguous in memory.
    pub fn contiguous_axis(&self) -> usize {
        *self
            .0
            .last()
            .expect("memory order of an array with no axes")
    }

    /// Memory position of logical axis `axis`.
    pub fn position_of(&self, axis: usize) -> usize {
        self.0
            .iter()
            .position(|&a| a == axis)
            .expect("axis not in memory order")
    }

    /// Whether this is C order.
    pub fn is_natural(&self) -> bool {
        self.0.iter().enumerate().all(|(i, &a)| i == a)
    }
}

/// A block distribution of a global array of shape `global_shape` over a processor grid:
/// grid dimension `j` splits logical axis `decomposed[j]` with the balanced rule of
/// [`balanced_range`], or in blocks of a given size ([`Layout::with_blocks`], FFTW-MPI's
/// distribution: [`block_range`]); all other axes are local. Each rank stores its block in
/// `memory_order`.
///
/// ```
/// use redist::{grid::GridShape, layout::Layout};
/// // 11×7×13 on a 2×3 grid: axes 0 and 1 split, axis 2 local (a pencil).
/// let layout = Layout::pencil(&[11, 7, 13], GridShape::new(vec![2, 3]).unwrap()).unwrap();
/// assert_eq!(layout.global_ranges(0), vec![0..6, 0..3, 0..13]);
/// assert_eq!(layout.local_shape(5), vec![5, 2, 13]);
/// assert_eq!(layout.local_len(5), 130);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    global_shape: Vec<usize>,
    grid: GridShape,
    decomposed: Vec<usize>,
    memory_order: MemoryOrder,
    /// Per grid dimension, the block size of its split (`None`: balanced).
    blocks: Vec<Option<usize>>,
}

/// Checks a global shape: at least one axis, no zero extent, element count fits a `usize`.
pub fn check_shape(shape: &[usize]) -> Result<usize> {
    if shape.is_empty() {
        return Err(RedistError::EmptyShape);
    }
    if shape.contains(&0) {
        return Err(RedistError::ZeroExtent {
            shape: shape.to_vec(),
        });
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| RedistError::ShapeOverflow {
            shape: shape.to_vec(),
        })
}

impl Layout {
    /// A layout; checks the shape, that `1 <= r < d`, that `decomposed` names `r` distinct
    /// axes, and that `memory_order` is a permutation of the `d` axes.
    pub fn new(
        global_shape: &[usize],
        grid: GridShape,
        decomposed: Vec<usize>,
        memory_order: MemoryOrder,
    ) -> Result<Self> {
        check_shape(global_shape)?;
        let d = global_shape.len();
        if grid.rank() >= d {
            return Err(RedistError::GridRankTooLarge {
                grid_rank: grid.rank(),
                array_rank: d,
            });
        }
        let mut seen = vec![false; d];
        let distinct = decomposed
            .iter()
            .all(|&a| a < d && !std::mem::replace(&mut seen[a], true));
        if decomposed.len() != grid.rank() || !distinct {
            return Err(RedistError::BadDecomposition {
                decomposed,
                array_rank: d,
            });
        }
        if memory_order.axes().len() != d {
            return Err(RedistError::BadMemoryOrder {
                memory_order: memory_order.axes().to_vec(),
                array_rank: d,
            });
        }
        Ok(Self {
            global_shape: global_shape.to_vec(),
            blocks: vec![None; grid.rank()],
            grid,
            decomposed,
            memory_order,
        })
    }

    /// The same layout with grid dimension `j` splitting its axis in blocks of `blocks[j]`
    /// (rank coordinate `c` owning `c·b .. (c+1)·b`, cut at the extent: trailing ranks may
    /// own nothing), or balanced where `blocks[j]` is `None`. Errors when a block is zero or
    /// too small to cover its axis, or `blocks` has not one entry per grid dimension.
    ///
    /// ```
    /// use redist::{grid::GridShape, layout::Layout};
    /// // FFTW-MPI's default: 10 rows on 4 ranks in blocks of ⌈10/4⌉ = 3.
    /// let l = Layout::pencil(&[10, 5], GridShape::new(vec![4]).unwrap()).unwrap();
    /// let l = l.with_blocks(vec![Some(3)]).unwrap();
    /// assert_eq!(l.global_range(3, 0), 9..10);
    /// assert_eq!(l.locate(&[9, 0]), (3, 0));
    /// assert!(l.with_blocks(vec![Some(2)]).is_err()); // 4 blocks of 2 miss rows 8 and 9
    /// ```
    pub fn with_blocks(&self, blocks: Vec<Option<usize>>) -> Result<Self> {
        let r = self.grid.rank();
        if blocks.len() != r {
            return Err(RedistError::LayoutMismatch {
                what: format!(
                    "{} block sizes {blocks:?} for a grid of rank {r}",
                    blocks.len()
                ),
            });
        }
        for (j, block) in blocks.iter().enumerate() {
            let (axis, parts) = (self.decomposed[j], self.grid.dims()[j]);
            let extent = self.global_shape[axis];
            match *block {
                Some(b) if b == 0 || b.saturating_mul(parts) < extent => {
                    return Err(RedistError::BadBlock {
                        grid_dim: j,
                        axis,
                        extent,
                        parts,
                        block: b,
                    })
                }
                _ => {}
            }
        }
        Ok(Self {
            blocks,
            ..self.clone()
        })
    }

    /// Per grid dimension, the block size of its split, or `None` for the balanced split.
    pub fn blocks(&self) -> &[Option<usize>] {
        &self.blocks
    }

    /// The index range of the axis that grid dimension `j` splits owned by coordinate `part`
    /// along `j`: the balanced split, or the blocks of [`Layout::with_blocks`].
    pub fn split_range(&self, j: usize, part: usize) -> Range<usize> {
        let n = self.global_shape[self.decomposed[j]];
        match self.blocks[j] {
            None => balanced_range(n, self.grid.dims()[j], part),
            Some(b) => block_range(n, b, part),
        }
    }

    /// The usual starting pencil: grid dimension `j` splits axis `j`, C memory order.
    pub fn pencil(global_shape: &[usize], grid: GridShape) -> Result<Self> {
        let r = grid.rank();
        let d = global_shape.len();
        Self::new(
            global_shape,
            grid,
            (0..r).collect(),
            MemoryOrder::natural(d),
        )
    }

    /// The same distribution with a different memory order.
    pub fn with_memory_order(&self, memory_order: MemoryOrder) -> Result<Self> {
        Self::new(
            &self.global_shape,
            self.grid.clone(),
            self.decomposed.clone(),
            memory_order,
        )?
        .with_blocks(self.blocks.clone())
    }

    /// The global shape, logical frame.
    pub fn global_shape(&self) -> &[usize] {
        &self.global_shape
    }

    /// The processor grid.
    pub fn grid(&self) -> &GridShape {
        &self.grid
    }

    /// `decomposed()[j]` is the logical axis split by grid dimension `j`.
    pub fn decomposed(&self) -> &[usize] {
        &self.decomposed
    }

    /// The local memory order.
    pub fn memory_order(&self) -> &MemoryOrder {
        &self.memory_order
    }

    /// Array rank d.
    pub fn ndim(&self) -> usize {
        self.global_shape.len()
    }

    /// The grid dimension that splits `axis`, or `None` when the axis is local.
    pub fn grid_dim_of(&self, axis: usize) -> Option<usize> {
        self.decomposed.iter().position(|&a| a == axis)
    }

    /// Whether `axis` is entirely local on every rank.
    pub fn is_local(&self, axis: usize) -> bool {
        self.grid_dim_of(axis).is_none()
    }

    /// The global index range of `axis` owned by `rank`.
    pub fn global_range(&self, rank: usize, axis: usize) -> Range<usize> {
        let n = self.global_shape[axis];
        match self.grid_dim_of(axis) {
            None => 0..n,
            Some(j) => self.split_range(j, self.grid.coords_of(rank)[j]),
        }
    }

    /// The global index ranges of every axis owned by `rank`, logical frame.
    pub fn global_ranges(&self, rank: usize) -> Vec<Range<usize>> {
        let coords = self.grid.coords_of(rank);
        self.global_shape
            .iter()
            .enumerate()
            .map(|(axis, &n)| match self.grid_dim_of(axis) {
                None => 0..n,
                Some(j) => self.split_range(j, coords[j]),
            })
            .collect()
    }

    /// The first global index of each axis owned by `rank` (the block's offset), logical frame.
    pub fn global_offsets(&self, rank: usize) -> Vec<usize> {
        self.global_ranges(rank).iter().map(|r| r.start).collect()
    }

    /// The local block's shape, logical frame.
    pub fn local_shape(&self, rank: usize) -> Vec<usize> {
        self.global_ranges(rank).iter().map(|r| r.len()).collect()
    }

    /// The local block's shape in memory order (slowest first).
    pub fn local_shape_in_memory(&self, rank: usize) -> Vec<usize> {
        let shape = self.local_shape(rank);
        self.memory_order.axes().iter().map(|&a| shape[a]).collect()
    }

    /// Number of elements `rank` holds (zero for a rank that owns nothing).
    pub fn local_len(&self, rank: usize) -> usize {
        self.local_shape(rank).iter().product()
    }

    /// The largest local length over all ranks (what a buffer must hold to serve every rank).
    pub fn max_local_len(&self) -> usize {
        (0..self.grid.ranks())
            .map(|r| self.local_len(r))
            .max()
            .unwrap_or(0)
    }

    /// Memory strides (in elements) of each logical axis of `rank`'s local buffer.
    ///
    /// ```
    /// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}};
    /// let l = Layout::pencil(&[4, 5, 6], GridShape::new(vec![1]).unwrap()).unwrap();
    /// assert_eq!(l.local_strides(0), vec![30, 6, 1]);
    /// let t = l.with_memory_order(MemoryOrder::new(vec![1, 2, 0]).unwrap()).unwrap();
    /// assert_eq!(t.local_strides(0), vec![1, 24, 4]);
    /// ```
    pub fn local_strides(&self, rank: usize) -> Vec<usize> {
        let shape = self.local_shape(rank);
        let mut strides = vec![0; shape.len()];
        let mut s = 1;
        for &axis in self.memory_order.axes().iter().rev() {
            strides[axis] = s;
            s *= shape[axis];
        }
        strides
    }

    /// The rank owning global element `index` (logical frame) and its offset in that rank's
    /// local buffer.
    pub fn locate(&self, index: &[usize]) -> (usize, usize) {
        let mut coords = vec![0; self.grid.rank()];
        for (j, &axis) in self.decomposed.iter().enumerate() {
            coords[j] = match self.blocks[j] {
                None => balanced_owner(self.global_shape[axis], self.grid.dims()[j], index[axis]),
                Some(b) => block_owner(b, index[axis]),
            };
        }
        let rank = self.grid.rank_of(&coords);
        let ranges = self.global_ranges(rank);
        let strides = self.local_strides(rank);
        let offset = index
            .iter()
            .zip(&ranges)
            .zip(&strides)
            .map(|((&i, r), &s)| (i - r.start) * s)
            .sum();
        (rank, offset)
    }

    /// Fills `rank`'s block (in this layout's memory order) with each element's global C-order
    /// linear index, converted by `f`: the index-valued test data, which makes any
    /// redistribution checkable exactly on every rank without a gather (as
    /// [`crate::dist::DistArray::fill_index_valued`] does for block-cyclic arrays).
    ///
    /// ```
    /// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}};
    /// let l = Layout::pencil(&[2, 3], GridShape::new(vec![1]).unwrap()).unwrap();
    /// let t = l.with_memory_order(MemoryOrder::new(vec![1, 0]).unwrap()).unwrap();
    /// let mut block = vec![0u64; 6];
    /// t.fill_index_valued(0, &mut block, |g| g);
    /// assert_eq!(block, vec![0, 3, 1, 4, 2, 5]); // column-major in memory
    /// ```
    pub fn fill_index_valued<T>(&self, rank: usize, local: &mut [T], f: impl Fn(u64) -> T) {
        let shape = &self.global_shape;
        let ranges = self.global_ranges(rank);
        let strides = self.local_strides(rank);
        assert_eq!(
            local.len(),
            self.local_len(rank),
            "block length of rank {rank}"
        );
        for lin in 0..local.len() {
            let mut rest = lin;
            let (mut offset, mut global, mut scale) = (0, 0u64, 1u64);
            for k in (0..shape.len()).rev() {
                let i = rest % ranges[k].len();
                rest /= ranges[k].len();
                offset += i * strides[k];
                global += (ranges[k].start + i) as u64 * scale;
                scale *= shape[k] as u64;
            }
            local[offset] = f(global);
        }
    }

    /// Whether this layout and `other` describe the same global array on the same grid.
    pub fn check_compatible(&self, other: &Layout) -> Result<()> {
        if self.global_shape != other.global_shape {
            return Err(RedistError::LayoutMismatch {
                what: format!(
                    "global shapes {:?} and {:?}",
                    self.global_shape, other.global_shape
                ),
            });
        }
        if self.grid != other.grid {
            return Err(RedistError::LayoutMismatch {
                what: format!("grids {} and {}", self.grid, other.grid),
            });
        }
        Ok(())
    }

    /// Whether grid dimension `j` splits the same axis in the same parts in both layouts.
    pub fn same_split(&self, other: &Layout, j: usize) -> bool {
        self.decomposed[j] == other.decomposed[j] && self.blocks[j] == other.blocks[j]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
        let total: usize = shape.iter().product();
        (0..total)
            .map(|mut lin| {
                let mut idx = vec![0; shape.len()];
                for (i, &n) in idx.iter_mut().zip(shape).rev() {
                    *i = lin % n;
                    lin /= n;
                }
                idx
            })
            .collect()
    }

    #[test]
    fn locate_is_a_bijection_onto_local_buffers() {
        let shape = [5, 3, 4];
        for dims in [
            vec![2],
            vec![3],
            vec![6],
            vec![2, 3],
            vec![4, 2],
            vec![1, 5],
        ] {
            let grid = GridShape::new(dims).unwrap();
            for order in [vec![0, 1, 2], vec![2, 0, 1], vec![1, 2, 0]] {
                let base = Layout::pencil(&shape, grid.clone()).unwrap();
                let layout = base
                    .with_memory_order(MemoryOrder::new(order).unwrap())
                    .unwrap();
                let mut hits: Vec<Vec<u32>> = (0..grid.ranks())
                    .map(|r| vec![0; layout.local_len(r)])
                    .collect();
                for idx in all_indices(&shape) {
                    let (rank, off) = layout.locate(&idx);
                    assert!(layout
                        .global_ranges(rank)
                        .iter()
                        .zip(&idx)
                        .all(|(r, i)| r.contains(i)));
                    hits[rank][off] += 1;
                }
                assert!(hits.iter().flatten().all(|&h| h == 1));
            }
        }
    }

    #[test]
    fn locate_is_a_bijection_with_given_blocks() {
        let shape = [7, 3, 5];
        for (dims, blocks) in [
            (vec![3], vec![Some(3)]),
            (vec![4], vec![Some(2)]),
            (vec![5], vec![Some(7)]),
            (vec![2, 3], vec![Some(6), Some(1)]),
            (vec![4, 2], vec![None, Some(3)]),
        ] {
            let grid = GridShape::new(dims).unwrap();
            let layout = Layout::pencil(&shape, grid.clone())
                .unwrap()
                .with_memory_order(MemoryOrder::new(vec![1, 2, 0]).unwrap())
                .unwrap()
                .with_blocks(blocks.clone())
                .unwrap();
            let mut hits: Vec<Vec<u32>> = (0..grid.ranks())
                .map(|r| vec![0; layout.local_len(r)])
                .collect();
            for idx in all_indices(&shape) {
                let (rank, off) = layout.locate(&idx);
                let ranges = layout.global_ranges(rank);
                assert!(ranges.iter().zip(&idx).all(|(r, i)| r.contains(i)));
                hits[rank][off] += 1;
                // Block sizes as given: coordinate c starts at c·b.
                for (j, b) in blocks.iter().enumerate() {
                    if let Some(b) = b {
                        let c = grid.coords_of(rank)[j];
                        assert_eq!(ranges[j].start, c * b);
                    }
                }
            }
            assert!(hits.iter().flatten().all(|&h| h == 1), "{blocks:?}");
        }
        let l = Layout::pencil(&[7, 3], GridShape::new(vec![3]).unwrap()).unwrap();
        let e = l.with_blocks(vec![Some(2)]).unwrap_err();
        assert!(e.to_string().contains("a block size of 2"), "{e}");
        assert!(l.with_blocks(vec![Some(0)]).is_err());
        assert!(l.with_blocks(vec![None, None]).is_err());
    }

    #[test]
    fn index_valued_blocks_agree_with_locate() {
        let shape = [5, 3, 4];
        let grid = GridShape::new(vec![2, 3]).unwrap();
        let layout = Layout::pencil(&shape, grid.clone())
            .unwrap()
            .with_memory_order(MemoryOrder::new(vec![2, 0, 1]).unwrap())
            .unwrap();
        let blocks: Vec<Vec<u64>> = (0..grid.ranks())
            .map(|r| {
                let mut b = vec![u64::MAX; layout.local_len(r)];
                layout.fill_index_valued(r, &mut b, |g| g);
                b
            })
            .collect();
        for (linear, idx) in all_indices(&shape).into_iter().enumerate() {
            let (rank, offset) = layout.locate(&idx);
            assert_eq!(blocks[rank][offset], linear as u64);
        }
    }

    #[test]
    fn validation_names_the_values() {
        let g = GridShape::new(vec![2, 2]).unwrap();
        let e = Layout::pencil(&[4, 4], g.clone()).unwrap_err();
        assert_eq!(
            e,
            RedistError::GridRankTooLarge {
                grid_rank: 2,
                array_rank: 2
            }
        );
        let e =
            Layout::new(&[4, 4, 4], g.clone(), vec![1, 1], MemoryOrder::natural(3)).unwrap_err();
        assert!(e.to_string().contains("[1, 1]"));
        assert!(Layout::pencil(&[4, 0, 4], g.clone()).is_err());
        assert!(Layout::pencil(&[usize::MAX, 2, 2], g).is_err());
        assert!(MemoryOrder::new(vec![0, 0, 1]).is_err());
    }

    #[test]
    fn ranks_may_own_nothing() {
        let l = Layout::pencil(&[2, 5], GridShape::new(vec![3]).unwrap()).unwrap();
        assert_eq!(l.local_shape(2), vec![0, 5]);
        assert_eq!(l.local_len(2), 0);
        assert_eq!(l.max_local_len(), 5);
    }
}
