//! Times the strided copy kernel on a 3-D block: `cargo run --release --example copy_speed -- N`.
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::pack::{compact_strides, CopyPlan};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args().nth(1).map_or(256, |s| s.parse().unwrap());
    let shape = [n, n, n];
    let src: AlignedBuf<Complex<f64>> = AlignedBuf::new(n * n * n);
    let mut dst: AlignedBuf<Complex<f64>> = AlignedBuf::new(n * n * n);
    let ss = compact_strides(&shape, &[0, 1, 2]);
    for order in [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1]] {
        let ds = compact_strides(&shape, &order);
        let plan = CopyPlan::new(&shape, &ss, &ds);
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            plan.run(&src, 0, &mut dst, 0);
            best = best.min(t.elapsed().as_secs_f64());
        }
        let gbs = 2.0 * (n * n * n * 16) as f64 / best / 1e9;
        println!("{n}^3 c128 [0,1,2] -> {order:?}: {best:.4} s ({gbs:.1} GB/s read+write)");
    }
}
