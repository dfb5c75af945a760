//! What spectral solvers use besides [`crate::FftPlan`]: [`RealFftPlan`] (real-to-complex
//! forward, complex-to-real backward), [`R2rPlan`] (real-to-real on every axis) and
//! [`wavenumber`]. Conventions are in `docs/spectral.md`.

use crate::error::Result;
use crate::plan::{Plan, R2c, R2r};
use crate::real::Real;
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder};
use num_complex::Complex;
use redist::Element;

/// The signed wavenumber of global index `index` along an FFT axis of `n` points (numpy's
/// `fftfreq(n) * n`): `index` for `index < (n + 1) / 2`, else `index − n`. Along the last axis
/// of a [`RealFftPlan`]'s spectrum the wavenumber is the index itself.
///
/// ```
/// use fft_core::wavenumber;
/// let k: Vec<i64> = (0..6).map(|i| wavenumber(6, i)).collect();
/// assert_eq!(k, vec![0, 1, 2, -3, -2, -1]);
/// let k: Vec<i64> = (0..5).map(|i| wavenumber(5, i)).collect();
/// assert_eq!(k, vec![0, 1, 2, -2, -1]);
/// ```
pub fn wavenumber(n: usize, index: usize) -> i64 {
    if index < n.div_ceil(2) {
        index as i64
    } else {
        index as i64 - n as i64
    }
}

/// A distributed real-to-complex FFT (forward) and its complex-to-real inverse (backward), for
/// `T = f64` or `f32`, with numpy's `rfftn` layout: a real array of global shape
/// `N_0 × … × N_{d−1}` has the spectrum `N_0 × … × (N_{d−1}/2 + 1)`.
///
/// The real FFT runs first, on the locally resident last axis, so every exchange moves the
/// halved data. Everything [`crate::FftPlan`] offers applies: any grid, uneven sizes,
/// transposed output (backward takes exactly that layout), normalization (`N` is the product
/// of the real lengths), batches, real-to-real kinds on the other axes and padding.
/// Backward ignores the imaginary parts of the modes that must be real (index 0, and index
/// `N_{d−1}/2` for even `N_{d−1}`, along the last axis), as numpy's `irfftn` does.
///
/// ```no_run
/// use fft_core::{FftOptions, Normalization, RealFftPlan};
/// use num_complex::Complex;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let opts = FftOptions::default().normalization(Normalization::Backward);
/// let mut plan = RealFftPlan::<f64>::new(&world, &[32, 32, 32], opts).unwrap();
/// assert_eq!(plan.spectral_shape(), &[32, 32, 17]);
/// let field = vec![1.0; plan.input_len()];
/// let mut spectrum = vec![Complex::default(); plan.output_len()];
/// let mut back = vec![0.0; plan.input_len()];
/// plan.forward(&field, &mut spectrum).unwrap();
/// plan.backward(&spectrum, &mut back).unwrap();
/// assert!((back[0] - 1.0).abs() < 1e-12);
/// ```
pub type RealFftPlan<T> = Plan<R2c, T>;

/// What only a real-to-complex plan has: its in-place buffer's padded real block.
impl<T: Real> RealFftPlan<T>
where
    Complex<T>: Element,
{
    /// The shape of this rank's real block in an in-place buffer as it lies in memory
    /// (C order, the input layout's axis order; a leading field axis for a batch): the
    /// input block's local shape with the real-to-complex axis (the last one, or the last
    /// transformed one of a partial transform, followed by untransformed axes as FFTW's
    /// interleaved `howmany`) padded from `n` to `2·(n/2 + 1)`, FFTW's in-place layout. The
    /// real data are the first `n` along that axis.
    pub fn padded_input_shape(&self) -> Vec<usize> {
        let (mut shape, _) = self.padded_block();
        let at = shape.len() - (self.input_layout().ndim() - self.half_axis());
        shape[at] = 2 * (shape[at] / 2 + 1);
        shape
    }

    /// This rank's real block in an in-place buffer (FFTW's padded layout) as a view in
    /// logical axis order, the padding left out, like [`RealFftPlan::input_view`]: errors
    /// unless `buffer` has [`RealFftPlan::in_place_len`] scalars.
    pub fn padded_input_view<'a>(&self, buffer: &'a [T]) -> Result<ArrayViewD<'a, T>> {
        self.check_in_place_len(buffer.len())?;
        let (shape, strides) = self.padded_block();
        Ok(
            ArrayViewD::from_shape(IxDyn(&shape).strides(IxDyn(&strides)), buffer)
                .expect("padded rows lie in the in-place buffer"),
        )
    }

    /// The mutable counterpart of [`RealFftPlan::padded_input_view`].
    pub fn padded_input_view_mut<'a>(&self, buffer: &'a mut [T]) -> Result<ArrayViewMutD<'a, T>> {
        self.check_in_place_len(buffer.len())?;
        let (shape, strides) = self.padded_block();
        Ok(
            ArrayViewMutD::from_shape(IxDyn(&shape).strides(IxDyn(&strides)), buffer)
                .expect("padded rows lie in the in-place buffer"),
        )
    }

    fn check_in_place_len(&self, actual: usize) -> Result<()> {
        let expected = self.in_place_len();
        if actual != expected {
            return Err(crate::FftError::BufferLength {
                buffer: "in-place",
                expected,
                actual,
            });
        }
        Ok(())
    }

    /// The real-to-complex axis: the last transformed one.
    fn half_axis(&self) -> usize {
        let d = self.input_layout().ndim();
        (self.options().axes.as_ref()).map_or(d - 1, |k| crate::spec::last_transformed(k))
    }

    /// The input block's shape and strides (logical order, batch axis first) with the rows
    /// padded: every stride of an axis before the real-to-complex one scaled by `padded /
    /// n` (the input layout is C order with that axis and those after it whole, so they
    /// are multiples of `n` times the size of the axes after it).
    fn padded_block(&self) -> (Vec<usize>, Vec<usize>) {
        let layout = self.input_layout();
        let (shape, mut strides) = crate::view::block_shape(layout, self.rank(), self.batch());
        let half = self.half_axis();
        let n = layout.global_shape()[half];
        let padded = 2 * (n / 2 + 1);
        let before = strides.len() - (layout.ndim() - half);
        for s in &mut strides[..before] {
            *s = *s / n * padded;
        }
        (shape, strides)
    }
}

/// A distributed real-to-real transform with a [`crate::R2rKind`] on every axis (given by
/// [`crate::FftOptions::axes`], which is required), real in and real out; backward applies the
/// inverse kinds, so backward(forward(x)) = (product of logical sizes)·x with
/// [`crate::Normalization::None`].
///
/// ```no_run
/// use fft_core::{AxisKind, FftOptions, R2rKind, R2rPlan};
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let opts = FftOptions::default().axes(vec![AxisKind::R2r(R2rKind::Dct2); 3]);
/// let mut plan = R2rPlan::<f64>::new(&world, &[16, 16, 16], opts).unwrap();
/// let x = vec![1.0; plan.input_len()];
/// let mut y = vec![0.0; plan.output_len()];
/// plan.forward(&x, &mut y).unwrap();
/// ```
pub type R2rPlan<T> = Plan<R2r, T>;

#[cfg(test)]
mod tests {
    use super::wavenumber;
    use crate::engine::Spec;
    use crate::options::FftOptions;
    use crate::options::{AxisKind, R2rKind};
    use crate::stages::Domain;
    use crate::FftError;

    fn reason(shape: &[usize], options: FftOptions, domain: Domain) -> String {
        match Spec::new(shape, &options, domain) {
            Err(FftError::BadOptions { reason, .. }) => reason,
            other => panic!("expected BadOptions, got {other:?}"),
        }
    }

    #[test]
    fn bad_options_name_the_offending_values() {
        let o = FftOptions::default;
        let dct = AxisKind::R2r(R2rKind::Dct2);
        assert!(reason(&[4, 4], o().batch(0), Domain::Complex).contains("got 0"));
        assert!(reason(&[4, 4], o().axes(vec![dct]), Domain::Complex).contains("1 entries"));
        let r = reason(
            &[4, 4],
            o().axes(vec![AxisKind::Fft, dct]),
            Domain::RealToComplex,
        );
        assert!(r.contains("last transformed axis"), "{r}");
        let id = AxisKind::Identity;
        let r = reason(&[4, 4], o().axes(vec![id, id]), Domain::Complex);
        assert!(r.contains("at least one axis must be transformed"), "{r}");
        let r = reason(&[4, 4], o().axes(vec![dct, id]), Domain::RealToComplex);
        assert!(r.contains("(axis 0) must be an FFT axis"), "{r}");
        let r = reason(
            &[4, 4],
            o().axes(vec![id, id]).padding(vec![1.5, 1.0]),
            Domain::Complex,
        );
        assert!(r.contains("at least one axis"), "{r}");
        let r = reason(
            &[4, 4],
            o().axes(vec![AxisKind::Fft, id]).padding(vec![1.0, 1.5]),
            Domain::Complex,
        );
        assert!(r.contains("FFT axes only, axis 1 is Identity"), "{r}");
        let r = reason(&[4, 4], o().axes(vec![dct, AxisKind::Fft]), Domain::Real);
        assert!(r.contains("every axis"), "{r}");
        assert!(reason(&[4, 4], o(), Domain::Real).contains("needs a real-to-real kind"));
        let r = reason(
            &[4, 1],
            o().axes(vec![dct, AxisKind::R2r(R2rKind::Dct1)]),
            Domain::Real,
        );
        assert!(
            r.contains("DCT-I needs at least 2 points, axis 1 has 1"),
            "{r}"
        );
        assert!(reason(&[4, 4], o().padding(vec![1.5]), Domain::Complex).contains("1 factors"));
        let r = reason(&[4, 4], o().padding(vec![0.5, 1.0]), Domain::Complex);
        assert!(r.contains("axis 0 has 0.5"), "{r}");
        let r = reason(&[4, 4], o().padding(vec![f64::NAN, 1.0]), Domain::Complex);
        assert!(r.contains("NaN"), "{r}");
        let r = reason(
            &[4, 4],
            o().axes(vec![dct, AxisKind::Fft]).padding(vec![1.5, 1.5]),
            Domain::Complex,
        );
        assert!(r.contains("FFT axes only, axis 0"), "{r}");
        // One axis: a distributed 1-D transform when complex, refused otherwise.
        assert!(matches!(
            Spec::new(&[4], &o(), Domain::RealToComplex),
            Err(FftError::TooFewDimensions { .. })
        ));
        assert!(Spec::new(&[4], &o(), Domain::Complex).is_ok_and(|s| s.one_d));
        assert!(matches!(
            Spec::new(&[], &o(), Domain::Complex),
            Err(FftError::TooFewDimensions { .. })
        ));
        assert!(Spec::new(&[4, 0], &o(), Domain::Complex).is_err());
    }

    #[test]
    fn shapes_and_scales_of_real_and_padded_specs() {
        let o = FftOptions::default().normalization(crate::Normalization::Backward);
        let s = Spec::new(&[6, 9], &o, Domain::RealToComplex).unwrap();
        assert_eq!(s.shape.physical, vec![6, 9]);
        assert_eq!(s.shape.spectral, vec![6, 5]);
        assert_eq!((s.forward_scale, s.backward_scale), (1.0, 1.0 / 54.0));
        let s = Spec::new(
            &[8, 10],
            &o.clone().padding(vec![1.5; 2]),
            Domain::RealToComplex,
        )
        .unwrap();
        assert_eq!(s.shape.physical, vec![12, 15]);
        assert_eq!(s.shape.spectral, vec![8, 6]);
        assert!((s.forward_scale - 80.0 / 180.0).abs() < 1e-15);
        assert_eq!(s.backward_scale, 1.0 / 80.0);
        // Logical sizes of r2r axes: DCT-I 2(N-1), DST-I 2(N+1), others 2N.
        let axes = vec![
            AxisKind::R2r(R2rKind::Dct1),
            AxisKind::R2r(R2rKind::Dst1),
            AxisKind::R2r(R2rKind::Dst4),
        ];
        let s = Spec::new(&[5, 3, 2], &o.clone().axes(axes), Domain::Real).unwrap();
        assert_eq!(s.backward_scale, 1.0 / (8.0 * 8.0 * 4.0));
        // Identity axes count as size 1; a real-to-complex plan halves its last transformed
        // axis.
        let id = AxisKind::Identity;
        let axes = vec![id, AxisKind::R2r(R2rKind::Dct2), id];
        let s = Spec::new(&[5, 3, 2], &o.clone().axes(axes), Domain::Real).unwrap();
        assert_eq!(s.backward_scale, 1.0 / 6.0);
        assert_eq!(s.transformed, vec![false, true, false]);
        let axes = vec![AxisKind::Fft, AxisKind::Fft, id];
        let s = Spec::new(&[5, 6, 3], &o.clone().axes(axes), Domain::RealToComplex).unwrap();
        assert_eq!(s.shape.spectral, vec![5, 4, 3]);
        assert_eq!(s.backward_scale, 1.0 / 30.0);
    }

    #[test]
    fn wavenumbers_follow_numpy_fftfreq() {
        for n in 1..9usize {
            for i in 0..n {
                let k = wavenumber(n, i);
                assert_eq!(k.rem_euclid(n as i64), i as i64);
                assert!(2 * k.abs() <= n as i64, "n={n} i={i} k={k}");
                if n & 1 == 0 && i == n / 2 {
                    assert_eq!(k, -(n as i64) / 2, "numpy puts the Nyquist mode at -n/2");
                }
            }
        }
    }
}
