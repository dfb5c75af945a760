//! # fft-core
//!
//! Distributed multidimensional FFTs over MPI: 1-D [rustfft] plans swept along each locally
//! resident axis, between the pencil exchanges of [`redist`] (Birkeland & Sørøvik's scheme).
//!
//! * [`FftPlan`]: complex-to-complex, `f64` or `f32`, any d ≥ 2, any grid rank r < d, any grid
//!   shape, uneven sizes; optional transposed output; normalization per [`Normalization`].
//! * [`RealFftPlan`]: real-to-complex forward / complex-to-real backward (numpy's `rfftn`
//!   layout), the real FFT first on the locally resident last axis so exchanges move half the
//!   data; [`R2rPlan`]: real-to-real kinds ([`R2rKind`], FFTW's REDFT/RODFT) on every axis.
//! * Options for all three ([`FftOptions`]): batches of fields with one exchange per stage,
//!   real-to-real axes mixed with FFT axes ([`AxisKind`]), padding for dealiasing (3/2 rule);
//!   [`wavenumber`] indexes the spectrum. Conventions: `docs/spectral.md`.
//!
//! * [`SharedBlock`]: input and output blocks the plan allocates (`alloc_input`,
//!   `alloc_output`); on one node every rank's lie in one shared-memory window, and the
//!   exchanges move rows between them in place.
//!
//! One generic code path serves every plan kind and precision (`T: Real`).
//! * [`model`]: the complexity model (Birkeland and Sørøvik §5) that predicts each candidate
//!   grid's time and chooses the grid for [`GridChoice::Auto`] from the
//!   [`model::MachineProfile`] in [`FftOptions::machine`].
//! * [`stages`]: the pure part (layouts, stage list), testable without MPI.
//!
//! Conventions: logical axis 0 varies slowest (C order); the forward transform uses
//! `exp(-2πi k·n/N)` and is unnormalized; backward uses `exp(+2πi k·n/N)` and is unnormalized
//! unless [`Normalization::Backward`] or [`Normalization::Ortho`] is chosen.
#![warn(missing_docs)]

mod column;
mod engine;
pub mod error;
#[cfg(test)]
mod line_lengths;
pub mod local;
pub mod memory;
pub mod model;
pub mod options;
pub mod plan;
pub mod real;
mod rows;
pub mod shared;
pub mod spectral;
pub mod stages;
mod transpose;

pub use error::{FftError, Result};
pub use options::{AxisKind, FftOptions, GridChoice, Normalization, R2rKind};
pub use plan::FftPlan;
pub use real::Real;
pub use redist::{Method, StageTimes};
pub use shared::SharedBlock;
pub use spectral::{wavenumber, R2rPlan, RealFftPlan};
