//! Local spectral grids: for the output (spectral) layout of any plan, the wavenumbers of this
//! rank's block per axis as broadcastable [`ndarray`] arrays, `|k|²`, the 2/3 and 3/2
//! dealiasing masks, and the Hermitian weights of a real-to-complex spectrum.
//!
//! ```no_run
//! use fft_core::{FftOptions, RealFftPlan};
//! let universe = fft_core::mpi::initialize().unwrap();
//! let opts = FftOptions::default().transposed_out(true);
//! let plan = RealFftPlan::<f64>::new(&universe.world(), &[32, 32, 32], opts).unwrap();
//! let grid = plan.spectral_grid();
//! let kx = grid.k(0); // shape [n0_local, 1, 1]: broadcasts against the block
//! let k2 = grid.k2(); // shape of this rank's spectral block, stored in its memory order
//! let mask = grid.two_thirds_mask();
//! assert_eq!(k2.shape(), plan.output_layout().local_shape(plan.rank()).as_slice());
//! # let _ = (kx, mask);
//! ```
//!
//! Wavenumbers are those of a box of length `L_a = 2π` per axis unless
//! [`SpectralGrid::with_lengths`] says otherwise:
//!
//! * FFT axes of `N` points: `2π/L · k` with `k` numpy's `fftfreq(N)·N` (`0, 1, …, −1`);
//! * the halved last axis of a real-to-complex plan (`N` real points): `2π/L · k`,
//!   `k = 0 ..= N/2`;
//! * real-to-real axes: `π/L · m`, `m` the frequency of the kind's basis function for index
//!   `k`: `k` for DCT-I and DCT-II, `k + 1` for DST-I and DST-II, `k + ½` for the other kinds
//!   (so `d²/dx²` of a cosine or sine series on `[0, L]` multiplies mode `k` by `−(πm/L)²`).
//!
//! Full-shape arrays ([`SpectralGrid::k2`], the masks, the weights) have the logical shape of
//! this rank's block and are stored in the layout's memory order, so
//! `as_slice_memory_order()` lines up element for element with one field of the plan's
//! output buffer.

use crate::error::{FftError, Result};
use crate::options::{AxisKind, R2rKind};
use crate::plan::{Kind, Plan};
use crate::real::Real;
use crate::spectral::wavenumber;
use crate::stages::Domain;
use crate::view::owned_block;
use ndarray::{ArrayD, IxDyn, Zip};
use num_complex::Complex;
use redist::{Element, Layout};
use std::f64::consts::PI;

/// What one axis of a spectrum holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpectralAxis {
    /// The `n` wavenumbers of a DFT, in FFT order (numpy's `fftfreq(n)·n`).
    Fft {
        /// Number of modes (the spectral length, without padding).
        n: usize,
    },
    /// The non-negative wavenumbers `0 ..= n/2` of a real-to-complex FFT of `n` real points
    /// (`n/2 + 1` spectral elements).
    Half {
        /// Number of real points (the unpadded length).
        n: usize,
    },
    /// A real-to-real transform of `n` points.
    R2r {
        /// The kind.
        kind: R2rKind,
        /// Number of points.
        n: usize,
    },
    /// An axis a partial transform leaves alone ([`AxisKind::Identity`]): `n` points, each
    /// with wavenumber 0 (the axis adds nothing to `|k|²` and no mask restricts it).
    Identity {
        /// Number of points.
        n: usize,
    },
}

impl SpectralAxis {
    /// Number of spectral elements along the axis.
    pub fn len(self) -> usize {
        match self {
            SpectralAxis::Fft { n }
            | SpectralAxis::R2r { n, .. }
            | SpectralAxis::Identity { n } => n,
            SpectralAxis::Half { n } => n / 2 + 1,
        }
    }

    /// Whether the axis has no elements (never, for an axis of a valid plan).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The wavenumber of spectral index `index` on an axis of length `length`.
    pub fn wavenumber(self, index: usize, length: f64) -> f64 {
        match self {
            SpectralAxis::Fft { n } => 2.0 * PI / length * wavenumber(n, index) as f64,
            SpectralAxis::Half { .. } => 2.0 * PI / length * index as f64,
            // The halfcomplex slots k and n − k hold mode k's cosine and sine; the Hartley
            // index k is mode k of the period, as on a DFT axis.
            SpectralAxis::R2r {
                kind: R2rKind::R2hc | R2rKind::Hc2r,
                n,
            } => 2.0 * PI / length * index.min(n - index) as f64,
            SpectralAxis::R2r {
                kind: R2rKind::Dht,
                n,
            } => 2.0 * PI / length * wavenumber(n, index) as f64,
            SpectralAxis::R2r { kind, .. } => {
                let m = index as f64
                    + match kind {
                        R2rKind::Dct1 | R2rKind::Dct2 => 0.0,
                        R2rKind::Dst1 | R2rKind::Dst2 => 1.0,
                        _ => 0.5,
                    };
                PI / length * m
            }
            SpectralAxis::Identity { .. } => 0.0,
        }
    }

    /// Whether Orszag's 2/3 rule keeps index `index`: `3|k| < n` on DFT axes (integer `k`);
    /// real-to-real axes keep everything.
    pub fn keeps_two_thirds(self, index: usize) -> bool {
        match self {
            SpectralAxis::Fft { n } => 3 * wavenumber(n, index).unsigned_abs() < n as u64,
            SpectralAxis::Half { n } => 3 * index < n,
            SpectralAxis::R2r { .. } | SpectralAxis::Identity { .. } => true,
        }
    }

    /// Whether index `index` is the Nyquist mode (`|k| = n/2` for even `n`) of a DFT axis,
    /// which a product formed on the 3/2-padded grid does not return.
    pub fn is_nyquist(self, index: usize) -> bool {
        match self {
            SpectralAxis::Fft { n } | SpectralAxis::Half { n } => {
                n % 2 == 0 && wavenumber(n, index).unsigned_abs() as usize == n / 2
            }
            SpectralAxis::R2r { .. } | SpectralAxis::Identity { .. } => false,
        }
    }
}

/// The wavenumbers of one rank's block of a spectral layout; see [`crate::grids`].
#[derive(Debug, Clone, PartialEq)]
pub struct SpectralGrid<T> {
    layout: Layout,
    rank: usize,
    axes: Vec<SpectralAxis>,
    lengths: Vec<f64>,
    k: Vec<ArrayD<T>>,
}

impl<T: Real> SpectralGrid<T> {
    /// The grid of `rank`'s block of `layout` (a spectral layout: global shape
    /// `axes[a].len()` along each axis), for a box of length 2π per axis. Pure: any rank's
    /// grid can be made anywhere. Errors if `axes` does not match the layout's shape.
    pub fn new(layout: &Layout, rank: usize, axes: Vec<SpectralAxis>) -> Result<Self> {
        let lengths = vec![2.0 * PI; axes.len()];
        Self::with_lengths_of(layout, rank, axes, lengths)
    }

    fn with_lengths_of(
        layout: &Layout,
        rank: usize,
        axes: Vec<SpectralAxis>,
        lengths: Vec<f64>,
    ) -> Result<Self> {
        let shape = layout.global_shape();
        let bad = |reason: String| FftError::BadOptions {
            shape: shape.to_vec(),
            reason,
        };
        let lens: Vec<usize> = axes.iter().map(|a| a.len()).collect();
        if lens != shape {
            return Err(bad(format!(
                "spectral axes {axes:?} have lengths {lens:?}, but the layout's global shape is \
                 {shape:?}"
            )));
        }
        if lengths.len() != axes.len() || lengths.iter().any(|l| !(l.is_finite() && *l > 0.0)) {
            return Err(bad(format!(
                "box lengths must be one finite positive number per axis, got {lengths:?}"
            )));
        }
        let ranges = layout.global_ranges(rank);
        let d = axes.len();
        let k = (0..d)
            .map(|a| {
                let values: Vec<T> = ranges[a]
                    .clone()
                    .map(|g| T::of(axes[a].wavenumber(g, lengths[a])))
                    .collect();
                broadcastable(values, a, d)
            })
            .collect();
        Ok(Self {
            layout: layout.clone(),
            rank,
            axes,
            lengths,
            k,
        })
    }

    /// The same grid for a box of length `lengths[a]` along axis `a` (wavenumbers scale by
    /// `2π/L`); errors unless there is one finite positive length per axis.
    pub fn with_lengths(self, lengths: &[f64]) -> Result<Self> {
        Self::with_lengths_of(&self.layout, self.rank, self.axes, lengths.to_vec())
    }

    /// What each axis holds.
    pub fn axes(&self) -> &[SpectralAxis] {
        &self.axes
    }

    /// The box lengths.
    pub fn lengths(&self) -> &[f64] {
        &self.lengths
    }

    /// The spectral layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The rank whose block this is.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The shape of the block, logical order.
    pub fn local_shape(&self) -> Vec<usize> {
        self.layout.local_shape(self.rank)
    }

    /// The wavenumbers along logical axis `axis` of this rank's block, shaped to broadcast:
    /// length 1 on every other axis.
    ///
    /// # Panics
    /// If `axis` is not an axis of the layout.
    pub fn k(&self, axis: usize) -> &ArrayD<T> {
        &self.k[axis]
    }

    /// The wavenumbers of every axis, as [`SpectralGrid::k`].
    pub fn wavenumbers(&self) -> &[ArrayD<T>] {
        &self.k
    }

    /// The wavenumber along logical axis `axis` of every element of the block (full shape,
    /// memory order of the layout): [`SpectralGrid::k`] broadcast, for loops over the raw
    /// buffer (`as_slice_memory_order()`).
    ///
    /// # Panics
    /// If `axis` is not an axis of the layout.
    pub fn k_full(&self, axis: usize) -> ArrayD<T> {
        let mut out = self.full(T::zero());
        Zip::from(&mut out)
            .and_broadcast(&self.k[axis])
            .for_each(|o, &k| *o = k);
        out
    }

    /// A full-shape array (stored in the layout's memory order) with every element `init`.
    fn full(&self, init: T) -> ArrayD<T> {
        let len = self.layout.local_len(self.rank);
        owned_block(&self.layout, self.rank, 1, vec![init; len])
    }

    /// A full-shape array of the product over axes of `per_axis(axis, global index)`.
    fn product_over_axes(&self, per_axis: impl Fn(SpectralAxis, usize) -> bool) -> ArrayD<T> {
        let mut out = self.full(T::one());
        let ranges = self.layout.global_ranges(self.rank);
        let d = self.axes.len();
        for (a, &axis) in self.axes.iter().enumerate() {
            let factors: Vec<T> = ranges[a]
                .clone()
                .map(|g| {
                    if per_axis(axis, g) {
                        T::one()
                    } else {
                        T::zero()
                    }
                })
                .collect();
            let factors = broadcastable(factors, a, d);
            Zip::from(&mut out)
                .and_broadcast(&factors)
                .for_each(|o, &f| *o = *o * f);
        }
        out
    }

    /// `|k|² = Σ_a k_a²` of every element of the block (full shape, memory order of the
    /// layout).
    pub fn k2(&self) -> ArrayD<T> {
        let mut out = self.full(T::zero());
        for k in &self.k {
            Zip::from(&mut out)
                .and_broadcast(k)
                .for_each(|o, &k| *o = *o + k * k);
        }
        out
    }

    /// Orszag's 2/3 rule: 1 for the modes with `3|k_a| < N_a` on every DFT axis (the
    /// real-to-complex half axis included), 0 for the others; real-to-real axes are not
    /// restricted. Multiplying a product's spectrum by it removes its aliases.
    pub fn two_thirds_mask(&self) -> ArrayD<T> {
        self.product_over_axes(SpectralAxis::keeps_two_thirds)
    }

    /// The mask for products formed on a 3/2-padded grid (a plan with
    /// [`crate::FftOptions::padding`]): 1 except for the Nyquist modes (`|k_a| = N_a/2` for
    /// even `N_a`) of DFT axes, which the padded transforms drop.
    pub fn three_halves_mask(&self) -> ArrayD<T> {
        self.product_over_axes(|axis, g| !axis.is_nyquist(g))
    }

    /// How many modes each stored element stands for in sums over the whole spectrum of a
    /// real field (Parseval): 2 where the half axis of a real-to-complex plan (the last
    /// transformed axis) has its conjugate mode not stored (`0 < k < N/2`), else 1. So the
    /// mean of `|u|²` is `Σ weight·|û|²` over the stored modes of all ranks, for `û` normalized by the number
    /// of points.
    pub fn hermitian_weights(&self) -> ArrayD<T> {
        let two = T::one() + T::one();
        let mut out = self.full(T::one());
        let d = self.axes.len();
        let half = (self.axes.iter()).position(|a| matches!(a, SpectralAxis::Half { .. }));
        if let Some((axis, SpectralAxis::Half { n })) = half.map(|a| (a, self.axes[a])) {
            let range = self.layout.global_range(self.rank, axis);
            let weights: Vec<T> = range
                .map(|g| if g == 0 || 2 * g == n { T::one() } else { two })
                .collect();
            let weights = broadcastable(weights, axis, d);
            Zip::from(&mut out)
                .and_broadcast(&weights)
                .for_each(|o, &w| *o = w);
        }
        out
    }
}

/// `values` as an array of `d` axes, of length 1 except along `axis`.
fn broadcastable<T>(values: Vec<T>, axis: usize, d: usize) -> ArrayD<T> {
    let mut shape = vec![1; d];
    shape[axis] = values.len();
    ArrayD::from_shape_vec(IxDyn(&shape), values).expect("length matches")
}

/// The spectral axes of a plan: `kinds` per axis (`None`: all FFT), the spectral shape, and
/// for a real-to-complex plan its half axis and that axis's real length.
fn plan_axes(
    kinds: Option<&Vec<AxisKind>>,
    spectral: &[usize],
    half: Option<(usize, usize)>,
) -> Vec<SpectralAxis> {
    let d = spectral.len();
    (0..d)
        .map(|a| match (half, kinds.map(|k| k[a])) {
            (Some((axis, n)), _) if a == axis => SpectralAxis::Half { n },
            (_, Some(AxisKind::Identity)) => SpectralAxis::Identity { n: spectral[a] },
            (_, Some(AxisKind::R2r(kind))) => SpectralAxis::R2r {
                kind,
                n: spectral[a],
            },
            _ => SpectralAxis::Fft { n: spectral[a] },
        })
        .collect()
}

/// The unpadded real length `n` of the last axis of a real-to-complex plan with spectral
/// length `s = n/2 + 1`, physical length `m = ⌊n·f⌋` and padding factor `f`: one of
/// `2s − 2`, `2s − 1` (⌊n·f⌋ increases strictly with `n` for `f ≥ 1`, so only one fits).
fn half_axis_real_len(s: usize, m: usize, factor: f64) -> usize {
    [2 * s - 1, (2 * s).saturating_sub(2)]
        .into_iter()
        .find(|&n| n > 0 && (n as f64 * factor).floor() as usize == m)
        .expect("the physical length of a real-to-complex axis comes from its real length")
}

impl<K: Kind<T>, T: Real> Plan<K, T>
where
    Complex<T>: Element,
{
    /// The wavenumbers of this rank's spectral (forward-output) block (for a real-to-complex
    /// plan, the real-to-complex axis holding the non-negative half); see [`crate::grids`].
    pub fn spectral_grid(&self) -> SpectralGrid<T> {
        let kinds = self.options().axes.as_ref();
        let half = (K::DOMAIN == Domain::RealToComplex).then(|| {
            let d = self.spectral_shape().len();
            let half = kinds.map_or(d - 1, |k| crate::spec::last_transformed(k));
            let factor = self.options().padding.as_ref().map_or(1.0, |p| p[half]);
            let n = half_axis_real_len(
                self.spectral_shape()[half],
                self.global_shape()[half],
                factor,
            );
            (half, n)
        });
        let axes = plan_axes(kinds, self.spectral_shape(), half);
        SpectralGrid::new(self.output_layout(), self.rank(), axes).expect("the plan's own axes")
    }
}

#[cfg(test)]
mod tests;
