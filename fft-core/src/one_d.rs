//! Distributed 1-D transforms (FFTW-MPI's rank-1 plans), planned purely: the four-step
//! (six-step) method. The `n = rows · cols` points are viewed as a `rows × cols` C-order
//! matrix `A[j0][j1] = x[j0·cols + j1]`; then
//! `X[k0 + rows·k1] = Σ_{j1} ω_cols^{j1·k1} · ω_n^{j1·k0} · Σ_{j0} A[j0][j1] ω_rows^{j0·k0}`:
//! FFTs of length `rows` along axis 0, the twiddle factors `ω_n^{j1·k0}`, FFTs of length
//! `cols` along axis 1, and the result `B[k0][k1] = X[k0 + rows·k1]`. Two slab layouts of the
//! matrix carry it: `L0` splits axis 0 in C order (rows of the ordered input; the scrambled
//! output `B`), `L1` splits axis 1 with axes 0 and 1 swapped in memory (the ordered output,
//! since `B`'s transpose is `X` in order; the scrambled input). The forward transform is
//!
//! ```text
//! [L0 → L1]   FFTs along axis 0 and twiddles in L1   L1 → L0   FFTs along axis 1 in L0   [L0 → L1]
//! ```
//!
//! where the bracketed exchanges are skipped with a scrambled input or output (FFTW-MPI's
//! `SCRAMBLED_IN`/`_OUT`, whose orders these are: position `p` of the scrambled output holds
//! `X[p / cols + rows·(p % cols)]`). Backward runs it in reverse with the inverse FFTs and
//! conjugate twiddles, so it takes the forward's scrambled output. Untransformed trailing
//! axes (FFTW's interleaved `howmany`) follow the two as identity axes.

use crate::error::{FftError, Result};
use crate::options::FftOptions;
use crate::stages::{reversed, Pipeline, Stage, TransformShape};
use redist::{GridShape, Layout, MemoryOrder};
use std::ops::Range;

/// FFTW-MPI's factor `cols` of `n` for `ranks` processes (its `choose_radix`, forward): `n/P`
/// when `P` divides `n` and `n/P ≥ P`, else the smallest divisor of `n` not below `⌊√n⌋`; `n`
/// (one row: the transform on one rank, as FFTW does with primes) where that gives 1 or `n`.
///
/// ```
/// use fft_core::one_d::fftw_columns;
/// assert_eq!(fftw_columns(64, 4), 16);  // 4 rows of 16
/// assert_eq!(fftw_columns(60, 8), 10);  // 6 rows of 10
/// assert_eq!(fftw_columns(97, 4), 97);  // prime: one row
/// ```
pub fn fftw_columns(n: usize, ranks: usize) -> usize {
    let ranks = ranks.max(1);
    let r = if n.is_multiple_of(ranks) && n / ranks >= ranks {
        n / ranks
    } else {
        let mut r = (n as f64).sqrt().floor() as usize;
        while r * r > n {
            r -= 1;
        }
        while (r + 1) * (r + 1) <= n {
            r += 1;
        }
        let mut r = r.max(1);
        while !n.is_multiple_of(r) {
            r += 1;
        }
        r
    };
    if r <= 1 || r >= n {
        n
    } else {
        r
    }
}

/// `options` of a plan of `shape` over `ranks` processes with a distributed 1-D transform
/// resolved (a 1-D shape, or [`FftOptions::one_d`] given): [`OneD::columns`] fixed (FFTW's
/// choice by default, checked to divide the axis otherwise). Other options pass unchanged.
pub(crate) fn resolve(shape: &[usize], options: FftOptions, ranks: usize) -> Result<FftOptions> {
    if shape.len() != 1 && options.one_d.is_none() {
        return Ok(options);
    }
    let mut one_d = options.one_d.unwrap_or_default();
    let n = shape.first().copied().unwrap_or(0);
    let cols = match one_d.columns {
        None => fftw_columns(n, ranks),
        Some(c) if c >= 1 && n.is_multiple_of(c) => c,
        Some(c) => {
            return Err(FftError::BadOptions {
                shape: shape.to_vec(),
                reason: format!("one_d columns must divide the axis of {n} points, got {c}"),
            })
        }
    };
    one_d.columns = Some(cols);
    Ok(FftOptions {
        one_d: Some(one_d),
        ..options
    })
}

/// Which of the two slab layouts: `L0` (axis 0 split, C order) or `L1` (axis 1 split, axes 0
/// and 1 swapped in memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slab {
    L0,
    L1,
}

/// The layouts and stages of a distributed 1-D transform of `shape` (`[rows, cols, rest…]`,
/// the matrix and the untransformed trailing axes) on the 1-D grid `grid`, with the scrambled
/// ends and block sizes of `options` (blocks in points of the 1-D axis, multiples of the
/// split axis's row: `cols` for `L0`, `rows` for `L1`).
pub(crate) fn pipeline(
    shape: &TransformShape,
    grid: GridShape,
    options: &FftOptions,
) -> Result<Pipeline> {
    let one_d = options.one_d.unwrap_or_default();
    let dims = &shape.physical;
    let (rows, cols) = (dims[0], dims[1]);
    if grid.rank() != 1 {
        return Err(bad_option(
            rows * cols,
            format!("a distributed 1-D transform runs on a 1-D grid, got {grid}"),
        ));
    }
    let ends = [
        if one_d.scrambled_in {
            Slab::L1
        } else {
            Slab::L0
        },
        if one_d.scrambled_out {
            Slab::L0
        } else {
            Slab::L1
        },
    ];
    let blocks = end_blocks(ends, options, rows, cols)?;
    let slab = |which: Slab, block: Option<usize>| slab_layout(which, block, dims, &grid);
    let mut layouts = vec![slab(ends[0], blocks[0])?];
    let mut forward = Vec::new();
    if grid.ranks() == 1 && rows == 1 {
        // One rank and one row: the FFTs along axis 1 are the transform, every layout the
        // same memory.
        forward.push(Stage::Fft { layout: 0, axis: 1 });
    } else {
        let mut at = 0;
        for (v, (which, block, axis)) in visits(ends, blocks).into_iter().enumerate() {
            if v > 0 {
                let layout = slab(which, block)?;
                let to = match layouts.iter().position(|l| *l == layout) {
                    Some(i) => i,
                    None => {
                        layouts.push(layout);
                        layouts.len() - 1
                    }
                };
                forward.push(Stage::Exchange { from: at, to });
                at = to;
            }
            if let Some(axis) = axis {
                forward.push(Stage::Fft { layout: at, axis });
            }
        }
    }
    let output = forward
        .iter()
        .rev()
        .find_map(|s| match *s {
            Stage::Exchange { to, .. } => Some(to),
            _ => None,
        })
        .unwrap_or(0);
    let backward = reversed(&forward);
    let count = layouts.len();
    Ok(Pipeline {
        layouts,
        real: vec![false; count],
        forward,
        backward,
        input: 0,
        output,
    })
}

/// The error of a 1-D transform of `n` points whose options do not fit.
fn bad_option(n: usize, reason: String) -> FftError {
    FftError::BadOptions {
        shape: vec![n],
        reason,
    }
}

/// The block of each end's split axis in rows of its matrix, from the options' block sizes
/// in points (checked: axis 0 only, a positive multiple of the split axis's row).
fn end_blocks(
    ends: [Slab; 2],
    options: &FftOptions,
    rows: usize,
    cols: usize,
) -> Result<[Option<usize>; 2]> {
    let given = [&options.input_blocks, &options.output_blocks];
    let mut blocks = [None, None];
    for (k, (&slab, given)) in ends.iter().zip(given).enumerate() {
        let list = given.as_deref().unwrap_or(&[]);
        if list.iter().skip(1).any(Option::is_some) {
            return Err(bad_option(
                rows * cols,
                format!("a 1-D transform's block sizes apply to its axis 0 only, got {list:?}"),
            ));
        }
        if let Some(b) = list.first().copied().flatten() {
            let row = if slab == Slab::L0 { cols } else { rows };
            if b == 0 || !b.is_multiple_of(row) {
                let which = ["input", "output"][k];
                return Err(bad_option(
                    rows * cols,
                    format!(
                        "the {which} block of a 1-D transform of {rows} × {cols} points must be a positive multiple of {row}, got {b}"
                    ),
                ));
            }
            blocks[k] = Some(b / row);
        }
    }
    Ok(blocks)
}

/// The layout of slab `which` of the matrix `dims` on `grid`, with `block` rows per block.
fn slab_layout(
    which: Slab,
    block: Option<usize>,
    dims: &[usize],
    grid: &GridShape,
) -> Result<Layout> {
    let d = dims.len();
    let (split, order) = match which {
        Slab::L0 => (0, MemoryOrder::natural(d)),
        Slab::L1 => {
            let mut order: Vec<usize> = (0..d).collect();
            order.swap(0, 1);
            (1, MemoryOrder::new(order)?)
        }
    };
    Ok(Layout::new(dims, grid.clone(), vec![split], order)?.with_blocks(vec![block])?)
}

/// The slabs the forward data visits from end `ends[0]` to end `ends[1]`, each with its
/// block and the axis transformed there. In between, each slab takes the blocks of an end of
/// its kind (the output's first).
fn visits(
    ends: [Slab; 2],
    blocks: [Option<usize>; 2],
) -> Vec<(Slab, Option<usize>, Option<usize>)> {
    let between = |which: Slab| {
        (0..2)
            .rev()
            .find(|&k| ends[k] == which)
            .and_then(|k| blocks[k])
    };
    let mut visits = Vec::new();
    if ends[0] == Slab::L0 {
        visits.push((Slab::L0, blocks[0], None));
        visits.push((Slab::L1, between(Slab::L1), Some(0)));
    } else {
        visits.push((Slab::L1, blocks[0], Some(0)));
    }
    if ends[1] == Slab::L0 {
        visits.push((Slab::L0, blocks[1], Some(1)));
    } else {
        visits.push((Slab::L0, between(Slab::L0), Some(1)));
        visits.push((Slab::L1, blocks[1], None));
    }
    visits
}

/// The positions of the 1-D axis (ordered, or in the scrambled order) that `rank`'s block of
/// `layout` (a slab of a distributed 1-D transform) holds: whole rows of the split axis.
pub fn range_1d(layout: &Layout, rank: usize) -> Range<usize> {
    let shape = layout.global_shape();
    let split = layout.decomposed()[0];
    let row = shape[1 - split];
    let r = layout.global_range(rank, split);
    r.start * row..r.end * row
}
