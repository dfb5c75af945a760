//! The small DFTs of the column kernels on AVX-512 vectors of four interleaved complex
//! `f64` lanes, each lane a column, held in registers: radices 2, 4, 8 and 16 by
//! Cooley–Tukey, 3, and 6, 12 and 24 by the prime factor algorithm (2, 4 or 8 times 3).
//!
//! Every function here is always inlined into the kernel that calls it, so that the vectors
//! stay in registers. A function with `#[target_feature]` may only ask to be inlined, and the
//! compiler kept the DFT of 24 (and then the DFT of 3 inside it) out of line, its vectors
//! passed through memory; so these carry no target feature of their own and are `unsafe`:
//! they run only inside a kernel that enables AVX-512F.

use std::arch::x86_64::*;

/// `cos(2πj/16)` for `j < 16`; `sin(2πj/16)` is `COS16[(j + 12) % 16]`. The twiddles
/// inside the radix-8 and radix-16 DFTs.
const COS16: [f64; 16] = {
    let (c1, c2, c3) = (
        0.923_879_532_511_286_7,
        std::f64::consts::FRAC_1_SQRT_2,
        0.382_683_432_365_089_8,
    );
    [
        1.0, c1, c2, c3, 0.0, -c3, -c2, -c1, -1.0, -c1, -c2, -c3, 0.0, c3, c2, c1,
    ]
};

/// `a · (wr + i wi)` for interleaved complex lanes.
///
/// # Safety
/// The CPU has AVX-512F (so for every function of this module).
#[inline(always)]
pub(in crate::kernels) unsafe fn cmul(a: __m512d, wr: __m512d, wi: __m512d) -> __m512d {
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        let swapped = _mm512_permute_pd(a, 0x55);
        _mm512_fmaddsub_pd(a, wr, _mm512_mul_pd(swapped, wi))
    }
}

/// `a · W16^j` (forward) or `a · conj(W16^j)` (inverse).
#[inline(always)]
unsafe fn twiddle16<const INV: bool>(a: __m512d, j: usize) -> __m512d {
    let sin = COS16[(j + 12) % 16];
    let im = if INV { sin } else { -sin };
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        if j == 4 {
            return rotate::<INV>(a);
        }
        cmul(a, _mm512_set1_pd(COS16[j]), _mm512_set1_pd(im))
    }
}

/// `a · (-i)` (forward) or `a · i` (inverse).
#[inline(always)]
unsafe fn rotate<const INV: bool>(a: __m512d) -> __m512d {
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        let swapped = _mm512_castpd_si512(_mm512_permute_pd(a, 0x55));
        // Forward: (im, -re), the sign on the odd lanes; inverse: (-im, re), on the even.
        let sign = if INV {
            _mm512_set_epi64(0, i64::MIN, 0, i64::MIN, 0, i64::MIN, 0, i64::MIN)
        } else {
            _mm512_set_epi64(i64::MIN, 0, i64::MIN, 0, i64::MIN, 0, i64::MIN, 0)
        };
        _mm512_castsi512_pd(_mm512_xor_si512(swapped, sign))
    }
}

#[inline(always)]
unsafe fn dft2(x: &mut [__m512d]) {
    let (a, b) = (x[0], x[1]);
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        x[0] = _mm512_add_pd(a, b);
        x[1] = _mm512_sub_pd(a, b);
    }
}

/// DFT of length 4 of `x[0], x[s], x[2s], x[3s]`, in place.
#[inline(always)]
unsafe fn dft4_strided<const INV: bool>(x: &mut [__m512d], s: usize) {
    let (a, b, c, d) = (x[0], x[s], x[2 * s], x[3 * s]);
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        let t0 = _mm512_add_pd(a, c);
        let t1 = _mm512_sub_pd(a, c);
        let t2 = _mm512_add_pd(b, d);
        let t3 = rotate::<INV>(_mm512_sub_pd(b, d));
        x[0] = _mm512_add_pd(t0, t2);
        x[s] = _mm512_add_pd(t1, t3);
        x[2 * s] = _mm512_sub_pd(t0, t2);
        x[3 * s] = _mm512_sub_pd(t1, t3);
    }
}

/// DFT of length 8: `n = n1 + 2 n2`, a DFT of 4 per `n1`, twiddles `W8^{n1 k2}`, a DFT of
/// 2 per `k2`; output in order.
#[inline(always)]
unsafe fn dft8<const INV: bool>(x: &mut [__m512d]) {
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        // x[n1 + 2 n2] with stride 2: the DFT of 4 leaves A[n1][k2] at n1 + 2 k2.
        dft4_strided::<INV>(&mut x[0..], 2);
        dft4_strided::<INV>(&mut x[1..], 2);
        for k2 in 1..4 {
            x[1 + 2 * k2] = twiddle16::<INV>(x[1 + 2 * k2], 2 * k2);
        }
    }
    let a: [__m512d; 8] = x[..8].try_into().expect("8 vectors");
    for k2 in 0..4 {
        let mut pair = [a[2 * k2], a[2 * k2 + 1]];
        // SAFETY: as above.
        unsafe { dft2(&mut pair) };
        // X[k2 + 4 k1]
        x[k2] = pair[0];
        x[k2 + 4] = pair[1];
    }
}

/// DFT of length 16: `n = n1 + 4 n2`, a DFT of 4 per `n1`, twiddles `W16^{n1 k2}`, a DFT
/// of 4 per `k2`; output in order.
#[inline(always)]
unsafe fn dft16<const INV: bool>(x: &mut [__m512d]) {
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        for n1 in 0..4 {
            // x[n1 + 4 n2] -> A[n1][k2] at n1 + 4 k2.
            dft4_strided::<INV>(&mut x[n1..], 4);
        }
        for n1 in 1..4 {
            for k2 in 1..4 {
                x[n1 + 4 * k2] = twiddle16::<INV>(x[n1 + 4 * k2], n1 * k2);
            }
        }
    }
    let a: [__m512d; 16] = x[..16].try_into().expect("16 vectors");
    for k2 in 0..4 {
        let mut b = [a[4 * k2], a[4 * k2 + 1], a[4 * k2 + 2], a[4 * k2 + 3]];
        // SAFETY: as above.
        unsafe { dft4_strided::<INV>(&mut b, 1) };
        for (k1, v) in b.into_iter().enumerate() {
            x[k2 + 4 * k1] = v;
        }
    }
}

/// DFT of length 3 of `x[..3]`, in place: `X1, X2 = x0 - (x1 + x2) / 2 ∓ i (√3 / 2) (x1 - x2)`
/// (forward; the inverse swaps the signs of `i`).
#[inline(always)]
unsafe fn dft3<const INV: bool>(x: &mut [__m512d]) {
    let (a, b, c) = (x[0], x[1], x[2]);
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        let sum = _mm512_add_pd(b, c);
        let diff = _mm512_mul_pd(
            rotate::<INV>(_mm512_sub_pd(b, c)),
            _mm512_set1_pd(0.866_025_403_784_438_6),
        );
        let mid = _mm512_fnmadd_pd(sum, _mm512_set1_pd(0.5), a);
        x[0] = _mm512_add_pd(a, sum);
        x[1] = _mm512_add_pd(mid, diff);
        x[2] = _mm512_sub_pd(mid, diff);
    }
}

/// The inverse of `a` modulo `m` (`a` and `m` coprime, `m` > 1).
const fn inverse_mod(a: usize, m: usize) -> usize {
    let mut v = 1;
    while (a * v) % m != 1 {
        v += 1;
    }
    v
}

/// DFT of length `N1 · N2` (coprime, at most 24) of `x[..N1 · N2]`, in place, by the prime
/// factor algorithm (Good–Thomas): input `n = (N2 n1 + N1 n2) mod N` and output `k ≡ k1
/// (mod N1)`, `k ≡ k2 (mod N2)` make it a 2-D DFT of `N1 × N2` with no twiddles between the
/// DFTs of `N2` per `n1` and of `N1` per `k2`.
#[inline(always)]
unsafe fn pfa<const N1: usize, const N2: usize, const INV: bool>(x: &mut [__m512d]) {
    let n = N1 * N2;
    // Output k = k1 e1 + k2 e2 (mod n): e1 ≡ 1 (mod N1), ≡ 0 (mod N2); e2 the other way.
    let e1 = const { N2 * inverse_mod(N2 % N1, N1) };
    let e2 = const { N1 * inverse_mod(N1 % N2, N2) };
    // A[n1][k2], the DFT of N2 per n1, at n1 + N1 k2. Every array here is filled (from
    // copies, not zeros) at constant indices before it is read, so it lives in registers.
    let mut a = [x[0]; 24];
    for n1 in 0..N1 {
        let mut t = [x[0]; N2];
        for n2 in 0..N2 {
            t[n2] = x[(N2 * n1 + N1 * n2) % n];
        }
        // SAFETY: AVX-512F (the caller's contract).
        unsafe { dft::<N2, INV>(&mut t) };
        for k2 in 0..N2 {
            a[n1 + N1 * k2] = t[k2];
        }
    }
    for k2 in 0..N2 {
        let mut t = [a[0]; N1];
        t.copy_from_slice(&a[N1 * k2..N1 * (k2 + 1)]);
        // SAFETY: as above.
        unsafe { dft::<N1, INV>(&mut t) };
        for k1 in 0..N1 {
            x[(k1 * e1 + k2 * e2) % n] = t[k1];
        }
    }
}

/// DFT of length `N` (2, 3, 4, 6, 8, 12, 16 or 24) of `x[..N]`, in place.
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
pub(in crate::kernels) unsafe fn dft<const N: usize, const INV: bool>(x: &mut [__m512d]) {
    // SAFETY: AVX-512F (the caller's contract).
    unsafe {
        match N {
            2 => dft2(x),
            3 => dft3::<INV>(x),
            4 => dft4_strided::<INV>(x, 1),
            6 => pfa::<2, 3, INV>(x),
            8 => dft8::<INV>(x),
            12 => pfa::<4, 3, INV>(x),
            16 => dft16::<INV>(x),
            24 => pfa::<8, 3, INV>(x),
            _ => unreachable!("no DFT of length {N}"),
        }
    }
}
