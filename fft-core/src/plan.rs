//! [`FftPlan`]: a distributed complex-to-complex FFT, planned once and run many times, and the
//! accessors all plan kinds share.

use crate::engine::{Engine, Source, Spec};
use crate::error::Result;
use crate::options::FftOptions;
use crate::real::Real;
use crate::stages::{Domain, Pipeline};
use mpi::topology::Communicator;
use num_complex::Complex;
use redist::{Element, Layout, ProcessGrid, StageTimes};

/// A distributed complex-to-complex FFT of a d-dimensional array over all processes of a
/// communicator, for `T = f64` or `f32`.
///
/// Make it once (collective), ask it for the local blocks, then call [`FftPlan::forward`] and
/// [`FftPlan::backward`] as often as needed: they allocate nothing. Forward input and backward
/// output are in [`FftPlan::input_layout`] (C order, grid dimension `j` splits axis `j`);
/// forward output and backward input are in [`FftPlan::output_layout`] (the same as the input
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
pub struct FftPlan<T: Real>
where
    Complex<T>: Element,
{
    engine: Engine<T>,
}

/// The accessors every plan kind shares (the plan type has an `engine: Engine<T>` field).
macro_rules! plan_accessors {
    ($plan:ident, $in:ty, $out:ty) => {
        impl<T: Real> std::fmt::Debug for $plan<T>
        where
            Complex<T>: Element,
        {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($plan))
                    .field("shape", &self.global_shape())
                    .field("spectral_shape", &self.spectral_shape())
                    .field("grid", &self.engine.grid.shape().dims())
                    .field("options", &self.engine.options)
                    .finish()
            }
        }

        impl<T: Real> $plan<T>
        where
            Complex<T>: Element,
        {
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

            /// Groups the batch is split into ([`FftOptions::groups`], resolved: 1 for a
            /// plain plan).
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

            /// Zeroes the stage timers.
            pub fn reset_times(&mut self) {
                self.engine.times = StageTimes::default();
            }

            /// A zeroed forward-input block of this rank ([`Self::input_len`] elements),
            /// allocated by the plan: in a shared-memory window with every rank's when all
            /// ranks are on one node, so that transforms between such blocks move the rows
            /// that cross ranks in place, with no pack or unpack (see
            /// [`crate::SharedBlock`]); private memory otherwise. Collective.
            pub fn alloc_input(&mut self) -> crate::Result<crate::SharedBlock<$in>> {
                self.engine.alloc_block(true)
            }

            /// A zeroed forward-output block of this rank ([`Self::output_len`] elements),
            /// allocated like [`Self::alloc_input`]. Collective.
            pub fn alloc_output(&mut self) -> crate::Result<crate::SharedBlock<$out>> {
                self.engine.alloc_block(false)
            }
        }
    };
}
pub(crate) use plan_accessors;

plan_accessors!(FftPlan, Complex<T>, Complex<T>);

impl<T: Real> FftPlan<T>
where
    Complex<T>: Element,
{
    /// Plans the transform of a global array of `shape` over all processes of `comm`;
    /// collective. Every check uses global arguments only, so all ranks return the same error.
    /// With padding, `shape` is the spectral resolution and the input lives on the padded grid
    /// ([`FftPlan::global_shape`]).
    ///
    /// A 1-D `shape` (or [`FftOptions::one_d`]) makes a distributed 1-D transform
    /// ([`crate::one_d`]): its layouts are slabs of the axis's `rows × cols` matrix (see
    /// [`FftPlan::one_d`], [`FftPlan::input_range_1d`]).
    pub fn new<C: Communicator>(comm: &C, shape: &[usize], options: FftOptions) -> Result<Self> {
        let options = crate::one_d::resolve(shape, options, comm.size() as usize)?;
        let spec = Spec::new(shape, &options, Domain::Complex)?;
        Ok(Self {
            engine: Engine::new(comm, spec, options)?,
        })
    }

    /// The forward transform of `input` (input layout) into `output` (output layout).
    /// Collective; `input` is not modified. A plan made with [`FftOptions::destroy_input`]
    /// refuses it ([`crate::FftError::InputNotWritable`]): use [`FftPlan::forward_destroying`].
    pub fn forward(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.engine.transform(true, Source::Read(input), output)
    }

    /// [`FftPlan::forward`] that may use `input` as scratch: its contents are undefined
    /// afterwards. With [`FftOptions::destroy_input`] the plan then needs less work memory
    /// (see [`FftPlan::work_len`]); without it, `input` is left alone.
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
    pub fn forward_destroying(
        &mut self,
        input: &mut [Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<()> {
        self.engine.transform(true, Source::Write(input), output)
    }

    /// The backward transform of `input` (output layout) into `output` (input layout).
    /// Collective; `input` is not modified (refused with [`FftOptions::destroy_input`], as for
    /// [`FftPlan::forward`]).
    pub fn backward(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.engine.transform(false, Source::Read(input), output)
    }

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

    /// Elements of this rank's buffer for [`FftPlan::forward_in_place`] and
    /// [`FftPlan::backward_in_place`]: the larger of [`FftPlan::input_len`] and
    /// [`FftPlan::output_len`] (they differ for uneven splits and transposed output).
    pub fn in_place_len(&self) -> usize {
        self.engine.in_place_len::<Complex<T>>()
    }

    /// The forward transform in place: `buffer` ([`FftPlan::in_place_len`] elements) holds
    /// the input block (input layout) in its first [`FftPlan::input_len`] elements, and
    /// holds the output block (output layout) in its first [`FftPlan::output_len`]
    /// afterwards; the rest is scratch. Needs a plan made with [`FftOptions::in_place`]
    /// (else [`crate::FftError::InPlaceNotPlanned`]); a buffer of the wrong length on any
    /// rank is [`crate::FftError::InPlaceLength`] on every rank. Collective; allocates
    /// nothing; the plan's work memory ([`FftPlan::work_len`]) covers it, so a transform
    /// needs one block less than out of place.
    ///
    /// ```no_run
    /// use fft_core::{FftOptions, FftPlan};
    /// use num_complex::Complex;
    /// let universe = mpi::initialize().unwrap();
    /// let opts = FftOptions::default().in_place(true);
    /// let mut plan = FftPlan::<f64>::new(&universe.world(), &[64, 64, 64], opts).unwrap();
    /// let mut field = vec![Complex::new(1.0, 0.0); plan.in_place_len()];
    /// plan.forward_in_place(&mut field).unwrap(); // the spectrum: field[..plan.output_len()]
    /// plan.backward_in_place(&mut field).unwrap(); // the field again (times N, unnormalized)
    /// ```
    pub fn forward_in_place(&mut self, buffer: &mut [Complex<T>]) -> Result<()> {
        self.engine.transform_in_place(true, buffer)
    }

    /// The backward transform in place: `buffer` holds the output-layout block in its first
    /// [`FftPlan::output_len`] elements and the input-layout block in its first
    /// [`FftPlan::input_len`] afterwards (see [`FftPlan::forward_in_place`]).
    pub fn backward_in_place(&mut self, buffer: &mut [Complex<T>]) -> Result<()> {
        self.engine.transform_in_place(false, buffer)
    }

    /// [`FftPlan::backward`] that may use `input` as scratch (see
    /// [`FftPlan::forward_destroying`]).
    pub fn backward_destroying(
        &mut self,
        input: &mut [Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<()> {
        self.engine.transform(false, Source::Write(input), output)
    }
}
