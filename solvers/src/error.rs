//! The error type of the solvers.

use fft_core::FftError;
use thiserror::Error;

/// Everything a solver's user can get wrong, with the offending values. Checks use global
/// arguments only, so every rank returns the same error.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SolverError {
    /// An error from the transforms.
    #[error(transparent)]
    Fft(#[from] FftError),
    /// A box must transform at least one field.
    #[error("a spectral box needs at least one field component, got 0")]
    NoComponents,
    /// A caller's buffer has the wrong length.
    #[error("{buffer} buffer has length {actual}, expected {expected} (all components of this rank's block)")]
    BufferLength {
        /// Which buffer.
        buffer: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
    /// A malformed dealiasing rule.
    #[error(
        "unknown dealiasing rule '{name}' (expected one of: pad (or 3/2), truncate (or 2/3), none)"
    )]
    UnknownDealias {
        /// The text given.
        name: String,
    },
    /// A malformed flow name.
    #[error("unknown flow '{name}' (expected one of: taylor-green, beltrami)")]
    UnknownFlow {
        /// The text given.
        name: String,
    },
    /// A physical parameter out of range.
    #[error("{name} must be {requirement}, got {value}")]
    BadParameter {
        /// The parameter.
        name: &'static str,
        /// What it must satisfy.
        requirement: &'static str,
        /// The value given.
        value: f64,
    },
    /// A run whose result is further from the exact answer than its tolerance.
    #[error("verification failed: {what} = {value:e} exceeds the tolerance {tolerance:e}")]
    Verification {
        /// What was measured.
        what: &'static str,
        /// The measured value.
        value: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// A diagnostic of the field became NaN or infinite: the run diverged.
    #[error("the {quantity} is {value} at step {step} (t = {time}): the run diverged; a smaller --dt or a larger --nu keeps it stable")]
    NonFinite {
        /// Which diagnostic.
        quantity: &'static str,
        /// Its value (NaN or ±inf).
        value: f64,
        /// Steps taken.
        step: u64,
        /// Simulated time.
        time: f64,
    },
    /// A flow with wavenumbers the grid cannot represent (or that the dealiasing rule removes).
    #[error("the {flow} flow needs wavenumbers up to {needed} on every axis, but {modes:?} modes with {dealias} dealiasing keep only |k| <= {kept:?}")]
    Unresolved {
        /// Which flow.
        flow: &'static str,
        /// Largest |k_i| of the flow.
        needed: u64,
        /// The spectral resolution.
        modes: [usize; 3],
        /// The rule.
        dealias: &'static str,
        /// Largest |k_i| kept per axis.
        kept: [u64; 3],
    },
    /// A checkpoint that cannot be written or read.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A checkpoint of another run than the one restarted.
    #[error("checkpoint {path}: its {what} is {file}, but this run's is {run}")]
    CheckpointMismatch {
        /// The file.
        path: String,
        /// What differs.
        what: &'static str,
        /// The file's value.
        file: String,
        /// The run's value.
        run: String,
    },
}

/// Result alias of this crate.
pub type Result<T, E = SolverError> = std::result::Result<T, E>;
