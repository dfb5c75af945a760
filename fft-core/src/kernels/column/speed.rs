//! (Ignored) the column FFT's speed on planes of `n × n` complex `f64` whose rows lie `n`
//! elements apart (a power of two times 16 bytes, as in the plans' blocks: each pass's group
//! of rows maps to one L1 set) against rows padded by a cache line: in place on
//! digit-swapped rows ([`ColumnFft::run_direct`], the backward plane step) and from an input
//! through a staging block ([`ColumnFft::run`], the forward plane step), on one plane kept in
//! L2 and on planes streamed from memory one after another (as the plane steps run it; the
//! staged form there with its kernel for rows far apart, as a block's axis-0 step runs it).

use super::*;
use crate::kernels::column_task_lines;
use crate::kernels::tests::best;
use redist::alloc::AlignedBuf;
use rustfft::FftPlanner;

/// One way of running the column FFT over planes.
struct Bench<'a> {
    plan: &'a ColumnFft,
    n: usize,
    /// Elements between rows.
    pitch: usize,
    /// Columns per task.
    width: usize,
    staging: AlignedBuf<Complex<f64>>,
    /// The staged kernel for rows far apart (as on planes streamed from memory).
    far: bool,
}

impl Bench<'_> {
    /// Transforms plane `p`: in place in `out` on digit-swapped rows (`direct`), or from
    /// `input` into `out` through the staging block.
    fn plane(
        &mut self,
        input: *const Complex<f64>,
        out: *mut Complex<f64>,
        p: usize,
        direct: bool,
    ) {
        let (n, pitch) = (self.n, self.pitch);
        let mut rows_in = [std::ptr::null::<Complex<f64>>(); MAX_LEN];
        let mut rows_out = [std::ptr::null_mut::<Complex<f64>>(); MAX_LEN];
        for c0 in (0..n).step_by(self.width) {
            let cols = self.width.min(n - c0);
            let at = |i: usize| p * n * pitch + i * pitch + c0;
            for i in 0..n {
                rows_out[i] = out.wrapping_add(at(i));
                rows_in[i] = match direct {
                    true => out.wrapping_add(at(self.plan.swapped(i))).cast_const(),
                    false => input.wrapping_add(at(i)),
                };
            }
            let (rows_in, rows_out) = (&rows_in[..n], &rows_out[..n]);
            let scale = Some(1.0 / (n as f64).sqrt());
            // SAFETY: `n` rows of the plane, each valid for the task's columns: in place on
            // digit-swapped rows, or from the input's disjoint plane through a staging block
            // for `width` columns.
            unsafe {
                match direct {
                    true => self.plan.run_direct(rows_in, rows_out, cols, scale),
                    false => self.plan.run_staged(
                        self.far,
                        rows_in,
                        rows_out,
                        cols,
                        scale,
                        &mut self.staging,
                    ),
                }
            }
        }
    }
}

/// `cargo test --release -p fft-core --lib column_speed -- --ignored --nocapture`: µs per
/// plane, dense rows against padded ones, best of 30 calls on one plane (in L2) and of 3
/// sweeps over 64 MiB of planes (streamed), one thread; `COLUMN_SPEED_LENGTHS=384,256` picks
/// the lengths (default 128, 192, 256, 384).
#[test]
#[ignore]
fn column_speed() {
    if !available() {
        println!("skipped: no AVX-512F on this CPU");
        return;
    }
    let mut planner = FftPlanner::<f64>::new();
    let lengths: Vec<usize> = std::env::var("COLUMN_SPEED_LENGTHS")
        .map(|v| v.split(',').map(|n| n.parse().expect("a length")).collect())
        .unwrap_or_else(|_| vec![128, 192, 256, 384]);
    for n in lengths {
        let plan = ColumnFft::new(&*planner.plan_fft_inverse(n), 8).expect("a kernel");
        let width = column_task_lines(n, n);
        let planes = (64 << 20) / (n * n * 16);
        let mut results = Vec::new();
        for pitch in [n, n + LANES] {
            let mut input = AlignedBuf::<Complex<f64>>::new(planes * n * pitch);
            for (i, v) in input.iter_mut().enumerate() {
                *v = Complex::new((i % 7) as f64 - 3.0, (i % 5) as f64 - 2.0);
            }
            let mut output = AlignedBuf::<Complex<f64>>::new(input.len());
            output.copy_from_slice(&input);
            let (input, out) = (input.as_ptr(), output.as_mut_ptr());
            let staging = AlignedBuf::new(plan.staging_len(width));
            let mut bench = Bench {
                plan: &plan,
                n,
                pitch,
                width,
                staging,
                far: false,
            };
            let mut times = [0.0; 4];
            for (k, direct) in [true, false].into_iter().enumerate() {
                bench.far = false;
                times[k] = best(30, || bench.plane(input, out, 0, direct));
                bench.far = true;
                let all = best(3, || {
                    (0..planes).for_each(|p| bench.plane(input, out, p, direct))
                });
                times[2 + k] = all / planes as f64;
            }
            results.push(times);
        }
        let names = [
            "in L2, direct",
            "in L2, staged",
            "streamed, direct",
            "streamed, staged",
        ];
        for (k, name) in names.iter().enumerate() {
            let (dense, padded) = (results[0][k] * 1e6, results[1][k] * 1e6);
            // Gflop/s of the plane's n columns by the nominal 5 n log2 n flops each.
            let flops = (n * n) as f64 * 5.0 * (n as f64).log2();
            println!(
                "n {n} ({width} columns a task), {name:16}: rows {n} apart {dense:6.1} µs, \
                 {} apart {padded:6.1} µs: {:.2}; {:.1} / {:.1} Gflop/s",
                n + LANES,
                dense / padded,
                flops / dense / 1e3,
                flops / padded / 1e3
            );
        }
    }
}
