//! What a user chooses when making a plan.

use crate::error::{FftError, Result};
use redist::{GridShape, Method};
use std::fmt;
use std::str::FromStr;

/// How to shape the processor grid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GridChoice {
    /// Let dfft choose with the complexity model (see [`crate::model`] and
    /// [`crate::stages::resolve_grid`]).
    #[default]
    Auto,
    /// A grid of this rank r with balanced dimensions, as `MPI_Dims_create` would choose.
    Rank(usize),
    /// Explicit grid dimensions; their product must be the number of processes.
    Dims(Vec<usize>),
}

impl FromStr for GridChoice {
    type Err = FftError;

    /// ```
    /// use fft_core::GridChoice;
    /// assert_eq!("auto".parse::<GridChoice>().unwrap(), GridChoice::Auto);
    /// assert_eq!("2".parse::<GridChoice>().unwrap(), GridChoice::Rank(2));
    /// assert_eq!("4x2".parse::<GridChoice>().unwrap(), GridChoice::Dims(vec![4, 2]));
    /// assert!("4x".parse::<GridChoice>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(GridChoice::Auto);
        }
        let bad = || FftError::BadGridChoice {
            spec: s.to_string(),
        };
        if t.contains(['x', 'X']) {
            return GridShape::parse(t)
                .map(|g| GridChoice::Dims(g.dims().to_vec()))
                .map_err(|_| bad());
        }
        match t.parse::<usize>() {
            Ok(r) if r >= 1 => Ok(GridChoice::Rank(r)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for GridChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridChoice::Auto => f.write_str("auto"),
            GridChoice::Rank(r) => write!(f, "{r}"),
            GridChoice::Dims(d) => {
                let parts: Vec<String> = d.iter().map(|x| x.to_string()).collect();
                f.write_str(&parts.join("x"))
            }
        }
    }
}

/// Scaling of the transforms. The forward transform computes
/// `X[k] = Σ_n x[n] exp(-2πi k·n/N)`, the backward one the same sum with `+`; `N` is the
/// total number of elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Normalization {
    /// Neither direction is scaled (FFTW's convention): backward(forward(x)) = N·x.
    #[default]
    None,
    /// Backward is scaled by 1/N (numpy's default): backward(forward(x)) = x.
    Backward,
    /// Both directions are scaled by 1/√N (unitary).
    Ortho,
}

impl FromStr for Normalization {
    type Err = FftError;

    /// ```
    /// use fft_core::Normalization;
    /// assert_eq!("ortho".parse::<Normalization>().unwrap(), Normalization::Ortho);
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Normalization::None),
            "backward" => Ok(Normalization::Backward),
            "ortho" => Ok(Normalization::Ortho),
            _ => Err(FftError::UnknownNormalization {
                name: s.to_string(),
            }),
        }
    }
}

impl Normalization {
    /// The factors (forward, backward) for `n` elements.
    pub fn factors(self, n: usize) -> (f64, f64) {
        match self {
            Normalization::None => (1.0, 1.0),
            Normalization::Backward => (1.0, 1.0 / n as f64),
            Normalization::Ortho => {
                let s = 1.0 / (n as f64).sqrt();
                (s, s)
            }
        }
    }

    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Normalization::None => "none",
            Normalization::Backward => "backward",
            Normalization::Ortho => "ortho",
        }
    }
}

/// Options of an [`crate::FftPlan`].
///
/// ```
/// use fft_core::{FftOptions, GridChoice, Normalization};
/// let opts = FftOptions::default()
///     .grid(GridChoice::Rank(2))
///     .normalization(Normalization::Backward)
///     .transposed_out(true);
/// assert!(opts.transposed_out);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FftOptions {
    /// Processor grid.
    pub grid: GridChoice,
    /// How exchanges move data.
    pub method: Method,
    /// Scaling.
    pub normalization: Normalization,
    /// Leave the forward output in the last pencil layout (skip the exchanges back); backward
    /// then takes that layout as input. Like FFTW-MPI's `TRANSPOSED_OUT`/`TRANSPOSED_IN`.
    pub transposed_out: bool,
}

impl FftOptions {
    /// Sets the grid choice.
    pub fn grid(mut self, grid: GridChoice) -> Self {
        self.grid = grid;
        self
    }

    /// Sets the exchange method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Sets the normalization.
    pub fn normalization(mut self, normalization: Normalization) -> Self {
        self.normalization = normalization;
        self
    }

    /// Sets transposed output.
    pub fn transposed_out(mut self, transposed_out: bool) -> Self {
        self.transposed_out = transposed_out;
        self
    }
}
