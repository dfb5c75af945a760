//! The pure part of a distributed FFT: the processor grid, the sequence of pencil layouts, and
//! the stages (local 1-D FFTs and exchanges) of each direction. No MPI here.
//!
//! With a d-dimensional array on a grid of rank r, layout `L0` splits axes `0..r` (grid
//! dimension `j` splits axis `j`) in C memory order, so axes `r..d` are local. Layout `Lk`
//! (k = 1..=r) moves grid dimension `j = r − k` from axis `j` to axis `j + d − r`, making axis
//! `j` local and contiguous in memory. A slab (r = 1) of d ≥ 3 axes is the exception, as in
//! FFTW-MPI: `L1` splits axis 1 with memory order `1, 0, 2, …, d−1`, so the exchange moves
//! whole runs of the trailing axes and the FFT along axis 0 is a tiled strided sweep.
//! The forward transform runs the FFTs of the local axes of `L0`, then, for each k, the
//! exchange `L(k−1) → Lk` and the FFT along axis `r − k`. Unless the output is transposed,
//! exchanges `Lr → … → L0` follow. Backward runs the mirror image.
//! [`pencils`] is the one place that builds this chain.
//!
//! With [`Ends::transposed_in`] the forward transform starts in the last pencil and visits
//! the chain backwards (FFTW-MPI's `TRANSPOSED_IN`); [`Ends`] also gives the block sizes of
//! the input and output layouts' splits (FFTW-MPI's `block0`/`block1`).
//!
//! Real and padded transforms ([`pipeline_for`]) use the same pencils; a transform that changes
//! an axis length (padding/truncation) or the element type (real ↔ complex) is a
//! [`Stage::Resize`] into the same pencil at the new global shape, so the layouts of one
//! pipeline may have different global shapes, and every exchange connects two layouts of equal
//! global shape.

use crate::error::{FftError, Result};
use redist::{GridShape, Layout, MemoryOrder};

/// One step of a transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// 1-D transforms along `axis` of the data in layout `layout`, in place (the axis keeps its
    /// length and the data its element type: a complex FFT, or a real-to-real transform).
    Fft {
        /// Index into [`Pipeline::layouts`].
        layout: usize,
        /// Logical axis.
        axis: usize,
    },
    /// 1-D transforms along `axis` that change its length or the element type: from layout
    /// `from` to layout `to`, which differ only in the global length of `axis` (padding or
    /// truncation of the modes) and/or in [`Pipeline::real`] (real-to-complex FFT and its
    /// inverse).
    Resize {
        /// Index into [`Pipeline::layouts`].
        from: usize,
        /// Index into [`Pipeline::layouts`].
        to: usize,
        /// Logical axis.
        axis: usize,
    },
    /// An exchange from layout `from` to layout `to`.
    Exchange {
        /// Index into [`Pipeline::layouts`].
        from: usize,
        /// Index into [`Pipeline::layouts`].
        to: usize,
    },
}

/// The layouts and stages of a distributed transform.
///
/// ```
/// use fft_core::stages::{pipeline, Stage};
/// use redist::GridShape;
/// let p = pipeline(&[8, 8, 8], GridShape::new(vec![2, 2]).unwrap(), true).unwrap();
/// assert_eq!(p.layouts.len(), 3);
/// assert_eq!(p.forward, vec![
///     Stage::Fft { layout: 0, axis: 2 },
///     Stage::Exchange { from: 0, to: 1 },
///     Stage::Fft { layout: 1, axis: 1 },
///     Stage::Exchange { from: 1, to: 2 },
///     Stage::Fft { layout: 2, axis: 0 },
/// ]);
/// assert_eq!(p.output, 2); // transposed output: the last pencil
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// Every layout the data passes through (`L0..=Lr` for a complex transform; layouts of
    /// the same pencil at different global shapes or element types for real or padded ones).
    pub layouts: Vec<Layout>,
    /// Whether the data in each layout is real (otherwise complex).
    pub real: Vec<bool>,
    /// Forward stages in order.
    pub forward: Vec<Stage>,
    /// Backward stages in order: the forward ones reversed.
    pub backward: Vec<Stage>,
    /// Layout of the forward input (and backward output).
    pub input: usize,
    /// Layout of the forward output (and backward input).
    pub output: usize,
}

/// The element types a transform goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// Complex in, complex out.
    Complex,
    /// Real in; the transform along the last axis makes it complex (real-to-complex FFT).
    RealToComplex,
    /// Real in, real out (every axis real-to-real).
    Real,
}

/// The global shapes of a transform: `physical` (forward input) and `spectral` (forward
/// output), which differ along padded axes and along the last axis of a real-to-complex
/// transform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransformShape {
    /// Global shape of the forward input.
    pub physical: Vec<usize>,
    /// Global shape of the forward output.
    pub spectral: Vec<usize>,
    /// Element types.
    pub domain: Domain,
}

impl TransformShape {
    /// A complex transform of `shape` without padding.
    pub fn complex(shape: &[usize]) -> Self {
        Self {
            physical: shape.to_vec(),
            spectral: shape.to_vec(),
            domain: Domain::Complex,
        }
    }
}

/// The pencils of a transform on a grid of rank `r` over `d` axes, as (decomposed axes,
/// memory order), and the axes transformed in each, in forward order. Pencil 0 splits axes
/// `0..r` (grid dimension `j` splits axis `j`) in C order and transforms axes `d−1..r`; pencil
/// `k` (1..=r) moves grid dimension `j = r − k` from axis `j` to axis `j + d − r`, makes axis
/// `j` contiguous and transforms it, except in a slab of d ≥ 3 axes, whose pencil 1 splits
/// axis 1 in memory order `1, 0, 2, …` (FFTW's layout). With `single` (one process, natural output) there is one
/// pencil that transforms every axis in place.
pub fn pencils(d: usize, r: usize, single: bool) -> Vec<(Vec<usize>, MemoryOrder, Vec<usize>)> {
    pencils_partial(d, r, single, &vec![true; d])
}

/// [`pencils`] of a partial transform: only the axes with `transformed[a]` are transformed
/// (in the same order), and a grid dimension whose axis is not transformed never moves, so
/// a pencil exists only for each transformed axis that the first pencil splits (a slab
/// transformed along axes 1.. has one pencil and no exchange). A moving grid dimension goes
/// to axis `j + d − r` as in [`pencils`], or, where a grid dimension that stays still splits
/// that axis, to the last axis none splits. When the last axes are not
/// transformed (FFTW's interleaved `howmany`), every pencil keeps them fastest in memory and
/// puts its transformed axis just before them.
///
/// ```
/// use fft_core::stages::pencils_partial;
/// // A slab of 3 axes transformed along axes 1 and 2: one pencil, no exchange.
/// let p = pencils_partial(3, 1, false, &[false, true, true]);
/// assert_eq!(p.len(), 1);
/// assert_eq!(p[0].2, vec![2, 1]);
/// // A pencil (r = 2) transformed along axes 0 and 1 of [n0, n1, howmany].
/// let p = pencils_partial(3, 2, false, &[true, true, false]);
/// assert_eq!(p.len(), 3);
/// assert_eq!(p[1].1.axes(), &[0, 1, 2]); // axis 1 just before the untransformed axis 2
/// ```
pub fn pencils_partial(
    d: usize,
    r: usize,
    single: bool,
    transformed: &[bool],
) -> Vec<(Vec<usize>, MemoryOrder, Vec<usize>)> {
    assert_eq!(transformed.len(), d, "one flag per axis");
    let local = |axes: &mut dyn Iterator<Item = usize>| -> Vec<usize> {
        axes.filter(|&a| transformed[a]).collect()
    };
    if single {
        return vec![(
            (0..r).collect(),
            MemoryOrder::natural(d),
            local(&mut (0..d).rev()),
        )];
    }
    let mut out = vec![(
        (0..r).collect::<Vec<usize>>(),
        MemoryOrder::natural(d),
        local(&mut (r..d).rev()),
    )];
    if r == 1 && d >= 3 {
        // A slab: move the grid from axis 0 to axis 1 and keep the last axis contiguous
        // (memory order 1, 0, 2, …), as FFTW-MPI does. The exchanges then move whole runs of
        // the trailing axes, and the FFT along axis 0 runs as a tiled strided sweep that
        // reads and writes those runs straight from and to the message buffers.
        if transformed[0] {
            let mut order = vec![1, 0];
            order.extend(2..d);
            let order = MemoryOrder::new(order).expect("a permutation");
            out.push((vec![1], order, vec![0]));
        }
        return out;
    }
    // The trailing axes that are never transformed stay the fastest in memory.
    let tail = transformed.iter().rev().take_while(|&&t| !t).count();
    for j in (0..r).rev().filter(|&j| transformed[j]) {
        let (prev_decomposed, prev_order, _) = out.last().expect("pencil 0");
        let mut decomposed = prev_decomposed.clone();
        // Axis `j + d − r`, as a full transform does, unless a grid dimension that never
        // moves (its axis is not transformed) still splits it: then the last axis no grid
        // dimension splits. Every such axis is done (transformed already, or never), since
        // the axes still to transform are split.
        let free = |a: &usize| *a != j && !decomposed.contains(a);
        decomposed[j] = Some(j + d - r)
            .filter(free)
            .or_else(|| (0..d).rev().find(free))
            .expect("r < d leaves an axis free");
        let order = if tail == 0 {
            prev_order.with_contiguous(j)
        } else {
            let mut axes: Vec<usize> = (prev_order.axes().iter().copied())
                .filter(|&a| a != j && a < d - tail)
                .collect();
            axes.push(j);
            axes.extend(d - tail..d);
            MemoryOrder::new(axes).expect("a permutation")
        };
        out.push((decomposed, order, vec![j]));
    }
    out
}

/// Builds the pipeline of a complex transform of `shape` on `grid`.
pub fn pipeline(shape: &[usize], grid: GridShape, transposed_out: bool) -> Result<Pipeline> {
    pipeline_for(&TransformShape::complex(shape), grid, transposed_out)
}

/// Builds the pipeline of a transform of `shape` on `grid`: the pencils of [`pencils`] at the
/// global shape the data has when it reaches them. Each transform of an axis whose length or
/// element type changes is a [`Stage::Resize`] into a layout of the same pencil at the new
/// shape; exchanges connect layouts of equal global shape. Backward is forward reversed.
///
/// ```
/// use fft_core::stages::{pipeline_for, Domain, Stage, TransformShape};
/// use redist::GridShape;
/// let shape = TransformShape {
///     physical: vec![6, 8],
///     spectral: vec![6, 5],
///     domain: Domain::RealToComplex,
/// };
/// let p = pipeline_for(&shape, GridShape::new(vec![2]).unwrap(), false).unwrap();
/// assert_eq!(p.forward[0], Stage::Resize { from: 0, to: 1, axis: 1 });
/// assert!(p.real[0] && !p.real[1]);
/// assert_eq!(p.layouts[p.output].global_shape(), &[6, 5]);
/// ```
pub fn pipeline_for(
    shape: &TransformShape,
    grid: GridShape,
    transposed_out: bool,
) -> Result<Pipeline> {
    let d = shape.physical.len();
    pipeline_partial(shape, grid, transposed_out, &vec![true; d])
}

/// [`pipeline_for`] of a partial transform: only the axes with `transformed[a]` are
/// transformed ([`pencils_partial`]: exchanges only where a transformed axis must become
/// local). A real-to-complex transform changes the element type along its last transformed
/// axis.
///
/// ```
/// use fft_core::stages::{pipeline_partial, Stage, TransformShape};
/// use redist::GridShape;
/// let shape = TransformShape::complex(&[8, 6, 5]);
/// let slab = GridShape::new(vec![4]).unwrap();
/// let p = pipeline_partial(&shape, slab, false, &[false, true, true]).unwrap();
/// assert_eq!(p.forward, vec![Stage::Fft { layout: 0, axis: 2 }, Stage::Fft { layout: 0, axis: 1 }]);
/// ```
pub fn pipeline_partial(
    shape: &TransformShape,
    grid: GridShape,
    transposed_out: bool,
    transformed: &[bool],
) -> Result<Pipeline> {
    let ends = Ends {
        transposed_out,
        ..Ends::default()
    };
    pipeline_with(shape, grid, &ends, transformed)
}

/// Where a transform starts and ends: which pencil holds the forward input and output, and
/// in which blocks their split axes are cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ends {
    /// The forward input (and backward output) lies in the last pencil, the layout
    /// `transposed_out` leaves the forward output in (FFTW-MPI's `TRANSPOSED_IN`); the
    /// forward transform then visits the pencils backwards.
    pub transposed_in: bool,
    /// The forward output (and backward input) stays in the last pencil.
    pub transposed_out: bool,
    /// Per logical axis, the block size of its split in the input layout (`None`: balanced);
    /// empty: balanced everywhere.
    pub input_blocks: Vec<Option<usize>>,
    /// Per logical axis, the block size of its split in the output layout; the layouts in
    /// between take the output's where it gives one, else the input's.
    pub output_blocks: Vec<Option<usize>>,
}

impl Ends {
    /// The block of `axis` in a layout of role `role` (0 input, 1 in between, 2 output).
    fn block(&self, axis: usize, role: usize) -> Option<usize> {
        let at = |blocks: &[Option<usize>]| blocks.get(axis).copied().flatten();
        match role {
            0 => at(&self.input_blocks),
            2 => at(&self.output_blocks),
            _ => at(&self.output_blocks).or(at(&self.input_blocks)),
        }
    }
}

/// The pencils the data visits in forward order, from [`pencils_partial`]'s chain of `count`
/// pencils: forward along the chain, then back to pencil 0 unless the output is transposed;
/// with a transposed input backwards from the last, then forward again to it if the output
/// is transposed too.
fn visits(count: usize, ends: &Ends) -> Vec<usize> {
    let last = count - 1;
    let (there, back): (Vec<usize>, Vec<usize>) = if ends.transposed_in {
        ((0..=last).rev().collect(), (1..=last).collect())
    } else {
        ((0..=last).collect(), (0..last).rev().collect())
    };
    let returns = ends.transposed_in == ends.transposed_out;
    there
        .into_iter()
        .chain(back.into_iter().filter(|_| returns))
        .collect()
}

/// [`pipeline_partial`] with the input and output layouts of `ends`: transposed input or
/// output, and given block sizes. The forward transform runs each pencil's axes at its first
/// visit ([`visits`]); a real-to-complex transform cannot start transposed (its real FFT,
/// along the last axis, must come first).
///
/// ```
/// use fft_core::stages::{pipeline_with, Ends, Stage, TransformShape};
/// use redist::GridShape;
/// // FFTW-MPI's TRANSPOSED_IN, default blocks: 10 × 6 on 4 ranks, input split along axis 1
/// // in blocks of ⌈6/4⌉ = 2, output along axis 0 in blocks of ⌈10/4⌉ = 3.
/// let ends = Ends {
///     transposed_in: true,
///     input_blocks: vec![None, Some(2)],
///     output_blocks: vec![Some(3), None],
///     ..Ends::default()
/// };
/// let p = pipeline_with(&TransformShape::complex(&[10, 6]), GridShape::new(vec![4]).unwrap(),
///     &ends, &[true, true]).unwrap();
/// assert_eq!(p.forward[0], Stage::Fft { layout: p.input, axis: 0 });
/// assert_eq!(p.layouts[p.input].global_range(3, 1), 6..6); // owns nothing
/// assert_eq!(p.layouts[p.output].global_range(3, 0), 9..10);
/// ```
pub fn pipeline_with(
    shape: &TransformShape,
    grid: GridShape,
    ends: &Ends,
    transformed: &[bool],
) -> Result<Pipeline> {
    check_pipeline(shape, &grid, ends, transformed)?;
    let physical = &shape.physical;
    let d = physical.len();
    let half = transformed
        .iter()
        .rposition(|&t| t)
        .expect("one transformed axis");
    let r = grid.rank();
    let single = grid.ranks() == 1 && !ends.transposed_out && !ends.transposed_in;
    let chain = pencils_partial(d, r, single, transformed);
    let visits = visits(chain.len(), ends);
    let mut layouts: Vec<Layout> = Vec::new();
    let mut real: Vec<bool> = Vec::new();
    let mut add = |layout: Layout, is_real: bool| -> usize {
        match (0..layouts.len()).find(|&i| layouts[i] == layout && real[i] == is_real) {
            Some(i) => i,
            None => {
                layouts.push(layout);
                real.push(is_real);
                layouts.len() - 1
            }
        }
    };
    // The layout of visit `v` at the global shape `current`, with the blocks of its role.
    let make = |v: usize, current: &[usize]| -> Result<Layout> {
        let (decomposed, order, _) = &chain[visits[v]];
        let role = if v == 0 {
            0
        } else if v + 1 == visits.len() {
            2
        } else {
            1
        };
        let blocks = decomposed.iter().map(|&a| ends.block(a, role)).collect();
        Ok(
            Layout::new(current, grid.clone(), decomposed.clone(), order.clone())?
                .with_blocks(blocks)?,
        )
    };
    let mut current = physical.clone();
    let mut is_real = shape.domain != Domain::Complex;
    let input = add(make(0, &current)?, is_real);
    let mut at = input;
    let mut forward = Vec::new();
    let mut done = vec![false; chain.len()];
    for (v, &k) in visits.iter().enumerate() {
        if v > 0 {
            let next = add(make(v, &current)?, is_real);
            forward.push(Stage::Exchange { from: at, to: next });
            at = next;
        }
        if std::mem::replace(&mut done[k], true) {
            continue;
        }
        for &axis in &chain[k].2 {
            current[axis] = shape.spectral[axis];
            if shape.domain == Domain::RealToComplex && axis == half {
                is_real = false;
            }
            let next = add(make(v, &current)?, is_real);
            forward.push(if next == at {
                Stage::Fft { layout: at, axis }
            } else {
                Stage::Resize {
                    from: at,
                    to: next,
                    axis,
                }
            });
            at = next;
        }
    }
    let backward = reversed(&forward);
    Ok(Pipeline {
        layouts,
        real,
        forward,
        backward,
        input,
        output: at,
    })
}

/// [`pipeline_with`]'s arguments checked: at least two axes, one flag per axis with one
/// transformed, no transposed real-to-complex input, one block entry per axis (or none), and
/// the same blocks at both ends on a grid of rank 2 or more.
fn check_pipeline(
    shape: &TransformShape,
    grid: &GridShape,
    ends: &Ends,
    transformed: &[bool],
) -> Result<()> {
    let physical = &shape.physical;
    if physical.len() < 2 {
        return Err(FftError::TooFewDimensions {
            shape: physical.to_vec(),
        });
    }
    let d = physical.len();
    let bad = |reason: String| FftError::BadOptions {
        shape: shape.spectral.clone(),
        reason,
    };
    if transformed.len() != d || !transformed.contains(&true) {
        return Err(bad(format!("a pipeline needs one flag per axis and at least one transformed axis, got {transformed:?}")));
    }
    if ends.transposed_in && shape.domain == Domain::RealToComplex {
        return Err(bad("a real-to-complex transform cannot take a transposed input (its real FFT comes first); the backward of a plan with transposed output takes one".into()));
    }
    for (name, blocks) in [
        ("input", &ends.input_blocks),
        ("output", &ends.output_blocks),
    ] {
        if !blocks.is_empty() && blocks.len() != d {
            return Err(bad(format!(
                "{name} blocks has {} entries for {d} axes: {blocks:?}",
                blocks.len()
            )));
        }
    }
    let r = grid.rank();
    if r >= 2 && (0..d).any(|a| ends.block(a, 0) != ends.block(a, 2)) {
        return Err(bad(format!(
            "on a grid of rank {r} the input and output block sizes must agree, got {:?} and {:?}",
            ends.input_blocks, ends.output_blocks
        )));
    }
    Ok(())
}

/// The backward stages of the `forward` ones: the same in reverse order, every exchange and
/// resize from its target back to its source.
pub(crate) fn reversed(forward: &[Stage]) -> Vec<Stage> {
    forward
        .iter()
        .rev()
        .map(|s| match *s {
            Stage::Fft { layout, axis } => Stage::Fft { layout, axis },
            Stage::Resize { from, to, axis } => Stage::Resize {
                from: to,
                to: from,
                axis,
            },
            Stage::Exchange { from, to } => Stage::Exchange { from: to, to: from },
        })
        .collect()
}

/// The rule `GridChoice::Auto` followed before the complexity model ([`crate::model`]): the
/// lowest grid rank whose balanced
/// dimensions leave no process idle in any layout (grid dimension `j` splits axis `j` and
/// later axis `j + d − r`, so it must not exceed either), else the balanced grid of rank d − 1.
///
/// ```
/// use fft_core::stages::auto_grid;
/// assert_eq!(auto_grid(&[64, 64, 64], 8).dims(), &[8]);      // a slab
/// assert_eq!(auto_grid(&[4, 64, 4], 8).dims(), &[4, 2]);     // too few planes for a slab
/// ```
pub fn auto_grid(shape: &[usize], ranks: usize) -> GridShape {
    let d = shape.len();
    for r in 1..d {
        let grid = GridShape::balanced(ranks, r).expect("ranks >= 1");
        let fits = grid
            .dims()
            .iter()
            .enumerate()
            .all(|(j, &p)| p <= shape[j] && p <= shape[j + d - r]);
        if fits {
            return grid;
        }
    }
    GridShape::balanced(ranks, d - 1).expect("ranks >= 1")
}

/// Whether `layout`'s memory order keeps `axis` contiguous.
pub fn is_contiguous(layout: &Layout, axis: usize) -> bool {
    layout.memory_order().contiguous_axis() == axis
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every axis is transformed exactly once per direction, each FFT runs on a layout where
    /// its axis is local, exchanges chain layouts correctly, and the FFTs after L0 are on
    /// contiguous axes.
    #[test]
    fn stages_are_consistent_for_every_rank_and_dim() {
        for d in 2..=5 {
            for r in 1..d {
                for transposed in [false, true] {
                    let shape: Vec<usize> = (0..d).map(|i| 3 + i).collect();
                    for ranks_per_dim in [1, 2] {
                        let grid = GridShape::new(vec![ranks_per_dim; r]).unwrap();
                        let p = pipeline(&shape, grid, transposed).unwrap();
                        for (stages, start, end) in [
                            (&p.forward, p.input, p.output),
                            (&p.backward, p.output, p.input),
                        ] {
                            let mut at = start;
                            let mut seen = vec![0; d];
                            for s in stages.iter() {
                                match *s {
                                    Stage::Fft { layout, axis } => {
                                        assert_eq!(layout, at);
                                        // Every rank holds the whole axis (it is local, or
                                        // split over a grid dimension of size one).
                                        let l = &p.layouts[layout];
                                        assert!((0..l.grid().ranks()).all(|rank| {
                                            l.global_range(rank, axis).len() == shape[axis]
                                        }));
                                        // After L0 the transformed axis is contiguous,
                                        // except in a slab of d ≥ 3 (FFTW's layout: axis 0
                                        // strided, the trailing axes stay contiguous).
                                        if layout != 0 && !(r == 1 && d >= 3) {
                                            assert!(is_contiguous(&p.layouts[layout], axis));
                                        }
                                        seen[axis] += 1;
                                    }
                                    Stage::Resize { .. } => unreachable!("complex"),
                                    Stage::Exchange { from, to } => {
                                        assert_eq!(from, at);
                                        redist::ExchangePlan::new(&p.layouts[from], &p.layouts[to])
                                            .unwrap();
                                        at = to;
                                    }
                                }
                            }
                            assert_eq!(at, end);
                            assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
                        }
                    }
                }
            }
        }
    }

    /// Partial transforms: for d ≤ 5, every grid rank and every subset of transformed axes,
    /// exactly the transformed axes are transformed, once per direction, on layouts where they
    /// are whole; each exchange is a valid one-dimension move; there is one exchange per
    /// transformed axis the input layout splits (each way); the output layout is the input's
    /// unless transposed.
    #[test]
    fn partial_pipelines_transform_exactly_the_chosen_axes() {
        for d in 2..=5 {
            for r in 1..d {
                for mask in 1..1usize << d {
                    let transformed: Vec<bool> = (0..d).map(|a| mask >> a & 1 == 1).collect();
                    for transposed in [false, true] {
                        let shape: Vec<usize> = (0..d).map(|i| 3 + i).collect();
                        let grid = GridShape::new(vec![2; r]).unwrap();
                        let ts = TransformShape::complex(&shape);
                        let what = format!("d {d} r {r} {transformed:?} transposed {transposed}");
                        let p = pipeline_partial(&ts, grid, transposed, &transformed).unwrap();
                        let mut seen = vec![0; d];
                        let mut exchanges = 0;
                        let mut at = p.input;
                        for s in &p.forward {
                            match *s {
                                Stage::Fft { layout, axis } => {
                                    assert_eq!(layout, at, "{what}");
                                    assert!(p.layouts[layout].is_local(axis), "{what}");
                                    seen[axis] += 1;
                                }
                                Stage::Resize { .. } => unreachable!("complex"),
                                Stage::Exchange { from, to } => {
                                    assert_eq!(from, at, "{what}");
                                    redist::ExchangePlan::new(&p.layouts[from], &p.layouts[to])
                                        .expect(&what);
                                    exchanges += 1;
                                    at = to;
                                }
                            }
                        }
                        assert_eq!(at, p.output, "{what}");
                        let want: Vec<usize> = transformed.iter().map(|&t| t as usize).collect();
                        assert_eq!(seen, want, "{what}");
                        let moved = (0..r).filter(|&j| transformed[j]).count();
                        let each_way = if transposed { 1 } else { 2 };
                        assert_eq!(exchanges, moved * each_way, "{what}");
                        if !transposed {
                            assert_eq!(p.input, p.output, "{what}");
                        }
                        // Untransformed trailing axes stay fastest in memory.
                        let tail = transformed.iter().rev().take_while(|&&t| !t).count();
                        if tail > 0 && !(r == 1 && d >= 3) {
                            for l in &p.layouts {
                                let order = l.memory_order().axes();
                                assert!(
                                    order[d - tail..].iter().copied().eq(d - tail..d),
                                    "{what}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Transposed inputs and outputs and given blocks: every axis transformed once per
    /// direction where it is whole, every exchange valid, the input in the last pencil when
    /// transposed (else pencil 0) and likewise the output, split in the blocks given.
    #[test]
    fn transposed_ends_and_blocks() {
        for d in 2..=4 {
            for r in 1..d {
                for p in [2usize, 3] {
                    let shape: Vec<usize> = (0..d).map(|i| 4 + i).collect();
                    let grid = GridShape::new(vec![p; r]).unwrap();
                    let chain = pencils(d, r, false);
                    let fftw: Vec<Option<usize>> =
                        shape.iter().map(|&n| Some(n.div_ceil(p))).collect();
                    let mut out_blocks = fftw.clone();
                    if r == 1 {
                        // Slabs take different blocks in and out.
                        out_blocks = shape.iter().map(|&n| Some(n.div_ceil(p) + 1)).collect();
                    }
                    for (tin, tout) in [(false, false), (true, false), (false, true), (true, true)]
                    {
                        let ends = Ends {
                            transposed_in: tin,
                            transposed_out: tout,
                            input_blocks: fftw.clone(),
                            output_blocks: out_blocks.clone(),
                        };
                        let what = format!("d {d} r {r} p {p} in {tin} out {tout}");
                        let pl = pipeline_with(
                            &TransformShape::complex(&shape),
                            grid.clone(),
                            &ends,
                            &vec![true; d],
                        )
                        .expect(&what);
                        for (stages, start, end) in [
                            (&pl.forward, pl.input, pl.output),
                            (&pl.backward, pl.output, pl.input),
                        ] {
                            let mut at = start;
                            let mut seen = vec![0; d];
                            for s in stages.iter() {
                                match *s {
                                    Stage::Fft { layout, axis } => {
                                        assert_eq!(layout, at, "{what}");
                                        assert!(pl.layouts[layout].is_local(axis), "{what}");
                                        seen[axis] += 1;
                                    }
                                    Stage::Resize { .. } => unreachable!("complex"),
                                    Stage::Exchange { from, to } => {
                                        assert_eq!(from, at, "{what}");
                                        redist::ExchangePlan::new(
                                            &pl.layouts[from],
                                            &pl.layouts[to],
                                        )
                                        .expect(&what);
                                        at = to;
                                    }
                                }
                            }
                            assert_eq!(at, end, "{what}");
                            assert_eq!(seen, vec![1; d], "{what}");
                        }
                        let pencil = |t: bool| &chain[if t { chain.len() - 1 } else { 0 }];
                        for (layout, t, blocks) in [
                            (&pl.layouts[pl.input], tin, &fftw),
                            (&pl.layouts[pl.output], tout, &out_blocks),
                        ] {
                            assert_eq!(layout.decomposed(), &pencil(t).0[..], "{what}");
                            assert_eq!(layout.memory_order(), &pencil(t).1, "{what}");
                            let want: Vec<Option<usize>> =
                                layout.decomposed().iter().map(|&a| blocks[a]).collect();
                            assert_eq!(layout.blocks(), &want[..], "{what}");
                        }
                    }
                }
            }
        }
        // Refusals: a transposed real-to-complex input, mismatched pencil blocks, lengths.
        let real = TransformShape {
            physical: vec![6, 8],
            spectral: vec![6, 5],
            domain: Domain::RealToComplex,
        };
        let slab = GridShape::new(vec![2]).unwrap();
        let tin = Ends {
            transposed_in: true,
            ..Ends::default()
        };
        assert!(pipeline_with(&real, slab.clone(), &tin, &[true, true]).is_err());
        let pencil = GridShape::new(vec![2, 2]).unwrap();
        let differ = Ends {
            input_blocks: vec![Some(3), None, None],
            ..Ends::default()
        };
        let e = pipeline_with(
            &TransformShape::complex(&[6, 6, 6]),
            pencil,
            &differ,
            &[true; 3],
        );
        assert!(e.unwrap_err().to_string().contains("must agree"));
        let short = Ends {
            output_blocks: vec![Some(3)],
            ..Ends::default()
        };
        let e = pipeline_with(
            &TransformShape::complex(&[6, 6]),
            slab.clone(),
            &short,
            &[true; 2],
        );
        assert!(e.unwrap_err().to_string().contains("1 entries for 2 axes"));
        let small = Ends {
            input_blocks: vec![Some(2), None],
            ..Ends::default()
        };
        let e = pipeline_with(&TransformShape::complex(&[6, 6]), slab, &small, &[true; 2]);
        assert!(e.unwrap_err().to_string().contains("block size of 2"));
    }
}
