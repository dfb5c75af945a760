//! Column FFTs: the 1-D FFTs down the columns of a strided block, four complex `f64` columns
//! per AVX-512 vector, with no transposition.
//!
//! A strided sweep's tile used to be gathered into lines (a transposition), transformed line
//! by line and scattered back. Along axes 1 MiB apart that copy's memory traffic and the FFTs'
//! arithmetic run one after the other. A column FFT instead
//! reads the rows themselves: an FFT of length `n = a · b` runs as two passes of small DFTs
//! held in registers, each vector lane a column (the "vector radix" form of FFTW's SIMD
//! codelets):
//!
//! 1. for each `n1 < a`: a DFT of length `b` down rows `n1 + a · n2` (`n2 < b`), times the
//!    twiddle `W_n^{n1 · k2}`, into row `k2 · a + n1` of a staging block in cache;
//! 2. for each `k2 < b`: a DFT of length `a` down staging rows `k2 · a + n1` (`n1 < a`), into
//!    output row `k2 + b · k1` (`k1 < a`), scaled on the way.
//!
//! Pass 1 streams `b` source rows at once and pass 2 writes `a` destination rows at once, so
//! the hardware prefetchers see long runs, and the arithmetic overlaps the memory traffic. The
//! digit reversal of the two-step FFT is just the order in which pass 2 writes its rows.
//! Since every source row is read (pass 1) before any destination row is written (pass 2), a
//! block may be transformed in place.
//!
//! The staging block (`n` rows of the task's columns, 1 MiB for 256 columns of length 256) is
//! needed only for that last case. [`ColumnFft::run_direct`] runs without it: pass 1 writes
//! its results into the destination rows `k2 + b · n1` (`k2 < b`), and pass 2 transforms each
//! group of rows `k2 + b · n1` (`n1 < a`) in place. That is right whenever pass 1 never
//! overwrites a row that a later pass-1 group still reads: out of place (no source row is a
//! destination row), or in place when the rows come *digit-swapped* ([`ColumnFft::swapped`]:
//! element `n1 + a · n2` of the column lies in row `n2 + b · n1`), so that each pass-1 group
//! writes back exactly the rows it read. A step before the sweep that writes its planes to
//! the swapped rows (`local::LocalFft`) thus spares the staging block and its copy.
//!
//! Which pass runs which radix depends on where the rows lie. On a plane in cache 384 runs
//! as 24 × 16 (its staged form took 1.4 times as long as 16 × 24), but [`ColumnFft::run`] on
//! rows far apart (streamed from memory: the axis-0 step of a block) runs it as 16 × 24,
//! pass 1 reading 24 rows at once, which took that step of a 1-rank r2c 384³ from 73 to
//! 66 ms. The direct form keeps 24 × 16 everywhere: its digit swap is fixed by the step
//! before, and streamed it gained nothing from the other split.
//!
//! Lengths 16, 32, 64, 128 and 256 (radices 4, 8 and 16), and 12, 24, 48, 96, 192 and 384
//! (with a radix 3, 6, 12 or 24) of complex `f64` on CPUs with AVX-512F have a kernel (the
//! DFTs are in `dft.rs`); [`ColumnFft::new`] returns `None` otherwise and the sweep keeps its
//! tiles.

use super::rows::DigitSwap;
use num_complex::Complex;
use rustfft::{Fft, FftDirection};

/// Complex elements per vector.
const LANES: usize = 4;

/// The longest column a kernel exists for.
pub(crate) const MAX_LEN: usize = 384;

/// The kernel of one length and direction: `(plan, source rows, destination rows, columns,
/// scale, staging)`; the direct form takes a null staging pointer.
type Kernel = unsafe fn(&ColumnFft, &[*const f64], &[*mut f64], usize, Option<f64>, *mut f64);

/// A planned column FFT of one length and direction (see the module docs).
pub(crate) struct ColumnFft {
    n: usize,
    /// The radix of pass 2 (`a`); pass 1's is `n / a` (`b`).
    a: usize,
    /// `W_n^j` for `j < n` (conjugated for the inverse): real parts, then imaginary parts.
    twiddles: Vec<f64>,
    /// Through a staging block, direct ([`ColumnFft::run_direct`]), and through a staging
    /// block on rows far apart (module docs).
    kernels: [Kernel; 3],
}

impl ColumnFft {
    /// The column FFT doing what `fft` does, for complex `f64` elements (`real_bytes` = 8),
    /// when this CPU and this length have a kernel.
    pub(crate) fn new<T>(fft: &dyn Fft<T>, real_bytes: usize) -> Option<Self>
    where
        T: rustfft::FftNum,
    {
        if real_bytes != 8 || !available() {
            return None;
        }
        let n = fft.len();
        let inverse = fft.fft_direction() == FftDirection::Inverse;
        let (a, kernels) = kernels_for(n, inverse)?;
        let sign = if inverse { 1.0 } else { -1.0 };
        let (re, im): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|j| {
                let angle = sign * 2.0 * std::f64::consts::PI * j as f64 / n as f64;
                (angle.cos(), angle.sin())
            })
            .unzip();
        Some(Self {
            n,
            a,
            twiddles: [re, im].concat(),
            kernels,
        })
    }

    /// The row that holds element `i` of a column when the rows come digit-swapped for an
    /// in-place [`ColumnFft::run_direct`]: element `n1 + a · n2` lies in row `n2 + b · n1`.
    /// A permutation of `0..n`.
    pub(crate) fn swapped(&self, i: usize) -> usize {
        let b = self.n / self.a;
        (i / self.a) + b * (i % self.a)
    }

    /// [`ColumnFft::swapped`] as a [`DigitSwap`].
    pub(crate) fn digit_swap(&self) -> DigitSwap {
        DigitSwap::new(self.a, self.n / self.a)
    }

    /// Complex elements of staging for `cols` columns ([`staging_len`]).
    pub(crate) fn staging_len(&self, cols: usize) -> usize {
        staging_len(self.n, cols)
    }

    /// Transforms `cols` columns: element `c` of the column is read at `src[i] + c` (row `i`)
    /// and written to `dst[i] + c`, multiplied by `scale` when given.
    ///
    /// # Safety
    /// `src` and `dst` hold one row per element of a column, each valid for `cols` elements; no other
    /// thread touches them meanwhile; a destination row overlaps no source row unless it is
    /// that same row (in place). `staging` holds [`ColumnFft::staging_len`]`(cols)` elements.
    pub(crate) unsafe fn run(
        &self,
        src: &[*const Complex<f64>],
        dst: &[*mut Complex<f64>],
        cols: usize,
        scale: Option<f64>,
        staging: &mut [Complex<f64>],
    ) {
        let far = (src[1] as usize).abs_diff(src[0] as usize) >= FAR_BYTES;
        // SAFETY: the caller's contract.
        unsafe { self.run_staged(far, src, dst, cols, scale, staging) }
    }

    /// [`ColumnFft::run`] with the kernel for rows `far` apart (module docs), or not.
    ///
    /// # Safety
    /// As [`ColumnFft::run`].
    unsafe fn run_staged(
        &self,
        far: bool,
        src: &[*const Complex<f64>],
        dst: &[*mut Complex<f64>],
        cols: usize,
        scale: Option<f64>,
        staging: &mut [Complex<f64>],
    ) {
        debug_assert!(staging.len() >= self.staging_len(cols));
        let staging = staging.as_mut_ptr() as *mut f64;
        let kernel = self.kernels[if far { 2 } else { 0 }];
        // SAFETY: the caller's contract.
        unsafe { self.launch(kernel, src, dst, cols, scale, staging) }
    }

    /// Transforms `cols` columns as [`ColumnFft::run`] does, without a staging block: pass 1
    /// writes straight into the destination rows, pass 2 works there in place (module docs).
    ///
    /// # Safety
    /// As [`ColumnFft::run`] (without the staging), and pass 1 never overwrites a row that a
    /// later pass-1 group reads: either no source row is a destination row (out of place),
    /// or `src[i] == dst[self.swapped(i)]` for every `i` (in place, rows digit-swapped).
    pub(crate) unsafe fn run_direct(
        &self,
        src: &[*const Complex<f64>],
        dst: &[*mut Complex<f64>],
        cols: usize,
        scale: Option<f64>,
    ) {
        // SAFETY: the caller's contract; the direct kernel never touches the staging pointer.
        unsafe { self.launch(self.kernels[1], src, dst, cols, scale, std::ptr::null_mut()) }
    }

    /// Calls `kernel` on the rows as `f64` pointers.
    ///
    /// # Safety
    /// As the kernel's public entry ([`ColumnFft::run`] or [`ColumnFft::run_direct`]).
    unsafe fn launch(
        &self,
        kernel: Kernel,
        src: &[*const Complex<f64>],
        dst: &[*mut Complex<f64>],
        cols: usize,
        scale: Option<f64>,
        staging: *mut f64,
    ) {
        debug_assert!(
            src.len() == self.n && dst.len() == self.n,
            "one row per element"
        );
        // SAFETY: a `Complex<f64>` is two `f64`s (repr(C)); the caller's contract.
        unsafe {
            let src = std::slice::from_raw_parts(src.as_ptr() as *const *const f64, src.len());
            let dst = std::slice::from_raw_parts(dst.as_ptr() as *const *mut f64, dst.len());
            kernel(self, src, dst, cols, scale, staging);
        }
    }
}

/// Complex elements of staging for a column FFT of length `n` over `cols` columns: a staging
/// row per element, and one vector more to align its start.
pub(crate) fn staging_len(n: usize, cols: usize) -> usize {
    n * staging_stride(cols) + LANES
}

/// Complex elements between two staging rows: room for the columns in vectors (a partial
/// one each side, see `columns`), plus one cache line, so that rows a power of two apart do
/// not share cache sets. A whole number of cache lines, so every row starts on one.
fn staging_stride(cols: usize) -> usize {
    cols.div_ceil(LANES) * LANES + 2 * LANES
}

/// Bytes between consecutive source rows from which [`ColumnFft::run`] takes them as
/// streamed from memory: a plane's rows lie at most a few KiB apart, a block's planes
/// hundreds of KiB or more.
const FAR_BYTES: usize = 256 << 10;

pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn kernels_for(_n: usize, _inverse: bool) -> Option<(usize, [Kernel; 3])> {
    None
}

#[cfg(target_arch = "x86_64")]
fn kernels_for(n: usize, inverse: bool) -> Option<(usize, [Kernel; 3])> {
    use avx512::columns;
    /// Radices `A` (pass 2) and `B` (pass 1): the staged and the direct kernel, and the
    /// staged one for rows far apart.
    fn pair<const A: usize, const B: usize>(inverse: bool) -> (usize, [Kernel; 3]) {
        let kernels: [Kernel; 3] = if inverse {
            let staged = columns::<A, B, true, false>;
            [staged, columns::<A, B, true, true>, staged]
        } else {
            let staged = columns::<A, B, false, false>;
            [staged, columns::<A, B, false, true>, staged]
        };
        (A, kernels)
    }
    // The two radices as equal as the lengths allow: the first runs in pass 2 (a), the
    // second in pass 1 (b).
    Some(match n {
        12 => pair::<4, 3>(inverse),
        16 => pair::<4, 4>(inverse),
        24 => pair::<6, 4>(inverse),
        32 => pair::<8, 4>(inverse),
        48 => pair::<8, 6>(inverse),
        64 => pair::<8, 8>(inverse),
        96 => pair::<12, 8>(inverse),
        128 => pair::<16, 8>(inverse),
        192 => pair::<16, 12>(inverse),
        256 => pair::<16, 16>(inverse),
        384 => {
            // Streamed, 16 × 24 (module docs).
            let (a, [near, direct, _]) = pair::<24, 16>(inverse);
            let (_, [far, ..]) = pair::<16, 24>(inverse);
            (a, [near, direct, far])
        }
        _ => return None,
    })
}

#[cfg(target_arch = "x86_64")]
pub(super) mod dft;

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::dft::{cmul, dft};
    use super::{staging_stride, ColumnFft, LANES};
    use std::arch::x86_64::*;

    /// Runs `step` on the vectors `0..vectors` of a row: the partial ones (before `first`, from
    /// `tail` on) with their masks, the whole ones between them unmasked.
    #[inline(always)]
    fn each_vector(
        (first, tail, vectors): (usize, usize, usize),
        mask: impl Fn(usize) -> Option<__mmask8>,
        mut step: impl FnMut(usize, Option<__mmask8>),
    ) {
        for j in 0..first {
            step(j, mask(j));
        }
        for j in first..tail {
            step(j, None);
        }
        for j in tail..vectors {
            step(j, mask(j));
        }
    }

    /// Lanes `[0, 2 · rem)` of a vector: the `rem` complex elements of a partial one.
    fn mask_of(rem: usize) -> __mmask8 {
        ((1u32 << (2 * rem)) - 1) as __mmask8
    }

    /// The vector at `p`: the lanes of `mask` only (the others zero), or all of them.
    ///
    /// # Safety
    /// `p` is valid for reading those lanes.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const f64, mask: Option<__mmask8>) -> __m512d {
        // SAFETY: the caller's contract.
        unsafe {
            match mask {
                Some(mask) => _mm512_maskz_loadu_pd(mask, p),
                None => _mm512_loadu_pd(p),
            }
        }
    }

    /// Stores the lanes of `mask` of `y` at `p`, or all of them.
    ///
    /// # Safety
    /// `p` is valid for writing those lanes.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(p: *mut f64, y: __m512d, mask: Option<__mmask8>) {
        // SAFETY: the caller's contract.
        unsafe {
            match mask {
                Some(mask) => _mm512_mask_storeu_pd(p, mask, y),
                None => _mm512_storeu_pd(p, y),
            }
        }
    }

    /// The column FFT of length `A · B` (see the module docs): through the staging block, or
    /// `DIRECT` through the destination rows (pass 1 into rows `k2 + B n1`, pass 2 in place).
    ///
    /// # Safety
    /// As [`ColumnFft::run`] (or [`ColumnFft::run_direct`] when `DIRECT`); the CPU has
    /// AVX-512F.
    // The loops index the vectors by their counters over constant ranges (see pass 1).
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn columns<
        const A: usize,
        const B: usize,
        const INV: bool,
        const DIRECT: bool,
    >(
        plan: &ColumnFft,
        src: &[*const f64],
        dst: &[*mut f64],
        cols: usize,
        scale: Option<f64>,
        staging: *mut f64,
    ) {
        let n = A * B;
        assert!(src.len() == n && dst.len() == n && plan.twiddles.len() == 2 * n);
        // In f64s: a staging row. The columns in vectors: a partial one up to the first
        // 64-byte boundary of row 0 (blocks from the heap start 16 bytes past one, and a
        // vector across two cache lines costs two accesses), whole ones, a partial one left.
        // Every offset below stays under `2 · cols` in each row (partial vectors are masked)
        // and under `n · stride` past the aligned start of staging, which has a vector of
        // room for that (the caller's contract).
        let stride = 2 * staging_stride(cols);
        let address = src[0] as usize;
        let head = if address.is_multiple_of(16) {
            ((64 - address % 64) % 64 / 16).min(cols)
        } else {
            0
        };
        let full = (cols - head) / LANES;
        let rem = (cols - head) % LANES;
        let (head_mask, tail_mask) = (mask_of(head), mask_of(rem));
        // Vector j of a row sits at `row_at(j)` in the rows and at `8 j` in a staging row.
        let first = usize::from(head > 0);
        let row_at = |j: usize| {
            if j < first {
                0
            } else {
                2 * (head + LANES * (j - first))
            }
        };
        let (tail, vectors) = (first + full, first + full + usize::from(rem > 0));
        let mask = |j: usize| match j {
            _ if j < first => Some(head_mask),
            _ if j == tail => Some(tail_mask),
            _ => None,
        };
        let staging = if DIRECT {
            staging
        } else {
            staging.wrapping_add((64 - staging as usize % 64) % 64 / 8)
        };
        // Pass 1: DFTs of length B down rows n1 + A n2, twiddled, into staging rows
        // k2 A + n1 (direct: destination rows k2 + B n1). Every loop over the vectors of a
        // DFT runs over a constant range and indexes only with its counter, so that the
        // compiler unrolls it and keeps the vectors in registers.
        for n1 in 0..A {
            let mut rows = [std::ptr::null::<f64>(); B];
            let mut outs = [std::ptr::null_mut::<f64>(); B];
            // The twiddles `W_n^{n1 k2}`: real, then imaginary parts.
            let (mut tw_re, mut tw_im) = ([0.0; B], [0.0; B]);
            for k2 in 0..B {
                rows[k2] = src[n1 + A * k2];
                outs[k2] = if DIRECT {
                    dst[k2 + B * n1]
                } else {
                    staging.wrapping_add((k2 * A + n1) * stride)
                };
                tw_re[k2] = plan.twiddles[n1 * k2];
                tw_im[k2] = plan.twiddles[n + n1 * k2];
            }
            let step = |j: usize, partial: Option<__mmask8>| {
                let at = row_at(j);
                // SAFETY: a source row's vector `j` (above).
                let row = |k2: usize| unsafe { load(rows[k2].wrapping_add(at), partial) };
                // Built from the loads (no zeroing): in registers once the DFT is inlined.
                let mut x = [row(0); B];
                for k2 in 1..B {
                    x[k2] = row(k2);
                }
                // SAFETY: the CPU has AVX-512F (the caller's contract).
                unsafe { dft::<B, INV>(&mut x) };
                if n1 != 0 {
                    for k2 in 1..B {
                        let (re, im) = (_mm512_set1_pd(tw_re[k2]), _mm512_set1_pd(tw_im[k2]));
                        // SAFETY: as above.
                        x[k2] = unsafe { cmul(x[k2], re, im) };
                    }
                }
                for k2 in 0..B {
                    if DIRECT {
                        // SAFETY: a destination row's vector `j`, written by this call only.
                        unsafe { store(outs[k2].wrapping_add(at), x[k2], partial) };
                    } else {
                        // SAFETY: a staging row's aligned vector `j` (above).
                        unsafe { _mm512_store_pd(outs[k2].wrapping_add(8 * j), x[k2]) };
                    }
                }
            };
            each_vector((first, tail, vectors), mask, step);
        }
        // Pass 2: DFTs of length A down staging rows k2 A + n1 (direct: destination rows
        // k2 + B n1), into rows k2 + B k1.
        let factor = _mm512_set1_pd(scale.unwrap_or(1.0));
        for k2 in 0..B {
            let mut rows = [std::ptr::null_mut::<f64>(); A];
            let mut from = [std::ptr::null::<f64>(); A];
            for k1 in 0..A {
                rows[k1] = dst[k2 + B * k1];
                from[k1] = if DIRECT {
                    rows[k1]
                } else {
                    staging.wrapping_add((k2 * A + k1) * stride)
                };
            }
            let step = |j: usize, partial: Option<__mmask8>| {
                let at = row_at(j);
                let row = |n1: usize| {
                    if DIRECT {
                        // SAFETY: a destination row's vector `j` (above).
                        unsafe { load(from[n1].wrapping_add(at), partial) }
                    } else {
                        // SAFETY: a staging row's aligned vector `j` (above).
                        unsafe { _mm512_load_pd(from[n1].wrapping_add(8 * j)) }
                    }
                };
                let mut x = [row(0); A];
                for n1 in 1..A {
                    x[n1] = row(n1);
                }
                // SAFETY: the CPU has AVX-512F (the caller's contract).
                unsafe { dft::<A, INV>(&mut x) };
                if scale.is_some() {
                    for v in &mut x {
                        *v = _mm512_mul_pd(*v, factor);
                    }
                }
                for k1 in 0..A {
                    // SAFETY: a destination row's vector `j`, written by this call only.
                    unsafe { store(rows[k1].wrapping_add(at), x[k1], partial) };
                }
            };
            each_vector((first, tail, vectors), mask, step);
        }
    }
}

#[cfg(test)]
mod speed;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::lengths::naive::naive_dft;
    use rustfft::FftPlanner;

    /// Every length with a kernel.
    const LENGTHS: [usize; 11] = [12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384];

    fn value(row: usize, col: usize) -> Complex<f64> {
        Complex::new(
            ((row * 37 + col * 11) % 101) as f64 / 50.0 - 1.0,
            ((row * 13 + col * 29) % 97) as f64 / 48.0 - 1.0,
        )
    }

    /// The naive DFT of `x` in `direction`.
    fn reference(x: &[Complex<f64>], direction: FftDirection) -> Vec<Complex<f64>> {
        let sign = match direction {
            FftDirection::Forward => -1.0,
            FftDirection::Inverse => 1.0,
        };
        naive_dft(x, sign)
    }

    /// Runs `check` with the column FFT of every length with a kernel, both directions;
    /// where this CPU has no AVX-512F, reports the test skipped instead.
    fn each_plan(test: &str, mut check: impl FnMut(usize, FftDirection, &ColumnFft)) {
        if !available() {
            eprintln!("SKIPPED {test}: this CPU has no AVX-512F");
            return;
        }
        let mut planner = FftPlanner::<f64>::new();
        for n in LENGTHS {
            for direction in [FftDirection::Forward, FftDirection::Inverse] {
                let fft = planner.plan_fft(n, direction);
                let plan = ColumnFft::new(&*fft, 8).expect("a kernel for this length");
                check(n, direction, &plan);
            }
        }
    }

    /// `n` rows `pitch` apart of test values (the columns between the guard columns 0 and
    /// `pitch - 1` are transformed).
    fn rows(n: usize, pitch: usize) -> Vec<Complex<f64>> {
        (0..n * pitch)
            .map(|i| value(i / pitch, i % pitch))
            .collect()
    }

    /// Every supported length, both directions, widths with and without a partial vector, in
    /// place and out of place, scaled or not, with the kernel for rows far apart and without,
    /// against the naive DFT of each column.
    #[test]
    fn columns_match_the_naive_dft() {
        each_plan("columns_match_the_naive_dft", |n, direction, plan| {
            for cols in [1, 3, 4, 7, 8, 13] {
                // Rows `pitch` apart, with a guard column each side.
                let pitch = cols + 2;
                let input = rows(n, pitch);
                for (in_place, scale, far) in [
                    (false, None, false),
                    (true, Some(0.5), false),
                    (false, Some(0.5), true),
                    (true, None, true),
                ] {
                    let mut src = input.clone();
                    let mut out = vec![Complex::new(9.0, 9.0); n * pitch];
                    let mut staging = vec![Complex::default(); plan.staging_len(cols)];
                    let rows_in: Vec<*const Complex<f64>> =
                        (0..n).map(|i| src[i * pitch + 1..].as_ptr()).collect();
                    let target = if in_place { &mut src } else { &mut out };
                    let rows_out: Vec<*mut Complex<f64>> = (0..n)
                        .map(|i| target[i * pitch + 1..].as_mut_ptr())
                        .collect();
                    // SAFETY: n rows of `cols` valid elements each, in place or disjoint.
                    unsafe { plan.run_staged(far, &rows_in, &rows_out, cols, scale, &mut staging) };
                    let result = if in_place { &src } else { &out };
                    for c in 0..pitch {
                        let mut expected: Vec<Complex<f64>> =
                            (0..n).map(|i| input[i * pitch + c]).collect();
                        let column = (1..=cols).contains(&c);
                        if column {
                            expected = reference(&expected, direction);
                            for e in &mut expected {
                                *e *= scale.unwrap_or(1.0);
                            }
                        } else if !in_place {
                            expected = vec![Complex::new(9.0, 9.0); n];
                        }
                        for (i, e) in expected.iter().enumerate() {
                            let got = result[i * pitch + c];
                            assert!(
                                (got - e).norm() < 1e-12 * n as f64,
                                "n {n} {direction:?} cols {cols} in place {in_place} far {far}: \
                                     row {i} column {c}: {got} != {e}"
                            );
                        }
                    }
                }
            }
        });
    }

    /// The direct form (no staging) against the naive DFT: out of place, and in place on
    /// rows that come digit-swapped, every length and direction, partial vectors, scaled or
    /// not.
    #[test]
    fn direct_columns_match_the_naive_dft() {
        each_plan(
            "direct_columns_match_the_naive_dft",
            |n, direction, plan| {
                let mut seen = vec![false; n];
                for i in 0..n {
                    seen[plan.swapped(i)] = true;
                }
                assert!(seen.iter().all(|&s| s), "n {n}: swapped is a permutation");
                for cols in [1, 4, 6, 13] {
                    let pitch = cols + 2;
                    let input = rows(n, pitch);
                    for (in_place, scale) in [(false, Some(0.25)), (true, None)] {
                        let mut out = vec![Complex::new(9.0, 9.0); n * pitch];
                        if in_place {
                            // Element i of each column in row swapped(i).
                            for i in 0..n {
                                let (to, from) = (plan.swapped(i) * pitch, i * pitch);
                                out[to..to + pitch].copy_from_slice(&input[from..from + pitch]);
                            }
                        }
                        let base = out.as_mut_ptr();
                        let rows_out: Vec<*mut Complex<f64>> =
                            (0..n).map(|i| base.wrapping_add(i * pitch + 1)).collect();
                        let rows_in: Vec<*const Complex<f64>> = (0..n)
                            .map(|i| match in_place {
                                true => rows_out[plan.swapped(i)] as *const _,
                                false => input[i * pitch + 1..].as_ptr(),
                            })
                            .collect();
                        // SAFETY: n rows of `cols` valid elements each, disjoint from the
                        // destination or that same row of it, digit-swapped.
                        unsafe { plan.run_direct(&rows_in, &rows_out, cols, scale) };
                        for c in 1..=cols {
                            let mut expected: Vec<Complex<f64>> =
                                (0..n).map(|i| input[i * pitch + c]).collect();
                            expected = reference(&expected, direction);
                            for (i, e) in expected.iter().enumerate() {
                                let e = e * scale.unwrap_or(1.0);
                                let got = out[i * pitch + c];
                                assert!(
                                    (got - e).norm() < 1e-12 * n as f64,
                                    "n {n} {direction:?} cols {cols} in place {in_place}: \
                                     row {i} column {c}: {got} != {e}"
                                );
                            }
                        }
                        if !in_place {
                            for i in 0..n {
                                for c in [0, pitch - 1] {
                                    assert_eq!(out[i * pitch + c], Complex::new(9.0, 9.0));
                                }
                            }
                        }
                    }
                }
            },
        );
    }

    #[test]
    fn other_lengths_and_f32_have_no_kernel() {
        let mut planner = FftPlanner::<f64>::new();
        for n in [2, 3, 8, 36, 250, 512, 768] {
            assert!(ColumnFft::new(&*planner.plan_fft_forward(n), 8).is_none());
        }
        let fft = FftPlanner::<f32>::new().plan_fft_forward(256);
        assert!(ColumnFft::new(&*fft, 4).is_none());
    }
}
