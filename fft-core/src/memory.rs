//! How much memory a plan needs per rank, and the check against the caller's limit.
//!
//! [`FftPlan::new`](crate::FftPlan::new) (and the other plans) refuse a plan whose need
//! exceeds [`FftOptions::memory_limit`](crate::FftOptions::memory_limit) with
//! [`FftError::InsufficientMemory`], giving both numbers, instead of letting one rank die of
//! an out-of-memory kill in the middle of a collective. The need is what lowering sized: each
//! rank's lowered program says what it holds (work and message buffers, window regions,
//! every worker's scratch, the caller's blocks), and each part is the largest over the ranks,
//! so every rank decides alike (the plans report it as `memory_estimate()`). Before
//! lowering, a plan refuses one whose caller blocks alone exceed the limit, so that absurd
//! sizes are refused before anything is sized. The limit may differ between ranks (each reads
//! its own node) and the smallest over all ranks is used. This library never reads the
//! environment or the kernel's process files: the `dfft` program fills the limit from the
//! kernel's meminfo, cgroups, `RLIMIT_AS` and `DFFT_MEMORY_LIMIT`. `None` (the default): no
//! check. [`estimate_memory`] gives an upper bound of them without MPI, cheaply at any rank
//! count (the `dfft` program checks it before planning).

use crate::error::{FftError, Result};
use crate::stages::Pipeline;
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;

/// What a plan needs per rank, in bytes, by purpose. Every field is the maximum over ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryEstimate {
    /// The plan's work buffers (up to two).
    pub work_bytes: u64,
    /// Send and receive buffers of the exchanges and fused steps, and the regions of the
    /// shared-memory windows fused steps may move their pieces through instead.
    pub message_bytes: u64,
    /// Every worker's transform scratch (tiles of lines, planes, staging blocks).
    pub scratch_bytes: u64,
    /// The caller's input and output blocks, which a transform needs as well.
    pub data_bytes: u64,
}

impl MemoryEstimate {
    /// The sum of all parts.
    pub fn total(&self) -> u64 {
        self.work_bytes
            .saturating_add(self.message_bytes)
            .saturating_add(self.scratch_bytes)
            .saturating_add(self.data_bytes)
    }
}

impl std::fmt::Display for MemoryEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} = work {} + messages {} + FFT scratch {} + input/output {}",
            format_bytes(self.total()),
            format_bytes(self.work_bytes),
            format_bytes(self.message_bytes),
            format_bytes(self.scratch_bytes),
            format_bytes(self.data_bytes)
        )
    }
}

/// The memory per rank of a plan over `pipeline` with complex elements of `element_bytes`
/// bytes (8: `f32`, else `f64`) and `threads` FFT threads per rank: what the plan's program
/// holds (see the module docs), without MPI.
pub fn estimate_memory(
    pipeline: &Pipeline,
    element_bytes: usize,
    threads: usize,
) -> MemoryEstimate {
    estimate_memory_batched(pipeline, element_bytes, threads, 1)
}

/// [`estimate_memory`] for `batch` fields transformed together. `element_bytes` is the size of
/// a complex element; layouts that [`Pipeline::real`] marks real count half of it per element.
/// Pure and cheap (global arguments only, whatever the rank count): an upper bound of what
/// any rank's lowered program holds (a plan's own `memory_estimate()` is that exact
/// number), with room for the shared-memory windows every rank maps.
pub fn estimate_memory_batched(
    pipeline: &Pipeline,
    element_bytes: usize,
    threads: usize,
    batch: usize,
) -> MemoryEstimate {
    let eb = element_bytes as u64;
    let max_block = (pipeline.layouts.iter().zip(&pipeline.real))
        .map(|(l, &real)| {
            let per = if real { eb.div_ceil(2) } else { eb };
            (l.max_local_len() as u64)
                .saturating_mul(batch.max(1) as u64)
                .saturating_mul(per)
        })
        .max()
        .unwrap_or(0);
    let ranks = pipeline.layouts[0].grid().ranks();
    let longest_axis = (pipeline.layouts.iter())
        .flat_map(|l| l.global_shape().iter().copied())
        .max()
        .unwrap_or(0) as u64;
    // Transforms that change lengths or element types, and real-to-real ones, gather tiles of
    // input and output lines besides the transform's own temporaries.
    let general = pipeline.real.iter().any(|&r| r)
        || (pipeline.forward.iter()).any(|s| matches!(s, crate::stages::Stage::Resize { .. }));
    let lines = if general {
        SCRATCH_LINES_GENERAL
    } else {
        SCRATCH_LINES_PER_AXIS
    };
    // The largest plane of any layout on any rank, counted complex.
    let plane = (pipeline.layouts.iter())
        .map(|l| {
            (0..l.grid().ranks())
                .map(|r| l.local_shape_in_memory(r).iter().skip(1).product::<usize>())
                .max()
                .unwrap_or(0) as u64
        })
        .max()
        .unwrap_or(0);
    // Work buffers hold whole complex elements: a real block may round up by one.
    let work = if general {
        max_block.saturating_add(eb)
    } else {
        max_block
    };
    // A worker holds either a tile or a column FFT's staging block.
    let tiles = (lines.saturating_mul(longest_axis))
        .saturating_add(SCRATCH_EXTRA)
        .saturating_add(plane.saturating_mul(2));
    // Only complex f64 has column FFTs.
    let staging = if eb == 16 {
        crate::kernels::column_staging_bound(longest_axis as usize) as u64
    } else {
        0
    };
    let blocks = blocks_only(pipeline, element_bytes, batch);
    MemoryEstimate {
        work_bytes: work.saturating_mul(2),
        message_bytes: if ranks > 1 { work.saturating_mul(2) } else { 0 },
        scratch_bytes: (threads.max(1) as u64)
            .saturating_mul(tiles.max(staging))
            .saturating_mul(eb),
        ..blocks
    }
}

/// Lines of the strided FFT sweeps' tiles (at most 64, as in the local FFT kernels), plus
/// headroom for rustfft's own scratch (at most a few times the axis length).
const SCRATCH_LINES_PER_AXIS: u64 = 64 + 8;
/// The same for the general line transforms (real, real-to-real, padded): tiles of input and
/// output lines of up to two scalars each (at most 64 lines), plus temporaries and scratch.
const SCRATCH_LINES_GENERAL: u64 = 2 * 64 + 16;
/// Elements per worker besides whole lines: the tile lines' padding and small fixed parts.
const SCRATCH_EXTRA: u64 = 64 * 16 + 64;

/// Only the caller's input and output blocks of `pipeline` (the largest of any rank), with
/// complex elements of `element_bytes` (real layouts half of it): what a plan refuses before
/// it lowers anything.
pub(crate) fn blocks_only(
    pipeline: &Pipeline,
    element_bytes: usize,
    batch: usize,
) -> MemoryEstimate {
    let block = |i: usize| -> u64 {
        let per = if pipeline.real[i] {
            element_bytes.div_ceil(2)
        } else {
            element_bytes
        };
        (pipeline.layouts[i].max_local_len() as u64)
            .saturating_mul(batch.max(1) as u64)
            .saturating_mul(per as u64)
    };
    MemoryEstimate {
        data_bytes: block(pipeline.input).saturating_add(block(pipeline.output)),
        ..MemoryEstimate::default()
    }
}

/// Formats a byte count with a binary unit, e.g. `1.50 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// Parses a byte count such as `1000`, `512M`, `8G`, `1.5T` (powers of 1024; an optional
/// trailing `B` or `iB` is accepted). `None` if malformed. Whole numbers are exact up to
/// `u64::MAX`; larger counts saturate at `u64::MAX` (no limit can be that large anyway).
///
/// ```
/// use fft_core::memory::parse_bytes;
/// assert_eq!(parse_bytes("512M"), Some(512 << 20));
/// assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
/// assert_eq!(parse_bytes("18446744073709551615"), Some(u64::MAX));
/// assert_eq!(parse_bytes("lots"), None);
/// ```
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_uppercase();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(&t);
    let (number, scale) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1u64 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let number = number.trim();
    if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: exact, saturating beyond u64.
        return Some(match number.parse::<u64>() {
            Ok(n) => n.saturating_mul(scale),
            Err(_) => u64::MAX,
        });
    }
    let value: f64 = number.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    let bytes = value * scale as f64;
    Some(if bytes >= u64::MAX as f64 {
        u64::MAX
    } else {
        bytes as u64
    })
}

/// The smallest of the ranks' `limit`s (`None`: no limit on that rank, and `None` when no
/// rank has one). Collective over `comm` whatever the limits: one all-reduce.
pub(crate) fn smallest_limit<C: Communicator>(comm: &C, limit: Option<u64>) -> Option<u64> {
    let mine = limit.unwrap_or(u64::MAX);
    let mut smallest = 0u64;
    comm.all_reduce_into(&mine, &mut smallest, SystemOperation::min());
    (smallest != u64::MAX).then_some(smallest)
}

/// Refuses `need` beyond `limit` (the same on every rank, both being).
pub(crate) fn check(need: &MemoryEstimate, limit: Option<u64>) -> Result<()> {
    match limit {
        Some(limit) if need.total() > limit => Err(FftError::InsufficientMemory {
            need: need.total(),
            limit,
            detail: format!(
                "needs {need} per rank, limit {} per rank",
                format_bytes(limit)
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::pipeline;
    use redist::GridShape;

    #[test]
    fn byte_counts_parse_and_print() {
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("4k"), Some(4096));
        assert_eq!(parse_bytes("1.5G"), Some(3 << 29));
        assert_eq!(parse_bytes(" 2 TiB "), Some(2 << 40));
        assert_eq!(parse_bytes("-1G"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(parse_bytes("G"), None);
        assert_eq!(parse_bytes("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_bytes("18446744073709551616"), Some(u64::MAX));
        assert_eq!(parse_bytes("99999999999T"), Some(u64::MAX));
        assert_eq!(parse_bytes("1e30"), Some(u64::MAX));
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 29), "1.50 GiB");
    }

    #[test]
    fn estimate_is_the_lowered_program_of_rank_0() {
        let block = 64 * 64 * 64 * 16;
        let one = pipeline(&[64, 64, 64], GridShape::new(vec![1]).unwrap(), false).unwrap();
        let e1 = estimate_memory(&one, 16, 1);
        assert_eq!(e1.message_bytes, 0, "no messages on one rank");
        assert_eq!(e1.data_bytes, 2 * block);
        assert!(e1.scratch_bytes > 0);
        let four = pipeline(&[64, 64, 64], GridShape::new(vec![2, 2]).unwrap(), false).unwrap();
        let e4 = estimate_memory(&four, 16, 1);
        assert_eq!(e4.data_bytes, 2 * block / 4);
        assert!(e4.message_bytes > 0 && e4.message_bytes <= 2 * block / 4);
        assert!(e4.work_bytes <= 2 * block / 4);
        // A worker's scratch per thread.
        assert!(estimate_memory(&four, 16, 2).scratch_bytes > e4.scratch_bytes);
        // Huge shapes are bounded without lowering, and saturate instead of overflowing.
        let huge = pipeline(&[1 << 31, 1 << 31], GridShape::new(vec![1]).unwrap(), false).unwrap();
        assert!(estimate_memory(&huge, 16, 64).total() >= 1 << 62);
    }
}
