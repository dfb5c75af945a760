//! Shared helpers of the MPI tests: a serial reference FFT and block comparisons.
#![allow(dead_code)]

mod naive;

use fft_core::R2rKind;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redist::Layout;
use rustfft::{FftDirection, FftPlanner};

/// The same pseudo-random global array on every rank (C order).
pub fn random_global(shape: &[usize], seed: u64) -> Vec<Complex<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n: usize = shape.iter().product();
    (0..n)
        .map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
        .collect()
}

/// Serial d-dimensional DFT of a C-order array, one axis at a time (no distribution involved).
pub fn serial_fft(
    data: &[Complex<f64>],
    shape: &[usize],
    direction: FftDirection,
) -> Vec<Complex<f64>> {
    let mut out = data.to_vec();
    let mut planner = FftPlanner::new();
    for axis in 0..shape.len() {
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        let fft = planner.plan_fft(n, direction);
        let mut line = vec![Complex::default(); n];
        for o in 0..outer {
            for c in 0..inner {
                for i in 0..n {
                    line[i] = out[(o * n + i) * inner + c];
                }
                fft.process(&mut line);
                for i in 0..n {
                    out[(o * n + i) * inner + c] = line[i];
                }
            }
        }
    }
    out
}

/// Direct O(N²) DFT, to validate `serial_fft` itself on small arrays.
pub fn naive_dft(data: &[Complex<f64>], shape: &[usize], sign: f64) -> Vec<Complex<f64>> {
    let n: usize = shape.iter().product();
    let unravel = |mut lin: usize| {
        let mut idx = vec![0; shape.len()];
        for (i, &s) in idx.iter_mut().zip(shape).rev() {
            *i = lin % s;
            lin /= s;
        }
        idx
    };
    (0..n)
        .map(|k| {
            let kk = unravel(k);
            let mut acc = Complex::new(0.0, 0.0);
            for (j, x) in data.iter().enumerate() {
                let jj = unravel(j);
                let phase: f64 = kk
                    .iter()
                    .zip(&jj)
                    .zip(shape)
                    .map(|((&a, &b), &s)| (a * b % s) as f64 / s as f64)
                    .sum();
                acc += x * Complex::from_polar(1.0, sign * 2.0 * std::f64::consts::PI * phase);
            }
            acc
        })
        .collect()
}

/// This rank's blocks of `fields` global C-order arrays stored one after another in
/// `global`, each in the layout's memory order, one after another (a batched plan's input).
pub fn local_fields<T: Copy + Default>(
    global: &[T],
    fields: usize,
    layout: &Layout,
    rank: usize,
) -> Vec<T> {
    let field = global.len() / fields;
    global
        .chunks(field)
        .flat_map(|f| local_block(f, layout, rank))
        .collect()
}

/// Asserts that the norms of this rank's spectrum values, `total`, summed over the ranks of
/// `world`, are `n`: the transform of all ones is `n` at the zero mode and zero elsewhere.
pub fn assert_ones_spectrum(world: &impl mpi::topology::Communicator, total: f64, n: usize) {
    let mut all = 0.0;
    mpi::collective::CommunicatorCollectives::all_reduce_into(
        world,
        &total,
        &mut all,
        mpi::collective::SystemOperation::sum(),
    );
    let n = n as f64;
    assert!((all - n).abs() < 1e-9 * n, "spectrum of ones sums to {all}");
}

/// This rank's block of a global C-order array, in the layout's memory order.
pub fn local_block<T: Copy + Default>(global: &[T], layout: &Layout, rank: usize) -> Vec<T> {
    let shape = layout.global_shape();
    let ranges = layout.global_ranges(rank);
    let strides = layout.local_strides(rank);
    let mut out = vec![T::default(); layout.local_len(rank)];
    let total = out.len();
    for mut lin in 0..total {
        let (mut off, mut g) = (0, 0);
        let mut idx = vec![0; shape.len()];
        for k in (0..shape.len()).rev() {
            idx[k] = lin % ranges[k].len();
            lin /= ranges[k].len();
        }
        for k in 0..shape.len() {
            off += idx[k] * strides[k];
            g = g * shape[k] + ranges[k].start + idx[k];
        }
        out[off] = global[g];
    }
    out
}

/// max |a − b| / max |reference| (0 when both are empty).
pub fn relative_error(got: &[Complex<f64>], reference: &[Complex<f64>], scale: f64) -> f64 {
    assert_eq!(got.len(), reference.len());
    let diff = got
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    diff / scale.max(f64::MIN_POSITIVE)
}

/// max |x| over a global array.
pub fn max_norm(data: &[Complex<f64>]) -> f64 {
    data.iter().map(|x| x.norm()).fold(0.0, f64::max)
}

/// The same pseudo-random real global array on every rank (C order).
pub fn random_real(shape: &[usize], seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n: usize = shape.iter().product();
    (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()
}

/// numpy's `rfftn`: the serial complex FFT of real data, last axis cut to `n/2 + 1`.
pub fn serial_rfft(data: &[f64], shape: &[usize]) -> Vec<Complex<f64>> {
    let complex: Vec<Complex<f64>> = data.iter().map(|&x| Complex::new(x, 0.0)).collect();
    let full = serial_fft(&complex, shape, FftDirection::Forward);
    let d = shape.len();
    let (n, h) = (shape[d - 1], shape[d - 1] / 2 + 1);
    full.chunks(n).flat_map(|line| line[..h].to_vec()).collect()
}

/// Applies `f` to every line along `axis` of a C-order array of `shape` (returns the new
/// array; `f` maps a line to a line of possibly another length, given by `out_len`).
pub fn along_axis(
    data: &[Complex<f64>],
    shape: &[usize],
    axis: usize,
    out_len: usize,
    f: impl Fn(&[Complex<f64>]) -> Vec<Complex<f64>>,
) -> Vec<Complex<f64>> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = vec![Complex::default(); outer * out_len * inner];
    let mut line = vec![Complex::default(); n];
    for o in 0..outer {
        for c in 0..inner {
            for i in 0..n {
                line[i] = data[(o * n + i) * inner + c];
            }
            let y = f(&line);
            assert_eq!(y.len(), out_len);
            for (i, v) in y.into_iter().enumerate() {
                out[(o * out_len + i) * inner + c] = v;
            }
        }
    }
    out
}

/// The 1-D naive DFT of a line (sign −1 forward).
pub fn naive_dft_line(x: &[Complex<f64>], sign: f64) -> Vec<Complex<f64>> {
    naive::naive_dft(x, sign)
}

/// The naive O(N²) real-to-real transforms of the contract table (FFTW's REDFT/RODFT and
/// halfcomplex kinds), by name (`dct1`..`dst4`, `r2hc`, `hc2r`, `dht`), on a line of complex
/// values (real coefficients: re and im alike).
pub fn naive_r2r(kind: &str, x: &[Complex<f64>]) -> Vec<Complex<f64>> {
    let kind: R2rKind = kind.parse().expect("an r2r kind");
    let part =
        |f: fn(&Complex<f64>) -> f64| naive::naive_r2r(kind, &x.iter().map(f).collect::<Vec<_>>());
    let (re, im) = (part(|v| v.re), part(|v| v.im));
    re.into_iter()
        .zip(im)
        .map(|(re, im)| Complex::new(re, im))
        .collect()
}

/// max |a − b| / scale, with NaN counted as infinitely wrong.
pub fn error_vs(got: &[Complex<f64>], reference: &[Complex<f64>], scale: f64) -> f64 {
    assert_eq!(got.len(), reference.len());
    let mut worst = 0.0f64;
    for (a, b) in got.iter().zip(reference) {
        let e = (a - b).norm();
        if !e.is_finite() {
            return f64::INFINITY;
        }
        worst = worst.max(e);
    }
    worst / scale.max(f64::MIN_POSITIVE)
}

/// Real values as complex ones.
pub fn complexify(x: &[f64]) -> Vec<Complex<f64>> {
    x.iter().map(|&v| Complex::new(v, 0.0)).collect()
}

/// The balanced grid of rank `r` for `ranks` processes.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn balanced(ranks: usize, r: usize) -> Vec<usize> {
    redist::GridShape::balanced(ranks, r)
        .unwrap()
        .dims()
        .to_vec()
}

/// Grids to try for `ranks` processes and a d-dimensional array: every factorization for
/// r ≤ 2, the balanced one for higher r.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn grids(ranks: usize, d: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for r in 1..d {
        if r <= 2 {
            out.extend(redist::grid::factorizations(ranks, r));
        } else {
            out.push(balanced(ranks, r));
        }
    }
    out
}
