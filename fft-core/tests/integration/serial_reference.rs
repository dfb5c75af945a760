//! The serial reference FFT used by the MPI tests, checked against the naive DFT.

use crate::common::*;
use rustfft::FftDirection;

#[test]
fn serial_reference_matches_naive_dft() {
    for shape in [vec![3, 4], vec![5, 3, 2], vec![2, 3, 2, 3], vec![7, 1, 5]] {
        let x = random_global(&shape, 42);
        for (dir, sign) in [(FftDirection::Forward, -1.0), (FftDirection::Inverse, 1.0)] {
            let fast = serial_fft(&x, &shape, dir);
            let slow = naive_dft(&x, &shape, sign);
            let err = relative_error(&fast, &slow, max_norm(&slow));
            assert!(err < 1e-13, "shape {shape:?}: {err}");
        }
    }
}

#[test]
fn real_reference_matches_naive_dft_truncated() {
    for shape in [vec![3, 4], vec![2, 3, 5], vec![4, 1, 6]] {
        let x = random_real(&shape, 7);
        let fast = serial_rfft(&x, &shape);
        let full = naive_dft(&complexify(&x), &shape, -1.0);
        let d = shape.len();
        let (n, h) = (shape[d - 1], shape[d - 1] / 2 + 1);
        let slow: Vec<_> = full.chunks(n).flat_map(|l| l[..h].to_vec()).collect();
        let err = error_vs(&fast, &slow, max_norm(&slow));
        assert!(err < 1e-13, "shape {shape:?}: {err}");
    }
}

#[test]
fn naive_r2r_pairs_invert_with_the_logical_size() {
    // The table's formulas themselves: backward(kind) ∘ kind = logical size × identity.
    for n in [2usize, 3, 5, 8] {
        let x: Vec<_> = (0..n)
            .map(|i| num_complex::Complex::new((i as f64 * 0.7).sin() + 0.3, 0.1 * i as f64))
            .collect();
        for (kind, inverse, logical) in [
            ("dct1", "dct1", 2 * (n - 1)),
            ("dct2", "dct3", 2 * n),
            ("dct3", "dct2", 2 * n),
            ("dct4", "dct4", 2 * n),
            ("dst1", "dst1", 2 * (n + 1)),
            ("dst2", "dst3", 2 * n),
            ("dst3", "dst2", 2 * n),
            ("dst4", "dst4", 2 * n),
            ("r2hc", "hc2r", n),
            ("hc2r", "r2hc", n),
            ("dht", "dht", n),
        ] {
            let y = naive_r2r(inverse, &naive_r2r(kind, &x));
            let want: Vec<_> = x.iter().map(|v| v * logical as f64).collect();
            let err = error_vs(&y, &want, max_norm(&want));
            assert!(err < 1e-13, "{kind} n={n}: {err}");
        }
        // R2HC holds the real DFT's modes (real parts, then imaginary parts backwards); the
        // DHT is Re − Im of the DFT (for complex lines: of the real and imaginary parts').
        let (hc, dht) = (naive_r2r("r2hc", &x), naive_r2r("dht", &x));
        let part = |v: num_complex::Complex<f64>, re: bool| if re { v.re } else { v.im };
        for k in 0..n {
            for re in [true, false] {
                // The DFT of the real (or imaginary) part alone.
                let line: Vec<_> = x
                    .iter()
                    .map(|v| num_complex::Complex::new(part(*v, re), 0.0))
                    .collect();
                let m = naive_dft_line(&line, -1.0);
                let slot = if 2 * k > n { m[n - k].im } else { m[k].re };
                assert!((part(hc[k], re) - slot).abs() < 1e-12, "r2hc n={n} k={k}");
                assert!(
                    (part(dht[k], re) - (m[k].re - m[k].im)).abs() < 1e-12,
                    "dht n={n} k={k}"
                );
            }
        }
        // DCT-II of a line is twice the real part of a phase-shifted DFT of its even extension.
        let ext: Vec<_> = x.iter().chain(x.iter().rev()).copied().collect();
        let dft = naive_dft_line(&ext, -1.0);
        let dct2 = naive_r2r("dct2", &x);
        for k in 0..n {
            let shifted = dft[k]
                * num_complex::Complex::from_polar(
                    1.0,
                    -std::f64::consts::PI * k as f64 / (2 * n) as f64,
                );
            assert!(
                (shifted - dct2[k]).norm() < 1e-12 * (n as f64),
                "n={n} k={k}"
            );
        }
    }
}
