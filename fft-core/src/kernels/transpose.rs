//! The transposing copies of a strided sweep's tiles: rows of the block into the tile's lines
//! (gather) and back (scatter).
//!
//! Element by element, a gather reads one row and writes one element into each of the tile's
//! lines. For complex `f64` on CPUs with AVX-512 the copies instead move blocks of 4 × 4
//! elements: four rows are read four elements (one 512-bit vector) at a time, transposed in
//! registers (eight 128-bit lane shuffles) and written as one whole cache line into each of
//! four lines, half the loads and a quarter of the stores of the element-wise copy; 64-bit
//! elements (complex `f32`, real `f64`) on CPUs with AVX do the same with 256-bit vectors (one
//! 64-bit lane an element). The scatter applies the transform's scale factor on the way (no
//! pass of its own), and [`scale`] scales contiguous lines in vectors of the same width.

use super::PREFETCH_ROWS;
use crate::real::Real;
use num_complex::Complex;
use redist::pack::prefetch_run;
use std::ops::Mul;

/// Copies element `c` of row `i` (`row(i)`, `width` elements) to `tile[c · stride + i]`, for
/// every `i < n` and `c < width`. Elements are complex or real numbers (`E` is `Complex<T>`
/// or `T`); their size picks the block kernel.
///
/// # Safety
/// Every `row(i)` is valid for `width` reads; `tile` for `(width − 1) · stride + n` writes,
/// overlapping no row.
#[inline]
pub(crate) unsafe fn gather<E: Copy>(
    row: impl Fn(usize) -> *const E,
    n: usize,
    width: usize,
    tile: *mut E,
    stride: usize,
) {
    let bytes = width * std::mem::size_of::<E>();
    let blocks = blocks::<E>(width);
    let full = blocks.columns(width);
    let copy = |i: usize, columns: std::ops::Range<usize>| {
        let row = row(i);
        for c in columns {
            // SAFETY: the caller's contract: row `i` holds `width` elements, the tile
            // `(width − 1) · stride + n`.
            unsafe { *tile.add(c * stride + i) = *row.add(c) };
        }
    };
    let four = |i: usize| {
        let rows = [0, 1, 2, 3].map(|r| row(i + r).cast::<f64>());
        let tile = tile.cast::<f64>().wrapping_add(i * lanes::<E>());
        // SAFETY: `blocks` names a kernel this CPU has; rows and tile as the caller's
        // contract says.
        unsafe {
            match blocks {
                Blocks::Lanes128 => gather4_avx512(rows, full, tile, stride),
                Blocks::Lanes64 => gather4_avx(rows, full, tile, stride),
                Blocks::None => unreachable!("walk_rows takes rows one by one"),
            }
        }
    };
    walk_rows(
        n,
        width,
        blocks,
        |i| prefetch_run(row(i), bytes),
        four,
        copy,
    );
}

/// The inverse of [`gather`]: element `tile[c · stride + i]`, times `scale` where there is
/// one, to element `c` of `row(i)`. `E` is `Complex<T>` or `T`.
///
/// # Safety
/// Every `row(i)` is valid for `width` writes, and no two overlap; `tile` for
/// `(width − 1) · stride + n` reads, overlapping no row.
#[inline]
pub(crate) unsafe fn scatter<T: Real, E: Copy + Mul<T, Output = E>>(
    tile: *const E,
    stride: usize,
    n: usize,
    width: usize,
    row: impl Fn(usize) -> *mut E,
    scale: Option<T>,
) {
    let bytes = width * std::mem::size_of::<E>();
    let scale64 = scale.map(|s| s.to_f64().expect("a real converts to f64"));
    // A 64-bit lane holds a complex f32 (both parts scale as f32) or a real f64.
    let lane_scale = match (scale64, std::mem::size_of::<T>()) {
        (None, _) => LaneScale::None,
        (Some(s), 4) => LaneScale::F32(s as f32),
        (Some(s), _) => LaneScale::F64(s),
    };
    let blocks = blocks::<E>(width);
    let full = blocks.columns(width);
    let copy = |i: usize, columns: std::ops::Range<usize>| {
        let row = row(i);
        for c in columns {
            // SAFETY: the caller's contract: row `i` holds `width` elements, the tile
            // `(width − 1) · stride + n`.
            let x = unsafe { *tile.add(c * stride + i) };
            let x = match scale {
                None => x,
                Some(s) => x * s,
            };
            // SAFETY: as above.
            unsafe { *row.add(c) = x };
        }
    };
    let four = |i: usize| {
        let rows = [0, 1, 2, 3].map(|r| row(i + r).cast::<f64>());
        let tile = tile.cast::<f64>().wrapping_add(i * lanes::<E>());
        // SAFETY: `blocks` names a kernel this CPU has; rows and tile as the caller's
        // contract says.
        unsafe {
            match blocks {
                Blocks::Lanes128 => scatter4_avx512(tile, stride, full, rows, scale64),
                Blocks::Lanes64 => scatter4_avx(tile, stride, full, rows, lane_scale),
                Blocks::None => unreachable!("walk_rows takes rows one by one"),
            }
        }
    };
    walk_rows(
        n,
        width,
        blocks,
        |i| prefetch_run(row(i), bytes),
        four,
        copy,
    );
}

/// Which 4 × 4 block kernel the copies of a tile use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocks {
    /// 128-bit elements (complex `f64`), one 512-bit vector per block row (AVX-512F).
    Lanes128,
    /// 64-bit elements (complex `f32`, real `f64`), one 256-bit vector per block row (AVX).
    Lanes64,
    /// Element by element.
    None,
}

/// How the 64-bit-lane scatter scales its lanes.
#[derive(Debug, Clone, Copy)]
enum LaneScale {
    None,
    /// Each lane a complex `f32`: both parts times the factor.
    F32(f32),
    /// Each lane a real `f64`.
    F64(f64),
}

impl Blocks {
    /// The leading columns of a tile `width` wide that the block kernel moves (whole blocks
    /// of four); the element-wise copy takes the rest.
    fn columns(self, width: usize) -> usize {
        match self {
            Blocks::None => 0,
            _ => width / 4 * 4,
        }
    }
}

/// The block kernel for tiles of `width` lines of elements `E` on this CPU (never one off
/// x86-64).
fn blocks<E>(width: usize) -> Blocks {
    match std::mem::size_of::<E>() {
        _ if width < 4 => Blocks::None,
        16 if avx512() => Blocks::Lanes128,
        8 if avx() => Blocks::Lanes64,
        _ => Blocks::None,
    }
}

/// Scalars of `f64` per element `E` (2 for a complex `f64`, 1 for a 64-bit element): the
/// tile offset of element `i`, in the block kernels' `f64` units, is `i · lanes`.
fn lanes<E>() -> usize {
    std::mem::size_of::<E>() / std::mem::size_of::<f64>()
}

/// Visits rows `0..n` of a tile `width` columns wide: with a block kernel, four at a time
/// through `four(i)` (rows `i..i + 4`, the leading whole blocks of four columns), the
/// columns left over through `copy(row, columns)`; then the rows left over one at a time,
/// whole, through `copy`. Row `i + PREFETCH_ROWS` (each row of the next block) is
/// prefetched first. `four` runs only with a block kernel (`blocks` is not `None`).
#[inline(always)]
fn walk_rows(
    n: usize,
    width: usize,
    blocks: Blocks,
    prefetch: impl Fn(usize),
    four: impl Fn(usize),
    copy: impl Fn(usize, std::ops::Range<usize>),
) {
    let full = blocks.columns(width);
    let mut i = 0;
    if blocks != Blocks::None {
        while i + 4 <= n {
            (i + 4..(i + 4 + PREFETCH_ROWS).min(n)).for_each(&prefetch);
            four(i);
            if full < width {
                (i..i + 4).for_each(|i| copy(i, full..width));
            }
            i += 4;
        }
    }
    for i in i..n {
        if i + PREFETCH_ROWS < n {
            prefetch(i + PREFETCH_ROWS);
        }
        copy(i, 0..width);
    }
}

/// Multiplies every element of `data` by `s`, in 512-bit vectors where the CPU has AVX-512.
pub(crate) fn scale<T: Real>(data: &mut [Complex<T>], s: T) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { scale_avx512(data, s) };
    }
    scale_body(data, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scale_avx512<T: Real>(data: &mut [Complex<T>], s: T) {
    scale_body(data, s)
}

#[inline(always)]
fn scale_body<T: Real>(data: &mut [Complex<T>], s: T) {
    let scalars: &mut [T] = bytemuck::cast_slice_mut(data);
    scalars.iter_mut().for_each(|x| *x = *x * s);
}

/// Whether this CPU has AVX (detected once, then cached by the standard library).
fn avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU has AVX-512F (detected once, then cached by the standard library).
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx512f");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Four rows of complex `f64` (`rows[r]`, the first `width` elements, a multiple of four)
/// into elements `0..4` of the tile's lines (line `c` starts at `tile + 2 · c · stride`
/// scalars).
///
/// # Safety
/// AVX-512F is available; pointers as in [`gather`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather4_avx512(rows: [*const f64; 4], width: usize, tile: *mut f64, stride: usize) {
    use std::arch::x86_64::*;
    for c in (0..width).step_by(4) {
        // SAFETY: the caller's contract: each row holds `width` complex elements.
        let [a, b, d, e] = rows.map(|r| unsafe { _mm512_loadu_pd(r.add(2 * c)) });
        for (k, o) in transpose4(a, b, d, e).into_iter().enumerate() {
            // SAFETY: the caller's contract: line `c + k` of the tile holds this block row.
            unsafe { _mm512_storeu_pd(tile.add(2 * (c + k) * stride), o) };
        }
    }
}

/// The inverse of [`gather4_avx512`], scaling by `scale` where there is one.
///
/// # Safety
/// AVX-512F is available; pointers as in [`scatter`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scatter4_avx512(
    tile: *const f64,
    stride: usize,
    width: usize,
    rows: [*mut f64; 4],
    scale: Option<f64>,
) {
    use std::arch::x86_64::*;
    let s = _mm512_set1_pd(scale.unwrap_or(1.0));
    let load = |k: usize, c: usize| {
        // SAFETY: the caller's contract: line `c + k` of the tile holds this block row.
        let v = unsafe { _mm512_loadu_pd(tile.add(2 * (c + k) * stride)) };
        match scale {
            Some(_) => _mm512_mul_pd(v, s),
            None => v,
        }
    };
    for c in (0..width).step_by(4) {
        let [a, b, d, e] = [0, 1, 2, 3].map(|k| load(k, c));
        for (row, v) in rows.iter().zip(transpose4(a, b, d, e)) {
            // SAFETY: the caller's contract: each row holds `width` complex elements.
            unsafe { _mm512_storeu_pd(row.add(2 * c), v) };
        }
    }
}

/// Four rows of 64-bit elements (`rows[r]`, the first `width` elements, a multiple of four,
/// each moved as one 64-bit lane) into elements `0..4` of the tile's lines (line `c` starts
/// `c · stride` lanes after `tile`).
///
/// # Safety
/// AVX is available; pointers as in [`gather`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn gather4_avx(rows: [*const f64; 4], width: usize, tile: *mut f64, stride: usize) {
    use std::arch::x86_64::*;
    for c in (0..width).step_by(4) {
        // SAFETY: the caller's contract: each row holds `width` 64-bit elements.
        let [a, b, d, e] = rows.map(|r| unsafe { _mm256_loadu_pd(r.add(c)) });
        for (k, v) in transpose4x64(a, b, d, e).into_iter().enumerate() {
            // SAFETY: the caller's contract: line `c + k` of the tile holds this block row.
            unsafe { _mm256_storeu_pd(tile.add((c + k) * stride), v) };
        }
    }
}

/// The inverse of [`gather4_avx`], scaling as `scale` says.
///
/// # Safety
/// AVX is available; pointers as in [`scatter`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn scatter4_avx(
    tile: *const f64,
    stride: usize,
    width: usize,
    rows: [*mut f64; 4],
    scale: LaneScale,
) {
    use std::arch::x86_64::*;
    // One loop per kind of scaling, so that each inlines its own loads.
    macro_rules! blocks {
        ($scaled:expr) => {
            for c in (0..width).step_by(4) {
                let [a, b, d, e] = [0, 1, 2, 3].map(|k| {
                    // SAFETY: the caller's contract: line `c + k` of the tile holds this
                    // block row.
                    let v = unsafe { _mm256_loadu_pd(tile.add((c + k) * stride)) };
                    $scaled(v)
                });
                for (row, v) in rows.iter().zip(transpose4x64(a, b, d, e)) {
                    // SAFETY: the caller's contract: each row holds `width` elements.
                    unsafe { _mm256_storeu_pd(row.add(c), v) };
                }
            }
        };
    }
    match scale {
        LaneScale::None => blocks!(|v| v),
        LaneScale::F32(s) => {
            let s = _mm256_set1_ps(s);
            blocks!(|v| _mm256_castps_pd(_mm256_mul_ps(_mm256_castpd_ps(v), s)))
        }
        LaneScale::F64(s) => {
            let s = _mm256_set1_pd(s);
            blocks!(|v| _mm256_mul_pd(v, s))
        }
    }
}

/// Transposes a 4 × 4 matrix of 64-bit lanes held as four rows of one 256-bit vector each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn transpose4x64(
    a: std::arch::x86_64::__m256d,
    b: std::arch::x86_64::__m256d,
    c: std::arch::x86_64::__m256d,
    d: std::arch::x86_64::__m256d,
) -> [std::arch::x86_64::__m256d; 4] {
    use std::arch::x86_64::{
        _mm256_permute2f128_pd as halves, _mm256_unpackhi_pd, _mm256_unpacklo_pd,
    };
    // [a0 b0 a2 b2], [a1 b1 a3 b3], [c0 d0 c2 d2], [c1 d1 c3 d3]
    let (t0, t1) = (_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
    let (t2, t3) = (_mm256_unpacklo_pd(c, d), _mm256_unpackhi_pd(c, d));
    // [a0 b0 c0 d0], [a1 b1 c1 d1], [a2 b2 c2 d2], [a3 b3 c3 d3]
    [
        halves::<0x20>(t0, t2),
        halves::<0x20>(t1, t3),
        halves::<0x31>(t0, t2),
        halves::<0x31>(t1, t3),
    ]
}

/// Stand-ins off x86-64, where [`blocks`] is always [`Blocks::None`]: never called.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn gather4_avx512(_: [*const f64; 4], _: usize, _: *mut f64, _: usize) {
    unreachable!("AVX-512 blocks exist on x86-64 only")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn scatter4_avx512(_: *const f64, _: usize, _: usize, _: [*mut f64; 4], _: Option<f64>) {
    unreachable!("AVX-512 blocks exist on x86-64 only")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn gather4_avx(_: [*const f64; 4], _: usize, _: *mut f64, _: usize) {
    unreachable!("AVX blocks exist on x86-64 only")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn scatter4_avx(_: *const f64, _: usize, _: usize, _: [*mut f64; 4], _: LaneScale) {
    unreachable!("AVX blocks exist on x86-64 only")
}

/// Transposes a 4 × 4 matrix of complex `f64` held as four rows of one vector each (one
/// complex number per 128-bit lane).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn transpose4(
    a: std::arch::x86_64::__m512d,
    b: std::arch::x86_64::__m512d,
    c: std::arch::x86_64::__m512d,
    d: std::arch::x86_64::__m512d,
) -> [std::arch::x86_64::__m512d; 4] {
    use std::arch::x86_64::_mm512_shuffle_f64x2 as shuffle;
    // [a0 a1 b0 b1], [a2 a3 b2 b3], [c0 c1 d0 d1], [c2 c3 d2 d3]
    let (t0, t1) = (shuffle::<0x44>(a, b), shuffle::<0xEE>(a, b));
    let (t2, t3) = (shuffle::<0x44>(c, d), shuffle::<0xEE>(c, d));
    // [a0 b0 c0 d0], [a1 b1 c1 d1], [a2 b2 c2 d2], [a3 b3 c3 d3]
    [
        shuffle::<0x88>(t0, t2),
        shuffle::<0xDD>(t0, t2),
        shuffle::<0x88>(t1, t3),
        shuffle::<0xDD>(t1, t3),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Element `c` of row `i` of a test block, distinct everywhere.
    fn value<T: Real>(i: usize, c: usize) -> Complex<T> {
        Complex::new(T::of(i as f64), T::of(c as f64 + 0.5))
    }

    /// The same, real (distinct while `c` < 1000).
    fn real<T: Real>(i: usize, c: usize) -> T {
        T::of((1000 * i + c) as f64)
    }

    /// Gathers and scatters a block of `n` rows of elements `value(i, c)` (`E` is `T` or
    /// `Complex<T>`) and checks every element of the tile and of the rows written back.
    fn check<T: Real, E>(n: usize, width: usize, scale: Option<T>, value: fn(usize, usize) -> E)
    where
        E: Copy + PartialEq + std::fmt::Debug + Mul<T, Output = E>,
    {
        // Rows of `width + 5` elements, read from column 3 on; lines padded by 3.
        let row_len = width + 5;
        let block: Vec<E> = (0..n * row_len)
            .map(|e| value(e / row_len, e % row_len))
            .collect();
        let stride = n + 3;
        let zero = value(usize::MAX / 2000, 999);
        let mut tile = vec![zero; width * stride];
        let row = |i| block[i * row_len + 3..].as_ptr();
        // SAFETY: rows and tile lie inside the vectors.
        unsafe { gather(row, n, width, tile.as_mut_ptr(), stride) };
        for c in 0..width {
            for i in 0..stride {
                let want = if i < n { value(i, c + 3) } else { zero };
                let got = tile[c * stride + i];
                assert_eq!(
                    got, want,
                    "gather n {n} width {width}: line {c} element {i}"
                );
            }
        }
        let mut back = vec![zero; n * row_len];
        let base = back.as_mut_ptr();
        // SAFETY: as above.
        unsafe {
            scatter(
                tile.as_ptr(),
                stride,
                n,
                width,
                |i| base.add(i * row_len + 3),
                scale,
            )
        };
        for i in 0..n {
            for c in 0..row_len {
                let want = if (3..width + 3).contains(&c) {
                    value(i, c) * scale.unwrap_or(T::one())
                } else {
                    zero
                };
                let got = back[i * row_len + c];
                assert_eq!(
                    got, want,
                    "scatter n {n} width {width}: row {i} element {c}"
                );
            }
        }
    }

    #[test]
    fn gather_and_scatter_move_every_element_to_its_place() {
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 16, 30] {
            for width in [1, 3, 4, 5, 8, 13, 64] {
                for scale in [None, Some(0.25)] {
                    let scale32 = scale.map(|s| s as f32);
                    check::<f64, _>(n, width, scale, value::<f64>);
                    check::<f32, _>(n, width, scale32, value::<f32>);
                    check::<f64, _>(n, width, scale, real::<f64>);
                    check::<f32, _>(n, width, scale32, real::<f32>);
                }
            }
        }
    }

    #[test]
    fn scale_multiplies_every_element() {
        let mut data: Vec<Complex<f64>> = (0..37).map(|i| value(i, 2 * i)).collect();
        scale(&mut data, 0.5);
        for (i, z) in data.iter().enumerate() {
            assert_eq!(*z, value::<f64>(i, 2 * i) * 0.5, "element {i}");
        }
    }
}
