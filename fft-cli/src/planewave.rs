//! A seeded random sum of plane waves: input whose exact forward transform every rank can
//! compute for its own block, with no gather.
//!
//! `x[n] = Σ_m a_m · exp(2πi Σ_j k_{m,j} n_j / N_j)` has the unnormalized forward transform
//! `X[k] = N · Σ_{m : k_m = k} a_m`, zero elsewhere.

use num_complex::Complex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redist::Layout;
use std::f64::consts::PI;

/// The waves: wave vectors and amplitudes.
#[derive(Debug, Clone)]
pub struct PlaneWaves {
    shape: Vec<usize>,
    waves: Vec<(Vec<usize>, Complex<f64>)>,
}

impl PlaneWaves {
    /// `count` waves with random wave vectors and amplitudes from `seed` (identical on every
    /// rank).
    pub fn random(shape: &[usize], count: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let waves = (0..count)
            .map(|_| {
                let k = shape.iter().map(|&n| rng.gen_range(0..n)).collect();
                let a = Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
                (k, a)
            })
            .collect();
        Self {
            shape: shape.to_vec(),
            waves,
        }
    }

    /// Fills `rank`'s block of `layout` (in its memory order).
    pub fn fill(&self, layout: &Layout, rank: usize, out: &mut [Complex<f64>]) {
        let ranges = layout.global_ranges(rank);
        let strides = layout.local_strides(rank);
        // Per wave and axis, the phase factors over the local range: products make the values.
        let tables: Vec<Vec<Vec<Complex<f64>>>> = self
            .waves
            .iter()
            .map(|(k, _)| {
                ranges
                    .iter()
                    .enumerate()
                    .map(|(j, r)| {
                        r.clone()
                            .map(|n| {
                                let phase =
                                    (k[j] * n % self.shape[j]) as f64 / self.shape[j] as f64;
                                Complex::from_polar(1.0, 2.0 * PI * phase)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        for_each_local(&ranges, &strides, |idx, off| {
            let mut v = Complex::new(0.0, 0.0);
            for ((_, a), table) in self.waves.iter().zip(&tables) {
                let mut p = *a;
                for (j, &i) in idx.iter().enumerate() {
                    p *= table[j][i];
                }
                v += p;
            }
            out[off] = v;
        });
    }

    /// max |X − X_exact| / (N · max |a|) over `rank`'s block of the forward output.
    pub fn forward_error(&self, layout: &Layout, rank: usize, spectrum: &[Complex<f64>]) -> f64 {
        let n: usize = self.shape.iter().product();
        let ranges = layout.global_ranges(rank);
        let strides = layout.local_strides(rank);
        let mut err: f64 = 0.0;
        for_each_local(&ranges, &strides, |idx, off| {
            let mut want = Complex::new(0.0, 0.0);
            for (k, a) in &self.waves {
                if k.iter()
                    .zip(idx)
                    .zip(&ranges)
                    .all(|((&kj, &i), r)| kj == r.start + i)
                {
                    want += a * n as f64;
                }
            }
            err = err.max((spectrum[off] - want).norm());
        });
        let amax = self.waves.iter().map(|(_, a)| a.norm()).fold(0.0, f64::max);
        err / (n as f64 * amax)
    }
}

/// Calls `f(local index, offset)` for every element of a block with the given global ranges
/// and memory strides.
fn for_each_local(
    ranges: &[std::ops::Range<usize>],
    strides: &[usize],
    mut f: impl FnMut(&[usize], usize),
) {
    let d = ranges.len();
    if ranges.iter().any(|r| r.is_empty()) {
        return;
    }
    let mut idx = vec![0; d];
    loop {
        let off = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
        f(&idx, off);
        let mut k = d;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < ranges[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}
