//! One interface over the plans `dfft run` drives, so the run (fill, time, verify, write) is
//! one code path for every kind and precision.

use fft_core::stages::Pipeline;
use fft_core::{FftError, FftPlan, R2rPlan, Real, RealFftPlan, SharedBlock};
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

/// A distributed transform as `dfft run` sees it: `forward` from `In` (in `input_layout`) to
/// `Out` (in `output_layout`), `backward` back. Lengths include the batch (`batch` blocks one
/// after another, field-major).
pub trait RunPlan {
    /// Forward input element.
    type In: Sample;
    /// Forward output element.
    type Out: Sample;
    /// The forward transform; allocates nothing.
    fn forward(&mut self, input: &[Self::In], output: &mut [Self::Out]) -> Result<(), FftError>;
    /// The backward transform; allocates nothing.
    fn backward(&mut self, input: &[Self::Out], output: &mut [Self::In]) -> Result<(), FftError>;
    /// The forward transform, which may use `input` as scratch (`--destroy-input`).
    fn forward_destroying(
        &mut self,
        input: &mut [Self::In],
        output: &mut [Self::Out],
    ) -> Result<(), FftError>;
    /// The backward transform, which may use `input` as scratch.
    fn backward_destroying(
        &mut self,
        input: &mut [Self::Out],
        output: &mut [Self::In],
    ) -> Result<(), FftError>;
    /// Layout of one field of the forward input.
    fn input_layout(&self) -> &Layout;
    /// Layout of one field of the forward output.
    fn output_layout(&self) -> &Layout;
    /// Fields transformed together.
    fn batch(&self) -> usize;
    /// The processor grid.
    fn grid(&self) -> &ProcessGrid;
    /// Seconds per stage since the last reset.
    fn times(&self) -> StageTimes;
    /// Zeroes the stage timers.
    fn reset_times(&mut self);
    /// Bytes of work memory the plan holds on this rank.
    fn work_bytes(&self) -> usize;
    /// The plan's pipeline (layouts and stages), for its memory estimate.
    fn pipeline(&self) -> &Pipeline;
    /// Bytes of the complex element of the plan's precision (the unit of the estimate).
    fn complex_bytes(&self) -> usize;
    /// A forward-input block allocated by the plan (collective).
    fn alloc_input(&mut self) -> Result<SharedBlock<Self::In>, FftError>;
    /// A forward-output block allocated by the plan (collective).
    fn alloc_output(&mut self) -> Result<SharedBlock<Self::Out>, FftError>;
    /// Elements of this rank's in-place buffer (`--in-place`; c2c, r2c and r2r plans).
    fn in_place_len(&self) -> usize {
        0
    }
    /// The forward transform in place (`--in-place`).
    fn forward_in_place(&mut self, _buffer: &mut [Self::In]) -> Result<(), FftError> {
        Err(FftError::InPlaceNotPlanned)
    }
    /// The backward transform in place.
    fn backward_in_place(&mut self, _buffer: &mut [Self::In]) -> Result<(), FftError> {
        Err(FftError::InPlaceNotPlanned)
    }
    /// An in-place buffer's start as the forward output (the same type for c2c).
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

/// `RunPlan` for a fft-core plan type: the accessors have the same names on every plan.
macro_rules! run_plan {
    ($plan:ident, $in:ty, $out:ty $(, $in_place:ident)?) => {
        impl<T: Real> RunPlan for $plan<T>
        where
            T: Sample,
            Complex<T>: Element + Sample,
        {
            run_plan!(@common $plan, $in, $out);
            $(run_plan!(@$in_place $plan, $in);)?
        }
    };
    (@common $plan:ident, $in:ty, $out:ty) => {
        type In = $in;
        type Out = $out;
        fn forward(&mut self, input: &[$in], output: &mut [$out]) -> Result<(), FftError> {
            $plan::forward(self, input, output)
        }
        fn backward(&mut self, input: &[$out], output: &mut [$in]) -> Result<(), FftError> {
            $plan::backward(self, input, output)
        }
        fn forward_destroying(
            &mut self,
            input: &mut [$in],
            output: &mut [$out],
        ) -> Result<(), FftError> {
            $plan::forward_destroying(self, input, output)
        }
        fn backward_destroying(
            &mut self,
            input: &mut [$out],
            output: &mut [$in],
        ) -> Result<(), FftError> {
            $plan::backward_destroying(self, input, output)
        }
        fn input_layout(&self) -> &Layout {
            $plan::input_layout(self)
        }
        fn output_layout(&self) -> &Layout {
            $plan::output_layout(self)
        }
        fn batch(&self) -> usize {
            $plan::batch(self)
        }
        fn grid(&self) -> &ProcessGrid {
            $plan::grid(self)
        }
        fn times(&self) -> StageTimes {
            $plan::times(self)
        }
        fn reset_times(&mut self) {
            $plan::reset_times(self)
        }
        fn work_bytes(&self) -> usize {
            self.work_len() * std::mem::size_of::<Complex<T>>()
        }
        fn pipeline(&self) -> &Pipeline {
            $plan::pipeline(self)
        }
        fn complex_bytes(&self) -> usize {
            std::mem::size_of::<Complex<T>>()
        }
        fn alloc_input(&mut self) -> Result<SharedBlock<$in>, FftError> {
            $plan::alloc_input(self)
        }
        fn alloc_output(&mut self) -> Result<SharedBlock<$out>, FftError> {
            $plan::alloc_output(self)
        }
    };
    (@in_place $plan:ident, $in:ty) => {
        run_plan!(@in_place_only $plan, $in);
        fn as_output<'a>(&self, buffer: &'a [$in]) -> &'a [$in] {
            buffer
        }
    };
    (@in_place_only $plan:ident, $in:ty) => {
        fn in_place_len(&self) -> usize {
            $plan::in_place_len(self)
        }
        fn forward_in_place(&mut self, buffer: &mut [$in]) -> Result<(), FftError> {
            $plan::forward_in_place(self, buffer)
        }
        fn backward_in_place(&mut self, buffer: &mut [$in]) -> Result<(), FftError> {
            $plan::backward_in_place(self, buffer)
        }
    };
}

run_plan!(FftPlan, Complex<T>, Complex<T>, in_place);
run_plan!(R2rPlan, T, T, in_place);

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
    run_plan!(@common RealFftPlan, T, Complex<T>);
    run_plan!(@in_place_only RealFftPlan, T);
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
/// a real-to-complex plan).
pub struct Inverse<P>(pub P);

impl<P: RunPlan> RunPlan for Inverse<P> {
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
    fn input_layout(&self) -> &Layout {
        self.0.output_layout()
    }
    fn output_layout(&self) -> &Layout {
        self.0.input_layout()
    }
    fn batch(&self) -> usize {
        self.0.batch()
    }
    fn grid(&self) -> &ProcessGrid {
        self.0.grid()
    }
    fn times(&self) -> StageTimes {
        self.0.times()
    }
    fn reset_times(&mut self) {
        self.0.reset_times()
    }
    fn work_bytes(&self) -> usize {
        self.0.work_bytes()
    }
    fn pipeline(&self) -> &Pipeline {
        self.0.pipeline()
    }
    fn complex_bytes(&self) -> usize {
        self.0.complex_bytes()
    }
    fn alloc_input(&mut self) -> Result<SharedBlock<P::Out>, FftError> {
        self.0.alloc_output()
    }
    fn alloc_output(&mut self) -> Result<SharedBlock<P::In>, FftError> {
        self.0.alloc_input()
    }
}
