//! Every 1-D transform the kernels run (c2c forward and backward as contiguous and strided
//! sweeps, r2c, c2r, and the eleven real-to-real kinds on real and complex lines), for every
//! length 1..=300 (and c2c 384) along one axis, against naive O(n²) sums evaluated in `f64`.
//! Each call's scratch is filled with NaN first, so a kernel that reads scratch it never
//! wrote fails.
//! Pure: no MPI.

use super::{LineOp, LineStep, R2r, Sweep};
use crate::options::R2rKind;
use crate::real::Real;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redist::alloc::AlignedBuf;

// The naive references, shared with the integration tests.
#[path = "../../tests/common/naive.rs"]
pub(super) mod naive;
use naive::{naive_c2r, naive_dft, naive_r2r};

const LENGTHS: std::ops::RangeInclusive<usize> = 1..=300;

/// Lines per block: contiguous lines `[CONTIGUOUS, n]`, strided ones `[1, n, STRIDED]` (not a
/// multiple of the 4-wide vectors and tiles, so partial blocks run too).
const CONTIGUOUS: usize = 2;
const STRIDED: usize = 5;

/// The allowed error relative to the reference's largest magnitude: a few ulps times
/// log2 n (an FFT's error growth), so a 1e-11 error fails at every length here.
fn tolerance<T: Real>(n: usize) -> f64 {
    let eps = T::epsilon().to_f64().unwrap();
    let log = (n as f64).log2().max(1.0);
    if eps < 1e-10 {
        1e-14 * log
    } else {
        // f32: ~8 ulps per level.
        1e-6 * log
    }
}

/// Lines of `n` pseudo-random values in [-1, 1).
fn random_lines(lines: usize, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..lines)
        .map(|_| (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect())
        .collect()
}

/// Two worker scratch buffers of `len` elements, every scalar NaN.
fn dirty_workers<T: Real>(len: usize) -> Vec<AlignedBuf<Complex<T>>> {
    let nan = Complex::new(T::nan(), T::nan());
    (0..2)
        .map(|_| {
            let mut w = AlignedBuf::new(len);
            w.fill(nan);
            w
        })
        .collect()
}

/// Lines of scalars laid out as `[outer, n, inner]` (line `l` = `(o, c)` with
/// `l = o · inner + c`), `c` scalars per element.
fn lay_out<T: Real>(lines: &[Vec<f64>], inner: usize, c: usize) -> Vec<T> {
    let n = lines[0].len() / c;
    let outer = lines.len() / inner;
    let mut out = vec![T::zero(); lines.len() * n * c];
    for o in 0..outer {
        for i in 0..inner {
            let line = &lines[o * inner + i];
            for j in 0..n {
                for s in 0..c {
                    out[((o * n + j) * inner + i) * c + s] = T::of(line[j * c + s]);
                }
            }
        }
    }
    out
}

/// The inverse of [`lay_out`] for lines of `n` elements.
fn lines_of<T: Real>(block: &[T], lines: usize, n: usize, inner: usize, c: usize) -> Vec<Vec<f64>> {
    let outer = lines / inner;
    let mut out = vec![vec![0.0; n * c]; lines];
    for o in 0..outer {
        for i in 0..inner {
            for j in 0..n {
                for s in 0..c {
                    out[o * inner + i][j * c + s] =
                        block[((o * n + j) * inner + i) * c + s].to_f64().unwrap();
                }
            }
        }
    }
    out
}

/// max |got − want| / max |want| over all lines (NaN or infinity: infinite).
fn error(got: &[Vec<f64>], want: &[Vec<f64>]) -> f64 {
    let scale = want
        .iter()
        .flatten()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let mut worst = 0.0f64;
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len());
        for (a, b) in g.iter().zip(w) {
            let e = (a - b).abs();
            if !e.is_finite() {
                return f64::INFINITY;
            }
            worst = worst.max(e);
        }
    }
    worst / scale
}

fn as_complex(line: &[f64]) -> Vec<Complex<f64>> {
    line.chunks(2).map(|p| Complex::new(p[0], p[1])).collect()
}

fn as_scalars(line: &[Complex<f64>]) -> Vec<f64> {
    line.iter().flat_map(|c| [c.re, c.im]).collect()
}

/// Runs `step` out of place on `lines` laid out with `inner` lines side by side, NaN scratch.
fn run_line_step<T: Real>(
    step: &LineStep<T>,
    lines: &[Vec<f64>],
    inner: usize,
    (c_in, c_out, n_out): (usize, usize, usize),
) -> Vec<Vec<f64>> {
    let input = lay_out::<T>(lines, inner, c_in);
    let mut output = vec![T::nan(); lines.len() * n_out * c_out];
    let mut workers = dirty_workers::<T>(step.scratch_len());
    step.run(&mut output, Some(&input), T::one(), &mut workers);
    lines_of(&output, lines.len(), n_out, inner, c_out)
}

/// What one case checks: its name, a line length, and the error against its tolerance.
fn check<T: Real>(what: &str, n: usize, got: &[Vec<f64>], want: &[Vec<f64>]) {
    let err = error(got, want);
    let tol = tolerance::<T>(n);
    assert!(
        err <= tol,
        "{what} ({}), length {n}: error {err:e} > {tol:e}",
        std::any::type_name::<T>()
    );
}

/// c2c forward and backward as sweeps (contiguous lines, and strided ones: tiles, or column
/// FFTs where the length has one), in and out of place.
fn c2c_sweeps<T: Real>() {
    let mut planner = rustfft::FftPlanner::<T>::new();
    // 384: the longest column FFT.
    for n in LENGTHS.chain([384]) {
        for (inverse, sign) in [(false, -1.0), (true, 1.0)] {
            let direction = if inverse {
                rustfft::FftDirection::Inverse
            } else {
                rustfft::FftDirection::Forward
            };
            // As lowering plans it: the AVX-512 row FFT where it applies.
            let fft = super::row::plan_fft(&mut planner, n, direction);
            for (outer, inner) in [(CONTIGUOUS, 1), (1, STRIDED)] {
                let lines = random_lines(outer * inner, 2 * n, n as u64);
                let want: Vec<Vec<f64>> = lines
                    .iter()
                    .map(|l| as_scalars(&naive_dft(&as_complex(l), sign)))
                    .collect();
                let sweep = Sweep::new(fft.clone(), &[outer, n, inner], 1);
                let data = lay_out::<T>(&lines, inner, 2);
                let to_complex = |v: &[T]| -> Vec<Complex<T>> {
                    v.chunks(2).map(|p| Complex::new(p[0], p[1])).collect()
                };
                let to_scalars =
                    |v: &[Complex<T>]| -> Vec<T> { v.iter().flat_map(|c| [c.re, c.im]).collect() };
                let what = format!("c2c inverse={inverse} [{outer}, n, {inner}]");
                // Out of place.
                let input = to_complex(&data);
                let mut out = vec![Complex::new(T::nan(), T::nan()); input.len()];
                let mut workers = dirty_workers::<T>(sweep.scratch_len());
                sweep.run(&mut out, Some(&input), T::one(), &mut workers);
                let got = lines_of(&to_scalars(&out), lines.len(), n, inner, 2);
                check::<T>(&format!("{what} out of place"), n, &got, &want);
                // In place.
                let mut inplace = input.clone();
                let mut workers = dirty_workers::<T>(sweep.scratch_len());
                sweep.run(&mut inplace, None, T::one(), &mut workers);
                let got = lines_of(&to_scalars(&inplace), lines.len(), n, inner, 2);
                check::<T>(&format!("{what} in place"), n, &got, &want);
            }
        }
    }
}

/// r2c and c2r line steps (as planned: [`super::split::plan_r2c`], realfft) on contiguous
/// and strided lines.
fn real_complex_lines<T: Real>() {
    let mut reals = realfft::RealFftPlanner::<T>::new();
    let mut ffts = rustfft::FftPlanner::<T>::new();
    for n in LENGTHS {
        let h = n / 2 + 1;
        for (outer, inner) in [(CONTIGUOUS, 1), (1, STRIDED)] {
            let lines = random_lines(outer * inner, n, 7 * n as u64);
            // r2c: real [outer, n, inner] → complex [outer, h, inner].
            let r2c = LineStep::new(
                LineOp::R2c(super::split::plan_r2c(&mut reals, &mut ffts, n)),
                &[outer, n, inner],
                1,
                h,
                true,
                false,
                n,
            );
            let got = run_line_step(&r2c, &lines, inner, (1, 2, h));
            let want: Vec<Vec<f64>> = lines
                .iter()
                .map(|l| {
                    let x: Vec<Complex<f64>> = l.iter().map(|&v| Complex::new(v, 0.0)).collect();
                    as_scalars(&naive_dft(&x, -1.0)[..h])
                })
                .collect();
            check::<T>(&format!("r2c [{outer}, n, {inner}]"), n, &got, &want);

            // c2r: complex half spectra [outer, h, inner] → real [outer, n, inner].
            let spectra = random_lines(outer * inner, 2 * h, 11 * n as u64);
            let c2r = LineStep::new(
                LineOp::C2r(super::split::plan_c2r(&mut reals, &mut ffts, n)),
                &[outer, h, inner],
                1,
                n,
                false,
                true,
                n,
            );
            let got = run_line_step(&c2r, &spectra, inner, (2, 1, n));
            let want: Vec<Vec<f64>> = spectra
                .iter()
                .map(|s| naive_c2r(&as_complex(s), n))
                .collect();
            check::<T>(&format!("c2r [{outer}, n, {inner}]"), n, &got, &want);
        }
    }
}

/// The eleven real-to-real kinds on real lines and on complex ones (real and imaginary parts
/// transformed alike), contiguous and strided, in both precisions against one reference.
fn r2r_lines() {
    let mut dcts64 = rustdct::DctPlanner::<f64>::new();
    let mut dcts32 = rustdct::DctPlanner::<f32>::new();
    let mut reals64 = realfft::RealFftPlanner::<f64>::new();
    let mut reals32 = realfft::RealFftPlanner::<f32>::new();
    for kind in R2rKind::ALL {
        for n in LENGTHS {
            if kind == R2rKind::Dct1 && n < 2 {
                continue;
            }
            // Complex lines take the gather path's other element size; fewer of them.
            for (outer, inner, c) in [(2, 1, 1), (1, STRIDED, 1), (1, 1, 2), (1, 3, 2)] {
                let lines = random_lines(outer * inner, c * n, (13 * n + c) as u64);
                let want: Vec<Vec<f64>> = lines
                    .iter()
                    .map(|l| {
                        let parts: Vec<Vec<f64>> = (0..c)
                            .map(|s| {
                                let x: Vec<f64> = (0..n).map(|j| l[j * c + s]).collect();
                                naive_r2r(kind, &x)
                            })
                            .collect();
                        (0..n * c).map(|i| parts[i % c][i / c]).collect()
                    })
                    .collect();
                let what = format!("{kind:?} [{outer}, n, {inner}] scalars per element {c}");
                let shape = [outer, n, inner];
                let step = LineStep::new(
                    LineOp::R2r(R2r::new(&mut dcts64, &mut reals64, kind, n)),
                    &shape,
                    1,
                    n,
                    c == 1,
                    c == 1,
                    n,
                );
                let got = run_line_step(&step, &lines, inner, (c, c, n));
                check::<f64>(&what, n, &got, &want);
                let step = LineStep::new(
                    LineOp::R2r(R2r::new(&mut dcts32, &mut reals32, kind, n)),
                    &shape,
                    1,
                    n,
                    c == 1,
                    c == 1,
                    n,
                );
                let got = run_line_step(&step, &lines, inner, (c, c, n));
                check::<f32>(&what, n, &got, &want);
            }
        }
    }
}

#[test]
fn c2c_sweeps_match_the_naive_dft_at_every_length() {
    c2c_sweeps::<f64>();
    c2c_sweeps::<f32>();
}

#[test]
fn r2c_and_c2r_match_the_naive_dft_at_every_length() {
    real_complex_lines::<f64>();
    real_complex_lines::<f32>();
}

#[test]
fn real_to_real_kinds_match_the_naive_sums_at_every_length() {
    r2r_lines();
}

#[test]
fn the_naive_references_agree_with_each_other() {
    // The naive r2r sums against the DFT of the symmetric extension they stand for (DCT-II:
    // the even extension of length 4n with the samples at odd positions), and c2r against
    // the DFT of the full spectrum: the references cannot share a mistake with the kernels.
    for n in [1, 2, 5, 8, 13] {
        let x = &random_lines(1, n, n as u64)[0];
        let mut ext = vec![Complex::new(0.0, 0.0); 4 * n];
        for j in 0..n {
            ext[2 * j + 1] = Complex::new(x[j], 0.0);
            ext[4 * n - 2 * j - 1] = Complex::new(x[j], 0.0);
        }
        let dft = naive_dft(&ext, -1.0);
        let dct2 = naive_r2r(R2rKind::Dct2, x);
        for k in 0..n {
            assert!((dft[k].re - dct2[k]).abs() < 1e-12, "n {n} k {k}");
        }
        let h: Vec<Complex<f64>> = naive_dft(
            &x.iter().map(|&v| Complex::new(v, 0.0)).collect::<Vec<_>>(),
            -1.0,
        )[..n / 2 + 1]
            .to_vec();
        let back = naive_c2r(&h, n);
        for j in 0..n {
            assert!((back[j] - n as f64 * x[j]).abs() < 1e-12, "n {n} j {j}");
        }
        // R2HC and DHT from the DFT's modes; HC2R undoes R2HC up to n.
        let (hc, dht) = (naive_r2r(R2rKind::R2hc, x), naive_r2r(R2rKind::Dht, x));
        let full = naive_dft(
            &x.iter().map(|&v| Complex::new(v, 0.0)).collect::<Vec<_>>(),
            -1.0,
        );
        for k in 0..n {
            let slot = if 2 * k > n {
                full[n - k].im
            } else {
                full[k].re
            };
            assert!((hc[k] - slot).abs() < 1e-12, "r2hc n {n} k {k}");
            assert!(
                (dht[k] - (full[k].re - full[k].im)).abs() < 1e-12,
                "dht n {n} k {k}"
            );
        }
        let back = naive_r2r(R2rKind::Hc2r, &hc);
        for j in 0..n {
            assert!(
                (back[j] - n as f64 * x[j]).abs() < 1e-12,
                "hc2r n {n} j {j}"
            );
        }
    }
}
