//! The transforms of a rank's block, by kind. Each is planned once for one memory shape and
//! runs with scratch made at plan time (one buffer per rayon worker), so nothing is
//! allocated per call.
//!
//! * [`sweep`]: 1-D FFTs along one axis ([`Sweep`]): contiguous lines in cache-sized
//!   batches, strided lines gathered a tile at a time ([`transpose`]'s 4 × 4 blocks) or
//!   transformed where they lie by a column FFT ([`column`]).
//! * [`block`]: the FFTs of several axes of one block ([`LocalFft`]), the fastest ones one
//!   sub-block at a time in cache.
//! * [`line`]: 1-D transforms that change an axis's length or element type, or are not FFTs
//!   ([`LineStep`]: r2c, c2r, padded c2c, real-to-real).
//! * [`plane`]: an r2c or c2r step with the FFTs of the other trailing axes, one sub-block
//!   at a time ([`PlaneSteps`]), and whole planes whose rows come from or go to an exchange
//!   ([`PlaneKernel`]).
//! * [`row`]: complex `f64` FFTs of contiguous rows on AVX-512 vectors, planned in place of
//!   rustfft's for the lengths they have ([`row::plan_fft`]).
//! * [`rows`]: where a kernel reads and writes its rows ([`Rows`], [`RunMap`]).

pub(crate) mod block;
pub(crate) mod column;
pub(crate) mod line;
pub(crate) mod plane;
pub(crate) mod row;
pub(crate) mod rows;
pub(crate) mod split;
pub(crate) mod sweep;
pub(crate) mod transpose;
pub(crate) mod twiddle;

#[cfg(test)]
mod lengths;
#[cfg(test)]
mod plane_speed;
#[cfg(test)]
mod tests;

pub(crate) use block::LocalFft;
pub(crate) use line::{LineOp, LineStep, R2r};
pub(crate) use plane::{PlaneEnd, PlaneKernel, PlaneSteps};
pub(crate) use rows::{Rows, RunMap};
pub use sweep::Sweep;
pub(crate) use twiddle::Twiddle;

use num_complex::Complex;

/// Most lines of a strided axis gathered per tile: each row of a tile is read and written as
/// one run of that many elements, and short runs spread over many rows leave the hardware
/// prefetchers idle.
const TILE_LINES: usize = 64;
/// Fewest lines per tile, for very long axes.
const MIN_TILE_LINES: usize = 4;
/// Bytes of one tile to aim at (half of a 2 MiB L2 cache), which caps the lines of long axes.
const TILE_BYTES: usize = 1 << 20;

/// Lines per tile of a strided sweep along an axis of `n` elements.
fn tile_lines<T>(n: usize) -> usize {
    tile_lines_of(n, std::mem::size_of::<Complex<T>>())
}

/// Lines per tile of a strided sweep along an axis of `n` elements of `element_bytes` (what
/// the model charges a sweep's tile copies for).
pub(crate) fn tile_lines_of(n: usize, element_bytes: usize) -> usize {
    (TILE_BYTES / (n.max(1) * element_bytes.max(1))).clamp(MIN_TILE_LINES, TILE_LINES)
}

/// Most columns per task of a column FFT ([`column`]). Each pass reads or writes 8–16 rows at
/// once, a run of the task's columns from each, so wider tasks give the prefetchers longer
/// runs.
const COLUMN_LINES: usize = 256;
/// Bytes of a column FFT's staging block to aim at (half of a 2 MiB L2 cache), which caps the
/// columns of long axes.
const COLUMN_BYTES: usize = 1 << 20;

/// Most columns per task of a column FFT of length `n` (complex `f64`): a whole number of
/// vectors. Lengths over 256 aim at 3/4 of [`COLUMN_BYTES`]: the task's rows and staging
/// block together outgrow L2 otherwise, and 384 in place (the axis-0 pass of a 1-rank r2c)
/// ran 1.5 times slower at 168 columns than at 128.
fn column_lines(n: usize) -> usize {
    let bytes = if n > 256 {
        COLUMN_BYTES / 4 * 3
    } else {
        COLUMN_BYTES
    };
    (bytes / (n.max(1) * 16)).clamp(4, COLUMN_LINES) / 4 * 4
}

/// Columns per task of a column FFT of length `n` over rows of `inner` elements: the rows
/// split into as few tasks as [`column_lines`] allows, of about equal widths in whole
/// vectors: no task is a sliver (193 columns of 384 go as 100 + 93, not 128 + 65), and no
/// cache line of a row aligned to one is split between two tasks.
fn column_task_lines(n: usize, inner: usize) -> usize {
    let most = column_lines(n);
    let tasks = inner.div_ceil(most).max(1);
    inner.div_ceil(tasks).next_multiple_of(4).min(most)
}

/// Complex elements of a worker's staging block for a column FFT along an axis of at most
/// `n` elements, whether or not the length has one: a bound for `memory`'s estimate.
pub(crate) fn column_staging_bound(n: usize) -> usize {
    let n = n.min(column::MAX_LEN);
    column::staging_len(n, column_lines(n))
}

/// Target elements per batch of contiguous lines (fits in L2 for complex f64).
const BATCH_ELEMENTS: usize = 1 << 14;

/// Distance in elements between the lines of a strided sweep's tile: the line length padded
/// by two cache lines, so that lines of a power-of-two length do not all fall into the same
/// cache set (the gather writes, and the scatter reads, one element of every line in turn).
fn tile_stride<T>(n: usize) -> usize {
    let per_line = (64 / std::mem::size_of::<Complex<T>>()).max(1);
    n + 2 * per_line
}

/// Rows ahead of the one being copied that a strided tile's gather and scatter prefetch: one
/// or two ahead pay, many ahead do not (rows a power of two apart then evict each other from
/// L1 before use).
const PREFETCH_ROWS: usize = 2;

/// Which planes of a strided sweep to run: the sweep's planes are `groups` groups of `count`
/// consecutive planes each (e.g. fields of a batch), and `range` picks the same planes of
/// every group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planes {
    pub groups: usize,
    pub count: usize,
    pub range: std::ops::Range<usize>,
}

impl Planes {
    /// Tasks of these planes, `blocks` per plane.
    fn tasks(&self, blocks: usize) -> usize {
        self.groups * self.range.len() * blocks
    }

    /// The plane (among all the sweep's planes) and the block of task `t`.
    fn task(&self, t: usize, blocks: usize) -> (usize, usize) {
        let per_group = self.range.len() * blocks;
        let (group, rest) = (t / per_group, t % per_group);
        (
            group * self.count + self.range.start + rest / blocks,
            rest % blocks,
        )
    }
}

/// Whether this CPU has AVX-512F (the `f64` row, column and split kernels need it).
pub(crate) fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}
