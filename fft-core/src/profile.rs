//! The per-step profile of a plan ([`crate::Plan::step_profile`]): what each step of each
//! direction's program does, the bytes it must at least read and write (its input and output
//! blocks), its flops, and the time it took, accumulated over calls. Lowering describes each
//! step ([`StepInfo`], from the operations it was made of, [`Op`]); the runner adds one
//! [`StepClock`] per step, preallocated with the plan, so a call allocates nothing.

use crate::plan::Direction;
use redist::{Layout, StageTimes};
use std::time::Duration;

/// What kind of step of a plan's program a [`StepProfile`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// Complex FFTs along local axes of one block.
    Fft,
    /// Another 1-D transform along one axis: r2c, c2r, r2r, padded, or a 1-D transform's
    /// twiddled rows.
    Line,
    /// An r2c (or c2r) and the FFTs along the other trailing axes, one sub-block at a time.
    Planes,
    /// An exchange on its own: pack, move, unpack.
    Exchange,
    /// A kernel fused with the exchange before it, after it, or both.
    Fused,
}

impl StepKind {
    /// `"fft"`, `"line"`, `"planes"`, `"exchange"` or `"fused"`.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Fft => "fft",
            StepKind::Line => "line",
            StepKind::Planes => "planes",
            StepKind::Exchange => "exchange",
            StepKind::Fused => "fused",
        }
    }
}

/// One step of one direction, as measured on this rank since the plan was made or its times
/// were reset ([`crate::Plan::reset_times`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StepProfile {
    /// The direction whose program holds the step.
    pub direction: Direction,
    /// Its place in the direction's program, from 0.
    pub index: usize,
    /// What kind of step it is.
    pub kind: StepKind,
    /// What it does, in words ("exchange over grid axis 0 + FFT along axis 0 + exchange over
    /// grid axis 0"; axes are the array's, from 0).
    pub what: String,
    /// Bytes of this rank's input block of the step: what it must at least read (once).
    pub read_bytes: u64,
    /// Bytes of this rank's output block: what it must at least write (once).
    pub write_bytes: u64,
    /// Floating-point operations per call on this rank: 5 n log₂ n per complex line of
    /// length n, half that per real line (r2c, c2r, r2r).
    pub flops: f64,
    /// Calls since the plan was made or its times were reset.
    pub calls: u64,
    /// The seconds those calls took in all (wall clock around the step).
    pub seconds: f64,
    /// The stage split of those seconds (FFT kernels, packing, communication and waiting,
    /// unpacking), as [`crate::Plan::times`] counts them.
    pub stages: StageTimes,
}

impl StepProfile {
    /// Bytes read and written per call.
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    /// Seconds per call (0 before any call).
    pub fn seconds_per_call(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.seconds / self.calls as f64
        }
    }
}

/// One operation a step is made of, in the array's axes (batch axis excluded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Fft(usize),
    R2c(usize),
    C2r(usize),
    R2r(usize),
    /// A complex FFT that pads or truncates the axis.
    Padded(usize),
    /// A distributed 1-D transform's FFTs along its matrix's rows, with twiddles.
    Twiddled,
    /// An exchange over these grid dimensions (none: a local transpose).
    Exchange {
        grid: [Option<usize>; 2],
    },
}

/// Operations with their flops on the lowering rank.
pub(crate) type Ops = Vec<(Op, f64)>;

/// Flops of `lines` complex lines of length `n` (5 n log₂ n each); `real`: real lines (half).
pub(crate) fn line_flops(n: usize, lines: usize, real: bool) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    let n = n as f64;
    let per = 5.0 * n * n.log2();
    lines as f64 * if real { per / 2.0 } else { per }
}

/// The exchange from `from` to `to` (batched layouts, `shift` 1 with a batch axis): the grid
/// dimensions whose split axis changes (at most two named).
pub(crate) fn exchange_op(from: &Layout, to: &Layout) -> Op {
    let mut grid = [None; 2];
    // A grid dimension of one rank moves nothing between ranks: a local transpose.
    let changed = (0..from.decomposed().len())
        .filter(|&g| from.decomposed()[g] != to.decomposed()[g] && from.grid().dims()[g] > 1);
    for (slot, g) in grid.iter_mut().zip(changed) {
        *slot = Some(g);
    }
    Op::Exchange { grid }
}

/// A step's words: its operations in order, those of one kind in a row on one line ("FFT
/// along axes 2 and 1"), joined by " + ".
pub(crate) fn describe(kind: StepKind, ops: &[(Op, f64)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let op = ops[i].0;
        let mut axes = Vec::new();
        let mut j = i;
        while let Some(&(next, _)) = ops.get(j) {
            match (op, next) {
                (Op::Fft(_), Op::Fft(a)) => axes.push(a),
                _ if j == i => {}
                _ => break,
            }
            j += 1;
        }
        let along = |name: &str, axes: &[usize]| match axes {
            [a] => format!("{name} along axis {a}"),
            _ => {
                let list: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
                let (last, first) = list.split_last().expect("two or more");
                format!("{name} along axes {} and {last}", first.join(", "))
            }
        };
        parts.push(match op {
            Op::Fft(_) => along("FFT", &axes),
            Op::R2c(a) => along("r2c", &[a]),
            Op::C2r(a) => along("c2r", &[a]),
            Op::R2r(a) => along("r2r", &[a]),
            Op::Padded(a) => along("padded FFT", &[a]),
            Op::Twiddled => "FFTs of the 1-D transform's rows with twiddles".to_string(),
            Op::Exchange { grid } => match grid {
                [None, _] => "local transpose".to_string(),
                [Some(g), None] => format!("exchange over grid axis {g}"),
                [Some(g), Some(h)] => format!("exchange over grid axes {g} and {h}"),
            },
        });
        i = j.max(i + 1);
    }
    let body = parts.join(" + ");
    match kind {
        StepKind::Fused => format!("fused: {body}"),
        StepKind::Planes => format!("per plane in cache: {body}"),
        _ => body,
    }
}

/// What lowering knows of one step: its kind, words, bytes and flops on the lowering rank.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepInfo {
    pub kind: StepKind,
    pub what: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub flops: f64,
}

/// One step's accumulated calls, seconds and stage split.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct StepClock {
    pub calls: u64,
    pub seconds: f64,
    pub stages: StageTimes,
}

impl StepClock {
    /// Adds one call that took `elapsed`, with the plan's stage times `before` and `after` it.
    pub(crate) fn add(&mut self, elapsed: Duration, before: &StageTimes, after: &StageTimes) {
        self.calls += 1;
        self.seconds += elapsed.as_secs_f64();
        self.stages.fft += after.fft - before.fft;
        self.stages.pack += after.pack - before.pack;
        self.stages.comm += after.comm - before.comm;
        self.stages.unpack += after.unpack - before.unpack;
    }
}

/// The profile of one direction: `infos` with `clocks`, step by step.
pub(crate) fn profile_of<'a>(
    direction: Direction,
    infos: &'a [StepInfo],
    clocks: &'a [StepClock],
) -> impl Iterator<Item = StepProfile> + 'a {
    infos
        .iter()
        .zip(clocks)
        .enumerate()
        .map(move |(index, (info, clock))| StepProfile {
            direction,
            index,
            kind: info.kind,
            what: info.what.clone(),
            read_bytes: info.read_bytes,
            write_bytes: info.write_bytes,
            flops: info.flops,
            calls: clock.calls,
            seconds: clock.seconds,
            stages: clock.stages,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_group_ffts_and_name_exchanges() {
        let x = Op::Exchange {
            grid: [Some(0), None],
        };
        let ops = [(x, 0.0), (Op::Fft(0), 1.0), (x, 0.0)];
        assert_eq!(
            describe(StepKind::Fused, &ops),
            "fused: exchange over grid axis 0 + FFT along axis 0 + exchange over grid axis 0"
        );
        let ops = [(Op::R2c(2), 1.0), (Op::Fft(1), 1.0)];
        assert_eq!(
            describe(StepKind::Planes, &ops),
            "per plane in cache: r2c along axis 2 + FFT along axis 1"
        );
        let ops = [(Op::Fft(2), 1.0), (Op::Fft(1), 1.0), (Op::Fft(0), 1.0)];
        assert_eq!(describe(StepKind::Fft, &ops), "FFT along axes 2, 1 and 0");
    }

    #[test]
    fn flops_are_five_n_log_n_per_complex_line() {
        // 16 lines of 8 points: 16 · 5 · 8 · 3; real lines half.
        assert_eq!(line_flops(8, 16, false), 1920.0);
        assert_eq!(line_flops(8, 16, true), 960.0);
        assert_eq!(line_flops(1, 16, false), 0.0);
    }
}
