//! Fused steps straight between the ranks' blocks: which may run so when every rank's
//! blocks lie in shared-memory windows ([`decide_direct`], one fold), and their maps
//! ([`Program::direct_maps`], pure, made by the plan when it first has such blocks).

use super::Env;
use crate::kernels::RunMap;
use crate::program::{At, Direct, Program, Regions, Step};
use crate::real::Real;
use crate::stages::Pipeline;
use num_complex::Complex;
use redist::piecewise::{window_runs, Run};
use redist::Layout;

/// Decides, for every fused step, whether it may move its rows straight between the
/// ranks' blocks when they lie in the plan's shared-memory windows: every rank's rows of
/// the kernel's layout must be whole runs of the far side's blocks, read and written in
/// the windows of the buffers the schedule puts them in. One fold over the ranks.
pub(super) fn decide_direct<T: Real>(program: &mut Program<T>, env: &Env<'_>, shift: usize) {
    if env.ranks < 2 || program.fused().next().is_none() {
        return;
    }
    let regions = program.regions;
    let layouts = &program.layouts;
    let ends: Vec<(usize, usize)> = program.exchanges.iter().map(|e| e.ends).collect();
    let sides = sides(program, shift);
    let features = |q: usize| -> Vec<u64> {
        sides
            .iter()
            .map(|(side, forward)| {
                let region = |at: At| regions.of(at, *forward);
                u64::from(direct_runs(layouts, &ends, side, region, q).is_none())
            })
            .collect()
    };
    let folded = (env.fold)(&features);
    let fused = program
        .forward
        .steps
        .iter_mut()
        .chain(program.backward.steps.iter_mut())
        .filter_map(|s| match s {
            Step::Fused(f) => Some(f),
            _ => None,
        });
    for (f, fails) in fused.zip(folded) {
        f.direct = fails == 0;
    }
}

/// Every fused step of both directions as rank-independent values (its exchanges, where its
/// rows run, the buffers it reads and writes) with its direction, forward first.
fn sides<T: Real>(program: &Program<T>, shift: usize) -> Vec<(DirectSide, bool)> {
    let mut sides = Vec::new();
    for (pass, forward) in [(&program.forward, true), (&program.backward, false)] {
        let mut at = At::Input;
        for (step, &dest) in pass.steps.iter().zip(&pass.dests) {
            if let Step::Fused(f) = step {
                let side = DirectSide {
                    before: f.before,
                    after: f.after,
                    in_place: f.in_place,
                    row_position: f.kernel.row_position(shift),
                    buffers: (at, dest),
                };
                sides.push((side, forward));
            }
            at = dest;
        }
    }
    sides
}

/// What deciding and mapping a fused step's rows between the blocks needs: its exchanges,
/// the memory position its rows run after (in the kernel's layout), and the buffers it
/// reads and writes.
struct DirectSide {
    pub before: Option<usize>,
    pub after: Option<usize>,
    pub in_place: bool,
    pub row_position: usize,
    pub buffers: (At, At),
}

/// The regions of the windows the plan's buffers lie in when they are shared: each rank's
/// region is the largest block (over all ranks), in whole cache lines.
pub(super) fn regions<T: Real>(
    layouts: &[Layout],
    pipeline: &Pipeline,
    work_most: [usize; 2],
) -> Regions {
    let complex = std::mem::size_of::<Complex<T>>();
    let lines = |bytes: usize| bytes.max(1).div_ceil(64) * 64;
    let block = |layout: usize| {
        let scalars = if pipeline.real[layout] { 1 } else { 2 };
        let bytes = layouts[layout].max_local_len() * scalars * std::mem::size_of::<T>();
        lines(bytes) / complex
    };
    Regions {
        input: block(pipeline.input),
        output: block(pipeline.output),
        work: work_most.map(|most| (most > 0).then(|| lines(most * complex) / complex)),
    }
}

/// Rank `q`'s rows of a fused step in the windows' blocks: for the exchange before, each
/// row of the kernel's layout where it lies in the source blocks; for the one after, where
/// it goes in the destination blocks, as offsets from region 0 of the window of the buffer
/// read or written; and the row length. `None` where some row is not a whole run there, or
/// where running straight between the blocks is not safe: one buffer on both sides only
/// when every element stays where it is (the exchange after is the one before reversed,
/// in place).
fn direct_runs(
    layouts: &[Layout],
    ends: &[(usize, usize)],
    side: &DirectSide,
    region: impl Fn(At) -> Option<usize>,
    q: usize,
) -> Option<(Vec<Run>, Vec<Run>, usize)> {
    let (before, after) = (side.before, side.after);
    let (src, dst) = side.buffers;
    let stays = |b: usize, a: usize| side.in_place && ends[b] == (ends[a].1, ends[a].0);
    if src == dst && !matches!((before, after), (Some(b), Some(a)) if stays(b, a)) {
        return None;
    }
    // The kernel's layout: the far side of the exchange before, or the near side of the
    // one after; its rows are the runs of the memory positions after `row_position`.
    let mid = match (before, after) {
        (Some(b), _) => ends[b].1,
        (None, Some(a)) => ends[a].0,
        (None, None) => return None,
    };
    let memory_shape = layouts[mid].local_shape_in_memory(q);
    let row: usize = memory_shape[side.row_position + 1..].iter().product();
    let runs = |far: Option<usize>, at: At| match far {
        Some(far) => window_runs(&layouts[mid], q, &layouts[far], row, region(at)?),
        None => Some(Vec::new()),
    };
    let gather = runs(before.map(|b| ends[b].0), src)?;
    let scatter = runs(after.map(|a| ends[a].1), dst)?;
    Some((gather, scatter, row))
}

impl<T: Real> Program<T> {
    /// The maps of every fused step that lowering found able to move its rows straight
    /// between the ranks' blocks ([`crate::program::Fused::direct`]), per direction in the
    /// order of the fused steps (`None` for the others). Pure; the plan makes them once its
    /// blocks (or work buffers) lie in windows.
    pub(crate) fn direct_maps(&self) -> [Vec<Option<Direct>>; 2] {
        let ends: Vec<(usize, usize)> = self.exchanges.iter().map(|e| e.ends).collect();
        let fused = self.fused().map(|f| f.direct);
        let mut out = [Vec::new(), Vec::new()];
        for ((side, forward), direct) in sides(self, self.shift).into_iter().zip(fused) {
            let maps = direct.then(|| {
                let region = |at: At| self.regions.of(at, forward);
                let (gather, scatter, row) =
                    direct_runs(&self.layouts, &ends, &side, region, self.rank)
                        .expect("every rank's rows map (lowering folded it)");
                Direct {
                    gather: RunMap::new(gather, row),
                    scatter: RunMap::new(scatter, row),
                    src: side.buffers.0,
                    dst: side.buffers.1,
                }
            });
            out[usize::from(!forward)].push(maps);
        }
        out
    }

    /// Whether some fused step may move its rows straight between the ranks' work buffers
    /// alone (it reads the exchange before's rows from one and writes the exchange after's
    /// into one): such a step then runs so between private blocks too, once the work buffers
    /// lie in windows. The same on every rank (lowering's decisions are).
    pub(crate) fn direct_through_work(&self) -> bool {
        if self.ranks < 2 {
            return false;
        }
        [&self.forward, &self.backward].into_iter().any(|pass| {
            let mut at = At::Input;
            pass.steps.iter().zip(&pass.dests).any(|(step, &dest)| {
                let through = match step {
                    Step::Fused(f) if f.direct => {
                        (f.before.is_none() || matches!(at, At::Work(_)))
                            && (f.after.is_none() || matches!(dest, At::Work(_)))
                    }
                    _ => false,
                };
                at = dest;
                through
            })
        })
    }
}
