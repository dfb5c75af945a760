//! The error type of `fft-core`.

use redist::RedistError;
use thiserror::Error;

/// Everything a user of `fft-core` can get wrong, with the offending values. Checks depend on
/// global arguments only, so every rank returns the same error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FftError {
    /// An error from the layout and exchange layer.
    #[error(transparent)]
    Redist(#[from] RedistError),
    /// A transform needs at least two dimensions to be distributed.
    #[error("a distributed FFT needs an array of at least 2 dimensions, got shape {shape:?}")]
    TooFewDimensions {
        /// The shape given.
        shape: Vec<usize>,
    },
    /// A caller's buffer has the wrong length.
    #[error(
        "{buffer} buffer has length {actual}, expected {expected} (the local block of this rank)"
    )]
    BufferLength {
        /// Which buffer.
        buffer: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
    /// A malformed `--grid` value.
    #[error("malformed grid choice '{spec}': expected 'auto', a grid rank such as '2', or dimensions such as '4x2'")]
    BadGridChoice {
        /// The text given.
        spec: String,
    },
    /// A malformed normalization name.
    #[error("unknown normalization '{name}' (expected one of: none, backward, ortho)")]
    UnknownNormalization {
        /// The text given.
        name: String,
    },
}

/// Result alias of this crate.
pub type Result<T, E = FftError> = std::result::Result<T, E>;
