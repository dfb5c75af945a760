//! The pure part of a distributed FFT: the processor grid, the sequence of pencil layouts, and
//! the stages (local 1-D FFTs and exchanges) of each direction. No MPI here.
//!
//! With a d-dimensional array on a grid of rank r, layout `L0` splits axes `0..r` (grid
//! dimension `j` splits axis `j`) in C memory order, so axes `r..d` are local. Layout `Lk`
//! (k = 1..=r) moves grid dimension `j = r − k` from axis `j` to axis `j + d − r`, making axis
//! `j` local and contiguous in memory. The forward transform runs the FFTs of the local axes
//! of `L0`, then, for each k, the exchange `L(k−1) → Lk` and the FFT along axis `r − k`. Unless
//! the output is transposed, exchanges `Lr → … → L0` follow. Backward runs the mirror image.

use crate::error::{FftError, Result};
use crate::options::GridChoice;
use redist::{GridShape, Layout, RedistError};

/// One step of a transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// 1-D FFTs along `axis` of the data in layout `layout`.
    Fft {
        /// Index into [`Pipeline::layouts`].
        layout: usize,
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
    /// `L0..=Lr`.
    pub layouts: Vec<Layout>,
    /// Forward stages in order.
    pub forward: Vec<Stage>,
    /// Backward stages in order.
    pub backward: Vec<Stage>,
    /// Layout of the forward input (and backward output).
    pub input: usize,
    /// Layout of the forward output (and backward input).
    pub output: usize,
}

/// Builds the pipeline for `shape` on `grid`.
pub fn pipeline(shape: &[usize], grid: GridShape, transposed_out: bool) -> Result<Pipeline> {
    if shape.len() < 2 {
        return Err(FftError::TooFewDimensions {
            shape: shape.to_vec(),
        });
    }
    let d = shape.len();
    let r = grid.rank();
    let l0 = Layout::pencil(shape, grid.clone())?;
    if grid.ranks() == 1 && !transposed_out {
        // One process and the natural layout out: every axis is local, so transform each in
        // place (strided where needed) instead of transposing there and back.
        return Ok(Pipeline {
            layouts: vec![l0],
            forward: (0..d)
                .rev()
                .map(|axis| Stage::Fft { layout: 0, axis })
                .collect(),
            backward: (0..d)
                .rev()
                .map(|axis| Stage::Fft { layout: 0, axis })
                .collect(),
            input: 0,
            output: 0,
        });
    }
    let mut layouts = vec![l0];
    for k in 1..=r {
        let j = r - k;
        let prev = &layouts[k - 1];
        let mut decomposed = prev.decomposed().to_vec();
        decomposed[j] = j + d - r;
        let order = prev.memory_order().with_contiguous(j);
        layouts.push(Layout::new(shape, grid.clone(), decomposed, order)?);
    }
    let mut forward: Vec<Stage> = (r..d)
        .rev()
        .map(|axis| Stage::Fft { layout: 0, axis })
        .collect();
    for k in 1..=r {
        forward.push(Stage::Exchange { from: k - 1, to: k });
        forward.push(Stage::Fft {
            layout: k,
            axis: r - k,
        });
    }
    let mut backward: Vec<Stage> = Vec::new();
    for k in (1..=r).rev() {
        backward.push(Stage::Fft {
            layout: k,
            axis: r - k,
        });
        backward.push(Stage::Exchange { from: k, to: k - 1 });
    }
    backward.extend((r..d).map(|axis| Stage::Fft { layout: 0, axis }));
    let output = if transposed_out {
        r
    } else {
        for k in (1..=r).rev() {
            forward.push(Stage::Exchange { from: k, to: k - 1 });
        }
        let back: Vec<Stage> = (1..=r)
            .map(|k| Stage::Exchange { from: k - 1, to: k })
            .collect();
        backward.splice(0..0, back);
        0
    };
    Ok(Pipeline {
        layouts,
        forward,
        backward,
        input: 0,
        output,
    })
}

/// Turns a [`GridChoice`] into grid dimensions for `ranks` processes and `shape`.
/// [`GridChoice::Auto`] asks the complexity model ([`crate::model::choose`], complex f64,
/// natural output) with the machine profile named by `$DFFT_MACHINE` (the same file on every
/// rank), or the model's defaults; see [`resolve_grid_with`] to pass a profile.
///
/// ```
/// use fft_core::{stages::resolve_grid, GridChoice};
/// assert_eq!(resolve_grid(&[8, 8, 8], 6, &GridChoice::Rank(2)).unwrap().dims(), &[3, 2]);
/// assert!(resolve_grid(&[8, 8, 8], 6, &GridChoice::Dims(vec![4, 2])).is_err());
/// assert!(resolve_grid(&[8, 8], 4, &GridChoice::Rank(2)).is_err());
/// ```
pub fn resolve_grid(shape: &[usize], ranks: usize, choice: &GridChoice) -> Result<GridShape> {
    match choice {
        GridChoice::Auto => resolve_grid_with(
            shape,
            ranks,
            choice,
            &crate::model::MachineProfile::from_env()?,
        ),
        _ => resolve_grid_with(
            shape,
            ranks,
            choice,
            &crate::model::MachineProfile::default(),
        ),
    }
}

/// [`resolve_grid`] with an explicit machine profile for [`GridChoice::Auto`]: the model's
/// choice for a complex f64 transform with natural output. A pure function of its arguments,
/// so every rank that calls it with the same ones gets the same grid.
///
/// ```
/// use fft_core::{model::MachineProfile, stages::resolve_grid_with, GridChoice};
/// let grid = resolve_grid_with(&[4, 64, 4], 8, &GridChoice::Auto, &MachineProfile::default());
/// assert_eq!(grid.unwrap().ranks(), 8);
/// ```
pub fn resolve_grid_with(
    shape: &[usize],
    ranks: usize,
    choice: &GridChoice,
    profile: &crate::model::MachineProfile,
) -> Result<GridShape> {
    let d = shape.len();
    if d < 2 {
        return Err(FftError::TooFewDimensions {
            shape: shape.to_vec(),
        });
    }
    let grid = match choice {
        GridChoice::Auto => {
            crate::model::choose(&crate::model::Problem::new(shape, ranks), profile)?
        }
        GridChoice::Rank(r) => {
            if *r >= d {
                return Err(RedistError::GridRankTooLarge {
                    grid_rank: *r,
                    array_rank: d,
                }
                .into());
            }
            GridShape::balanced(ranks, *r)?
        }
        GridChoice::Dims(dims) => {
            let grid = GridShape::new(dims.clone())?;
            if grid.ranks() != ranks {
                return Err(RedistError::GridSizeMismatch {
                    dims: dims.clone(),
                    product: grid.ranks(),
                    ranks,
                }
                .into());
            }
            if grid.rank() >= d {
                return Err(RedistError::GridRankTooLarge {
                    grid_rank: grid.rank(),
                    array_rank: d,
                }
                .into());
            }
            grid
        }
    };
    Ok(grid)
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
                                        if layout != 0 {
                                            assert!(is_contiguous(&p.layouts[layout], axis));
                                        }
                                        seen[axis] += 1;
                                    }
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
}
