//! Shared helpers of the MPI tests: a serial reference FFT and block comparisons.
#![allow(dead_code)]

use num_complex::Complex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redist::Layout;
use rustfft::{FftDirection, FftPlanner};

/// The same pseudo-random global array on every rank (C order).
pub fn random_global(shape: &[usize], seed: u64) -> Vec<Complex<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n: usize = shape.iter().product();
    (0..n)
        .map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
        .collect()
}

/// Serial d-dimensional DFT of a C-order array, one axis at a time (no distribution involved).
pub fn serial_fft(
    data: &[Complex<f64>],
    shape: &[usize],
    direction: FftDirection,
) -> Vec<Complex<f64>> {
    let mut out = data.to_vec();
    let mut planner = FftPlanner::new();
    for axis in 0..shape.len() {
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        let fft = planner.plan_fft(n, direction);
        let mut line = vec![Complex::default(); n];
        for o in 0..outer {
            for c in 0..inner {
                for i in 0..n {
                    line[i] = out[(o * n + i) * inner + c];
                }
                fft.process(&mut line);
                for i in 0..n {
                    out[(o * n + i) * inner + c] = line[i];
                }
            }
        }
    }
    out
}

/// Direct O(N²) DFT, to validate `serial_fft` itself on small arrays.
pub fn naive_dft(data: &[Complex<f64>], shape: &[usize], sign: f64) -> Vec<Complex<f64>> {
    let n: usize = shape.iter().product();
    let unravel = |mut lin: usize| {
        let mut idx = vec![0; shape.len()];
        for (i, &s) in idx.iter_mut().zip(shape).rev() {
            *i = lin % s;
            lin /= s;
        }
        idx
    };
    (0..n)
        .map(|k| {
            let kk = unravel(k);
            let mut acc = Complex::new(0.0, 0.0);
            for (j, x) in data.iter().enumerate() {
                let jj = unravel(j);
                let phase: f64 = kk
                    .iter()
                    .zip(&jj)
                    .zip(shape)
                    .map(|((&a, &b), &s)| (a * b % s) as f64 / s as f64)
                    .sum();
                acc += x * Complex::from_polar(1.0, sign * 2.0 * std::f64::consts::PI * phase);
            }
            acc
        })
        .collect()
}

/// This rank's block of a global C-order array, in the layout's memory order.
pub fn local_block<T: Copy + Default>(global: &[T], layout: &Layout, rank: usize) -> Vec<T> {
    let shape = layout.global_shape();
    let ranges = layout.global_ranges(rank);
    let strides = layout.local_strides(rank);
    let mut out = vec![T::default(); layout.local_len(rank)];
    let total = out.len();
    for mut lin in 0..total {
        let (mut off, mut g) = (0, 0);
        let mut idx = vec![0; shape.len()];
        for k in (0..shape.len()).rev() {
            idx[k] = lin % ranges[k].len();
            lin /= ranges[k].len();
        }
        for k in 0..shape.len() {
            off += idx[k] * strides[k];
            g = g * shape[k] + ranges[k].start + idx[k];
        }
        out[off] = global[g];
    }
    out
}

/// max |a − b| / max |reference| (0 when both are empty).
pub fn relative_error(got: &[Complex<f64>], reference: &[Complex<f64>], scale: f64) -> f64 {
    assert_eq!(got.len(), reference.len());
    let diff = got
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    diff / scale.max(f64::MIN_POSITIVE)
}

/// max |x| over a global array.
pub fn max_norm(data: &[Complex<f64>]) -> f64 {
    data.iter().map(|x| x.norm()).fold(0.0, f64::max)
}
