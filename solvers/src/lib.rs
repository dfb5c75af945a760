//! # solvers
//!
//! ```no_run
//! use solvers::poisson::{ManufacturedSolution, Poisson};
//! use solvers::GridChoice;
//!
//! fn main() -> Result<(), solvers::SolverError> {
//!     let universe = mpi::initialize().expect("MPI initializes");
//!     let world = universe.world();
//!     // ∇²u = f on [0, 2π)³ with 32×24×40 points over every rank (pencils or slabs: Auto).
//!     let mut poisson = Poisson::new(&world, [32, 24, 40], GridChoice::Auto)?;
//!     let exact = ManufacturedSolution;
//!     let points = poisson.space().coordinates(); // this rank's points, in memory order
//!     let f: Vec<f64> = points.iter().map(|&p| exact.rhs(p)).collect();
//!     let mut u = vec![0.0; f.len()];
//!     poisson.solve(&f, &mut u)?;
//!     let error = points.iter().zip(&u).map(|(&p, &u)| (u - exact.solution(p)).abs());
//!     assert!(error.fold(0.0, f64::max) < 1e-10);
//!     Ok(())
//! }
//! ```
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
//! [`checkpoint`]: Navier–Stokes checkpoints in parallel HDF5 files and bit-identical restarts.
//!
//! [`spectral::SpectralBox`] is the piece both share: the distributed transform of several
//! real fields at once and the global wavenumber of every local spectral element.
//! Equations, validation results and timings: `docs/solvers.md`.
#![warn(missing_docs)]

pub mod checkpoint;
pub mod cli;
pub mod error;
pub mod flows;
pub mod navier_stokes;
pub mod poisson;
pub mod spectral;

pub use error::{Result, SolverError};
pub use fft_core::GridChoice;
pub use spectral::{Dealias, SpectralBox};
