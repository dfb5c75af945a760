//! The copy kernel of the block-cyclic pack and unpack: runs of one row of a message (or of a
//! rank's own part) grouped into [`RunGroup`]s of equal runs at constant steps, each copied by
//! a loop specialized for short runs; or, where the groups would be many and short, one
//! offset pair per element.
//!
//! Block sizes far below a cache line make rows of many short runs (block size 1: one element
//! per run, at a constant stride). Copied run by run through a table of `(start, start,
//! length)` triples and a `memcpy` call each, such a row costs a few nanoseconds per element;
//! grouped, the loop over a group's runs has constant strides and copies each run with a few
//! moves of fixed size. Two block sizes that do not divide each other (a block of 15 rows
//! sending to 4 processes with blocks of 1) break a row into groups of a few runs each, whose
//! setup then costs more than their copies: such a row is copied element by element from a
//! table of offsets (a load of the pair, a load and a store per element).
/// `count` runs of `len` elements: run `k` lies at `a + k·a_step` on side A and at
/// `b + k·b_step` on side B (offsets within a row of each side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunGroup {
    a: usize,
    a_step: usize,
    b: usize,
    b_step: usize,
    len: usize,
    count: usize,
}

/// Groups the runs `(a, b, len)` (in copy order): consecutive runs of one length whose starts
/// advance by the same steps on both sides join one group.
fn group_runs(runs: impl IntoIterator<Item = (usize, usize, usize)>) -> Vec<RunGroup> {
    let mut groups: Vec<RunGroup> = Vec::new();
    for (a, b, len) in runs {
        if len == 0 {
            continue;
        }
        if let Some(g) = groups.last_mut() {
            let (last_a, last_b) = (
                g.a + (g.count - 1) * g.a_step,
                g.b + (g.count - 1) * g.b_step,
            );
            if g.len == len && a >= last_a + len && b >= last_b + len {
                let steps = (a - last_a, b - last_b);
                if g.count == 1 {
                    (g.a_step, g.b_step) = steps;
                    g.count = 2;
                    continue;
                }
                if steps == (g.a_step, g.b_step) {
                    g.count += 1;
                    continue;
                }
            }
        }
        groups.push(RunGroup {
            a,
            a_step: 0,
            b,
            b_step: 0,
            len,
            count: 1,
        });
    }
    groups
}

/// One past the largest offset of any run of `groups` on side A and on side B (what a row's
/// copy touches past its starts).
fn extents(groups: &[RunGroup]) -> (usize, usize) {
    groups.iter().fold((0, 0), |(ea, eb), g| {
        (
            ea.max(g.a + (g.count - 1) * g.a_step + g.len),
            eb.max(g.b + (g.count - 1) * g.b_step + g.len),
        )
    })
}

/// How one row is copied: its runs grouped, or one offset pair per element where that costs
/// fewer instructions, and what the row's copy touches past its starts on each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowKernel {
    groups: Vec<RunGroup>,
    /// `(a, b)` offsets of every element, in copy order; empty when the groups are used.
    elements: Vec<[u32; 2]>,
    extents: (usize, usize),
}

/// Estimated instructions of the grouped copy: a group's setup, then per run a move (one
/// for a single element, two fixed-size ones up to 31, a `memcpy` call above).
fn grouped_cost(groups: &[RunGroup]) -> usize {
    groups
        .iter()
        .map(|g| {
            let run = match g.len {
                1 => 3,
                2..=31 => 6,
                len => 24 + len / 8,
            };
            24 + g.count * run
        })
        .sum()
}

/// Estimated instructions per element of the copy from an offset table.
const ELEMENT_COST: usize = 4;

impl RowKernel {
    /// The copy of the runs `(a, b, len)` (in copy order).
    pub(crate) fn new(runs: impl IntoIterator<Item = (usize, usize, usize)>) -> Self {
        let groups = group_runs(runs);
        let extents = extents(&groups);
        let elements: usize = groups.iter().map(|g| g.len * g.count).sum();
        let fits = u32::try_from(extents.0.max(extents.1)).is_ok();
        if !fits || elements * ELEMENT_COST >= grouped_cost(&groups) {
            return Self {
                groups,
                elements: Vec::new(),
                extents,
            };
        }
        let mut table = Vec::with_capacity(elements);
        for g in &groups {
            for k in 0..g.count {
                let (a, b) = (g.a + k * g.a_step, g.b + k * g.b_step);
                // Both below the extents, which fit in u32 (checked above).
                table.extend((0..g.len).map(|i| [(a + i) as u32, (b + i) as u32]));
            }
        }
        Self {
            groups: Vec::new(),
            elements: table,
            extents,
        }
    }

    /// Whether the row is copied element by element from an offset table.
    #[cfg(test)]
    pub(crate) fn by_element(&self) -> bool {
        !self.elements.is_empty()
    }

    /// Copies one row between `a` (side A) and `b` (side B): from A to B when `a_to_b`, else
    /// from B to A (the side read is only read).
    ///
    /// # Safety
    /// Every run of the row lies inside the memory at `a` and at `b`, which do not overlap,
    /// and the side written is writable.
    #[inline(always)]
    unsafe fn copy<T: Copy>(&self, a: *mut T, b: *mut T, a_to_b: bool) {
        // SAFETY (both loops): the caller's guarantee, run by run and element by element.
        unsafe {
            for &[x, y] in &self.elements {
                let (x, y) = (x as usize, y as usize);
                if a_to_b {
                    *b.add(y) = *a.add(x);
                } else {
                    *a.add(x) = *b.add(y);
                }
            }
            for g in &self.groups {
                if a_to_b {
                    copy_runs(a.add(g.a), g.a_step, b.add(g.b), g.b_step, g.len, g.count);
                } else {
                    copy_runs(b.add(g.b), g.b_step, a.add(g.a), g.a_step, g.len, g.count);
                }
            }
        }
    }
}

/// Copies `count` runs of `len` elements from `s + k·s_step` to `d + k·d_step`.
///
/// # Safety
/// Every run lies inside its buffer, and no source run overlaps a destination run.
#[inline(always)]
unsafe fn copy_runs<T: Copy>(
    s: *const T,
    s_step: usize,
    d: *mut T,
    d_step: usize,
    len: usize,
    count: usize,
) {
    use std::ptr::copy_nonoverlapping as copy;
    // Short runs: moves of fixed size (two overlapping ones cover any length of a class),
    // inlined, instead of a `memcpy` call per run.
    // SAFETY (every arm): run k covers s + k·s_step .. + len and d + k·d_step .. + len, inside
    // the buffers by the caller's guarantee; the fixed-size moves stay inside the run.
    unsafe {
        match len {
            1 => {
                for k in 0..count {
                    *d.add(k * d_step) = *s.add(k * s_step);
                }
            }
            2 | 3 => {
                for k in 0..count {
                    let (s, d) = (s.add(k * s_step), d.add(k * d_step));
                    copy(s, d, 2);
                    copy(s.add(len - 2), d.add(len - 2), 2);
                }
            }
            4..=7 => {
                for k in 0..count {
                    let (s, d) = (s.add(k * s_step), d.add(k * d_step));
                    copy(s, d, 4);
                    copy(s.add(len - 4), d.add(len - 4), 4);
                }
            }
            8..=15 => {
                for k in 0..count {
                    let (s, d) = (s.add(k * s_step), d.add(k * d_step));
                    copy(s, d, 8);
                    copy(s.add(len - 8), d.add(len - 8), 8);
                }
            }
            16..=31 => {
                for k in 0..count {
                    let (s, d) = (s.add(k * s_step), d.add(k * d_step));
                    copy(s, d, 16);
                    copy(s.add(len - 16), d.add(len - 16), 16);
                }
            }
            _ => {
                for k in 0..count {
                    copy(s.add(k * s_step), d.add(k * d_step), len);
                }
            }
        }
    }
}

/// Copies one row from side A (`a`, from `a_at` on) to side B (`b`, from `b_at` on).
/// Panics when the row does not fit.
#[inline]
pub(crate) fn a_to_b<T: Copy>(row: &RowKernel, a: &[T], a_at: usize, b: &mut [T], b_at: usize) {
    let (ea, eb) = row.extents;
    assert!(a_at + ea <= a.len() && b_at + eb <= b.len());
    // SAFETY: just checked: every run lies inside the row's part of each slice; `a` and `b`
    // are distinct slices.
    unsafe {
        row.copy(
            a.as_ptr().add(a_at) as *mut T,
            b.as_mut_ptr().add(b_at),
            true,
        )
    }
}

/// Copies one row from side B (`b`, from `b_at` on) to side A (`a`, from `a_at` on).
/// Panics when the row does not fit.
#[inline]
pub(crate) fn b_to_a<T: Copy>(row: &RowKernel, b: &[T], b_at: usize, a: &mut [T], a_at: usize) {
    let (ea, eb) = row.extents;
    assert!(a_at + ea <= a.len() && b_at + eb <= b.len());
    // SAFETY: just checked, as in `a_to_b`; only side A is written.
    unsafe {
        row.copy(
            a.as_mut_ptr().add(a_at),
            b.as_ptr().add(b_at) as *mut T,
            false,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every grouping copies exactly the runs it was made of, in both directions, whatever
    /// their lengths (each size class of the kernel) and steps.
    #[test]
    fn groups_copy_exactly_their_runs() {
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..400 {
            // Runs on side A with gaps (sometimes constant), contiguous or gapped on side B.
            let mut runs = Vec::new();
            let (mut a, mut b) = (next(5), next(3));
            let regular = next(2) == 0;
            let (len0, gap0) = (1 + next(40), next(6));
            for _ in 0..next(30) {
                let len = if regular { len0 } else { 1 + next(40) };
                runs.push((a, b, len));
                a += len + if regular { gap0 } else { next(6) };
                b += len + if !regular && next(4) == 0 { next(3) } else { 0 };
            }
            let groups = group_runs(runs.iter().copied());
            let (ea, eb) = extents(&groups);
            let row = RowKernel::new(runs.iter().copied());
            // Both ways of copying, whichever the row chose.
            let forced = RowKernel {
                groups: Vec::new(),
                elements: runs
                    .iter()
                    .flat_map(|&(a, b, len)| {
                        (0..len).map(move |i| [(a + i) as u32, (b + i) as u32])
                    })
                    .collect(),
                extents: (ea, eb),
            };
            let grouped = RowKernel {
                groups: groups.clone(),
                elements: Vec::new(),
                extents: (ea, eb),
            };
            for row in [&row, &forced, &grouped] {
                let src: Vec<u32> = (0..ea as u32 + 3).collect();
                let mut out = vec![u32::MAX; eb + 2];
                a_to_b(row, &src, 0, &mut out, 0);
                let mut want = vec![u32::MAX; eb + 2];
                for &(a, b, len) in &runs {
                    want[b..b + len].copy_from_slice(&src[a..a + len]);
                }
                assert_eq!(out, want, "{runs:?}");
                let mut back = vec![u32::MAX; ea + 3];
                b_to_a(row, &want, 0, &mut back, 0);
                let mut want_back = vec![u32::MAX; ea + 3];
                for &(a, b, len) in &runs {
                    want_back[a..a + len].copy_from_slice(&want[b..b + len]);
                }
                assert_eq!(back, want_back, "{runs:?}");
            }
            if regular && runs.len() > 1 {
                assert_eq!(groups.len(), 1, "{runs:?}");
            }
        }
    }

    /// A row of long regular runs keeps its groups; a row broken into many short groups (a
    /// block of 15 sent to 4 processes with blocks of 1) goes element by element.
    #[test]
    fn fragmented_rows_go_element_by_element() {
        let regular = RowKernel::new((0..8).map(|k| (k * 40, k * 32, 32)));
        assert!(!regular.by_element());
        let strided = RowKernel::new((0..64).map(|k| (k * 4, k, 1)));
        assert!(!strided.by_element());
        // Rows i ≡ 1 (mod 4) of blocks of 15 rows, the blocks 45 apart: steps of 4 within a
        // block, another step between blocks, so groups of 3 or 4 runs.
        let rows = (0..5).flat_map(|blk| (0..15).map(move |i| blk * 45 + i));
        let fragmented: Vec<_> = rows.filter(|r| r % 4 == 1).enumerate().collect();
        let row = RowKernel::new(fragmented.iter().map(|&(b, a)| (a, b, 1)));
        assert!(row.by_element(), "{row:?}");
    }

    #[test]
    #[should_panic]
    fn a_row_that_does_not_fit_panics() {
        let row = RowKernel::new([(0, 0, 2), (4, 2, 2)]);
        let mut out = [0u8; 4];
        a_to_b(&row, &[1u8; 5], 0, &mut out, 0);
    }
}
