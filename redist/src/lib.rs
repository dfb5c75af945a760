//! # redist
//!
//! Distributed d-dimensional arrays on r-dimensional Cartesian processor grids (r < d), and
//! the exchanges that move them between block layouts, after Birkeland & Sørøvik's pencil
//! decomposition; block-cyclic distributions and general redistribution between them.
//!
//! ```no_run
//! use redist::{Exchange, ExchangePlan, GridShape, Layout, MemoryOrder, Method};
//! use redist::{ProcessGrid, StageTimes};
//! use mpi::traits::*;
//!
//! let universe = mpi::initialize().unwrap();
//! redist::comm::abort_on_panic(); // a panic on one rank ends the job instead of hanging it
//! let world = universe.world();
//! // A 16×21×41 array on a 2-D grid of every rank: pencils along axis 2, then along axis 1.
//! let dims = GridShape::balanced(world.size() as usize, 2).unwrap();
//! let grid = ProcessGrid::new(&world, dims.clone()).unwrap();
//! let z_pencils = Layout::pencil(&[16, 21, 41], dims.clone()).unwrap();
//! let order = MemoryOrder::natural(3).with_contiguous(1);
//! let y_pencils = Layout::new(&[16, 21, 41], dims, vec![0, 2], order).unwrap();
//! let plan = ExchangePlan::new(&z_pencils, &y_pencils).unwrap(); // pure data, no MPI
//! let mut exchange = Exchange::new(&grid, &plan, Method::Alltoallv).unwrap();
//!
//! // Every element holds its global index, so the result is checked exactly.
//! let rank = grid.rank();
//! let mut src = vec![0u64; z_pencils.local_len(rank)];
//! z_pencils.fill_index_valued(rank, &mut src, |g| g);
//! let mut dst = vec![0u64; exchange.dst_len()];
//! let mut send = vec![0u64; exchange.send_len()];
//! let mut recv = vec![0u64; exchange.recv_len()];
//! let mut times = StageTimes::default();
//! exchange.execute(&src, &mut dst, &mut send, &mut recv, &mut times).unwrap();
//! let mut want = vec![0u64; y_pencils.local_len(rank)];
//! y_pencils.fill_index_valued(rank, &mut want, |g| g);
//! assert_eq!(dst, want);
//! ```
//!
//! The crate keeps planning apart from communication:
//!
//! * pure data, no MPI: [`split`] (the balanced block rule), [`grid::GridShape`],
//!   [`layout::Layout`] (who owns what, in which memory order), [`plan::ExchangePlan`] (per
//!   peer what to send and where it lands), [`chain::plan_chain`] (several exchanges), and the
//!   strided copy kernels of [`pack`];
//! * block-cyclic distributions and general redistribution (Dongarra, Prylli, Randriamaro and
//!   Tourancheau's ScaLAPACK redistribution; Thakur, Choudhary and Ramanujam's cyclic(x) to
//!   cyclic(y) methods; the distributions of Parallel ESSL): [`dist`] (per-axis maps and
//!   [`dist::DistArray`]), [`cyclic::plan::RedistPlan`] (pure),
//!   [`cyclic::run::Redistribution`] (MPI schedules) and [`cyclic::thakur`];
//! * MPI: [`comm::ProcessGrid`] (Cartesian communicator plus one sub-communicator per grid
//!   dimension), [`exchange::Exchange`] (pack, move, unpack) and [`transport`], the one layer
//!   that moves messages for both (`MPI_Alltoallv`, pairwise steps, chunks past MPI's 32-bit
//!   counts, shared-memory windows).
//!
//! The planning part alone, no MPI:
//!
//! ```
//! use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, plan::ExchangePlan};
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
pub mod piecewise;
pub mod plan;
pub mod split;
pub mod transport;

pub use comm::ProcessGrid;
pub use element::Element;
pub use error::{RedistError, Result};
pub use exchange::{Exchange, Method, StageTimes};
pub use grid::GridShape;
pub use layout::{Layout, MemoryOrder};
pub use plan::ExchangePlan;
