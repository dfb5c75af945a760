//! What `dfft run` transforms: `--kind` and `--precision`, and the `.npy` dtypes they read and
//! write.

use fft_core::R2rKind;
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
///
/// ```ignore
/// assert_eq!("r2r:dct2,dst1".parse::<Kind>().unwrap().to_string(), "r2r:dct2,dst1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Kind {
    /// Complex to complex (`fft_core::FftPlan`).
    #[default]
    C2c,
    /// Real to complex half spectrum, numpy's `rfftn` layout (`fft_core::RealFftPlan`).
    R2c,
    /// Complex half spectrum to real (`fft_core::RealFftPlan`'s backward), numpy's `irfftn`.
    C2r,
    /// Real to real, one type per axis (`fft_core::R2rPlan`).
    R2r(Vec<R2rKind>),
}

impl Kind {
    /// The dtype `--input` must hold for this kind in `precision` (the forward input).
    pub fn input_dtype(&self, precision: Precision) -> Dtype {
        match self {
            Kind::C2c | Kind::C2r => precision.complex_dtype(),
            Kind::R2c | Kind::R2r(_) => precision.real_dtype(),
        }
    }

    /// Another dtype `--input` may hold: a c2c run also reads a real file of its precision
    /// (imaginary part zero), as `numpy.fft.fftn` takes real arrays.
    pub fn widened_input_dtype(&self, precision: Precision) -> Option<Dtype> {
        match self {
            Kind::C2c => Some(precision.real_dtype()),
            _ => None,
        }
    }

    /// The global shape of the forward input for the physical `shape`: the half spectrum
    /// (`n/2 + 1` on the last axis) for c2r, `shape` otherwise.
    pub fn input_shape(&self, shape: &[usize]) -> Vec<usize> {
        let mut s = shape.to_vec();
        if *self == Kind::C2r {
            if let Some(last) = s.last_mut() {
                *last = *last / 2 + 1;
            }
        }
        s
    }

    /// The product of the logical transform sizes (what normalization divides by): the
    /// number of elements of the physical `shape`, with each r2r axis counted at its logical
    /// size (2(n−1) for DCT-I, 2(n+1) for DST-I, 2n otherwise). In f64: it may exceed usize.
    pub fn logical_len(&self, shape: &[usize]) -> f64 {
        match self {
            Kind::R2r(types) => types
                .iter()
                .zip(shape)
                .map(|(t, &n)| t.logical_size(n) as f64)
                .product(),
            _ => shape.iter().map(|&n| n as f64).product(),
        }
    }

    /// Whether this kind's forward is the plan's backward (c2r: the run's forward is the
    /// complex-to-real direction of a real-input plan).
    pub fn forward_is_backward(&self) -> bool {
        *self == Kind::C2r
    }

    /// Checks the kind against the number of axes (same answer on every rank).
    pub fn check_axes(&self, shape: &[usize]) -> Result<(), KindError> {
        match self {
            Kind::R2r(types) if types.len() != shape.len() => Err(KindError::R2rCount {
                kind: self.to_string(),
                types: types.len(),
                shape: shape.to_vec(),
            }),
            Kind::R2r(types) => match types
                .iter()
                .zip(shape)
                .position(|(&t, &n)| t == fft_core::R2rKind::Dct1 && n < 2)
            {
                Some(axis) => Err(KindError::Dct1TooShort {
                    kind: self.to_string(),
                    axis,
                    n: shape[axis],
                }),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::C2c => f.write_str("c2c"),
            Kind::R2c => f.write_str("r2c"),
            Kind::C2r => f.write_str("c2r"),
            Kind::R2r(types) => {
                let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
                write!(f, "r2r:{}", names.join(","))
            }
        }
    }
}

/// A malformed `--kind`, or one that does not fit the shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    /// Not one of the kinds.
    #[error("unknown transform kind '{0}' (expected c2c, r2c, c2r or r2r:<types>, e.g. r2r:dct2,dct2,dst1)")]
    Unknown(String),
    /// `r2r` without its list of types.
    #[error("'{0}' needs one real-to-real type per axis after a colon, e.g. r2r:dct2,dct2,dst1")]
    R2rMissingTypes(String),
    /// An unknown name in the r2r list.
    #[error("unknown real-to-real type '{name}' in '{kind}' (expected dct1, dct2, dct3, dct4, dst1, dst2, dst3, dst4, r2hc, hc2r or dht)")]
    R2rUnknownType { name: String, kind: String },
    /// An r2r list whose length is not the number of axes.
    #[error("--kind {kind} gives {types} real-to-real type(s) but the shape {shape:?} has {} axes", shape.len())]
    R2rCount {
        kind: String,
        types: usize,
        shape: Vec<usize>,
    },
    /// A DCT-I along an axis of one point (its basis needs two).
    #[error("--kind {kind}: DCT-I needs at least 2 points, axis {axis} has {n}")]
    Dct1TooShort { kind: String, axis: usize, n: usize },
}

impl FromStr for Kind {
    type Err = KindError;

    fn from_str(s: &str) -> Result<Self, KindError> {
        let t = s.trim();
        match t {
            "c2c" => return Ok(Kind::C2c),
            "r2c" => return Ok(Kind::R2c),
            "c2r" => return Ok(Kind::C2r),
            "r2r" => return Err(KindError::R2rMissingTypes(s.to_string())),
            _ => {}
        }
        let Some(list) = t.strip_prefix("r2r:") else {
            return Err(KindError::Unknown(s.to_string()));
        };
        if list.trim().is_empty() {
            return Err(KindError::R2rMissingTypes(s.to_string()));
        }
        list.split(',')
            .map(|name| {
                name.trim()
                    .parse::<R2rKind>()
                    .map_err(|_| KindError::R2rUnknownType {
                        name: name.trim().to_string(),
                        kind: s.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Kind::R2r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print_back() {
        for s in [
            "c2c",
            "r2c",
            "c2r",
            "r2r:dct1,dct2,dct3,dct4,dst1,dst2,dst3,dst4",
            "r2r:r2hc,hc2r,dht",
        ] {
            assert_eq!(s.parse::<Kind>().unwrap().to_string(), s);
        }
        assert_eq!(
            "r2r:DCT2, dst1".parse::<Kind>().unwrap(),
            Kind::R2r(vec![R2rKind::Dct2, R2rKind::Dst1])
        );
        assert_eq!(
            "r2r:dct2,dct5".parse::<Kind>(),
            Err(KindError::R2rUnknownType {
                name: "dct5".into(),
                kind: "r2r:dct2,dct5".into()
            })
        );
        assert_eq!(
            "r2r:dct2,".parse::<Kind>(),
            Err(KindError::R2rUnknownType {
                name: "".into(),
                kind: "r2r:dct2,".into()
            })
        );
        for bad in ["r2r", "r2r:"] {
            assert_eq!(
                bad.parse::<Kind>(),
                Err(KindError::R2rMissingTypes(bad.into()))
            );
        }
        assert_eq!("fft".parse::<Kind>(), Err(KindError::Unknown("fft".into())));
    }

    #[test]
    fn shapes_sizes_and_dtypes() {
        assert_eq!(Kind::C2r.input_shape(&[8, 6, 5]), vec![8, 6, 3]);
        assert_eq!(Kind::R2c.input_shape(&[8, 6, 5]), vec![8, 6, 5]);
        let r2r: Kind = "r2r:dct1,dst1,dct2".parse().unwrap();
        assert_eq!(r2r.logical_len(&[5, 5, 5]), 8.0 * 12.0 * 10.0);
        assert_eq!(Kind::R2c.logical_len(&[5, 4]), 20.0);
        assert!(r2r.check_axes(&[5, 5]).is_err());
        assert_eq!(Kind::C2r.input_dtype(Precision::F32), Dtype::C64);
        assert_eq!(r2r.input_dtype(Precision::F64), Dtype::F64);
    }
}
