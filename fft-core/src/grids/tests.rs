//! Every rank's grid of simulated spectral layouts against a brute-force reference.

use super::*;
use crate::stages::{pipeline_partial, Domain, TransformShape};
use redist::GridShape;

/// numpy's `fftfreq(n) · n`, spelled out.
fn fftfreq(n: usize) -> Vec<i64> {
    let mut k: Vec<i64> = (0..=(n as i64 - 1) / 2).collect();
    k.extend(-(n as i64 / 2)..0);
    k
}

/// The basis frequency offset of each real-to-real kind (the table of docs/spectral.md).
fn r2r_offset(kind: R2rKind) -> f64 {
    match kind {
        R2rKind::Dct1 => 0.0,
        R2rKind::Dct2 => 0.0,
        R2rKind::Dct3 => 0.5,
        R2rKind::Dct4 => 0.5,
        R2rKind::Dst1 => 1.0,
        R2rKind::Dst2 => 1.0,
        R2rKind::Dst3 => 0.5,
        R2rKind::Dst4 => 0.5,
        R2rKind::R2hc | R2rKind::Hc2r | R2rKind::Dht => unreachable!("periodic kinds"),
    }
}

/// (wavenumber for a box of `length`, kept by 2/3, is Nyquist, Hermitian weight) of global
/// index `g` along `axis`, computed without the code under test.
fn reference(axis: SpectralAxis, g: usize, length: f64) -> (f64, bool, bool, f64) {
    match axis {
        SpectralAxis::Fft { n } => {
            let k = fftfreq(n)[g];
            let scale = 2.0 * PI / length;
            let nyquist = n % 2 == 0 && k == -(n as i64) / 2;
            (
                scale * k as f64,
                (k.abs() as f64) < n as f64 / 3.0,
                nyquist,
                1.0,
            )
        }
        SpectralAxis::Half { n } => {
            let scale = 2.0 * PI / length;
            let nyquist = n % 2 == 0 && g == n / 2;
            let weight = if g == 0 || nyquist { 1.0 } else { 2.0 };
            (
                scale * g as f64,
                (g as f64) < n as f64 / 3.0,
                nyquist,
                weight,
            )
        }
        // Periodic kinds: slot g of R2HC/HC2R holds mode min(g, n − g); DHT index g is mode
        // g of the period, negative above n/2 as numpy's fftfreq.
        SpectralAxis::R2r {
            kind: R2rKind::R2hc | R2rKind::Hc2r,
            n,
        } => (2.0 * PI / length * g.min(n - g) as f64, true, false, 1.0),
        SpectralAxis::R2r {
            kind: R2rKind::Dht,
            n,
        } => (2.0 * PI / length * fftfreq(n)[g] as f64, true, false, 1.0),
        SpectralAxis::R2r { kind, .. } => {
            let m = g as f64 + r2r_offset(kind);
            (PI / length * m, true, false, 1.0)
        }
        SpectralAxis::Identity { .. } => (0.0, true, false, 1.0),
    }
}

/// Checks the grid of every rank of `layout` element by element: the value at each global
/// index, found through `Layout::locate` (so at the offset the plan's output buffer has it),
/// and through logical indexing.
fn check_every_rank(layout: &Layout, axes: &[SpectralAxis], lengths: &[f64]) -> usize {
    let shape = layout.global_shape().to_vec();
    let d = shape.len();
    let grids: Vec<SpectralGrid<f64>> = (0..layout.grid().ranks())
        .map(|rank| {
            SpectralGrid::new(layout, rank, axes.to_vec())
                .unwrap()
                .with_lengths(lengths)
                .unwrap()
        })
        .collect();
    let full: Vec<_> = grids
        .iter()
        .map(|g| {
            (
                g.k2(),
                g.two_thirds_mask(),
                g.three_halves_mask(),
                g.hermitian_weights(),
            )
        })
        .collect();
    let total: usize = shape.iter().product();
    for linear in 0..total {
        let mut index = vec![0; d];
        let mut rest = linear;
        for a in (0..d).rev() {
            index[a] = rest % shape[a];
            rest /= shape[a];
        }
        let (rank, offset) = layout.locate(&index);
        let grid = &grids[rank];
        let (k2, two_thirds, three_halves, weights) = &full[rank];
        let offsets = layout.global_offsets(rank);
        let local: Vec<usize> = (0..d).map(|a| index[a] - offsets[a]).collect();
        let (mut want_k2, mut keep, mut nyquist) = (0.0, true, false);
        let mut weight = 1.0;
        for a in 0..d {
            let (k, kept, nyq, w) = reference(axes[a], index[a], lengths[a]);
            let mut at = vec![0; d];
            at[a] = local[a];
            assert_eq!(
                grid.k(a)[IxDyn(&at)],
                k,
                "axis {a} at {index:?} of {layout:?}"
            );
            want_k2 += k * k;
            keep &= kept;
            nyquist |= nyq;
            if matches!(axes[a], SpectralAxis::Half { .. }) {
                weight = w;
            }
        }
        let what = format!("{index:?} on rank {rank} of {layout:?}");
        let memory = |a: &ArrayD<f64>| a.as_slice_memory_order().expect("contiguous")[offset];
        assert!(
            (memory(k2) - want_k2).abs() <= 1e-12 * want_k2.max(1.0),
            "{what}"
        );
        assert_eq!(memory(two_thirds), f64::from(u8::from(keep)), "{what}");
        assert_eq!(
            memory(three_halves),
            f64::from(u8::from(!nyquist)),
            "{what}"
        );
        assert_eq!(memory(weights), weight, "{what}");
        // Logical indexing reaches the same element.
        assert_eq!(k2[IxDyn(&local)], memory(k2), "{what}");
        assert_eq!(two_thirds[IxDyn(&local)], memory(two_thirds), "{what}");
    }
    grids.len()
}

#[test]
fn grids_of_every_rank_match_brute_force() {
    let dct = |k| AxisKind::R2r(k);
    let cases: Vec<(Vec<usize>, Domain, Option<Vec<AxisKind>>)> = vec![
        (vec![6, 5, 4], Domain::Complex, None),
        (vec![7, 4, 5, 6], Domain::Complex, None),
        (vec![8, 9], Domain::RealToComplex, None),
        (vec![6, 5, 8], Domain::RealToComplex, None),
        (vec![5, 4, 3, 7], Domain::RealToComplex, None),
        (
            vec![5, 6, 4],
            Domain::RealToComplex,
            Some(vec![dct(R2rKind::Dct2), dct(R2rKind::Dst1), AxisKind::Fft]),
        ),
        (
            vec![4, 6, 5],
            Domain::Real,
            Some(vec![
                dct(R2rKind::Dct1),
                dct(R2rKind::Dst3),
                dct(R2rKind::Dct4),
            ]),
        ),
        (
            vec![7, 6, 5],
            Domain::Real,
            Some(vec![
                dct(R2rKind::R2hc),
                dct(R2rKind::Dht),
                dct(R2rKind::Hc2r),
            ]),
        ),
    ];
    // Partial transforms: untransformed axes (wavenumber 0), the half axis not the last.
    let partial = [
        (
            vec![6, 7, 3],
            Domain::RealToComplex,
            [AxisKind::Fft, AxisKind::Fft, AxisKind::Identity],
        ),
        (
            vec![5, 4, 6],
            Domain::Complex,
            [AxisKind::Identity, AxisKind::Fft, dct(R2rKind::Dct2)],
        ),
        (
            vec![4, 9, 5],
            Domain::RealToComplex,
            [AxisKind::Identity, AxisKind::Fft, AxisKind::Identity],
        ),
    ];
    let cases = cases
        .into_iter()
        .chain(partial.map(|(s, d, k)| (s, d, Some(k.to_vec()))));
    let mut ranks = 0;
    for (shape, domain, kinds) in cases {
        let d = shape.len();
        let mut spectral = shape.clone();
        let transformed: Vec<bool> = match &kinds {
            Some(k) => k.iter().map(|k| k.is_transformed()).collect(),
            None => vec![true; d],
        };
        let last = transformed.iter().rposition(|&t| t).unwrap();
        let half = (domain == Domain::RealToComplex).then_some((last, shape[last]));
        if half.is_some() {
            spectral[last] = shape[last] / 2 + 1;
        }
        let axes = plan_axes(kinds.as_ref(), &spectral, half);
        let ts = TransformShape {
            physical: shape.clone(),
            spectral,
            domain,
        };
        let lengths: Vec<f64> = (0..d).map(|a| 1.0 + a as f64).collect();
        for dims in [
            vec![1],
            vec![2],
            vec![3],
            vec![5],
            vec![2, 2],
            vec![3, 2],
            vec![1, 4],
        ] {
            if dims.len() >= d {
                continue;
            }
            for transposed in [false, true] {
                let grid = GridShape::new(dims.clone()).unwrap();
                let p = pipeline_partial(&ts, grid, transposed, &transformed).unwrap();
                let out = &p.layouts[p.output];
                ranks += check_every_rank(out, &axes, &vec![2.0 * PI; d]);
                ranks += check_every_rank(out, &axes, &lengths);
            }
        }
    }
    assert!(ranks > 300, "{ranks}");
}

#[test]
fn the_real_length_of_a_half_axis_is_recovered_from_padding() {
    for n in 1..300usize {
        for f in [1.0, 1.25, 1.5, 1.7, 2.0, 3.0] {
            let m = (n as f64 * f).floor() as usize;
            assert_eq!(half_axis_real_len(n / 2 + 1, m, f), n, "n {n} factor {f}");
        }
    }
}

#[test]
fn mismatched_axes_and_lengths_are_errors() {
    let layout = Layout::pencil(&[4, 3], GridShape::new(vec![2]).unwrap()).unwrap();
    let axes = vec![SpectralAxis::Fft { n: 4 }, SpectralAxis::Half { n: 6 }];
    let err = SpectralGrid::<f64>::new(&layout, 0, axes).unwrap_err();
    assert!(err.to_string().contains("lengths [4, 4]"), "{err}");
    let axes = vec![SpectralAxis::Fft { n: 4 }, SpectralAxis::Half { n: 5 }];
    let grid = SpectralGrid::<f64>::new(&layout, 1, axes).unwrap();
    assert_eq!(grid.k(0).shape(), &[2, 1]);
    assert_eq!(grid.k(1).shape(), &[1, 3]);
    let err = grid.with_lengths(&[1.0, -2.0]).unwrap_err();
    assert!(err.to_string().contains("[1.0, -2.0]"), "{err}");
}
