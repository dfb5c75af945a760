//! `poisson`: solves ∇²u = f on the periodic box [0, 2π)³ for a manufactured solution and
//! prints the error. Run it under `mpirun -n P` or alone.

use clap::Parser;
use fft_core::GridChoice;
use mpi::topology::Communicator;
use solvers::cli::{parse_non_negative, parse_or_exit, parse_shape, run_under_mpi};
use solvers::poisson::{solve_manufactured, ManufacturedSolution};
use solvers::SolverError;

/// Periodic 3-D Poisson solver checked on a manufactured solution (see docs/solvers.md).
#[derive(Debug, Parser)]
#[command(name = "poisson", version, allow_negative_numbers = true)]
struct Args {
    /// Grid points per axis: N (a cube) or N0,N1,N2; at least 7 per axis.
    #[arg(long, default_value = "64", value_parser = parse_poisson_shape)]
    shape: [usize; 3],
    /// Processor grid: auto, a grid rank (1, 2) or dimensions (4x2).
    #[arg(long, default_value = "auto")]
    grid: GridChoice,
    /// The run fails (status 1) when max|u − u_exact| / max|u_exact| exceeds this (a finite
    /// number >= 0).
    #[arg(long, default_value_t = 1e-12, value_parser = parse_non_negative)]
    tolerance: f64,
    /// One JSON line instead of text.
    #[arg(long)]
    json: bool,
}

/// `--shape` with at least `2·MAX_WAVENUMBER + 1` points per axis (a usage error otherwise).
fn parse_poisson_shape(s: &str) -> Result<[usize; 3], String> {
    let shape = parse_shape(s)?;
    let min = 2 * ManufacturedSolution::MAX_WAVENUMBER + 1;
    match shape.iter().find(|&&n| n < min) {
        Some(n) => Err(format!(
            "every axis length must be at least {min} (the manufactured solution has |k| = {}), got {n}",
            ManufacturedSolution::MAX_WAVENUMBER
        )),
        None => Ok(shape),
    }
}

fn main() {
    let args: Args = parse_or_exit("poisson");
    run_under_mpi("poisson", |world| {
        let e = solve_manufactured(world, args.shape, args.grid.clone())?;
        let relative = e.max_error / e.max_solution;
        if world.rank() == 0 {
            if args.json {
                let line = serde_json::json!({
                    "solver": "poisson",
                    "ranks": world.size(),
                    "shape": args.shape,
                    "grid": e.process_grid,
                    "max_error": e.max_error,
                    "relative_error": relative,
                    "solve_s": e.solve_s,
                });
                println!("{line}");
            } else {
                println!(
                    "poisson {:?} on {} ranks: max|u - u_exact| = {:.3e} (relative {:.3e}), solve {:.4} s",
                    args.shape,
                    world.size(),
                    e.max_error,
                    relative,
                    e.solve_s
                );
            }
        }
        if relative.is_nan() || relative > args.tolerance {
            return Err(SolverError::Verification {
                what: "relative max error",
                value: relative,
                tolerance: args.tolerance,
            });
        }
        Ok(())
    })
}
