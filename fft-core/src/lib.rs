//! # fft-core
//!
//! Distributed multidimensional FFTs over MPI for spectral codes: complex, real-to-complex and
//! real-to-real transforms of arrays of any dimension on slab or pencil decompositions.
//!
//! ```no_run
//! use fft_core::mpi::traits::*;
//! use fft_core::{Complex, FftOptions, FftPlan, Normalization};
//!
//! fn main() -> Result<(), fft_core::FftError> {
//!     let universe = fft_core::mpi::initialize().expect("MPI initializes");
//!     fft_core::abort_on_panic(); // a panic on one rank ends the job instead of hanging it
//!     let world = universe.world();
//!     let opts = FftOptions::default().normalization(Normalization::Backward);
//!     let mut plan = FftPlan::<f64>::new(&world, &[64, 48, 40], opts)?;
//!     let mut u = plan.input_array(); // this rank's block and its layout
//!     u.fill_with(|g| Complex::new(g[0] as f64, (g[1] * g[2]) as f64)); // by global index
//!     let mut u_hat = plan.output_array();
//!     plan.forward_array(&u, &mut u_hat)?; // collective; allocates nothing
//!     let mut back = plan.input_array();
//!     plan.backward_array(&u_hat, &mut back)?;
//!     let pairs = back.as_slice().iter().zip(u.as_slice());
//!     let error = pairs.map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
//!     println!("rank {}/{}: block {:?}, error {error:.1e}", world.rank(), world.size(), u.local_slice());
//!     assert!(error < 1e-9);
//!     Ok(())
//! }
//! ```
//!
//! Run it with `mpirun -n 4`. One dependency line suffices: the crate re-exports [`mpi`]
//! (rsmpi), [`Complex`], [`ndarray`], [`redist`] and its layout types.
//!
//! The pieces, after Birkeland & Sørøvik's pencil decomposition: 1-D [rustfft] plans swept
//! along each locally resident axis, between the pencil exchanges of [`redist`].
//!
//! * [`FftPlan`]: complex-to-complex, `f64` or `f32`, any d ≥ 2, any grid rank r < d, any grid
//!   shape, uneven sizes; optional transposed output; normalization per [`Normalization`].
//! * [`RealFftPlan`]: real-to-complex forward / complex-to-real backward (numpy's `rfftn`
//!   layout), the real FFT first on the locally resident last axis so exchanges move half the
//!   data; [`R2rPlan`]: real-to-real kinds ([`R2rKind`], FFTW's REDFT/RODFT, R2HC/HC2R and
//!   DHT) on every axis.
//! * Options for all three ([`FftOptions`]): batches of fields with one exchange per stage,
//!   real-to-real axes mixed with FFT axes ([`AxisKind`]), padding for dealiasing (3/2 rule);
//!   [`wavenumber`] indexes the spectrum. Conventions: `docs/spectral.md`.
//!
//! * In place ([`FftOptions::in_place`]): one buffer per rank, `forward_in_place` and
//!   `backward_in_place` on every plan kind; [`RealFftPlan`]'s real rows in FFTW's padded
//!   layout (`2·(n/2+1)` scalars per row; [`as_complex`] views the spectrum). See
//!   `docs/library.md`.
//!
//! * [`SharedBlock`]: input and output blocks the plan allocates (`alloc_input`,
//!   `alloc_output`); on one node every rank's lie in one shared-memory window, and the
//!   exchanges move rows between them in place.
//!
//! * Every plan's blocks as [`ndarray`] views in the global axis order whatever the memory
//!   order ([`view`]: `plan.input_view(&buf)`, `plan.output_view_mut(&mut buf)`), owned
//!   distributed arrays ([`PencilArray`]: `plan.input_array()`, `plan.forward_array(&u, &mut
//!   u_hat)`), and the wavenumbers, `|k|²` and dealiasing masks of this rank's spectral block
//!   ([`grids`]: `plan.spectral_grid()`).
//!
//! One generic code path serves every plan kind and precision (`T: Real`).
//! * [`halo`]: halo (ghost-cell) exchange on any layout of a plan ([`HaloPlan`]): each
//!   rank's block extended by a width per axis, periodic or filled at the global boundary,
//!   in one collective call.
//! * [`AnyPlan`]: a plan of a kind ([`PlanKind`]) and [`Precision`] chosen at run time, as
//!   the Python and C bindings hold one; [`Transform`], the typed operations every plan kind
//!   shares, and [`with_any_plan!`] run generic code on the plan inside.
//! * [`model`]: the complexity model (Birkeland and Sørøvik §5) that predicts each candidate
//!   grid's time and chooses the grid for [`GridChoice::Auto`] from the
//!   [`model::MachineProfile`] in [`FftOptions::machine`].
//! * [`stages`]: the pure part (layouts, stage list), testable without MPI.
//!
//! Conventions: logical axis 0 varies slowest (C order); the forward transform uses
//! `exp(-2πi k·n/N)` and is unnormalized; backward uses `exp(+2πi k·n/N)` and is unnormalized
//! unless [`Normalization::Backward`] or [`Normalization::Ortho`] is chosen.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod any_plan;
mod engine;
pub mod error;
pub mod grids;
pub mod groups;
pub mod halo;
mod kernels;
/// Local 1-D FFT sweeps, usable alone ([`local::Sweep`]).
pub mod local {
    pub use crate::kernels::Sweep;
}
mod lower;
pub mod memory;
pub mod model;
pub mod one_d;
pub mod options;
pub mod pencil_array;
pub mod plan;
pub mod profile;
mod program;
pub mod real;
mod run;
pub mod shared;
mod spec;
pub mod spectral;
pub mod stages;
pub mod threads;
pub mod view;

pub use any_plan::{AnyPlan, PlanKind, Precision, Transform};

/// The most threads per rank the callers accept (`dfft --threads`, Python's `threads=`):
/// more threads than any node has cores only add start-up time and memory.
pub const MAX_THREADS: usize = 1024;
pub use error::{FftError, Result};
pub use grids::{SpectralAxis, SpectralGrid};
pub use groups::Groups;
pub use halo::{Boundary, HaloArray, HaloPlan};
pub use options::{AxisKind, FftOptions, GridChoice, Normalization, OneD, R2rKind};
pub use pencil_array::PencilArray;
pub use plan::{C2c, Direction, FftPlan, Kind, Plan, R2c, R2r};
pub use profile::{StepKind, StepProfile};
pub use real::{as_complex, as_complex_mut, Real};
pub use redist::{Method, StageTimes};
pub use shared::SharedBlock;
pub use spectral::{wavenumber, R2rPlan, RealFftPlan};

// What a caller needs besides this crate, so that one dependency line suffices.
pub use mpi;
pub use ndarray;
pub use num_complex::{self, Complex};
pub use redist::{self, comm::abort_on_panic, GridShape, Layout, MemoryOrder, ProcessGrid};
