//! One interface over the plans `dfft run` drives, so the run (fill, time, verify, write) is
//! one code path for every kind and precision.

use fft_core::stages::Pipeline;
use fft_core::{
    Direction, FftError, FftPlan, R2rPlan, Real, RealFftPlan, SharedBlock, StepProfile, Transform,
};
use num_complex::Complex;
use redist::{Element, Layout, ProcessGrid, StageTimes};

/// An element of the arrays `dfft run` moves: `f32`, `f64`, `Complex<f32>` or `Complex<f64>`.
pub trait Sample:
    npyio::NpyElement + h5io::H5Element + Copy + Default + Send + Sync + 'static
{
    /// Its real type.
    type Real: Real + npyio::NpyElement + h5io::H5Element + Default;
    /// Converts a value computed in complex f64 (a real type keeps the real part).
    fn from_c64(v: Complex<f64>) -> Self;
    /// Widens to complex f64.
    fn to_c64(self) -> Complex<f64>;
    /// A real value of the same precision, as this type (imaginary part zero).
    fn from_real(v: Self::Real) -> Self;
    /// Whether every component is finite.
    fn is_finite(self) -> bool {
        let v = self.to_c64();
        v.re.is_finite() && v.im.is_finite()
    }
}

macro_rules! real_sample {
    ($t:ty) => {
        impl Sample for $t {
            type Real = $t;
            fn from_c64(v: Complex<f64>) -> Self {
                v.re as $t
            }
            fn to_c64(self) -> Complex<f64> {
                Complex::new(self as f64, 0.0)
            }
            fn from_real(v: $t) -> Self {
                v
            }
        }
    };
}

macro_rules! complex_sample {
    ($t:ty) => {
        impl Sample for Complex<$t> {
            type Real = $t;
            fn from_c64(v: Complex<f64>) -> Self {
                Complex::new(v.re as $t, v.im as $t)
            }
            fn to_c64(self) -> Complex<f64> {
                Complex::new(self.re as f64, self.im as f64)
            }
            fn from_real(v: $t) -> Self {
                Complex::new(v, 0.0)
            }
        }
    };
}

real_sample!(f32);
real_sample!(f64);
complex_sample!(f32);
complex_sample!(f64);

/// A distributed transform as `dfft run` sees it: a [`Transform`] of [`Sample`]s plus what
/// only the CLI needs (the memory estimate's unit, the view of an in-place buffer as the
/// output, FFTW's padded rows). Lengths include the batch (`batch` blocks one after another,
/// field-major).
pub trait RunPlan: Transform<In: Sample, Out: Sample> {
    /// Bytes of the complex element of the plan's precision (the unit of the estimate).
    fn complex_bytes(&self) -> usize {
        2 * std::mem::size_of::<<Self::In as Sample>::Real>()
    }
    /// Bytes of work memory the plan holds on this rank.
    fn work_bytes(&self) -> usize {
        self.work_len() * self.complex_bytes()
    }
    /// An in-place buffer's start as the forward output (the same type for c2c), or nothing
    /// for a plan that has no in-place transform.
    fn as_output<'a>(&self, _buffer: &'a [Self::In]) -> &'a [Self::Out] {
        &[]
    }
    /// Puts the forward input (its block, dense) into an in-place buffer: at its start, or
    /// in FFTW's padded rows for r2c.
    fn in_place_load(&self, buffer: &mut [Self::In], input: &[Self::In]) {
        buffer[..input.len()].copy_from_slice(input);
    }
    /// The forward input's block, dense, from an in-place buffer (after a backward).
    fn in_place_unload(&self, buffer: &[Self::In], input: &mut [Self::In]) {
        input.copy_from_slice(&buffer[..input.len()]);
    }
}

/// `RunPlan` for a plan whose forward output is its input type, in place at the buffer's
/// start.
macro_rules! same_type_run_plan {
    ($plan:ident, $elem:ty) => {
        impl<T: Real> RunPlan for $plan<T>
        where
            T: Sample,
            Complex<T>: Element + Sample,
        {
            fn as_output<'a>(&self, buffer: &'a [$elem]) -> &'a [$elem] {
                buffer
            }
        }
    };
}

same_type_run_plan!(FftPlan, Complex<T>);
same_type_run_plan!(R2rPlan, T);

/// The length of the last axis of a real-to-complex plan's real rows, and their padded
/// length in an in-place buffer (FFTW's `2·(n/2 + 1)`).
fn real_rows<T: Real>(plan: &RealFftPlan<T>) -> (usize, usize)
where
    Complex<T>: Element,
{
    let n = *plan.input_layout().global_shape().last().expect("d >= 2");
    (n, 2 * (n / 2 + 1))
}

impl<T: Real> RunPlan for RealFftPlan<T>
where
    T: Sample,
    Complex<T>: Element + Sample,
{
    fn as_output<'a>(&self, buffer: &'a [T]) -> &'a [Complex<T>] {
        fft_core::as_complex(buffer)
    }
    fn in_place_load(&self, buffer: &mut [T], input: &[T]) {
        let (n, padded) = real_rows(self);
        for (row, values) in buffer.chunks_mut(padded).zip(input.chunks(n)) {
            row[..n].copy_from_slice(values);
        }
    }
    fn in_place_unload(&self, buffer: &[T], input: &mut [T]) {
        let (n, padded) = real_rows(self);
        for (row, values) in buffer.chunks(padded).zip(input.chunks_mut(n)) {
            values.copy_from_slice(&row[..n]);
        }
    }
}

/// A plan run the other way round: its backward is the run's forward (c2r is the backward of
/// a real-to-complex plan). It has no in-place transform.
pub struct Inverse<P>(pub P);

impl<P: Transform> Transform for Inverse<P> {
    type In = P::Out;
    type Out = P::In;
    fn forward(&mut self, input: &[P::Out], output: &mut [P::In]) -> Result<(), FftError> {
        self.0.backward(input, output)
    }
    fn backward(&mut self, input: &[P::In], output: &mut [P::Out]) -> Result<(), FftError> {
        self.0.forward(input, output)
    }
    fn forward_destroying(
        &mut self,
        input: &mut [P::Out],
        output: &mut [P::In],
    ) -> Result<(), FftError> {
        self.0.backward_destroying(input, output)
    }
    fn backward_destroying(
        &mut self,
        input: &mut [P::In],
        output: &mut [P::Out],
    ) -> Result<(), FftError> {
        self.0.forward_destroying(input, output)
    }
    fn forward_in_place(&mut self, _buffer: &mut [P::Out]) -> Result<(), FftError> {
        Err(FftError::InPlaceNotPlanned)
    }
    fn backward_in_place(&mut self, _buffer: &mut [P::Out]) -> Result<(), FftError> {
        Err(FftError::InPlaceNotPlanned)
    }
    fn alloc_input(&mut self) -> Result<SharedBlock<P::Out>, FftError> {
        self.0.alloc_output()
    }
    fn alloc_output(&mut self) -> Result<SharedBlock<P::In>, FftError> {
        self.0.alloc_input()
    }
    fn input_layout(&self) -> &Layout {
        self.0.output_layout()
    }
    fn output_layout(&self) -> &Layout {
        self.0.input_layout()
    }
    fn batch(&self) -> usize {
        self.0.batch()
    }
    fn groups(&self) -> usize {
        self.0.groups()
    }
    fn grid(&self) -> &ProcessGrid {
        self.0.grid()
    }
    fn pipeline(&self) -> &Pipeline {
        self.0.pipeline()
    }
    fn in_place_len(&self) -> usize {
        0
    }
    fn work_len(&self) -> usize {
        self.0.work_len()
    }
    fn times(&self) -> StageTimes {
        self.0.times()
    }
    fn reset_times(&mut self) {
        self.0.reset_times()
    }
    /// The plan's steps with the directions named as the run goes: its backward first, as
    /// the forward.
    fn step_profile(&self) -> Vec<StepProfile> {
        let mut steps = self.0.step_profile();
        for s in &mut steps {
            s.direction = match s.direction {
                Direction::Forward => Direction::Backward,
                Direction::Backward => Direction::Forward,
            };
        }
        steps.sort_by_key(|s| !s.direction.is_forward());
        steps
    }
}

impl<P: Transform> RunPlan for Inverse<P>
where
    P::In: Sample,
    P::Out: Sample,
{
}
