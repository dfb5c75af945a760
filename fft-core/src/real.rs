//! The floating-point types transforms run in.

use num_complex::Complex;
use redist::Element;

/// A real scalar type of the transforms: `f32` or `f64`. Complex data is `Complex<T>`.
/// Conversions come from `num_traits` (`FromPrimitive::from_f64`, `ToPrimitive::to_f64`).
pub trait Real: rustfft::FftNum + rustdct::DctNum + num_traits::Float + Element {
    /// Converts a factor computed in `f64`.
    fn of(x: f64) -> Self {
        <Self as num_traits::FromPrimitive>::from_f64(x).expect("finite f64 converts")
    }
}

impl Real for f64 {}
impl Real for f32 {}

/// A buffer of real scalars as complex elements (pairs of scalars; an odd last scalar left
/// out): the spectrum in a [`crate::RealFftPlan`]'s in-place buffer.
///
/// ```
/// let buffer = [1.0, 2.0, 3.0, 4.0];
/// assert_eq!(fft_core::as_complex(&buffer)[1], fft_core::Complex::new(3.0, 4.0));
/// ```
pub fn as_complex<T: Real>(buffer: &[T]) -> &[Complex<T>]
where
    Complex<T>: Element,
{
    bytemuck::cast_slice(&buffer[..buffer.len() & !1])
}

/// The mutable counterpart of [`as_complex`].
pub fn as_complex_mut<T: Real>(buffer: &mut [T]) -> &mut [Complex<T>]
where
    Complex<T>: Element,
{
    let even = buffer.len() & !1;
    bytemuck::cast_slice_mut(&mut buffer[..even])
}
