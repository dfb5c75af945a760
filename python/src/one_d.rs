//! A distributed 1-D transform's local blocks: one contiguous range of positions of the axis
//! in the forward input and one in the forward output, each in order or in FFTW-MPI's
//! scrambled order (fft-core's `OneD`).

use crate::errors::DfftError;
use crate::spectral::AxisWaves;
use fft_core::{wavenumber, OneD};
use pyo3::prelude::*;
use redist::Layout;
use std::ops::Range;

/// The `OneD` option of `PFFT(shape, scrambled_in=, scrambled_out=)`: `None` (fft-core's
/// default) unless a flag is set; the flags on a shape of more than one axis are an error.
pub fn option(shape: &[usize], scrambled_in: bool, scrambled_out: bool) -> PyResult<Option<OneD>> {
    if !(scrambled_in || scrambled_out) {
        return Ok(None);
    }
    if shape.len() != 1 {
        return Err(DfftError::new_err(format!(
            "scrambled_in and scrambled_out apply to 1-D shapes (n,), got shape {shape:?}"
        )));
    }
    Ok(Some(OneD {
        columns: None,
        scrambled_in,
        scrambled_out,
    }))
}

/// This rank's positions of the axis, and how to read the output's.
pub struct OneDBlocks {
    /// Positions held in the forward input and in the forward output.
    pub ranges: [Range<usize>; 2],
    /// The output's `rows × cols` matrix when it is scrambled (position `p` holds
    /// `X[p / cols + rows·(p % cols)]`).
    scrambled_out: Option<(usize, usize)>,
}

impl OneDBlocks {
    /// The blocks of `rank` in the plan's `input` and `output` layouts (slabs of the axis's
    /// `rows × cols` matrix), whose output is scrambled when `scrambled_out`.
    pub fn new(input: &Layout, output: &Layout, rank: usize, scrambled_out: bool) -> Self {
        let shape = output.global_shape();
        Self {
            ranges: [input, output].map(|l| fft_core::one_d::range_1d(l, rank)),
            scrambled_out: scrambled_out.then(|| (shape[0], shape[1])),
        }
    }

    /// The wavenumbers of the local output positions of an axis of `n` points.
    pub fn waves(&self, n: usize) -> AxisWaves {
        let index = |p: usize| match self.scrambled_out {
            Some((rows, cols)) => p / cols + rows * (p % cols),
            None => p,
        };
        AxisWaves {
            k: self.ranges[1]
                .clone()
                .map(|p| wavenumber(n, index(p)))
                .collect(),
            k_max: n as f64 / 2.0,
        }
    }
}
