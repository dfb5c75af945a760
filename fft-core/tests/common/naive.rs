//! Naive O(n²) references for one line, evaluated in `f64` with exactly reduced angles: the
//! DFT, the complex-to-real inverse of a half spectrum, and FFTW's real-to-real kinds. One
//! file for the kernels' unit tests (`src/kernels/lengths.rs` includes it) and the
//! integration tests (`tests/common`); the parent module brings `Complex` and `R2rKind`.

use super::{Complex, R2rKind};
use std::f64::consts::PI;

/// `cos` and `sin` of `π m / den` for `m < 2 den`: exact index reduction for the naive sums.
struct Table {
    den: usize,
    cos: Vec<f64>,
    sin: Vec<f64>,
}

impl Table {
    fn new(den: usize) -> Self {
        let angle = |m: usize| PI * m as f64 / den as f64;
        Self {
            den,
            cos: (0..2 * den).map(|m| angle(m).cos()).collect(),
            sin: (0..2 * den).map(|m| angle(m).sin()).collect(),
        }
    }

    fn cos(&self, num: usize) -> f64 {
        self.cos[num % (2 * self.den)]
    }

    fn sin(&self, num: usize) -> f64 {
        self.sin[num % (2 * self.den)]
    }
}

/// The DFT of `x` with `exp(sign · 2πi jk/n)`.
pub fn naive_dft(x: &[Complex<f64>], sign: f64) -> Vec<Complex<f64>> {
    let n = x.len();
    let t = Table::new(n);
    (0..n)
        .map(|k| {
            x.iter()
                .enumerate()
                .map(|(j, v)| v * Complex::new(t.cos(2 * j * k), sign * t.sin(2 * j * k)))
                .sum()
        })
        .collect()
}

/// The real line of `n` points whose half spectrum is `h` (`n/2 + 1` modes), unnormalized;
/// the imaginary parts of the DC and Nyquist modes are ignored (numpy's `irfft`).
pub fn naive_c2r(h: &[Complex<f64>], n: usize) -> Vec<f64> {
    let t = Table::new(n);
    let mode = |k: usize| {
        let mut m = if k <= n / 2 { h[k] } else { h[n - k].conj() };
        if k == 0 || 2 * k == n {
            m.im = 0.0;
        }
        m
    };
    (0..n)
        .map(|j| {
            (0..n)
                .map(|k| {
                    let m = mode(k);
                    m.re * t.cos(2 * j * k) - m.im * t.sin(2 * j * k)
                })
                .sum()
        })
        .collect()
}

/// FFTW's REDFT/RODFT sums (unnormalized, the factor 2 included) of a real line.
pub fn naive_r2r(kind: R2rKind, x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let sign = |k: usize| if k.is_multiple_of(2) { 1.0 } else { -1.0 };
    let sum = |f: &dyn Fn(usize) -> f64, range: std::ops::Range<usize>| -> f64 {
        range.map(|j| x[j] * f(j)).sum()
    };
    // Every angle is π m / den for an integer m.
    let t = Table::new(match kind {
        R2rKind::Dct1 => n - 1,
        R2rKind::Dst1 => n + 1,
        R2rKind::Dct4 | R2rKind::Dst4 => 4 * n,
        R2rKind::R2hc | R2rKind::Hc2r | R2rKind::Dht => n,
        _ => 2 * n,
    });
    // The real DFT's halfcomplex slots: mode k's real part at k, its imaginary part at n − k.
    let imaginary = |k: usize| 2 * k > n;
    (0..n)
        .map(|k| match kind {
            R2rKind::Dct1 => x[0] + x[n - 1] * sign(k) + sum(&|j| 2.0 * t.cos(j * k), 1..n - 1),
            R2rKind::Dst1 => sum(&|j| 2.0 * t.sin((j + 1) * (k + 1)), 0..n),
            R2rKind::Dct2 => sum(&|j| 2.0 * t.cos((2 * j + 1) * k), 0..n),
            R2rKind::Dst2 => sum(&|j| 2.0 * t.sin((2 * j + 1) * (k + 1)), 0..n),
            R2rKind::Dct3 => x[0] + sum(&|j| 2.0 * t.cos(j * (2 * k + 1)), 1..n),
            R2rKind::Dst3 => {
                x[n - 1] * sign(k) + sum(&|j| 2.0 * t.sin((j + 1) * (2 * k + 1)), 0..n - 1)
            }
            R2rKind::Dct4 => sum(&|j| 2.0 * t.cos((2 * j + 1) * (2 * k + 1)), 0..n),
            R2rKind::Dst4 => sum(&|j| 2.0 * t.sin((2 * j + 1) * (2 * k + 1)), 0..n),
            // Slot k ≤ n/2: Re X_k = Σ x_j cos(2π jk/n); slot n − k: Im X_k = −Σ x_j sin.
            R2rKind::R2hc if imaginary(k) => sum(&|j| -t.sin(2 * j * (n - k)), 0..n),
            R2rKind::R2hc => sum(&|j| t.cos(2 * j * k), 0..n),
            // y_k = Σ_m X_m e^{+2πi mk/n} over the Hermitian spectrum the slots hold.
            R2rKind::Hc2r => (0..n)
                .map(|m| {
                    let (re, im) = halfcomplex_mode(x, m);
                    re * t.cos(2 * m * k) - im * t.sin(2 * m * k)
                })
                .sum(),
            R2rKind::Dht => sum(&|j| t.cos(2 * j * k) + t.sin(2 * j * k), 0..n),
        })
        .collect()
}

/// Mode `m` (any of `0..n`) of the Hermitian spectrum stored in halfcomplex order in `x`, as
/// (real, imaginary) parts.
fn halfcomplex_mode(x: &[f64], m: usize) -> (f64, f64) {
    let n = x.len();
    let k = m.min(n - m);
    let im = if k == 0 || 2 * k == n { 0.0 } else { x[n - k] };
    (x[k], if m == k { im } else { -im })
}
