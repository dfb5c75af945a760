//! The local block of a distributed array as an [`ndarray`] view in the global (logical) axis
//! order, whatever its memory order, and the plans' ndarray entry points.
//!
//! A [`Layout`] stores each rank's block in its own memory order (a transposed output keeps
//! axis 0 contiguous, say). [`block_view`] wraps such a buffer in an
//! [`ArrayViewD`] whose axis `a` is logical axis `a` and whose strides are the memory
//! strides, so `view[[i, j, k]]` is the element at global index
//! `(offsets[0] + i, offsets[1] + j, offsets[2] + k)` however the data lies. Buffers of a
//! batch (several fields one after another) get a leading field axis.
//!
//! Every plan kind ([`crate::FftPlan`], [`crate::RealFftPlan`], [`crate::R2rPlan`]) offers:
//!
//! * views of its blocks: `input_view(&buf)`, `input_view_mut(&mut buf)`, `output_view`,
//!   `output_view_mut`, and their global offsets `input_offsets()`, `output_offsets()`;
//! * owned distributed arrays ([`PencilArray`]) in its layouts: `input_array()`,
//!   `output_array()`, transformed by `forward_array` / `backward_array` (no allocation);
//! * transforms of plain ndarrays: `forward_ndarray(view) -> ArrayD` (allocates; for
//!   set-up code and scripts).
//!
//! ```no_run
//! use fft_core::{Complex, FftOptions, FftPlan};
//! let universe = fft_core::mpi::initialize().unwrap();
//! let opts = FftOptions::default().transposed_out(true);
//! let mut plan = FftPlan::<f64>::new(&universe.world(), &[8, 6, 4], opts).unwrap();
//! let mut field = plan.input_array();
//! field.fill_with(|g| Complex::new((g[0] * 100 + g[1] * 10 + g[2]) as f64, 0.0));
//! let mut spectrum = plan.output_array();
//! plan.forward_array(&field, &mut spectrum).unwrap();
//! // Logical indexing although axis 0 is contiguous in memory:
//! let view = plan.output_view(spectrum.as_slice()).unwrap();
//! let offsets = plan.output_offsets();
//! println!("X{:?} = {}", offsets, view[[0, 0, 0]]);
//! ```

use crate::error::{FftError, Result};
use crate::pencil_array::PencilArray;
use crate::plan::{Kind, Plan};
use crate::real::Real;
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder};
use num_complex::Complex;
use redist::{Element, Layout};

/// Shape and strides (elements) in logical axis order of `fields` blocks of `rank` in
/// `layout`, one after another; a leading field axis when `fields > 1`.
pub(crate) fn block_shape(layout: &Layout, rank: usize, fields: usize) -> (Vec<usize>, Vec<usize>) {
    let mut shape = layout.local_shape(rank);
    let mut strides = layout.local_strides(rank);
    if shape.contains(&0) {
        // A rank that owns nothing (more ranks than indices along an axis): ndarray wants the
        // strides of an empty array to address nothing.
        strides.fill(0);
    }
    if fields > 1 {
        shape.insert(0, fields);
        strides.insert(0, layout.local_len(rank));
    }
    (shape, strides)
}

fn check_len(buffer: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(FftError::BufferLength {
            buffer,
            expected,
            actual,
        });
    }
    Ok(())
}

/// `fields` blocks of `rank` in `layout`, stored one after another in `block` (each in the
/// layout's memory order), as a view in logical axis order: axis `a` of the view is logical
/// axis `a` (after a leading field axis when `fields > 1`). Errors if `block` does not have
/// exactly `fields · layout.local_len(rank)` elements.
///
/// ```
/// use fft_core::view::block_view;
/// use redist::{GridShape, Layout, MemoryOrder};
/// // A 2×3 block stored column-major (axis 0 contiguous).
/// let layout = Layout::pencil(&[2, 3], GridShape::new(vec![1]).unwrap()).unwrap()
///     .with_memory_order(MemoryOrder::new(vec![1, 0]).unwrap()).unwrap();
/// let memory = [0, 3, 1, 4, 2, 5]; // element (i, j) holds 3i + j
/// let view = block_view(&layout, 0, 1, &memory).unwrap();
/// assert_eq!(view.shape(), &[2, 3]);
/// assert_eq!(view[[1, 2]], 5);
/// ```
pub fn block_view<'a, S>(
    layout: &Layout,
    rank: usize,
    fields: usize,
    block: &'a [S],
) -> Result<ArrayViewD<'a, S>> {
    check_len("block", fields * layout.local_len(rank), block.len())?;
    let (shape, strides) = block_shape(layout, rank, fields);
    Ok(
        ArrayViewD::from_shape(IxDyn(&shape).strides(IxDyn(&strides)), block)
            .expect("a layout's strides address its block exactly"),
    )
}

/// The mutable counterpart of [`block_view`].
pub fn block_view_mut<'a, S>(
    layout: &Layout,
    rank: usize,
    fields: usize,
    block: &'a mut [S],
) -> Result<ArrayViewMutD<'a, S>> {
    check_len("block", fields * layout.local_len(rank), block.len())?;
    let (shape, strides) = block_shape(layout, rank, fields);
    Ok(
        ArrayViewMutD::from_shape(IxDyn(&shape).strides(IxDyn(&strides)), block)
            .expect("a layout's strides address its block exactly"),
    )
}

/// An owned array of `fields` blocks of `rank` in `layout`, in logical axis order but stored
/// in the layout's memory order, from `data` in that memory order.
pub(crate) fn owned_block<S>(
    layout: &Layout,
    rank: usize,
    fields: usize,
    data: Vec<S>,
) -> ArrayD<S> {
    let (shape, strides) = block_shape(layout, rank, fields);
    ArrayD::from_shape_vec(IxDyn(&shape).strides(IxDyn(&strides)), data)
        .expect("a layout's strides address its block exactly")
}

/// Copies an ndarray `input` (logical order, the shape of the block) into a buffer in the
/// layout's memory order.
fn to_memory_order<S: Copy + Default>(
    which: &'static str,
    layout: &Layout,
    rank: usize,
    fields: usize,
    input: &ArrayViewD<'_, S>,
) -> Result<Vec<S>> {
    let (shape, _) = block_shape(layout, rank, fields);
    if input.shape() != shape.as_slice() {
        return Err(FftError::ArrayMismatch {
            array: which,
            reason: format!(
                "shape {:?}, but this rank's block has shape {shape:?}{}",
                input.shape(),
                if fields > 1 {
                    " (the leading axis counts the fields of the batch)"
                } else {
                    ""
                }
            ),
        });
    }
    let mut data = vec![S::default(); fields * layout.local_len(rank)];
    block_view_mut(layout, rank, fields, &mut data)?.assign(input);
    Ok(data)
}

/// The view, array and ndarray-transform methods of every plan kind.
impl<K: Kind<T>, T: Real> Plan<K, T>
where
    Complex<T>: Element,
{
    /// This rank's forward-input buffer (`input_len()` elements) as a view in logical
    /// axis order (with a leading field axis when `batch() > 1`); see
    /// [`crate::view`]. Errors if the length is wrong.
    pub fn input_view<'a>(&self, buffer: &'a [K::In]) -> Result<ArrayViewD<'a, K::In>> {
        check_len("input", self.input_len(), buffer.len())?;
        block_view(self.input_layout(), self.rank(), self.batch(), buffer)
    }

    /// The mutable counterpart of `input_view`.
    pub fn input_view_mut<'a>(&self, buffer: &'a mut [K::In]) -> Result<ArrayViewMutD<'a, K::In>> {
        check_len("input", self.input_len(), buffer.len())?;
        block_view_mut(self.input_layout(), self.rank(), self.batch(), buffer)
    }

    /// This rank's forward-output buffer (`output_len()` elements) as a view in
    /// logical axis order (with a leading field axis when `batch() > 1`), whatever
    /// the output's memory order (transposed or not); see [`crate::view`].
    pub fn output_view<'a>(&self, buffer: &'a [K::Out]) -> Result<ArrayViewD<'a, K::Out>> {
        check_len("output", self.output_len(), buffer.len())?;
        block_view(self.output_layout(), self.rank(), self.batch(), buffer)
    }

    /// The mutable counterpart of `output_view`.
    pub fn output_view_mut<'a>(
        &self,
        buffer: &'a mut [K::Out],
    ) -> Result<ArrayViewMutD<'a, K::Out>> {
        check_len("output", self.output_len(), buffer.len())?;
        block_view_mut(self.output_layout(), self.rank(), self.batch(), buffer)
    }

    /// The global index of this rank's first input element along each logical axis
    /// (index `i` of an input view is global index `offsets + i`).
    pub fn input_offsets(&self) -> Vec<usize> {
        self.input_layout().global_offsets(self.rank())
    }

    /// The global index of this rank's first output element along each logical axis.
    pub fn output_offsets(&self) -> Vec<usize> {
        self.output_layout().global_offsets(self.rank())
    }

    /// A zeroed distributed array in the forward-input layout, with `batch()` fields.
    pub fn input_array(&self) -> PencilArray<K::In> {
        PencilArray::zeros(self.input_layout().clone(), self.rank(), self.batch())
    }

    /// A zeroed distributed array in the forward-output layout, with `batch()` fields.
    pub fn output_array(&self) -> PencilArray<K::Out> {
        PencilArray::zeros(self.output_layout().clone(), self.rank(), self.batch())
    }

    /// `forward` between distributed arrays made by `input_array` and
    /// `output_array` (or of the same layouts, rank and fields; checked). Collective;
    /// allocates nothing.
    pub fn forward_array(
        &mut self,
        input: &PencilArray<K::In>,
        output: &mut PencilArray<K::Out>,
    ) -> Result<()> {
        input.check_fits("input", self.input_layout(), self.rank(), self.batch())?;
        output.check_fits("output", self.output_layout(), self.rank(), self.batch())?;
        self.forward(input.as_slice(), output.as_mut_slice())
    }

    /// `backward` between distributed arrays of the output and input layouts
    /// (checked). Collective; allocates nothing.
    pub fn backward_array(
        &mut self,
        input: &PencilArray<K::Out>,
        output: &mut PencilArray<K::In>,
    ) -> Result<()> {
        input.check_fits("input", self.output_layout(), self.rank(), self.batch())?;
        output.check_fits("output", self.input_layout(), self.rank(), self.batch())?;
        self.backward(input.as_slice(), output.as_mut_slice())
    }

    /// The forward transform of this rank's input block given as any ndarray view in
    /// logical axis order (the shape of `input_view`'s), returned as an owned array in
    /// logical order, stored in the output's memory order. Collective. Allocates a copy
    /// of the input and the output: for set-up code; use `forward_array` in loops.
    pub fn forward_ndarray(&mut self, input: &ArrayViewD<'_, K::In>) -> Result<ArrayD<K::Out>> {
        let (layout, rank, batch) = (self.input_layout(), self.rank(), self.batch());
        let mut data = to_memory_order("input", layout, rank, batch, input)?;
        let mut out = vec![<K::Out>::default(); self.output_len()];
        // The copy is ours to destroy (and a destroy_input plan needs that).
        self.forward_destroying(&mut data, &mut out)?;
        Ok(owned_block(self.output_layout(), rank, batch, out))
    }

    /// The backward transform of this rank's spectral block given as any ndarray view
    /// in logical axis order (the shape of `output_view`'s), returned as an owned
    /// array in logical order. Collective; allocates like `forward_ndarray`.
    pub fn backward_ndarray(&mut self, input: &ArrayViewD<'_, K::Out>) -> Result<ArrayD<K::In>> {
        let (layout, rank, batch) = (self.output_layout(), self.rank(), self.batch());
        let mut data = to_memory_order("input", layout, rank, batch, input)?;
        let mut out = vec![<K::In>::default(); self.input_len()];
        self.backward_destroying(&mut data, &mut out)?;
        Ok(owned_block(self.input_layout(), rank, batch, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::{pipeline_for, Domain, TransformShape};
    use redist::GridShape;

    /// Every rank's view of every layout of c2c and r2c pipelines (normal and transposed,
    /// slabs and pencils, batches) holds at logical index `i` the element whose global index
    /// is `offsets + i`, against the layout's own index-valued fill.
    #[test]
    fn views_index_every_layout_logically() {
        let mut checked = 0;
        for shape in [&[5usize, 7, 4][..], &[4, 3, 5, 6], &[6, 9], &[3, 8]] {
            let d = shape.len();
            let mut spectral = shape.to_vec();
            spectral[d - 1] = shape[d - 1] / 2 + 1;
            for (domain, spectral) in [
                (Domain::Complex, shape.to_vec()),
                (Domain::RealToComplex, spectral),
            ] {
                let ts = TransformShape {
                    physical: shape.to_vec(),
                    spectral,
                    domain,
                };
                for dims in [vec![1], vec![3], vec![5], vec![2, 2], vec![3, 2]] {
                    if dims.len() >= d {
                        continue;
                    }
                    for transposed in [false, true] {
                        let grid = GridShape::new(dims.clone()).unwrap();
                        let p = pipeline_for(&ts, grid.clone(), transposed).unwrap();
                        for layout in &p.layouts {
                            for fields in [1, 2] {
                                for rank in 0..grid.ranks() {
                                    check_view(layout, rank, fields);
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 500, "{checked}");
    }

    fn check_view(layout: &Layout, rank: usize, fields: usize) {
        let block = layout.local_len(rank);
        let total: u64 = layout.global_shape().iter().product::<usize>() as u64;
        let mut data = vec![0u64; fields * block];
        for f in 0..fields {
            let part = &mut data[f * block..(f + 1) * block];
            layout.fill_index_valued(rank, part, |g| g + f as u64 * total);
        }
        let offsets = layout.global_offsets(rank);
        let shape = layout.global_shape();
        let view = block_view(layout, rank, fields, &data).unwrap();
        assert_eq!(view.len(), data.len());
        let lead = usize::from(fields > 1);
        for (index, &value) in view.indexed_iter() {
            let mut want = 0u64;
            for a in 0..shape.len() {
                want = want * shape[a] as u64 + (offsets[a] + index[lead + a]) as u64;
            }
            if fields > 1 {
                want += index[0] as u64 * total;
            }
            assert_eq!(value, want, "{layout:?} rank {rank} index {index:?}");
        }
        // The mutable view writes where the immutable one reads.
        let mut copy = vec![0u64; data.len()];
        block_view_mut(layout, rank, fields, &mut copy)
            .unwrap()
            .assign(&view);
        assert_eq!(copy, data);
        // An owned array of the same data indexes the same way.
        assert_eq!(owned_block(layout, rank, fields, data.clone()), view);
    }

    #[test]
    fn wrong_lengths_and_shapes_are_errors() {
        let layout = Layout::pencil(&[4, 5], GridShape::new(vec![2]).unwrap()).unwrap();
        let data = vec![0.0f64; 9];
        let err = block_view(&layout, 0, 1, &data).unwrap_err();
        assert_eq!(
            err.to_string(),
            "block buffer has length 9, expected 10 (the local block of this rank)"
        );
        let view = ArrayD::<f64>::zeros(IxDyn(&[2, 5]));
        let err = to_memory_order("input", &layout, 1, 2, &view.view()).unwrap_err();
        assert!(
            err.to_string()
                .contains("shape [2, 5], but this rank's block has shape [2, 2, 5]"),
            "{err}"
        );
    }
}
