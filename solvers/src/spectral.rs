//! [`SpectralBox`]: the periodic box [0, 2π)³ seen by a pseudo-spectral solver: one distributed
//! real-to-complex transform of K real fields at once (a batched [`RealFftPlan`]: one message
//! per peer per exchange for all K), and the global wavenumber of every local spectral element.
//!
//! A real field `u` on the grid `x_j = 2π j / M` (per axis) is the trigonometric polynomial
//! `u(x) = Σ_k û_k exp(i k·x)`; [`SpectralBox::forward`] computes the coefficients `û_k`
//! (the discrete transform divided by the number of modes) and [`SpectralBox::backward`]
//! evaluates the sum on the grid. With dealiasing by padding the physical grid `M` is 3/2
//! times the spectral resolution `N`; otherwise `M = N`.

use crate::error::{Result, SolverError};
use fft_core::ndarray::ArrayD;
use fft_core::{FftOptions, GridChoice, Normalization, PencilArray, RealFftPlan};
use mpi::collective::SystemOperation;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use redist::Layout;
use std::f64::consts::PI;

/// How a solver removes the aliasing errors of quadratic products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dealias {
    /// The 3/2 rule: products are formed on a grid of `⌊3N_i/2⌋` points per axis (the
    /// spectrum is zero-padded on the way to the grid and truncated back to `N_i` modes on the
    /// way back; fft-core's padded plans), so they are exact for the `N` modes kept.
    #[default]
    Pad,
    /// Orszag's 2/3 rule: after each product, zero every mode with `|k_i| ≥ N_i/3` on some
    /// axis. The grid is the spectral resolution.
    Truncate,
    /// No dealiasing (products alias; for comparisons only). Nyquist modes are still zeroed.
    None,
}

impl std::str::FromStr for Dealias {
    type Err = SolverError;

    /// ```
    /// use solvers::Dealias;
    /// assert_eq!("3/2".parse::<Dealias>().unwrap(), Dealias::Pad);
    /// assert_eq!("2/3".parse::<Dealias>().unwrap(), Dealias::Truncate);
    /// assert!("3/4".parse::<Dealias>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "pad" | "3/2" => Ok(Dealias::Pad),
            "truncate" | "2/3" => Ok(Dealias::Truncate),
            "none" => Ok(Dealias::None),
            _ => Err(SolverError::UnknownDealias {
                name: s.to_string(),
            }),
        }
    }
}

impl Dealias {
    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Dealias::Pad => "pad",
            Dealias::Truncate => "truncate",
            Dealias::None => "none",
        }
    }

    /// The padding factor of the physical grid.
    pub fn padding(self) -> f64 {
        match self {
            Dealias::Pad => 1.5,
            Dealias::Truncate | Dealias::None => 1.0,
        }
    }
}

/// The periodic box [0, 2π)³ with a distributed transform of `components` real fields at once.
///
/// Physical fields are `components` blocks one after another, each in
/// [`SpectralBox::physical_layout`] (C order, global shape [`SpectralBox::grid_points`]);
/// spectral fields likewise in [`SpectralBox::spectral_layout`] (global shape
/// `N_0 × N_1 × (N_2/2 + 1)`: numpy's `rfftn`, left in the last pencil's memory order). The
/// per-element arrays `k`, `k2`, `weight` and `dealias` are indexed like one spectral block.
///
/// Wavenumbers: along axes 0 and 1 the global index `g` of an `N`-point axis stands for
/// [`fft_core::wavenumber`]`(N, g)` (`g` or `g − N`); along the halved last axis for `g` itself.
/// The modes `(−k_0, −k_1, −k_2)` of the last axis' omitted half are the complex conjugates
/// of those stored (the fields are real), which [`SpectralBox::weight`] accounts for in sums.
pub struct SpectralBox {
    plan: RealFftPlan<f64>,
    components: usize,
    modes: [usize; 3],
    rule: Dealias,
    /// Global wavenumber `k_i` of each local spectral element, per axis.
    pub k: [Vec<f64>; 3],
    /// `|k|²` of each local spectral element.
    pub k2: Vec<f64>,
    /// Parseval multiplicity of each local spectral element: 2 where the conjugate mode is
    /// not stored (`0 < k_2 < N_2/2`), else 1; so `⟨|u|²⟩ = Σ weight·|û_k|²` over the stored
    /// modes of all ranks.
    pub weight: Vec<f64>,
    /// 1 for modes kept by the dealiasing rule, 0 for modes it removes (and Nyquist modes).
    pub dealias: Vec<f64>,
}

impl std::fmt::Debug for SpectralBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpectralBox")
            .field("modes", &self.modes)
            .field("components", &self.components)
            .field("plan", &self.plan)
            .finish()
    }
}

impl SpectralBox {
    /// A box with spectral resolution `modes` (`N_0 × N_1 × N_2`, any sizes ≥ 1 per axis)
    /// transforming `components` fields at once, over all processes of `comm`; collective.
    /// With [`Dealias::Pad`] the physical grid has `⌊3N_i/2⌋` points per axis.
    pub fn new<C: Communicator>(
        comm: &C,
        modes: [usize; 3],
        components: usize,
        grid: GridChoice,
        dealias: Dealias,
    ) -> Result<Self> {
        if components == 0 {
            return Err(SolverError::NoComponents);
        }
        // Pointwise work in spectral space does not care about the memory order, so the
        // spectrum stays in the last pencil (skipping the exchanges back).
        let mut options = FftOptions::default()
            .grid(grid)
            .normalization(Normalization::None)
            .transposed_out(true)
            .batch(components);
        if dealias == Dealias::Pad {
            options = options.padding(vec![dealias.padding(); 3]);
        }
        let plan = RealFftPlan::<f64>::new(comm, &modes, options)?;
        // fft-core's grid of this rank's spectral block, flattened in the block's memory
        // order so that element m of each array belongs to element m of a spectral block.
        let grid = plan.spectral_grid();
        let flat = |a: ArrayD<f64>| -> Vec<f64> {
            a.as_slice_memory_order()
                .expect("grids are stored in the block's memory order")
                .to_vec()
        };
        let k = [0, 1, 2].map(|axis| flat(grid.k_full(axis)));
        let k2 = flat(grid.k2());
        let weight = flat(grid.hermitian_weights());
        // Nyquist modes go in every rule; the 2/3 rule removes them with the rest.
        let mask = flat(match dealias {
            Dealias::Truncate => grid.two_thirds_mask(),
            Dealias::Pad | Dealias::None => grid.three_halves_mask(),
        });
        Ok(Self {
            plan,
            components,
            modes,
            rule: dealias,
            k,
            k2,
            weight,
            dealias: mask,
        })
    }

    /// The spectral resolution `N` (number of Fourier modes per axis).
    pub fn modes(&self) -> [usize; 3] {
        self.modes
    }

    /// The dealiasing rule of [`SpectralBox::dealias`].
    pub fn dealias_rule(&self) -> Dealias {
        self.rule
    }

    /// The largest `|k_i|` the dealiasing mask keeps on each axis.
    pub fn max_kept_wavenumber(&self) -> [u64; 3] {
        self.modes.map(|n| {
            let n = n as u64;
            match self.rule {
                Dealias::Truncate => n.saturating_sub(1) / 3,
                Dealias::Pad | Dealias::None => n.saturating_sub(1) / 2,
            }
        })
    }

    /// Checks that modes with `|k_i| <= needed` on every axis survive the mask, so a `flow`
    /// with those wavenumbers is represented exactly.
    pub fn check_resolves(&self, flow: &'static str, needed: u64) -> Result<()> {
        let kept = self.max_kept_wavenumber();
        if kept.iter().any(|&k| k < needed) {
            return Err(SolverError::Unresolved {
                flow,
                needed,
                modes: self.modes,
                dealias: self.rule.name(),
                kept,
            });
        }
        Ok(())
    }

    /// The physical grid `M` (points per axis).
    pub fn grid_points(&self) -> [usize; 3] {
        let s = self.plan.global_shape();
        [s[0], s[1], s[2]]
    }

    /// Number of fields transformed together.
    pub fn components(&self) -> usize {
        self.components
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.plan.rank()
    }

    /// Number of processes.
    pub fn ranks(&self) -> usize {
        self.plan.grid().shape().ranks()
    }

    /// The processor grid's dimensions.
    pub fn process_grid(&self) -> Vec<usize> {
        self.plan.grid().shape().dims().to_vec()
    }

    /// Layout of one physical block (C order).
    pub fn physical_layout(&self) -> &Layout {
        self.plan.input_layout()
    }

    /// Layout of one spectral block.
    pub fn spectral_layout(&self) -> &Layout {
        self.plan.output_layout()
    }

    /// Elements of one physical block on this rank.
    pub fn physical_block(&self) -> usize {
        self.plan.input_len() / self.components
    }

    /// Elements of one spectral block on this rank.
    pub fn spectral_block(&self) -> usize {
        self.plan.output_len() / self.components
    }

    /// Length of a physical buffer holding all components.
    pub fn physical_len(&self) -> usize {
        self.plan.input_len()
    }

    /// Length of a spectral buffer holding all components.
    pub fn spectral_len(&self) -> usize {
        self.plan.output_len()
    }

    /// The coordinates `(x, y, z)` of every local physical point, in memory order.
    pub fn coordinates(&self) -> Vec<[f64; 3]> {
        let points = self.grid_points();
        let mut xyz = PencilArray::zeros(self.physical_layout().clone(), self.rank(), 1);
        xyz.fill_with(|g| [0, 1, 2].map(|a| 2.0 * PI * g[a] as f64 / points[a] as f64));
        xyz.into_parts().0
    }

    /// Seconds this rank spent in the transforms' stages (local FFTs, pack, communication,
    /// unpack) since the box was made.
    pub fn transform_times(&self) -> fft_core::StageTimes {
        self.plan.times()
    }

    /// The Fourier coefficients `û` of every component of `physical` (collective; one
    /// batched transform; allocates nothing).
    pub fn forward(&mut self, physical: &[f64], spectral: &mut [Complex<f64>]) -> Result<()> {
        self.check(physical.len(), spectral.len())?;
        self.plan.forward(physical, spectral)?;
        let scale = 1.0 / self.modes.iter().product::<usize>() as f64;
        for z in spectral.iter_mut() {
            *z *= scale;
        }
        Ok(())
    }

    /// The grid values of every component of the trigonometric polynomial with coefficients
    /// `spectral` (collective; one batched transform; `spectral` is not modified).
    pub fn backward(&mut self, spectral: &[Complex<f64>], physical: &mut [f64]) -> Result<()> {
        self.check(physical.len(), spectral.len())?;
        Ok(self.plan.backward(spectral, physical)?)
    }

    fn check(&self, physical: usize, spectral: usize) -> Result<()> {
        if physical != self.physical_len() {
            return Err(SolverError::BufferLength {
                buffer: "physical",
                expected: self.physical_len(),
                actual: physical,
            });
        }
        if spectral != self.spectral_len() {
            return Err(SolverError::BufferLength {
                buffer: "spectral",
                expected: self.spectral_len(),
                actual: spectral,
            });
        }
        Ok(())
    }

    /// `Σ_k weight·f(k)` over this rank's spectral elements and then over all ranks
    /// (collective): e.g. the mean of `|u|²` over the box is `Σ_k weight·|û_k|²` (Parseval).
    pub fn sum_over_modes(&self, f: impl Fn(usize) -> f64) -> f64 {
        let local: f64 = (0..self.spectral_block())
            .map(|i| self.weight[i] * f(i))
            .sum();
        self.sum_over_ranks(local)
    }

    /// The communicator of the box's processes (its grid's).
    pub fn communicator(&self) -> &mpi::topology::SimpleCommunicator {
        self.plan.grid().communicator()
    }

    /// The sum of `local` over all ranks (collective).
    pub fn sum_over_ranks(&self, local: f64) -> f64 {
        let mut global = 0.0;
        self.plan.grid().communicator().all_reduce_into(
            &local,
            &mut global,
            SystemOperation::sum(),
        );
        global
    }

    /// The maximum of `local` over all ranks (collective).
    pub fn max_over_ranks(&self, local: f64) -> f64 {
        let mut global = 0.0;
        self.plan.grid().communicator().all_reduce_into(
            &local,
            &mut global,
            SystemOperation::max(),
        );
        global
    }
}
