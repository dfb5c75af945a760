//! The twiddle factors of the four-step (six-step) distributed 1-D FFT ([`Twiddle`]).

use crate::real::Real;
use num_complex::Complex;
use std::f64::consts::PI;

/// The twiddle factors between the two FFTs of a distributed 1-D FFT of `n = rows · cols`
/// points (Cooley–Tukey with the input viewed as a `rows × cols` matrix): after the FFTs
/// along the rows' axis, element `k` of the line at column `j` is multiplied by
/// `exp(−2πi · j·k / n)` (forward), or before the inverse FFTs by its conjugate (backward).
/// Line `o` of a block is column `first + o % count` (the block's columns, repeated for
/// every field of a batch). The factors come from two tables of about `√n` values each
/// (`ω^t = ω^{(t >> s) << s} · ω^{t & (2^s − 1)}`), computed in `f64` from exactly reduced
/// angles.
#[derive(Clone)]
pub(crate) struct Twiddle<T: Real> {
    n: usize,
    first: usize,
    count: usize,
    /// `ω^i` for `i < 2^shift`.
    low: Vec<Complex<T>>,
    /// `ω^(i · 2^shift)` for `i ≤ n >> shift`.
    high: Vec<Complex<T>>,
    shift: u32,
    /// Applied after the FFT (forward), else before it (backward, conjugated).
    after: bool,
}

impl<T: Real> Twiddle<T> {
    /// The twiddles of the lines of columns `first .. first + count` of a transform of `n`
    /// points; `inverse` for the backward transform.
    pub(crate) fn new(n: usize, first: usize, count: usize, inverse: bool) -> Self {
        let n = n.max(1);
        let shift = (n as f64).sqrt().ceil().max(1.0).log2().ceil() as u32;
        let sign = if inverse { 1.0 } else { -1.0 };
        // ω^t for t < n, the angle reduced in integers first.
        let omega = |t: usize| {
            let angle = 2.0 * PI * ((t % n) as f64) / n as f64;
            Complex::new(T::of(angle.cos()), T::of(sign * angle.sin()))
        };
        Self {
            n,
            first,
            count: count.max(1),
            low: (0..1usize << shift).map(omega).collect(),
            high: (0..=n >> shift).map(|i| omega(i << shift)).collect(),
            shift,
            after: !inverse,
        }
    }

    /// Whether the factors multiply the FFT's output (forward) rather than its input.
    pub(crate) fn after(&self) -> bool {
        self.after
    }

    /// Multiplies `line` (the line at index `line_index` of the block) by its factors.
    pub(crate) fn apply(&self, line_index: usize, line: &mut [Complex<T>]) {
        let column = (self.first + line_index % self.count) % self.n;
        let mask = (1usize << self.shift) - 1;
        // t = column · k mod n, advanced by additions.
        let mut t = 0usize;
        for x in line.iter_mut() {
            *x = *x * (self.high[t >> self.shift] * self.low[t & mask]);
            t += column;
            if t >= self.n {
                t -= self.n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every factor against `exp(∓2πi·j·k/n)` computed directly, for lengths with and without
    /// a power-of-two table split, forward and backward.
    #[test]
    fn factors_match_the_direct_formula() {
        for n in [1usize, 2, 3, 7, 12, 64, 97, 1000, 4096, 65537] {
            let count = 5.min(n);
            for inverse in [false, true] {
                let t = Twiddle::<f64>::new(n, n / 3, count, inverse);
                let rows = 11.min(n);
                for line_index in 0..2 * count {
                    let mut line = vec![Complex::new(1.0, 0.0); rows];
                    t.apply(line_index, &mut line);
                    let j = (n / 3 + line_index % count) as f64;
                    for (k, v) in line.iter().enumerate() {
                        let sign = if inverse { 1.0 } else { -1.0 };
                        let want =
                            Complex::from_polar(1.0, sign * 2.0 * PI * j * k as f64 / n as f64);
                        assert!(
                            (v - want).norm() < 1e-14,
                            "n {n} j {j} k {k}: {v} vs {want}"
                        );
                    }
                }
            }
        }
    }
}
