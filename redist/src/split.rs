//! The balanced block split rule (the design notes), in one small function and its inverse.

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

#[cfg(test)]
mod tests {
    use super::*;

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
        // the design notes: ranks 0..m-1 own q+1 items.
        assert_eq!(balanced_range(7, 3, 0).len(), 3);
        assert_eq!(balanced_range(7, 3, 1).len(), 2);
        assert_eq!(balanced_range(7, 3, 2).len(), 2);
    }
}
