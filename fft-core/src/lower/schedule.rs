//! Where each step leaves the data: the output, a writable input, or one of two work
//! buffers, the same buffer on every rank ([`schedule`]).

use crate::program::{At, Step};
use crate::real::Real;

/// Whether each step writes a new buffer by its nature (an exchange, an out-of-place
/// transform, a fused step that cannot run in place); [`schedule`] adds the first step when
/// the input is read-only (or nothing else moves).
pub(crate) fn movers<T: Real>(steps: &[Step<T>]) -> Vec<bool> {
    steps
        .iter()
        .map(|s| match s {
            Step::Exchange { .. } | Step::Planes(_) => true,
            Step::Line { in_place, .. } => !in_place,
            Step::Fused(f) => !f.in_place,
            Step::Fft(_) => false,
        })
        .collect()
}

/// One rank's block lengths (scalars) for [`schedule`]: after each step, of the output, and
/// of the input when the steps may write into it (`destroy_input`).
#[derive(Debug, Clone)]
pub(crate) struct RankLens {
    pub steps: Vec<usize>,
    pub output: usize,
    pub input: Option<usize>,
}

/// Where each step leaves the data (the same on every rank), and the lengths the two work
/// buffers of rank `me` need.
///
/// `moves[i]` says whether step `i` must write a new buffer (an exchange or an out-of-place
/// transform); `ranks[q]` holds rank `q`'s lengths. Without a writable input (or when
/// nothing else moves) the first step moves too (it reads the input and writes elsewhere).
/// Walking back from the end, the last mover writes the output and every earlier one the
/// first buffer that the mover after it does not write and that is long enough on every
/// rank, in the order output, input, work buffer 0, work buffer 1; the first mover never
/// writes the input, which it reads. A plan thus needs no work buffer when the output and a
/// writable input can host every layout in turn, one when only the output can (all of them,
/// for even splits), and two otherwise. With a writable input, the first step runs in place
/// in it or moves out of it, whichever needs less work memory on the rank that needs most.
///
/// The destinations depend on every rank's lengths only, never on which rank asks: the
/// fused steps move rows between the ranks' buffers of one kind and synchronize on those
/// buffers' windows, so every rank must hold the data in the same buffer.
pub(crate) fn schedule(moves: &[bool], ranks: &[RankLens], me: usize) -> (Vec<At>, [usize; 2]) {
    let writable = ranks.first().is_some_and(|r| r.input.is_some());
    let mut moves = moves.to_vec();
    if !writable || !moves.contains(&true) {
        if let Some(first) = moves.first_mut() {
            *first = true;
        }
    }
    let most = |dests: &[At]| {
        ranks
            .iter()
            .map(|r| {
                let [a, b] = work_lens(dests, &r.steps);
                a + b
            })
            .max()
            .unwrap_or(0)
    };
    let mut dests = assign(&moves, ranks);
    if let Some(first) = moves.first_mut() {
        if !*first {
            *first = true;
            let moved = assign(&moves, ranks);
            if most(&moved) < most(&dests) {
                dests = moved;
            }
        }
    }
    let lens = work_lens(&dests, ranks.get(me).map_or(&[][..], |r| &r.steps));
    (dests, lens)
}

/// The destinations for movers `moves` (see [`schedule`]).
fn assign(moves: &[bool], ranks: &[RankLens]) -> Vec<At> {
    let movers: Vec<usize> = (0..moves.len()).filter(|&i| moves[i]).collect();
    let mut assignment: Vec<(usize, At)> = Vec::with_capacity(movers.len());
    for (k, &i) in movers.iter().enumerate().rev() {
        let fits = |at: At| match at {
            At::Output => ranks.iter().all(|r| r.steps[i] <= r.output),
            At::Input => {
                k > 0
                    && ranks
                        .iter()
                        .all(|r| r.input.is_some_and(|len| r.steps[i] <= len))
            }
            At::Work(_) => true,
        };
        let at = match assignment.last() {
            None => At::Output,
            Some(&(_, next)) => [At::Output, At::Input, At::Work(0), At::Work(1)]
                .into_iter()
                .find(|&at| at != next && fits(at))
                .expect("two work buffers always do"),
        };
        assignment.push((i, at));
    }
    let mut dests = vec![At::Output; moves.len()];
    let mut current = At::Input;
    let mut next = assignment.iter().rev().peekable();
    for (i, dest) in dests.iter_mut().enumerate() {
        if let Some(&&(j, at)) = next.peek() {
            if j == i {
                current = at;
                next.next();
            }
        }
        *dest = current;
    }
    dests
}

/// Where each step leaves the data in an in-place call, and the lengths the two work
/// buffers of rank `me` need; `ranks[q].output` is then rank `q`'s one buffer (the larger of
/// its input and output blocks) and `ranks[q].input` is unused. `None` when no schedule fits
/// (a single step that cannot run in place).
///
/// Like [`schedule`] with the input and the output one buffer, [`At::Output`]: the data
/// starts there, steps that need not move stay there, and the movers alternate between it
/// and the work buffers, the last one writing it; the first mover, which reads it, never
/// writes it. A lone mover cannot both read and write the buffer, so one more step is made
/// to move (the first step that may run either way, before it if possible): one work block
/// then, as out of place.
pub(crate) fn schedule_in_place(
    moves: &[bool],
    ranks: &[RankLens],
    me: usize,
) -> Option<(Vec<At>, [usize; 2])> {
    let mut moves = moves.to_vec();
    let movers: Vec<usize> = (0..moves.len()).filter(|&i| moves[i]).collect();
    if let [only] = movers[..] {
        let before = (0..only).find(|&i| !moves[i]);
        let extra = before.or_else(|| (only + 1..moves.len()).find(|&i| !moves[i]))?;
        moves[extra] = true;
    }
    let movers: Vec<usize> = (0..moves.len()).filter(|&i| moves[i]).collect();
    let mut assignment: Vec<(usize, At)> = Vec::with_capacity(movers.len());
    for (k, &i) in movers.iter().enumerate().rev() {
        let fits = |at: At| match at {
            At::Output => k > 0 && ranks.iter().all(|r| r.steps[i] <= r.output),
            _ => true,
        };
        let at = match assignment.last() {
            None => At::Output,
            Some(&(_, next)) => [At::Output, At::Work(0), At::Work(1)]
                .into_iter()
                .find(|&at| at != next && fits(at))
                .expect("two work buffers always do"),
        };
        assignment.push((i, at));
    }
    let mut dests = vec![At::Output; moves.len()];
    let mut current = At::Output;
    let mut next = assignment.iter().rev().peekable();
    for (i, dest) in dests.iter_mut().enumerate() {
        if let Some(&&(j, at)) = next.peek() {
            if j == i {
                current = at;
                next.next();
            }
        }
        *dest = current;
    }
    let lens = work_lens(&dests, ranks.get(me).map_or(&[][..], |r| &r.steps));
    Some((dests, lens))
}

/// The lengths the two work buffers need to host the blocks `lens` (after each step) at
/// `dests`.
pub(crate) fn work_lens(dests: &[At], lens: &[usize]) -> [usize; 2] {
    let mut work = [0, 0];
    for (&at, &len) in dests.iter().zip(lens) {
        if let At::Work(k) = at {
            work[k] = work[k].max(len);
        }
    }
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`schedule`] for one rank.
    fn schedule1(
        moves: &[bool],
        lens: &[usize],
        output: usize,
        input: Option<usize>,
    ) -> (Vec<At>, [usize; 2]) {
        let rank = RankLens {
            steps: lens.to_vec(),
            output,
            input,
        };
        schedule(moves, &[rank], 0)
    }

    #[test]
    fn one_work_buffer_when_the_output_fits_every_layout_it_hosts() {
        // FFT (reads input), exchange, FFT, exchange: output, work 0, work 0, output.
        let (dests, lens) = schedule1(&[true, true, false, true], &[8, 8, 8, 8], 8, None);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output]
        );
        assert_eq!(lens, [8, 0]);
    }

    #[test]
    fn two_work_buffers_when_an_intermediate_layout_is_bigger_than_the_output() {
        // A bigger intermediate layout in work buffer 0 is fine...
        let (dests, lens) = schedule1(&[true, true, false, true], &[8, 9, 9, 8], 8, None);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output]
        );
        assert_eq!(lens, [9, 0]);
        // ...but a layout too big for the output right before one in work buffer 0 needs the
        // second work buffer; the layout before it fits in the output again.
        let (dests, lens) = schedule1(&[true, true, false, true, true], &[8, 9, 9, 7, 8], 8, None);
        assert_eq!(
            dests,
            vec![
                At::Output,
                At::Work(1),
                At::Work(1),
                At::Work(0),
                At::Output
            ]
        );
        assert_eq!(lens, [7, 9]);
    }

    #[test]
    fn a_writable_input_hosts_layouts_that_fit_in_it() {
        // In-place FFT, out-of-place step, in-place FFT: the first FFT runs in the input, so
        // no work buffer (c2r backward: complex FFTs in the input, then c2r into the output).
        let (dests, lens) = schedule1(&[false, true, false], &[10, 6, 6], 6, Some(10));
        assert_eq!(dests, vec![At::Input, At::Output, At::Output]);
        assert_eq!(lens, [0, 0]);
        // Without destroy_input the first step moves the data out of the input.
        let (dests, lens) = schedule1(&[true, true, false], &[10, 6, 6], 6, None);
        assert_eq!(dests, vec![At::Work(0), At::Output, At::Output]);
        assert_eq!(lens, [10, 0]);
        // FFT, exchange, FFT, exchange, FFT (a pencil forward): in place in the input, the
        // first exchange could not write the input it reads, so the first FFT moves the data
        // to the output instead, and output and input alternate: no work buffer.
        let (dests, lens) = schedule1(&[false, true, false, true, false], &[8; 5], 8, Some(8));
        assert_eq!(
            dests,
            vec![At::Output, At::Input, At::Input, At::Output, At::Output]
        );
        assert_eq!(lens, [0, 0]);
        // The same read-only: output and work buffer 0 alternate.
        let (dests, lens) = schedule1(&[false, true, false, true, false], &[8; 5], 8, None);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output, At::Output]
        );
        assert_eq!(lens, [8, 0]);
        // A layout too big for the input goes to a work buffer.
        let (dests, lens) = schedule1(&[false, true, true], &[8, 9, 8], 8, Some(8));
        assert_eq!(dests, vec![At::Input, At::Work(0), At::Output]);
        assert_eq!(lens, [9, 0]);
    }

    #[test]
    fn every_rank_gets_the_same_buffers_whatever_its_lengths() {
        // Uneven splits: the first layout fits rank 0's output but not rank 1's. Deciding per
        // rank put rank 0's data in the output and rank 1's in a work buffer, and their fused
        // steps then synchronized on different windows (a hang).
        let moves = [true, true, true];
        let ranks = [
            RankLens {
                steps: vec![6, 7, 8],
                output: 8,
                input: None,
            },
            RankLens {
                steps: vec![8, 7, 6],
                output: 6,
                input: None,
            },
        ];
        let (d0, w0) = schedule(&moves, &ranks, 0);
        let (d1, w1) = schedule(&moves, &ranks, 1);
        assert_eq!(d0, d1, "the same buffers on every rank");
        assert_eq!(d0, vec![At::Work(1), At::Work(0), At::Output]);
        for (q, r) in ranks.iter().enumerate() {
            for (i, &at) in d0.iter().enumerate() {
                if at == At::Output {
                    assert!(r.steps[i] <= r.output, "rank {q} step {i} fits its output");
                }
            }
        }
        // Work buffers are sized for each rank's own blocks.
        assert_eq!((w0, w1), ([7, 6], [7, 8]));
        // One rank alone still takes the output where it fits.
        assert_eq!(schedule(&moves, &ranks[..1], 0).0[0], At::Output);
    }

    /// [`schedule_in_place`] for one rank with a buffer of `buffer` scalars.
    fn in_place1(moves: &[bool], lens: &[usize], buffer: usize) -> Option<(Vec<At>, [usize; 2])> {
        let rank = RankLens {
            steps: lens.to_vec(),
            output: buffer,
            input: None,
        };
        schedule_in_place(moves, &[rank], 0)
    }

    #[test]
    fn in_place_runs_in_the_one_buffer_where_nothing_moves() {
        // A slab's FFT and in-place fused pair: no work block at all.
        let (dests, lens) = in_place1(&[false, false], &[8, 8], 8).unwrap();
        assert_eq!(dests, vec![At::Output, At::Output]);
        assert_eq!(lens, [0, 0]);
        // A lone mover (a transposed slab's fused step) takes the FFT before it along.
        let (dests, lens) = in_place1(&[false, true], &[8, 8], 8).unwrap();
        assert_eq!(dests, vec![At::Work(0), At::Output]);
        assert_eq!(lens, [8, 0]);
        // ...or the step after it when it comes first.
        let (dests, _) = in_place1(&[true, false, false], &[8; 3], 8).unwrap();
        assert_eq!(dests, vec![At::Work(0), At::Output, At::Output]);
        // A pencil: FFT in the buffer, out to work buffer 0 and back.
        let (dests, lens) = in_place1(&[false, true, false, true, false], &[8; 5], 8).unwrap();
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output, At::Output]
        );
        assert_eq!(lens, [8, 0]);
        // A layout too big for the buffer goes to a work buffer; three movers need both.
        let (dests, lens) = in_place1(&[true, true, true], &[8, 9, 8], 8).unwrap();
        assert_eq!(dests, vec![At::Work(1), At::Work(0), At::Output]);
        assert_eq!(lens, [9, 8]);
        // One step that must move: nothing can host it.
        assert_eq!(in_place1(&[true], &[8], 8), None);
    }

    #[test]
    fn in_place_movers_never_write_what_they_read() {
        for moves in [
            vec![false],
            vec![true, false],
            vec![false, true],
            vec![true, true],
            vec![false, true, false, true, false],
            vec![true, false, true, false, true, true],
        ] {
            let n = moves.len();
            let (dests, _) = in_place1(&moves, &vec![3; n], 3).unwrap();
            let what = format!("{moves:?}");
            assert_eq!(dests[n - 1], At::Output, "{what}");
            let mut prev = At::Output;
            for i in 0..n {
                assert_ne!(dests[i], At::Input, "{what}");
                if moves[i] {
                    assert_ne!(dests[i], prev, "{what} step {i}");
                }
                prev = dests[i];
            }
        }
    }

    #[test]
    fn movers_alternate_and_the_last_lands_in_the_output() {
        for input_len in [None, Some(3), Some(1)] {
            for moves in [
                vec![true],
                vec![true, true],
                vec![false, true, false, true],
                vec![true, false, true, false, true, true],
            ] {
                let n = moves.len();
                for out_len in [1, 5] {
                    let (dests, _) = schedule1(&moves, &vec![3; n], out_len, input_len);
                    let what = format!("{moves:?} output {out_len} input {input_len:?}");
                    assert_eq!(dests[n - 1], At::Output, "{what}");
                    let mut prev = At::Input;
                    let mut moved = false;
                    for i in 0..n {
                        if moves[i] || (i == 0 && dests[0] != At::Input) {
                            assert_ne!(dests[i], prev, "{what} step {i}");
                            if !moved {
                                assert_ne!(dests[i], At::Input, "{what}: first mover");
                            }
                            moved = true;
                        } else {
                            assert_eq!(dests[i], prev, "{what} step {i}");
                        }
                        if input_len.is_none() {
                            assert_ne!(dests[i], At::Input, "{what}: read-only input");
                        }
                        prev = dests[i];
                    }
                }
            }
        }
    }
}
