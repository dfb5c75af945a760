//! [`PencilArray`]: one rank's block of a distributed array together with its layout, like
//! mpi4py-fft's `DistArray` or PencilArrays.jl's `PencilArray` (not to be confused with
//! `redist::dist::DistArray`, which describes a block-cyclic distribution and holds no data).

use crate::error::{FftError, Result};
use crate::view::{block_shape, block_view, block_view_mut};
use ndarray::{ArrayViewD, ArrayViewMutD, Dimension, IxDyn};
use redist::Layout;
use std::ops::Range;

/// This rank's block of a distributed array: its elements (in the layout's memory order) and
/// the [`Layout`] that says which global indices they are. `fields` blocks of the same layout
/// may be held one after another (a plan's batch): views then get a leading field axis.
///
/// Indexing is always in the logical (global) axis order: [`PencilArray::view`] is an
/// [`ndarray`] view whose index `i` is global index `local_slice()[a].start + i[a]` along each
/// axis `a`, [`PencilArray::global_iter`] yields every element with its global index, and
/// [`PencilArray::as_slice`] is the raw buffer the transforms take.
///
/// ```
/// use fft_core::ndarray::Dimension; // IxDyn::slice
/// use fft_core::{PencilArray, GridShape, Layout};
/// // Rank 1 of 2 holds rows 3..5 of a 5×4 array.
/// let layout = Layout::pencil(&[5, 4], GridShape::new(vec![2]).unwrap()).unwrap();
/// let mut a = PencilArray::<f64>::zeros(layout, 1, 1);
/// assert_eq!(a.local_slice(), vec![3..5, 0..4]);
/// a.fill_with(|g| (10 * g[0] + g[1]) as f64);
/// assert_eq!(a.view()[[1, 2]], 42.0);
/// assert_eq!(a.global_index(&[1, 2]), vec![4, 2]);
/// let (first, value) = a.global_iter().next().unwrap();
/// assert_eq!((first.slice(), *value), (&[3, 0][..], 30.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PencilArray<S> {
    layout: Layout,
    rank: usize,
    fields: usize,
    data: Vec<S>,
}

impl<S> PencilArray<S> {
    /// `rank`'s block of `layout` (`fields` of them, at least one), every element
    /// `S::default()` (zero for numbers).
    ///
    /// # Panics
    /// If `fields` is 0 or `rank` is not a rank of the layout's grid.
    pub fn zeros(layout: Layout, rank: usize, fields: usize) -> Self
    where
        S: Clone + Default,
    {
        Self::check_rank_fields(&layout, rank, fields);
        let len = fields * layout.local_len(rank);
        Self {
            layout,
            rank,
            fields,
            data: vec![S::default(); len],
        }
    }

    /// `rank`'s block of `layout` (`fields` of them) from `data` in the layout's memory
    /// order; errors if the length is not `fields · layout.local_len(rank)`.
    ///
    /// # Panics
    /// If `fields` is 0 or `rank` is not a rank of the layout's grid.
    pub fn from_vec(layout: Layout, rank: usize, fields: usize, data: Vec<S>) -> Result<Self> {
        Self::check_rank_fields(&layout, rank, fields);
        let expected = fields * layout.local_len(rank);
        if data.len() != expected {
            return Err(FftError::BufferLength {
                buffer: "array data",
                expected,
                actual: data.len(),
            });
        }
        Ok(Self {
            layout,
            rank,
            fields,
            data,
        })
    }

    fn check_rank_fields(layout: &Layout, rank: usize, fields: usize) {
        assert!(fields > 0, "a distributed array holds at least one field");
        assert!(
            rank < layout.grid().ranks(),
            "rank {rank} is not a rank of a grid of {} processes",
            layout.grid().ranks()
        );
    }

    /// The layout (one field).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The rank whose block this is.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of fields (blocks of the layout one after another).
    pub fn fields(&self) -> usize {
        self.fields
    }

    /// The global shape (one field), logical order.
    pub fn global_shape(&self) -> &[usize] {
        self.layout.global_shape()
    }

    /// The shape of this rank's block (one field), logical order.
    pub fn local_shape(&self) -> Vec<usize> {
        self.layout.local_shape(self.rank)
    }

    /// The global index range of each logical axis that this rank holds (mpi4py-fft's
    /// `local_slice`).
    pub fn local_slice(&self) -> Vec<Range<usize>> {
        self.layout.global_ranges(self.rank)
    }

    /// The global index of the block's first element along each logical axis.
    pub fn global_offsets(&self) -> Vec<usize> {
        self.layout.global_offsets(self.rank)
    }

    /// The global index of the element at local index `local` (logical order, one field).
    ///
    /// # Panics
    /// If `local` has the wrong number of axes or lies outside the block.
    pub fn global_index(&self, local: &[usize]) -> Vec<usize> {
        let ranges = self.local_slice();
        assert_eq!(
            local.len(),
            ranges.len(),
            "local index {local:?}: wrong rank"
        );
        local
            .iter()
            .zip(&ranges)
            .map(|(&i, r)| {
                assert!(
                    i < r.len(),
                    "local index {local:?} outside the block {ranges:?}"
                );
                r.start + i
            })
            .collect()
    }

    /// The local index of global index `global` if this rank holds it (logical order).
    pub fn local_index(&self, global: &[usize]) -> Option<Vec<usize>> {
        let ranges = self.local_slice();
        if global.len() != ranges.len() {
            return None;
        }
        global
            .iter()
            .zip(&ranges)
            .map(|(&g, r)| r.contains(&g).then(|| g - r.start))
            .collect()
    }

    /// The whole block as a view in logical axis order (a leading field axis when
    /// `fields() > 1`).
    pub fn view(&self) -> ArrayViewD<'_, S> {
        block_view(&self.layout, self.rank, self.fields, &self.data).expect("length checked")
    }

    /// The mutable counterpart of [`PencilArray::view`].
    pub fn view_mut(&mut self) -> ArrayViewMutD<'_, S> {
        block_view_mut(&self.layout, self.rank, self.fields, &mut self.data)
            .expect("length checked")
    }

    /// Field `field` as a view in logical axis order.
    ///
    /// # Panics
    /// If `field >= fields()`.
    pub fn field(&self, field: usize) -> ArrayViewD<'_, S> {
        let len = self.layout.local_len(self.rank);
        block_view(
            &self.layout,
            self.rank,
            1,
            &self.data[field * len..(field + 1) * len],
        )
        .expect("length checked")
    }

    /// Field `field` as a mutable view in logical axis order.
    ///
    /// # Panics
    /// If `field >= fields()`.
    pub fn field_mut(&mut self, field: usize) -> ArrayViewMutD<'_, S> {
        let len = self.layout.local_len(self.rank);
        block_view_mut(
            &self.layout,
            self.rank,
            1,
            &mut self.data[field * len..(field + 1) * len],
        )
        .expect("length checked")
    }

    /// The elements in memory order (what the transforms take).
    pub fn as_slice(&self) -> &[S] {
        &self.data
    }

    /// The elements in memory order, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [S] {
        &mut self.data
    }

    /// The elements in memory order, and the layout.
    pub fn into_parts(self) -> (Vec<S>, Layout) {
        (self.data, self.layout)
    }

    /// Every element with its global index: `[g_0, …, g_{d−1}]`, or `[field, g_0, …]` when
    /// `fields() > 1`; in logical C order. The index is an [`IxDyn`](type@IxDyn) (`index[a]`, or
    /// `index.slice()` with [`ndarray::Dimension`] in scope).
    pub fn global_iter(&self) -> impl Iterator<Item = (IxDyn, &S)> + '_ {
        let (offsets, lead) = (self.global_offsets(), self.lead());
        let view = self.view();
        // Both iterate in logical C order.
        ndarray::indices(view.raw_dim())
            .into_iter()
            .zip(view)
            .map(move |(index, value)| (shift(index, &offsets, lead), value))
    }

    /// Every element, mutably, with its global index (as [`PencilArray::global_iter`]).
    pub fn global_iter_mut(&mut self) -> impl Iterator<Item = (IxDyn, &mut S)> + '_ {
        let (offsets, lead) = (self.global_offsets(), self.lead());
        let view = self.view_mut();
        ndarray::indices(view.raw_dim())
            .into_iter()
            .zip(view)
            .map(move |(index, value)| (shift(index, &offsets, lead), value))
    }

    /// Sets every element of every field to `f(global index)` (one field's index, without
    /// the field axis).
    pub fn fill_with(&mut self, mut f: impl FnMut(&[usize]) -> S) {
        let offsets = self.global_offsets();
        for field in 0..self.fields {
            for (index, value) in self.field_mut(field).indexed_iter_mut() {
                *value = f(shift(index, &offsets, 0).slice());
            }
        }
    }

    /// Whether `layout`, `rank` and `fields` are this array's; an
    /// [`FftError::ArrayMismatch`] naming `which` and the difference otherwise.
    pub fn check_fits(
        &self,
        which: &'static str,
        layout: &Layout,
        rank: usize,
        fields: usize,
    ) -> Result<()> {
        let mismatch = |reason: String| {
            Err(FftError::ArrayMismatch {
                array: which,
                reason,
            })
        };
        if rank != self.rank {
            return mismatch(format!(
                "it holds rank {}'s block, not rank {rank}'s",
                self.rank
            ));
        }
        if fields != self.fields {
            return mismatch(format!(
                "it holds {} fields, expected {fields}",
                self.fields
            ));
        }
        if layout != &self.layout {
            let (shape, strides) = block_shape(layout, rank, 1);
            let (have_shape, have_strides) = block_shape(&self.layout, self.rank, 1);
            return mismatch(format!(
                "its layout (global shape {:?}, grid {:?}, split axes {:?}, memory order {:?}; \
                 local shape {have_shape:?}, strides {have_strides:?}) is not the plan's \
                 (global shape {:?}, grid {:?}, split axes {:?}, memory order {:?}; local \
                 shape {shape:?}, strides {strides:?})",
                self.layout.global_shape(),
                self.layout.grid().dims(),
                self.layout.decomposed(),
                self.layout.memory_order().axes(),
                layout.global_shape(),
                layout.grid().dims(),
                layout.decomposed(),
                layout.memory_order().axes(),
            ));
        }
        Ok(())
    }

    fn lead(&self) -> usize {
        usize::from(self.fields > 1)
    }
}

/// `index` with `offsets` added to its axes from `lead` on.
fn shift(mut index: IxDyn, offsets: &[usize], lead: usize) -> IxDyn {
    for (a, &o) in offsets.iter().enumerate() {
        index[lead + a] += o;
    }
    index
}
