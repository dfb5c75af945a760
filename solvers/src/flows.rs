//! Initial conditions and exact solutions for [`crate::navier_stokes`].

use crate::error::{Result, SolverError};
use num_complex::Complex;
use std::str::FromStr;

/// Which flow a run starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowKind {
    /// [`TaylorGreen`].
    TaylorGreen,
    /// [`Beltrami`].
    Beltrami,
}

impl FromStr for FlowKind {
    type Err = SolverError;

    /// ```
    /// use solvers::flows::FlowKind;
    /// assert_eq!("tgv".parse::<FlowKind>().unwrap(), FlowKind::TaylorGreen);
    /// assert_eq!("abc".parse::<FlowKind>().unwrap(), FlowKind::Beltrami);
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "taylor-green" | "tgv" => Ok(FlowKind::TaylorGreen),
            "beltrami" | "abc" => Ok(FlowKind::Beltrami),
            _ => Err(SolverError::UnknownFlow {
                name: s.to_string(),
            }),
        }
    }
}

impl FlowKind {
    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::TaylorGreen => "taylor-green",
            FlowKind::Beltrami => "beltrami",
        }
    }
}

/// The Taylor–Green vortex: `u = sin x cos y cos z`, `v = −cos x sin y cos z`, `w = 0`.
/// Initially `E = ⟨|u|²⟩/2 = 1/8` and `⟨|ω|²⟩ = 3/4`, so `ε = 3ν/4`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaylorGreen;

impl TaylorGreen {
    /// The largest `|k_i|` of the initial field.
    pub const MAX_WAVENUMBER: u64 = 1;

    /// The initial velocity at `(x, y, z)`.
    pub fn velocity(&self, [x, y, z]: [f64; 3]) -> [f64; 3] {
        [
            x.sin() * y.cos() * z.cos(),
            -x.cos() * y.sin() * z.cos(),
            0.0,
        ]
    }
}

/// An Arnold–Beltrami–Childress flow of wavenumber `κ` carried by a uniform velocity `U`:
///
/// ```text
/// b(x) = (A sin κz + C cos κy,  B sin κx + A cos κz,  C sin κy + B cos κx),   ∇×b = κ b,
/// u(x, t) = U + exp(−ν κ² t) · b(x − U t).
/// ```
///
/// This is an exact solution of the Navier–Stokes equations: `b×(∇×b) = κ b×b = 0`, and
/// `U×(∇×b) = ∇(U·b) − (U·∇)b`, whose gradient part the pressure absorbs, leaving the
/// advection `−(U·∇)b`. Each Fourier mode of `u − U` therefore obeys the linear equation
/// `dû/dt = (−i k·U − ν|k|²) û`, also through every RK4 stage (a mode scaled by a number stays a
/// Beltrami mode), so RK4 gives exactly `û(n dt) = R(z)ⁿ û(0)`, `z = dt(−i k·U − ν|k|²)`,
/// `R(z) = 1 + z + z²/2 + z³/6 + z⁴/24`, up to round-off: [`Beltrami::rk4_factor`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beltrami {
    /// Amplitudes A, B, C.
    pub amplitudes: [f64; 3],
    /// Integer wavenumber κ.
    pub kappa: u64,
    /// The uniform velocity U (zero for the plain decaying ABC flow).
    pub mean: [f64; 3],
}

impl Default for Beltrami {
    /// `A = 1, B = 0.7, C = 0.4`, `κ = 1`, no mean flow.
    fn default() -> Self {
        Self {
            amplitudes: [1.0, 0.7, 0.4],
            kappa: 1,
            mean: [0.0; 3],
        }
    }
}

impl Beltrami {
    /// The velocity at `(x, y, z)` and time `t` for viscosity `nu`.
    pub fn velocity(&self, [x, y, z]: [f64; 3], t: f64, nu: f64) -> [f64; 3] {
        let [a, b, c] = self.amplitudes;
        let k = self.kappa as f64;
        let [ux, uy, uz] = self.mean;
        let decay = (-nu * k * k * t).exp();
        let (x, y, z) = (k * (x - ux * t), k * (y - uy * t), k * (z - uz * t));
        [
            ux + decay * (a * z.sin() + c * y.cos()),
            uy + decay * (b * x.sin() + a * z.cos()),
            uz + decay * (c * y.sin() + b * x.cos()),
        ]
    }

    /// What RK4 with step `dt` multiplies mode `k` by in `steps` steps, for this flow's
    /// linear mode equation `dû/dt = (−i k·U − ν|k|²) û` (see the type's documentation).
    pub fn rk4_factor(&self, k: [f64; 3], nu: f64, dt: f64, steps: u64) -> Complex<f64> {
        let k_dot_u: f64 = (0..3).map(|a| k[a] * self.mean[a]).sum();
        let k2: f64 = k.iter().map(|x| x * x).sum();
        let z = Complex::new(-nu * k2, -k_dot_u) * dt;
        let r = Complex::new(1.0, 0.0) + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0;
        r.powu(steps as u32)
    }

    /// A bound on `max |u_RK4 − u_exact|` after `steps` steps of `dt`: the time-stepping error
    /// alone, `(|A| + |B| + |C|) · max_k |R(z_k)ⁿ − exp(n z_k)|` over the flow's modes
    /// `k = ±κ e_i`.
    pub fn rk4_error_bound(&self, nu: f64, dt: f64, steps: u64) -> f64 {
        let kappa = self.kappa as f64;
        let amplitude: f64 = self.amplitudes.iter().map(|a| a.abs()).sum();
        let mut worst = 0.0f64;
        for axis in 0..3 {
            for sign in [-1.0, 1.0] {
                let mut k = [0.0; 3];
                k[axis] = sign * kappa;
                let k_dot_u = k[axis] * self.mean[axis];
                let z = Complex::new(-nu * kappa * kappa, -k_dot_u) * dt;
                let exact = (z * steps as f64).exp();
                worst = worst.max((self.rk4_factor(k, nu, dt, steps) - exact).norm());
            }
        }
        amplitude * worst
    }
}
