//! fft-core as a user outside this repository gets it: the ndarray API and local spectral
//! grids under real MPI ([`ndarray_api`]), the examples under mpirun ([`examples`]), and the
//! crates' packaging, down to a new crate that depends on fft-core alone ([`packaging`]).
//! One test executable for the three, so the suite links fft-core's tests once more, not
//! three times.

#[path = "../common/mod.rs"]
mod common;
mod examples;
mod ndarray_api;
mod packaging;

// The examples' sources, as `cargo build --examples` builds them.
#[path = "../../examples/c2c_roundtrip.rs"]
mod c2c_roundtrip;
#[path = "../../examples/poisson.rs"]
mod poisson;
#[path = "../../examples/r2c_derivative.rs"]
mod r2c_derivative;
