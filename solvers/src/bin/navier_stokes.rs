//! `navier-stokes`: pseudo-spectral incompressible Navier–Stokes on [0, 2π)³ (rotational form,
//! dealiased, RK4), from the Taylor–Green vortex or an exact Beltrami (ABC) flow. Prints the
//! kinetic energy and dissipation over time, the time per step and, for the Beltrami flow,
//! the error against the exact solution. Run it under `mpirun -n P` or alone.

use clap::Parser;
use fft_core::GridChoice;
use mpi::topology::Communicator;
use solvers::cli::{
    parse_non_negative, parse_or_exit, parse_positive, parse_shape, parse_vector, run_under_mpi,
};
use solvers::flows::{Beltrami, FlowKind, TaylorGreen};
use solvers::navier_stokes::{NavierStokes, Parameters};
use solvers::{Dealias, SolverError};
use std::path::PathBuf;
use std::time::Instant;

/// Pseudo-spectral Navier–Stokes on the periodic box (see docs/solvers.md).
#[derive(Debug, Parser)]
#[command(name = "navier-stokes", version, allow_negative_numbers = true)]
struct Args {
    /// Initial condition: taylor-green (tgv) or beltrami (abc; exact solution known).
    #[arg(long, default_value = "taylor-green")]
    flow: FlowKind,
    /// Fourier modes per axis: N (a cube) or N0,N1,N2.
    #[arg(long, default_value = "32", value_parser = parse_shape)]
    shape: [usize; 3],
    /// Kinematic viscosity ν ≥ 0 (Taylor–Green: Re = 1/ν).
    #[arg(long, default_value_t = 0.01, value_parser = parse_non_negative)]
    nu: f64,
    /// Time step (> 0).
    #[arg(long, default_value_t = 0.01, value_parser = parse_positive)]
    dt: f64,
    /// Number of time steps (at most 100000000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=MAX_STEPS))]
    steps: u64,
    /// Print the diagnostics every this many steps (and after the last one); at least 1.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Dealiasing: truncate (2/3 rule) or none.
    #[arg(long, default_value = "pad")]
    dealias: Dealias,
    /// Processor grid: auto, a grid rank (1, 2) or dimensions (4x2).
    #[arg(long, default_value = "auto")]
    grid: GridChoice,
    /// Beltrami flow: wavenumber κ.
    #[arg(long, default_value_t = 1)]
    kappa: u64,
    /// Beltrami flow: amplitudes A,B,C.
    #[arg(long, default_value = "1,0.7,0.4", value_parser = parse_vector)]
    amplitudes: [f64; 3],
    /// Beltrami flow: uniform velocity U carrying it.
    #[arg(long, default_value = "0,0,0", value_parser = parse_vector)]
    mean: [f64; 3],
    /// Write the state to this HDF5 file at the end (and every --checkpoint-every steps),
    /// replacing it only once the new one is complete.
    #[arg(long, value_name = "FILE.h5")]
    checkpoint: Option<PathBuf>,
    /// With --checkpoint: also write it every this many steps; at least 1.
    #[arg(long, requires = "checkpoint", value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_every: Option<u64>,
    /// Start from this checkpoint instead of the initial condition (the same --shape; --steps
    /// more steps are taken). With the same ranks, grid and --dt the run continues
    /// bit-identically.
    #[arg(long, value_name = "FILE.h5")]
    restart: Option<PathBuf>,
    /// JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

/// The most time steps a run takes: its per-step timings are kept for the median.
const MAX_STEPS: u64 = 100_000_000;

fn main() {
    let args: Args = parse_or_exit("navier-stokes");
    run_under_mpi("navier-stokes", |world| run(world, &args))
}

fn run(world: &mpi::topology::SimpleCommunicator, args: &Args) -> Result<(), SolverError> {
    let beltrami = Beltrami {
        amplitudes: args.amplitudes,
        kappa: args.kappa,
        mean: args.mean,
    };
    let mut ns = start(world, args, &beltrami)?;
    let root = world.rank() == 0;
    if root && !args.json {
        print_header(&ns, world.size(), args);
    }
    report(&ns, root, args.json)?;
    let before = ns.space().transform_times();
    let step_s = march(&mut ns, root, args)?;
    summarize(
        &mut ns,
        world.size(),
        (before, step_s),
        &beltrami,
        root,
        args,
    )
}

/// The solver with its initial condition: the flow's, or the checkpoint's with `--restart`.
fn start(
    world: &mpi::topology::SimpleCommunicator,
    args: &Args,
    beltrami: &Beltrami,
) -> Result<NavierStokes, SolverError> {
    let params = Parameters {
        modes: args.shape,
        nu: args.nu,
        dt: args.dt,
        dealias: args.dealias,
        grid: args.grid.clone(),
    };
    let needed = match args.flow {
        FlowKind::TaylorGreen => TaylorGreen::MAX_WAVENUMBER,
        FlowKind::Beltrami => beltrami.kappa,
    };
    let mut ns = NavierStokes::new(world, params)?;
    ns.space().check_resolves(args.flow.name(), needed)?;
    match (&args.restart, args.flow) {
        (Some(path), _) => {
            solvers::checkpoint::read(&mut ns, path)?;
        }
        (None, FlowKind::TaylorGreen) => ns.set_velocity(|x| TaylorGreen.velocity(x))?,
        (None, FlowKind::Beltrami) => ns.set_velocity(|x| beltrami.velocity(x, 0.0, args.nu))?,
    }
    Ok(ns)
}

/// The text run's first lines (rank 0).
fn print_header(ns: &NavierStokes, ranks: i32, args: &Args) {
    println!(
        "navier-stokes: {} flow, {:?} modes on {:?} grid points, {} ranks (grid {:?}), nu = {}, dt = {}, dealias {}",
        args.flow.name(),
        args.shape,
        ns.space().grid_points(),
        ranks,
        ns.space().process_grid(),
        args.nu,
        args.dt,
        args.dealias.name()
    );
    if let Some(path) = &args.restart {
        println!(
            "restarted from {} at step {} (t = {})",
            path.display(),
            ns.steps(),
            ns.time()
        );
    }
    println!(
        "{:>8} {:>10} {:>22} {:>22} {:>10}",
        "step", "t", "energy", "dissipation", "max|k.u|"
    );
}

/// The diagnostics of the current step, printed by rank 0. They are sums and maxima over all
/// modes and ranks, so a NaN or Inf anywhere in the field shows in them on every rank alike:
/// the run stops there (exit 1).
fn report(ns: &NavierStokes, root: bool, json: bool) -> Result<(), SolverError> {
    let (e, eps, div) = (ns.energy(), ns.dissipation(), ns.max_divergence());
    for (quantity, value) in [("energy", e), ("dissipation", eps), ("divergence", div)] {
        if !value.is_finite() {
            return Err(SolverError::NonFinite {
                quantity,
                value,
                step: ns.steps(),
                time: ns.time(),
            });
        }
    }
    if root {
        if json {
            let line = serde_json::json!({
                "step": ns.steps(), "t": ns.time(), "energy": e, "dissipation": eps,
                "max_divergence": div,
            });
            println!("{line}");
        } else {
            println!(
                "{:>8} {:>10.4} {:>22.15e} {:>22.15e} {:>10.2e}",
                ns.steps(),
                ns.time(),
                e,
                eps,
                div
            );
        }
    }
    Ok(())
}

/// Takes `--steps` steps, reporting and writing checkpoints as asked; the seconds of each.
fn march(ns: &mut NavierStokes, root: bool, args: &Args) -> Result<Vec<f64>, SolverError> {
    let mut step_s = Vec::new();
    for step in 1..=args.steps {
        let start = Instant::now();
        ns.step()?;
        step_s.push(start.elapsed().as_secs_f64());
        // Counted in the run's steps, so a restarted run reports where one that never
        // stopped would.
        if ns.steps().is_multiple_of(args.every) || step == args.steps {
            report(ns, root, args.json)?;
        }
        if let (Some(path), Some(every)) = (&args.checkpoint, args.checkpoint_every) {
            if ns.steps().is_multiple_of(every) && step != args.steps {
                solvers::checkpoint::write(ns, path)?;
            }
        }
    }
    if let Some(path) = &args.checkpoint {
        solvers::checkpoint::write(ns, path)?;
    }
    Ok(step_s)
}

/// The run's summary (times per step, the transforms' stages, and for a Beltrami flow its
/// error against the exact solution), printed by rank 0; `before`: the transforms' times
/// before the steps, `step_s` the steps' seconds.
fn summarize(
    ns: &mut NavierStokes,
    ranks: i32,
    (before, mut step_s): (fft_core::StageTimes, Vec<f64>),
    beltrami: &Beltrami,
    root: bool,
    args: &Args,
) -> Result<(), SolverError> {
    let after = ns.space().transform_times();
    let per_step = |a: f64, b: f64| {
        ns.space()
            .max_over_ranks((a - b) / args.steps.max(1) as f64)
    };
    let transforms = serde_json::json!({
        "fft_s": per_step(after.fft, before.fft),
        "pack_s": per_step(after.pack, before.pack),
        "comm_s": per_step(after.comm, before.comm),
        "unpack_s": per_step(after.unpack, before.unpack),
    });
    step_s.sort_by(f64::total_cmp);
    let min_s = ns
        .space()
        .max_over_ranks(step_s.first().copied().unwrap_or(0.0));
    let median_s = ns
        .space()
        .max_over_ranks(step_s.get(step_s.len() / 2).copied().unwrap_or(0.0));
    let mut summary = serde_json::json!({
        "summary": true,
        "flow": args.flow.name(),
        "ranks": ranks,
        "grid": ns.space().process_grid(),
        "modes": args.shape,
        "grid_points": ns.space().grid_points(),
        "dealias": args.dealias.name(),
        "nu": args.nu, "dt": args.dt, "steps": args.steps,
        "step_min_s": min_s,
        "step_median_s": median_s,
        "transforms_per_step": transforms,
    });
    if args.flow == FlowKind::Beltrami {
        let t = ns.time();
        let error = ns.max_error(|x| beltrami.velocity(x, t, args.nu))?;
        let bound = beltrami.rk4_error_bound(args.nu, args.dt, ns.steps());
        summary["max_error"] = error.into();
        summary["rk4_error_bound"] = bound.into();
    }
    if root {
        if args.json {
            println!("{summary}");
        } else {
            println!(
                "time per step: min {:.4} s, median {:.4} s (max over ranks); transforms per step (mean): {}",
                min_s, median_s, summary["transforms_per_step"]
            );
            if let Some(e) = summary.get("max_error") {
                println!(
                    "max |u - u_exact| = {:.3e} (RK4 time-stepping bound {:.3e})",
                    e.as_f64().unwrap_or(f64::NAN),
                    summary["rk4_error_bound"].as_f64().unwrap_or(f64::NAN)
                );
            }
        }
    }
    Ok(())
}
