//! The copy kernel of the block-cyclic pack and unpack: runs of one row of a message (or of a
//! rank's own part) grouped into [`RunGroup`]s of equal runs at constant steps, each copied by
//! a loop specialized for short runs.
//!
//! Block sizes far below a cache line make rows of many short runs (block size 1: one element
//! per run, at a constant stride). Copied run by run through a table of `(start, start,
//! length)` triples and a `memcpy` call each, such a row costs a few nanoseconds per element;
//! grouped, the loop over a group's runs has constant strides and copies each run with a few
//! moves of fixed size.

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
pub(crate) fn group_runs(runs: impl IntoIterator<Item = (usize, usize, usize)>) -> Vec<RunGroup> {
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
pub(crate) fn extents(groups: &[RunGroup]) -> (usize, usize) {
    groups.iter().fold((0, 0), |(ea, eb), g| {
        (
            ea.max(g.a + (g.count - 1) * g.a_step + g.len),
            eb.max(g.b + (g.count - 1) * g.b_step + g.len),
        )
    })
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
/// Panics when the row does not fit (`extents` are the groups' [`extents`]).
#[inline]
pub(crate) fn a_to_b<T: Copy>(
    groups: &[RunGroup],
    extents: (usize, usize),
    a: &[T],
    a_at: usize,
    b: &mut [T],
    b_at: usize,
) {
    assert!(a_at + extents.0 <= a.len() && b_at + extents.1 <= b.len());
    // SAFETY: just checked: every run lies inside the row's part of each slice; `a` and `b`
    // are distinct slices.
    unsafe { a_to_b_raw(groups, a.as_ptr().add(a_at), b.as_mut_ptr().add(b_at)) }
}

/// [`a_to_b`] onto a raw destination.
///
/// # Safety
/// Every run of `groups` lies inside the memory at `a` and at `b`, which do not overlap.
#[inline]
pub(crate) unsafe fn a_to_b_raw<T: Copy>(groups: &[RunGroup], a: *const T, b: *mut T) {
    for g in groups {
        // SAFETY: the caller's guarantee, run by run.
        unsafe { copy_runs(a.add(g.a), g.a_step, b.add(g.b), g.b_step, g.len, g.count) }
    }
}

/// Copies one row from side B (`b`, from `b_at` on) to side A (`a`, from `a_at` on).
/// Panics when the row does not fit.
#[inline]
pub(crate) fn b_to_a<T: Copy>(
    groups: &[RunGroup],
    extents: (usize, usize),
    b: &[T],
    b_at: usize,
    a: &mut [T],
    a_at: usize,
) {
    assert!(a_at + extents.0 <= a.len() && b_at + extents.1 <= b.len());
    for g in groups {
        // SAFETY: just checked: every run lies inside the row's part of each slice; `a` and
        // `b` are distinct slices.
        unsafe {
            copy_runs(
                b.as_ptr().add(b_at + g.b),
                g.b_step,
                a.as_mut_ptr().add(a_at + g.a),
                g.a_step,
                g.len,
                g.count,
            )
        }
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
            let src: Vec<u32> = (0..ea as u32 + 3).collect();
            let mut out = vec![u32::MAX; eb + 2];
            a_to_b(&groups, (ea, eb), &src, 0, &mut out, 0);
            let mut want = vec![u32::MAX; eb + 2];
            for &(a, b, len) in &runs {
                want[b..b + len].copy_from_slice(&src[a..a + len]);
            }
            assert_eq!(out, want, "{runs:?}");
            let mut back = vec![u32::MAX; ea + 3];
            b_to_a(&groups, (ea, eb), &want, 0, &mut back, 0);
            let mut want_back = vec![u32::MAX; ea + 3];
            for &(a, b, len) in &runs {
                want_back[a..a + len].copy_from_slice(&want[b..b + len]);
            }
            assert_eq!(back, want_back, "{runs:?}");
            if regular && runs.len() > 1 {
                assert_eq!(groups.len(), 1, "{runs:?}");
            }
        }
    }

    #[test]
    #[should_panic]
    fn a_row_that_does_not_fit_panics() {
        let groups = group_runs([(0, 0, 2), (4, 2, 2)]);
        let mut out = [0u8; 4];
        a_to_b(&groups, extents(&groups), &[1u8; 5], 0, &mut out, 0);
    }
}
