//! [`FftPlan`]: a distributed complex-to-complex FFT, planned once and run many times.

use crate::error::{FftError, Result};
use crate::local::LocalFft;
use crate::options::FftOptions;
use crate::real::Real;
use crate::stages::{pipeline, resolve_grid, Pipeline, Stage};
use mpi::topology::Communicator;
use num_complex::Complex;
use redist::alloc::huge_vec;
use redist::{Element, Exchange, ExchangePlan, Layout, ProcessGrid, StageTimes};
use rustfft::FftPlanner;
use std::time::Instant;

/// A stage made ready to run.
enum Step<T: Real> {
    /// 1-D FFTs along one or more local axes of the current block.
    Fft(LocalFft<T>),
    Exchange(usize),
}

/// The plan's memory: two data buffers of the largest local block over all layouts, and the
/// message buffers of the largest exchange (the part that goes to other ranks).
struct Buffers<T> {
    work: [Vec<Complex<T>>; 2],
    send: Vec<Complex<T>>,
    recv: Vec<Complex<T>>,
}

/// Where the data of a transform is between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Input,
    Work(usize),
    Output,
}

/// A distributed complex-to-complex FFT of a d-dimensional array over all processes of a
/// communicator, for `T = f64` or `f32`.
///
/// Make it once (collective), ask it for the local blocks, then call [`FftPlan::forward`] and
/// [`FftPlan::backward`] as often as needed: they allocate nothing. Forward input and backward
/// output are in [`FftPlan::input_layout`] (C order, grid dimension `j` splits axis `j`);
/// forward output and backward input are in [`FftPlan::output_layout`] (the same as the input
/// layout unless the output is transposed).
///
/// ```no_run
/// use fft_core::{FftOptions, FftPlan, Normalization};
/// use num_complex::Complex;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let opts = FftOptions::default().normalization(Normalization::Backward);
/// let mut plan = FftPlan::<f64>::new(&world, &[64, 64, 64], opts).unwrap();
/// let input = vec![Complex::new(1.0, 0.0); plan.input_len()];
/// let mut spectrum = vec![Complex::default(); plan.output_len()];
/// let mut back = vec![Complex::default(); plan.input_len()];
/// plan.forward(&input, &mut spectrum).unwrap();
/// plan.backward(&spectrum, &mut back).unwrap();
/// assert!((back[0].re - 1.0).abs() < 1e-12);
/// ```
pub struct FftPlan<T: Real>
where
    Complex<T>: Element,
{
    grid: ProcessGrid,
    pipeline: Pipeline,
    options: FftOptions,
    forward_steps: Vec<Step<T>>,
    backward_steps: Vec<Step<T>>,
    /// Where each forward / backward step leaves the data.
    forward_dests: Vec<At>,
    backward_dests: Vec<At>,
    exchanges: Vec<Exchange>,
    buffers: Buffers<T>,
    workers: Vec<Vec<Complex<T>>>,
    scale_forward: T,
    scale_backward: T,
    times: StageTimes,
}

impl<T: Real> std::fmt::Debug for FftPlan<T>
where
    Complex<T>: Element,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FftPlan")
            .field("shape", &self.global_shape())
            .field("grid", &self.grid.shape().dims())
            .field("options", &self.options)
            .finish()
    }
}

impl<T: Real> FftPlan<T>
where
    Complex<T>: Element,
{
    /// Plans the transform of a global array of `shape` over all processes of `comm`;
    /// collective. Every check uses global arguments only, so all ranks return the same error.
    pub fn new<C: Communicator>(comm: &C, shape: &[usize], options: FftOptions) -> Result<Self> {
        let ranks = comm.size() as usize;
        let grid_shape = resolve_grid(shape, ranks, &options.grid)?;
        let pipeline = pipeline(shape, grid_shape.clone(), options.transposed_out)?;
        // Refuse (on every rank alike) a plan that would not fit, before allocating.
        crate::memory::check_plan_memory(comm, &pipeline, std::mem::size_of::<Complex<T>>())?;
        let grid = ProcessGrid::new(comm, grid_shape)?;
        let rank = grid.rank();

        let mut exchanges = Vec::new();
        let mut planner = FftPlanner::<T>::new();
        let mut make_steps = |stages: &[Stage], inverse: bool| -> Result<Vec<Step<T>>> {
            let mut steps = Vec::new();
            let mut i = 0;
            while i < stages.len() {
                match stages[i] {
                    Stage::Fft { layout, .. } => {
                        // Consecutive FFT stages on one layout run as one fused step.
                        let mut ffts = Vec::new();
                        let mut positions = Vec::new();
                        let l = &pipeline.layouts[layout];
                        while let Some(&Stage::Fft { layout: same, axis }) = stages.get(i) {
                            if same != layout {
                                break;
                            }
                            let n = shape[axis];
                            ffts.push(if inverse {
                                planner.plan_fft_inverse(n)
                            } else {
                                planner.plan_fft_forward(n)
                            });
                            positions.push(l.memory_order().position_of(axis));
                            i += 1;
                        }
                        let memory_shape = l.local_shape_in_memory(rank);
                        steps.push(Step::Fft(LocalFft::new(ffts, &memory_shape, &positions)));
                    }
                    Stage::Exchange { from, to } => {
                        let plan =
                            ExchangePlan::new(&pipeline.layouts[from], &pipeline.layouts[to])?;
                        exchanges.push(Exchange::new(&grid, &plan, options.method)?);
                        steps.push(Step::Exchange(exchanges.len() - 1));
                        i += 1;
                    }
                }
            }
            Ok(steps)
        };
        let forward_steps = make_steps(&pipeline.forward, false)?;
        let backward_steps = make_steps(&pipeline.backward, true)?;

        let len_of = |layout: usize| pipeline.layouts[layout].local_len(rank);
        let layouts_after = |steps: &[Step<T>], stages: &[Stage]| -> Vec<usize> {
            // Walk stages and steps together: an FFT step covers consecutive FFT stages.
            let mut out = Vec::with_capacity(steps.len());
            let mut k = 0;
            for step in steps {
                match step {
                    Step::Fft(_) => {
                        let Stage::Fft { layout, .. } = stages[k] else {
                            unreachable!("steps follow stages")
                        };
                        while let Some(&Stage::Fft { layout: same, .. }) = stages.get(k) {
                            if same != layout {
                                break;
                            }
                            k += 1;
                        }
                        out.push(layout);
                    }
                    Step::Exchange(_) => {
                        let Stage::Exchange { to, .. } = stages[k] else {
                            unreachable!("steps follow stages")
                        };
                        k += 1;
                        out.push(to);
                    }
                }
            }
            out
        };
        let forward_lens: Vec<usize> = layouts_after(&forward_steps, &pipeline.forward)
            .into_iter()
            .map(len_of)
            .collect();
        let backward_lens: Vec<usize> = layouts_after(&backward_steps, &pipeline.backward)
            .into_iter()
            .map(len_of)
            .collect();
        let movers = |steps: &[Step<T>]| -> Vec<bool> {
            steps
                .iter()
                .enumerate()
                .map(|(i, s)| i == 0 || matches!(s, Step::Exchange(_)))
                .collect()
        };
        let (forward_dests, fw) = schedule(
            &movers(&forward_steps),
            &forward_lens,
            len_of(pipeline.output),
        );
        let (backward_dests, bw) = schedule(
            &movers(&backward_steps),
            &backward_lens,
            len_of(pipeline.input),
        );
        let work_lens = [fw[0].max(bw[0]), fw[1].max(bw[1])];
        let send_len = exchanges.iter().map(Exchange::send_len).max().unwrap_or(0);
        let recv_len = exchanges.iter().map(Exchange::recv_len).max().unwrap_or(0);
        let scratch_len = forward_steps
            .iter()
            .chain(&backward_steps)
            .map(|s| match s {
                Step::Fft(local) => local.scratch_len(),
                Step::Exchange(_) => 0,
            })
            .max()
            .unwrap_or(0);
        let workers = (0..rayon::current_num_threads().max(1))
            .map(|_| vec![Complex::default(); scratch_len])
            .collect();
        let total: usize = shape.iter().product();
        let (f, b) = options.normalization.factors(total);
        Ok(Self {
            grid,
            pipeline,
            forward_steps,
            backward_steps,
            forward_dests,
            backward_dests,
            exchanges,
            buffers: Buffers {
                work: [huge_vec(work_lens[0]), huge_vec(work_lens[1])],
                send: huge_vec(send_len),
                recv: huge_vec(recv_len),
            },
            workers,
            scale_forward: T::of(f),
            scale_backward: T::of(b),
            times: StageTimes::default(),
            options,
        })
    }

    /// The global shape.
    pub fn global_shape(&self) -> &[usize] {
        self.pipeline.layouts[0].global_shape()
    }

    /// The options the plan was made with.
    pub fn options(&self) -> &FftOptions {
        &self.options
    }

    /// The processor grid.
    pub fn grid(&self) -> &ProcessGrid {
        &self.grid
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.grid.rank()
    }

    /// Layout of the forward input and backward output (C order).
    pub fn input_layout(&self) -> &Layout {
        &self.pipeline.layouts[self.pipeline.input]
    }

    /// Layout of the forward output and backward input.
    pub fn output_layout(&self) -> &Layout {
        &self.pipeline.layouts[self.pipeline.output]
    }

    /// All pencil layouts the transform passes through.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Length of this rank's input block.
    pub fn input_len(&self) -> usize {
        self.input_layout().local_len(self.rank())
    }

    /// Length of this rank's output block.
    pub fn output_len(&self) -> usize {
        self.output_layout().local_len(self.rank())
    }

    /// Elements of work memory the plan holds besides the caller's input and output: two data
    /// buffers of the largest local block over the layouts, send and receive buffers for the
    /// part of the largest exchange that goes to other ranks ((P_j − 1)/P_j of a block for a
    /// group of P_j), and per-thread FFT scratch.
    pub fn work_len(&self) -> usize {
        let b = &self.buffers;
        b.work.iter().map(Vec::len).sum::<usize>()
            + b.send.len()
            + b.recv.len()
            + self.workers.iter().map(Vec::len).sum::<usize>()
    }

    /// Seconds spent per stage since the plan was made or [`FftPlan::reset_times`].
    pub fn times(&self) -> StageTimes {
        self.times
    }

    /// Zeroes the stage timers.
    pub fn reset_times(&mut self) {
        self.times = StageTimes::default();
    }

    /// The forward transform of `input` (input layout) into `output` (output layout).
    /// Collective; `input` is not modified.
    pub fn forward(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.check(input, self.input_len(), output, self.output_len())?;
        let scale = self.scale_forward;
        Self::execute(
            &self.forward_steps,
            &self.forward_dests,
            &mut self.exchanges,
            &mut self.buffers,
            &mut self.workers,
            &mut self.times,
            scale,
            input,
            output,
        )
    }

    /// The backward transform of `input` (output layout) into `output` (input layout).
    /// Collective; `input` is not modified.
    pub fn backward(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.check(input, self.output_len(), output, self.input_len())?;
        let scale = self.scale_backward;
        Self::execute(
            &self.backward_steps,
            &self.backward_dests,
            &mut self.exchanges,
            &mut self.buffers,
            &mut self.workers,
            &mut self.times,
            scale,
            input,
            output,
        )
    }

    fn check(
        &self,
        input: &[Complex<T>],
        input_len: usize,
        output: &[Complex<T>],
        output_len: usize,
    ) -> Result<()> {
        if input.len() != input_len {
            return Err(FftError::BufferLength {
                buffer: "input",
                expected: input_len,
                actual: input.len(),
            });
        }
        if output.len() != output_len {
            return Err(FftError::BufferLength {
                buffer: "output",
                expected: output_len,
                actual: output.len(),
            });
        }
        Ok(())
    }

    /// Runs `steps`: the data moves from `input` to the buffers `dests` names (an FFT step
    /// works in place, except a first one, which reads `input`; an exchange reads one buffer
    /// and writes another) and ends in `output`. The last FFT step applies `scale`.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        steps: &[Step<T>],
        dests: &[At],
        exchanges: &mut [Exchange],
        buffers: &mut Buffers<T>,
        workers: &mut [Vec<Complex<T>>],
        times: &mut StageTimes,
        scale: T,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<()> {
        let last_fft = steps.iter().rposition(|s| matches!(s, Step::Fft(_)));
        let mut at = At::Input;
        let mut len = input.len();
        let Buffers { work, send, recv } = buffers;
        for (i, step) in steps.iter().enumerate() {
            let step_scale = if Some(i) == last_fft { scale } else { T::one() };
            match step {
                Step::Fft(local) => {
                    let t = Instant::now();
                    if at == At::Input {
                        let (src, dst) = split(input, output, work, at, dests[i]);
                        local.run(&mut dst[..len], Some(&src[..len]), step_scale, workers);
                        at = dests[i];
                    } else {
                        let data = place(output, work, at);
                        local.run(&mut data[..len], None, step_scale, workers);
                    }
                    times.fft += t.elapsed().as_secs_f64();
                }
                Step::Exchange(e) => {
                    let exchange = &mut exchanges[*e];
                    let (src_len, dst_len) = (exchange.src_len(), exchange.dst_len());
                    debug_assert_eq!(src_len, len);
                    let (src, dst) = split(input, output, work, at, dests[i]);
                    exchange.execute(&src[..src_len], &mut dst[..dst_len], send, recv, times)?;
                    at = dests[i];
                    len = dst_len;
                }
            }
        }
        debug_assert_eq!(at, At::Output, "every transform ends in the output buffer");
        Ok(())
    }
}

/// The mutable buffer at `at` (not the input).
fn place<'a, C>(output: &'a mut [C], work: &'a mut [Vec<C>; 2], at: At) -> &'a mut [C] {
    match at {
        At::Output => output,
        At::Work(k) => &mut work[k],
        At::Input => unreachable!("the input is read-only"),
    }
}

/// The source buffer at `from` and the (different) destination buffer at `to`.
fn split<'a, C>(
    input: &'a [C],
    output: &'a mut [C],
    work: &'a mut [Vec<C>; 2],
    from: At,
    to: At,
) -> (&'a [C], &'a mut [C]) {
    let [w0, w1] = work;
    match (from, to) {
        (At::Input, to) => (input, place_split(output, w0, w1, to)),
        (At::Output, At::Work(0)) => (output, w0),
        (At::Output, At::Work(1)) => (output, w1),
        (At::Work(0), At::Output) => (w0, output),
        (At::Work(1), At::Output) => (w1, output),
        (At::Work(0), At::Work(1)) => (w0, w1),
        (At::Work(1), At::Work(0)) => (w1, w0),
        (from, to) => unreachable!("a step cannot move data from {from:?} to {to:?}"),
    }
}

fn place_split<'a, C>(
    output: &'a mut [C],
    w0: &'a mut [C],
    w1: &'a mut [C],
    to: At,
) -> &'a mut [C] {
    match to {
        At::Output => output,
        At::Work(0) => w0,
        At::Work(1) => w1,
        other => unreachable!("no destination {other:?}"),
    }
}

/// Where each step leaves the data, and the lengths the two work buffers need.
///
/// `moves[i]` says whether step `i` writes a new buffer (the first step, which reads the
/// caller's input, and every exchange); `lens[i]` is the local length after step `i`. Walking
/// back from the end, movers alternate between the output and work buffer 0, so a plan needs
/// only one work buffer, as long as every layout placed in the output fits in it (all of them,
/// for even splits); otherwise the output is used last only and work buffers 0 and 1
/// alternate.
fn schedule(moves: &[bool], lens: &[usize], output_len: usize) -> (Vec<At>, [usize; 2]) {
    let movers: Vec<usize> = (0..moves.len()).filter(|&i| moves[i]).collect();
    let assign = |two_buffers: bool| -> Vec<(usize, At)> {
        movers
            .iter()
            .rev()
            .enumerate()
            .map(|(k, &i)| {
                let at = match (two_buffers, k) {
                    (_, 0) => At::Output,
                    (true, k) if k % 2 == 0 => At::Output,
                    (true, _) => At::Work(0),
                    (false, k) => At::Work((k + 1) % 2),
                };
                (i, at)
            })
            .collect()
    };
    let fits = |a: &[(usize, At)]| {
        a.iter()
            .all(|&(i, at)| at != At::Output || lens[i] <= output_len)
    };
    let two = assign(true);
    let assignment = if fits(&two) { two } else { assign(false) };
    let mut dests = vec![At::Output; moves.len()];
    let mut work_lens = [0, 0];
    let mut current = At::Input;
    let mut next = assignment.iter().rev().peekable();
    for i in 0..moves.len() {
        if let Some(&&(j, at)) = next.peek() {
            if j == i {
                current = at;
                next.next();
            }
        }
        dests[i] = current;
        if let At::Work(k) = current {
            work_lens[k] = work_lens[k].max(lens[i]);
        }
    }
    (dests, work_lens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_work_buffer_when_the_output_fits_every_layout_it_hosts() {
        // FFT (reads input), exchange, FFT, exchange: output, work 0, work 0, output.
        let (dests, lens) = schedule(&[true, true, false, true], &[8, 8, 8, 8], 8);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output]
        );
        assert_eq!(lens, [8, 0]);
    }

    #[test]
    fn two_work_buffers_when_an_intermediate_layout_is_bigger_than_the_output() {
        // A bigger intermediate layout in work buffer 0 is fine...
        let (dests, lens) = schedule(&[true, true, false, true], &[8, 9, 9, 8], 8);
        assert_eq!(
            dests,
            vec![At::Output, At::Work(0), At::Work(0), At::Output]
        );
        assert_eq!(lens, [9, 0]);
        // ...but one that would have to sit in the output needs the second work buffer.
        let (dests, lens) = schedule(&[true, true, false, true, true], &[8, 9, 9, 7, 8], 8);
        assert_eq!(
            dests,
            vec![
                At::Work(0),
                At::Work(1),
                At::Work(1),
                At::Work(0),
                At::Output
            ]
        );
        assert_eq!(lens, [8, 9]);
        // Consecutive movers never share a buffer, and the last lands in the output.
        for moves in [
            vec![true],
            vec![true, true],
            vec![true, false, true, false, true, true],
        ] {
            let n = moves.len();
            for out_len in [1, 5] {
                let (dests, _) = schedule(&moves, &vec![3; n], out_len);
                assert_eq!(dests[n - 1], At::Output);
                let mut prev = At::Input;
                for i in 0..n {
                    if moves[i] {
                        assert_ne!(dests[i], prev, "{moves:?} step {i}");
                    } else {
                        assert_eq!(dests[i], prev);
                    }
                    prev = dests[i];
                }
            }
        }
    }
}
