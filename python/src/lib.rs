//! `dfft._dfft`: the compiled part of the `dfft` Python package.
//!
//! A thin layer over the Rust API: [`plan::Pfft`] wraps `fft_core`'s `AnyPlan` (an `FftPlan`,
//! `RealFftPlan` or `R2rPlan`), [`redistribute::Redistribution`] wraps `redist`'s block-cyclic
//! redistribution. Communicators come from mpi4py (the raw `MPI_Comm` handle, duplicated), so
//! the extension must link the same `libmpi` as mpi4py; the Python side checks that at import.
//!
//! Every check on user input is collective ([`comm::agree`]): a wrong array on one rank raises
//! the same `ValueError` on every rank instead of leaving the others in an exchange.

mod args;
mod arrays;
mod blocks;
mod comm;
mod errors;
mod halo;
mod in_place;
mod one_d;
mod plan;
mod redistribute;
mod spectral;
mod transform;

use pyo3::prelude::*;

/// The MPI library's own version string (`MPI_Get_library_version`), to compare with
/// mpi4py's: both must name the same library.
#[pyfunction]
fn mpi_library_version() -> PyResult<String> {
    comm::library_version()
}

/// The `dfft` crate version this extension was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// For the tests: a panic inside a collective step on rank ``on_rank`` of ``comm`` while the
/// others wait in a barrier, as a bug in dfft would (``PanicException`` on one rank; with
/// several, the message and ``MPI_Abort``, never a hang).
#[pyfunction]
#[pyo3(name = "_panic_in_collective", signature = (comm, on_rank=0))]
fn panic_in_collective(comm: &Bound<'_, PyAny>, on_rank: i32) -> PyResult<()> {
    use mpi::traits::*;
    let comm = comm::from_mpi4py(comm)?;
    comm::collective(&comm, || {
        if comm.rank() == on_rank {
            panic!("a panic for the tests on rank {on_rank}");
        }
        comm.barrier();
    });
    Ok(())
}

#[pymodule]
fn _dfft(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DfftError", m.py().get_type::<errors::DfftError>())?;
    m.add_class::<plan::Pfft>()?;
    m.add_class::<redistribute::Redistribution>()?;
    m.add_function(wrap_pyfunction!(mpi_library_version, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(panic_in_collective, m)?)?;
    m.add_function(wrap_pyfunction!(redistribute::global_shape, m)?)?;
    Ok(())
}
