//! Plans whose kind and precision are chosen at run time, as the Python and C bindings make
//! them: [`AnyPlan`] holds one of the six, [`with_any_plan!`](crate::with_any_plan) runs
//! generic code on the typed plan inside, and [`Transform`] is the typed interface every
//! plan kind shares, so that such code is written once for all of them.
//!
//! A new plan kind is a [`Kind`](crate::plan::Kind) (its element types; [`Transform`]
//! follows), a [`PlanKind`], and here a variant of [`AnyPlan`] per precision and an arm of
//! the macro.

use crate::plan::{Direction, Kind, Plan};
use crate::stages::Pipeline;
use crate::{
    FftOptions, FftPlan, R2rPlan, Real, RealFftPlan, Result, SharedBlock, StageTimes, StepProfile,
};
use mpi::topology::Communicator;
use num_complex::Complex;
use redist::{Element, Layout, ProcessGrid};
use std::fmt;

/// What a plan computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanKind {
    /// Complex to complex ([`FftPlan`]).
    C2c,
    /// Real to complex forward, complex to real backward ([`RealFftPlan`]).
    R2c,
    /// Real to real ([`R2rPlan`]).
    R2r,
}

impl PlanKind {
    /// `"c2c"`, `"r2c"` or `"r2r"`.
    pub fn name(self) -> &'static str {
        match self {
            PlanKind::C2c => "c2c",
            PlanKind::R2c => "r2c",
            PlanKind::R2r => "r2r",
        }
    }
}

impl fmt::Display for PlanKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The real scalar type of a plan: `f32` or `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `f32` (and `Complex<f32>`).
    F32,
    /// `f64` (and `Complex<f64>`).
    F64,
}

/// The typed operations and the accessors every plan kind shares: forward maps
/// [`Transform::In`] (input layout) to [`Transform::Out`] (output layout), backward back.
/// Each method is the plan's inherent method of the same name, documented there
/// ([`FftPlan::forward`], ...).
pub trait Transform {
    /// Forward input element: `Complex<T>` for c2c, `T` for r2c and r2r.
    type In: Element;
    /// Forward output element: `Complex<T>` for c2c and r2c, `T` for r2r.
    type Out: Element;
    /// The forward transform; `input` is left alone. Collective.
    fn forward(&mut self, input: &[Self::In], output: &mut [Self::Out]) -> Result<()>;
    /// The backward transform; `input` is left alone. Collective.
    fn backward(&mut self, input: &[Self::Out], output: &mut [Self::In]) -> Result<()>;
    /// The forward transform, which may use `input` as scratch. Collective.
    fn forward_destroying(
        &mut self,
        input: &mut [Self::In],
        output: &mut [Self::Out],
    ) -> Result<()>;
    /// The backward transform, which may use `input` as scratch. Collective.
    fn backward_destroying(
        &mut self,
        input: &mut [Self::Out],
        output: &mut [Self::In],
    ) -> Result<()>;
    /// The forward transform in place on a buffer of the plan's `in_place_len` elements
    /// (for r2c, real scalars in FFTW's padded layout). Collective.
    fn forward_in_place(&mut self, buffer: &mut [Self::In]) -> Result<()>;
    /// The backward transform in place. Collective.
    fn backward_in_place(&mut self, buffer: &mut [Self::In]) -> Result<()>;
    /// [`Transform::forward_in_place`] or [`Transform::backward_in_place`], as `direction`
    /// says. Collective.
    fn transform_in_place(&mut self, direction: Direction, buffer: &mut [Self::In]) -> Result<()> {
        match direction {
            Direction::Forward => self.forward_in_place(buffer),
            Direction::Backward => self.backward_in_place(buffer),
        }
    }
    /// A zeroed forward-input block allocated by the plan. Collective.
    fn alloc_input(&mut self) -> Result<SharedBlock<Self::In>>;
    /// A zeroed forward-output block allocated by the plan. Collective.
    fn alloc_output(&mut self) -> Result<SharedBlock<Self::Out>>;
    /// Layout of the forward input and backward output, one field.
    fn input_layout(&self) -> &Layout;
    /// Layout of the forward output and backward input, one field.
    fn output_layout(&self) -> &Layout;
    /// Number of fields transformed together.
    fn batch(&self) -> usize;
    /// Groups of ranks the batch is split into ([`crate::FftOptions::groups`]; 1: none).
    fn groups(&self) -> usize;
    /// The processor grid.
    fn grid(&self) -> &ProcessGrid;
    /// All layouts the transform passes through (one field).
    fn pipeline(&self) -> &Pipeline;
    /// Elements of this rank's in-place buffer, of [`Transform::In`].
    fn in_place_len(&self) -> usize;
    /// Work memory the plan holds on this rank, in units of the complex element of its
    /// precision.
    fn work_len(&self) -> usize;
    /// Seconds spent per stage since the plan was made or `reset_times`.
    fn times(&self) -> StageTimes;
    /// Zeroes the stage timers.
    fn reset_times(&mut self);
    /// Each step of the forward program, then of the backward one, with its calls and
    /// seconds on this rank ([`Plan::step_profile`]).
    fn step_profile(&self) -> Vec<StepProfile>;
}

/// [`Transform`] is every plan's inherent methods of the same names.
impl<K: Kind<T>, T: Real> Transform for Plan<K, T>
where
    Complex<T>: Element,
{
    type In = K::In;
    type Out = K::Out;
    fn forward(&mut self, input: &[K::In], output: &mut [K::Out]) -> Result<()> {
        Plan::forward(self, input, output)
    }
    fn backward(&mut self, input: &[K::Out], output: &mut [K::In]) -> Result<()> {
        Plan::backward(self, input, output)
    }
    fn forward_destroying(&mut self, input: &mut [K::In], output: &mut [K::Out]) -> Result<()> {
        Plan::forward_destroying(self, input, output)
    }
    fn backward_destroying(&mut self, input: &mut [K::Out], output: &mut [K::In]) -> Result<()> {
        Plan::backward_destroying(self, input, output)
    }
    fn forward_in_place(&mut self, buffer: &mut [K::In]) -> Result<()> {
        Plan::forward_in_place(self, buffer)
    }
    fn backward_in_place(&mut self, buffer: &mut [K::In]) -> Result<()> {
        Plan::backward_in_place(self, buffer)
    }
    fn alloc_input(&mut self) -> Result<SharedBlock<K::In>> {
        Plan::alloc_input(self)
    }
    fn alloc_output(&mut self) -> Result<SharedBlock<K::Out>> {
        Plan::alloc_output(self)
    }
    fn input_layout(&self) -> &Layout {
        Plan::input_layout(self)
    }
    fn output_layout(&self) -> &Layout {
        Plan::output_layout(self)
    }
    fn batch(&self) -> usize {
        Plan::batch(self)
    }
    fn groups(&self) -> usize {
        Plan::groups(self)
    }
    fn grid(&self) -> &ProcessGrid {
        Plan::grid(self)
    }
    fn pipeline(&self) -> &Pipeline {
        Plan::pipeline(self)
    }
    fn in_place_len(&self) -> usize {
        Plan::in_place_len(self)
    }
    fn work_len(&self) -> usize {
        Plan::work_len(self)
    }
    fn times(&self) -> StageTimes {
        Plan::times(self)
    }
    fn reset_times(&mut self) {
        Plan::reset_times(self)
    }
    fn step_profile(&self) -> Vec<StepProfile> {
        Plan::step_profile(self)
    }
}

/// A plan of the kind and precision chosen at run time ([`AnyPlan::new`]). The accessors
/// every kind shares are methods here; for the typed ones (transforms, blocks) match it or
/// use [`with_any_plan!`](crate::with_any_plan) with generic code over [`Transform`].
#[derive(Debug)]
pub enum AnyPlan {
    /// Complex to complex, `f64`.
    C2c64(FftPlan<f64>),
    /// Complex to complex, `f32`.
    C2c32(FftPlan<f32>),
    /// Real to complex, `f64`.
    R2c64(RealFftPlan<f64>),
    /// Real to complex, `f32`.
    R2c32(RealFftPlan<f32>),
    /// Real to real, `f64`.
    R2r64(R2rPlan<f64>),
    /// Real to real, `f32`.
    R2r32(R2rPlan<f32>),
}

/// Evaluates `$body` with `$p` bound to the typed plan inside an [`AnyPlan`] (or a reference
/// to one), whatever its kind and precision: `$body` is compiled once per kind and
/// precision, so it may call generic code over [`Transform`].
///
/// ```no_run
/// use fft_core::{AnyPlan, Transform};
///
/// // Generic code, compiled for every kind and precision.
/// fn input_block<P: Transform>(plan: &mut P) -> fft_core::Result<usize> {
///     Ok(plan.alloc_input()?.len())
/// }
///
/// fn input_len(plan: &mut AnyPlan) -> fft_core::Result<usize> {
///     fft_core::with_any_plan!(plan, p => input_block(p))
/// }
/// ```
#[macro_export]
macro_rules! with_any_plan {
    ($plan:expr, $p:ident => $body:expr) => {
        match $plan {
            $crate::AnyPlan::C2c64($p) => $body,
            $crate::AnyPlan::C2c32($p) => $body,
            $crate::AnyPlan::R2c64($p) => $body,
            $crate::AnyPlan::R2c32($p) => $body,
            $crate::AnyPlan::R2r64($p) => $body,
            $crate::AnyPlan::R2r32($p) => $body,
        }
    };
}

impl AnyPlan {
    /// Makes a plan of `kind` and `precision` for the global `shape` (as [`FftPlan::new`],
    /// [`RealFftPlan::new`] or [`R2rPlan::new`]). Collective over `comm`.
    pub fn new<C: Communicator>(
        comm: &C,
        kind: PlanKind,
        precision: Precision,
        shape: &[usize],
        options: FftOptions,
    ) -> Result<Self> {
        use Precision::{F32, F64};
        Ok(match (kind, precision) {
            (PlanKind::C2c, F64) => AnyPlan::C2c64(FftPlan::new(comm, shape, options)?),
            (PlanKind::C2c, F32) => AnyPlan::C2c32(FftPlan::new(comm, shape, options)?),
            (PlanKind::R2c, F64) => AnyPlan::R2c64(RealFftPlan::new(comm, shape, options)?),
            (PlanKind::R2c, F32) => AnyPlan::R2c32(RealFftPlan::new(comm, shape, options)?),
            (PlanKind::R2r, F64) => AnyPlan::R2r64(R2rPlan::new(comm, shape, options)?),
            (PlanKind::R2r, F32) => AnyPlan::R2r32(R2rPlan::new(comm, shape, options)?),
        })
    }

    /// What the plan computes.
    pub fn kind(&self) -> PlanKind {
        match self {
            AnyPlan::C2c64(_) | AnyPlan::C2c32(_) => PlanKind::C2c,
            AnyPlan::R2c64(_) | AnyPlan::R2c32(_) => PlanKind::R2c,
            AnyPlan::R2r64(_) | AnyPlan::R2r32(_) => PlanKind::R2r,
        }
    }

    /// The plan's real scalar type.
    pub fn precision(&self) -> Precision {
        match self {
            AnyPlan::C2c64(_) | AnyPlan::R2c64(_) | AnyPlan::R2r64(_) => Precision::F64,
            AnyPlan::C2c32(_) | AnyPlan::R2c32(_) | AnyPlan::R2r32(_) => Precision::F32,
        }
    }

    /// The options the plan was made with.
    pub fn options(&self) -> &FftOptions {
        with_any_plan!(self, p => p.options())
    }

    /// The processor grid.
    pub fn grid(&self) -> &ProcessGrid {
        with_any_plan!(self, p => p.grid())
    }

    /// Groups of ranks the batch is split into (1: none; [`FftOptions::groups`]).
    pub fn groups(&self) -> usize {
        with_any_plan!(self, p => p.groups())
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        with_any_plan!(self, p => p.rank())
    }

    /// Layout of the forward input and backward output, one field.
    pub fn input_layout(&self) -> &Layout {
        with_any_plan!(self, p => p.input_layout())
    }

    /// Layout of the forward output and backward input, one field.
    pub fn output_layout(&self) -> &Layout {
        with_any_plan!(self, p => p.output_layout())
    }

    /// Elements of this rank's forward input (all fields of the batch).
    pub fn input_len(&self) -> usize {
        with_any_plan!(self, p => p.input_len())
    }

    /// Elements of this rank's forward output (all fields of the batch).
    pub fn output_len(&self) -> usize {
        with_any_plan!(self, p => p.output_len())
    }

    /// Elements of this rank's in-place buffer, of [`Transform::In`] (for r2c: real scalars
    /// in FFTW's padded layout; [`RealFftPlan::in_place_len`]).
    pub fn in_place_len(&self) -> usize {
        with_any_plan!(self, p => p.in_place_len())
    }

    /// Work memory the plan holds on this rank besides the caller's arrays, in units of the
    /// complex element of its precision ([`FftPlan::work_len`]).
    pub fn work_len(&self) -> usize {
        with_any_plan!(self, p => p.work_len())
    }

    /// [`AnyPlan::work_len`] in bytes.
    pub fn work_bytes(&self) -> usize {
        let unit = match self.precision() {
            Precision::F32 => std::mem::size_of::<Complex<f32>>(),
            Precision::F64 => std::mem::size_of::<Complex<f64>>(),
        };
        self.work_len() * unit
    }

    /// Seconds spent per stage since the plan was made or [`AnyPlan::reset_times`].
    pub fn times(&self) -> StageTimes {
        with_any_plan!(self, p => p.times())
    }

    /// Zeroes the stage timers.
    pub fn reset_times(&mut self) {
        with_any_plan!(self, p => p.reset_times())
    }

    /// The per-step profile ([`Plan::step_profile`]).
    pub fn step_profile(&self) -> Vec<StepProfile> {
        with_any_plan!(self, p => p.step_profile())
    }
}
