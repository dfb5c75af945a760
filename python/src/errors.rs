//! Rust errors as Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;
use redist::RedistError;

create_exception!(
    _dfft,
    DfftError,
    PyValueError,
    "An error reported by the dfft library (bad shape, grid, options or distribution). A \
     ValueError, raised alike on every rank."
);

/// Every `fft_core` error but a failed MPI call comes from the arguments.
pub fn fft_error(err: fft_core::FftError) -> PyErr {
    match err {
        fft_core::FftError::Redist(e) => redist_error(e),
        other => DfftError::new_err(other.to_string()),
    }
}

/// An MPI failure is a `RuntimeError`; the rest come from the arguments.
pub fn redist_error(err: RedistError) -> PyErr {
    match err {
        RedistError::Mpi { .. } => PyRuntimeError::new_err(err.to_string()),
        other => DfftError::new_err(other.to_string()),
    }
}

/// A failed collective check: the message of the lowest failing rank, on every rank.
pub fn value_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}
