//! The floating-point types transforms run in.

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
