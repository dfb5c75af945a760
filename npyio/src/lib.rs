//! # npyio
//!
//! Reading and writing C-order `.npy` files block-wise from many MPI ranks.
//!
//! ```no_run
//! use std::path::Path;
//! use mpi::traits::*;
//! use num_complex::Complex64;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let path = Path::new("field.npy");
//!
//! // Rank r owns rows [r * 4, r * 4 + 4) of a (4 * size) x 8 array.
//! let r = world.rank() as usize;
//! let rows = 4 * world.size() as usize;
//! let block: Vec<Complex64> = (0..32).map(|i| Complex64::new((r * 32 + i) as f64, 0.0)).collect();
//! npyio::write_block(&world, path, &[rows, 8], &[4 * r, 0], &[4, 8], &block)?;
//!
//! // Read it back with the same decomposition.
//! let header = npyio::read_header(path)?;
//! let mut back = vec![Complex64::default(); 32];
//! npyio::read_block(&world, path, &header, &[4 * r, 0], &[4, 8], &mut back)?;
//! assert_eq!(back, block);
//! # Ok::<(), npyio::NpyError>(())
//! ```
//!
//! * [`header`] (no MPI): the `.npy` header — [`parse_header`],
//!   [`read_header`], [`encode_header`], [`Dtype`], [`NpyHeader`].
//! * [`parallel`]: collective MPI-IO — [`read_block`] and [`write_block`] let
//!   every rank read or write only its own rectangular block of the array in
//!   one shared file, without gathering anything on one rank.
//! * [`staging`]: what makes outputs all-or-nothing (a reserved temporary
//!   file renamed into place once every rank succeeded; only regular files
//!   replaced), and [`guard`]: opt-in signal handlers and a launcher watchdog
//!   for programs, so an interrupted or orphaned job removes its temporaries
//!   and never publishes.
//!
//! Supported element types are little-endian `float32`, `float64`,
//! `complex64` and `complex128` in C order, i.e. the `.npy` files that numpy
//! writes for such arrays by default.

#![warn(missing_docs)]

mod error;
pub mod guard;
pub mod header;
pub mod parallel;
pub mod staging;

pub use error::NpyError;
pub use header::{encode_header, parse_header, read_header, Dtype, NpyHeader};
pub use parallel::{read_block, write_block, NpyElement};
pub use staging::{
    check_output_target, open_input, read_capped, remove_staged_files, replace_file, Staged,
};
