//! The block split rules, each in one small function and its inverse: the balanced split
//! (the default of every layout) and blocks of a given size (FFTW-MPI's and ScaLAPACK's).

use std::ops::Range;

/// The index range that part `part` of `parts` owns when `n` items are split as evenly as
/// possible: with `n = q·parts + m`, parts `0..m` own `q + 1` items and the others `q`; part `p`
/// starts at `p·q + min(p, m)`. Parts own nothing when `parts > n` and `part >= n`.
///
/// ```
/// use redist::split::balanced_range;
/// assert_eq!(balanced_range(10, 4, 0), 0..3);
/// assert_eq!(balanced_range(10, 4, 1), 3..6);
/// assert_eq!(balanced_range(10, 4, 3), 8..10);
/// assert_eq!(balanced_range(2, 3, 2), 2..2); // owns nothing
/// ```
#[inline]
pub fn balanced_range(n: usize, parts: usize, part: usize) -> Range<usize> {
    debug_assert!(parts > 0 && part < parts);
    let q = n / parts;
    let m = n % parts;
    let start = part * q + part.min(m);
    let len = q + usize::from(part < m);
    start..start + len
}

/// The part that owns item `index` under [`balanced_range`].
///
/// ```
/// use redist::split::{balanced_owner, balanced_range};
/// for i in 0..10 {
///     let p = balanced_owner(10, 4, i);
///     assert!(balanced_range(10, 4, p).contains(&i));
/// }
/// ```
#[inline]
pub fn balanced_owner(n: usize, parts: usize, index: usize) -> usize {
    debug_assert!(index < n);
    let q = n / parts;
    let m = n % parts;
    let big = m * (q + 1);
    if index < big {
        index / (q + 1)
    } else {
        m + (index - big) / q
    }
}

/// The index range that part `part` owns when `n` items are cut into blocks of `block`
/// (block `p` is `p·block .. (p+1)·block`, cut at `n`): FFTW-MPI's distribution, whose
/// default `block` is ⌈n/parts⌉, so trailing parts may own nothing.
///
/// ```
/// use redist::split::block_range;
/// assert_eq!(block_range(10, 3, 0), 0..3);
/// assert_eq!(block_range(10, 3, 3), 9..10);
/// assert_eq!(block_range(10, 5, 2), 10..10); // owns nothing
/// ```
#[inline]
pub fn block_range(n: usize, block: usize, part: usize) -> Range<usize> {
    let start = part.saturating_mul(block).min(n);
    start..start.saturating_add(block).min(n)
}

/// The part that owns item `index` under [`block_range`].
#[inline]
pub fn block_owner(block: usize, index: usize) -> usize {
    index / block
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_the_axis_in_order() {
        for n in 0..40usize {
            for block in 1..15 {
                let parts = n.div_ceil(block).max(1) + 2;
                let mut next = 0;
                for p in 0..parts {
                    let r = block_range(n, block, p);
                    assert_eq!(r.start, next, "n={n} block={block} p={p}");
                    assert!(r.len() <= block);
                    next = r.end;
                    for i in r {
                        assert_eq!(block_owner(block, i), p);
                    }
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn ranges_tile_the_axis_in_order() {
        for n in 0..40 {
            for parts in 1..20 {
                let mut next = 0;
                for p in 0..parts {
                    let r = balanced_range(n, parts, p);
                    assert_eq!(r.start, next, "n={n} parts={parts} p={p}");
                    assert!(r.len() == n / parts || r.len() == n / parts + 1);
                    next = r.end;
                    for i in r {
                        assert_eq!(balanced_owner(n, parts, i), p);
                    }
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn larger_parts_come_first() {
        // ranks 0..m-1 own q+1 items.
        assert_eq!(balanced_range(7, 3, 0).len(), 3);
        assert_eq!(balanced_range(7, 3, 1).len(), 2);
        assert_eq!(balanced_range(7, 3, 2).len(), 2);
    }
}
