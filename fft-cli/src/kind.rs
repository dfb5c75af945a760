//! What `dfft run` transforms: `--kind` and `--precision`, and the `.npy` dtypes they read and
//! write.

use npyio::Dtype;
use std::fmt;
use std::str::FromStr;

/// `--precision`: the real type the transforms run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Precision {
    /// `f32` (complex64 / float32 files).
    F32,
    /// `f64` (complex128 / float64 files).
    #[default]
    F64,
}

impl Precision {
    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// The real `.npy` dtype of this precision.
    pub fn real_dtype(self) -> Dtype {
        match self {
            Precision::F32 => Dtype::F32,
            Precision::F64 => Dtype::F64,
        }
    }

    /// The complex `.npy` dtype of this precision.
    pub fn complex_dtype(self) -> Dtype {
        match self {
            Precision::F32 => Dtype::C64,
            Precision::F64 => Dtype::C128,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `--kind`: which transform `dfft run` times and verifies. Its "forward" is the direction the
/// kind names (c2r: complex half spectrum to real); the timed pair is forward then backward.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Kind {
    /// Complex to complex (`fft_core::FftPlan`).
    #[default]
    C2c,
}

impl Kind {
    /// The dtype `--input` must hold for this kind in `precision` (the forward input).
    pub fn input_dtype(&self, precision: Precision) -> Dtype {
        match self {
            Kind::C2c => precision.complex_dtype(),
        }
    }

    /// Another dtype `--input` may hold: a c2c run also reads a real file of its precision
    /// (imaginary part zero), as `numpy.fft.fftn` takes real arrays.
    pub fn widened_input_dtype(&self, precision: Precision) -> Option<Dtype> {
        match self {
            Kind::C2c => Some(precision.real_dtype()),
        }
    }

    /// The product of the logical transform sizes (what normalization divides by): the
    /// number of elements of the physical `shape` for FFT axes.
    pub fn logical_len(&self, shape: &[usize]) -> usize {
        match self {
            Kind::C2c => shape.iter().product(),
        }
    }

    /// Whether this kind's forward is the plan's backward (c2r: the run's forward is the
    /// complex-to-real direction of a real-input plan).
    pub fn forward_is_backward(&self) -> bool {
        false
    }

    /// Checks the kind against the number of axes (same answer on every rank).
    pub fn check_axes(&self, _shape: &[usize]) -> Result<(), KindError> {
        match self {
            Kind::C2c => Ok(()),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::C2c => f.write_str("c2c"),
        }
    }
}

/// A malformed `--kind`, or one that does not fit the shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    /// Not one of the kinds.
    #[error("unknown transform kind '{0}' (expected c2c)")]
    Unknown(String),
}

impl FromStr for Kind {
    type Err = KindError;

    /// ```ignore
    /// assert_eq!("c2c".parse::<Kind>().unwrap(), Kind::C2c);
    /// ```
    fn from_str(s: &str) -> Result<Self, KindError> {
        match s.trim() {
            "c2c" => Ok(Kind::C2c),
            _ => Err(KindError::Unknown(s.to_string())),
        }
    }
}
