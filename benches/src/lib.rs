//! Benchmarks of dfft against its peers (FFTW-MPI, ScaLAPACK) live in this crate; see the
//! README. The performance issue fills it in.

pub mod floors;
