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

        let work_len = pipeline
            .layouts
            .iter()
            .map(|l| l.local_len(rank))
            .max()
            .unwrap_or(0);
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
            exchanges,
            buffers: Buffers {
                work: [huge_vec(work_len), huge_vec(work_len)],
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

    /// Runs `steps`, moving the data from `input` through the two work buffers to `output`;
    /// the scale is applied in the last FFT step. Each exchange reads one buffer and writes
    /// another (the input, a work buffer, or the output after the last exchange) through the
    /// message buffers, so no stage overwrites data it still reads.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        steps: &[Step<T>],
        exchanges: &mut [Exchange],
        buffers: &mut Buffers<T>,
        workers: &mut [Vec<Complex<T>>],
        times: &mut StageTimes,
        scale: T,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<()> {
        let last_exchange = steps.iter().rposition(|s| matches!(s, Step::Exchange(_)));
        let last_fft = steps.iter().rposition(|s| matches!(s, Step::Fft(_)));
        let mut at = At::Input;
        let mut len = input.len();
        let Buffers {
            work: [w0, w1],
            send,
            recv,
        } = buffers;
        for (i, step) in steps.iter().enumerate() {
            let step_scale = if Some(i) == last_fft { scale } else { T::one() };
            // The buffer holding the data (when it is a work buffer) and the other one.
            let (cur, other) = if at == At::Work(1) {
                (&mut *w1, &mut *w0)
            } else {
                (&mut *w0, &mut *w1)
            };
            let next_work = if at == At::Work(0) { 1 } else { 0 };
            match step {
                Step::Fft(sweep) => {
                    let t = Instant::now();
                    match at {
                        At::Input => {
                            // After the last exchange (or with none) the data belongs in output.
                            if last_exchange.is_none_or(|e| i > e) {
                                sweep.run(output, Some(input), step_scale, workers);
                                at = At::Output;
                            } else {
                                sweep.run(&mut cur[..len], Some(input), step_scale, workers);
                                at = At::Work(0);
                            }
                        }
                        At::Work(_) => sweep.run(&mut cur[..len], None, step_scale, workers),
                        At::Output => sweep.run(output, None, step_scale, workers),
                    }
                    times.fft += t.elapsed().as_secs_f64();
                }
                Step::Exchange(e) => {
                    let exchange = &mut exchanges[*e];
                    let (src_len, dst_len) = (exchange.src_len(), exchange.dst_len());
                    debug_assert_eq!(src_len, len);
                    let (send, recv) = (&mut send[..], &mut recv[..]);
                    let to_output = Some(i) == last_exchange;
                    // Input → cur (w0); a work buffer → the other one; the last → output.
                    let (src, dst): (&[Complex<T>], &mut [Complex<T>]) = match (at, to_output) {
                        (At::Input, true) => (input, &mut output[..]),
                        (At::Input, false) => (input, &mut cur[..dst_len]),
                        (At::Work(_), true) => (&cur[..src_len], &mut output[..]),
                        (At::Work(_), false) => (&cur[..src_len], &mut other[..dst_len]),
                        (At::Output, _) => unreachable!("no exchange follows the output"),
                    };
                    exchange.execute(src, dst, send, recv, times)?;
                    at = if to_output {
                        At::Output
                    } else {
                        At::Work(next_work)
                    };
                    len = dst_len;
                }
            }
        }
        debug_assert_eq!(at, At::Output, "every transform ends in the output buffer");
        Ok(())
    }
}
