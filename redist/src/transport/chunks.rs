//! MPI's 32-bit counts: messages longer than [`MPI_MAX_COUNT`] elements travel as consecutive
//! chunks, never truncated.

/// The largest element count MPI's 32-bit `int` counts can express.
pub const MPI_MAX_COUNT: usize = i32::MAX as usize;

/// Splits a message of `count` elements into consecutive chunks of at most `limit` elements
/// (`limit` ≥ 1), each given as `(offset, length)` in elements from the message start. A
/// message of zero elements has no chunks. The lengths always fit in an `i32` when
/// `limit <= MPI_MAX_COUNT`, and they add up to `count`: nothing is truncated.
///
/// ```
/// use redist::transport::{message_chunks, MPI_MAX_COUNT};
/// let big = MPI_MAX_COUNT + 10;
/// let chunks: Vec<_> = message_chunks(big, MPI_MAX_COUNT).collect();
/// assert_eq!(chunks, vec![(0, MPI_MAX_COUNT), (MPI_MAX_COUNT, 10)]);
/// assert_eq!(message_chunks(0, 5).count(), 0);
/// ```
pub fn message_chunks(count: usize, limit: usize) -> impl Iterator<Item = (usize, usize)> {
    let limit = limit.max(1);
    (0..count.div_ceil(limit)).map(move |i| {
        let offset = i * limit;
        (offset, limit.min(count - offset))
    })
}

/// Number of chunks [`message_chunks`] makes of `count` elements.
pub fn chunk_count(count: usize, limit: usize) -> usize {
    count.div_ceil(limit.max(1))
}

/// The `i32` values for `MPI_Alltoallv`, or `None` if one does not fit under `limit`.
pub(crate) fn to_i32s(values: &[usize], limit: usize) -> Option<Vec<i32>> {
    values
        .iter()
        .map(|&v| {
            if v <= limit {
                i32::try_from(v).ok()
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(count: usize, limit: usize) {
        let chunks: Vec<_> = message_chunks(count, limit).collect();
        assert_eq!(chunks.len(), chunk_count(count, limit));
        let mut next = 0;
        for &(offset, len) in &chunks {
            assert_eq!(offset, next, "chunks are consecutive");
            assert!(len >= 1 && len <= limit.max(1), "{count} {limit}: {len}");
            assert!(i32::try_from(len).is_ok());
            next += len;
        }
        assert_eq!(next, count, "nothing truncated: {count} {limit}");
    }

    #[test]
    fn chunks_near_and_above_the_mpi_count_limit() {
        let m = MPI_MAX_COUNT;
        for count in [0, 1, m - 1, m, m + 1, 2 * m, 2 * m + 1, 3 * m + 5, 1 << 40] {
            check(count, m);
        }
        assert_eq!(chunk_count(m, m), 1);
        assert_eq!(chunk_count(m + 1, m), 2);
        assert_eq!(
            message_chunks(2 * m + 3, m).collect::<Vec<_>>(),
            vec![(0, m), (m, m), (2 * m, 3)]
        );
        // Block lengths of Complex<f64> messages of 40 GiB and 1 TiB.
        check(40 << 30 >> 4, m);
        check(1 << 36, m);
    }

    #[test]
    fn chunks_with_small_limits() {
        for count in 0..50 {
            for limit in 0..9 {
                check(count, limit);
            }
        }
    }

    #[test]
    fn i32_counts_only_when_every_value_fits() {
        assert_eq!(to_i32s(&[1, 2, 3], 3), Some(vec![1, 2, 3]));
        assert_eq!(to_i32s(&[1, 4], 3), None);
        assert_eq!(to_i32s(&[MPI_MAX_COUNT + 1], usize::MAX), None);
    }
}
