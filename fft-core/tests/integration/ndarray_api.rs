//! The ndarray API of the plans under real MPI: views in logical order of every plan's
//! blocks (normal and transposed output, slabs and pencils, batches) against a serial
//! reference, `PencilArray` transforms, `forward_ndarray`, typed errors, and the local
//! spectral grids of c2c, padded r2c and r2r plans checked by spectral derivatives.
use crate::common::*;
use fft_core::ndarray::{ArrayD, Dimension, IxDyn, Zip};
use fft_core::{
    AxisKind, Complex, FftError, FftOptions, FftPlan, GridChoice, Normalization, R2rKind, R2rPlan,
    RealFftPlan, SpectralAxis, SpectralGrid,
};
use mpi::collective::SystemOperation;
use mpi::traits::*;
use rustfft::FftDirection;
use std::f64::consts::PI;

// The module path: the launch runs the body by its exact test name.
const BODY: &str = "ndarray_api::ndarray_body";

/// The unit wavenumber of a box of length 3.
const KZ: f64 = 2.0 * PI / 3.0;

mpi_harness::launches!(BODY, 180;
    ndarray_np1 => 1, ndarray_np2 => 2, ndarray_np3 => 3, ndarray_np4 => 4,
    ndarray_np8 => 8);

#[test]
#[ignore = "MPI body: run by the ndarray_np* launchers under mpirun"]
fn ndarray_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let mut cases = 0;
    for dims in grids(mpi.size(), 3) {
        for transposed in [false, true] {
            cases += views_of_c2c(&world, &dims, transposed);
        }
    }
    errors_are_typed(&world);
    r2c_grid_derivative(&world);
    r2r_grid_second_derivative(&world);
    if mpi.rank() == 0 {
        println!("ndarray API: {cases} c2c plans checked");
    }
    mpi.pass();
}

fn max_over_ranks(world: &impl Communicator, local: f64) -> f64 {
    let mut global = 0.0;
    world.all_reduce_into(&local, &mut global, SystemOperation::max());
    global
}

/// Views, arrays and ndarray transforms of one c2c plan with a batch of 2, against the
/// serial FFT of every field: `output_view[f, i]` must be the reference at `offsets + i`.
fn views_of_c2c(world: &impl Communicator, dims: &[usize], transposed: bool) -> usize {
    let shape = [6, 5, 7];
    let opts = FftOptions::default()
        .grid(GridChoice::Dims(dims.to_vec()))
        .transposed_out(transposed)
        .batch(2);
    let mut plan = FftPlan::<f64>::new(world, &shape, opts).unwrap();
    let fields = [random_global(&shape, 7), random_global(&shape, 8)];
    let reference = fields
        .clone()
        .map(|x| serial_fft(&x, &shape, FftDirection::Forward));
    let at =
        |global: &[Complex<f64>], g: &[usize]| global[(g[0] * shape[1] + g[1]) * shape[2] + g[2]];

    // Fill the input through its mutable view, by global index.
    let mut input = vec![Complex::default(); plan.input_len()];
    let offsets = plan.input_offsets();
    for (index, value) in plan.input_view_mut(&mut input).unwrap().indexed_iter_mut() {
        let g: Vec<usize> = (0..3).map(|a| offsets[a] + index[1 + a]).collect();
        *value = at(&fields[index[0]], &g);
    }
    let mut output = vec![Complex::default(); plan.output_len()];
    plan.forward(&input, &mut output).unwrap();

    let offsets = plan.output_offsets();
    let view = plan.output_view(&output).unwrap();
    let mut local = vec![2usize];
    local.extend(plan.output_layout().local_shape(plan.rank()));
    assert_eq!(view.shape(), local.as_slice());
    let mut error = 0.0f64;
    for (index, value) in view.indexed_iter() {
        let g: Vec<usize> = (0..3).map(|a| offsets[a] + index[1 + a]).collect();
        error = error.max((value - at(&reference[index[0]], &g)).norm());
    }
    let error = max_over_ranks(world, error);
    assert!(
        error < 1e-11,
        "dims {dims:?} transposed {transposed}: error {error:e}"
    );

    // The same through PencilArrays: global_iter sees the reference at each global index.
    let mut u = plan.input_array();
    u.as_mut_slice().copy_from_slice(&input);
    let mut u_hat = plan.output_array();
    plan.forward_array(&u, &mut u_hat).unwrap();
    assert_eq!(
        u_hat.as_slice(),
        output.as_slice(),
        "forward_array = forward"
    );
    let mut error = 0.0f64;
    for (index, value) in u_hat.global_iter() {
        let i = index.slice();
        error = error.max((value - at(&reference[i[0]], &i[1..])).norm());
    }
    assert!(error < 1e-11, "global_iter: error {error:e}");
    let mut back = plan.input_array();
    plan.backward_array(&u_hat, &mut back).unwrap();
    let mut want = vec![Complex::default(); plan.input_len()];
    plan.backward(&output, &mut want).unwrap();
    assert_eq!(
        back.as_slice(),
        want.as_slice(),
        "backward_array = backward"
    );

    // forward_ndarray from a plain C-order ndarray of the block.
    let c_order: ArrayD<Complex<f64>> = plan.input_view(&input).unwrap().to_owned();
    assert!(c_order.is_standard_layout());
    let spectrum = plan.forward_ndarray(&c_order.view()).unwrap();
    assert_eq!(spectrum, view, "forward_ndarray = forward, logically");
    let round = plan.backward_ndarray(&spectrum.view()).unwrap();
    assert_eq!(round, plan.input_view(&want).unwrap());
    1
}

fn errors_are_typed(world: &impl Communicator) {
    let mut plan = FftPlan::<f64>::new(world, &[4, 6, 5], FftOptions::default()).unwrap();
    let other = FftPlan::<f64>::new(world, &[4, 6, 6], FftOptions::default()).unwrap();
    let u = plan.input_array();
    let mut wrong = other.output_array();
    match plan.forward_array(&u, &mut wrong) {
        Err(FftError::ArrayMismatch {
            array: "output",
            reason,
        }) => {
            assert!(reason.contains("global shape [4, 6, 6]"), "{reason}");
            assert!(reason.contains("[4, 6, 5]"), "{reason}");
        }
        other => panic!("expected ArrayMismatch, got {other:?}"),
    }
    let short = vec![Complex::default(); plan.input_len() + 1];
    assert!(matches!(
        plan.input_view(&short),
        Err(FftError::BufferLength {
            buffer: "input",
            ..
        })
    ));
    let wrong_shape = ArrayD::<Complex<f64>>::zeros(IxDyn(&[1, 2, 3]));
    assert!(matches!(
        plan.forward_ndarray(&wrong_shape.view()),
        Err(FftError::ArrayMismatch { array: "input", .. })
    ));
}

/// ∂/∂x and ∂/∂z of a band-limited real field through a padded, transposed r2c plan and its
/// spectral grid (box lengths 2π and 3), against the exact derivatives.
fn r2c_grid_derivative(world: &impl Communicator) {
    let n = [12, 10, 9];
    let lengths = [2.0 * PI, 2.0 * PI, 3.0];
    for (padding, transposed) in [(false, true), (true, true), (true, false)] {
        let mut opts = FftOptions::default()
            .normalization(Normalization::Backward)
            .transposed_out(transposed);
        if padding {
            opts = opts.padding(vec![1.5; 3]);
        }
        let mut plan = RealFftPlan::<f64>::new(world, &n, opts).unwrap();
        let m = plan.global_shape().to_vec();
        let grid = plan.spectral_grid().with_lengths(&lengths).unwrap();
        let want_axes = vec![
            SpectralAxis::Fft { n: 12 },
            SpectralAxis::Fft { n: 10 },
            SpectralAxis::Half { n: 9 },
        ];
        let pure = SpectralGrid::<f64>::new(plan.output_layout(), plan.rank(), want_axes)
            .unwrap()
            .with_lengths(&lengths)
            .unwrap();
        assert_eq!(grid, pure);
        let x = |g: &[usize]| [0, 1, 2].map(|a| lengths[a] * g[a] as f64 / m[a] as f64);
        // Wavenumbers 2, 1 and 3 (in units of 2π/3 along z).
        let u = |[x, y, z]: [f64; 3]| (2.0 * x).sin() * y.cos() + (x - 3.0 * KZ * z).cos();
        let du: [fn([f64; 3]) -> f64; 3] = [
            |[x, y, z]| 2.0 * (2.0 * x).cos() * y.cos() - (x - 3.0 * KZ * z).sin(),
            |[x, y, _]| -(2.0 * x).sin() * y.sin(),
            |[x, _, z]| 3.0 * KZ * (x - 3.0 * KZ * z).sin(),
        ];
        let mut field = plan.input_array();
        field.fill_with(|g| u(x(g)));
        let mut spectrum = plan.output_array();
        plan.forward_array(&field, &mut spectrum).unwrap();
        for axis in [0, 2] {
            let mut d_hat = spectrum.clone();
            Zip::from(d_hat.view_mut())
                .and_broadcast(grid.k(axis))
                .for_each(|z, &k| *z *= Complex::new(0.0, k));
            let mut d = plan.input_array();
            plan.backward_array(&d_hat, &mut d).unwrap();
            let local = d
                .global_iter()
                .map(|(g, &v)| (v - du[axis](x(g.slice()))).abs())
                .fold(0.0, f64::max);
            let error = max_over_ranks(world, local);
            assert!(
                error < 1e-11,
                "padding {padding} transposed {transposed} axis {axis}: error {error:e}"
            );
        }
    }
}

/// d²/dx² of cosine and sine modes on [0, L] through real-to-real plans (DCT-II and DST-II,
/// exact for their own modes): the grid's `−k²` must give `−(πm/L)²` with the kind's `m`.
fn r2r_grid_second_derivative(world: &impl Communicator) {
    let n = [8, 6, 7];
    let length = 2.0;
    for kind in [R2rKind::Dct2, R2rKind::Dst2] {
        let opts = FftOptions::default()
            .normalization(Normalization::Backward)
            .transposed_out(true)
            .axes(vec![AxisKind::R2r(kind); 3]);
        let mut plan = R2rPlan::<f64>::new(world, &n, opts).unwrap();
        let grid = plan.spectral_grid().with_lengths(&[length; 3]).unwrap();
        // Points x_j = (j + ½)·L/N; the mode cos(πmx/L) (DCT-II index m) or sin(πmx/L)
        // (DST-II index m − 1) along each axis.
        let m = [3.0, 1.0, 2.0];
        let basis = |t: f64| {
            if kind == R2rKind::Dct2 {
                t.cos()
            } else {
                t.sin()
            }
        };
        let x = |g: &[usize], a: usize| (g[a] as f64 + 0.5) * length / n[a] as f64;
        let mut field = plan.input_array();
        field.fill_with(|g| {
            (0..3)
                .map(|a| basis(PI * m[a] * x(g, a) / length))
                .product()
        });
        let mut spectrum = plan.output_array();
        plan.forward_array(&field, &mut spectrum).unwrap();
        let k2 = grid.k2();
        Zip::from(spectrum.view_mut())
            .and(&k2)
            .for_each(|v, &k2| *v *= -k2);
        let mut laplacian = plan.input_array();
        plan.backward_array(&spectrum, &mut laplacian).unwrap();
        let factor = -m.iter().map(|m| (PI * m / length).powi(2)).sum::<f64>();
        let local = Zip::from(laplacian.view())
            .and(field.view())
            .fold(0.0f64, |e, &l, &u| e.max((l - factor * u).abs()));
        let error = max_over_ranks(world, local);
        assert!(error < 1e-11, "{kind:?}: error {error:e}");
    }
}
