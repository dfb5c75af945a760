//! Complex `f64` FFTs of contiguous rows on AVX-512 vectors, for the lengths of the plane
//! steps and of the r2c steps' half-length FFTs (128, 192, 256, 384): a [`RowFft`] is a
//! [`rustfft::Fft`], planned by [`plan_fft`] where it applies (`f64`, AVX-512F at run time,
//! one of those lengths); everything else keeps rustfft's plan. (Planes of 384² outgrow L2:
//! from an input their rows go first, `block::LocalFft`, else this kernel's rows wait on
//! the memory the column FFT before them left behind.)
//!
//! A row of `n = R · C` points is a 2-D DFT, `n = n1 + C n2`, `k = k2 + R k1`, with the
//! vectors in registers. Pass 1 takes four consecutive `n1` per vector (four complex lanes),
//! loads the `R` vectors at `n2 = 0..R`, runs the column kernels' DFT of `R` across them
//! (lanes are independent), twiddles by `W_n^{n1 k2}` and stores them where they came from,
//! in a scratch row. Pass 2 takes four consecutive `k2`, loads the `C` vectors holding
//! their `n1`, transposes each 4 × 4 block of complex lanes in registers so that the lanes
//! are `k2`, runs a DFT of `C` over `n1` and stores `X[k2 + R k1]`, four consecutive outputs
//! per vector. Pass 2's reads and writes cross, so pass 1 writes a scratch row in place
//! (and when the input must stay), and the input row out of place (rustfft's contract lets
//! the FFT overwrite it).

use super::avx512;
use crate::real::Real;
use num_complex::Complex;
use rustfft::{Direction, Fft, FftDirection, FftPlanner, Length};
use std::any::TypeId;
use std::sync::Arc;

/// The FFT of `n` points in `direction`: a [`RowFft`] where it applies (see the module
/// docs), else rustfft's plan from `ffts`.
pub(crate) fn plan_fft<T: Real>(
    ffts: &mut FftPlanner<T>,
    n: usize,
    direction: FftDirection,
) -> Arc<dyn Fft<T>> {
    if TypeId::of::<T>() == TypeId::of::<f64>() && avx512() {
        if let Some(fft) = RowFft::new(n, direction) {
            return Arc::new(fft);
        }
    }
    ffts.plan_fft(n, direction)
}

/// One row's FFT: pass 1 from `src` into `mid` (`src` itself, or a row overlapping neither
/// `src` nor `dst`), pass 2 from `mid` into `dst` (`src` itself, or a row overlapping neither),
/// with the plan's twiddles.
#[cfg(target_arch = "x86_64")]
type Kernel = unsafe fn(*const f64, *mut f64, *mut f64, &[f64]);

/// A complex FFT of `n = R · C` points on AVX-512 vectors (the module docs). Only for `f64`
/// ([`plan_fft`] makes one for no other type).
pub(crate) struct RowFft<T> {
    n: usize,
    direction: FftDirection,
    #[cfg(target_arch = "x86_64")]
    kernel: Kernel,
    /// Pass 1's twiddles per group of four `n1` and per `k2 ≥ 1`: a vector of the four
    /// lanes' real parts, each twice, then one of their imaginary parts.
    twiddles: Vec<f64>,
    _type: std::marker::PhantomData<T>,
}

impl<T: Real> RowFft<T> {
    /// The FFT of `n` points, or `None` where no kernel has that length (or without
    /// AVX-512F, or `T` is not `f64`).
    pub(crate) fn new(n: usize, direction: FftDirection) -> Option<Self> {
        if TypeId::of::<T>() != TypeId::of::<f64>() || !avx512() {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let inverse = direction == FftDirection::Inverse;
            let (rows, kernel) = avx::kernel_for(n, inverse)?;
            Some(Self {
                n,
                direction,
                kernel,
                twiddles: twiddles(rows, n / rows, inverse),
                _type: std::marker::PhantomData,
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// Runs the kernel on each of `rows` rows of `src` into `dst` through `mid` (per row).
    ///
    /// # Safety
    /// `src` and `dst` are valid for `rows` rows of `n` values and `mid` for one, and
    /// overlap as [`Kernel`] allows (`mid` is `src` only with one row); `T` is `f64`.
    unsafe fn run(
        &self,
        src: *const Complex<T>,
        dst: *mut Complex<T>,
        rows: usize,
        mid: *mut Complex<T>,
    ) {
        #[cfg(target_arch = "x86_64")]
        for r in 0..rows {
            let at = r * self.n;
            let src_row = src.wrapping_add(at);
            // SAFETY: `T` is `f64` and AVX-512F is present (`new`); the rows as the
            // caller's contract says.
            unsafe {
                (self.kernel)(
                    src_row.cast(),
                    mid.cast(),
                    dst.wrapping_add(at).cast(),
                    &self.twiddles,
                )
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (src, dst, rows, mid);
    }
}

/// Pass 1's twiddle table of `n = rows · cols` (see [`RowFft::twiddles`]).
fn twiddles(rows: usize, cols: usize, inverse: bool) -> Vec<f64> {
    let n = rows * cols;
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut table = Vec::with_capacity(cols / 4 * (rows - 1) * 16);
    for g in 0..cols / 4 {
        for k2 in 1..rows {
            let angle = |j: usize| {
                let e = ((4 * g + j) * k2) % n;
                sign * 2.0 * std::f64::consts::PI * e as f64 / n as f64
            };
            for j in 0..4 {
                table.extend([angle(j).cos(); 2]);
            }
            for j in 0..4 {
                table.extend([angle(j).sin(); 2]);
            }
        }
    }
    table
}

fn check(expected: bool, what: &str, n: usize, len: usize, other: usize) {
    assert!(
        expected,
        "RowFft of {n} points: {what} (length {len}, other {other})"
    );
}

/// Out of place: whole rows in, as many out.
fn check_out_of_place(n: usize, input: usize, output: usize) {
    check(input.is_multiple_of(n), "input not whole rows", n, input, 0);
    let same = output == input;
    check(same, "output and input lengths differ", n, output, input);
}

impl<T: Real> Length for RowFft<T> {
    fn len(&self) -> usize {
        self.n
    }
}

impl<T: Real> Direction for RowFft<T> {
    fn fft_direction(&self) -> FftDirection {
        self.direction
    }
}

impl<T: Real> Fft<T> for RowFft<T> {
    fn process_with_scratch(&self, buffer: &mut [Complex<T>], scratch: &mut [Complex<T>]) {
        let n = self.n;
        let ok = buffer.len().is_multiple_of(n);
        check(ok, "buffer not whole rows", n, buffer.len(), 0);
        check(scratch.len() >= n, "scratch too short", n, scratch.len(), n);
        let p = buffer.as_mut_ptr();
        // SAFETY: whole rows in place through a scratch row (checked above); `RowFft`
        // exists only for `f64`.
        unsafe { self.run(p, p, buffer.len() / n, scratch.as_mut_ptr()) };
    }

    fn process_outofplace_with_scratch(
        &self,
        input: &mut [Complex<T>],
        output: &mut [Complex<T>],
        _scratch: &mut [Complex<T>],
    ) {
        let n = self.n;
        check_out_of_place(n, input.len(), output.len());
        // Pass 1 in the input, which the FFT may overwrite.
        let p = input.as_mut_ptr();
        for r in 0..input.len() / n {
            let row = p.wrapping_add(r * n);
            // SAFETY: row `r` of each (whole rows, checked above), pass 1 in the input's;
            // `RowFft` exists only for `f64`.
            unsafe { self.run(row, output.as_mut_ptr().wrapping_add(r * n), 1, row) };
        }
    }

    fn process_immutable_with_scratch(
        &self,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
        scratch: &mut [Complex<T>],
    ) {
        let n = self.n;
        check_out_of_place(n, input.len(), output.len());
        check(scratch.len() >= n, "scratch too short", n, scratch.len(), n);
        let mid = scratch.as_mut_ptr();
        // SAFETY: whole rows (checked above), through a scratch row; `RowFft` exists only
        // for `f64`.
        unsafe { self.run(input.as_ptr(), output.as_mut_ptr(), input.len() / n, mid) };
    }

    fn get_inplace_scratch_len(&self) -> usize {
        self.n
    }

    fn get_outofplace_scratch_len(&self) -> usize {
        0
    }

    fn get_immutable_scratch_len(&self) -> usize {
        self.n
    }
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::super::column::dft::{cmul, dft};
    use super::Kernel;
    use std::arch::x86_64::*;

    /// Rows `R` of the kernel of `n` points (`n = R · C`) and the kernel.
    pub(super) fn kernel_for(n: usize, inverse: bool) -> Option<(usize, Kernel)> {
        fn pick<const R: usize, const C: usize>(inverse: bool) -> (usize, Kernel) {
            let kernel: Kernel = if inverse {
                row::<R, C, true>
            } else {
                row::<R, C, false>
            };
            (R, kernel)
        }
        Some(match n {
            128 => pick::<8, 16>(inverse),
            192 => pick::<16, 12>(inverse),
            256 => pick::<16, 16>(inverse),
            384 => pick::<16, 24>(inverse),
            _ => return None,
        })
    }

    /// The transpose of the 4 × 4 complex lanes of `a`.
    #[inline(always)]
    unsafe fn transpose(a: [__m512d; 4]) -> [__m512d; 4] {
        // SAFETY: AVX-512F (the caller's contract).
        unsafe {
            let t0 = _mm512_shuffle_f64x2::<0x44>(a[0], a[1]);
            let t1 = _mm512_shuffle_f64x2::<0xEE>(a[0], a[1]);
            let t2 = _mm512_shuffle_f64x2::<0x44>(a[2], a[3]);
            let t3 = _mm512_shuffle_f64x2::<0xEE>(a[2], a[3]);
            [
                _mm512_shuffle_f64x2::<0x88>(t0, t2),
                _mm512_shuffle_f64x2::<0xDD>(t0, t2),
                _mm512_shuffle_f64x2::<0x88>(t1, t3),
                _mm512_shuffle_f64x2::<0xDD>(t1, t3),
            ]
        }
    }

    /// One row of `R · C` points (see [`Kernel`] and the module docs).
    ///
    /// # Safety
    /// `src`, `mid` and `dst` are valid for a row of `R · C` complex `f64` each and overlap
    /// as [`Kernel`] allows; `tw` is [`super::twiddles`]`(R, C, INV)`; the CPU has AVX-512F.
    // The loops index the vectors by their counters over constant ranges, so that they
    // unroll and the vectors stay in registers.
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "avx512f")]
    unsafe fn row<const R: usize, const C: usize, const INV: bool>(
        src: *const f64,
        mid: *mut f64,
        dst: *mut f64,
        tw: &[f64],
    ) {
        assert!(tw.len() == C / 4 * (R - 1) * 16);
        for g in 0..C / 4 {
            // SAFETY: vector n2 of group g, complex index C n2 + 4 g < R C.
            let load = |n2: usize| unsafe { _mm512_loadu_pd(src.add(2 * (C * n2 + 4 * g))) };
            let mut x = [load(0); R];
            for n2 in 1..R {
                x[n2] = load(n2);
            }
            // SAFETY: AVX-512F.
            unsafe { dft::<R, INV>(&mut x) };
            let t = &tw[g * (R - 1) * 16..(g + 1) * (R - 1) * 16];
            for k2 in 1..R {
                // SAFETY: 16 f64 of the table per k2 (the assertion), AVX-512F.
                unsafe {
                    let re = _mm512_loadu_pd(t.as_ptr().add(16 * (k2 - 1)));
                    let im = _mm512_loadu_pd(t.as_ptr().add(16 * (k2 - 1) + 8));
                    x[k2] = cmul(x[k2], re, im);
                }
            }
            for k2 in 0..R {
                // SAFETY: as the loads; `mid` is not `src`.
                unsafe { _mm512_storeu_pd(mid.add(2 * (C * k2 + 4 * g)), x[k2]) };
            }
        }
        for h in 0..R / 4 {
            let mut x = [_mm512_setzero_pd(); C];
            for m in 0..C / 4 {
                // SAFETY: complex index C (4 h + i) + 4 m < R C.
                let load =
                    |i: usize| unsafe { _mm512_loadu_pd(mid.add(2 * (C * (4 * h + i) + 4 * m))) };
                // SAFETY: AVX-512F.
                let t = unsafe { transpose([load(0), load(1), load(2), load(3)]) };
                for j in 0..4 {
                    x[4 * m + j] = t[j];
                }
            }
            // SAFETY: AVX-512F.
            unsafe { dft::<C, INV>(&mut x) };
            for k1 in 0..C {
                // SAFETY: complex index R k1 + 4 h < R C.
                unsafe { _mm512_storeu_pd(dst.add(2 * (R * k1 + 4 * h)), x[k1]) };
            }
        }
    }
}

#[cfg(test)]
mod tests;
