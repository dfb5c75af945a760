//! Developer tool: CPU time (not wall time, so it holds up on a loaded machine) of the FFT
//! sweeps along each axis of a 3-D block, one thread. `cargo run --release -p fft-core
//! --example sweep_cpu -- 256 128 256`.
use fft_core::local::Sweep;
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use rustfft::FftPlanner;

fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let shape: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("axis length"))
        .collect();
    let shape = if shape.is_empty() {
        vec![128, 128, 128]
    } else {
        shape
    };
    let len: usize = shape.iter().product();
    // On huge pages and a cache line, as the plans' own blocks.
    let mut data: AlignedBuf<Complex<f64>> = AlignedBuf::new(len);
    data.fill(Complex::new(1.0, 0.5));
    let mut planner = FftPlanner::<f64>::new();
    for (position, &n) in shape.iter().enumerate() {
        let sweep = Sweep::new(planner.plan_fft_forward(n), &shape, position);
        let mut workers = [AlignedBuf::new(sweep.scratch_len())];
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = cpu_seconds();
            sweep.run(&mut data, None, 1.0, &mut workers);
            best = best.min(cpu_seconds() - t);
        }
        println!("{shape:?} axis {position}: {:.2} ms", best * 1e3);
    }
}
