//! Micro-benchmarks of the two kernels every transform is made of, so regressions show:
//! the strided box copy (pack/unpack with the fused local transpose) and the local FFT sweep
//! (contiguous and strided lines). `cargo bench -p benches --bench kernels`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fft_core::local::Sweep;
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::pack::{compact_strides, CopyPlan};
use rustfft::FftPlanner;

fn copy_kernels(c: &mut Criterion) {
    let n = 128;
    let shape = [n, n, n];
    let src: AlignedBuf<Complex<f64>> = AlignedBuf::new(n * n * n);
    let mut dst: AlignedBuf<Complex<f64>> = AlignedBuf::new(n * n * n);
    let src_strides = compact_strides(&shape, &[0, 1, 2]);
    let mut group = c.benchmark_group("copy 128^3 c128");
    group.throughput(Throughput::Bytes((2 * n * n * n * 16) as u64));
    group.sample_size(20);
    for order in [[0, 1, 2], [0, 2, 1], [1, 2, 0], [2, 0, 1]] {
        let plan = CopyPlan::new(&shape, &src_strides, &compact_strides(&shape, &order));
        group.bench_with_input(
            BenchmarkId::new("to order", format!("{order:?}")),
            &plan,
            |b, p| b.iter(|| p.run(&src, 0, &mut dst, 0)),
        );
    }
    // A pack: half of the last axis, as a 2-rank slab exchange sends it.
    let half = [n, n, n / 2];
    let pack = CopyPlan::new(&half, &src_strides, &compact_strides(&half, &[0, 1, 2]));
    group.bench_function("pack half rows", |b| {
        b.iter(|| pack.run(&src, n / 2, &mut dst, 0))
    });
    group.finish();
}

fn fft_sweeps(c: &mut Criterion) {
    let n = 128;
    let shape = [n, n, n];
    let mut data: AlignedBuf<Complex<f64>> = AlignedBuf::new(n * n * n);
    let fft = FftPlanner::<f64>::new().plan_fft_forward(n);
    let threads = rayon::current_num_threads();
    let mut group = c.benchmark_group("sweep 128^3 c128");
    group.throughput(Throughput::Elements((n * n * n) as u64));
    group.sample_size(20);
    for (name, position) in [
        ("contiguous (axis 2)", 2),
        ("strided (axis 1)", 1),
        ("strided (axis 0)", 0),
    ] {
        let sweep = Sweep::new(fft.clone(), &shape, position);
        let mut workers: Vec<AlignedBuf<Complex<f64>>> = (0..threads)
            .map(|_| AlignedBuf::new(sweep.scratch_len()))
            .collect();
        group.bench_function(name, |b| {
            b.iter(|| sweep.run(&mut data, None, 1.0, &mut workers))
        });
    }
    group.finish();
}

criterion_group!(kernels, copy_kernels, fft_sweeps);
criterion_main!(kernels);
