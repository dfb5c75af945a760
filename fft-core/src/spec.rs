//! What a plan transforms, in global terms ([`Spec`]): shapes, per-axis kinds and scaling,
//! checked from global arguments only, so every rank accepts or refuses alike.

use crate::error::{FftError, Result};
use crate::options::{AxisKind, FftOptions};
use crate::stages::{Domain, TransformShape};

/// The last transformed axis: the one a real-to-complex plan halves (numpy's `rfftn(x,
/// axes)` halves the last of `axes`).
pub(crate) fn last_transformed(axes: &[AxisKind]) -> usize {
    (axes.iter())
        .rposition(|k| k.is_transformed())
        .expect("a plan transforms at least one axis")
}

/// The kinds of every axis (`options.axes`, or FFT everywhere), checked against the shape and
/// the domain: a real-to-real plan's transformed axes are real-to-real, a real-to-complex
/// plan's last transformed axis is an FFT, at least one axis is transformed, and DCT-I axes
/// have two points at least.
fn axis_kinds(shape: &[usize], options: &FftOptions, domain: Domain) -> Result<Vec<AxisKind>> {
    let d = shape.len();
    let bad = |reason: String| FftError::BadOptions {
        shape: shape.to_vec(),
        reason,
    };
    let axes = match (&options.axes, domain) {
        (Some(a), _) if a.len() != d => {
            return Err(bad(format!(
                "axes has {} entries for {d} axes: {a:?}",
                a.len()
            )))
        }
        (Some(a), _) => a.clone(),
        (None, Domain::Real) => {
            return Err(bad(
                "a real-to-real plan needs a real-to-real kind for every axis (axes)".into(),
            ))
        }
        (None, _) => vec![AxisKind::Fft; d],
    };
    if !axes.iter().any(|k| k.is_transformed()) {
        return Err(bad(format!(
            "at least one axis must be transformed, every axis is Identity: {axes:?}"
        )));
    }
    match domain {
        Domain::RealToComplex if axes[last_transformed(&axes)] != AxisKind::Fft => {
            let last = last_transformed(&axes);
            return Err(bad(format!(
                "the last transformed axis of a real-to-complex plan (axis {last}) must be an FFT axis, got {:?}",
                axes[last]
            )));
        }
        Domain::Real if axes.contains(&AxisKind::Fft) => {
            return Err(bad(format!(
                "every axis of a real-to-real plan must be real-to-real (or Identity), got {axes:?}"
            )))
        }
        _ => {}
    }
    for (axis, (&kind, &n)) in axes.iter().zip(shape).enumerate() {
        if kind == AxisKind::R2r(crate::R2rKind::Dct1) && n < 2 {
            return Err(bad(format!(
                "DCT-I needs at least 2 points, axis {axis} has {n}"
            )));
        }
    }
    Ok(axes)
}

/// What a plan transforms, in global terms, checked: shapes, per-axis kinds and scaling.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    pub shape: TransformShape,
    pub axes: Vec<AxisKind>,
    /// Whether each axis is transformed (not [`AxisKind::Identity`]).
    pub transformed: Vec<bool>,
    /// Spectral resolution per axis (`N`: the real length along the r2c axis).
    pub resolution: Vec<usize>,
    /// A distributed 1-D transform ([`crate::one_d`]): axes 0 and 1 of the shape are the
    /// `rows × cols` matrix of the plan's axis 0, and the FFTs along axis 0 carry twiddles.
    pub one_d: bool,
    pub forward_scale: f64,
    pub backward_scale: f64,
    /// [`FftOptions::deterministic`].
    pub deterministic: bool,
}

impl Spec {
    /// Checks `options` against `shape` (the spectral resolution; the real length along the
    /// last axis of a real-to-complex transform) from global arguments only.
    pub(crate) fn new(shape: &[usize], options: &FftOptions, domain: Domain) -> Result<Self> {
        let d = shape.len();
        if d == 0 || (d < 2 && domain != Domain::Complex) {
            return Err(FftError::TooFewDimensions {
                shape: shape.to_vec(),
            });
        }
        if d == 1 || options.one_d.is_some() {
            return Self::one_d(shape, options, domain);
        }
        redist::layout::check_shape(shape)?;
        let bad = |reason: String| FftError::BadOptions {
            shape: shape.to_vec(),
            reason,
        };
        if options.batch == 0 {
            return Err(bad("batch must be at least 1, got 0".into()));
        }
        if options.threads == Some(0) {
            return Err(bad("threads must be at least 1, got 0".into()));
        }
        let axes = axis_kinds(shape, options, domain)?;
        let factors = options.padding.clone().unwrap_or_else(|| vec![1.0; d]);
        if factors.len() != d {
            return Err(bad(format!(
                "padding has {} factors for {d} axes: {factors:?}",
                factors.len()
            )));
        }
        let mut physical = shape.to_vec();
        for (axis, &f) in factors.iter().enumerate() {
            if !f.is_finite() || f < 1.0 {
                return Err(bad(format!(
                    "padding factors must be finite and at least 1, axis {axis} has {f}"
                )));
            }
            let m = (shape[axis] as f64 * f).floor() as usize;
            if m != shape[axis] && axes[axis] != AxisKind::Fft {
                return Err(bad(format!(
                    "padding is supported on FFT axes only, axis {axis} is {:?} with factor {f}",
                    axes[axis]
                )));
            }
            physical[axis] = m;
        }
        redist::layout::check_shape(&physical)?;
        let mut spectral = shape.to_vec();
        if domain == Domain::RealToComplex {
            let half = last_transformed(&axes);
            spectral[half] = shape[half] / 2 + 1;
        }
        let logical: f64 = axes
            .iter()
            .zip(shape)
            .map(|(k, &n)| k.logical_size(n) as f64)
            .product();
        let (mut forward_scale, backward_scale) = options.normalization.factors_f64(logical);
        for axis in 0..d {
            if physical[axis] != shape[axis] {
                forward_scale *= shape[axis] as f64 / physical[axis] as f64;
            }
        }
        Ok(Self {
            transformed: axes.iter().map(|k| k.is_transformed()).collect(),
            shape: TransformShape {
                physical,
                spectral,
                domain,
            },
            axes,
            resolution: shape.to_vec(),
            forward_scale,
            backward_scale,
            deterministic: options.deterministic,
            one_d: false,
        })
    }

    /// The spec of a distributed 1-D transform of `shape` (`[n]`, or `[n, h…]` with identity
    /// axes after the first; `options.one_d`'s columns resolved by [`crate::one_d::resolve`]):
    /// the shape `[rows, cols, h…]`, FFTs along the first two axes.
    fn one_d(shape: &[usize], options: &FftOptions, domain: Domain) -> Result<Self> {
        redist::layout::check_shape(shape)?;
        let bad = |reason: String| FftError::BadOptions {
            shape: shape.to_vec(),
            reason,
        };
        let d = shape.len();
        if domain != Domain::Complex {
            return Err(bad("a distributed 1-D transform is complex-to-complex (FFTW-MPI has no distributed 1-D real transforms)".into()));
        }
        if options.batch == 0 || options.threads == Some(0) {
            return Err(bad(format!(
                "batch and threads must be at least 1, got {} and {:?}",
                options.batch, options.threads
            )));
        }
        let want: Vec<AxisKind> = std::iter::once(AxisKind::Fft)
            .chain(std::iter::repeat_n(AxisKind::Identity, d - 1))
            .collect();
        if options.axes.as_ref().is_some_and(|a| *a != want) {
            return Err(bad(format!(
                "a distributed 1-D transform takes the axes {want:?}, got {:?}",
                options.axes
            )));
        }
        if options
            .padding
            .as_ref()
            .is_some_and(|p| p.iter().any(|&f| f != 1.0))
        {
            return Err(bad(format!(
                "a distributed 1-D transform takes no padding, got {:?}",
                options.padding
            )));
        }
        if options.transposed_in || options.transposed_out {
            return Err(bad("a distributed 1-D transform has scrambled orders (OneD::scrambled_in, scrambled_out) instead of transposed layouts".into()));
        }
        let n = shape[0];
        let cols = options.one_d.and_then(|o| o.columns).unwrap_or(n);
        if cols == 0 || !n.is_multiple_of(cols) {
            return Err(bad(format!(
                "one_d columns must divide the axis of {n} points, got {cols}"
            )));
        }
        let physical: Vec<usize> = [n / cols, cols]
            .into_iter()
            .chain(shape[1..].iter().copied())
            .collect();
        let axes: Vec<AxisKind> = [AxisKind::Fft, AxisKind::Fft]
            .into_iter()
            .chain(std::iter::repeat_n(AxisKind::Identity, d - 1))
            .collect();
        let (forward_scale, backward_scale) = options.normalization.factors_f64(n as f64);
        Ok(Self {
            transformed: axes.iter().map(|k| k.is_transformed()).collect(),
            shape: TransformShape {
                physical: physical.clone(),
                spectral: physical.clone(),
                domain,
            },
            axes,
            resolution: physical,
            forward_scale,
            backward_scale,
            deterministic: options.deterministic,
            one_d: true,
        })
    }
}
