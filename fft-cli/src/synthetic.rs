//! Synthetic inputs whose exact transforms every rank computes for its own block, with no
//! gather: the reference of `dfft run` when there is no `--input`.
//!
//! Every kind uses a seeded random handful of modes:
//!
//! * c2c: `x[n] = Σ_m a_m exp(2πi Σ_j k_{m,j} n_j / N_j)`, whose unnormalized forward
//!   transform is `X[k] = N · Σ_{m : k_m = k} a_m`, zero elsewhere;
//!
//! where `N` is the number of elements. The normalization's forward factor multiplies the
//! expected output.

use crate::transform::Sample;
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
}

impl AxisFn {
    fn at(self, n: usize) -> Complex<f64> {
        match self {
            AxisFn::Wave { k, len } => {
                // Reduce k·n mod len in integers first: exact phases for large n.
                let phase = ((k as u128 * n as u128) % len as u128) as f64 / len as f64;
                Complex::from_polar(1.0, 2.0 * PI * phase)
            }
        }
    }
}

/// `Σ_t c_t Π_j f_{t,j}(n_j)`: a dense array given by a few separable terms.
#[derive(Debug, Clone, Default)]
pub struct Separable {
    terms: Vec<(Complex<f64>, Vec<AxisFn>)>,
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
            f(off, v);
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

impl Reference {
    /// c2c: plane waves in, their amplitudes times `N · forward_scale` out.
    pub fn c2c(shape: &[usize], seed: u64, forward_scale: f64) -> Self {
        let n: usize = shape.iter().product();
        let modes = random_modes(shape, MODES, seed);
        let waves = |k: &[usize]| -> Vec<AxisFn> {
            k.iter()
                .zip(shape)
                .map(|(&k, &len)| AxisFn::Wave { k, len })
                .collect()
        };
        let scale = n as f64 * forward_scale;
        Reference {
            input: Field::Dense(Separable {
                terms: modes.iter().map(|(k, a)| (*a, waves(k))).collect(),
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

    /// The c2c reference against a naive DFT of its input (one process holds everything).
    #[test]
    fn c2c_reference_is_the_naive_dft_of_its_input() {
        let shape = [5, 4, 3];
        let layout = whole(&shape);
        let r = Reference::c2c(&shape, 7, 1.0);
        let mut x = vec![Complex::<f64>::default(); 60];
        r.input.fill(&layout, 0, &mut x);
        let mut want = vec![Complex::<f64>::default(); 60];
        for (k, w) in want.iter_mut().enumerate() {
            let kk = [k / 12, k / 3 % 4, k % 3];
            for (n, v) in x.iter().enumerate() {
                let nn = [n / 12, n / 3 % 4, n % 3];
                let phase: f64 = (0..3)
                    .map(|j| (kk[j] * nn[j]) as f64 / shape[j] as f64)
                    .sum();
                *w += v * Complex::from_polar(1.0, -2.0 * PI * phase);
            }
        }
        let err = r.output.max_error(&layout, 0, &want) / r.magnitude;
        assert!(err < 1e-14, "{err:e}");
    }
}
