//! # redist
//!
//! Distributed d-dimensional arrays on r-dimensional Cartesian processor grids (r < d), and
//! the exchanges that move them between block layouts, after Birkeland & Sørøvik (seed 000).
//!
//! The crate keeps planning apart from communication:
//!
//! * pure data, no MPI: [`split`] (the balanced block rule), [`grid::GridShape`],
//!   [`layout::Layout`] (who owns what, in which memory order), [`plan::ExchangePlan`] (per
//!   peer what to send and where it lands), [`chain::plan_chain`] (several exchanges), and the
//!   strided copy kernels of [`pack`];
//! * block-cyclic distributions and general redistribution (seeds 001-003): [`dist`]
//!   (per-axis maps and [`dist::DistArray`]), [`cyclic::plan::RedistPlan`] (pure),
//!   [`cyclic::run::Redistribution`] (MPI schedules) and [`thakur`] (cyclic(x) → cyclic(y));
//! * MPI: [`comm::ProcessGrid`] (Cartesian communicator plus one sub-communicator per grid
//!   dimension), [`exchange::Exchange`] (pack, move, unpack) and [`transport`], the one layer
//!   that moves messages for both (`MPI_Alltoallv`, pairwise steps, chunks past MPI's 32-bit
//!   counts, shared-memory windows).
//!
//! ```
//! use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, plan::ExchangePlan};
//! // A 16×21×41 array on a 3×2 grid: pencils along axis 2, then along axis 1.
//! let grid = GridShape::new(vec![3, 2]).unwrap();
//! let x_pencils = Layout::pencil(&[16, 21, 41], grid.clone()).unwrap();
//! let y_pencils = Layout::new(&[16, 21, 41], grid, vec![0, 2],
//!                             MemoryOrder::natural(3).with_contiguous(1)).unwrap();
//! let plan = ExchangePlan::new(&x_pencils, &y_pencils).unwrap();
//! assert_eq!(plan.grid_dim(), 1);
//! assert_eq!(y_pencils.local_shape(0), vec![6, 21, 21]);
//! ```
#![warn(missing_docs)]

pub mod alloc;
pub mod chain;
pub mod comm;
pub mod cyclic;
pub mod dist;
pub mod element;
pub mod error;
pub mod exchange;
pub mod grid;
pub mod layout;
mod names;
pub mod pack;
pub mod plan;
pub mod runs;
pub mod split;
pub mod thakur;
pub mod transport;

/// The shared-memory windows, at their former path.
pub use transport::window;

/// Planning of block-cyclic redistributions, at its former path ([`cyclic::plan`]).
#[doc(hidden)]
pub mod redistribute {
    pub use crate::cyclic::copy::{CopyMap, RankRedist, Transfer};
    pub use crate::cyclic::plan::*;
}

/// Running block-cyclic redistributions, at its former path ([`cyclic::run`]).
#[doc(hidden)]
pub use cyclic::run as redistribution;

pub use comm::ProcessGrid;
pub use element::Element;
pub use error::{RedistError, Result};
pub use exchange::{Exchange, Method, StageTimes};
pub use grid::GridShape;
pub use layout::{Layout, MemoryOrder};
pub use plan::ExchangePlan;
