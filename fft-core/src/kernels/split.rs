//! Even-length r2c FFTs of complex `f64` whose split into the half spectrum runs four modes
//! per AVX-512 vector.
//!
//! An r2c of even length `n` is a complex FFT of `n/2` points of the pairs `(x_2j, x_2j+1)`,
//! then a split of its result `Z` into the half spectrum: modes `k` and `n/2 − k` from
//! `Z_k`, `Z_{n/2−k}` and the twiddle `W_n^k`, for `0 < k < n/4`. realfft runs that split one
//! pair of modes at a time in scalar code; [`SplitR2c`] runs the FFT of `n/2` points that
//! [`super::row::plan_fft`] plans and takes four pairs per vector, the upper modes reversed
//! in the register. Other types, odd lengths and CPUs without AVX-512F keep realfft's plans
//! ([`plan_r2c`]).

use super::avx512;
use crate::real::Real;
use num_complex::Complex;
use realfft::{ComplexToReal, FftError, RealToComplex};
use rustfft::{Fft, FftPlanner};
use std::any::TypeId;
use std::sync::Arc;

/// The r2c of `n` points: a [`SplitR2c`] where it applies (see the module docs), else
/// realfft's plan from `reals`.
pub(crate) fn plan_r2c<T: Real>(
    reals: &mut realfft::RealFftPlanner<T>,
    ffts: &mut FftPlanner<T>,
    n: usize,
) -> Arc<dyn RealToComplex<T>> {
    let f64_avx512 = TypeId::of::<T>() == TypeId::of::<f64>() && avx512();
    if f64_avx512 && n.is_multiple_of(4) && n >= 16 {
        Arc::new(SplitR2c::new(n, ffts))
    } else {
        reals.plan_fft_forward(n)
    }
}

/// The c2r of `n` points: a [`SplitC2r`] where it applies (see the module docs), else
/// realfft's plan from `reals`.
pub(crate) fn plan_c2r<T: Real>(
    reals: &mut realfft::RealFftPlanner<T>,
    ffts: &mut FftPlanner<T>,
    n: usize,
) -> Arc<dyn ComplexToReal<T>> {
    let f64_avx512 = TypeId::of::<T>() == TypeId::of::<f64>() && avx512();
    if f64_avx512 && n.is_multiple_of(4) && n >= 16 {
        Arc::new(SplitC2r::new(n, ffts))
    } else {
        reals.plan_fft_inverse(n)
    }
}

/// An r2c of `n` points (`n` a multiple of 4) as a complex FFT of `n/2` points and a split
/// four modes per vector (the module docs).
pub(crate) struct SplitR2c<T: Real> {
    n: usize,
    fft: Arc<dyn Fft<T>>,
    /// `W_n^k / 2` for `0 < k < n/4`, interleaved.
    twiddles: Vec<Complex<T>>,
}

impl<T: Real> SplitR2c<T> {
    /// Plans the half-length FFT with `ffts`.
    pub(crate) fn new(n: usize, ffts: &mut FftPlanner<T>) -> Self {
        assert!(
            n.is_multiple_of(4),
            "SplitR2c takes lengths divisible by 4, not {n}"
        );
        let twiddles = (1..n / 4)
            .map(|k| {
                let angle = -2.0 * std::f64::consts::PI * k as f64 / n as f64;
                Complex::new(T::of(0.5 * angle.cos()), T::of(0.5 * angle.sin()))
            })
            .collect();
        Self {
            n,
            fft: super::row::plan_fft(ffts, n / 2, rustfft::FftDirection::Forward),
            twiddles,
        }
    }

    /// Splits the half-length FFT in `out[..n/2]` into the half spectrum `out[..=n/2]`.
    fn split(&self, out: &mut [Complex<T>]) {
        let h = self.n / 2;
        let z0 = out[0];
        out[0] = Complex::new(z0.re + z0.im, T::zero());
        out[h] = Complex::new(z0.re - z0.im, T::zero());
        // The centre mode n/4 pairs with itself: the conjugate.
        out[h / 2].im = -out[h / 2].im;
        let mut k = 1;
        #[cfg(target_arch = "x86_64")]
        if TypeId::of::<T>() == TypeId::of::<f64>() && avx512() {
            // SAFETY: `T` is `f64`, so the slices are complex `f64`; AVX-512F is present.
            k = unsafe {
                let out = std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), out.len());
                let tw =
                    std::slice::from_raw_parts(self.twiddles.as_ptr().cast(), self.twiddles.len());
                avx::split(out, tw, h)
            };
        }
        for k in k..h / 2 {
            let (a, b) = pair(out[k], out[h - k], self.twiddles[k - 1]);
            out[k] = a;
            out[h - k] = b;
        }
    }
}

/// Modes `k` and `n/2 − k` from `Z_k` (`a`), `Z_{n/2−k}` (`b`) and `w = W_n^k / 2`.
fn pair<T: Real>(a: Complex<T>, b: Complex<T>, w: Complex<T>) -> (Complex<T>, Complex<T>) {
    let half = T::of(0.5);
    let (sum, diff) = (a + b, a - b);
    let re = sum.im * w.re + diff.re * w.im;
    let im = sum.im * w.im - diff.re * w.re;
    let (hs, hd) = (half * sum.re, half * diff.im);
    (
        Complex::new(hs + re, hd + im),
        Complex::new(hs - re, im - hd),
    )
}

/// A c2r of `n` points (`n` a multiple of 4): the half spectrum merged into the input of an
/// inverse complex FFT of `n/2` points four modes per vector, then that FFT (the mirror
/// image of [`SplitR2c`]).
pub(crate) struct SplitC2r<T: Real> {
    n: usize,
    fft: Arc<dyn Fft<T>>,
    /// `conj(W_n^k)` for `0 < k < n/4`, interleaved.
    twiddles: Vec<Complex<T>>,
}

impl<T: Real> SplitC2r<T> {
    /// Plans the half-length inverse FFT with `ffts`.
    pub(crate) fn new(n: usize, ffts: &mut FftPlanner<T>) -> Self {
        assert!(
            n.is_multiple_of(4),
            "SplitC2r takes lengths divisible by 4, not {n}"
        );
        let twiddles = (1..n / 4)
            .map(|k| {
                let angle = 2.0 * std::f64::consts::PI * k as f64 / n as f64;
                Complex::new(T::of(angle.cos()), T::of(angle.sin()))
            })
            .collect();
        Self {
            n,
            fft: super::row::plan_fft(ffts, n / 2, rustfft::FftDirection::Inverse),
            twiddles,
        }
    }

    /// Merges the half spectrum `spec[..=n/2]` (real DC and Nyquist modes) in place into
    /// the input of the half-length inverse FFT, `spec[..n/2]`.
    fn merge(&self, spec: &mut [Complex<T>]) {
        let h = self.n / 2;
        let (first, last) = (spec[0], spec[h]);
        let (sum, diff) = (first + last, first - last);
        spec[0] = Complex::new(sum.re - sum.im, diff.re - diff.im);
        let c = spec[h / 2];
        spec[h / 2] = (c + c).conj();
        let mut k = 1;
        #[cfg(target_arch = "x86_64")]
        if TypeId::of::<T>() == TypeId::of::<f64>() && avx512() {
            // SAFETY: `T` is `f64`, so the slices are complex `f64`; AVX-512F is present.
            k = unsafe {
                let spec = std::slice::from_raw_parts_mut(spec.as_mut_ptr().cast(), spec.len());
                let tw =
                    std::slice::from_raw_parts(self.twiddles.as_ptr().cast(), self.twiddles.len());
                avx::merge(spec, tw, h)
            };
        }
        for k in k..h / 2 {
            let (a, b) = merged(spec[k], spec[h - k], self.twiddles[k - 1]);
            spec[k] = a;
            spec[h - k] = b;
        }
    }
}

/// The FFT inputs `k` and `n/2 − k` from modes `k` (`a`), `n/2 − k` (`b`) and
/// `w = conj(W_n^k)`.
fn merged<T: Real>(a: Complex<T>, b: Complex<T>, w: Complex<T>) -> (Complex<T>, Complex<T>) {
    let (sum, diff) = (a + b, a - b);
    let re = sum.im * w.re + diff.re * w.im;
    let im = sum.im * w.im - diff.re * w.re;
    (
        Complex::new(sum.re - re, diff.im - im),
        Complex::new(sum.re + re, -im - diff.im),
    )
}

impl<T: Real> ComplexToReal<T> for SplitC2r<T> {
    fn process(&self, input: &mut [Complex<T>], output: &mut [T]) -> Result<(), FftError> {
        let mut scratch = self.make_scratch_vec();
        self.process_with_scratch(input, output, &mut scratch)
    }

    /// As realfft's: the imaginary parts of the DC and Nyquist modes are taken as zero
    /// (`FftError::InputValues` says whether they were not).
    fn process_with_scratch(
        &self,
        input: &mut [Complex<T>],
        output: &mut [T],
        scratch: &mut [Complex<T>],
    ) -> Result<(), FftError> {
        let h = self.n / 2;
        if input.len() != h + 1 {
            return Err(FftError::InputBuffer(h + 1, input.len()));
        }
        if output.len() != self.n {
            return Err(FftError::OutputBuffer(self.n, output.len()));
        }
        if scratch.len() < self.get_scratch_len() {
            return Err(FftError::ScratchBuffer(
                self.get_scratch_len(),
                scratch.len(),
            ));
        }
        let invalid = (input[0].im != T::zero(), input[h].im != T::zero());
        input[0].im = T::zero();
        input[h].im = T::zero();
        self.merge(input);
        let pairs: &mut [Complex<T>] = bytemuck::cast_slice_mut(output);
        self.fft
            .process_outofplace_with_scratch(&mut input[..h], pairs, scratch);
        match invalid {
            (false, false) => Ok(()),
            (first, last) => Err(FftError::InputValues(first, last)),
        }
    }

    fn get_scratch_len(&self) -> usize {
        self.fft.get_outofplace_scratch_len()
    }

    fn len(&self) -> usize {
        self.n
    }

    fn make_input_vec(&self) -> Vec<Complex<T>> {
        vec![Complex::default(); self.n / 2 + 1]
    }

    fn make_output_vec(&self) -> Vec<T> {
        vec![T::zero(); self.n]
    }

    fn make_scratch_vec(&self) -> Vec<Complex<T>> {
        vec![Complex::default(); self.get_scratch_len()]
    }
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use num_complex::Complex;
    use std::arch::x86_64::*;

    /// [`super::pair`] for modes `k..k + 4` and their partners, while they do not reach the
    /// centre; returns the first `k` left.
    ///
    /// # Safety
    /// AVX-512F is present; `out` holds `h + 1` modes and `tw` the `h/2 − 1` twiddles.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn split(out: &mut [Complex<f64>], tw: &[Complex<f64>], h: usize) -> usize {
        debug_assert!(out.len() > h && tw.len() + 1 == h / 2);
        let p = out.as_mut_ptr().cast::<f64>();
        let half = _mm512_set1_pd(0.5);
        let mut k = 1;
        // Modes k..k+4 lie below the centre h/2, their partners h−k−3..=h−k above it.
        while k + 4 <= h / 2 {
            // SAFETY: modes k..k+4 and h−k−3..h−k+1 are in `out`, twiddles k−1..k+3 in `tw`.
            unsafe {
                let a = _mm512_loadu_pd(p.add(2 * k));
                // Complex elements are 128-bit lanes: reverse the four.
                let b = _mm512_loadu_pd(p.add(2 * (h - k - 3)));
                let b = _mm512_shuffle_f64x2::<0x1B>(b, b);
                let w = _mm512_loadu_pd(tw.as_ptr().add(k - 1).cast());
                let (sum, diff) = (_mm512_add_pd(a, b), _mm512_sub_pd(a, b));
                // [re, im] = [sum.im·w.re + diff.re·w.im, sum.im·w.im − diff.re·w.re].
                let sum_im = _mm512_permute_pd::<0xFF>(sum);
                let diff_re = _mm512_movedup_pd(diff);
                let w_swapped = _mm512_permute_pd::<0x55>(w);
                let t = _mm512_mul_pd(diff_re, w_swapped);
                let q = _mm512_fmsubadd_pd(sum_im, w, t);
                // [hs, hd] = [sum.re, diff.im] / 2.
                let hsd = _mm512_mul_pd(half, _mm512_mask_blend_pd(0xAA, sum, diff));
                let new_a = _mm512_add_pd(hsd, q);
                // [hs − re, im − hd]: hsd − q, its odd lanes q − hsd.
                let new_b = _mm512_mask_sub_pd(_mm512_sub_pd(hsd, q), 0xAA, q, hsd);
                let new_b = _mm512_shuffle_f64x2::<0x1B>(new_b, new_b);
                _mm512_storeu_pd(p.add(2 * k), new_a);
                _mm512_storeu_pd(p.add(2 * (h - k - 3)), new_b);
            }
            k += 4;
        }
        k
    }

    /// [`super::merged`] for modes `k..k + 4` and their partners, while they do not reach
    /// the centre; returns the first `k` left.
    ///
    /// # Safety
    /// As [`split`].
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn merge(spec: &mut [Complex<f64>], tw: &[Complex<f64>], h: usize) -> usize {
        debug_assert!(spec.len() > h && tw.len() + 1 == h / 2);
        let p = spec.as_mut_ptr().cast::<f64>();
        let zero = _mm512_setzero_pd();
        let mut k = 1;
        while k + 4 <= h / 2 {
            // SAFETY: as in `split`.
            unsafe {
                let a = _mm512_loadu_pd(p.add(2 * k));
                let b = _mm512_loadu_pd(p.add(2 * (h - k - 3)));
                let b = _mm512_shuffle_f64x2::<0x1B>(b, b);
                let w = _mm512_loadu_pd(tw.as_ptr().add(k - 1).cast());
                let (sum, diff) = (_mm512_add_pd(a, b), _mm512_sub_pd(a, b));
                let sum_im = _mm512_permute_pd::<0xFF>(sum);
                let diff_re = _mm512_movedup_pd(diff);
                let w_swapped = _mm512_permute_pd::<0x55>(w);
                let t = _mm512_mul_pd(diff_re, w_swapped);
                let q = _mm512_fmsubadd_pd(sum_im, w, t);
                // x = [sum.re, diff.im]; a = x − q; b = [x + q] with its odd lanes negated.
                let x = _mm512_mask_blend_pd(0xAA, sum, diff);
                let new_a = _mm512_sub_pd(x, q);
                let s = _mm512_add_pd(x, q);
                let new_b = _mm512_mask_sub_pd(s, 0xAA, zero, s);
                let new_b = _mm512_shuffle_f64x2::<0x1B>(new_b, new_b);
                _mm512_storeu_pd(p.add(2 * k), new_a);
                _mm512_storeu_pd(p.add(2 * (h - k - 3)), new_b);
            }
            k += 4;
        }
        k
    }
}

impl<T: Real> RealToComplex<T> for SplitR2c<T> {
    fn process(&self, input: &mut [T], output: &mut [Complex<T>]) -> Result<(), FftError> {
        let mut scratch = self.make_scratch_vec();
        self.process_with_scratch(input, output, &mut scratch)
    }

    fn process_with_scratch(
        &self,
        input: &mut [T],
        output: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) -> Result<(), FftError> {
        let h = self.n / 2;
        if input.len() != self.n {
            return Err(FftError::InputBuffer(self.n, input.len()));
        }
        if output.len() != h + 1 {
            return Err(FftError::OutputBuffer(h + 1, output.len()));
        }
        if scratch.len() < self.get_scratch_len() {
            return Err(FftError::ScratchBuffer(
                self.get_scratch_len(),
                scratch.len(),
            ));
        }
        let pairs: &mut [Complex<T>] = bytemuck::cast_slice_mut(input);
        self.fft
            .process_outofplace_with_scratch(pairs, &mut output[..h], scratch);
        self.split(output);
        Ok(())
    }

    fn get_scratch_len(&self) -> usize {
        self.fft.get_outofplace_scratch_len()
    }

    fn len(&self) -> usize {
        self.n
    }

    fn make_input_vec(&self) -> Vec<T> {
        vec![T::zero(); self.n]
    }

    fn make_output_vec(&self) -> Vec<Complex<T>> {
        vec![Complex::default(); self.n / 2 + 1]
    }

    fn make_scratch_vec(&self) -> Vec<Complex<T>> {
        vec![Complex::default(); self.get_scratch_len()]
    }
}
