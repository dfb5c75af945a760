//! The periodic Poisson problem `∇²u = f` on [0, 2π)³, solved in one forward and one backward
//! transform: `û_k = −f̂_k / |k|²` for `k ≠ 0`.
//!
//! On a periodic box a solution exists only when `f` has zero mean, and it is unique up to a
//! constant. [`Poisson::solve`] ignores the mean of `f` (it solves `∇²u = f − ⟨f⟩`) and returns
//! the solution with zero mean (`û_0 = 0`).

use crate::error::Result;
use crate::spectral::{Dealias, SpectralBox};
use fft_core::GridChoice;
use mpi::topology::Communicator;
use num_complex::Complex;

/// A Poisson solver on a fixed grid: buffers made once, two transforms per solve.
///
/// ```no_run
/// use solvers::poisson::{ManufacturedSolution, Poisson};
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let mut poisson = Poisson::new(&world, [32, 24, 40], Default::default()).unwrap();
/// let exact = ManufacturedSolution;
/// let points = poisson.space().coordinates();
/// let f: Vec<f64> = points.iter().map(|&p| exact.rhs(p)).collect();
/// let mut u = vec![0.0; f.len()];
/// poisson.solve(&f, &mut u).unwrap();
/// ```
#[derive(Debug)]
pub struct Poisson {
    space: SpectralBox,
    f_hat: Vec<Complex<f64>>,
}

impl Poisson {
    /// A solver for `modes` grid points per axis over all processes of `comm` (collective).
    pub fn new<C: Communicator>(comm: &C, modes: [usize; 3], grid: GridChoice) -> Result<Self> {
        let space = SpectralBox::new(comm, modes, 1, grid, Dealias::None)?;
        let f_hat = vec![Complex::default(); space.spectral_len()];
        Ok(Self { space, f_hat })
    }

    /// The box: layouts, coordinates of the local points, wavenumbers.
    pub fn space(&self) -> &SpectralBox {
        &self.space
    }

    /// Solves `∇²u = f − ⟨f⟩` for the zero-mean `u` (collective). `f` and `u` are this rank's
    /// block of the physical grid ([`SpectralBox::coordinates`] gives each point).
    pub fn solve(&mut self, f: &[f64], u: &mut [f64]) -> Result<()> {
        self.space.forward(f, &mut self.f_hat)?;
        // −|k|² û = f̂, and û₀ = 0 fixes the free constant.
        for (f_hat, &k2) in self.f_hat.iter_mut().zip(&self.space.k2) {
            *f_hat = if k2 == 0.0 {
                Complex::default()
            } else {
                -*f_hat / k2
            };
        }
        self.space.backward(&self.f_hat, u)
    }
}

/// A manufactured solution with wavenumbers up to 3 on every axis (so any grid with at least
/// 7 points per axis resolves it exactly) and zero mean:
///
/// `u = sin x cos 2y sin 3z + cos(3x + 1) sin y + ½ cos(2x − y + 2z)`,
/// `f = ∇²u = −14 sin x cos 2y sin 3z − 10 cos(3x + 1) sin y − 9/2 cos(2x − y + 2z)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ManufacturedSolution;

impl ManufacturedSolution {
    /// The largest `|k_i|` of the solution on any axis.
    pub const MAX_WAVENUMBER: usize = 3;

    /// `u` at `(x, y, z)`.
    pub fn solution(&self, [x, y, z]: [f64; 3]) -> f64 {
        (x.sin() * (2.0 * y).cos() * (3.0 * z).sin())
            + (3.0 * x + 1.0).cos() * y.sin()
            + 0.5 * (2.0 * x - y + 2.0 * z).cos()
    }

    /// `f = ∇²u` at `(x, y, z)`.
    pub fn rhs(&self, [x, y, z]: [f64; 3]) -> f64 {
        -14.0 * (x.sin() * (2.0 * y).cos() * (3.0 * z).sin())
            - 10.0 * (3.0 * x + 1.0).cos() * y.sin()
            - 4.5 * (2.0 * x - y + 2.0 * z).cos()
    }
}

/// What [`solve_manufactured`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PoissonErrors {
    /// The processor grid used.
    pub process_grid: Vec<usize>,
    /// `max |u − u_exact|` over all points.
    pub max_error: f64,
    /// `max |u_exact|` over all points (the scale of the error).
    pub max_solution: f64,
    /// Seconds of one solve (max over ranks).
    pub solve_s: f64,
}

/// Solves the [`ManufacturedSolution`] problem on `modes` points per axis, with a constant
/// added to `f` (which the solver must ignore), and measures the error (collective).
pub fn solve_manufactured<C: Communicator>(
    comm: &C,
    modes: [usize; 3],
    grid: GridChoice,
) -> Result<PoissonErrors> {
    let mut poisson = Poisson::new(comm, modes, grid)?;
    let exact = ManufacturedSolution;
    let points = poisson.space().coordinates();
    let f: Vec<f64> = points.iter().map(|&p| exact.rhs(p) + 0.25).collect();
    let mut u = vec![f64::NAN; f.len()];
    let start = std::time::Instant::now();
    poisson.solve(&f, &mut u)?;
    let solve_s = poisson
        .space()
        .max_over_ranks(start.elapsed().as_secs_f64());
    let (mut max_error, mut max_solution) = (0.0f64, 0.0f64);
    for (&p, &u) in points.iter().zip(&u) {
        let want = exact.solution(p);
        max_error = max_error.max((u - want).abs());
        max_solution = max_solution.max(want.abs());
    }
    let space = poisson.space();
    Ok(PoissonErrors {
        process_grid: space.process_grid(),
        // NaN compares false in max(): count a NaN as an infinite error.
        max_error: space.max_over_ranks(if u.iter().all(|x| x.is_finite()) {
            max_error
        } else {
            f64::INFINITY
        }),
        max_solution: space.max_over_ranks(max_solution),
        solve_s,
    })
}
