//! Fusion: kernels merged with the exchanges next to them ([`Fused`]), decided alike on
//! every rank from values folded over all ranks; and digit-swapped rows on one rank.

use super::{Env, Problem, Unfused};
use crate::error::Result;
use crate::kernels::{PlaneKernel, RunMap};
use crate::profile::Ops;
use crate::program::{At, Fused, Kernel, Pass, Step};
use crate::real::Real;
use num_complex::Complex;
use redist::piecewise::{Run, RunBuffer};

/// Plane buffers (all threads together) a plane kernel may always hold; beyond this, only up
/// to half the block it spares.
const PLANE_BUFFERS_BYTES: usize = 16 << 20;

/// Steps of both directions of one rank before fusion, for the fold.
pub(crate) type StepsOf<'a, T> = dyn Fn(usize) -> [Unfused<T>; 2] + 'a;

/// A step that may fuse with the complex exchanges next to it in the unfused sequence.
struct Candidate {
    pass: usize,
    step: usize,
    before: Option<usize>,
    after: Option<usize>,
}

/// The exchanges a fused kernel takes: before only, after only, or both.
const COMBOS: [(bool, bool); 3] = [(true, false), (false, true), (true, true)];

/// Values folded per candidate (flags: 0 holds on the rank, 1 fails).
mod slot {
    /// The kernel can read its rows from the exchange before.
    pub const BEFORE: usize = 0;
    /// It can write its rows to the exchange after, without and with the one before.
    pub const AFTER_ALONE: usize = 1;
    pub const AFTER_TOO: usize = 2;
    /// The cut into pieces works, per combination of exchanges ([`super::COMBOS`]).
    pub const CUT: usize = 3;
    /// Every own row is read and written at the same place (both exchanges).
    pub const IN_PLACE: usize = 6;
    /// The largest piece of the exchange before, per combination (a size).
    pub const REGION: usize = 7;
    pub const LEN: usize = 10;
}

/// Fuses each FFT step that is one strided sweep (or whole planes of FFTs, or an r2c or
/// c2r step with FFTs) with the complex exchanges next to it, where their run maps
/// ([`redist::piecewise`]) show that the kernel's rows are whole runs on the other side, on
/// every rank. One fold over the ranks decides every candidate.
pub(super) fn fuse<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    rank: usize,
    passes: [Unfused<T>; 2],
    steps_of: &StepsOf<'_, T>,
) -> Result<[Unfused<T>; 2]> {
    let candidates: Vec<Candidate> = passes
        .iter()
        .enumerate()
        .flat_map(|(pass, u)| candidates(problem, pass, &u.steps))
        .collect();
    if candidates.is_empty() {
        return Ok(passes);
    }
    // Every rank's features of every candidate, folded.
    let features = |q: usize| -> Vec<u64> {
        let own;
        let passes_q = if q == rank {
            &passes
        } else {
            own = steps_of(q);
            &own
        };
        candidates
            .iter()
            .flat_map(|c| features(problem, env, c, &passes_q[c.pass], q))
            .collect()
    };
    let folded = (env.fold)(&features);
    let mut out = Vec::with_capacity(2);
    let mut chosen = candidates.iter().zip(folded.chunks(slot::LEN)).peekable();
    for (pass, unfused) in passes.into_iter().enumerate() {
        let Unfused { steps, after, ops } = unfused;
        let mut fused_steps: Vec<(Step<T>, usize, Ops)> = Vec::with_capacity(steps.len());
        let prev_after = after.clone();
        let mut pending = steps.into_iter().zip(after).zip(ops).enumerate().peekable();
        while let Some((i, ((step, layout), mut ops))) = pending.next() {
            let decided = match chosen.peek() {
                Some((c, _)) if c.pass == pass && c.step == i => chosen.next(),
                _ => None,
            };
            let Some((c, f)) = decided else {
                fused_steps.push((step, layout, ops));
                continue;
            };
            let holds = |s: usize| f[s] == 0;
            // The exchange before, unless the step before took it.
            let before = c.before.filter(|_| {
                matches!(fused_steps.last(), Some((Step::Exchange { .. }, _, _)))
                    && holds(slot::BEFORE)
            });
            let after_ok = if before.is_some() {
                holds(slot::AFTER_TOO)
            } else {
                holds(slot::AFTER_ALONE)
            };
            let after = c.after.filter(|_| after_ok);
            let combo = match (before, after) {
                (None, None) => None,
                (b, a) => COMBOS.iter().position(|&x| x == (b.is_some(), a.is_some())),
            };
            let Some(combo) = combo.filter(|&k| holds(slot::CUT + k)) else {
                fused_steps.push((step, layout, ops));
                continue;
            };
            let prev = i.checked_sub(1).map(|p| prev_after[p]);
            let kernel = kernel_of(problem, env, &step, layout, prev, rank)
                .expect("every rank has the kernel (folded)");
            let planes = plane_layout(&step, layout, prev);
            let reversed = reversed(problem, before, after);
            let mut fused = cut(
                problem,
                env,
                kernel,
                (layout, planes),
                (before, after),
                reversed,
                rank,
            )
            .expect("every rank cuts the pieces (folded)");
            fused.in_place = reversed && holds(slot::IN_PLACE);
            fused.shared = shares_window(problem, env, before, after);
            fused.region.0 = f[slot::REGION + combo] as usize;
            let mut last = layout;
            if before.is_some() {
                let (_, _, mut exchange) = fused_steps.pop().expect("the exchange before");
                exchange.append(&mut ops);
                ops = exchange;
            }
            if after.is_some() {
                let (_, ((_, layout), exchange)) = pending.next().expect("the exchange after");
                last = layout;
                ops.extend(exchange);
            }
            fused_steps.push((Step::Fused(Box::new(fused)), last, ops));
        }
        let (mut steps, mut after, mut ops) = (Vec::new(), Vec::new(), Vec::new());
        for (step, layout, step_ops) in fused_steps {
            steps.push(step);
            after.push(layout);
            ops.push(step_ops);
        }
        out.push(Unfused { steps, after, ops });
    }
    let backward = out.pop().expect("two passes");
    let forward = out.pop().expect("two passes");
    Ok([forward, backward])
}

/// The candidates of one pass: each FFT or plane step with a complex exchange next to it.
/// An exchange that a later sweep can take on both sides (exchange, strided sweep, the same
/// exchange reversed: in place, no work block) is kept for that sweep rather than fused
/// after an earlier one (an r2c plan's axis-1 sweep would otherwise take it). So is an
/// exchange just before a c2r plane step, unless it closes such a pair: the c2r writes a
/// real block, which cannot host the complex layout the exchange leaves, so only c2r planes
/// gathering straight from the exchange spare a work block between them.
fn candidates<T: Real>(problem: &Problem<'_>, pass: usize, steps: &[Step<T>]) -> Vec<Candidate> {
    let ends = |e: usize| problem.exchanges[e].ends;
    let complex = |s: Option<&Step<T>>| match s {
        Some(Step::Exchange { index, real: false }) => Some(*index),
        _ => None,
    };
    let pairs: Vec<(usize, usize)> = steps
        .windows(3)
        .filter_map(|w| match w {
            [x, Step::Fft(local), y] if local.single_strided().is_some() => {
                let (e, back) = (complex(Some(x))?, complex(Some(y))?);
                (ends(e) == (ends(back).1, ends(back).0)).then_some((e, back))
            }
            _ => None,
        })
        .collect();
    let c2r = steps.windows(2).filter_map(|w| match w {
        [x, Step::Planes(planes)] if !planes.is_head() => {
            complex(Some(x)).filter(|e| pairs.iter().all(|&(_, back)| back != *e))
        }
        _ => None,
    });
    let reserved: Vec<usize> = pairs.iter().map(|&(e, _)| e).chain(c2r).collect();
    (0..steps.len())
        .filter(|&i| matches!(steps[i], Step::Fft(_) | Step::Planes(_)))
        .filter_map(|i| {
            let before = i.checked_sub(1).and_then(|p| complex(steps.get(p)));
            let after = complex(steps.get(i + 1)).filter(|e| !reserved.contains(e));
            (before.is_some() || complex(steps.get(i + 1)).is_some()).then_some(Candidate {
                pass,
                step: i,
                before,
                after,
            })
        })
        .collect()
}

/// Whether the exchange after is the exchange before reversed.
fn reversed(problem: &Problem<'_>, before: Option<usize>, after: Option<usize>) -> bool {
    let ends = |e: usize| problem.exchanges[e].ends;
    match (before, after) {
        (Some(b), Some(a)) => ends(b) == (ends(a).1, ends(a).0),
        _ => false,
    }
}

/// Whether a fused step's pieces may go through a shared-memory window: asked for, and both
/// exchanges in the same groups.
fn shares_window(
    problem: &Problem<'_>,
    env: &Env<'_>,
    before: Option<usize>,
    after: Option<usize>,
) -> bool {
    let dim = |e: usize| problem.exchanges[e].plan.grid_dim();
    env.shared_memory
        && match (before, after) {
            (Some(b), Some(a)) => dim(b) == dim(a),
            _ => true,
        }
}

/// Rank `q`'s features of candidate `c` (see [`slot`]), from its unfused steps `pass`.
fn features<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    c: &Candidate,
    pass: &Unfused<T>,
    q: usize,
) -> Vec<u64> {
    let mut f = vec![1u64; slot::LEN];
    for k in 0..COMBOS.len() {
        f[slot::REGION + k] = 0;
    }
    let flag = |ok: bool| u64::from(!ok);
    let step = &pass.steps[c.step];
    let prev = c.step.checked_sub(1).map(|p| pass.after[p]);
    let layout = pass.after[c.step];
    let Some(kernel) = kernel_of(problem, env, step, layout, prev, q) else {
        return f;
    };
    let row = kernel.row_len();
    let part = |e: usize| problem.exchanges[e].plan.for_rank(q);
    let sweep = matches!(kernel, Kernel::Sweep(_));
    let (gathers, scatters) = match &kernel {
        Kernel::Sweep(_) => (true, true),
        Kernel::Planes(p) => (p.gathers(), p.scatters()),
    };
    if let Some(b) = c.before {
        f[slot::BEFORE] = flag(gathers && part(b).has_dst_runs(row));
    }
    if let Some(a) = c.after {
        let runs = part(a).has_src_runs(row);
        f[slot::AFTER_ALONE] = flag(scatters && runs);
        // A plane kernel takes one exchange.
        f[slot::AFTER_TOO] = flag(sweep && runs);
    }
    for (k, &(b, a)) in COMBOS.iter().enumerate() {
        let before = c.before.filter(|_| b);
        let after = c.after.filter(|_| a);
        if before.is_some() != b || after.is_some() != a {
            continue;
        }
        let reversed = reversed(problem, before, after);
        let layouts = (layout, plane_layout(step, layout, prev));
        let Some(fused) = cut_kernel(problem, env, &kernel, layouts, (before, after), q) else {
            continue;
        };
        f[slot::CUT + k] = 0;
        f[slot::REGION + k] = fused.region.0 as u64;
        if b && a {
            f[slot::IN_PLACE] = flag(reversed && fused.in_place);
        }
    }
    f
}

/// The kernel of a candidate step on rank `q`: one strided sweep; else whole planes (the
/// sub-blocks after the slowest memory position, batch axis aside) of FFTs or of an r2c
/// step and FFTs, when every sweep runs within a plane; `None` otherwise. A plane kernel
/// holds a plane per thread: only where that is small outright or beside the block it
/// spares. `layout`: where the step leaves the data; `prev`: where the step before left it
/// (the complex plane of a c2r step is its source's).
fn kernel_of<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    step: &Step<T>,
    layout: usize,
    prev: Option<usize>,
    q: usize,
) -> Option<Kernel<T>> {
    let first = problem.shift + 1;
    let memory_shape = problem.layouts[plane_layout(step, layout, prev)].local_shape_in_memory(q);
    let plane_shape = memory_shape.get(first..).unwrap_or(&[]);
    let planes: usize = memory_shape.iter().take(first).product();
    let kernel = match step {
        Step::Fft(local) => match local.single_strided() {
            Some(sweep) => Kernel::Sweep(sweep.clone()),
            None => {
                let sweeps = local.on_planes(&memory_shape, first)?;
                Kernel::Planes(PlaneKernel::ffts(sweeps, planes, plane_shape))
            }
        },
        Step::Planes(steps) => Kernel::Planes(PlaneKernel::steps(steps, plane_shape)?),
        _ => return None,
    };
    if let Kernel::Planes(p) = &kernel {
        let element = std::mem::size_of::<Complex<T>>();
        let block: usize = memory_shape.iter().product();
        let buffers = env.threads * p.plane_len() * element;
        if buffers > (block * element / 2).max(PLANE_BUFFERS_BYTES) {
            return None;
        }
    }
    Some(kernel)
}

/// The layout whose planes a candidate's kernel transforms: a c2r plane step's source (the
/// complex side, where the step before left the data), else where the step leaves it.
fn plane_layout<T: Real>(step: &Step<T>, layout: usize, prev: Option<usize>) -> usize {
    match (step, prev) {
        (Step::Planes(steps), Some(before)) if !steps.is_head() => before,
        _ => layout,
    }
}

/// [`cut`] of a copy of `kernel`.
fn cut_kernel<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    kernel: &Kernel<T>,
    layouts: (usize, usize),
    exchanges: (Option<usize>, Option<usize>),
    q: usize,
) -> Option<Fused<T>> {
    let kernel = match kernel {
        Kernel::Sweep(s) => Kernel::Sweep(s.clone()),
        Kernel::Planes(p) => Kernel::Planes(p.clone()),
    };
    let reversed = reversed(problem, exchanges.0, exchanges.1);
    cut(problem, env, kernel, layouts, exchanges, reversed, q)
}

/// How [`cut`] cuts the fused step around `kernel` (on `layout`, of rank `q`; its planes
/// those of `plane_layout`): the kernel's planes as `groups` groups of `count`, pieces of
/// `size` planes, how many pieces, and the axis they are cut along.
fn pieces_of<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    kernel: &Kernel<T>,
    (layout, plane_layout): (usize, usize),
    (before, after): (Option<usize>, Option<usize>),
    q: usize,
) -> (usize, usize, usize, usize, usize) {
    let layout = &problem.layouts[layout];
    let shift = problem.shift;
    let exchanges = problem.exchanges;
    let order = layout.memory_order().axes();
    let memory_shape = layout.local_shape_in_memory(q);
    let outer = kernel.outer();
    let axis = order[shift];
    let gathers = |e: Option<usize>, scattered: bool| {
        e.is_none_or(|e| {
            let plan = &exchanges[e].plan;
            (if scattered {
                plan.to_axis()
            } else {
                plan.from_axis()
            }) == axis
        })
    };
    let planes_first = match &kernel {
        Kernel::Sweep(sweep) => sweep.position() == shift + 1,
        Kernel::Planes(_) => true,
    };
    let pieceable = planes_first && gathers(before, true) && gathers(after, false);
    let (groups, count, size, pieces) = if pieceable {
        let groups = if shift == 1 { memory_shape[0] } else { 1 };
        // Rank 0's plane, the largest (balanced split): ranks whose planes differ in size
        // (a split axis within the plane) still cut the exchange into the same pieces.
        let plane_of = |r: usize| -> usize {
            let shape = problem.layouts[plane_layout].local_shape_in_memory(r);
            shape[shift + 1..].iter().product()
        };
        debug_assert_eq!(plane_of(q), kernel.plane_len(), "the kernel's planes");
        let plane = plane_of(0) * std::mem::size_of::<Complex<T>>() * groups;
        // Rank 0 holds the largest part of every axis (balanced split), so the most planes
        // of any rank are known without visiting the ranks (the model lowers huge counts).
        let most = layout.local_shape(0)[axis];
        // Pieces keep the messages in cache; exchanges within one-rank groups have none (the
        // same on every rank: the grid's shape), so they take one piece: a parallel region
        // per piece costs a wake-up of the threads and leaves some idle at its end.
        let group = |e: usize| {
            let plan = &exchanges[e].plan;
            plan.from().grid().dims()[plan.grid_dim()]
        };
        let alone = [before, after].into_iter().flatten().all(|e| group(e) == 1);
        let size = if alone {
            most.max(1)
        } else {
            (env.piece_bytes / plane.max(1)).max(1)
        };
        // A plane kernel shares a piece's planes among the threads: as many for each.
        let size = match kernel {
            Kernel::Planes(_) => size.div_ceil(env.threads) * env.threads,
            Kernel::Sweep(_) => size,
        };
        (
            groups,
            memory_shape[shift],
            size,
            most.div_ceil(size).max(1),
        )
    } else {
        (1, outer, usize::MAX / 4, 1)
    };
    (groups, count, size, pieces, axis)
}

/// Cuts the fused step around `kernel` (on `layout`, of rank `q`; its planes those of
/// `plane_layout`) into pieces of about `env.piece_bytes` (at least one plane each) and maps
/// its runs; `None` where the rows are not whole runs. Pieces need the kernel's planes to be
/// the slowest axis of `layout` (after the batch axis) and that axis to be the one both
/// exchanges scatter or gather; otherwise there is one piece, the whole exchange. The piece
/// size and count depend on global shapes only (rank 0's planes, the largest), so every rank
/// cuts alike. `in_place` comes out as whether every own row is read and
/// written at the same offset (with `reversed` exchanges).
fn cut<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    kernel: Kernel<T>,
    (layout, plane_layout): (usize, usize),
    (before, after): (Option<usize>, Option<usize>),
    reversed: bool,
    q: usize,
) -> Option<Fused<T>> {
    let exchanges = problem.exchanges;
    let row = kernel.row_len();
    let (groups, count, size, pieces, axis) = pieces_of(
        problem,
        env,
        &kernel,
        (layout, plane_layout),
        (before, after),
        q,
    );
    let outer = kernel.outer();
    let rows = outer * kernel.rows();
    let unset = Run::UNSET;
    let mut gather = vec![unset; if before.is_some() { rows } else { 0 }];
    let mut scatter = vec![unset; if after.is_some() { rows } else { 0 }];
    let parts = [before, after].map(|e| e.map(|e| exchanges[e].plan.for_rank(q)));
    // The largest piece's sends per side (a window region's parts), and sends and receives
    // of either (message buffers).
    let (mut region, mut messages) = ([0, 0], (0, 0));
    let mut cut = Vec::with_capacity(pieces);
    for k in 0..pieces {
        for (side, part) in parts.iter().enumerate() {
            let Some(part) = part else { continue };
            let piece = part.piece(axis, size, k);
            let ok = if side == 0 {
                piece.dst_runs_into(row, &mut gather)
            } else {
                piece.src_runs_into(row, &mut scatter)
            };
            if !ok {
                return None;
            }
            region[side] = region[side].max(piece.send_len);
            messages.0 = messages.0.max(piece.send_len);
            messages.1 = messages.1.max(piece.recv_len);
        }
        let start = k.saturating_mul(size).min(count);
        cut.push(start..start.saturating_add(size).min(count));
    }
    if gather.iter().chain(&scatter).any(|&r| r == Run::UNSET) {
        return None;
    }
    // In place: both exchanges are one exchange and its reverse, and every own row is read
    // and written at the same offset.
    let block = |r: &Run| r.buffer() == RunBuffer::Block;
    let in_place = reversed
        && gather
            .iter()
            .zip(&scatter)
            .all(|(g, s)| block(g) == block(s) && (!block(g) || g.offset() == s.offset()));
    let scatter = RunMap::new(scatter, row);
    let mut kernel = kernel;
    if let Kernel::Planes(planes) = &mut kernel {
        planes.fit_to(after.map(|_| &scatter));
    }
    Some(Fused {
        before,
        after,
        kernel,
        gather: RunMap::new(gather, row),
        scatter,
        pieces: cut,
        groups,
        count,
        axis,
        size,
        in_place,
        shared: false,
        region: (region[0], region[1]),
        messages,
        direct: false,
    })
}

/// Lets each in-place FFT step whose sweep across its sub-blocks' rows is a column FFT
/// (`LocalFft::swappable_rows`) take those rows digit-swapped from the fused step before it,
/// which writes them through its run map anyway: the map then names the swapped rows, and
/// the sweep runs in place with no staging block (one rank, transposed output: the
/// backward's planes after its axis-0 sweep). On one rank only, where the fused step writes
/// through no shared-memory window, only through its own map.
pub(super) fn swap_rows_for_sweeps<T: Real>(pass: &mut Pass<T>, threads: usize) {
    let (steps, dests) = (&mut pass.steps, &pass.dests);
    // In place after a fused step that reads another buffer, in every schedule the pass
    // runs by (an in-place call's too).
    let swappable = |dests: &[At], start: At, i: usize| {
        let source = if i == 1 { start } else { dests[i - 2] };
        dests[i] == dests[i - 1] && source != dests[i - 1]
    };
    let in_place = pass.in_place.as_deref();
    for i in 1..steps.len() {
        if !swappable(dests, At::Input, i) || in_place.is_some_and(|d| !swappable(d, At::Output, i))
        {
            continue;
        }
        let (head, tail) = steps.split_at_mut(i);
        let (Step::Fused(fused), Step::Fft(local)) = (&mut head[i - 1], &mut tail[0]) else {
            continue;
        };
        let Some((rows, inner, swap)) = local.swappable_rows(threads) else {
            continue;
        };
        if fused.after.is_none() || fused.shared || fused.kernel.row_len() != inner {
            continue;
        }
        if let Some(scatter) = fused.scatter.swap_rows(inner, rows, swap) {
            fused.scatter = scatter;
            local.take_swapped_rows();
        }
    }
}
