//! [`Plan`]: a distributed transform of one [`Kind`] ([`C2c`], [`R2c`] or [`R2r`]) and
//! precision, planned once and run many times. [`FftPlan`], [`crate::RealFftPlan`] and
//! [`crate::R2rPlan`] name its three kinds; every method all kinds share is written once,
//! here ([`crate::view`] adds the ndarray ones, [`crate::spectral`] the real-to-complex
//! plan's padded in-place views).

use crate::any_plan::PlanKind;
use crate::engine::{Engine, Source, Spec};
use crate::error::Result;
use crate::options::FftOptions;
use crate::real::Real;
use crate::shared::SharedBlock;
use crate::stages::{Domain, Pipeline};
use mpi::topology::Communicator;
use num_complex::Complex;
use redist::{Element, Layout, ProcessGrid, StageTimes};
use std::marker::PhantomData;

/// Which way a transform goes: forward (input layout to output layout, `exp(-2πi k·n/N)`
/// along FFT axes) or backward (output layout to input layout, the inverse transforms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Input layout to output layout.
    Forward,
    /// Output layout to input layout.
    Backward,
}

impl Direction {
    /// `"forward"` or `"backward"`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Backward => "backward",
        }
    }

    /// Whether this is [`Direction::Forward`].
    pub fn is_forward(self) -> bool {
        self == Direction::Forward
    }
}

/// What a plan computes, as types: the elements of its forward input and output for the
/// precision `T`. Implemented by [`C2c`], [`R2c`] and [`R2r`] only.
pub trait Kind<T: Real>: sealed::Sealed + Send + Sync + 'static
where
    Complex<T>: Element,
{
    /// Forward input element: `Complex<T>` for c2c, `T` for r2c and r2r.
    type In: Element;
    /// Forward output element: `Complex<T>` for c2c and r2c, `T` for r2r.
    type Out: Element;
    /// The kind as a value.
    const KIND: PlanKind;
    /// The plan type's name (for `Debug`).
    const NAME: &'static str;
    /// What the forward transform maps.
    const DOMAIN: Domain;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::C2c {}
    impl Sealed for super::R2c {}
    impl Sealed for super::R2r {}
}

/// Complex to complex ([`FftPlan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct C2c;

/// Real to complex forward, complex to real backward ([`crate::RealFftPlan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct R2c;

/// Real to real ([`crate::R2rPlan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct R2r;

impl<T: Real> Kind<T> for C2c
where
    Complex<T>: Element,
{
    type In = Complex<T>;
    type Out = Complex<T>;
    const KIND: PlanKind = PlanKind::C2c;
    const NAME: &'static str = "FftPlan";
    const DOMAIN: Domain = Domain::Complex;
}

impl<T: Real> Kind<T> for R2c
where
    Complex<T>: Element,
{
    type In = T;
    type Out = Complex<T>;
    const KIND: PlanKind = PlanKind::R2c;
    const NAME: &'static str = "RealFftPlan";
    const DOMAIN: Domain = Domain::RealToComplex;
}

impl<T: Real> Kind<T> for R2r
where
    Complex<T>: Element,
{
    type In = T;
    type Out = T;
    const KIND: PlanKind = PlanKind::R2r;
    const NAME: &'static str = "R2rPlan";
    const DOMAIN: Domain = Domain::Real;
}

/// A distributed transform of kind `K` of a d-dimensional array over all processes of a
/// communicator, for `T = f64` or `f32`: [`FftPlan`] (complex to complex),
/// [`crate::RealFftPlan`] (real to complex and back) or [`crate::R2rPlan`] (real to real).
///
/// Make it once (collective), ask it for the local blocks, then call [`Plan::forward`] and
/// [`Plan::backward`] as often as needed: they allocate nothing. Forward input and backward
/// output are in [`Plan::input_layout`] (C order, grid dimension `j` splits axis `j`);
/// forward output and backward input are in [`Plan::output_layout`] (the same as the input
/// layout unless the output is transposed).
pub struct Plan<K: Kind<T>, T: Real>
where
    Complex<T>: Element,
{
    pub(crate) engine: Engine<T>,
    kind: PhantomData<K>,
}

/// A distributed complex-to-complex FFT of a d-dimensional array over all processes of a
/// communicator, for `T = f64` or `f32`.
///
/// Make it once (collective), ask it for the local blocks, then call [`Plan::forward`] and
/// [`Plan::backward`] as often as needed: they allocate nothing. Forward input and backward
/// output are in [`Plan::input_layout`] (C order, grid dimension `j` splits axis `j`);
/// forward output and backward input are in [`Plan::output_layout`] (the same as the input
/// layout unless the output is transposed).
///
/// Options beyond the grid: [`FftOptions::batch`] (several fields per call, one exchange per
/// stage), [`FftOptions::axes`] (real-to-real axes, applied to the real and imaginary parts
/// separately) and [`FftOptions::padding`] (dealiasing: the input lives on the padded grid).
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
pub type FftPlan<T> = Plan<C2c, T>;

impl<K: Kind<T>, T: Real> std::fmt::Debug for Plan<K, T>
where
    Complex<T>: Element,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(K::NAME)
            .field("shape", &self.global_shape())
            .field("spectral_shape", &self.spectral_shape())
            .field("grid", &self.engine.grid.shape().dims())
            .field("options", &self.engine.options)
            .finish()
    }
}

/// Planning and the accessors.
impl<K: Kind<T>, T: Real> Plan<K, T>
where
    Complex<T>: Element,
{
    /// Plans the transform of a global array of `shape` over all processes of `comm`;
    /// collective. Every check uses global arguments only, so all ranks return the same error.
    /// With padding, `shape` is the spectral resolution and the input lives on the padded grid
    /// ([`Plan::global_shape`]). A real-to-complex plan's `shape` is the real array's, and
    /// `options.axes`, if given, must make the last axis an FFT axis; a real-to-real plan
    /// needs `options.axes`, a real-to-real kind on every axis.
    ///
    /// A 1-D `shape` of a complex plan (or [`FftOptions::one_d`]) makes a distributed 1-D
    /// transform ([`crate::one_d`]): its layouts are slabs of the axis's `rows × cols` matrix
    /// (see [`FftPlan::one_d`], [`FftPlan::input_range_1d`]).
    pub fn new<C: Communicator>(comm: &C, shape: &[usize], options: FftOptions) -> Result<Self> {
        let options = match K::DOMAIN {
            Domain::Complex => crate::one_d::resolve(shape, options, comm.size() as usize)?,
            _ => options,
        };
        let spec = Spec::new(shape, &options, K::DOMAIN)?;
        Ok(Self {
            engine: Engine::new(comm, spec, options)?,
            kind: PhantomData,
        })
    }

    /// What the plan computes.
    pub fn kind(&self) -> PlanKind {
        K::KIND
    }

    /// The physical global shape: of the forward input (the padded grid for padded
    /// plans; the real array for real-input plans). No batch axis.
    pub fn global_shape(&self) -> &[usize] {
        self.input_layout().global_shape()
    }

    /// The spectral global shape: of the forward output (the last axis halved to
    /// `n/2 + 1` for a real-to-complex plan; the unpadded shape for padded ones).
    pub fn spectral_shape(&self) -> &[usize] {
        self.output_layout().global_shape()
    }

    /// Number of fields transformed together.
    pub fn batch(&self) -> usize {
        self.engine.options.batch
    }

    /// Groups the batch is split into ([`FftOptions::groups`], resolved: 1 for a plain
    /// plan).
    pub fn groups(&self) -> usize {
        self.engine.groups()
    }

    /// The options the plan was made with.
    pub fn options(&self) -> &FftOptions {
        &self.engine.options
    }

    /// The processor grid.
    pub fn grid(&self) -> &ProcessGrid {
        &self.engine.grid
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.engine.grid.rank()
    }

    /// Layout of the forward input and backward output (C order), one field.
    pub fn input_layout(&self) -> &Layout {
        &self.engine.pipeline.layouts[self.engine.pipeline.input]
    }

    /// Layout of the forward output and backward input, one field.
    pub fn output_layout(&self) -> &Layout {
        &self.engine.pipeline.layouts[self.engine.pipeline.output]
    }

    /// All layouts the transform passes through (one field; no batch axis).
    pub fn pipeline(&self) -> &Pipeline {
        &self.engine.pipeline
    }

    /// Length of this rank's input: `batch()` blocks of the input layout.
    pub fn input_len(&self) -> usize {
        self.engine.input_len()
    }

    /// Length of this rank's output: `batch()` blocks of the output layout.
    pub fn output_len(&self) -> usize {
        self.engine.output_len()
    }

    /// Work memory the plan holds besides the caller's input and output, in units of
    /// `Complex<T>` (two scalars): up to two work blocks (none when the output, and
    /// with [`FftOptions::destroy_input`] the input, can host every layout in turn: a
    /// c2c slab in either layout), send and receive buffers for the part of the
    /// largest plain exchange that goes to other ranks ((P_j − 1)/P_j of a block for a
    /// group of P_j) or for one piece of a fused one (none when the piece moves
    /// through a shared-memory window, whose regions count instead), and per-thread
    /// transform scratch.
    pub fn work_len(&self) -> usize {
        self.engine.work_len()
    }

    /// Threads per rank the plan's kernels are cut for ([`FftOptions::threads`], or
    /// the rayon pool's size when the plan was made; the most of any rank): each has
    /// its own scratch, so at most this many run a transform's kernels at once.
    pub fn threads(&self) -> usize {
        self.engine.threads()
    }

    /// What the most loaded rank holds, in bytes by purpose, as lowering sized every
    /// rank's program (what [`FftOptions::memory_limit`] is checked against): at
    /// least [`Self::work_len`]'s bytes plus the input and output blocks, on every
    /// rank.
    pub fn memory_estimate(&self) -> crate::memory::MemoryEstimate {
        self.engine.memory
    }

    /// Seconds spent per stage since the plan was made or `reset_times`.
    pub fn times(&self) -> StageTimes {
        self.engine.times
    }

    /// Zeroes the stage timers and the per-step profile's.
    pub fn reset_times(&mut self) {
        self.engine.reset_times();
    }

    /// Every step of the forward program, then of the backward one, on this rank: what it
    /// does, its blocks' bytes, its flops, and its calls and seconds since the plan was made
    /// or [`Plan::reset_times`] (see [`StepProfile`]). Each step's stage split adds up to
    /// [`Plan::times`]. For a batch split into groups, the steps of the group's plan.
    pub fn step_profile(&self) -> Vec<crate::StepProfile> {
        self.engine.step_profile()
    }

    /// A zeroed forward-input block of this rank ([`Plan::input_len`] elements), allocated
    /// by the plan: in a shared-memory window with every rank's when all ranks are on one
    /// node, so that transforms between such blocks move the rows that cross ranks in place,
    /// with no pack or unpack (see [`crate::SharedBlock`]); private memory otherwise.
    /// Collective.
    pub fn alloc_input(&mut self) -> Result<SharedBlock<K::In>> {
        self.engine.alloc_block(true)
    }

    /// A zeroed forward-output block of this rank ([`Plan::output_len`] elements),
    /// allocated like [`Plan::alloc_input`]. Collective.
    pub fn alloc_output(&mut self) -> Result<SharedBlock<K::Out>> {
        self.engine.alloc_block(false)
    }
}

/// The transforms.
impl<K: Kind<T>, T: Real> Plan<K, T>
where
    Complex<T>: Element,
{
    /// The forward transform of `input` (input layout) into `output` (output layout).
    /// Collective; `input` is not modified; allocates nothing. A plan made with
    /// [`FftOptions::destroy_input`] refuses it ([`crate::FftError::InputNotWritable`]): use
    /// [`Plan::forward_destroying`].
    pub fn forward(&mut self, input: &[K::In], output: &mut [K::Out]) -> Result<()> {
        let input = Source::Read(input);
        self.engine.transform(Direction::Forward, input, output)
    }

    /// [`Plan::forward`] that may use `input` as scratch: its contents are undefined
    /// afterwards. With [`FftOptions::destroy_input`] the plan then needs less work memory
    /// (see [`Plan::work_len`]); without it, `input` is left alone.
    ///
    /// ```no_run
    /// use fft_core::{FftOptions, FftPlan};
    /// use num_complex::Complex;
    /// let universe = mpi::initialize().unwrap();
    /// let opts = FftOptions::default().transposed_out(true).destroy_input(true);
    /// let mut plan = FftPlan::<f64>::new(&universe.world(), &[64, 64, 64], opts).unwrap();
    /// let mut field = vec![Complex::new(1.0, 0.0); plan.input_len()];
    /// let mut spectrum = vec![Complex::default(); plan.output_len()];
    /// plan.forward_destroying(&mut field, &mut spectrum).unwrap(); // `field` is scratch now
    /// plan.backward_destroying(&mut spectrum, &mut field).unwrap(); // and `spectrum` too
    /// ```
    pub fn forward_destroying(&mut self, input: &mut [K::In], output: &mut [K::Out]) -> Result<()> {
        let input = Source::Write(input);
        self.engine.transform(Direction::Forward, input, output)
    }

    /// The backward transform of `input` (output layout) into `output` (input layout): the
    /// inverse FFTs (a complex-to-real last axis for a real-to-complex plan, which ignores the
    /// imaginary parts of the modes that must be real, as numpy's `irfftn` does; the inverse
    /// kinds along real-to-real axes). Collective; `input` is not modified (refused with
    /// [`FftOptions::destroy_input`], as for [`Plan::forward`]).
    pub fn backward(&mut self, input: &[K::Out], output: &mut [K::In]) -> Result<()> {
        let input = Source::Read(input);
        self.engine.transform(Direction::Backward, input, output)
    }

    /// [`Plan::backward`] that may use `input` as scratch (see [`Plan::forward_destroying`]):
    /// with [`FftOptions::destroy_input`], a complex-to-real backward then needs no complex
    /// work block, like FFTW's c2r plans.
    pub fn backward_destroying(
        &mut self,
        input: &mut [K::Out],
        output: &mut [K::In],
    ) -> Result<()> {
        let input = Source::Write(input);
        self.engine.transform(Direction::Backward, input, output)
    }

    /// Elements of this rank's buffer for [`Plan::forward_in_place`] and
    /// [`Plan::backward_in_place`]: the larger of [`Plan::input_len`] and
    /// [`Plan::output_len`] (they differ for uneven splits and transposed output). For a
    /// real-to-complex plan, real scalars: the largest of the padded real block
    /// ([`crate::RealFftPlan::padded_input_shape`]) and the complex blocks (two scalars per
    /// element), always even, so [`crate::as_complex`] views all of it.
    pub fn in_place_len(&self) -> usize {
        self.engine.in_place_len::<K::In>()
    }

    /// The forward transform in place: `buffer` ([`Plan::in_place_len`] elements) holds the
    /// input block (input layout) in its first [`Plan::input_len`] elements, and holds the
    /// output block (output layout) in its first [`Plan::output_len`] afterwards; the rest is
    /// scratch. A real-to-complex plan works like FFTW's in-place r2c: the real block lies in
    /// FFTW's padded layout, the last (contiguous) axis of each row padded from `n` to
    /// `2·(n/2 + 1)` scalars ([`crate::RealFftPlan::padded_input_shape`], or
    /// [`crate::RealFftPlan::padded_input_view_mut`] to index it), and the spectrum
    /// afterwards is the first 2·[`Plan::output_len`] scalars, viewed as complex by
    /// [`crate::as_complex`]. Needs a plan made with [`FftOptions::in_place`] (else
    /// [`crate::FftError::InPlaceNotPlanned`]); a buffer of the wrong length on any rank is
    /// [`crate::FftError::InPlaceLength`] on every rank. Collective; allocates nothing; the
    /// plan's work memory ([`Plan::work_len`]) covers it, so a transform needs one block less
    /// than out of place.
    ///
    /// ```no_run
    /// use fft_core::{as_complex, FftOptions, FftPlan, RealFftPlan};
    /// use num_complex::Complex;
    /// let universe = mpi::initialize().unwrap();
    /// let opts = FftOptions::default().in_place(true);
    /// let mut plan = FftPlan::<f64>::new(&universe.world(), &[64, 64, 64], opts.clone()).unwrap();
    /// let mut field = vec![Complex::new(1.0, 0.0); plan.in_place_len()];
    /// plan.forward_in_place(&mut field).unwrap(); // the spectrum: field[..plan.output_len()]
    /// plan.backward_in_place(&mut field).unwrap(); // the field again (times N, unnormalized)
    ///
    /// let mut plan = RealFftPlan::<f64>::new(&universe.world(), &[8, 6, 5], opts).unwrap();
    /// let mut buffer = vec![0.0; plan.in_place_len()];
    /// // Rows of 5 reals padded to 2·(5/2 + 1) = 6 scalars: element [i, j, k] of the block.
    /// let mut real = plan.padded_input_view_mut(&mut buffer).unwrap();
    /// real.fill(1.0);
    /// plan.forward_in_place(&mut buffer).unwrap();
    /// let spectrum = &as_complex(&buffer)[..plan.output_len()];
    /// if plan.rank() == 0 {
    ///     assert_eq!(spectrum[0].re, 240.0); // the zero mode: the sum of 8·6·5 ones
    /// }
    /// plan.backward_in_place(&mut buffer).unwrap(); // the padded field again, times 240
    /// ```
    pub fn forward_in_place(&mut self, buffer: &mut [K::In]) -> Result<()> {
        self.engine.transform_in_place(Direction::Forward, buffer)
    }

    /// The backward transform in place: `buffer` holds the output-layout block in its first
    /// [`Plan::output_len`] elements (a real-to-complex plan: 2·[`Plan::output_len`]
    /// scalars) and the input-layout block in its first [`Plan::input_len`] afterwards (a
    /// real-to-complex plan: the padded layout of [`Plan::forward_in_place`], the padding
    /// scalars unspecified).
    pub fn backward_in_place(&mut self, buffer: &mut [K::In]) -> Result<()> {
        self.engine.transform_in_place(Direction::Backward, buffer)
    }

    /// [`Plan::forward_in_place`] or [`Plan::backward_in_place`], as `direction` says.
    pub fn transform_in_place(&mut self, direction: Direction, buffer: &mut [K::In]) -> Result<()> {
        self.engine.transform_in_place(direction, buffer)
    }
}

/// What only a complex-to-complex plan has: the ranges of a distributed 1-D transform.
impl<T: Real> FftPlan<T>
where
    Complex<T>: Element,
{
    /// The `(rows, cols)` of a distributed 1-D transform's axis (its layouts' first two axes),
    /// or `None` for other plans.
    pub fn one_d(&self) -> Option<(usize, usize)> {
        let shape = self.input_layout().global_shape();
        self.engine.options.one_d.map(|_| (shape[0], shape[1]))
    }

    /// The positions of a distributed 1-D transform's axis this rank's forward input holds:
    /// one contiguous range (of the ordered axis, or of the scrambled order), `None` for other
    /// plans. With FFTW-MPI's columns and blocks, `fftw_mpi_local_size_1d`'s `local_i_start ..
    /// + local_ni`.
    pub fn input_range_1d(&self) -> Option<std::ops::Range<usize>> {
        let (layout, rank) = (self.input_layout(), self.rank());
        self.one_d().map(|_| crate::one_d::range_1d(layout, rank))
    }

    /// As [`FftPlan::input_range_1d`] for the forward output (`local_o_start .. + local_no`).
    pub fn output_range_1d(&self) -> Option<std::ops::Range<usize>> {
        let (layout, rank) = (self.output_layout(), self.rank());
        self.one_d().map(|_| crate::one_d::range_1d(layout, rank))
    }
}
