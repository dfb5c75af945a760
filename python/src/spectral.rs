//! Local spectral grids: the wavenumbers a rank holds, `|k|²` and dealiasing masks on its
//! spectral block. Pure functions of the plan's layout; the arrays follow the block's memory
//! order (its axes as the caller's numpy array has them).

use fft_core::{wavenumber, AxisKind};
use numpy::ndarray::{ArrayD, IxDyn};
use std::ops::Range;

/// One logical axis of the local spectral block.
pub struct AxisWaves {
    /// Wavenumber of each local index.
    pub k: Vec<i64>,
    /// The largest |k| the axis can hold (`N/2` for FFT axes, `N` for real-to-real axes).
    pub k_max: f64,
}

/// The wavenumbers of global indices `range` along an axis of `n` modes (the real length for
/// the half-spectrum axis of an r2c plan).
pub fn axis_waves(kind: AxisKind, n: usize, half_spectrum: bool, range: Range<usize>) -> AxisWaves {
    match kind {
        AxisKind::Fft if !half_spectrum => AxisWaves {
            k: range.map(|i| wavenumber(n, i)).collect(),
            k_max: n as f64 / 2.0,
        },
        AxisKind::Fft => AxisWaves {
            k: range.map(|i| i as i64).collect(),
            k_max: n as f64 / 2.0,
        },
        AxisKind::R2r(_) => AxisWaves {
            k: range.map(|i| i as i64).collect(),
            k_max: n as f64,
        },
        // An untransformed axis: wavenumber 0 everywhere, never masked.
        AxisKind::Identity => AxisWaves {
            k: range.map(|_| 0).collect(),
            k_max: 1.0,
        },
    }
}

/// Fills an array of the block's memory shape from per-axis values combined by `f` over the
/// logical axes; `memory[j]` is the logical axis of array axis `j`.
fn fill<T>(waves: &[AxisWaves], memory: &[usize], f: impl Fn(&[usize]) -> T) -> ArrayD<T> {
    let shape: Vec<usize> = memory.iter().map(|&a| waves[a].k.len()).collect();
    let mut logical = vec![0usize; memory.len()];
    ArrayD::from_shape_fn(IxDyn(&shape), |ix| {
        for (j, &a) in memory.iter().enumerate() {
            logical[a] = ix[j];
        }
        f(&logical)
    })
}

/// `|k_a| < fraction · k_max_a` along every axis, on the local block.
pub fn dealias_mask(waves: &[AxisWaves], fraction: f64, memory: &[usize]) -> ArrayD<bool> {
    fill(waves, memory, |ix| {
        ix.iter()
            .enumerate()
            .all(|(a, &i)| (waves[a].k[i].unsigned_abs() as f64) < fraction * waves[a].k_max)
    })
}
