//! # solvers
//!
//! Two spectral PDE solvers built on [`fft_core`], each runnable under `mpirun` (binaries
//! `poisson` and `navier-stokes`) and validated against exact solutions in the test suite:
//!
//! * [`poisson`]: `∇²u = f` on the periodic box [0, 2π)³, checked on a manufactured solution
//!   (error at round-off level).
//! * [`navier_stokes`]: pseudo-spectral incompressible Navier–Stokes in rotational form,
//!   dealiased, RK4, pressure by projection; checked on an exact decaying Beltrami (ABC) flow
//!   and run on the Taylor–Green vortex ([`flows`]).
//!
//! [`spectral::SpectralBox`] is the piece both share: the distributed transform of several
//! real fields at once and the global wavenumber of every local spectral element.
//! Equations, validation results and timings: `docs/solvers.md`.
#![warn(missing_docs)]

pub mod cli;
pub mod error;
pub mod flows;
pub mod navier_stokes;
pub mod poisson;
pub mod spectral;

pub use error::{Result, SolverError};
pub use spectral::{Dealias, SpectralBox};
