//! Running one direction of a [`Program`]: each step on the buffers the schedule names, and
//! each fused step by one of three transports ([`Route`]): straight between the ranks'
//! blocks in shared-memory windows ([`run_direct`]), piece by piece through a window over
//! the exchanges' group ([`run_shared`]), or piece by piece through MPI messages
//! ([`run_pieces`]). Nothing is decided here that the program has not decided, and nothing
//! is allocated.

use crate::error::Result;
use crate::kernels::{LineStep, LocalFft, PlaneEnd, PlaneSteps, Planes, Rows, RunMap};
use crate::profile::StepClock;
use crate::program::{At, Direct, Fused, Kernel, Pass, Step};
use crate::real::Real;
use crate::shared::{BlockWindow, SharedBlock};
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::piecewise::Messages;
use redist::transport::window::GroupWindow;
use redist::{Exchange, StageTimes};
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

/// How a fused step moves its pieces: the program's plain data ([`crate::program`]) bound
/// by the engine to its exchanges and windows.
pub(crate) struct Route {
    /// Per piece, the messages of the exchanges before and after.
    pub pieces: Vec<[Option<Messages>; 2]>,
    /// The pieces' way through a shared-memory window, when the group is on one node.
    pub shared: Option<SharedPath>,
    /// Run maps straight into the peers' blocks, for calls whose blocks lie in the plan's
    /// shared-memory windows ([`SharedBlock`]); made when the first such block is allocated
    /// ([`crate::program::Program::direct_maps`]).
    pub direct: Option<Direct>,
}

impl Route {
    /// The run maps of the route (the window's gather map, the direct maps), to share equal
    /// ones ([`crate::program::Program::intern_maps`]).
    pub(crate) fn maps_mut(&mut self) -> impl Iterator<Item = &mut RunMap> {
        let shared = self.shared.as_mut().map(|s| &mut s.gather);
        let direct = self
            .direct
            .as_mut()
            .map(|d| [&mut d.gather, &mut d.scatter]);
        shared.into_iter().chain(direct.into_iter().flatten())
    }
}

/// How a fused step moves its pieces through a shared-memory window over the exchanges'
/// group: a rank packs (exchange before) or scatters (exchange after) its messages into its
/// own region, and after a [`GroupWindow::sync`] every rank gathers (before) or unpacks
/// (after) its peers' messages straight from their regions. Region layout: the messages of
/// the exchange before, then from `after_offset` those of the exchange after.
pub(crate) struct SharedPath {
    pub window: GroupWindow,
    /// Like [`Fused::gather`], with message offsets into the whole window.
    pub gather: RunMap,
    /// Per piece, the exchange after's messages with receive offsets into the whole window.
    pub unpacks: Vec<Messages>,
    pub after_offset: usize,
}

/// The caller's input: read-only, or writable for a plan made with `destroy_input`.
pub(crate) enum Source<'a, T> {
    /// `forward`/`backward`: the steps only read it.
    Read(&'a [T]),
    /// `forward_destroying`/`backward_destroying`: the steps may use it as scratch.
    Write(&'a mut [T]),
}

impl<T> Source<'_, T> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Source::Read(s) => s.len(),
            Source::Write(s) => s.len(),
        }
    }

    pub(crate) fn get(&self) -> &[T] {
        match self {
            Source::Read(s) => s,
            Source::Write(s) => s,
        }
    }

    fn get_mut(&mut self) -> &mut [T] {
        match self {
            Source::Write(s) => s,
            Source::Read(_) => unreachable!("a plan without destroy_input never writes its input"),
        }
    }
}

/// The buffers of one call, as scalars: the caller's input and output and the two work
/// buffers.
struct Buffers<'a, 'b, T> {
    input: &'a mut Source<'b, T>,
    output: &'a mut [T],
    work: [&'a mut [T]; 2],
}

impl<T> Buffers<'_, '_, T> {
    /// The mutable buffer at `at`.
    fn place(&mut self, at: At) -> &mut [T] {
        match at {
            At::Output => &mut *self.output,
            At::Work(k) => &mut *self.work[k],
            At::Input => self.input.get_mut(),
        }
    }

    /// The source buffer at `from` and the (different) destination buffer at `to`.
    fn split(&mut self, from: At, to: At) -> (&[T], &mut [T]) {
        match (from, to) {
            (At::Input, At::Output) => (self.input.get(), &mut *self.output),
            (At::Input, At::Work(k)) => (self.input.get(), &mut *self.work[k]),
            (from, to) => {
                let (src, dst) = self.split_mut(from, to);
                (src, dst)
            }
        }
    }

    /// [`Buffers::split`] with the source writable too: the caller's input (as either
    /// buffer) only when the plan may destroy it.
    fn split_mut(&mut self, from: At, to: At) -> (&mut [T], &mut [T]) {
        assert_ne!(from, to, "a moving step needs two buffers");
        let [w0, w1] = &mut self.work;
        let mut own: [Option<&mut [T]>; 3] =
            [Some(&mut *self.output), Some(&mut **w0), Some(&mut **w1)];
        let mut take = |at: At| match at {
            At::Output => own[0].take(),
            At::Work(k) => own[1 + k].take(),
            At::Input => None,
        };
        match (from, to) {
            (At::Input, to) => (self.input.get_mut(), take(to).expect("a buffer")),
            (from, At::Input) => (take(from).expect("a buffer"), self.input.get_mut()),
            (from, to) => {
                let dst = take(to).expect("a buffer");
                (take(from).expect("a buffer"), dst)
            }
        }
    }
}

fn as_complex<T: Real>(s: &[T]) -> &[Complex<T>] {
    bytemuck::cast_slice(s)
}

fn as_complex_mut<T: Real>(s: &mut [T]) -> &mut [Complex<T>] {
    // Odd-length views (real buffers) are cut to whole complex elements.
    let even = s.len() / 2 * 2;
    bytemuck::cast_slice_mut(&mut s[..even])
}

/// What one call runs with besides the caller's buffers: the plan's work buffers, message
/// buffers, exchanges, worker scratch and stage times, and the windows of the blocks the
/// caller passed (on every rank alike: see the engine's `shared_call`).
pub(crate) struct Context<'a, T: Real> {
    pub work: &'a mut [SharedBlock<Complex<T>>; 2],
    pub send: &'a mut [Complex<T>],
    pub recv: &'a mut [Complex<T>],
    pub exchanges: &'a mut [Exchange],
    pub workers: &'a mut [AlignedBuf<Complex<T>>],
    pub times: &'a mut StageTimes,
    /// Per step of the pass, its calls and seconds ([`crate::profile`]).
    pub clocks: &'a mut [StepClock],
    pub destroy_input: bool,
    /// The windows of the caller's input and output blocks.
    pub blocks: [Option<Arc<BlockWindow>>; 2],
}

/// Runs `pass` from `input` into `output` (scalar views of the caller's blocks, lengths
/// checked); `routes`: the pass's fused steps' routes, in order. `in_place`: `Some(len)`
/// when `output` holds the input too (its first `len` scalars; `input` is empty): the pass
/// then runs by its in-place schedule ([`Pass::in_place`]), never straight between the
/// ranks' blocks. Collective.
pub(crate) fn execute<T: Real>(
    pass: &Pass<T>,
    routes: &[Route],
    cx: Context<'_, T>,
    (mut input, in_place): (Source<'_, T>, Option<usize>),
    output: &mut [T],
) -> Result<()>
where
    Complex<T>: redist::Element,
{
    let Context {
        work,
        send,
        recv,
        exchanges,
        workers,
        times,
        clocks,
        destroy_input,
        blocks,
    } = cx;
    let work_windows = work.each_ref().map(|w| w.window_arc());
    let [w0, w1] = work;
    let mut buffers = Buffers {
        input: &mut input,
        output,
        work: [
            bytemuck::cast_slice_mut(&mut w0[..]),
            bytemuck::cast_slice_mut(&mut w1[..]),
        ],
    };
    // The window of each buffer a direct step may use.
    let window = |at: At| match at {
        At::Input => blocks[0].as_deref(),
        At::Output => blocks[1].as_deref(),
        At::Work(k) => work_windows[k].as_deref(),
    };
    let last_transform = pass
        .steps
        .iter()
        .rposition(|s| !matches!(s, Step::Exchange { .. }));
    let mut routes = routes.iter();
    let (dests, mut at, mut len) = match (in_place, &pass.in_place) {
        (None, _) => (&pass.dests[..], At::Input, buffers.input.len()),
        (Some(len), Some(dests)) => (&dests[..], At::Output, len),
        (Some(_), None) => unreachable!("in-place calls only on plans with an in-place schedule"),
    };
    for (i, step) in pass.steps.iter().enumerate() {
        let scale = if Some(i) == last_transform {
            pass.scale
        } else {
            T::one()
        };
        let to = dests[i];
        let (start, stages) = (Instant::now(), *times);
        len = match step {
            Step::Fft(local) => run_fft(local, &mut buffers, (at, to), len, scale, workers, times),
            Step::Line { step, .. } => {
                run_line(step, &mut buffers, (at, to), len, scale, workers, times)
            }
            Step::Planes(planes) => {
                let writable = at != At::Input || destroy_input;
                let ends = (at, to, writable);
                run_planes(planes, &mut buffers, ends, len, scale, workers, times)
            }
            Step::Exchange { index, real } => {
                let exchange = &mut exchanges[*index];
                let (src, dst) = buffers.split(at, to);
                let messages = (&mut *send, &mut *recv);
                run_exchange(exchange, *real, (src, dst), len, messages, times)?
            }
            Step::Fused(fused) => {
                let route = routes.next().expect("a route per fused step");
                let messages = (&mut *send, &mut *recv);
                let work = (scale, &mut *workers, &mut *times);
                let direct = route.direct.as_ref().filter(|_| in_place.is_none());
                let ends = (at, to, direct.and_then(|d| windows_of(fused, d, &window)));
                run_fused(
                    fused,
                    route,
                    exchanges,
                    &mut buffers,
                    ends,
                    len,
                    messages,
                    work,
                )?
            }
        };
        clocks[i].add(start.elapsed(), &stages, times);
        at = to;
    }
    debug_assert_eq!(at, At::Output, "every transform ends in the output buffer");
    debug_assert!(
        len == buffers.output.len() || (in_place.is_some() && len <= buffers.output.len())
    );
    Ok(())
}

/// The windows a direct step reads and writes (`direct`'s buffers' windows, through
/// `window`), when the caller's blocks give it every one it needs: only then does it run
/// straight between the ranks' blocks.
fn windows_of<'w, T: Real>(
    fused: &Fused<T>,
    direct: &'w Direct,
    window: &impl Fn(At) -> Option<&'w BlockWindow>,
) -> Option<(&'w Direct, Windows<'w>)> {
    let from = fused.before.and(window(direct.src));
    let into = fused.after.and(window(direct.dst));
    let all = from.is_some() == fused.before.is_some() && into.is_some() == fused.after.is_some();
    all.then_some((direct, (from, into)))
}

/// The windows a direct step reads from and writes into.
type Windows<'w> = (Option<&'w BlockWindow>, Option<&'w BlockWindow>);

/// A fused step from `at` to `to`: straight between the ranks' blocks when the caller's
/// blocks lie in the plan's windows (`direct`), else through the group's window, else
/// through messages. Returns the scalars it leaves in `to`.
#[allow(clippy::too_many_arguments)]
fn run_fused<T: Real>(
    fused: &Fused<T>,
    route: &Route,
    exchanges: &mut [Exchange],
    buffers: &mut Buffers<'_, '_, T>,
    (at, to, direct): (At, At, Option<(&Direct, Windows<'_>)>),
    len: usize,
    messages: (&mut [Complex<T>], &mut [Complex<T>]),
    work: Work<'_, T>,
) -> Result<usize>
where
    Complex<T>: redist::Element,
{
    let (src, src_len, dst, dst_scalars) = fused_views(fused, exchanges, buffers, (at, to), len);
    let views = ((src, src_len), (dst, dst_scalars / 2));
    match (direct, &route.shared) {
        (Some((direct, windows)), _) => {
            debug_assert_eq!((direct.src, direct.dst), (at, to));
            run_direct(fused, direct, windows, (src, dst), work)?
        }
        (None, Some(shared)) => run_shared(fused, route, shared, exchanges, views, work)?,
        (None, None) => run_pieces(fused, route, exchanges, views, messages, work)?,
    }
    Ok(dst_scalars)
}

/// FFTs along local axes, in place or from the buffer before.
fn run_fft<T: Real>(
    local: &LocalFft<T>,
    buffers: &mut Buffers<'_, '_, T>,
    (at, to): (At, At),
    len: usize,
    scale: T,
    workers: &mut [AlignedBuf<Complex<T>>],
    times: &mut StageTimes,
) -> usize {
    let t = Instant::now();
    if at != to {
        let (src, dst) = buffers.split(at, to);
        let input = Some(as_complex(&src[..len]));
        local.run(as_complex_mut(&mut dst[..len]), input, scale, workers);
    } else {
        let data = buffers.place(at);
        local.run(as_complex_mut(&mut data[..len]), None, scale, workers);
    }
    times.fft += t.elapsed().as_secs_f64();
    len
}

/// A line step (real, real-to-real, padded), in or out of place.
fn run_line<T: Real>(
    step: &LineStep<T>,
    buffers: &mut Buffers<'_, '_, T>,
    (at, to): (At, At),
    len: usize,
    scale: T,
    workers: &mut [AlignedBuf<Complex<T>>],
    times: &mut StageTimes,
) -> usize {
    let t = Instant::now();
    let out_len = step.output_scalars();
    if at != to {
        let (src, dst) = buffers.split(at, to);
        step.run(&mut dst[..out_len], Some(&src[..len]), scale, workers);
    } else {
        let data = buffers.place(at);
        step.run(&mut data[..len], None, scale, workers);
    }
    times.fft += t.elapsed().as_secs_f64();
    out_len
}

/// An r2c or c2r step with its FFTs, one sub-block at a time; a source that is not the
/// caller's untouchable input (`writable`) may be transformed in place on the way (a c2r's
/// FFTs: no copy of each plane).
fn run_planes<T: Real>(
    planes: &PlaneSteps<T>,
    buffers: &mut Buffers<'_, '_, T>,
    (at, to, writable): (At, At, bool),
    len: usize,
    scale: T,
    workers: &mut [AlignedBuf<Complex<T>>],
    times: &mut StageTimes,
) -> usize {
    let t = Instant::now();
    let out_len = planes.output_scalars();
    if writable {
        let (src, dst) = buffers.split_mut(at, to);
        planes.run_writable(&mut dst[..out_len], &mut src[..len], scale, workers);
    } else {
        let (src, dst) = buffers.split(at, to);
        planes.run(&mut dst[..out_len], &src[..len], scale, workers);
    }
    times.fft += t.elapsed().as_secs_f64();
    out_len
}

/// An exchange on its own: pack, move, unpack.
fn run_exchange<T: Real>(
    exchange: &mut Exchange,
    real: bool,
    (src, dst): (&[T], &mut [T]),
    len: usize,
    (send, recv): (&mut [Complex<T>], &mut [Complex<T>]),
    times: &mut StageTimes,
) -> Result<usize>
where
    Complex<T>: redist::Element,
{
    let (s, d) = (exchange.src_len(), exchange.dst_len());
    if real {
        debug_assert_eq!(s, len);
        let (send, recv) = (
            bytemuck::cast_slice_mut(send),
            bytemuck::cast_slice_mut(recv),
        );
        exchange.execute_sized(&src[..s], &mut dst[..d], send, recv, times)?;
        Ok(d)
    } else {
        debug_assert_eq!(2 * s, len);
        let (src, dst) = (as_complex(&src[..2 * s]), as_complex_mut(&mut dst[..2 * d]));
        exchange.execute_sized(src, dst, send, recv, times)?;
        Ok(2 * d)
    }
}

/// Raw views of a fused step's source (complex elements) and destination (scalars): in
/// place, source and destination are one buffer, which the pieces read and write in turn
/// (see [`Fused`]); a real source or destination (r2c or c2r kernel) is cast to complex
/// only for its address.
fn fused_views<T: Real>(
    fused: &Fused<T>,
    exchanges: &[Exchange],
    buffers: &mut Buffers<'_, '_, T>,
    (at, to): (At, At),
    len: usize,
) -> (*mut Complex<T>, usize, *mut Complex<T>, usize) {
    let last = fused
        .after
        .or(fused.before)
        .expect("fused with an exchange");
    // Scalars of the destination: the exchange's, or a c2r kernel's real block.
    let dst_scalars = match (&fused.kernel, fused.after) {
        (Kernel::Planes(kernel), None) => kernel.output_scalars(),
        _ => 2 * exchanges[last].dst_len(),
    };
    if fused.in_place && at == to {
        let data = as_complex_mut(buffers.place(at)).as_mut_ptr();
        (data, len / 2, data, dst_scalars)
    } else {
        let (src, dst) = buffers.split(at, to);
        let dst = dst[..dst_scalars].as_mut_ptr().cast::<Complex<T>>();
        (
            src.as_ptr().cast::<Complex<T>>().cast_mut(),
            len / 2,
            dst,
            dst_scalars,
        )
    }
}

/// A raw view of a block: its start and length in complex elements.
type RawView<T> = (*mut Complex<T>, usize);

/// The scale, worker scratch and stage times a kernel runs with.
type Work<'a, T> = (T, &'a mut [AlignedBuf<Complex<T>>], &'a mut StageTimes);

/// The timed kernel of a fused step over planes `range` of every group, reading the rows
/// of the exchange before from `from` (the block `src` itself when there is none) and
/// writing those of the exchange after to `to` (the block `dst` when there is none).
///
/// # Safety
/// As [`crate::kernels::Sweep::run_mapped`] and [`crate::kernels::PlaneKernel::run_mapped`]:
/// the maps fit the blocks and buffers they point into.
unsafe fn kernel<T: Real>(
    fused: &Fused<T>,
    range: Range<usize>,
    (from, to): (Rows<'_, T>, Rows<'_, T>),
    (src, dst): (*mut Complex<T>, *mut Complex<T>),
    (scale, workers, times): Work<'_, T>,
) {
    let inner = fused.kernel.row_len();
    let from = match fused.before {
        Some(_) => from,
        None => Rows::block(src, inner),
    };
    let to = match fused.after {
        Some(_) => to,
        None => Rows::block(dst, inner),
    };
    let planes = Planes {
        groups: fused.groups,
        count: fused.count,
        range,
    };
    let t = Instant::now();
    match &fused.kernel {
        // SAFETY: the caller's contract.
        Kernel::Sweep(sweep) => unsafe { sweep.run_mapped(from, to, scale, workers, &planes) },
        Kernel::Planes(kernel) => {
            // The side without an exchange is a block of whole planes (scalars: a real one
            // for r2c and c2r).
            let from = match fused.before {
                Some(_) => PlaneEnd::Rows(from),
                None => PlaneEnd::Block(src.cast::<T>()),
            };
            let to = match fused.after {
                Some(_) => PlaneEnd::Rows(to),
                None => PlaneEnd::Block(dst.cast::<T>()),
            };
            // SAFETY: the caller's contract; the kernel is fused only on the sides it takes
            // rows on, and with one exchange only.
            unsafe { kernel.run_mapped(from, to, scale, workers, &planes) };
        }
    }
    times.fft += t.elapsed().as_secs_f64();
}

/// A fused step piece by piece through MPI messages: per piece, pack and move the exchange
/// before's messages, run the kernel (rows from the source block and the received messages,
/// rows to the destination block and the messages to send), move and unpack the exchange
/// after's. `src` and `dst` are raw views as [`fused_views`] makes them.
fn run_pieces<T: Real>(
    fused: &Fused<T>,
    route: &Route,
    exchanges: &mut [Exchange],
    ((src, src_len), (dst, dst_len)): (RawView<T>, RawView<T>),
    (send, recv): (&mut [Complex<T>], &mut [Complex<T>]),
    (scale, workers, times): Work<'_, T>,
) -> Result<()>
where
    Complex<T>: redist::Element,
{
    for (range, [before, after]) in fused.pieces.iter().zip(&route.pieces) {
        if let (Some(e), Some(m)) = (fused.before, before) {
            let t = Instant::now();
            // SAFETY: `src` holds `src_len` elements, not written meanwhile.
            let src = unsafe { std::slice::from_raw_parts(src, src_len) };
            exchanges[e].pack_piece(m, src, send);
            times.pack += t.elapsed().as_secs_f64();
            let t = Instant::now();
            exchanges[e].communicate_piece(m, send, recv)?;
            times.comm += t.elapsed().as_secs_f64();
        }
        let inner = fused.kernel.row_len();
        let rows = (
            Rows::from_map(&fused.gather, src, recv.as_mut_ptr(), inner),
            Rows::from_map(&fused.scatter, dst, send.as_mut_ptr(), inner),
        );
        // SAFETY: the run maps come from the exchanges' pieces for exactly these block and
        // message lengths; the rows the gather names are only read and those the scatter
        // names are disjoint; in place, every own row is read and written at the same offset
        // by the same tile.
        let work = (scale, &mut *workers, &mut *times);
        unsafe { kernel(fused, range.clone(), rows, (src, dst), work) };
        if let (Some(e), Some(m)) = (fused.after, after) {
            let t = Instant::now();
            exchanges[e].communicate_piece(m, send, recv)?;
            times.comm += t.elapsed().as_secs_f64();
            let t = Instant::now();
            // SAFETY: `dst` holds `dst_len` elements; no other view of it is in use.
            let dst = unsafe { std::slice::from_raw_parts_mut(dst, dst_len) };
            exchanges[e].unpack_piece(m, recv, dst);
            times.unpack += t.elapsed().as_secs_f64();
        }
    }
    Ok(())
}

/// A fused step through its shared-memory window (see [`SharedPath`]): per piece, pack the
/// exchange before's messages into this rank's region, sync, run the kernel gathering from
/// every region and scattering the exchange after's messages into this rank's region, sync,
/// unpack from every region; a step with one exchange syncs once more per piece, so nobody
/// overwrites a region that a peer still reads.
fn run_shared<T: Real>(
    fused: &Fused<T>,
    route: &Route,
    shared: &SharedPath,
    exchanges: &[Exchange],
    ((src, src_len), (dst, dst_len)): (RawView<T>, RawView<T>),
    (scale, workers, times): Work<'_, T>,
) -> Result<()>
where
    Complex<T>: redist::Element,
{
    let window = &shared.window;
    let own = window.own::<Complex<T>>();
    let region = window.region_len::<Complex<T>>();
    let one_sided = fused.before.is_none() || fused.after.is_none();
    let sync = |times: &mut StageTimes| -> Result<()> {
        let t = Instant::now();
        window.sync()?;
        times.comm += t.elapsed().as_secs_f64();
        Ok(())
    };
    for (k, (range, [before, _])) in fused.pieces.iter().zip(&route.pieces).enumerate() {
        if let (Some(e), Some(m)) = (fused.before, before) {
            let t = Instant::now();
            // SAFETY: `src` holds `src_len` elements, not written meanwhile; this rank's
            // region is not read by anyone until the sync below.
            let (src, send) = unsafe {
                (
                    std::slice::from_raw_parts(src, src_len),
                    std::slice::from_raw_parts_mut(own, region),
                )
            };
            exchanges[e].pack_piece(m, src, send);
            times.pack += t.elapsed().as_secs_f64();
            sync(times)?;
        }
        let inner = fused.kernel.row_len();
        let rows = (
            Rows::from_map(&shared.gather, src, window.base(), inner),
            Rows::from_map(
                &fused.scatter,
                dst,
                own.wrapping_add(shared.after_offset),
                inner,
            ),
        );
        // SAFETY: as in the message path; the peers' regions are only read, and this rank's
        // region (the exchange after's part of it) is written where no peer reads until the
        // next sync.
        let work = (scale, &mut *workers, &mut *times);
        unsafe { kernel(fused, range.clone(), rows, (src, dst), work) };
        if let Some(e) = fused.after {
            sync(times)?;
            let t = Instant::now();
            // SAFETY: nobody writes the window until the next sync; `dst` holds `dst_len`
            // elements and no other view of it is in use.
            let (all, dst) = unsafe {
                (
                    window.all::<Complex<T>>(),
                    std::slice::from_raw_parts_mut(dst, dst_len),
                )
            };
            exchanges[e].unpack_piece(&shared.unpacks[k], all, dst);
            times.unpack += t.elapsed().as_secs_f64();
        }
        if one_sided {
            sync(times)?;
        }
    }
    Ok(())
}

/// A fused step straight between the ranks' blocks (see [`Direct`]): sync, every plane of
/// this rank's block of the kernel, reading the exchange before's rows from the windows'
/// blocks (`from`, or the block `src`) and writing the exchange after's rows into them
/// (`to`, or the block `dst`), sync.
fn run_direct<T: Real>(
    fused: &Fused<T>,
    direct: &Direct,
    (from, to): (Option<&BlockWindow>, Option<&BlockWindow>),
    (src, dst): (*mut Complex<T>, *mut Complex<T>),
    (scale, workers, times): Work<'_, T>,
) -> Result<()> {
    let sync = |times: &mut StageTimes| -> Result<()> {
        let t = Instant::now();
        match (from, to) {
            (Some(a), Some(b)) if !std::ptr::eq(a, b) => {
                GroupWindow::sync_all(&[&a.window, &b.window])?
            }
            (Some(a), _) | (None, Some(a)) => a.window.sync()?,
            (None, None) => unreachable!("a fused step has an exchange"),
        }
        times.comm += t.elapsed().as_secs_f64();
        Ok(())
    };
    let inner = fused.kernel.row_len();
    let base = |w: Option<&BlockWindow>| w.map_or(std::ptr::null_mut(), |w| w.window.base());
    let rows = (
        Rows::from_map(&direct.gather, std::ptr::null_mut(), base(from), inner),
        Rows::from_map(&direct.scatter, std::ptr::null_mut(), base(to), inner),
    );
    sync(times)?;
    // SAFETY: the maps address every rank's block in the windows, whose regions hold them;
    // this rank reads and writes only the rows of its own block of the kernel's layout,
    // which no other rank touches between the two syncs (a step reads and writes one buffer
    // only when every element stays where it is).
    let work = (scale, &mut *workers, &mut *times);
    unsafe { kernel(fused, 0..fused.count, rows, (src, dst), work) };
    sync(times)
}
