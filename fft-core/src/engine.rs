//! The one engine behind [`crate::FftPlan`], [`crate::RealFftPlan`] and
//! [`crate::R2rPlan`]: a plan lowered to a [`Program`] ([`crate::lower`], pure) and bound to
//! MPI here (its exchanges' communicators, shared-memory windows, buffers), then run by
//! [`crate::run::execute`]. Nothing here decides anything the program has not decided: the
//! engine only binds. Generic over the precision `T` only. Data moves as scalars (`&[T]`): a
//! complex element is two scalars, so real and complex layouts share the same work buffers
//! (`Complex<T>` storage, viewed through `bytemuck`).

pub(crate) use crate::run::Source;
pub(crate) use crate::spec::Spec;

use crate::error::{FftError, Result};
use crate::lower::{lower, Env};
use crate::memory::MemoryEstimate;
use crate::options::{FftOptions, GridChoice};
use crate::plan::Direction;
use crate::profile::{profile_of, StepClock, StepProfile};
use crate::program::{Fused, Pass, Program, Step};
use crate::real::Real;
use crate::run::{execute, Context, Route, SharedPath};
use crate::shared::{BlockWindow, SharedBlock};
use crate::stages::{pipeline_with, Pipeline};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::{Exchange, GridShape, ProcessGrid, RedistError, StageTimes};
use std::sync::{Arc, Weak};

/// The engine: the lowered program, what runs it, and the plan's buffers.
pub(crate) struct Engine<T: Real> {
    pub(crate) grid: ProcessGrid,
    pub(crate) pipeline: Pipeline,
    pub(crate) options: FftOptions,
    program: Program<T>,
    /// The routes of each direction's fused steps, in order.
    routes: [Vec<Route>; 2],
    exchanges: Vec<Exchange>,
    /// Two data buffers, which move into shared-memory windows when the plan is made or with
    /// the first block it allocates in one ([`Engine::make_direct`]), and the message buffers of the largest
    /// exchange (the part that goes to other ranks).
    work: [SharedBlock<Complex<T>>; 2],
    send: AlignedBuf<Complex<T>>,
    recv: AlignedBuf<Complex<T>>,
    workers: Vec<AlignedBuf<Complex<T>>>,
    pub(crate) times: StageTimes,
    /// Per step of each direction's program (forward, backward), its calls and seconds.
    clocks: [Vec<StepClock>; 2],
    /// The shared-memory windows of the blocks this plan allocated ([`SharedBlock`]), with
    /// whether each holds forward inputs (else forward outputs).
    windows: Vec<(Weak<BlockWindow>, bool)>,
    /// Whether the work buffers are in windows and the direct steps mapped
    /// ([`Engine::share_work`], [`Engine::prepare_direct`]).
    direct_ready: bool,
    /// A batch split into groups ([`crate::groups`]): this engine then only holds the
    /// caller's layouts, and the group's plan runs the transforms.
    grouped: Option<Box<crate::groups::Grouped<T>>>,
    /// What the most loaded rank holds, from every rank's program.
    pub(crate) memory: MemoryEstimate,
}

/// This rank's threads for a plan made with `options`: its own count, else the current rayon
/// pool's.
fn threads_of(options: &FftOptions) -> usize {
    options
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1)
}

/// The environment of a plan over `comm`: its ranks, the most threads of any rank, and the
/// fold as an all-reduce (collective, once for the threads).
fn probe<C: Communicator>(comm: &C, options: &FftOptions) -> (usize, usize) {
    let mut threads = 0u64;
    let mine = threads_of(options) as u64;
    comm.all_reduce_into(&mine, &mut threads, SystemOperation::max());
    (comm.size() as usize, threads as usize)
}

/// Fails (on every rank alike) unless every rank lowered the same program, and returns what
/// the most loaded rank's program holds (each part the largest over the ranks): one
/// all-reduce of the programs' fingerprints and memory, the only agreement lowering needs
/// besides its folds.
fn agree<C: Communicator, T: Real>(comm: &C, program: &Program<T>) -> Result<MemoryEstimate> {
    let fingerprint = program.fingerprint();
    let m = program.memory();
    let parts = [m.work_bytes, m.message_bytes, m.scratch_bytes, m.data_bytes];
    // The smallest fingerprint and the complement of the largest: equal only if all agree;
    // the complements of the parts: the smallest is the complement of the largest.
    let mut mine = vec![fingerprint, !fingerprint];
    mine.extend(parts.map(|p| !p));
    let mut least = vec![0u64; mine.len()];
    comm.all_reduce_into(&mine[..], &mut least[..], SystemOperation::min());
    if least[0] != !least[1] {
        return Err(FftError::DivergentPlan {
            least: least[0],
            most: !least[1],
        });
    }
    Ok(MemoryEstimate {
        work_bytes: !least[2],
        message_bytes: !least[3],
        scratch_bytes: !least[4],
        data_bytes: !least[5],
    })
}

/// The program of this rank of `grid` for `spec`'s `pipeline`: [`lower`] with the real
/// environment, whose fold is an all-reduce over the grid (collective).
fn lower_here<T: Real>(
    grid: &ProcessGrid,
    spec: &Spec,
    pipeline: &Pipeline,
    options: &FftOptions,
) -> Result<Program<T>> {
    let rank = grid.rank();
    let (ranks, threads) = probe(grid.communicator(), options);
    let fold = |f: &dyn Fn(usize) -> Vec<u64>| {
        let mine = f(rank);
        let mut all = vec![0u64; mine.len()];
        let world = grid.communicator();
        world.all_reduce_into(&mine[..], &mut all[..], SystemOperation::max());
        all
    };
    let env = Env {
        ranks,
        threads,
        piece_bytes: options.piece_bytes,
        shared_memory: options.shared_memory && ranks > 1,
        fold: &fold,
    };
    lower::<T>(spec, pipeline, options, &env, rank)
}

impl<T: Real> Engine<T>
where
    Complex<T>: redist::Element,
{
    /// Plans `spec` over all processes of `comm`; collective.
    pub(crate) fn new<C: Communicator>(comm: &C, spec: Spec, options: FftOptions) -> Result<Self> {
        let ranks = comm.size() as usize;
        let complex = std::mem::size_of::<Complex<T>>();
        let (groups, group_grid) = crate::groups::resolve(&spec, &options, ranks, complex)?;
        if groups > 1 {
            return Self::grouped(comm, spec, options, groups, group_grid);
        }
        let grid_shape = if spec.one_d {
            // A distributed 1-D transform runs on a slab of its matrix: every rank in one
            // grid dimension.
            match &options.grid {
                GridChoice::Auto | GridChoice::Rank(1) => GridShape::new(vec![ranks])?,
                other => crate::model::resolve_grid(
                    &spec.shape.physical,
                    ranks,
                    other,
                    &options.machine,
                )?,
            }
        } else {
            crate::model::resolve_grid(
                &spec.shape.physical,
                ranks,
                &options.grid,
                &options.machine,
            )?
        };
        let pipeline = if spec.one_d {
            crate::one_d::pipeline(&spec.shape, grid_shape.clone(), &options)?
        } else {
            pipeline_with(
                &spec.shape,
                grid_shape.clone(),
                &options.ends(),
                &spec.transformed,
            )?
        };
        // Refuse (on every rank alike) a plan whose blocks alone would not fit, before
        // lowering, and one whose program would not, before allocating.
        let limit = crate::memory::smallest_limit(comm, options.memory_limit);
        let complex = std::mem::size_of::<Complex<T>>();
        let blocks = crate::memory::blocks_only(&pipeline, complex, options.batch);
        crate::memory::check(&blocks, limit)?;
        let grid = ProcessGrid::new(comm, grid_shape)?;
        let program = lower_here::<T>(&grid, &spec, &pipeline, &options)?;
        let memory = agree(grid.communicator(), &program)?;
        crate::memory::check(&memory, limit)?;
        let exchanges = program
            .exchanges
            .iter()
            .map(|e| Ok(Exchange::new(&grid, &e.plan, options.method)?))
            .collect::<Result<Vec<_>>>()?;
        let routes = [&program.forward, &program.backward]
            .map(|pass| bind_routes(pass, &program, &exchanges));
        let [forward_routes, backward_routes] = routes;
        let routes = [forward_routes?, backward_routes?];
        let windowed = routes.iter().flatten().map(|r| r.shared.is_some());
        let windowed: Vec<bool> = windowed.collect();
        let (send, recv) = program.message_lens(|i| windowed[i]);
        let workers = (0..program.workers)
            .map(|_| AlignedBuf::new(program.scratch))
            .collect();
        let mut engine = Self {
            work: program.work.map(SharedBlock::aligned),
            send: AlignedBuf::new(send),
            recv: AlignedBuf::new(recv),
            workers,
            times: StageTimes::default(),
            clocks: [&program.forward, &program.backward]
                .map(|pass| vec![StepClock::default(); pass.steps.len()]),
            grid,
            pipeline,
            options,
            program,
            routes,
            exchanges,
            windows: Vec::new(),
            direct_ready: false,
            grouped: None,
            memory,
        };
        engine.intern_maps();
        if engine.options.shared_memory && engine.program.direct_through_work() {
            engine.make_direct()?;
        }
        redist::alloc::release_freed();
        Ok(engine)
    }

    /// A plan of `groups` groups ([`crate::groups`]): the plain plan of one field over all
    /// ranks for the caller's layouts, without its buffers, and the groups' runtime.
    fn grouped<C: Communicator>(
        comm: &C,
        spec: Spec,
        options: FftOptions,
        groups: usize,
        grid: Vec<usize>,
    ) -> Result<Self> {
        let one = FftOptions {
            batch: 1,
            groups: crate::groups::Groups::Fixed(1),
            shared_memory: false,
            ..options.clone()
        };
        let mut outer = Self::new(comm, spec.clone(), one)?;
        outer.work = [SharedBlock::aligned(0), SharedBlock::aligned(0)];
        outer.send = AlignedBuf::new(0);
        outer.recv = AlignedBuf::new(0);
        outer.workers = Vec::new();
        let grouped = crate::groups::Grouped::new(&outer, &spec, &options, groups, grid)?;
        outer.options = FftOptions {
            groups: crate::groups::Groups::Fixed(groups),
            ..options
        };
        outer.grouped = Some(Box::new(grouped));
        redist::alloc::release_freed();
        Ok(outer)
    }

    /// Each step of each direction's program with its calls and seconds so far (those of a
    /// group's plan for a batch split into groups; the groups' redistributions are then in
    /// [`Engine::times`] only).
    pub(crate) fn step_profile(&self) -> Vec<StepProfile> {
        if let Some(grouped) = &self.grouped {
            return grouped.inner().step_profile();
        }
        let directions = [Direction::Forward, Direction::Backward];
        let passes = [&self.program.forward, &self.program.backward];
        directions
            .into_iter()
            .zip(passes)
            .zip(&self.clocks)
            .flat_map(|((d, pass), clocks)| profile_of(d, &pass.info, clocks))
            .collect()
    }

    /// Zeroes the stage times and every step's clock (a group's plan's too).
    pub(crate) fn reset_times(&mut self) {
        self.times = StageTimes::default();
        self.clocks
            .iter_mut()
            .flatten()
            .for_each(|c| *c = StepClock::default());
        if let Some(grouped) = &mut self.grouped {
            grouped.inner_mut().reset_times();
        }
    }

    /// The groups of a split batch (1 for a plain plan).
    pub(crate) fn groups(&self) -> usize {
        self.grouped.as_ref().map_or(1, |g| g.groups)
    }

    /// Makes every run map of the program and its routes equal to an earlier one share it
    /// ([`Program::intern_maps`]).
    fn intern_maps(&mut self) {
        let routes = self.routes.iter_mut().flatten();
        self.program.intern_maps(routes.flat_map(Route::maps_mut));
    }

    /// Bytes per rank of a shared-memory window holding every rank's forward input
    /// (`forward_input`) or output block: the largest block, in whole cache lines (as
    /// [`redist::transport::window::GroupWindow::new`] rounds it), the same on every rank.
    fn region_bytes(&self, forward_input: bool) -> usize {
        let regions = &self.program.regions;
        let elements = if forward_input {
            regions.input
        } else {
            regions.output
        };
        elements * std::mem::size_of::<Complex<T>>()
    }

    /// This rank's forward input (`forward_input`) or output block, zeroed: in a
    /// shared-memory window over the plan's ranks when they are all on one node (and more
    /// than one), else private. Collective. The first shared block makes the fused steps'
    /// maps into the windows ([`Direct`]).
    pub(crate) fn alloc_block<E: bytemuck::Pod + Default>(
        &mut self,
        forward_input: bool,
    ) -> Result<SharedBlock<E>> {
        let len = if forward_input {
            self.input_len()
        } else {
            self.output_len()
        };
        let bytes = self.region_bytes(forward_input);
        let window = match self.grid.communicator().size() {
            _ if self.grouped.is_some() => None,
            1 => None,
            _ => redist::transport::window::GroupWindow::new(self.grid.communicator(), bytes)?,
        };
        let Some(window) = window else {
            return Ok(SharedBlock::aligned(len));
        };
        assert_eq!(
            window.region_bytes(),
            bytes,
            "regions sized alike on every rank"
        );
        self.make_direct()?;
        self.windows.retain(|(w, _)| w.strong_count() > 0);
        let window = Arc::new(BlockWindow { window });
        self.windows.push((Arc::downgrade(&window), forward_input));
        Ok(SharedBlock::in_window(window, len))
    }

    /// Moves the work buffers into windows and maps the direct steps, once: when the plan is
    /// made if some direct step goes through the work buffers (so that private blocks take
    /// it too), else with the first shared block. Collective.
    fn make_direct(&mut self) -> Result<()> {
        if !self.direct_ready {
            if self.share_work()? {
                self.prepare_direct();
            }
            self.direct_ready = true;
        }
        Ok(())
    }

    /// Moves the work buffers into shared-memory windows over the plan's ranks, like the
    /// blocks `alloc_block` makes, so that the fused steps that read or write them move their
    /// rows straight between the ranks' buffers too (a c2r backward that keeps its input
    /// transforms it into work buffer 0 and exchanges from there). The memory is the same; it
    /// only moves. `false` where the ranks are not all on one node (nothing moved).
    /// Collective; called once ([`Engine::make_direct`]).
    fn share_work(&mut self) -> Result<bool> {
        let complex = std::mem::size_of::<Complex<T>>();
        for k in 0..2 {
            let len = self.work[k].len();
            // Regions sized alike on every rank (the largest buffer, in whole cache lines).
            let most = self.program.work_most[k];
            if most == 0 {
                continue;
            }
            let bytes = (most * complex).div_ceil(64) * 64;
            let comm = self.grid.communicator();
            let Some(window) = redist::transport::window::GroupWindow::new(comm, bytes)? else {
                return Ok(false);
            };
            self.work[k] = SharedBlock::in_window(Arc::new(BlockWindow { window }), len);
        }
        Ok(true)
    }

    /// Binds the maps of every fused step that lowering found able to move its rows straight
    /// between the ranks' blocks ([`Program::direct_maps`]) to its route.
    fn prepare_direct(&mut self) {
        let maps = self.program.direct_maps();
        for (routes, maps) in self.routes.iter_mut().zip(maps) {
            for (route, direct) in routes.iter_mut().zip(maps) {
                route.direct = direct;
            }
        }
        self.intern_maps();
        redist::alloc::release_freed();
    }

    /// The windows the caller's `input` and `output` lie in (their regions' starts), on every
    /// rank alike: a side counts only where every rank passes a block of the kind the call
    /// reads or writes there (one small all-reduce per call, only once blocks exist).
    fn shared_call(
        &self,
        direction: Direction,
        input: *const u8,
        output: *const u8,
    ) -> [Option<Arc<BlockWindow>>; 2] {
        // No live block (blocks are dropped on every rank alike, as freeing a window is
        // collective): nothing to agree on.
        if self.windows.iter().all(|(w, _)| w.strong_count() == 0) {
            return [None, None];
        }
        let find = |at: *const u8, holds_input: bool| {
            self.windows
                .iter()
                .filter(|(_, kind)| *kind == holds_input)
                .filter_map(|(w, _)| w.upgrade())
                .find(|w| std::ptr::eq(w.window.own::<u8>(), at))
        };
        let forward = direction.is_forward();
        let found = [find(input, forward), find(output, !forward)];
        let mask = i32::from(found[0].is_some()) | (i32::from(found[1].is_some()) << 1);
        let mut all = 0i32;
        self.grid
            .communicator()
            .all_reduce_into(&mask, &mut all, SystemOperation::bitwise_and());
        let [i, o] = found;
        [i.filter(|_| all & 1 != 0), o.filter(|_| all & 2 != 0)]
    }

    /// This rank's elements (not scalars) of the forward input, batch included.
    pub(crate) fn input_len(&self) -> usize {
        self.grouped
            .as_ref()
            .map_or(self.program.lens.0, |g| g.lens.0)
    }

    /// This rank's elements of the forward output, batch included.
    pub(crate) fn output_len(&self) -> usize {
        self.grouped
            .as_ref()
            .map_or(self.program.lens.1, |g| g.lens.1)
    }

    /// Threads the plan's kernels are cut for: one scratch block each.
    pub(crate) fn threads(&self) -> usize {
        self.grouped
            .as_ref()
            .map_or(self.workers.len(), |g| g.threads())
    }

    /// `Complex<T>` elements of work memory (see [`crate::FftPlan::work_len`]).
    pub(crate) fn work_len(&self) -> usize {
        self.work.iter().map(|w| w.len()).sum::<usize>()
            + self.send.len()
            + self.recv.len()
            + self.workers.iter().map(|w| w.len()).sum::<usize>()
            + (self.routes.iter().flatten())
                .filter_map(|r| r.shared.as_ref())
                .map(|sh| sh.window.region_len::<Complex<T>>())
                .sum::<usize>()
            + self.grouped.as_ref().map_or(0, |g| g.work_len())
    }

    /// The ranks' verdict on the caller's buffers, each `(name, expected, actual)`, the same
    /// on every rank (one small all-reduce, two if some buffer is wrong): `None` if every
    /// rank's are right, else the lowest rank whose are not and the first wrong one's entry.
    fn agree_buffers(
        &self,
        checks: &[redist::comm::BufferCheck],
    ) -> Option<(usize, redist::comm::BufferCheck)> {
        match redist::comm::agree_buffers(self.grid.communicator(), checks, true) {
            Ok(()) => None,
            Err(RedistError::CallBufferLength {
                rank,
                buffer,
                expected,
                actual,
            }) => Some((rank, (buffer, expected, actual))),
            Err(other) => unreachable!("agree_buffers returns only CallBufferLength: {other}"),
        }
    }

    /// Checks the caller's buffers (lengths in elements of their own types: complex, or
    /// real for the real side of a real plan) and runs one direction on scalar views of
    /// them: what every plan kind's `forward`, `backward` and `_destroying` calls do.
    /// Collective; allocates nothing. A read-only `input` on a plan made with
    /// `destroy_input` is refused (the same on every rank).
    pub(crate) fn transform<I: bytemuck::Pod, O: bytemuck::Pod>(
        &mut self,
        direction: Direction,
        input: Source<'_, I>,
        output: &mut [O],
    ) -> Result<()> {
        let (input_len, output_len) = if direction.is_forward() {
            (self.input_len(), self.output_len())
        } else {
            (self.output_len(), self.input_len())
        };
        let checks = [
            ("input", input_len, input.len()),
            ("output", output_len, output.len()),
        ];
        if let Some((rank, (buffer, expected, actual))) = self.agree_buffers(&checks) {
            return Err(FftError::CallBufferLength {
                rank,
                buffer,
                expected,
                actual,
            });
        }
        if self.options.destroy_input && matches!(input, Source::Read(_)) {
            return Err(FftError::InputNotWritable {
                direction: direction.name(),
            });
        }
        let input: Source<'_, T> = match input {
            Source::Read(s) => Source::Read(bytemuck::cast_slice(s)),
            Source::Write(s) => Source::Write(bytemuck::cast_slice_mut(s)),
        };
        let output: &mut [T] = bytemuck::cast_slice_mut(output);
        if let Some(grouped) = self.grouped.as_mut() {
            return grouped.transform(direction, input.get(), output, &mut self.times);
        }
        self.transform_scalars(direction, input, output)
    }

    /// [`Engine::transform`] on scalars whose lengths are known to be right on every rank
    /// (a group's plan run by [`crate::groups::Grouped`]). Collective.
    pub(crate) fn transform_scalars(
        &mut self,
        direction: Direction,
        input: Source<'_, T>,
        output: &mut [T],
    ) -> Result<()> {
        let blocks = self.shared_call(
            direction,
            input.get().as_ptr().cast::<u8>(),
            output.as_ptr().cast::<u8>(),
        );
        let destroy_input = self.options.destroy_input;
        let (pass, routes, context) = self.parts(direction, destroy_input, blocks);
        execute(pass, routes, context, (input, None), output)
    }

    /// This rank's elements of type `E` (complex, or real scalars) of an in-place buffer:
    /// the larger of its input and output blocks, or for a real-to-complex plan the largest
    /// of its padded real rows ([`crate::program::PaddedRows`]) and its complex blocks.
    pub(crate) fn in_place_len<E>(&self) -> usize {
        self.program.in_place_scalars * std::mem::size_of::<T>() / std::mem::size_of::<E>()
    }

    /// Runs one direction in place in `buffer` ([`Engine::in_place_len`] elements on every
    /// rank; the input at its start, the output left at its start, a real-to-complex plan's
    /// real block in FFTW's padded layout): the in-place schedule of a plan made with
    /// [`FftOptions::in_place`]. The ranks agree on the buffer lengths first (one small
    /// all-reduce), so a wrong length on any rank is the same error on every rank.
    /// Collective; allocates nothing.
    pub(crate) fn transform_in_place<E: bytemuck::Pod>(
        &mut self,
        direction: Direction,
        buffer: &mut [E],
    ) -> Result<()> {
        if !self.options.in_place {
            return Err(FftError::InPlaceNotPlanned);
        }
        let expected = self.in_place_len::<E>();
        if let Some((rank, (_, expected, actual))) =
            self.agree_buffers(&[("buffer", expected, buffer.len())])
        {
            return Err(FftError::InPlaceLength {
                rank,
                expected,
                actual,
            });
        }
        let forward = direction.is_forward();
        let (input_len, layout) = if forward {
            (self.input_len(), self.pipeline.input)
        } else {
            (self.output_len(), self.pipeline.output)
        };
        // Scalars per element of the input block: 1 real, 2 complex.
        let scalars = if self.pipeline.real[layout] { 1 } else { 2 };
        let buffer: &mut [T] = bytemuck::cast_slice_mut(buffer);
        let padded = self.program.padded;
        if let (true, Some(rows)) = (forward, padded) {
            rows.pack(buffer);
        }
        let (pass, routes, context) = self.parts(direction, true, [None, None]);
        let start = Some(input_len * scalars);
        execute(pass, routes, context, (Source::Read(&[]), start), buffer)?;
        if let (false, Some(rows)) = (forward, padded) {
            rows.spread(buffer);
        }
        Ok(())
    }

    /// One direction's pass, its fused steps' routes, and a run context over this engine's
    /// buffers: what both the two-buffer and the in-place calls hand to [`execute`].
    fn parts(
        &mut self,
        direction: Direction,
        destroy_input: bool,
        blocks: [Option<Arc<BlockWindow>>; 2],
    ) -> (&Pass<T>, &[Route], Context<'_, T>) {
        let forward = direction.is_forward();
        let pass = if forward {
            &self.program.forward
        } else {
            &self.program.backward
        };
        let context = Context {
            work: &mut self.work,
            send: &mut self.send,
            recv: &mut self.recv,
            exchanges: &mut self.exchanges,
            workers: &mut self.workers,
            times: &mut self.times,
            clocks: &mut self.clocks[usize::from(!forward)],
            destroy_input,
            blocks,
        };
        (pass, &self.routes[usize::from(!forward)], context)
    }
}

/// The routes of `pass`'s fused steps, in order: each step's pieces bound to its exchanges'
/// messages ([`Program::piece_parts`]), and where lowering allowed a shared-memory window
/// and the exchanges' group is on one node, the window and the pieces' places in it
/// ([`Program::shared_plan`]). Collective over the groups of the windowed steps.
fn bind_routes<T: Real>(
    pass: &Pass<T>,
    program: &Program<T>,
    exchanges: &[Exchange],
) -> Result<Vec<Route>>
where
    Complex<T>: redist::Element,
{
    let fused = pass.steps.iter().filter_map(|s| match s {
        Step::Fused(f) => Some(&**f),
        _ => None,
    });
    fused.map(|f| route(f, program, exchanges)).collect()
}

fn route<T: Real>(fused: &Fused<T>, program: &Program<T>, exchanges: &[Exchange]) -> Result<Route>
where
    Complex<T>: redist::Element,
{
    let ends = [fused.before, fused.after];
    let bind = |e: Option<usize>, part| Some(exchanges[e?].messages(part?));
    let pieces = program
        .piece_parts(fused)
        .into_iter()
        .map(|[before, after]| [bind(ends[0], before), bind(ends[1], after)])
        .collect();
    let mut shared = None;
    if fused.shared {
        let e = fused
            .before
            .or(fused.after)
            .expect("fused with an exchange");
        if let Some(window) = exchanges[e].group_window(program.shared_bytes(fused))? {
            let plan = program.shared_plan(fused, window.region_len::<Complex<T>>());
            let unpacks = (plan.unpacks.into_iter())
                .map(|part| bind(fused.after, Some(part)).expect("an exchange after"))
                .collect();
            shared = Some(SharedPath {
                window,
                gather: plan.gather,
                unpacks,
                after_offset: plan.after_offset,
            });
        }
    }
    Ok(Route {
        pieces,
        shared,
        direct: None,
    })
}
