//! Pseudo-spectral incompressible Navier–Stokes on the periodic box [0, 2π)³.
//!
//! The equations in rotational form, with `ω = ∇×u` and the total pressure `P = p + |u|²/2`:
//!
//! ```text
//! ∂u/∂t = u×ω − ∇P + ν∇²u,      ∇·u = 0.
//! ```
//!
//! In Fourier space the pressure is a projection: taking the divergence gives
//! `−|k|² P̂ = i k·(u×ω)^`, so with `Π(k) v̂ = v̂ − k (k·v̂)/|k|²` (the part of `v̂` normal to `k`)
//!
//! ```text
//! dû/dt = D(k) Π(k) (u×ω)^ − ν |k|² û,      ω̂ = i k × û,
//! ```
//!
//! where the product `u×ω` is formed on the grid (pseudo-spectral) and `D(k)` is the
//! dealiasing mask ([`crate::Dealias`]: the 2/3 rule's mask, or only the Nyquist modes when
//! the product is formed on the 3/2-padded grid). The velocity is advanced with the classical
//! fourth-order Runge–Kutta method; each stage takes one batched backward transform of the
//! three components of û, one of ω̂, and one batched forward transform of u×ω (r2c/c2r,
//! one message per peer per exchange for all three components). Every buffer is made once,
//! in [`NavierStokes::new`]; a step allocates nothing.

use crate::error::{Result, SolverError};
use crate::spectral::{Dealias, SpectralBox};
use fft_core::GridChoice;
use mpi::topology::Communicator;
use num_complex::Complex;

type C64 = Complex<f64>;

/// Parameters of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameters {
    /// Spectral resolution per axis.
    pub modes: [usize; 3],
    /// Kinematic viscosity ν.
    pub nu: f64,
    /// Time step.
    pub dt: f64,
    /// Dealiasing rule.
    pub dealias: Dealias,
    /// Processor grid.
    pub grid: GridChoice,
}

/// The Runge–Kutta weights of the classical RK4 method: the stage `s` (0-based) starts from
/// `û₀ + B[s−1]·dt·dû_{s−1}`, and the step is `û₀ + dt·Σ A[s]·dû_s`.
const RK4_A: [f64; 4] = [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0];
const RK4_B: [f64; 3] = [0.5, 0.5, 1.0];

/// A Navier–Stokes solver: the velocity's Fourier coefficients and the work buffers of RK4.
///
/// ```no_run
/// use solvers::navier_stokes::{NavierStokes, Parameters};
/// use solvers::flows::TaylorGreen;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let params = Parameters {
///     modes: [32, 32, 32],
///     nu: 0.01,
///     dt: 0.01,
///     dealias: Default::default(),
///     grid: Default::default(),
/// };
/// let mut ns = NavierStokes::new(&world, params).unwrap();
/// ns.set_velocity(|x| TaylorGreen.velocity(x)).unwrap();
/// for _ in 0..10 {
///     ns.step().unwrap();
/// }
/// println!("E = {}, ε = {}", ns.energy(), ns.dissipation());
/// ```
#[derive(Debug)]
pub struct NavierStokes {
    space: SpectralBox,
    params: Parameters,
    time: f64,
    steps: u64,
    /// The step and time from which `time` is counted: `time = origin.1 + (steps − origin.0)·dt`
    /// ((0, 0) unless restarted from a checkpoint with another time step).
    origin: (u64, f64),
    /// û: the state (three spectral blocks: x, y, z components).
    u_hat: Vec<C64>,
    /// û at the start of the current step.
    u_hat_start: Vec<C64>,
    /// The step's result, accumulated stage by stage.
    u_hat_next: Vec<C64>,
    /// dû/dt of the current stage.
    du_hat: Vec<C64>,
    /// ω̂ = i k × û.
    omega_hat: Vec<C64>,
    /// u on the grid, then u×ω.
    u: Vec<f64>,
    /// ω on the grid.
    omega: Vec<f64>,
}

impl NavierStokes {
    /// A solver with zero velocity (collective); set the initial condition with
    /// [`NavierStokes::set_velocity`].
    pub fn new<C: Communicator>(comm: &C, params: Parameters) -> Result<Self> {
        if !(params.nu >= 0.0 && params.nu.is_finite()) {
            return Err(SolverError::BadParameter {
                name: "the viscosity",
                requirement: "finite and >= 0",
                value: params.nu,
            });
        }
        if !(params.dt > 0.0 && params.dt.is_finite()) {
            return Err(SolverError::BadParameter {
                name: "the time step",
                requirement: "finite and > 0",
                value: params.dt,
            });
        }
        let space = SpectralBox::new(comm, params.modes, 3, params.grid.clone(), params.dealias)?;
        let spectral = || vec![C64::default(); space.spectral_len()];
        let physical = || vec![0.0; space.physical_len()];
        Ok(Self {
            u_hat: spectral(),
            u_hat_start: spectral(),
            u_hat_next: spectral(),
            du_hat: spectral(),
            omega_hat: spectral(),
            u: physical(),
            omega: physical(),
            space,
            params,
            time: 0.0,
            steps: 0,
            origin: (0, 0.0),
        })
    }

    /// The box: layouts, coordinates, wavenumbers.
    pub fn space(&self) -> &SpectralBox {
        &self.space
    }

    /// The parameters.
    pub fn parameters(&self) -> &Parameters {
        &self.params
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The velocity's Fourier coefficients (x, y, z blocks of this rank's spectral block).
    pub fn velocity_hat(&self) -> &[C64] {
        &self.u_hat
    }

    /// Sets the velocity to `velocity(x, y, z)` sampled on the grid, keeping the modes the
    /// dealiasing rule keeps, and resets the time to 0 (collective). The field should be
    /// divergence-free; it is not projected.
    pub fn set_velocity(&mut self, velocity: impl Fn([f64; 3]) -> [f64; 3]) -> Result<()> {
        let block = self.space.physical_block();
        for (i, x) in self.space.coordinates().into_iter().enumerate() {
            let v = velocity(x);
            for (c, vc) in v.into_iter().enumerate() {
                self.u[c * block + i] = vc;
            }
        }
        self.space.forward(&self.u, &mut self.u_hat)?;
        let sb = self.space.spectral_block();
        for (i, z) in self.u_hat.iter_mut().enumerate() {
            *z *= self.space.dealias[i % sb];
        }
        self.time = 0.0;
        self.steps = 0;
        self.origin = (0, 0.0);
        Ok(())
    }

    /// The step and time from which [`NavierStokes::time`] is counted (see
    /// [`crate::checkpoint`]).
    pub fn time_origin(&self) -> (u64, f64) {
        self.origin
    }

    /// Sets the state from a checkpoint: `û` from `block` (C order of the logical axes,
    /// component first, as [`crate::checkpoint::write`] writes it), the step count and the
    /// time origin.
    pub(crate) fn restore(&mut self, block: &[C64], steps: u64, origin: (u64, f64)) -> Result<()> {
        let (layout, rank) = (self.space.spectral_layout(), self.space.rank());
        // The block is in logical order; the state in the layout's memory order.
        let mut u_hat = fft_core::view::block_view_mut(layout, rank, 3, &mut self.u_hat)?;
        for (u, &v) in u_hat.iter_mut().zip(block) {
            *u = v;
        }
        self.steps = steps;
        self.origin = origin;
        self.time = self.time_at(steps);
        Ok(())
    }

    /// The time after `steps` steps.
    fn time_at(&self, steps: u64) -> f64 {
        self.origin.1 + (steps - self.origin.0) as f64 * self.params.dt
    }

    /// The velocity on the grid (three physical blocks; collective).
    pub fn velocity(&mut self) -> Result<&[f64]> {
        self.space.backward(&self.u_hat, &mut self.u)?;
        Ok(&self.u)
    }

    /// Advances by one time step with RK4 (collective; allocates nothing).
    pub fn step(&mut self) -> Result<()> {
        let dt = self.params.dt;
        self.u_hat_start.copy_from_slice(&self.u_hat);
        self.u_hat_next.copy_from_slice(&self.u_hat);
        for stage in 0..4 {
            self.rhs()?;
            if stage < 3 {
                let b = RK4_B[stage] * dt;
                for ((u, &u0), &du) in self
                    .u_hat
                    .iter_mut()
                    .zip(&self.u_hat_start)
                    .zip(&self.du_hat)
                {
                    *u = u0 + du * b;
                }
            }
            let a = RK4_A[stage] * dt;
            for (u1, &du) in self.u_hat_next.iter_mut().zip(&self.du_hat) {
                *u1 += du * a;
            }
        }
        std::mem::swap(&mut self.u_hat, &mut self.u_hat_next);
        self.steps += 1;
        self.time = self.time_at(self.steps);
        Ok(())
    }

    /// `dû/dt = D Π (u×ω)^ − ν|k|²û` for the current `û`, into `du_hat`.
    fn rhs(&mut self) -> Result<()> {
        let n = self.space.spectral_block();

        // ω̂ = i k × û
        {
            let [kx, ky, kz] = &self.space.k;
            let [ux, uy, uz] = split3(&self.u_hat, n);
            let [wx, wy, wz] = split3_mut(&mut self.omega_hat, n);
            let i = C64::i();
            for m in 0..n {
                wx[m] = i * (ky[m] * uz[m] - kz[m] * uy[m]);
                wy[m] = i * (kz[m] * ux[m] - kx[m] * uz[m]);
                wz[m] = i * (kx[m] * uy[m] - ky[m] * ux[m]);
            }
        }

        // u and ω on the grid, and their product u×ω (written over u).
        let space = &mut self.space;
        space.backward(&self.u_hat, &mut self.u)?;
        space.backward(&self.omega_hat, &mut self.omega)?;
        {
            let p = space.physical_block();
            let [ux, uy, uz] = split3_mut(&mut self.u, p);
            let [wx, wy, wz] = split3(&self.omega, p);
            for m in 0..p {
                let u = [ux[m], uy[m], uz[m]];
                ux[m] = u[1] * wz[m] - u[2] * wy[m];
                uy[m] = u[2] * wx[m] - u[0] * wz[m];
                uz[m] = u[0] * wy[m] - u[1] * wx[m];
            }
        }
        space.forward(&self.u, &mut self.du_hat)?;

        // dû/dt = D Π (u×ω)^ − ν|k|² û, with Π v̂ = v̂ − k (k·v̂)/|k|².
        let nu = self.params.nu;
        let [kx, ky, kz] = &self.space.k;
        let (k2, mask) = (&self.space.k2, &self.space.dealias);
        let [ux, uy, uz] = split3(&self.u_hat, n);
        let [dx, dy, dz] = split3_mut(&mut self.du_hat, n);
        for m in 0..n {
            let k = [kx[m], ky[m], kz[m]];
            let nonlinear = [dx[m], dy[m], dz[m]];
            let k_dot_n = nonlinear[0] * k[0] + nonlinear[1] * k[1] + nonlinear[2] * k[2];
            let along_k = if k2[m] > 0.0 {
                k_dot_n / k2[m]
            } else {
                C64::default()
            };
            let viscous = nu * k2[m];
            dx[m] = (nonlinear[0] - along_k * k[0]) * mask[m] - ux[m] * viscous;
            dy[m] = (nonlinear[1] - along_k * k[1]) * mask[m] - uy[m] * viscous;
            dz[m] = (nonlinear[2] - along_k * k[2]) * mask[m] - uz[m] * viscous;
        }
        Ok(())
    }

    /// Kinetic energy per unit volume `E = ½⟨|u|²⟩ = ½ Σ_k |û_k|²` (collective).
    pub fn energy(&self) -> f64 {
        let n = self.space.spectral_block();
        let [ux, uy, uz] = split3(&self.u_hat, n);
        0.5 * self
            .space
            .sum_over_modes(|m| ux[m].norm_sqr() + uy[m].norm_sqr() + uz[m].norm_sqr())
    }

    /// Dissipation rate `ε = ν⟨|ω|²⟩ = ν Σ_k |k|²|û_k|²` (collective); `dE/dt = −ε`.
    pub fn dissipation(&self) -> f64 {
        let n = self.space.spectral_block();
        let [ux, uy, uz] = split3(&self.u_hat, n);
        let k2 = &self.space.k2;
        self.params.nu
            * self.space.sum_over_modes(|m| {
                k2[m] * (ux[m].norm_sqr() + uy[m].norm_sqr() + uz[m].norm_sqr())
            })
    }

    /// `max_k |k·û_k|` over all modes and ranks: zero up to round-off for a solenoidal field
    /// (collective).
    pub fn max_divergence(&self) -> f64 {
        let n = self.space.spectral_block();
        let [ux, uy, uz] = split3(&self.u_hat, n);
        let [kx, ky, kz] = &self.space.k;
        let local = (0..n)
            .map(|m| (ux[m] * kx[m] + uy[m] * ky[m] + uz[m] * kz[m]).norm())
            .fold(0.0, f64::max);
        self.space.max_over_ranks(local)
    }

    /// `max |u − exact|` over the grid, all components and ranks (collective); NaN anywhere
    /// counts as infinite.
    pub fn max_error(&mut self, exact: impl Fn([f64; 3]) -> [f64; 3]) -> Result<f64> {
        self.space.backward(&self.u_hat, &mut self.u)?;
        let block = self.space.physical_block();
        let mut error = 0.0f64;
        for (i, x) in self.space.coordinates().into_iter().enumerate() {
            let want = exact(x);
            for (c, w) in want.into_iter().enumerate() {
                let d = (self.u[c * block + i] - w).abs();
                error = if d.is_nan() {
                    f64::INFINITY
                } else {
                    error.max(d)
                };
            }
        }
        Ok(self.space.max_over_ranks(error))
    }
}

/// The three components of a field stored as three blocks of `n`.
fn split3<T>(v: &[T], n: usize) -> [&[T]; 3] {
    let (x, rest) = v.split_at(n);
    let (y, z) = rest.split_at(n);
    [x, y, &z[..n]]
}

/// The three components of a field stored as three blocks of `n`, mutably.
fn split3_mut<T>(v: &mut [T], n: usize) -> [&mut [T]; 3] {
    let (x, rest) = v.split_at_mut(n);
    let (y, z) = rest.split_at_mut(n);
    [x, y, &mut z[..n]]
}
