//! # fft-cli
//!
//! The `dfft` command: distributed FFTs and redistributions from the command line, under
//! `mpirun`, `srun` or alone.
//!
//! ```sh
//! cargo install fft-cli
//! mpirun -n 4 dfft run --shape 256,256,256 --kind r2c   # time and verify
//! dfft run --help
//! ```
//!
//! The command is this crate's interface; its library target is empty. Programs use the
//! library crate [`fft-core`](https://docs.rs/fft-core) instead.
