//! The machine's own limits, measured where the benchmarks run: how fast the cores copy
//! memory, and how fast they multiply and add.
//!
//! * [`copy_seconds`]: one copy of an array of a given size, split among threads that copy
//!   their shares at once. The faster of `memcpy` (glibc's, what `copy_from_slice` calls)
//!   and a copy with non-temporal stores (AVX-512 or AVX, where the CPU has them), which skip
//!   the read of the destination that ordinary stores pay: whichever the machine does
//!   faster, so a floor from it is a floor.
//! * [`fma_peak`]: floating-point operations per second of fused multiply-adds on `f64`
//!   held in registers (no memory traffic), on that many threads at once, in the widest
//!   vectors the CPU has (AVX-512, else AVX2 with FMA, else scalar), detected at run time.
//!
//! Each probe starts its threads together on a barrier and takes the slowest thread of a
//! round, best of several rounds.

use redist::alloc::AlignedBuf;
use std::sync::Barrier;
use std::time::Instant;

/// Rounds of each probe; the best is kept.
const ROUNDS: usize = 5;

/// The instruction set a probe used, for the report.
pub fn vector_isa() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX-512";
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return "AVX2+FMA";
        }
    }
    "scalar"
}

/// Runs `work(thread)` on `threads` threads started together, `ROUNDS` times; each round's
/// seconds are its slowest thread's, and the best round's are returned. `work` returns the
/// seconds of its timed part (after any set-up), as measured after the barrier.
fn best_round<F>(threads: usize, work: F) -> f64
where
    F: Fn(usize, &Barrier) -> [f64; ROUNDS] + Sync,
{
    let barrier = Barrier::new(threads);
    let times: Vec<[f64; ROUNDS]> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (work, barrier) = (&work, &barrier);
                s.spawn(move || work(t, barrier))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    (0..ROUNDS)
        .map(|round| times.iter().map(|t| t[round]).fold(0.0, f64::max))
        .fold(f64::MAX, f64::min)
}

/// Seconds of one copy of `bytes` bytes (source and destination each that large), split into
/// `threads` equal shares copied at once, each thread from and to buffers of its own (on a
/// cache line, advised onto huge pages, touched before timing): the faster of `memcpy` and a
/// non-temporal copy (module docs), best of [`ROUNDS`].
pub fn copy_seconds(bytes: usize, threads: usize) -> f64 {
    let threads = threads.max(1);
    let share = bytes.div_ceil(threads).div_ceil(64) * 8; // f64s, whole cache lines
    best_round(threads, |_, barrier| {
        let src: AlignedBuf<f64> = AlignedBuf::new(share);
        let mut dst: AlignedBuf<f64> = AlignedBuf::new(share);
        dst.copy_from_slice(&src); // warms the TLB and the pages
        let mut times = [0.0; ROUNDS];
        for time in &mut times {
            barrier.wait();
            let t = Instant::now();
            dst.copy_from_slice(&src);
            let plain = t.elapsed().as_secs_f64();
            barrier.wait();
            let t = Instant::now();
            let streamed = stream_copy(&mut dst, &src).then(|| t.elapsed().as_secs_f64());
            *time = streamed.map_or(plain, |s| s.min(plain));
        }
        std::hint::black_box(&dst);
        times
    })
}

/// Copies `src` into `dst` (equal lengths, both on a cache line, a whole number of cache
/// lines) with non-temporal stores; false (nothing copied) where the CPU has no such
/// vector stores.
fn stream_copy(dst: &mut [f64], src: &[f64]) -> bool {
    assert_eq!(dst.len(), src.len());
    let aligned = |p: *const f64| (p as usize).is_multiple_of(64);
    assert!(dst.len().is_multiple_of(8) && aligned(dst.as_ptr()) && aligned(src.as_ptr()));
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F; lengths and alignment asserted above.
            unsafe { x86::stream_copy_avx512(dst, src) };
            return true;
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX; lengths and alignment asserted above.
            unsafe { x86::stream_copy_avx(dst, src) };
            return true;
        }
    }
    false
}

/// Floating-point operations per second of `f64` fused multiply-adds in registers on
/// `threads` threads at once (module docs), best of [`ROUNDS`], each round about 20 ms.
pub fn fma_peak(threads: usize) -> f64 {
    let threads = threads.max(1);
    // Calibrate: iterations for about 20 ms on one thread.
    let (mut iters, mut flops) = (1u64 << 12, 0.0);
    loop {
        let t = Instant::now();
        let f = fma_loop(iters);
        if t.elapsed().as_secs_f64() > 0.02 || iters > 1 << 40 {
            flops += f;
            break;
        }
        iters *= 2;
    }
    let secs = best_round(threads, |_, barrier| {
        fma_loop(iters); // the vector units wake up (AVX-512 licences)
        let mut times = [0.0; ROUNDS];
        for time in &mut times {
            barrier.wait();
            let t = Instant::now();
            std::hint::black_box(fma_loop(iters));
            *time = t.elapsed().as_secs_f64();
        }
        times
    });
    flops * threads as f64 / secs
}

/// Runs `iters` iterations of independent fused multiply-add chains in the widest vectors
/// the CPU has; returns the floating-point operations done (2 per lane per FMA).
fn fma_loop(iters: u64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            let s = unsafe { x86::fma_avx512(iters) };
            std::hint::black_box(s);
            return (iters * x86::CHAINS as u64 * 8 * 2) as f64;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA.
            let s = unsafe { x86::fma_avx2(iters) };
            std::hint::black_box(s);
            return (iters * x86::CHAINS as u64 * 4 * 2) as f64;
        }
    }
    let mut acc = [1.0f64; 8];
    for _ in 0..iters {
        for a in &mut acc {
            *a = *a * 0.999_999 + 1e-7;
        }
    }
    std::hint::black_box(acc);
    (iters * 8 * 2) as f64
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Independent FMA chains: enough to cover the FMA latency (4 cycles) on two ports.
    pub const CHAINS: usize = 12;

    /// `iters` rounds of `CHAINS` AVX-512 FMAs; returns a sum so nothing is optimized away.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma_avx512(iters: u64) -> f64 {
        let (a, b) = (_mm512_set1_pd(0.999_999), _mm512_set1_pd(1e-7));
        let mut acc = [_mm512_set1_pd(1.0); CHAINS];
        for _ in 0..iters {
            for x in &mut acc {
                *x = _mm512_fmadd_pd(*x, a, b);
            }
        }
        acc.iter().map(|&x| _mm512_reduce_add_pd(x)).sum()
    }

    /// `iters` rounds of `CHAINS` AVX2 FMAs; returns a sum so nothing is optimized away.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma_avx2(iters: u64) -> f64 {
        let (a, b) = (_mm256_set1_pd(0.999_999), _mm256_set1_pd(1e-7));
        let mut acc = [_mm256_set1_pd(1.0); CHAINS];
        for _ in 0..iters {
            for x in &mut acc {
                *x = _mm256_fmadd_pd(*x, a, b);
            }
        }
        let mut lanes = [0.0; 4];
        acc.iter()
            .map(|&x| {
                // SAFETY: four f64s into four f64s.
                unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), x) };
                lanes.iter().sum::<f64>()
            })
            .sum()
    }

    /// `dst.copy_from_slice(src)` with AVX-512 non-temporal stores.
    ///
    /// # Safety
    /// The CPU must have AVX-512F; equal lengths, a multiple of 8, both on 64 bytes.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn stream_copy_avx512(dst: &mut [f64], src: &[f64]) {
        for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
            // SAFETY: 8 f64s on 64 bytes each side (the caller's contract).
            unsafe { _mm512_stream_pd(d.as_mut_ptr(), _mm512_load_pd(s.as_ptr())) };
        }
        _mm_sfence();
    }

    /// `dst.copy_from_slice(src)` with AVX non-temporal stores.
    ///
    /// # Safety
    /// The CPU must have AVX; equal lengths, a multiple of 4, both on 32 bytes.
    #[target_feature(enable = "avx")]
    pub unsafe fn stream_copy_avx(dst: &mut [f64], src: &[f64]) {
        for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            // SAFETY: 4 f64s on 32 bytes each side (the caller's contract).
            unsafe { _mm256_stream_pd(d.as_mut_ptr(), _mm256_load_pd(s.as_ptr())) };
        }
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streaming_copy_copies() {
        let mut src: AlignedBuf<f64> = AlignedBuf::new(1024);
        for (i, x) in src.iter_mut().enumerate() {
            *x = i as f64;
        }
        let mut dst: AlignedBuf<f64> = AlignedBuf::new(1024);
        if stream_copy(&mut dst, &src) {
            assert_eq!(&dst[..], &src[..]);
        } else {
            println!("SKIPPED: no non-temporal vector stores on this CPU");
        }
    }

    #[test]
    fn the_probes_give_finite_positive_rates() {
        for threads in [1, 2] {
            let c = copy_seconds(1 << 20, threads);
            assert!(c.is_finite() && c > 0.0, "copy on {threads}: {c}");
            let f = fma_peak(threads);
            // Any CPU of this century does more than 10 Mflop/s, none 10 Tflop/s per core.
            assert!(
                f > 1e7 && f < 1e13 * threads as f64,
                "FMA on {threads}: {f}"
            );
        }
    }
}
