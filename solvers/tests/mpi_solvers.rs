//! The solvers under real MPI on 1, 2 and 4 ranks, against exact answers:
//!
//! * Poisson: a manufactured solution on uneven, non-cubic grids (odd and even sizes), every
//!   grid rank: error at round-off level.
//! * Navier–Stokes, Beltrami (ABC) flow, plain and carried by a uniform velocity (which makes
//!   the nonlinear term and the projection do real work): the velocity must equal RK4's exact
//!   amplification of every Fourier mode to round-off, and the exact solution within RK4's
//!   truncation error; the divergence stays at round-off.
//! * Navier–Stokes, Taylor–Green vortex at 16³: energy and dissipation at t = 0, 0.2, …, 1
//!   against the values recorded in docs/solvers.md, `dE/dt = −ε` to the time-stepping error,
//!   and a second run from the same start must be bit-identical (no hidden state).
//! * A Navier–Stokes step allocates nothing (a counting global allocator; one rayon thread per
//!   rank, as the harness runs it: with more threads rayon's job queue allocates a block now
//!   and then, amortized over many jobs).

use fft_core::GridChoice;
use mpi::topology::Communicator;
use solvers::flows::{Beltrami, TaylorGreen};
use solvers::navier_stokes::{NavierStokes, Parameters};
use solvers::poisson::solve_manufactured;
use solvers::Dealias;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting allocations (all threads).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const BODY: &str = "solvers_body";

mpi_harness::launches!(BODY, 120; solvers_np1 => 1, solvers_np2 => 2, solvers_np4 => 4);

#[test]
#[ignore = "MPI body: run by the solvers_np* launchers under mpirun"]
fn solvers_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();

    poisson(&world);
    beltrami(&world);
    taylor_green(&world);
    steps_allocate_nothing(&world);

    mpi.pass();
}

fn poisson(world: &impl Communicator) {
    for modes in [[11, 7, 13], [16, 12, 20]] {
        for grid in [GridChoice::Rank(1), GridChoice::Rank(2)] {
            let e = solve_manufactured(world, modes, grid.clone()).unwrap();
            let relative = e.max_error / e.max_solution;
            if world.rank() == 0 {
                println!("poisson {modes:?} grid {grid}: relative max error {relative:.3e}");
            }
            assert!(
                relative < 1e-13,
                "poisson {modes:?} grid {grid}: relative error {relative:e}"
            );
        }
    }
}

fn beltrami(world: &impl Communicator) {
    let (nu, dt, steps) = (0.05, 0.05, 10);
    let flows = [
        Beltrami {
            amplitudes: [1.0, 0.7, 0.4],
            kappa: 1,
            mean: [0.0; 3],
        },
        Beltrami {
            amplitudes: [0.9, -0.6, 0.5],
            kappa: 2,
            mean: [0.3, -0.2, 0.1],
        },
    ];
    // Even and odd sizes (the padded grid of 15×12×9 modes is 22×18×13), slabs and pencils.
    let cases = [
        (&flows[0], [12, 10, 14], Dealias::Pad, GridChoice::Rank(1)),
        (&flows[1], [15, 12, 9], Dealias::Pad, GridChoice::Rank(2)),
        (
            &flows[1],
            [15, 12, 9],
            Dealias::Truncate,
            GridChoice::Rank(1),
        ),
    ];
    for (flow, modes, dealias, grid) in cases {
        let params = Parameters {
            modes,
            nu,
            dt,
            dealias,
            grid,
        };
        let what = format!("beltrami {flow:?} {params:?}");
        let mut ns = NavierStokes::new(world, params).unwrap();
        ns.space().check_resolves("beltrami", flow.kappa).unwrap();
        ns.set_velocity(|x| flow.velocity(x, 0.0, nu)).unwrap();
        let initial = ns.velocity_hat().to_vec();
        for _ in 0..steps {
            ns.step().unwrap();
        }

        // Every mode was multiplied by exactly RK4's amplification factor R(z)ⁿ.
        let space = ns.space();
        let block = space.spectral_block();
        let mut discrete = 0.0f64;
        for (i, (&now, &then)) in ns.velocity_hat().iter().zip(&initial).enumerate() {
            let m = i % block;
            let k = [space.k[0][m], space.k[1][m], space.k[2][m]];
            let want = then * flow.rk4_factor(k, nu, dt, steps);
            discrete = discrete.max((now - want).norm());
        }
        let discrete = space.max_over_ranks(discrete);
        let divergence = ns.max_divergence();

        // And the exact solution within RK4's truncation error.
        let t = ns.time();
        let exact = ns.max_error(|x| flow.velocity(x, t, nu)).unwrap();
        let bound = flow.rk4_error_bound(nu, dt, steps);
        if world.rank() == 0 {
            println!(
                "{what}: |û − R(z)ⁿû₀| = {discrete:.2e}, |u − exact| = {exact:.3e} \
                 (RK4 bound {bound:.3e}), max|k·û| = {divergence:.1e}"
            );
        }
        assert!(
            discrete < 1e-14,
            "{what}: differs from RK4's amplification by {discrete:e}"
        );
        assert!(divergence < 1e-14, "{what}: divergence {divergence:e}");
        assert!(
            exact <= bound + 1e-13,
            "{what}: error {exact:e} > RK4 bound {bound:e}"
        );
    }
}

/// Taylor–Green vortex, 16³ modes, ν = 0.01, dt = 0.02, 3/2-rule dealiasing (24³ grid):
/// (step, energy, dissipation) every 10 steps, as recorded in docs/solvers.md.
const TAYLOR_GREEN_16_PAD: [(u64, f64, f64); 6] = [
    (0, 1.25e-1, 7.5e-3),
    (10, 1.235069265857785e-1, 7.440891529175818e-3),
    (20, 1.220197197295841e-1, 7.440700688661293e-3),
    (30, 1.205269209914472e-1, 7.496427229255093e-3),
    (40, 1.190175465672614e-1, 7.606201046947076e-3),
    (50, 1.174809348386476e-1, 7.768550338795226e-3),
];

/// The same with 2/3-rule dealiasing (16³ grid), as recorded in docs/solvers.md.
const TAYLOR_GREEN_16_TRUNCATE: [(u64, f64, f64); 6] = [
    (0, 1.25e-1, 7.5e-3),
    (10, 1.235069265857802e-1, 7.440891529102461e-3),
    (20, 1.220197197319206e-1, 7.44070062660015e-3),
    (30, 1.205269211560751e-1, 7.496424394576743e-3),
    (40, 1.190175496304276e-1, 7.606162895272764e-3),
    (50, 1.174809618801505e-1, 7.768292631229309e-3),
];

fn taylor_green(world: &impl Communicator) {
    taylor_green_against(world, Dealias::Pad, &TAYLOR_GREEN_16_PAD);
    taylor_green_against(world, Dealias::Truncate, &TAYLOR_GREEN_16_TRUNCATE);
}

fn taylor_green_against(world: &impl Communicator, dealias: Dealias, recorded: &[(u64, f64, f64)]) {
    let params = Parameters {
        modes: [16, 16, 16],
        nu: 0.01,
        dt: 0.02,
        dealias,
        grid: GridChoice::Auto,
    };
    let dt = params.dt;
    let mut ns = NavierStokes::new(world, params).unwrap();
    let mut runs = Vec::new();
    for _ in 0..2 {
        ns.set_velocity(|x| TaylorGreen.velocity(x)).unwrap();
        let mut history = vec![(ns.energy(), ns.dissipation())];
        for _ in 0..50 {
            ns.step().unwrap();
            history.push((ns.energy(), ns.dissipation()));
        }
        runs.push(history);
    }
    assert!(
        runs[0] == runs[1],
        "a second run from the same start differs"
    );
    let history = &runs[0];
    for &(step, energy, dissipation) in recorded {
        let (e, eps) = history[step as usize];
        if world.rank() == 0 {
            println!("taylor-green {dealias:?} step {step}: E = {e:.15e}, eps = {eps:.15e}");
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        assert!(
            close(e, energy),
            "step {step}: E = {e:e}, recorded {energy:e}"
        );
        assert!(
            close(eps, dissipation),
            "step {step}: eps = {eps:e}, recorded {dissipation:e}"
        );
    }
    // Energy balance dE/dt = −ε: E_n − E_{n+2} = ∫ε dt over two steps, by Simpson's rule
    // (its error, ~(2dt)⁵ max|ε⁗|/2880, and RK4's are far below the tolerance).
    for (n, w) in history.windows(3).enumerate() {
        let lost = w[0].0 - w[2].0;
        let simpson = 2.0 * dt / 6.0 * (w[0].1 + 4.0 * w[1].1 + w[2].1);
        assert!(
            (lost - simpson).abs() < 1e-9 * simpson,
            "steps {n}..{}: E lost {lost:e} but ∫ε dt = {simpson:e}",
            n + 2
        );
    }
}

fn steps_allocate_nothing(world: &impl Communicator) {
    for (dealias, grid) in [
        (Dealias::Pad, GridChoice::Rank(2)),
        (Dealias::Truncate, GridChoice::Rank(1)),
    ] {
        let params = Parameters {
            modes: [12, 10, 9],
            nu: 0.01,
            dt: 0.01,
            dealias,
            grid,
        };
        let mut ns = NavierStokes::new(world, params).unwrap();
        ns.set_velocity(|x| TaylorGreen.velocity(x)).unwrap();
        ns.step().unwrap();
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..3 {
            ns.step().unwrap();
        }
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert_eq!(
            allocations, 0,
            "{dealias:?}: 3 steps allocated {allocations} times"
        );
    }
}
