//! Lowering: a plan's pipeline made into one rank's [`Program`] by a pure function of the
//! global problem ([`Spec`], [`Pipeline`], [`FftOptions`]) and an environment value
//! ([`Env`]: ranks, threads, piece size, shared memory, and a fold over ranks). Nothing here
//! talks to MPI: every decision that changes which collective calls a rank makes, or in
//! which buffer its peers find its data, is taken from values folded over all ranks, so
//! every rank decides alike. The plan passes the real environment (the fold an all-reduce,
//! one per decision round, not one per candidate); tests pass a simulated one and lower the
//! plan of every rank of hundreds of rank counts in one process; the model lowers rank 0's.
//!
//! 1. [`steps_of`]: each stage made a step (consecutive FFTs of one layout one step; an r2c
//!    or c2r step and the FFTs next to it one [`PlaneSteps`]).
//! 2. [`fuse`]: kernels fused with the exchanges next to them (one fold).
//! 3. [`schedule`]: which buffer each step leaves the data in, from every rank's lengths.
//! 4. [`fuse::decide_direct`]: which fused steps may move their rows straight between the
//!    ranks' blocks (one fold); the buffer sizes.

pub(crate) mod fuse;
pub(crate) mod schedule;
#[cfg(test)]
mod tests;

pub(crate) use crate::spec::Spec;

use crate::error::Result;
use crate::kernels::{LineOp, LineStep, LocalFft, PlaneSteps, R2r, Sweep, Twiddle};
use crate::options::{AxisKind, FftOptions};
use crate::program::{At, ExchangeFusion, ExchangeStep, PaddedRows, Pass, Program, Step};
use crate::real::Real;
use crate::stages::{Pipeline, Stage};
use redist::{ExchangePlan, Layout, MemoryOrder};
use rustfft::Fft;
use schedule::{schedule, RankLens};
use std::sync::Arc;

/// The fold over ranks that stands for an all-reduce: given `f`, where `f(q)` is rank `q`'s
/// vector of values (every rank's of the same length), the largest of each entry over all
/// ranks. Flags that must hold on every rank travel as `0` (holds) or `1` (fails).
pub(crate) type Fold<'a> = dyn Fn(&dyn Fn(usize) -> Vec<u64>) -> Vec<u64> + 'a;

/// Where a plan runs, as far as lowering needs to know: values the same on every rank.
pub(crate) struct Env<'a> {
    /// Processes of the plan.
    pub ranks: usize,
    /// The most rayon threads of any rank: every kernel is sized for that many workers.
    pub threads: usize,
    /// Bytes of planes a fused exchange moves per piece ([`FftOptions::piece_bytes`]).
    pub piece_bytes: usize,
    /// Whether fused exchanges may move their pieces through shared-memory windows (the
    /// groups on one node then do; [`FftOptions::shared_memory`]).
    pub shared_memory: bool,
    /// The fold: an all-reduce of this rank's values under MPI, `f` of every rank when
    /// simulated, rank 0's alone for the model.
    pub fold: &'a Fold<'a>,
}

/// The fold of `ranks` simulated processes: `f` of every rank, entry by entry the largest.
#[cfg(test)]
pub(crate) fn every_rank(ranks: usize) -> impl Fn(&dyn Fn(usize) -> Vec<u64>) -> Vec<u64> {
    move |f: &dyn Fn(usize) -> Vec<u64>| {
        (0..ranks)
            .map(f)
            .reduce(|a, b| a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect())
            .unwrap_or_default()
    }
}

/// `layout` with a leading batch axis of `batch` fields, never distributed, slowest in
/// memory; `layout` itself when `batch` is 1.
pub(crate) fn batched(layout: &Layout, batch: usize) -> Result<Layout> {
    if batch == 1 {
        return Ok(layout.clone());
    }
    let shape: Vec<usize> = std::iter::once(batch)
        .chain(layout.global_shape().iter().copied())
        .collect();
    let decomposed = layout.decomposed().iter().map(|a| a + 1).collect();
    let order = std::iter::once(0)
        .chain(layout.memory_order().axes().iter().map(|a| a + 1))
        .collect();
    Ok(Layout::new(
        &shape,
        layout.grid().clone(),
        decomposed,
        MemoryOrder::new(order)?,
    )?
    .with_blocks(layout.blocks().to_vec())?)
}

/// The FFT, real FFT and real-to-real planners, shared by every rank's steps (plans are
/// cached per length).
pub(crate) struct Planners<T: Real> {
    ffts: rustfft::FftPlanner<T>,
    reals: realfft::RealFftPlanner<T>,
    dcts: rustdct::DctPlanner<T>,
}

impl<T: Real> Planners<T> {
    pub(crate) fn new() -> Self {
        Self {
            ffts: rustfft::FftPlanner::new(),
            reals: realfft::RealFftPlanner::new(),
            dcts: rustdct::DctPlanner::new(),
        }
    }

    fn fft(&mut self, n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
        if inverse {
            self.ffts.plan_fft_inverse(n)
        } else {
            self.ffts.plan_fft_forward(n)
        }
    }
}

/// The global problem as lowering sees it.
pub(crate) struct Problem<'a> {
    pub spec: &'a Spec,
    pub pipeline: &'a Pipeline,
    /// The pipeline's layouts with the batch axis.
    pub layouts: &'a [Layout],
    pub exchanges: &'a [ExchangeStep],
    /// 1 with a batch axis (the slowest memory axis of every layout), else 0.
    pub shift: usize,
}

impl Problem<'_> {
    /// Scalars of rank `q`'s block in `layout`.
    fn scalars(&self, layout: usize, q: usize) -> usize {
        self.layouts[layout].local_len(q) * if self.pipeline.real[layout] { 1 } else { 2 }
    }
}

/// Steps of one direction before fusion, and the layout each leaves the data in.
pub(crate) struct Unfused<T: Real> {
    pub steps: Vec<Step<T>>,
    pub after: Vec<usize>,
}

/// The exchanges of `pipeline` with the layouts batched by `batch`, and rank `rank`'s
/// message lengths: one per exchange stage, forward first.
fn exchanges_of(
    pipeline: &Pipeline,
    batch: usize,
    rank: usize,
) -> Result<(Vec<Layout>, Vec<ExchangeStep>)> {
    let layouts: Vec<Layout> = pipeline
        .layouts
        .iter()
        .map(|l| batched(l, batch))
        .collect::<Result<_>>()?;
    let mut exchanges = Vec::new();
    for stage in pipeline.forward.iter().chain(&pipeline.backward) {
        if let Stage::Exchange { from, to } = *stage {
            let plan = ExchangePlan::new(&layouts[from], &layouts[to])?;
            let part = plan.for_rank(rank);
            exchanges.push(ExchangeStep {
                send_len: part.send_len,
                recv_len: part.recv_len,
                plan,
                ends: (from, to),
            });
        }
    }
    Ok((layouts, exchanges))
}

/// Stages 1 and 2 of lowering (see the module docs): rank `rank`'s steps of both
/// directions, fused.
fn fused_steps<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    rank: usize,
) -> Result<[Unfused<T>; 2]> {
    let pipeline = problem.pipeline;
    let forward_exchanges = pipeline
        .forward
        .iter()
        .filter(|s| matches!(s, Stage::Exchange { .. }))
        .count();
    let planners = std::cell::RefCell::new(Planners::new());
    let unfused = |q: usize| {
        let planners = &mut planners.borrow_mut();
        let threads = env.threads;
        let backward_first = forward_exchanges;
        [
            steps_of(problem, planners, &pipeline.forward, false, 0, threads, q),
            steps_of(
                problem,
                planners,
                &pipeline.backward,
                true,
                backward_first,
                threads,
                q,
            ),
        ]
    };
    let passes = unfused(rank);
    fuse::fuse(problem, env, rank, passes, &unfused)
}

/// What the model charges for the exchanges of the complex transform `pipeline` with
/// elements of `element_bytes` (8: `f32`, else `f64`): which copies fused kernels do
/// instead, and in how many pieces, as rank 0 lowers it with one thread, the default piece
/// size and no shared memory (the other ranks' blocks are not visited: the model plans for
/// machines of any size). Per exchange, forward first.
pub(crate) fn exchange_fusions(
    pipeline: &Pipeline,
    element_bytes: usize,
) -> Result<Vec<ExchangeFusion>> {
    if element_bytes <= 8 {
        fusions_of::<f32>(pipeline)
    } else {
        fusions_of::<f64>(pipeline)
    }
}

fn fusions_of<T: Real>(pipeline: &Pipeline) -> Result<Vec<ExchangeFusion>> {
    let options = FftOptions::default();
    let shape = pipeline.layouts[pipeline.input].global_shape();
    let spec = Spec::new(shape, &options, crate::stages::Domain::Complex)?;
    let (layouts, exchanges) = exchanges_of(pipeline, 1, 0)?;
    let problem = Problem {
        spec: &spec,
        pipeline,
        layouts: &layouts,
        exchanges: &exchanges,
        shift: 0,
    };
    let rank_0 = |f: &dyn Fn(usize) -> Vec<u64>| f(0);
    let env = Env {
        ranks: pipeline.layouts[0].grid().ranks(),
        threads: 1,
        piece_bytes: options.piece_bytes,
        shared_memory: false,
        fold: &rank_0,
    };
    let passes = fused_steps::<T>(&problem, &env, 0)?;
    let mut out = vec![
        ExchangeFusion {
            pieces: 1,
            ..Default::default()
        };
        exchanges.len()
    ];
    for step in passes.iter().flat_map(|p| &p.steps) {
        if let Step::Fused(f) = step {
            if let Some(b) = f.before {
                out[b].unpack = true;
                out[b].pieces = f.pieces.len();
            }
            if let Some(a) = f.after {
                out[a].pack = true;
                out[a].pieces = f.pieces.len();
            }
        }
    }
    Ok(out)
}

/// Lowers `spec`'s `pipeline` for rank `rank` of `env` (see the module docs).
pub(crate) fn lower<T: Real>(
    spec: &Spec,
    pipeline: &Pipeline,
    options: &FftOptions,
    env: &Env<'_>,
    rank: usize,
) -> Result<Program<T>> {
    let batch = options.batch;
    let real = |r: bool| pipeline.real.contains(&r);
    let real_to_complex = options.in_place && real(true) && real(false);
    let (layouts, exchanges) = exchanges_of(pipeline, batch, rank)?;
    let problem = Problem {
        spec,
        pipeline,
        layouts: &layouts,
        exchanges: &exchanges,
        shift: usize::from(batch > 1),
    };
    let [forward, backward] = fused_steps::<T>(&problem, env, rank)?;
    let shift = problem.shift;

    // Where each step leaves the data: the same buffer on every rank, from every rank's
    // lengths (the fused steps' shared-memory paths read and write the peers' buffers of
    // one kind, and synchronize on those buffers' windows).
    let destroy = options.destroy_input;
    let rank_lens = |after: &[usize], output: usize, input: usize| -> Vec<RankLens> {
        (0..env.ranks)
            .map(|q| RankLens {
                steps: after.iter().map(|&l| problem.scalars(l, q)).collect(),
                output: problem.scalars(output, q),
                input: destroy.then(|| problem.scalars(input, q)),
            })
            .collect()
    };
    let (input, output) = (pipeline.input, pipeline.output);
    let forward_lens = rank_lens(&forward.after, output, input);
    let backward_lens = rank_lens(&backward.after, input, output);
    let (forward_dests, fw) = schedule(&schedule::movers(&forward.steps), &forward_lens, rank);
    let (backward_dests, bw) = schedule(&schedule::movers(&backward.steps), &backward_lens, rank);
    // In-place calls: one buffer per rank, the larger of its input and output blocks (a
    // real-to-complex plan's real block with its rows padded).
    let half = crate::spec::last_transformed(&spec.axes);
    let rows = |q: usize| padded_rows(&layouts[input], shift, half, q);
    if real_to_complex && rows(rank).is_none() {
        return Err(crate::FftError::BadOptions {
            shape: spec.shape.spectral.clone(),
            reason: format!("in_place: a real-to-complex plan's real input must keep its real-to-complex axis (axis {half}) and the axes after it whole and fastest in memory on every rank (FFTW's padded layout)"),
        });
    }
    let padded = |q: usize| rows(q).filter(|_| real_to_complex);
    let buffer = |q: usize| {
        let rows = padded(q).map_or(0, |r| r.rows * r.padded);
        (problem.scalars(input, q).max(problem.scalars(output, q))).max(rows)
    };
    let in_place = if options.in_place {
        let one_buffer = |lens: &[RankLens]| -> Vec<RankLens> {
            (lens.iter().enumerate())
                .map(|(q, r)| RankLens {
                    steps: r.steps.clone(),
                    output: buffer(q),
                    input: None,
                })
                .collect()
        };
        let (fl, bl) = (one_buffer(&forward_lens), one_buffer(&backward_lens));
        let f = schedule::schedule_in_place(&schedule::movers(&forward.steps), &fl, rank);
        let b = schedule::schedule_in_place(&schedule::movers(&backward.steps), &bl, rank);
        let (Some(f), Some(b)) = (f, b) else {
            return Err(crate::FftError::BadOptions {
                shape: spec.shape.spectral.clone(),
                reason:
                    "in_place: a transform of a single out-of-place step has no in-place schedule"
                        .into(),
            });
        };
        Some((f, b, fl, bl))
    } else {
        None
    };
    let complex_len = |scalars: usize| scalars.div_ceil(2);
    let (mut fw, mut bw) = (fw, bw);
    if let Some(((_, fi), (_, bi), _, _)) = &in_place {
        fw = [fw[0].max(fi[0]), fw[1].max(fi[1])];
        bw = [bw[0].max(bi[0]), bw[1].max(bi[1])];
    }
    let work = [complex_len(fw[0].max(bw[0])), complex_len(fw[1].max(bw[1]))];
    let most = |dests: &[At], lens: &[RankLens], k: usize| {
        lens.iter()
            .map(|r| schedule::work_lens(dests, &r.steps)[k])
            .max()
            .unwrap_or(0)
    };
    let work_most = [0, 1].map(|k| {
        let mut m =
            most(&forward_dests, &forward_lens, k).max(most(&backward_dests, &backward_lens, k));
        if let Some(((fd, _), (bd, _), fl, bl)) = &in_place {
            m = m.max(most(fd, fl, k)).max(most(bd, bl, k));
        }
        complex_len(m)
    });
    let (forward_in_place, backward_in_place) = match in_place {
        Some(((fd, _), (bd, _), _, _)) => (Some(fd), Some(bd)),
        None => (None, None),
    };
    let in_place_scalars = if options.in_place { buffer(rank) } else { 0 };
    let padded = padded(rank);
    let mut program = Program {
        forward: Pass {
            steps: forward.steps,
            dests: forward_dests,
            in_place: forward_in_place,
            scale: T::of(spec.forward_scale),
        },
        backward: Pass {
            steps: backward.steps,
            dests: backward_dests,
            in_place: backward_in_place,
            scale: T::of(spec.backward_scale),
        },
        lens: (
            pipeline.layouts[input].local_len(rank) * batch,
            pipeline.layouts[output].local_len(rank) * batch,
        ),
        in_place_scalars,
        padded,
        layouts,
        exchanges,
        work,
        work_most,
        scratch: 0,
        workers: env.threads,
    };
    if env.ranks == 1 {
        fuse::swap_rows_for_sweeps(&mut program.forward, env.threads);
        fuse::swap_rows_for_sweeps(&mut program.backward, env.threads);
    }
    fuse::decide_direct(&mut program, pipeline, env, shift);
    program.scratch = scratch_len(&program, destroy);
    Ok(program)
}

/// Rank `q`'s rows of the real input `layout` (batch axis first when `shift` is 1) in FFTW's
/// padded layout along the real-to-complex axis `half` (logical, without the batch), or
/// `None` (every rank alike) when that axis or one after it is split, or they are not the
/// fastest in memory in their order. A row is the block of the axes `half..` (the axes after
/// the real-to-complex one are untransformed, FFTW's interleaved `howmany`): `n·inner` reals,
/// padded to `2·(n/2+1)·inner`.
fn padded_rows(layout: &Layout, shift: usize, half: usize, q: usize) -> Option<PaddedRows> {
    let shape = layout.global_shape();
    let d = shape.len();
    let (first, order) = (half + shift, layout.memory_order().axes());
    let whole = (first..d).all(|a| !layout.decomposed().contains(&a));
    if !whole || !order[first..].iter().copied().eq(first..d) {
        return None;
    }
    let (n, inner) = (shape[first], shape[first + 1..].iter().product::<usize>());
    debug_assert!(n > 0);
    Some(PaddedRows {
        rows: layout.local_len(q) / (n * inner),
        n: n * inner,
        padded: 2 * (n / 2 + 1) * inner,
    })
}

/// Scratch elements one worker needs: the most any step needs. A step reads its input where
/// the schedule moves the data, which decides whether an FFT step's column FFTs need their
/// staging block.
fn scratch_len<T: Real>(program: &Program<T>, destroy: bool) -> usize {
    let threads = program.workers;
    let run = |pass: &Pass<T>, dests: &[At], start: At| -> usize {
        pass.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let at = if i == 0 { start } else { dests[i - 1] };
                match s {
                    Step::Fft(local) => local.scratch_len(at != dests[i], threads),
                    Step::Line { step, .. } => step.scratch_len(),
                    Step::Fused(f) => f.kernel.scratch_len(),
                    Step::Planes(planes) => planes.scratch_len(at != At::Input || destroy),
                    Step::Exchange { .. } => 0,
                }
            })
            .max()
            .unwrap_or(0)
    };
    // Out of place from the input, and in place from the one buffer.
    let pass = |pass: &Pass<T>| -> usize {
        let in_place = pass.in_place.as_deref();
        run(pass, &pass.dests, At::Input).max(in_place.map_or(0, |d| run(pass, d, At::Output)))
    };
    pass(&program.forward).max(pass(&program.backward))
}

/// An r2c or c2r step to run per sub-block with an FFT group: its op, its source and
/// destination layouts and its axis.
struct LineSide<T: Real> {
    op: LineOp<T>,
    from: usize,
    to: usize,
    axis: usize,
}

/// The FFT plans of a complex FFT group and the memory positions they sweep.
type FftGroup<T> = (Vec<Arc<dyn Fft<T>>>, Vec<usize>);

/// The steps of one direction (`stages`; `inverse` for backward) for rank `q`, with
/// exchange indices from `first_exchange` on, and the layout each leaves the data in.
/// Consecutive complex FFT stages on one layout make one step; an r2c step just before FFTs
/// of trailing axes of its destination, or a c2r step just after FFTs of its source, makes
/// a [`PlaneSteps`] with them. Which steps there are depends on layouts and positions only,
/// never on `q`'s sizes, so every rank makes the same sequence.
fn steps_of<T: Real>(
    problem: &Problem<'_>,
    planners: &mut Planners<T>,
    stages: &[Stage],
    inverse: bool,
    first_exchange: usize,
    threads: usize,
    q: usize,
) -> Unfused<T> {
    let Problem {
        spec,
        pipeline,
        layouts,
        shift,
        ..
    } = *problem;
    let mut steps = Vec::new();
    let mut after = Vec::new();
    let mut exchange = first_exchange;
    // The last r2c step's (source layout, axis), and the last complex FFT group's (layout,
    // plans, memory positions), for running them per sub-block together.
    let mut last_resize: Option<(usize, usize)> = None;
    let mut last_fft: Option<(usize, FftGroup<T>)> = None;
    let mut i = 0;
    while i < stages.len() {
        match stages[i] {
            Stage::Fft { layout, axis } => {
                let l = &layouts[layout];
                let memory_shape = l.local_shape_in_memory(q);
                let position = l.memory_order().position_of(axis + shift);
                let real = pipeline.real[layout];
                if spec.one_d && axis == 0 {
                    // A distributed 1-D transform's FFTs along the rows, with the twiddles of
                    // this rank's columns.
                    let (rows, cols) = (spec.shape.physical[0], spec.shape.physical[1]);
                    let columns = l.global_range(q, 1 + shift);
                    let twiddle = Twiddle::new(rows * cols, columns.start, columns.len(), inverse);
                    let op = LineOp::C2c(planners.fft(rows, inverse));
                    let step = LineStep::new(op, &memory_shape, position, rows, false, false, rows)
                        .with_twiddle(twiddle);
                    steps.push(Step::Line {
                        step,
                        in_place: true,
                    });
                    after.push(layout);
                    i += 1;
                    continue;
                }
                if let AxisKind::R2r(kind) = spec.axes[axis] {
                    let kind = if inverse { kind.inverse() } else { kind };
                    let n = spec.resolution[axis];
                    let op =
                        LineOp::R2r(R2r::new(&mut planners.dcts, &mut planners.reals, kind, n));
                    let step = LineStep::new(op, &memory_shape, position, n, real, real, n);
                    steps.push(Step::Line {
                        step,
                        in_place: true,
                    });
                    after.push(layout);
                    i += 1;
                    continue;
                }
                // Consecutive complex FFT stages on one layout run as one step.
                let mut plans = Vec::new();
                let mut positions = Vec::new();
                while let Some(&Stage::Fft { layout: same, axis }) = stages.get(i) {
                    if same != layout || spec.axes[axis] != AxisKind::Fft {
                        break;
                    }
                    plans.push(planners.fft(spec.shape.physical[axis], inverse));
                    positions.push(l.memory_order().position_of(axis + shift));
                    i += 1;
                }
                // An r2c step just before, into this layout: per sub-block together.
                let resize = last_resize.take();
                if let (Some((from, r_axis)), Some(Step::Line { step, .. })) =
                    (resize, steps.last())
                {
                    if step.is_real_complex() && after.last() == Some(&layout) {
                        let src = &layouts[from];
                        let n_in = src.local_shape_in_memory(q)
                            [src.memory_order().position_of(r_axis + shift)];
                        let line = LineSide {
                            op: LineOp::R2c(planners.reals.plan_fft_forward(n_in)),
                            from,
                            to: layout,
                            axis: r_axis,
                        };
                        let group = (&plans[..], &positions[..]);
                        if let Some((planes, rest)) =
                            per_sub_block(problem, line, group, true, threads, q)
                        {
                            steps.pop();
                            after.pop();
                            steps.push(Step::Planes(planes));
                            after.push(layout);
                            if let Some(rest) = rest {
                                steps.push(Step::Fft(rest));
                                after.push(layout);
                            }
                            continue;
                        }
                    }
                }
                let local = LocalFft::new(
                    plans.clone(),
                    &memory_shape,
                    &positions,
                    threads,
                    spec.deterministic,
                );
                last_fft = Some((layout, (plans, positions)));
                steps.push(Step::Fft(local));
                after.push(layout);
            }
            Stage::Resize { from, to, axis } => {
                let l = &layouts[from];
                let memory_shape = l.local_shape_in_memory(q);
                let position = l.memory_order().position_of(axis + shift);
                let n_in = memory_shape[position];
                let n_out = layouts[to].global_shape()[axis + shift];
                let (real_in, real_out) = (pipeline.real[from], pipeline.real[to]);
                let op = match (real_in, real_out) {
                    (true, false) => LineOp::R2c(planners.reals.plan_fft_forward(n_in)),
                    (false, true) => LineOp::C2r(planners.reals.plan_fft_inverse(n_out)),
                    _ => LineOp::C2c(planners.fft(n_in.max(n_out), inverse)),
                };
                // A c2r step right after FFTs on its source layout: per sub-block together
                // (the FFTs of the other trailing axes, then the c2r).
                let group = last_fft.take();
                if let (LineOp::C2r(c2r), Some((layout, group)), Some(Step::Fft(_))) =
                    (&op, group, steps.last())
                {
                    if layout == from && after.last() == Some(&from) {
                        let line = LineSide {
                            op: LineOp::C2r(c2r.clone()),
                            from,
                            to,
                            axis,
                        };
                        let group = (&group.0[..], &group.1[..]);
                        if let Some((planes, rest)) =
                            per_sub_block(problem, line, group, false, threads, q)
                        {
                            steps.pop();
                            after.pop();
                            if let Some(rest) = rest {
                                steps.push(Step::Fft(rest));
                                after.push(from);
                            }
                            steps.push(Step::Planes(planes));
                            after.push(to);
                            i += 1;
                            continue;
                        }
                    }
                }
                let step = LineStep::new(
                    op,
                    &memory_shape,
                    position,
                    n_out,
                    real_in,
                    real_out,
                    spec.resolution[axis],
                );
                steps.push(Step::Line {
                    step,
                    in_place: false,
                });
                after.push(to);
                if real_in && !real_out {
                    last_resize = Some((from, axis));
                }
                i += 1;
            }
            Stage::Exchange { from, to } => {
                steps.push(Step::Exchange {
                    index: exchange,
                    real: pipeline.real[from],
                });
                exchange += 1;
                after.push(to);
                i += 1;
            }
        }
    }
    Unfused { steps, after }
}

/// The r2c step `line` followed by the FFT group, or the FFT group followed by the c2r step
/// `line` (`head`: the line step first), as [`PlaneSteps`] over the sub-blocks of the first
/// memory position (after the batch axis), plus the group's FFTs along that position or a
/// slower one, which stay a whole-block step (after the planes when `head`, before them
/// otherwise). `None` when the line step is not along the last memory position or no FFT of
/// the group sweeps a trailing position. The decision depends on layouts and positions only,
/// never on rank `q`'s sizes, so every rank makes the same steps.
fn per_sub_block<T: Real>(
    problem: &Problem<'_>,
    line: LineSide<T>,
    (plans, positions): (&[Arc<dyn Fft<T>>], &[usize]),
    head: bool,
    threads: usize,
    q: usize,
) -> Option<(PlaneSteps<T>, Option<LocalFft<T>>)> {
    let Problem {
        spec,
        pipeline,
        layouts,
        shift,
        ..
    } = *problem;
    let LineSide { op, from, to, axis } = line;
    let source = &layouts[from];
    let m_src = source.local_shape_in_memory(q);
    let p = source.memory_order().position_of(axis + shift);
    let first = shift + 1;
    if p + 1 != m_src.len() || p < first {
        return None;
    }
    let m_mid = layouts[if head { to } else { from }].local_shape_in_memory(q);
    let (group, rest): (Vec<_>, Vec<_>) = plans
        .iter()
        .cloned()
        .zip(positions.iter().copied())
        .partition(|&(_, position)| position >= first);
    if group.is_empty() {
        return None;
    }
    let n_out = layouts[to].global_shape()[axis + shift];
    let line = LineStep::new(
        op,
        &m_src[first..],
        p - first,
        n_out,
        pipeline.real[from],
        pipeline.real[to],
        spec.resolution[axis],
    );
    let sweeps = group
        .into_iter()
        .map(|(plan, position)| {
            Sweep::planned(plan, &m_mid[first..], position - first, !spec.deterministic)
        })
        .collect();
    let blocks = m_mid[..first].iter().product();
    let rest = (!rest.is_empty()).then(|| {
        let (plans, positions): (Vec<_>, Vec<_>) = rest.into_iter().unzip();
        LocalFft::new(plans, &m_mid, &positions, threads, spec.deterministic)
    });
    Some((PlaneSteps::new(line, sweeps, head, blocks), rest))
}
