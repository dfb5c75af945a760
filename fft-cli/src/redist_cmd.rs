//! `dfft redist`: redistribute an index-valued array between two block-cyclic distributions
//! (Dongarra et al.; Thakur et al.; Parallel ESSL), verify it exactly on every rank and time it.
//!
//! A SPEC is `grid=AxB…,order=row|col,dist=D0,D1,…` with one distribution per axis
//! (`block`, `balanced`, `cyclic`, `cyclic(r)`, `*`) and one grid dimension per distributed
//! axis; see `redist::dist::DistArray::parse_spec`. Validation depends only on the command
//! line, so it runs before MPI starts ([`validate`]) and every rank agrees.

use clap::Args;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use num_complex::Complex;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule, DEFAULT_PACKET};
use redist::cyclic::thakur::{self, AxisMethod, Receive, ThakurMethod};
use redist::dist::DistArray;
use redist::{Element, RedistError, StageTimes};
use serde::Serialize;
use std::time::Instant;

/// Element type of `dfft redist`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// 64-bit floats (ScaLAPACK's `pdgemr2d`).
    F64,
    /// Complex 128-bit.
    C128,
}

/// Arguments of `dfft redist`.
#[derive(Debug, Args)]
#[command(
    after_help = "SPEC: comma-separated key=value items\n  grid=AxB...        one dimension per \
distributed axis (default all 1; ranks beyond the grid own nothing)\n  order=row|col      how \
ranks fill the grid (default row; BLACS' default is row)\n  dist=D0,D1,...     per axis: \
block (L=ceil(M/P)), balanced, cyclic, cyclic(r), * (not distributed); one entry applies to \
every axis\nLocal arrays are C order over local indices (ScaLAPACK local layout per axis).\n\n\
Examples:\n  mpirun -n 2 dfft redist --shape 8192,8192 --from 'grid=2x1,dist=cyclic(36)' --to \
'grid=1x2,dist=cyclic(128)'\n  mpirun -n 6 dfft redist --shape 1000,1000 --from \
'grid=2x3,order=col,dist=cyclic(4),block' --to 'grid=6,dist=cyclic(16),*' --method async --json\n  \
mpirun -n 4 dfft redist --shape 4096,4096 --from 'grid=1x1,dist=block' --to \
'grid=2x2,dist=cyclic(64)'   # scatter from rank 0"
)]
pub struct RedistArgs {
    /// Global shape, comma-separated (axis 0 slowest), e.g. 8192,8192; one axis is allowed.
    #[arg(long, value_parser = parse_shape_1d)]
    pub shape: Shape,
    /// Source distribution SPEC, e.g. 'grid=2x3,order=row,dist=cyclic(36),cyclic(36)'.
    #[arg(long)]
    pub from: String,
    /// Destination distribution SPEC.
    #[arg(long)]
    pub to: String,
    /// Schedule: alltoallv, caterpillar, async, pipelined or shared (one node: pack straight
    /// into the receivers' buffers in a shared-memory window; else alltoallv).
    #[arg(long, default_value = "alltoallv")]
    pub method: Schedule,
    /// Instead of the general planner, Thakur's method along the one axis that changes
    /// (the others, the grid and its order unchanged): ky_to_y, x_to_kx, gcd, lcm, general.
    #[arg(long)]
    pub thakur: Option<ThakurMethod>,
    /// Receive mode of --thakur: sync (wait for all, then unpack) or async (unpack each
    /// message as it arrives).
    #[arg(long, default_value = "async")]
    pub receive: Receive,
    /// Packet length in elements of the pipelined schedule.
    #[arg(long, default_value_t = DEFAULT_PACKET, value_parser = clap::value_parser!(usize))]
    pub packet: usize,
    /// Timed redistributions.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=crate::args::MAX_COUNT))]
    pub iters: u64,
    /// Untimed redistributions before timing.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=crate::args::MAX_COUNT))]
    pub warmup: u64,
    /// Element type.
    #[arg(long, value_enum, default_value = "f64")]
    pub dtype: Dtype,
    /// Print one JSON object on one line (rank 0) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Threads per rank (default: the cores this rank may use divided by the ranks sharing
    /// them on its node).
    #[arg(long, value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
}

/// A global shape of any number of axes (one is allowed, unlike `dfft run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape(pub Vec<usize>);

/// Parses `8192,8192` or `1000000` (also `AxB`).
fn parse_shape_1d(s: &str) -> Result<Shape, String> {
    cli_common::parse_shape(s).map(Shape)
}

/// Resolves both SPECs against the shape and, when `ranks` is known, checks that both grids
/// fit in it. Depends only on the command line, so every rank gets the same answer.
pub fn validate(
    args: &RedistArgs,
    ranks: Option<usize>,
) -> Result<(DistArray, DistArray), RedistError> {
    let from = DistArray::parse_spec(&args.from, &args.shape.0)?;
    let to = DistArray::parse_spec(&args.to, &args.shape.0)?;
    if let Some(ranks) = ranks {
        RedistPlan::new(&from, &to, ranks)?;
    }
    if let Some(method) = args.thakur {
        AxisMethod::new(&from, &to, method)?;
    }
    Ok((from, to))
}

/// The process count the launcher announced, if any (to validate before MPI starts).
pub fn launcher_size() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_SIZE",
        "SLURM_NTASKS",
        "PMI_SIZE",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// What `dfft redist --json` prints.
#[derive(Debug, Serialize)]
pub struct RedistReport {
    /// MPI processes.
    pub ranks: usize,
    /// Global shape.
    pub shape: Vec<usize>,
    /// Source SPEC (normalized).
    pub from: String,
    /// Destination SPEC (normalized).
    pub to: String,
    /// Schedule, or `thakur-METHOD-RECEIVE` with --thakur.
    pub method: String,
    /// Element type.
    pub dtype: Dtype,
    /// Timed iterations.
    pub iters: u64,
    /// Fastest redistribution, max over ranks.
    pub min_s: f64,
    /// Median redistribution, max over ranks.
    pub median_s: f64,
    /// Bytes that change rank (own parts excluded), summed over ranks.
    pub bytes_moved: usize,
    /// Misplaced elements after the last iteration, summed over ranks.
    pub wrong: u64,
    /// Mean seconds per redistribution packing, max over ranks (absent with --thakur).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pack_s: Option<f64>,
    /// Mean seconds per redistribution in MPI calls, max over ranks (absent with --thakur).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_s: Option<f64>,
    /// Mean seconds per redistribution unpacking (and copying the own part), max over ranks
    /// (absent with --thakur).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpack_s: Option<f64>,
    /// Seconds to plan (per-axis merge scans and copy maps), max over ranks; with --thakur
    /// the checks only (its methods compute their sets in every call).
    pub plan_s: f64,
}

impl RedistReport {
    /// One JSON object on one line, in the common schema (see `report`).
    pub fn to_json(&self, provenance: &crate::provenance::Provenance) -> String {
        let problem = serde_json::json!({
            "shape": self.shape,
            "ranks": self.ranks,
            "from": self.from,
            "to": self.to,
            "method": self.method,
            "dtype": self.dtype,
            "iters": self.iters,
        });
        let result = serde_json::json!({
            "min_s": self.min_s,
            "median_s": self.median_s,
            "bytes_moved": self.bytes_moved,
            "wrong": self.wrong,
            "stages": match (self.pack_s, self.comm_s, self.unpack_s) {
                (Some(p), Some(c), Some(u)) => serde_json::json!({"pack_s": p, "comm_s": c, "unpack_s": u}),
                _ => serde_json::Value::Null,
            },
            "plan_s": self.plan_s,
        });
        crate::report::envelope("redist", problem, result, provenance)
    }
}

/// Runs `dfft redist` on `world`.
pub fn redist(world: &SimpleCommunicator, args: &RedistArgs) -> Result<(), String> {
    match args.dtype {
        Dtype::F64 => run::<f64>(world, args, |g| g as f64),
        Dtype::C128 => run::<Complex<f64>>(world, args, |g| Complex::new(g as f64, -(g as f64))),
    }
}

fn run<T: Element + PartialEq>(
    world: &SimpleCommunicator,
    args: &RedistArgs,
    value: impl Fn(u64) -> T + Copy,
) -> Result<(), String> {
    let (size, rank) = (world.size() as usize, world.rank() as usize);
    let (from, to) = validate(args, Some(size)).map_err(|e| e.to_string())?;
    check_memory::<T>(world, &from, &to)?;
    let t = Instant::now();
    let plan = RedistPlan::new(&from, &to, size).map_err(|e| e.to_string())?;
    let mut way = Way::new(world, args, &from, &to, &plan).map_err(|e| e.to_string())?;
    let plan_s = max_over(world, t.elapsed().as_secs_f64());
    if rank == 0 {
        log::info!(
            "redist: planned {} -> {} of {:?} on {size} rank(s), {} bytes change rank, method {}, in {plan_s:.6} s",
            from.spec(),
            to.spec(),
            args.shape.0,
            plan.bytes_moved(std::mem::size_of::<T>()),
            args.thakur
                .map_or_else(|| args.method.to_string(), |m| format!("thakur-{m}")),
        );
    }
    // The blocks and message buffers on cache lines and huge pages, as the FFT plans' own.
    let huge = |n: usize| redist::alloc::AlignedBuf::<T>::new(n);
    let mut src = huge(from.local_len(rank));
    from.fill_index_valued(rank, &mut src, value);
    let (send_len, recv_len) = way.message_lens();
    let (mut dst, mut send, mut recv) = (huge(to.local_len(rank)), huge(send_len), huge(recv_len));
    let mut call = |times: &mut StageTimes| match &mut way {
        Way::Planner(r) => r.execute(&src, &mut dst, &mut send, &mut recv, times),
        Way::Thakur(p) => thakur::redistribute_axis(world, p, args.receive, &src, &mut dst),
    };
    let (samples, times) = time_calls(world, args, &mut call).map_err(|e| e.to_string())?;
    // Exact check: every element must hold its own global index.
    let mut want = vec![T::default(); dst.len()];
    to.fill_index_valued(rank, &mut want, value);
    let local_wrong = dst.iter().zip(&want).filter(|(a, b)| a != b).count() as u64;
    let mut wrong = 0u64;
    world.all_reduce_into(&local_wrong, &mut wrong, SystemOperation::sum());
    let n = args.iters as f64;
    let stage = |x: f64| args.thakur.is_none().then(|| max_over(world, x / n));
    let report = RedistReport {
        ranks: size,
        shape: args.shape.0.clone(),
        from: from.spec(),
        to: to.spec(),
        method: match args.thakur {
            Some(m) => format!("thakur-{m}-{}", args.receive),
            None => args.method.to_string(),
        },
        dtype: args.dtype,
        iters: args.iters,
        min_s: samples[0],
        median_s: samples[samples.len() / 2],
        bytes_moved: plan.bytes_moved(std::mem::size_of::<T>()),
        wrong,
        pack_s: stage(times.pack),
        comm_s: stage(times.comm),
        unpack_s: stage(times.unpack),
        plan_s,
    };
    let provenance = crate::provenance::Provenance::collect(world);
    if rank == 0 {
        if args.json {
            println!("{}", report.to_json(&provenance));
        } else {
            report.print_table();
        }
    }
    if wrong > 0 {
        return Err(format!("verification failed: {wrong} element(s) misplaced"));
    }
    Ok(())
}

/// Refuses (on every rank alike) what would not fit, before planning allocates: both
/// blocks of `T`, and message buffers of at most their size.
fn check_memory<T>(
    world: &SimpleCommunicator,
    from: &DistArray,
    to: &DistArray,
) -> Result<(), String> {
    let size = world.size() as usize;
    let limit = crate::memory_limit::agreed(world).map_err(|e| e.to_string())?;
    let elem = std::mem::size_of::<T>() as u64;
    let largest = |d: &DistArray| {
        (0..size)
            .map(|r| d.local_len(r) as u64)
            .max()
            .unwrap_or(0)
            .saturating_mul(elem)
    };
    let blocks = largest(from).saturating_add(largest(to));
    crate::memory_limit::check(
        "dfft redist",
        blocks.saturating_mul(2),
        &format!(
            "source and destination blocks {} + message buffers {}",
            fft_core::memory::format_bytes(blocks),
            fft_core::memory::format_bytes(blocks)
        ),
        limit.as_ref(),
    )
}

/// `--warmup` untimed calls, then `--iters` timed ones (each from a barrier, max over
/// ranks): the sorted times and the stage times of the timed calls.
fn time_calls(
    world: &SimpleCommunicator,
    args: &RedistArgs,
    call: &mut impl FnMut(&mut StageTimes) -> Result<(), RedistError>,
) -> Result<(Vec<f64>, StageTimes), RedistError> {
    let mut times = StageTimes::default();
    for _ in 0..args.warmup {
        call(&mut times)?;
    }
    let mut times = StageTimes::default();
    let mut samples = Vec::with_capacity(args.iters as usize);
    for _ in 0..args.iters {
        world.barrier();
        let t = Instant::now();
        call(&mut times)?;
        samples.push(max_over(world, t.elapsed().as_secs_f64()));
    }
    samples.sort_by(f64::total_cmp);
    Ok((samples, times))
}

impl RedistReport {
    /// The table `dfft redist` prints without --json.
    fn print_table(&self) {
        println!(
            "dfft redist: shape {:?} on {} rank(s), {} -> {}, {} ({:?})",
            self.shape, self.ranks, self.from, self.to, self.method, self.dtype
        );
        println!(
            "  min {:.6} s   median {:.6} s   ({} timed)   plan {:.6} s",
            self.min_s, self.median_s, self.iters, self.plan_s
        );
        if let (Some(p), Some(c), Some(u)) = (self.pack_s, self.comm_s, self.unpack_s) {
            println!("  pack {p:.6} s   comm {c:.6} s   unpack {u:.6} s");
        }
        println!(
            "  moved {:.1} MiB   wrong {}",
            self.bytes_moved as f64 / (1 << 20) as f64,
            self.wrong
        );
    }
}

/// How `dfft redist` moves the data: the general planner or a Thakur method per axis.
enum Way {
    Planner(Box<Redistribution>),
    Thakur(Box<AxisMethod>),
}

impl Way {
    /// The general planner's redistribution, or Thakur's method along the changing axis.
    fn new(
        world: &SimpleCommunicator,
        args: &RedistArgs,
        from: &DistArray,
        to: &DistArray,
        plan: &RedistPlan,
    ) -> Result<Way, RedistError> {
        Ok(match args.thakur {
            Some(m) => Way::Thakur(Box::new(AxisMethod::new(from, to, m)?)),
            None => Way::Planner(Box::new(
                Redistribution::new(world, plan, args.method)?.with_packet_len(args.packet),
            )),
        })
    }

    /// The send and receive buffer lengths the calls need (none for Thakur's methods).
    fn message_lens(&self) -> (usize, usize) {
        match self {
            Way::Planner(r) => (r.send_len(), r.recv_len()),
            Way::Thakur(_) => (0, 0),
        }
    }
}

fn max_over(world: &SimpleCommunicator, x: f64) -> f64 {
    let mut m = 0.0;
    world.all_reduce_into(&x, &mut m, SystemOperation::max());
    m
}
