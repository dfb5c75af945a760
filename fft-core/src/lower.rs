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
//! 4. [`direct::decide_direct`]: which fused steps may move their rows straight between the
//!    ranks' blocks (one fold); the buffer sizes.
//!
//! [`lower`] is the one entry point: the plan calls it for its own rank with the real
//! environment, and the model ([`crate::model`]) for rank 0 of each candidate grid
//! ([`exchange_fusions`]). The maps that only some runs need are pure methods of the
//! [`Program`], made when the plan binds it: the pieces of each fused step and their way
//! through a shared-memory window ([`route`]), and the rows straight between the ranks'
//! blocks ([`direct`]).

mod direct;
mod fuse;
mod route;
mod schedule;
#[cfg(test)]
mod tests;

pub(crate) use crate::spec::Spec;

use crate::error::Result;
use crate::kernels::{LineOp, LineStep, LocalFft, PlaneSteps, R2r, Sweep, Twiddle};
use crate::options::{AxisKind, FftOptions};
use crate::profile::{describe, exchange_op, line_flops, Op, Ops, StepInfo};
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

    /// The r2c of `n` points ([`crate::kernels::split::plan_r2c`]).
    fn r2c(&mut self, n: usize) -> Arc<dyn realfft::RealToComplex<T>> {
        crate::kernels::split::plan_r2c(&mut self.reals, &mut self.ffts, n)
    }

    /// The c2r of `n` points ([`crate::kernels::split::plan_c2r`]).
    fn c2r(&mut self, n: usize) -> Arc<dyn realfft::ComplexToReal<T>> {
        crate::kernels::split::plan_c2r(&mut self.reals, &mut self.ffts, n)
    }

    /// The complex FFT of `n` points ([`crate::kernels::row::plan_fft`]).
    fn fft(&mut self, n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
        let direction = if inverse {
            rustfft::FftDirection::Inverse
        } else {
            rustfft::FftDirection::Forward
        };
        crate::kernels::row::plan_fft(&mut self.ffts, n, direction)
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

/// Steps of one direction before fusion, the layout each leaves the data in, and the
/// operations each is made of (for the profile, [`crate::profile`]).
pub(crate) struct Unfused<T: Real> {
    pub steps: Vec<Step<T>>,
    pub after: Vec<usize>,
    pub ops: Vec<Ops>,
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
/// instead, in how many pieces, and whether through a shared-memory window (where
/// `shared_memory` allows it), as rank 0 lowers it with one thread and the default piece
/// size (the other ranks' blocks are not visited: the model plans for machines of any size).
/// Per exchange, forward first.
pub(crate) fn exchange_fusions(
    pipeline: &Pipeline,
    element_bytes: usize,
    shared_memory: bool,
) -> Result<Vec<ExchangeFusion>> {
    if element_bytes <= 8 {
        fusions_of_rank_0::<f32>(pipeline, shared_memory)
    } else {
        fusions_of_rank_0::<f64>(pipeline, shared_memory)
    }
}

/// Rank 0's fused steps of the complex transform `pipeline` as the model sees it (see
/// [`exchange_fusions`]): lowering's stages 1–2 only, which never visit the other ranks.
fn fusions_of_rank_0<T: Real>(
    pipeline: &Pipeline,
    shared_memory: bool,
) -> Result<Vec<ExchangeFusion>> {
    let options = FftOptions::default();
    let shape = pipeline.layouts[pipeline.input].global_shape();
    let spec = Spec::new(shape, &options, crate::stages::Domain::Complex)?;
    let rank_0 = |f: &dyn Fn(usize) -> Vec<u64>| f(0);
    let env = Env {
        ranks: pipeline.layouts[0].grid().ranks(),
        threads: 1,
        piece_bytes: options.piece_bytes,
        shared_memory,
        fold: &rank_0,
    };
    let (layouts, exchanges) = exchanges_of(pipeline, options.batch, 0)?;
    let problem = Problem {
        spec: &spec,
        pipeline,
        layouts: &layouts,
        exchanges: &exchanges,
        shift: usize::from(options.batch > 1),
    };
    let [forward, backward] = fused_steps::<T>(&problem, &env, 0)?;
    let steps = forward.steps.iter().chain(&backward.steps);
    Ok(crate::program::exchange_fusions_of(exchanges.len(), steps))
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
    let (input, output) = (pipeline.input, pipeline.output);
    let sized = schedules(&problem, env, options, [&forward, &backward], rank)?;
    let Schedules {
        dests: [forward_dests, backward_dests],
        in_place: [forward_in_place, backward_in_place],
        work,
        work_most,
        in_place_scalars,
        padded,
    } = sized;
    let regions = direct::regions::<T>(&layouts, pipeline, work_most);
    let mut program = Program {
        forward: Pass {
            info: infos::<T>(&problem, &forward, input, rank),
            steps: forward.steps,
            dests: forward_dests,
            in_place: forward_in_place,
            scale: T::of(spec.forward_scale),
        },
        backward: Pass {
            info: infos::<T>(&problem, &backward, output, rank),
            steps: backward.steps,
            dests: backward_dests,
            in_place: backward_in_place,
            scale: T::of(spec.backward_scale),
        },
        lens: (
            pipeline.layouts[input].local_len(rank) * options.batch,
            pipeline.layouts[output].local_len(rank) * options.batch,
        ),
        in_place_scalars,
        padded,
        ranks: env.ranks,
        rank,
        shift,
        block_scalars: (problem.scalars(input, rank), problem.scalars(output, rank)),
        regions,
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
    direct::decide_direct(&mut program, env, shift);
    program.scratch = scratch_len(&program, options.destroy_input);
    Ok(program)
}

/// Where each step of both directions leaves the data, out of place and (for in-place
/// plans) in place, and the buffers that takes.
struct Schedules {
    dests: [Vec<At>; 2],
    in_place: [Option<Vec<At>>; 2],
    /// Complex elements of the two work buffers on this rank, and the most of any rank.
    work: [usize; 2],
    work_most: [usize; 2],
    /// Scalars of this rank's in-place buffer (0 without [`FftOptions::in_place`]), and a
    /// real-to-complex plan's padded real rows in it.
    in_place_scalars: usize,
    padded: Option<PaddedRows>,
}

/// Stage 3 of lowering (see the module docs): where each step of both directions (`steps`,
/// forward first) leaves the data, the same buffer on every rank, from every rank's lengths
/// (the fused steps' shared-memory paths read and write the peers' buffers of one kind, and
/// synchronize on those buffers' windows); and the work buffers that takes.
fn schedules<T: Real>(
    problem: &Problem<'_>,
    env: &Env<'_>,
    options: &FftOptions,
    passes: [&Unfused<T>; 2],
    rank: usize,
) -> Result<Schedules> {
    let pipeline = problem.pipeline;
    let (input, output) = (pipeline.input, pipeline.output);
    let destroy = options.destroy_input;
    let lens = |pass: usize| -> Vec<RankLens> {
        let (to, from) = if pass == 0 {
            (output, input)
        } else {
            (input, output)
        };
        let after = &passes[pass].after;
        (0..env.ranks)
            .map(|q| RankLens {
                steps: after.iter().map(|&l| problem.scalars(l, q)).collect(),
                output: problem.scalars(to, q),
                input: destroy.then(|| problem.scalars(from, q)),
            })
            .collect()
    };
    let lens = [lens(0), lens(1)];
    let movers = passes.map(|p| schedule::movers(&p.steps));
    let [(forward, fw), (backward, bw)] = [0, 1].map(|p| schedule(&movers[p], &lens[p], rank));
    let mut sizes = [fw, bw];
    let mut most = [0, 1].map(|k| most_work(&[(&forward, &lens[0]), (&backward, &lens[1])], k));
    let mut in_place = [None, None];
    let (mut in_place_scalars, mut padded) = (0, None);
    if options.in_place {
        let one = in_place_schedules(problem, env, &movers, &lens, rank)?;
        for (k, (dests, used)) in one.passes.into_iter().enumerate() {
            sizes[k] = [sizes[k][0].max(used[0]), sizes[k][1].max(used[1])];
            in_place[k] = Some(dests);
        }
        most = [most[0].max(one.most[0]), most[1].max(one.most[1])];
        (in_place_scalars, padded) = (one.scalars, one.padded);
    }
    let complex_len = |scalars: usize| scalars.div_ceil(2);
    Ok(Schedules {
        dests: [forward, backward],
        in_place,
        work: [0, 1].map(|k| complex_len(sizes[0][k].max(sizes[1][k]))),
        work_most: most.map(complex_len),
        in_place_scalars,
        padded,
    })
}

/// The most scalars work buffer `k` holds on any rank, over the schedules `passes` (each
/// with every rank's lengths).
fn most_work(passes: &[(&Vec<At>, &Vec<RankLens>)], k: usize) -> usize {
    let most = |(dests, lens): &(&Vec<At>, &Vec<RankLens>)| {
        (lens.iter())
            .map(|r| schedule::work_lens(dests, &r.steps)[k])
            .max()
            .unwrap_or(0)
    };
    passes.iter().map(most).max().unwrap_or(0)
}

/// The in-place schedules of both directions and what they take.
struct InPlace {
    /// Per direction: where each step leaves the data, and this rank's work scalars.
    passes: [(Vec<At>, [usize; 2]); 2],
    /// The most scalars of each work buffer on any rank.
    most: [usize; 2],
    /// This rank's buffer scalars and padded real rows.
    scalars: usize,
    padded: Option<PaddedRows>,
}

/// The schedules of in-place calls: one buffer per rank, the larger of its input and output
/// blocks (a real-to-complex plan's real block with its rows padded, FFTW's layout).
fn in_place_schedules(
    problem: &Problem<'_>,
    env: &Env<'_>,
    movers: &[Vec<bool>; 2],
    lens: &[Vec<RankLens>; 2],
    rank: usize,
) -> Result<InPlace> {
    let pipeline = problem.pipeline;
    let (input, output) = (pipeline.input, pipeline.output);
    let real_to_complex = pipeline.real[input] && !pipeline.real[output];
    let bad = |reason: &str| crate::FftError::BadOptions {
        shape: problem.spec.shape.spectral.clone(),
        reason: reason.into(),
    };
    let half = crate::spec::last_transformed(&problem.spec.axes);
    let rows = |q: usize| padded_rows(&problem.layouts[input], problem.shift, half, q);
    if real_to_complex && rows(rank).is_none() {
        return Err(bad(&format!("in_place: a real-to-complex plan's real input must keep its real-to-complex axis (axis {half}) and the axes after it whole and fastest in memory on every rank (FFTW's padded layout)")));
    }
    let padded = |q: usize| rows(q).filter(|_| real_to_complex);
    let buffer = |q: usize| {
        let rows = padded(q).map_or(0, |r| r.rows * r.padded);
        (problem.scalars(input, q).max(problem.scalars(output, q))).max(rows)
    };
    let one_buffer = |lens: &Vec<RankLens>| -> Vec<RankLens> {
        (lens.iter().enumerate())
            .map(|(q, r)| RankLens {
                steps: r.steps.clone(),
                output: buffer(q),
                input: None,
            })
            .collect()
    };
    let lens = [one_buffer(&lens[0]), one_buffer(&lens[1])];
    let [f, b] = [0, 1].map(|p| schedule::schedule_in_place(&movers[p], &lens[p], rank));
    let (Some(f), Some(b)) = (f, b) else {
        return Err(bad(
            "in_place: a transform of a single out-of-place step has no in-place schedule",
        ));
    };
    let most = [0, 1].map(|k| most_work(&[(&f.0, &lens[0]), (&b.0, &lens[1])], k));
    debug_assert_eq!(env.ranks, lens[0].len());
    Ok(InPlace {
        passes: [f, b],
        most,
        scalars: buffer(rank),
        padded: padded(rank),
    })
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

/// What each step of `pass` (which starts in layout `start`) does on rank `q`, for the
/// profile: its words, its input and output blocks' bytes, its flops.
fn infos<T: Real>(
    problem: &Problem<'_>,
    pass: &Unfused<T>,
    start: usize,
    q: usize,
) -> Vec<StepInfo> {
    let bytes = |layout: usize| (problem.scalars(layout, q) * std::mem::size_of::<T>()) as u64;
    let mut from = start;
    let steps = pass.steps.iter().zip(&pass.after).zip(&pass.ops);
    steps
        .map(|((step, &to), ops)| {
            let kind = step.kind();
            let info = StepInfo {
                kind,
                what: describe(kind, ops),
                read_bytes: bytes(from),
                write_bytes: bytes(to),
                flops: ops.iter().map(|(_, f)| f).sum(),
            };
            from = to;
            info
        })
        .collect()
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
    let mut out = StepsOf {
        problem,
        planners,
        inverse,
        threads,
        q,
        steps: Vec::new(),
        after: Vec::new(),
        ops: Vec::new(),
        exchange: first_exchange,
        last_resize: None,
        last_fft: None,
    };
    let mut i = 0;
    while i < stages.len() {
        i = match stages[i] {
            Stage::Fft { layout, axis } => out.fft(stages, i, layout, axis),
            Stage::Resize { from, to, axis } => out.resize(i, from, to, axis),
            Stage::Exchange { from, to } => {
                let real = problem.pipeline.real[from];
                let index = out.exchange;
                out.exchange += 1;
                let op = exchange_op(&problem.layouts[from], &problem.layouts[to]);
                out.push(Step::Exchange { index, real }, to, vec![(op, 0.0)]);
                i + 1
            }
        };
    }
    Unfused {
        steps: out.steps,
        after: out.after,
        ops: out.ops,
    }
}

/// [`steps_of`] under way: the steps so far, the layout each leaves the data in, the next
/// exchange's index, and the last r2c step's (source layout, axis) and complex FFT group's
/// (layout, plans, memory positions), for running them per sub-block together.
struct StepsOf<'a, 'p, T: Real> {
    problem: &'a Problem<'p>,
    planners: &'a mut Planners<T>,
    inverse: bool,
    threads: usize,
    q: usize,
    steps: Vec<Step<T>>,
    after: Vec<usize>,
    ops: Vec<Ops>,
    exchange: usize,
    last_resize: Option<(usize, usize)>,
    last_fft: Option<(usize, FftGroup<T>)>,
}

impl<T: Real> StepsOf<'_, '_, T> {
    fn push(&mut self, step: Step<T>, layout: usize, ops: Ops) {
        self.steps.push(step);
        self.after.push(layout);
        self.ops.push(ops);
    }

    fn pop(&mut self) -> Ops {
        self.steps.pop();
        self.after.pop();
        self.ops.pop().unwrap_or_default()
    }

    /// Lines of length `n` in rank `q`'s block of `layout`.
    fn lines(&self, layout: usize, n: usize) -> usize {
        self.problem.layouts[layout].local_len(self.q) / n.max(1)
    }

    /// The FFT stage `stages[i]` (of `axis` on `layout`): a real-to-real line step, or the
    /// complex FFTs of this and the next stages on the same layout, per sub-block with an r2c
    /// step just before where they can be. Returns the next stage's index.
    fn fft(&mut self, stages: &[Stage], mut i: usize, layout: usize, axis: usize) -> usize {
        let Problem {
            spec,
            pipeline,
            layouts,
            shift,
            ..
        } = *self.problem;
        let l = &layouts[layout];
        let memory_shape = l.local_shape_in_memory(self.q);
        if spec.one_d && axis == 0 {
            // A distributed 1-D transform's FFTs along the rows, with the twiddles of this
            // rank's columns.
            let (rows, cols) = (spec.shape.physical[0], spec.shape.physical[1]);
            let columns = l.global_range(self.q, 1 + shift);
            let twiddle = Twiddle::new(rows * cols, columns.start, columns.len(), self.inverse);
            let op = LineOp::C2c(self.planners.fft(rows, self.inverse));
            let position = l.memory_order().position_of(axis + shift);
            let step = LineStep::new(op, &memory_shape, position, rows, false, false, rows)
                .with_twiddle(twiddle);
            let in_place = true;
            let flops = line_flops(rows, self.lines(layout, rows), false);
            self.push(
                Step::Line { step, in_place },
                layout,
                vec![(Op::Twiddled, flops)],
            );
            return i + 1;
        }
        if let AxisKind::R2r(kind) = spec.axes[axis] {
            let kind = if self.inverse { kind.inverse() } else { kind };
            let n = spec.resolution[axis];
            let position = l.memory_order().position_of(axis + shift);
            let real = pipeline.real[layout];
            let planners = &mut *self.planners;
            let op = LineOp::R2r(R2r::new(&mut planners.dcts, &mut planners.reals, kind, n));
            let step = LineStep::new(op, &memory_shape, position, n, real, real, n);
            let in_place = true;
            let flops = line_flops(n, self.lines(layout, n), real);
            self.push(
                Step::Line { step, in_place },
                layout,
                vec![(Op::R2r(axis), flops)],
            );
            return i + 1;
        }
        // Consecutive complex FFT stages on one layout run as one step.
        let mut plans = Vec::new();
        let mut positions = Vec::new();
        let mut ops = Vec::new();
        while let Some(&Stage::Fft { layout: same, axis }) = stages.get(i) {
            if same != layout || spec.axes[axis] != AxisKind::Fft {
                break;
            }
            let n = spec.shape.physical[axis];
            plans.push(self.planners.fft(n, self.inverse));
            positions.push(l.memory_order().position_of(axis + shift));
            ops.push((Op::Fft(axis), line_flops(n, self.lines(layout, n), false)));
            i += 1;
        }
        if self.r2c_with(layout, &plans, &positions, &ops) {
            return i;
        }
        let local = LocalFft::new(
            plans.clone(),
            &memory_shape,
            &positions,
            self.threads,
            spec.deterministic,
        );
        self.last_fft = Some((layout, (plans, positions)));
        self.push(Step::Fft(local), layout, ops);
        i
    }

    /// Runs the r2c step just before, into `layout`, per sub-block with the FFT group
    /// (`plans` along memory `positions`), where it can: `true` if it does.
    fn r2c_with(
        &mut self,
        layout: usize,
        plans: &[Arc<dyn Fft<T>>],
        positions: &[usize],
        ops: &[(Op, f64)],
    ) -> bool {
        let Some((from, axis)) = self.last_resize.take() else {
            return false;
        };
        let Some(Step::Line { step, .. }) = self.steps.last() else {
            return false;
        };
        if !step.is_real_complex() || self.after.last() != Some(&layout) {
            return false;
        }
        let src = &self.problem.layouts[from];
        let n_in = src.local_shape_in_memory(self.q)
            [src.memory_order().position_of(axis + self.problem.shift)];
        let line = LineSide {
            op: LineOp::R2c(self.planners.r2c(n_in)),
            from,
            to: layout,
            axis,
        };
        let (threads, q) = (self.threads, self.q);
        let Some((planes, rest)) =
            per_sub_block(self.problem, line, (plans, positions), true, threads, q)
        else {
            return false;
        };
        let mut line_ops = self.pop();
        let first = self.problem.shift + 1;
        let (group, rest_ops) = split_ops(ops, positions, first);
        line_ops.extend(group);
        self.push(Step::Planes(planes), layout, line_ops);
        if let Some(rest) = rest {
            self.push(Step::Fft(rest), layout, rest_ops);
        }
        true
    }

    /// The resizing stage `i` (`axis` from layout `from` to `to`): an r2c, c2r or padded
    /// c2c line step, a c2r step per sub-block with the FFTs just before where it can be.
    /// Returns the next stage's index.
    fn resize(&mut self, i: usize, from: usize, to: usize, axis: usize) -> usize {
        let Problem {
            spec,
            pipeline,
            layouts,
            shift,
            ..
        } = *self.problem;
        let l = &layouts[from];
        let memory_shape = l.local_shape_in_memory(self.q);
        let position = l.memory_order().position_of(axis + shift);
        let n_in = memory_shape[position];
        let n_out = layouts[to].global_shape()[axis + shift];
        let (real_in, real_out) = (pipeline.real[from], pipeline.real[to]);
        let op = match (real_in, real_out) {
            (true, false) => LineOp::R2c(self.planners.r2c(n_in)),
            (false, true) => LineOp::C2r(self.planners.c2r(n_out)),
            _ => LineOp::C2c(self.planners.fft(n_in.max(n_out), self.inverse)),
        };
        let line_op = match (real_in, real_out) {
            (true, false) => (
                Op::R2c(axis),
                line_flops(n_in, self.lines(from, n_in), true),
            ),
            (false, true) => (
                Op::C2r(axis),
                line_flops(n_out, self.lines(to, n_out), true),
            ),
            _ => {
                let m = n_in.max(n_out);
                (
                    Op::Padded(axis),
                    line_flops(m, self.lines(from, n_in), false),
                )
            }
        };
        let group = self.last_fft.take();
        if let (LineOp::C2r(c2r), Some(group)) = (&op, group) {
            if self.c2r_after(c2r.clone(), group, (from, to, axis), line_op) {
                return i + 1;
            }
        }
        let resolution = spec.resolution[axis];
        let (real, n) = ((real_in, real_out), (n_out, resolution));
        let step = LineStep::new(op, &memory_shape, position, n.0, real.0, real.1, n.1);
        let in_place = false;
        self.push(Step::Line { step, in_place }, to, vec![line_op]);
        if real_in && !real_out {
            self.last_resize = Some((from, axis));
        }
        i + 1
    }

    /// Runs the c2r step `c2r` (`axis` from `from` to `to`) per sub-block after the FFT
    /// group just before (`(layout, group)`), on its source layout, where it can: `true` if
    /// it does.
    fn c2r_after(
        &mut self,
        c2r: Arc<dyn realfft::ComplexToReal<T>>,
        (layout, group): (usize, FftGroup<T>),
        (from, to, axis): (usize, usize, usize),
        line_op: (Op, f64),
    ) -> bool {
        if !matches!(self.steps.last(), Some(Step::Fft(_)))
            || layout != from
            || self.after.last() != Some(&from)
        {
            return false;
        }
        let line = LineSide {
            op: LineOp::C2r(c2r),
            from,
            to,
            axis,
        };
        let (threads, q) = (self.threads, self.q);
        let group = (&group.0[..], &group.1[..]);
        let Some((planes, rest)) = per_sub_block(self.problem, line, group, false, threads, q)
        else {
            return false;
        };
        let ops = self.pop();
        let first = self.problem.shift + 1;
        let (mut group_ops, rest_ops) = split_ops(&ops, group.1, first);
        if let Some(rest) = rest {
            self.push(Step::Fft(rest), from, rest_ops);
        }
        group_ops.push(line_op);
        self.push(Step::Planes(planes), to, group_ops);
        true
    }
}

/// The operations of an FFT group (`ops[i]` along memory position `positions[i]`) that
/// [`per_sub_block`] runs per sub-block (positions from `first` on), and the rest.
fn split_ops(ops: &[(Op, f64)], positions: &[usize], first: usize) -> (Ops, Ops) {
    let (group, rest): (Vec<_>, Vec<_>) = ops
        .iter()
        .zip(positions)
        .partition(|(_, &position)| position >= first);
    let ops = |v: Vec<(&(Op, f64), &usize)>| v.into_iter().map(|(op, _)| *op).collect();
    (ops(group), ops(rest))
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
