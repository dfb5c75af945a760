//! [`RowFft`] against the naive DFT through each of the `Fft` trait's entry points, and
//! (ignored) its speed against rustfft's plan of the same length.

use super::*;
use crate::kernels::lengths::naive::naive_dft;
use crate::kernels::tests::best;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const LENGTHS: [usize; 4] = [128, 192, 256, 384];
/// Rows per call: a batch, so the kernel's step from row to row runs too.
const ROWS: usize = 3;

fn random(len: usize, seed: u64) -> Vec<Complex<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
        .collect()
}

/// The largest error of `got` against the naive DFT of each row of `x`, relative to the
/// reference's largest magnitude.
fn error(x: &[Complex<f64>], got: &[Complex<f64>], n: usize, sign: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for (row, out) in x.chunks(n).zip(got.chunks(n)) {
        let want = naive_dft(row, sign);
        let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let err = want
            .iter()
            .zip(out)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        worst = worst.max(err / scale);
    }
    worst
}

#[test]
fn rows_match_the_naive_dft() {
    if !avx512() {
        println!("skipped: no AVX-512F on this CPU, RowFft is never planned");
        return;
    }
    let nan = Complex::new(f64::NAN, f64::NAN);
    for n in LENGTHS {
        for direction in [FftDirection::Forward, FftDirection::Inverse] {
            let fft = RowFft::<f64>::new(n, direction).expect("a kernel of this length");
            let sign = if direction == FftDirection::Inverse {
                1.0
            } else {
                -1.0
            };
            let x = random(ROWS * n, n as u64);
            let tol = 1e-14 * (n as f64).log2();
            let what = |how: &str, err: f64| {
                assert!(
                    err < tol,
                    "{how} {n} {direction:?}: error {err:e} over {tol:e}"
                );
            };
            let mut scratch = vec![nan; fft.get_inplace_scratch_len()];
            let mut buffer = x.clone();
            fft.process_with_scratch(&mut buffer, &mut scratch);
            what("in place", error(&x, &buffer, n, sign));
            let (mut input, mut output) = (x.clone(), vec![nan; x.len()]);
            let mut scratch = vec![nan; fft.get_outofplace_scratch_len()];
            fft.process_outofplace_with_scratch(&mut input, &mut output, &mut scratch);
            what("out of place", error(&x, &output, n, sign));
            let mut output = vec![nan; x.len()];
            let mut scratch = vec![nan; fft.get_immutable_scratch_len()];
            fft.process_immutable_with_scratch(&x, &mut output, &mut scratch);
            what("immutable", error(&x, &output, n, sign));
        }
    }
}

#[test]
fn other_lengths_and_types_keep_rustfft() {
    assert!(RowFft::<f64>::new(250, FftDirection::Forward).is_none());
    assert!(RowFft::<f64>::new(512, FftDirection::Forward).is_none());
    assert!(RowFft::<f32>::new(256, FftDirection::Forward).is_none());
    let mut planner = FftPlanner::<f64>::new();
    let fft = plan_fft(&mut planner, 100, FftDirection::Inverse);
    assert_eq!(
        (fft.len(), fft.fft_direction()),
        (100, FftDirection::Inverse)
    );
}

/// A copy of `x` starting on a cache line, as the plans' buffers do.
fn aligned(x: &[Complex<f64>]) -> redist::alloc::AlignedBuf<Complex<f64>> {
    let mut buf = redist::alloc::AlignedBuf::new(x.len());
    buf.copy_from_slice(x);
    buf
}

/// `cargo test --release -p fft-core --lib row_speed -- --ignored --nocapture`: rows of
/// each length filling 1 MB (in L2), in place and out of place, both directions, this
/// kernel against rustfft's plan, best of 30 calls on one thread.
#[test]
#[ignore]
fn row_speed() {
    if !avx512() {
        println!("skipped: no AVX-512F on this CPU");
        return;
    }
    let mut planner = FftPlanner::<f64>::new();
    for n in LENGTHS {
        let rows = (1 << 20) / 16 / n;
        for direction in [FftDirection::Forward, FftDirection::Inverse] {
            let ours = RowFft::<f64>::new(n, direction).expect("a kernel");
            let theirs = planner.plan_fft(n, direction);
            let x = random(rows * n, 1);
            let time = |fft: &dyn Fft<f64>| {
                let (mut b, mut o) = (aligned(&x), aligned(&x));
                let (buffer, out) = (&mut b[..], &mut o[..]);
                let mut scratch = vec![Complex::default(); fft.get_inplace_scratch_len()];
                let inplace = best(30, || fft.process_with_scratch(buffer, &mut scratch));
                let mut scratch = vec![Complex::default(); fft.get_outofplace_scratch_len()];
                let outof = best(30, || {
                    fft.process_outofplace_with_scratch(buffer, out, &mut scratch)
                });
                (inplace, outof)
            };
            let (a, b) = (time(&ours), time(theirs.as_ref()));
            println!(
                "n {n:4} {direction:?} x{rows}: in place {:7.1} µs vs rustfft {:7.1} = {:.2}; \
                 out of place {:7.1} vs {:7.1} = {:.2}",
                a.0 * 1e6,
                b.0 * 1e6,
                a.0 / b.0,
                a.1 * 1e6,
                b.1 * 1e6,
                a.1 / b.1
            );
        }
    }
}
