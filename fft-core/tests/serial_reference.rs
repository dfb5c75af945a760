//! The serial reference FFT used by the MPI tests, checked against the naive DFT.
mod common;

use common::*;
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
