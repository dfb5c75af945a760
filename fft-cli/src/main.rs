//! `dfft`: distributed FFTs from the command line. Run it under `mpirun -n P` or `srun`, or
//! alone as a single process.

mod args;
mod bench_redist;
mod calibrate_anchor;
mod calibrate_cmd;
mod execute;
mod fatal;
#[cfg(feature = "fault-injection")]
mod fault;
mod files;
/// Without the `fault-injection` feature (every build users run) no fault can be injected.
#[cfg(not(feature = "fault-injection"))]
mod fault {
    pub fn panic_rank() -> Option<usize> {
        None
    }
    pub fn deliberate_panic(_rank: usize) -> ! {
        unreachable!("fault injection is compiled out")
    }
    pub fn perturbation() -> Option<f64> {
        None
    }
}
mod agreement;
mod calibrate_fit;
mod kind;
mod logging;
mod machine;
mod memory;
mod memory_limit;
mod plan_cmd;
mod profile_cache;
mod progress;
mod provenance;
mod redist_cmd;
mod report;
mod run;
mod steps;
mod synthetic;
mod threads;
mod transform;

use clap::Parser;
use mpi::topology::Communicator;

/// A failed allocation anywhere in dfft is one line and exit status 1 (see [`fatal`]).
#[global_allocator]
static ALLOCATOR: fatal::ExitOnOom = fatal::ExitOnOom;

fn main() {
    let cli = parse_or_exit();
    logging::init();
    // `dfft plan` is the model alone: it runs without MPI.
    if let args::Command::Plan(plan_args) = &cli.command {
        // --axes that the shape does not have: a usage error (status 2).
        if let (Some(axes), Some(shape)) = (&plan_args.axes, &plan_args.shape) {
            if let Err(e) =
                fft_core::AxisKind::partial(shape.0.len(), axes, fft_core::AxisKind::Fft)
            {
                usage_exit(&format!("dfft: error: --axes: {e}"));
            }
        }
        match plan_cmd::plan(plan_args) {
            Ok(()) => std::process::exit(0),
            Err(e) => {
                eprintln!("dfft: error: {e}");
                std::process::exit(1);
            }
        }
    }
    // `dfft redist` checks its SPECs before MPI starts: a usage error, printed once, status 2.
    if let args::Command::Redist(a) = &cli.command {
        if let Err(e) = redist_cmd::validate(a, redist_cmd::launcher_size()) {
            usage_exit(&format!("dfft: error: {e}"));
        }
    }
    let code = run_under_mpi(&cli);
    std::process::exit(code);
}

/// Parses before MPI starts so a usage error is printed once (by rank 0 of the launch) and
/// exits with status 2 on every rank, without any communication.
fn parse_or_exit() -> args::Cli {
    match args::Cli::try_parse().and_then(args::Cli::check) {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            if cli_common::launcher_rank().unwrap_or(0) == 0 {
                if e.use_stderr() {
                    // One line naming the argument, e.g. "dfft: error: invalid value '0,4'
                    // for '--shape <SHAPE>': ...", instead of clap's multi-line block.
                    eprintln!("{}", args::one_line_error(&e));
                } else {
                    let _ = e.print(); // --help, --version
                }
            } else if code != 0 {
                // mpirun ends the job at the first non-zero exit; give rank 0's message time
                // to reach the launcher before this rank's exit can cut it off.
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            std::process::exit(code);
        }
    }
}

/// A usage error found before MPI starts: rank 0 of the launch prints `line`, every rank
/// exits with status 2.
fn usage_exit(line: &str) -> ! {
    if cli_common::launcher_rank().unwrap_or(0) == 0 {
        eprintln!("{line}");
    } else {
        // Let rank 0's message reach the launcher before this exit ends the job.
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    std::process::exit(2);
}

/// Starts MPI, runs the command and finalizes; the exit status (runtime errors: 1, printed
/// once by rank 0).
fn run_under_mpi(cli: &args::Cli) -> i32 {
    let universe = match mpi::initialize() {
        Some(u) => u,
        None => {
            eprintln!("dfft: MPI was already initialized");
            std::process::exit(1);
        }
    };
    redist::comm::abort_on_panic();
    // A failed MPI call (a shared window that cannot be mapped, say) is one line and exit 1,
    // on every communicator made from the world.
    fatal::exit_on_mpi_errors();
    // INT/TERM/HUP remove the temporary output and exit non-zero; a rank whose launcher died
    // stops instead of finishing and publishing.
    npyio::guard::install("dfft", cli_common::launcher_rank().is_some());
    // OpenMPI's wait between the SIGCONT and the SIGTERM that end a job, if set (mpirun
    // passes its MCA parameters on): outputs are held back that long and a second more.
    if let Some(secs) = std::env::var("OMPI_MCA_odls_base_sigkill_timeout")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        npyio::guard::set_continue_hold(std::time::Duration::from_secs(secs.min(600) + 1));
    }
    let world = universe.world();
    fatal::set_rank(world.rank());
    // Before anything collective: every later decision assumes the same arguments everywhere.
    if let Err(e) = agreement::same_arguments(&world) {
        if world.rank() == 0 {
            eprintln!("dfft: error: {e} (see --help)");
        }
        return 2;
    }
    if let Err(e) = start_threads(&world, cli) {
        if world.rank() == 0 {
            eprintln!("dfft: error: {e}");
        }
        return 1;
    }
    let result = match &cli.command {
        args::Command::Run(run_args) => run::run(&world, run_args).map_err(|e| e.to_string()),
        args::Command::Plan(_) => unreachable!("dfft plan returned before MPI started"),
        args::Command::Calibrate(a) => {
            calibrate_cmd::calibrate(&world, a).map_err(|e| e.to_string())
        }
        args::Command::BenchRedist(a) => {
            bench_redist::bench_redist(&world, a).map_err(|e| e.to_string())
        }
        args::Command::Redist(a) => redist_cmd::redist(&world, a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            // Errors come from global arguments or collective agreement, so every rank has
            // the same one; rank 0 reports it.
            if world.rank() == 0 {
                eprintln!("dfft: error: {e}");
            }
            1
        }
    }
    // `universe` drops here: MPI_Finalize on every rank.
}

/// Sizes this rank's thread pool (`--threads`, `RAYON_NUM_THREADS` or the default), the
/// ranks agreeing on the outcome: a pool that cannot start on any rank is an error on every
/// rank. Collective.
fn start_threads(world: &mpi::topology::SimpleCommunicator, cli: &args::Cli) -> Result<(), String> {
    let requested = match &cli.command {
        args::Command::Run(a) => a.threads,
        args::Command::BenchRedist(a) => a.threads,
        args::Command::Redist(a) => a.threads,
        _ => None,
    };
    let env = std::env::var("RAYON_NUM_THREADS").ok();
    let started = threads::configure(threads::choose(world, requested, env.as_deref()));
    agreement::agree(world, started)
}
