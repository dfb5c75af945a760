//! Synthetic inputs whose exact transforms every rank computes for its own block, with no
//! gather: the reference of `dfft run` when there is no `--input`.
//!
//! Every kind uses a seeded random handful of modes:
//!
//! * c2c: `x[n] = Σ_m a_m exp(2πi Σ_j k_{m,j} n_j / N_j)`, whose unnormalized forward
//!   transform is `X[k] = N · Σ_{m : k_m = k} a_m`, zero elsewhere;
//! * r2c: the real part of that sum, `Σ_m (a_m e^{iθ_m} + conj(a_m) e^{−iθ_m}) / 2`: the
//!   spectrum is `N a_m / 2` at `k_m` and `N conj(a_m) / 2` at `−k_m` (mod N), of which the half
//!   spectrum keeps the indices with last component `<= N_{d−1}/2`;
//! * c2r: that half spectrum as input; the output is `N` times the real part of the sum (the
//!   full spectrum it stands for is Hermitian by construction, so any c2r algorithm must
//!   give exactly this);
//! * r2r: `x[n] = Σ_m a_m Π_j φ_{t_j, k_{m,j}}(n_j)` with real `a_m`, where `φ_{t,k}` is the
//!   inverse kind of `t` applied to the unit vector `e_k` (closed form from the table of
//!   `fft_core::R2rKind`); as backward∘forward = forward∘backward = M·identity per axis (M the
//!   logical size), the forward output is `M · Σ_{m : k_m = k} a_m` with `M = Π_j M_j`.
//!
//! where `N` is the number of elements. The normalization's forward factor multiplies the
//! expected output. A partial transform (`--axes`) puts a unit sample `δ(n_j − k_{m,j})` on
//! each axis it leaves alone instead of a wave: those axes pass through unchanged, `N` and
//! `−k` count the transformed axes only, and the half spectrum is that of the last
//! transformed axis.

use crate::transform::Sample;
use fft_core::R2rKind;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redist::Layout;
use std::f64::consts::PI;

/// Random modes per field.
pub const MODES: usize = 8;

/// One factor of a separable term: a function of the global index along one axis.
#[derive(Debug, Clone, Copy, PartialEq)]
enum AxisFn {
    /// `exp(2πi k n / len)`.
    Wave { k: usize, len: usize },
    /// The inverse kind of `kind` applied to the unit vector `e_k` of length `len`, at `n`:
    /// `kind` maps it to `logical_size · e_k`.
    Basis { kind: R2rKind, k: usize, len: usize },
    /// The unit sample at `k` (an axis a partial transform leaves alone).
    Unit { k: usize },
}

impl AxisFn {
    fn at(self, n: usize) -> Complex<f64> {
        match self {
            AxisFn::Wave { k, len } => {
                // Reduce k·n mod len in integers first: exact phases for large n.
                let phase = ((k as u128 * n as u128) % len as u128) as f64 / len as f64;
                Complex::from_polar(1.0, 2.0 * PI * phase)
            }
            AxisFn::Basis { kind, k, len } => Complex::new(basis(kind, k, len, n), 0.0),
            AxisFn::Unit { k } => Complex::new(if n == k { 1.0 } else { 0.0 }, 0.0),
        }
    }
}

/// `φ_{t,k}(n)`: the inverse kind of `t` (DCT-I↔I, II↔III, IV↔IV, same for DST) applied to the
/// unit vector `e_k` of length `len`, at `n`, from the formulas of `fft_core::R2rKind`.
fn basis(t: R2rKind, k: usize, len: usize, n: usize) -> f64 {
    let (k, n, nn) = (k as f64, n as f64, len as f64);
    let sign = |n: f64| (-1.0f64).powi(n as i32 & 1);
    match t {
        // Inverse DCT-I: Y_n = x_0 + (-1)^n x_{N-1} + 2 Σ_{j=1}^{N-2} x_j cos(π j n/(N-1)).
        R2rKind::Dct1 if k == 0.0 => 1.0,
        R2rKind::Dct1 if k == nn - 1.0 => sign(n),
        R2rKind::Dct1 => 2.0 * (PI * k * n / (nn - 1.0)).cos(),
        // Inverse DCT-III: Y_n = x_0 + 2 Σ_{j>=1} x_j cos(π j (n+1/2) / N).
        R2rKind::Dct2 if k == 0.0 => 1.0,
        R2rKind::Dct2 => 2.0 * (PI * k * (n + 0.5) / nn).cos(),
        // Inverse DCT-II: Y_n = 2 Σ x_j cos(π (j+1/2) n / N).
        R2rKind::Dct3 => 2.0 * (PI * (k + 0.5) * n / nn).cos(),
        R2rKind::Dct4 => 2.0 * (PI * (k + 0.5) * (n + 0.5) / nn).cos(),
        R2rKind::Dst1 => 2.0 * (PI * (k + 1.0) * (n + 1.0) / (nn + 1.0)).sin(),
        // Inverse DST-III: Y_n = (-1)^n x_{N-1} + 2 Σ_{j=0}^{N-2} x_j sin(π (j+1)(n+1/2)/N).
        R2rKind::Dst2 if k == nn - 1.0 => sign(n),
        R2rKind::Dst2 => 2.0 * (PI * (k + 1.0) * (n + 0.5) / nn).sin(),
        // Inverse DST-II: Y_n = 2 Σ x_j sin(π (j+1/2)(n+1)/N).
        R2rKind::Dst3 => 2.0 * (PI * (k + 0.5) * (n + 1.0) / nn).sin(),
        R2rKind::Dst4 => 2.0 * (PI * (k + 0.5) * (n + 0.5) / nn).sin(),
        // HC2R of a unit slot: mode k's cosine (slot k ≤ N/2; twice it but at 0 and N/2),
        // or minus twice mode N − k's sine (slot k > N/2).
        R2rKind::R2hc if 2.0 * k > nn => -2.0 * (2.0 * PI * (nn - k) * n / nn).sin(),
        R2rKind::R2hc if k == 0.0 || 2.0 * k == nn => (2.0 * PI * k * n / nn).cos(),
        R2rKind::R2hc => 2.0 * (2.0 * PI * k * n / nn).cos(),
        // R2HC of a unit sample: slot n holds Re or Im of mode min(n, N − n).
        R2rKind::Hc2r if 2.0 * n > nn => -(2.0 * PI * k * (nn - n) / nn).sin(),
        R2rKind::Hc2r => (2.0 * PI * k * n / nn).cos(),
        R2rKind::Dht => (2.0 * PI * k * n / nn).cos() + (2.0 * PI * k * n / nn).sin(),
    }
}

/// `Σ_t c_t Π_j f_{t,j}(n_j)`, or its real part: a dense array given by a few separable
/// terms.
#[derive(Debug, Clone, Default)]
pub struct Separable {
    terms: Vec<(Complex<f64>, Vec<AxisFn>)>,
    /// Keep only the real part of the sum (half the work of adding the conjugate terms).
    real_part: bool,
}

impl Separable {
    /// Calls `f(offset, value)` for every element of `rank`'s block of `layout`.
    fn for_each(&self, layout: &Layout, rank: usize, mut f: impl FnMut(usize, Complex<f64>)) {
        let ranges = layout.global_ranges(rank);
        let strides = layout.local_strides(rank);
        // Per term and axis, the factor over the local range: products make the values.
        let tables: Vec<Vec<Vec<Complex<f64>>>> = self
            .terms
            .iter()
            .map(|(_, fns)| {
                ranges
                    .iter()
                    .zip(fns)
                    .map(|(r, func)| r.clone().map(|n| func.at(n)).collect())
                    .collect()
            })
            .collect();
        for_each_local(&ranges, &strides, |idx, off| {
            let mut v = Complex::new(0.0, 0.0);
            for ((c, _), table) in self.terms.iter().zip(&tables) {
                let mut p = *c;
                for (j, &i) in idx.iter().enumerate() {
                    p *= table[j][i];
                }
                v += p;
            }
            f(off, if self.real_part { v.re.into() } else { v });
        });
    }
}

/// `Σ_e v_e δ(n − n_e)`: an array that is zero except at a few global indices.
#[derive(Debug, Clone, Default)]
pub struct Sparse {
    entries: Vec<(Vec<usize>, Complex<f64>)>,
}

impl Sparse {
    /// The entries in `rank`'s block of `layout` as (local offset, value), sorted by offset,
    /// entries at the same index summed.
    fn local(&self, layout: &Layout, rank: usize) -> Vec<(usize, Complex<f64>)> {
        let ranges = layout.global_ranges(rank);
        let strides = layout.local_strides(rank);
        let mut out: Vec<(usize, Complex<f64>)> = self
            .entries
            .iter()
            .filter(|(idx, _)| idx.iter().zip(&ranges).all(|(i, r)| r.contains(i)))
            .map(|(idx, v)| {
                let off = idx
                    .iter()
                    .zip(&ranges)
                    .zip(&strides)
                    .map(|((i, r), s)| (i - r.start) * s)
                    .sum();
                (off, *v)
            })
            .collect();
        out.sort_by_key(|e| e.0);
        out.dedup_by(|later, first| {
            if later.0 == first.0 {
                first.1 += later.1;
                true
            } else {
                false
            }
        });
        out
    }
}

/// A field given either way.
#[derive(Debug, Clone)]
pub enum Field {
    /// Dense, separable.
    Dense(Separable),
    /// Sparse.
    Sparse(Sparse),
}

impl Field {
    /// Writes `rank`'s block of `layout` into `out` (in the layout's memory order).
    pub fn fill<S: Sample>(&self, layout: &Layout, rank: usize, out: &mut [S]) {
        match self {
            Field::Dense(d) => d.for_each(layout, rank, |off, v| out[off] = S::from_c64(v)),
            Field::Sparse(s) => {
                out.fill(S::default());
                for (off, v) in s.local(layout, rank) {
                    out[off] = S::from_c64(v);
                }
            }
        }
    }

    /// max |got − this| over `rank`'s block of `layout`; NaN if any difference is NaN.
    pub fn max_error<S: Sample>(&self, layout: &Layout, rank: usize, got: &[S]) -> f64 {
        let mut err: f64 = 0.0;
        let mut keep = |e: f64| {
            if err.is_nan() || e.is_nan() {
                err = f64::NAN;
            } else {
                err = err.max(e);
            }
        };
        match self {
            Field::Dense(d) => {
                d.for_each(layout, rank, |off, v| keep((got[off].to_c64() - v).norm()))
            }
            Field::Sparse(s) => {
                let local = s.local(layout, rank);
                let mut next = local.iter().peekable();
                for (off, g) in got.iter().enumerate() {
                    let want = match next.peek() {
                        Some((o, v)) if *o == off => {
                            next.next();
                            *v
                        }
                        _ => Complex::new(0.0, 0.0),
                    };
                    keep((g.to_c64() - want).norm());
                }
            }
        }
        err
    }
}

/// One field's synthetic input, its exact forward output and the output's magnitude (errors
/// are divided by it).
#[derive(Debug, Clone)]
pub struct Reference {
    /// Forward input.
    pub input: Field,
    /// Exact forward output, normalization included.
    pub output: Field,
    /// A bound on the output's largest value: errors are relative to it.
    pub magnitude: f64,
}

/// `count` random modes for `shape` from `seed`: wave vectors `k` (one index per axis) and
/// complex amplitudes in the unit square.
fn random_modes(shape: &[usize], count: usize, seed: u64) -> Vec<(Vec<usize>, Complex<f64>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let k = shape.iter().map(|&n| rng.gen_range(0..n)).collect();
            let a = Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
            (k, a)
        })
        .collect()
}

fn max_amplitude(modes: &[(Vec<usize>, Complex<f64>)]) -> f64 {
    modes.iter().map(|(_, a)| a.norm()).fold(0.0, f64::max)
}

/// Which axes a transform transforms (`None`: all) and the product of their lengths.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a>(pub Option<&'a [bool]>);

impl Axes<'_> {
    fn on(&self, axis: usize) -> bool {
        self.0.is_none_or(|t| t[axis])
    }

    /// The product of the transformed axes' lengths.
    fn size(&self, shape: &[usize]) -> f64 {
        (0..shape.len())
            .filter(|&j| self.on(j))
            .map(|j| shape[j] as f64)
            .product()
    }

    /// The last transformed axis (the one a real-to-complex transform halves).
    fn last(&self, shape: &[usize]) -> usize {
        (0..shape.len()).rev().find(|&j| self.on(j)).unwrap_or(0)
    }
}

/// `−k` modulo the shape along the transformed axes, per axis.
fn negate(k: &[usize], shape: &[usize], axes: Axes) -> Vec<usize> {
    (k.iter().zip(shape).enumerate())
        .map(|(j, (&k, &n))| if axes.on(j) { (n - k) % n } else { k })
        .collect()
}

fn waves(k: &[usize], shape: &[usize], axes: Axes) -> Vec<AxisFn> {
    (k.iter().zip(shape).enumerate())
        .map(|(j, (&k, &len))| {
            if axes.on(j) {
                AxisFn::Wave { k, len }
            } else {
                AxisFn::Unit { k }
            }
        })
        .collect()
}

/// The modes of the real part of a sum of plane waves: `a/2` at `k`, `conj(a)/2` at `−k`.
fn real_part_modes(
    modes: &[(Vec<usize>, Complex<f64>)],
    shape: &[usize],
    axes: Axes,
) -> Vec<(Vec<usize>, Complex<f64>)> {
    modes
        .iter()
        .flat_map(|(k, a)| {
            [
                (k.clone(), a / 2.0),
                (negate(k, shape, axes), a.conj() / 2.0),
            ]
        })
        .collect()
}

/// The modes whose index lies in the half spectrum (last transformed component `<= n/2`).
fn in_half_spectrum(
    modes: Vec<(Vec<usize>, Complex<f64>)>,
    shape: &[usize],
    axes: Axes,
) -> Vec<(Vec<usize>, Complex<f64>)> {
    let last = axes.last(shape);
    let half = shape[last] / 2;
    modes.into_iter().filter(|(k, _)| k[last] <= half).collect()
}

impl Reference {
    /// c2c of the axes `axes`: plane waves in, their amplitudes times `N · forward_scale` out.
    pub fn c2c(shape: &[usize], axes: Axes, seed: u64, forward_scale: f64) -> Self {
        let n = axes.size(shape);
        let modes = random_modes(shape, MODES, seed);
        let scale = n * forward_scale;
        Reference {
            input: Field::Dense(Separable {
                terms: modes
                    .iter()
                    .map(|(k, a)| (*a, waves(k, shape, axes)))
                    .collect(),
                real_part: false,
            }),
            output: Field::Sparse(Sparse {
                entries: modes.iter().map(|(k, a)| (k.clone(), a * scale)).collect(),
            }),
            magnitude: scale * max_amplitude(&modes),
        }
    }

    /// c2c of a distributed 1-D transform of `n` points, whose layouts hold the axis as a
    /// `rows × n/rows` matrix (`x[j]` at `(j / cols, j % cols)`, `X[k]` at
    /// `(k % rows, k / rows)`): plane waves `exp(2πi k j/n) = exp(2πi k j0/rows) · exp(2πi k
    /// j1/n)` in, their amplitudes times `n · forward_scale` out.
    pub fn c2c_1d(n: usize, rows: usize, seed: u64, forward_scale: f64) -> Self {
        let modes = random_modes(&[n], MODES, seed);
        let scale = n as f64 * forward_scale;
        let matrix = |k: usize| {
            vec![
                AxisFn::Wave {
                    k: k % rows,
                    len: rows,
                },
                AxisFn::Wave { k, len: n },
            ]
        };
        Reference {
            input: Field::Dense(Separable {
                terms: modes.iter().map(|(k, a)| (*a, matrix(k[0]))).collect(),
                real_part: false,
            }),
            output: Field::Sparse(Sparse {
                entries: (modes.iter())
                    .map(|(k, a)| (vec![k[0] % rows, k[0] / rows], a * scale))
                    .collect(),
            }),
            magnitude: scale * max_amplitude(&modes),
        }
    }

    /// r2c of the axes `axes`: the real part of plane waves in, its half spectrum times
    /// `forward_scale` out.
    pub fn r2c(shape: &[usize], axes: Axes, seed: u64, forward_scale: f64) -> Self {
        let n = axes.size(shape);
        let modes = random_modes(shape, MODES, seed);
        let real = real_part_modes(&modes, shape, axes);
        let scale = n * forward_scale;
        Reference {
            input: Field::Dense(Separable {
                terms: modes
                    .iter()
                    .map(|(k, a)| (*a, waves(k, shape, axes)))
                    .collect(),
                real_part: true,
            }),
            output: Field::Sparse(Sparse {
                entries: in_half_spectrum(real, shape, axes)
                    .into_iter()
                    .map(|(k, a)| (k, a * scale))
                    .collect(),
            }),
            magnitude: scale * max_amplitude(&modes),
        }
    }

    /// c2r: the (unnormalized) half spectrum of the r2c input in, that real input times
    /// `N · forward_scale` out (`forward_scale`: the factor of this run's forward, the
    /// plan's backward).
    pub fn c2r(shape: &[usize], axes: Axes, seed: u64, forward_scale: f64) -> Self {
        let n = axes.size(shape);
        let modes = random_modes(shape, MODES, seed);
        let real = real_part_modes(&modes, shape, axes);
        let scale = n * forward_scale;
        Reference {
            input: Field::Sparse(Sparse {
                entries: in_half_spectrum(real.clone(), shape, axes)
                    .into_iter()
                    .map(|(k, a)| (k, a * n))
                    .collect(),
            }),
            output: Field::Dense(Separable {
                terms: modes
                    .iter()
                    .map(|(k, a)| (a * scale, waves(k, shape, axes)))
                    .collect(),
                real_part: true,
            }),
            magnitude: scale * max_amplitude(&modes),
        }
    }

    /// r2r: products of basis functions in, one coefficient each times `M · forward_scale`
    /// out (`M` the product of the logical sizes).
    pub fn r2r(shape: &[usize], kinds: &[R2rKind], seed: u64, forward_scale: f64) -> Self {
        let m: f64 = kinds
            .iter()
            .zip(shape)
            .map(|(t, &n)| t.logical_size(n) as f64)
            .product();
        let modes: Vec<(Vec<usize>, Complex<f64>)> = random_modes(shape, MODES, seed)
            .into_iter()
            .map(|(k, a)| (k, Complex::new(a.re, 0.0)))
            .collect();
        let scale = m * forward_scale;
        let basis = |k: &[usize]| -> Vec<AxisFn> {
            k.iter()
                .zip(shape)
                .zip(kinds)
                .map(|((&k, &len), &kind)| AxisFn::Basis { kind, k, len })
                .collect()
        };
        Reference {
            input: Field::Dense(Separable {
                terms: modes.iter().map(|(k, a)| (*a, basis(k))).collect(),
                real_part: false,
            }),
            output: Field::Sparse(Sparse {
                entries: modes.iter().map(|(k, a)| (k.clone(), a * scale)).collect(),
            }),
            magnitude: scale * max_amplitude(&modes),
        }
    }
}

/// Calls `f(local index, offset)` for every element of a block with the given global ranges
/// and memory strides.
fn for_each_local(
    ranges: &[std::ops::Range<usize>],
    strides: &[usize],
    mut f: impl FnMut(&[usize], usize),
) {
    let d = ranges.len();
    if ranges.iter().any(|r| r.is_empty()) {
        return;
    }
    let mut idx = vec![0; d];
    loop {
        let off = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
        f(&idx, off);
        let mut k = d;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < ranges[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redist::{GridShape, Layout};

    /// The whole array on one process, C order.
    fn whole(shape: &[usize]) -> Layout {
        Layout::pencil(shape, GridShape::new(vec![1]).unwrap()).unwrap()
    }

    /// Naive DFT (sign −1) of a C-order array, every index.
    fn naive_dft(x: &[Complex<f64>], shape: &[usize]) -> Vec<Complex<f64>> {
        naive_dft_of(x, shape, &vec![true; shape.len()])
    }

    /// Naive DFT (sign −1) of a C-order array along the axes with `on[j]`, the others left
    /// alone (a sum over the whole array with a unit sample on those axes).
    fn naive_dft_of(x: &[Complex<f64>], shape: &[usize], on: &[bool]) -> Vec<Complex<f64>> {
        let unravel = |mut i: usize| -> Vec<usize> {
            let mut idx = vec![0; shape.len()];
            for j in (0..shape.len()).rev() {
                idx[j] = i % shape[j];
                i /= shape[j];
            }
            idx
        };
        (0..x.len())
            .map(|k| {
                let kk = unravel(k);
                x.iter()
                    .enumerate()
                    .filter(|(n, _)| {
                        let nn = unravel(*n);
                        (0..shape.len()).all(|j| on[j] || nn[j] == kk[j])
                    })
                    .map(|(n, v)| {
                        let nn = unravel(n);
                        let phase: f64 = (0..shape.len())
                            .filter(|&j| on[j])
                            .map(|j| (kk[j] * nn[j]) as f64 / shape[j] as f64)
                            .sum();
                        v * Complex::from_polar(1.0, -2.0 * PI * phase)
                    })
                    .sum()
            })
            .collect()
    }

    /// The c2c reference against a naive DFT of its input (one process holds everything).
    #[test]
    fn c2c_reference_is_the_naive_dft_of_its_input() {
        let shape = [5, 4, 3];
        let layout = whole(&shape);
        let r = Reference::c2c(&shape, Axes(None), 7, 1.0);
        let mut x = vec![Complex::<f64>::default(); 60];
        r.input.fill(&layout, 0, &mut x);
        let want = naive_dft(&x, &shape);
        let err = r.output.max_error(&layout, 0, &want) / r.magnitude;
        assert!(err < 1e-14, "{err:e}");
    }

    /// Partial transforms' references (`--axes`) against naive DFTs of their inputs along
    /// those axes only: c2c of axes 0 and 2, and r2c of axes 0 and 1 (the half axis 1).
    #[test]
    fn partial_references_are_naive_dfts_along_their_axes() {
        let shape = [5, 4, 3];
        let layout = whole(&shape);
        let on = [true, false, true];
        let r = Reference::c2c(&shape, Axes(Some(&on)), 7, 1.0);
        let mut x = vec![Complex::<f64>::default(); 60];
        r.input.fill(&layout, 0, &mut x);
        let want = naive_dft_of(&x, &shape, &on);
        let err = r.output.max_error(&layout, 0, &want) / r.magnitude;
        assert!(err < 1e-14, "{err:e}");
        let on = [true, true, false];
        let r = Reference::r2c(&shape, Axes(Some(&on)), 3, 1.0);
        let mut x = vec![0.0f64; 60];
        r.input.fill(&layout, 0, &mut x);
        let xc: Vec<Complex<f64>> = x.iter().map(|&v| Complex::new(v, 0.0)).collect();
        let full = naive_dft_of(&xc, &shape, &on);
        // The half spectrum of axis 1: indices 0..=2 of 4.
        let half = [5, 3, 3];
        let want: Vec<Complex<f64>> = (0..45)
            .map(|i| full[(i / 9) * 12 + ((i / 3) % 3) * 3 + i % 3])
            .collect();
        let err = r.output.max_error(&whole(&half), 0, &want) / r.magnitude;
        assert!(err < 1e-14, "{err:e}");
    }

    /// The 1-D reference in a `rows × cols` frame: its input read in C order is a line whose
    /// naive DFT, read in the ordered output's memory order (columns slowest), is the output.
    #[test]
    fn c2c_1d_reference_is_the_naive_dft_of_its_input() {
        for (n, rows) in [(12, 3), (7, 1), (60, 6)] {
            let cols = n / rows;
            let layout = whole(&[rows, cols]);
            let r = Reference::c2c_1d(n, rows, 5, 1.0);
            let mut x = vec![Complex::<f64>::default(); n];
            r.input.fill(&layout, 0, &mut x);
            let want = naive_dft(&x, &[n]);
            let ordered = layout
                .with_memory_order(fft_core::MemoryOrder::new(vec![1, 0]).unwrap())
                .unwrap();
            let err = r.output.max_error(&ordered, 0, &want) / r.magnitude;
            assert!(err < 1e-13, "n {n} rows {rows}: {err:e}");
        }
    }

    /// The r2c input is real and its half spectrum is the naive DFT's; the c2r reference is
    /// the same pair the other way round (its output N times the r2c input).
    #[test]
    fn r2c_and_c2r_references_are_the_naive_dft_pair() {
        for shape in [vec![5, 4, 6], vec![3, 7], vec![2, 2], vec![4, 1]] {
            let n: usize = shape.iter().product();
            let layout = whole(&shape);
            let mut half_shape = shape.clone();
            *half_shape.last_mut().unwrap() = shape[shape.len() - 1] / 2 + 1;
            let half = whole(&half_shape);
            let r = Reference::r2c(&shape, Axes(None), 11, 0.5);
            let mut x = vec![Complex::<f64>::default(); n];
            r.input.fill(&layout, 0, &mut x);
            assert!(
                x.iter().all(|v| v.im.abs() < 1e-13),
                "{shape:?}: real input"
            );
            let full = naive_dft(&x, &shape);
            let last = shape[shape.len() - 1];
            let want: Vec<Complex<f64>> = full
                .iter()
                .enumerate()
                .filter(|(i, _)| i % last <= last / 2)
                .map(|(_, v)| v * 0.5)
                .collect();
            let err = r.output.max_error(&half, 0, &want) / r.magnitude;
            assert!(err < 1e-14, "{shape:?}: r2c {err:e}");

            let c = Reference::c2r(&shape, Axes(None), 11, 0.25);
            let mut spectrum = vec![Complex::<f64>::default(); want.len()];
            c.input.fill(&half, 0, &mut spectrum);
            let e = spectrum
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b * 2.0).norm())
                .fold(0.0, f64::max);
            assert!(e < 1e-12, "{shape:?}: c2r input {e:e}");
            let scaled: Vec<Complex<f64>> = x.iter().map(|v| v * (n as f64 * 0.25)).collect();
            let e = c.output.max_error(&layout, 0, &scaled) / c.magnitude;
            assert!(e < 1e-14, "{shape:?}: c2r output {e:e}");
        }
    }

    /// The forward kinds of fft_core::R2rKind's table, naively.
    fn naive_r2r(t: R2rKind, x: &[f64]) -> Vec<f64> {
        let nn = x.len() as f64;
        let sign = |k: usize| (-1.0f64).powi(k as i32 & 1);
        (0..x.len())
            .map(|k| {
                let kf = k as f64;
                let sum = |f: &dyn Fn(f64) -> f64, range: std::ops::Range<usize>| -> f64 {
                    range.map(|n| 2.0 * x[n] * f(n as f64)).sum()
                };
                let last = x.len() - 1;
                match t {
                    R2rKind::Dct1 => {
                        x[0] + sign(k) * x[last]
                            + sum(&|n| (PI * n * kf / (nn - 1.0)).cos(), 1..last)
                    }
                    R2rKind::Dct2 => sum(&|n| (PI * (n + 0.5) * kf / nn).cos(), 0..x.len()),
                    R2rKind::Dct3 => x[0] + sum(&|n| (PI * n * (kf + 0.5) / nn).cos(), 1..x.len()),
                    R2rKind::Dct4 => sum(&|n| (PI * (n + 0.5) * (kf + 0.5) / nn).cos(), 0..x.len()),
                    R2rKind::Dst1 => sum(
                        &|n| (PI * (n + 1.0) * (kf + 1.0) / (nn + 1.0)).sin(),
                        0..x.len(),
                    ),
                    R2rKind::Dst2 => sum(&|n| (PI * (n + 0.5) * (kf + 1.0) / nn).sin(), 0..x.len()),
                    R2rKind::Dst3 => {
                        sign(k) * x[last]
                            + sum(&|n| (PI * (n + 1.0) * (kf + 0.5) / nn).sin(), 0..last)
                    }
                    R2rKind::Dst4 => sum(&|n| (PI * (n + 0.5) * (kf + 0.5) / nn).sin(), 0..x.len()),
                    // `sum` doubles: halve for the periodic kinds.
                    R2rKind::R2hc if 2 * k > x.len() => {
                        -0.5 * sum(&|n| (2.0 * PI * n * (nn - kf) / nn).sin(), 0..x.len())
                    }
                    R2rKind::R2hc => 0.5 * sum(&|n| (2.0 * PI * n * kf / nn).cos(), 0..x.len()),
                    R2rKind::Hc2r => (0..x.len())
                        .map(|m| {
                            let q = m.min(x.len() - m);
                            let im = if q == 0 || 2 * q == x.len() {
                                0.0
                            } else {
                                x[x.len() - q]
                            };
                            let im = if m == q { im } else { -im };
                            let angle = 2.0 * PI * (m * k) as f64 / nn;
                            x[q] * angle.cos() - im * angle.sin()
                        })
                        .sum(),
                    R2rKind::Dht => {
                        let cas = |n: f64| {
                            (2.0 * PI * n * kf / nn).cos() + (2.0 * PI * n * kf / nn).sin()
                        };
                        0.5 * sum(&cas, 0..x.len())
                    }
                }
            })
            .collect()
    }

    /// Every basis function maps to (logical size) times its unit vector under the naive
    /// forward kind: the closed forms agree with the table.
    #[test]
    fn r2r_basis_functions_map_to_one_coefficient() {
        for t in R2rKind::ALL {
            for len in [2, 5, 6] {
                let m = t.logical_size(len) as f64;
                for k in 0..len {
                    let x: Vec<f64> = (0..len).map(|n| basis(t, k, len, n)).collect();
                    let y = naive_r2r(t, &x);
                    for (j, v) in y.iter().enumerate() {
                        let want = if j == k { m } else { 0.0 };
                        assert!(
                            (v - want).abs() < 1e-12 * m,
                            "{t} N={len} k={k}: y[{j}]={v}"
                        );
                    }
                }
            }
        }
    }

    /// A 2-D r2r reference against the naive transform applied along both axes.
    #[test]
    fn r2r_reference_is_the_naive_transform_of_its_input() {
        let (shape, kinds) = ([5, 6], [R2rKind::Dst3, R2rKind::Dct1]);
        let layout = whole(&shape);
        let r = Reference::r2r(&shape, &kinds, 3, 1.0);
        let mut x = vec![0.0f64; 30];
        r.input.fill(&layout, 0, &mut x);
        let mut y = x.clone();
        for row in y.chunks_mut(6) {
            row.copy_from_slice(&naive_r2r(kinds[1], row));
        }
        for c in 0..6 {
            let col: Vec<f64> = (0..5).map(|i| y[i * 6 + c]).collect();
            for (i, v) in naive_r2r(kinds[0], &col).into_iter().enumerate() {
                y[i * 6 + c] = v;
            }
        }
        let err = r.output.max_error(&layout, 0, &y) / r.magnitude;
        assert!(err < 1e-13, "{err:e}");
    }
}
