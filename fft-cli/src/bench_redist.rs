//! `dfft bench-redist`: the redistribution experiment of Birkeland & Sørøvik §6.
//!
//! One *sample* is two complete sweeps of redistribution through the pencil layouts of a
//! distributed FFT, `L0 → L1 → … → Lr → … → L0 → L1`: that is `2r + 1` exchanges on a grid of
//! rank r, exactly what the seed times. Each sample may run the sequence `--inner` times and
//! report the mean (Birkeland & Sørøvik's 10 repetitions against timer overhead); `--repeat` samples are
//! taken and the minimum is reported (Birkeland & Sørøvik's defence against background noise), with the
//! median beside it. Only exchanges run: no FFTs.
//!
//! The data are index-valued (element = its global linear index), and after the first,
//! untimed sequence every layout's buffer is checked exactly on every rank, so a benchmark of a
//! wrong exchange cannot go unnoticed.

use crate::args::{parse_shape, ShapeArg};
use clap::Args;
use fft_core::model::resolve_grid;
use fft_core::stages::pipeline;
use fft_core::{FftError, GridChoice};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use num_complex::Complex;
use redist::comm::ProcessGrid;
use redist::exchange::{Exchange, Method, StageTimes};
use redist::layout::Layout;
use redist::plan::ExchangePlan;
use redist::RedistError;
use serde::Serialize;
use std::time::Instant;
use thiserror::Error;

/// Arguments of `dfft bench-redist`.
#[derive(Debug, Args)]
#[command(
    after_help = "Each sample times two complete sweeps of redistribution (2r+1 exchanges \
through the pencil layouts L0 -> ... -> Lr -> ... -> L0 -> L1) of a complex128 N^d array; the \
minimum over --repeat samples is reported, as in Birkeland & Sørøvik §6.\n\nExamples:\n  mpirun -n 4 \
dfft bench-redist --shape 128,128,128 --grid 1\n  mpirun -n 4 dfft bench-redist --shape \
128,128,128 --grid 2x2 --repeat 10 --inner 3 --json\n  srun -n 16 --mpi=pmix dfft \
bench-redist --shape 256,256,256 --grid 2 --method pairwise --json"
)]
pub struct BenchRedistArgs {
    /// Global shape, comma-separated, e.g. 128,128,128.
    #[arg(long, value_parser = parse_shape, allow_hyphen_values = true)]
    pub shape: ShapeArg,
    /// Processor grid: `auto`, a grid rank R (balanced dimensions), or dimensions AxB...
    #[arg(long, default_value = "1")]
    pub grid: GridChoice,
    /// Samples; the minimum (and the median) over them is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=crate::args::MAX_COUNT))]
    pub repeat: u64,
    /// Two-sweep sequences per sample; a sample's time is their mean.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=crate::args::MAX_COUNT))]
    pub inner: u64,
    /// Untimed two-sweep sequences before timing (after the checked one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=crate::args::MAX_COUNT))]
    pub warmup: u64,
    /// Exchange method: alltoallv or pairwise.
    #[arg(long, default_value = "alltoallv")]
    pub method: Method,
    /// Print one JSON object on one line (rank 0) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Threads per rank (default: the cores this rank may use divided by the ranks sharing
    /// them on its node).
    #[arg(long, value_parser = crate::args::parse_threads)]
    pub threads: Option<usize>,
    /// Show progress on stderr (rank 0) even when it is not a terminal, as under mpirun or
    /// srun (also DFFT_PROGRESS=1).
    #[arg(long)]
    pub progress: bool,
}

/// Why `dfft bench-redist` failed. Every variant is reached identically on every rank.
#[derive(Debug, Error)]
pub enum BenchError {
    /// Planning the grid or the layouts failed.
    #[error(transparent)]
    Fft(#[from] FftError),
    /// Building or running an exchange failed.
    #[error(transparent)]
    Redist(#[from] RedistError),
    /// `DFFT_MEMORY_LIMIT` is malformed.
    #[error(transparent)]
    MemoryLimit(#[from] crate::memory_limit::MalformedLimit),
    /// The buffers would not fit the memory limit.
    #[error("{0}")]
    Memory(String),
    /// The index-valued data came out wrong.
    #[error("verification failed: {wrong} element(s) misplaced in layout L{layout}")]
    Verification {
        /// Index of the layout.
        layout: usize,
        /// Misplaced elements, summed over ranks.
        wrong: u64,
    },
}

/// Seconds per stage of one two-sweep sequence (mean over the timed ones, max over ranks).
#[derive(Debug, Clone, Serialize)]
pub struct RedistStages {
    /// Packing messages.
    pub pack_s: f64,
    /// MPI communication.
    pub comm_s: f64,
    /// Unpacking (with the fused local transpose and the rank's own part).
    pub unpack_s: f64,
}

/// The result of `dfft bench-redist`, printed by rank 0.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRedistReport {
    /// MPI processes.
    pub ranks: usize,
    /// Rayon threads per rank.
    pub threads_per_rank: usize,
    /// Global shape.
    pub shape: Vec<usize>,
    /// Grid dimensions.
    pub grid: Vec<usize>,
    /// Grid rank r.
    pub grid_rank: usize,
    /// Exchange method.
    pub method: String,
    /// Exchanges per sample: 2r + 1.
    pub exchanges: usize,
    /// Samples.
    pub repeat: u64,
    /// Sequences per sample.
    pub inner: u64,
    /// Untimed sequences.
    pub warmup: u64,
    /// Fastest sample (seconds per two-sweep sequence, max over ranks): Birkeland & Sørøvik's number.
    pub min_s: f64,
    /// Median sample.
    pub median_s: f64,
    /// Mean sample.
    pub mean_s: f64,
    /// Stage breakdown of one sequence.
    pub stages: RedistStages,
    /// Bytes of the whole array (complex128).
    pub array_bytes: u64,
    /// Largest block one rank holds in any layout, in bytes.
    pub max_block_bytes: u64,
    /// Whether every layout was checked exactly (always true in a printed report).
    pub verified: bool,
}

impl BenchRedistReport {
    /// One JSON object on one line, in the common schema (see `report`).
    pub fn to_json(&self, grid_choice: &str, provenance: &crate::provenance::Provenance) -> String {
        let problem = serde_json::json!({
            "shape": self.shape,
            "ranks": self.ranks,
            "grid_choice": grid_choice,
            "method": self.method,
            "repeat": self.repeat,
            "inner": self.inner,
            "warmup": self.warmup,
        });
        let result = serde_json::json!({
            "grid": self.grid,
            "grid_rank": self.grid_rank,
            "threads_per_rank": self.threads_per_rank,
            "exchanges": self.exchanges,
            "min_s": self.min_s,
            "median_s": self.median_s,
            "mean_s": self.mean_s,
            "stages": self.stages,
            "array_bytes": self.array_bytes,
            "max_block_bytes": self.max_block_bytes,
            "verified": self.verified,
        });
        crate::report::envelope("bench-redist", problem, result, provenance)
    }

    /// A table for people.
    pub fn to_table(&self) -> String {
        format!(
            "dfft bench-redist: shape {:?} on {} rank(s), grid {:?} (r = {}), method {}\n  \
             two sweeps ({} exchanges)  min {:.6} s   median {:.6} s   mean {:.6} s   \
             ({} samples x {} inner, {} warm-up)\n  per two sweeps      pack {:.6} s   \
             comm {:.6} s   unpack {:.6} s\n  data               array {:.1} MiB   largest \
             block {:.1} MiB   verified {}\n",
            self.shape,
            self.ranks,
            self.grid,
            self.grid_rank,
            self.method,
            self.exchanges,
            self.min_s,
            self.median_s,
            self.mean_s,
            self.repeat,
            self.inner,
            self.warmup,
            self.stages.pack_s,
            self.stages.comm_s,
            self.stages.unpack_s,
            self.array_bytes as f64 / 1048576.0,
            self.max_block_bytes as f64 / 1048576.0,
            self.verified
        )
    }
}

/// The layout indices one sample visits: `0, 1, …, r, r−1, …, 0, 1` (2r + 1 exchanges).
///
/// ```text
/// r = 1: 0 1 0 1        r = 2: 0 1 2 1 0 1
/// ```
pub fn sweep_sequence(r: usize) -> Vec<usize> {
    let mut seq: Vec<usize> = (0..=r).collect();
    seq.extend((0..r).rev());
    seq.push(1.min(r));
    seq
}

/// Fills `out` (rank `rank`'s block of `layout`) with each element's global linear index
/// (C order), or counts the elements that differ from it when `check` is true.
fn index_values(layout: &Layout, rank: usize, out: &mut [Complex<f64>], check: bool) -> u64 {
    let shape = layout.global_shape();
    let d = shape.len();
    let offsets = layout.global_offsets(rank);
    let local = layout.local_shape(rank);
    let strides = layout.local_strides(rank);
    let n: usize = local.iter().product();
    let mut gstride = vec![1usize; d];
    for a in (0..d.saturating_sub(1)).rev() {
        gstride[a] = gstride[a + 1] * shape[a + 1];
    }
    let mut idx = vec![0usize; d];
    let mut wrong = 0u64;
    for _ in 0..n {
        let mem: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        let global: usize = (0..d).map(|a| (offsets[a] + idx[a]) * gstride[a]).sum();
        let want = Complex::new(global as f64, -(global as f64));
        if check {
            wrong += u64::from(out[mem] != want);
        } else {
            out[mem] = want;
        }
        for a in (0..d).rev() {
            idx[a] += 1;
            if idx[a] < local[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    wrong
}

/// Runs `dfft bench-redist`; prints the report on rank 0.
pub fn bench_redist(world: &SimpleCommunicator, args: &BenchRedistArgs) -> Result<(), BenchError> {
    let shape = args.shape.0.clone();
    let ranks = world.size() as usize;
    let machine = crate::machine::load(None)?;
    let grid_shape = resolve_grid(&shape, ranks, &args.grid, &machine.profile)?;
    let pipe = pipeline(&shape, grid_shape.clone(), true)?;
    check_memory(world, &pipe.layouts)?;
    let grid = ProcessGrid::new(world, grid_shape.clone())?;
    let rank = grid.rank();
    let layouts = &pipe.layouts;
    log::info!(
        "bench-redist: shape {shape:?}, grid {:?}, {} layouts, method {}",
        grid_shape.dims(),
        layouts.len(),
        args.method
    );
    let mut sweeps = Sweeps::new(&grid, grid_shape.rank(), layouts, args.method)?;
    // The checked sequence, then the timed ones.
    sweeps.run(&mut StageTimes::default())?;
    sweeps.verify(world, layouts, rank)?;
    for _ in 0..args.warmup {
        sweeps.run(&mut StageTimes::default())?;
    }
    let (mut samples, stages) = time_samples(world, args, rank, &mut sweeps)?;
    let mean_s = samples.iter().sum::<f64>() / samples.len() as f64;
    samples.sort_by(f64::total_cmp);
    let elem = std::mem::size_of::<Complex<f64>>() as u64;
    let report = BenchRedistReport {
        ranks,
        threads_per_rank: rayon::current_num_threads(),
        shape: shape.clone(),
        grid: grid_shape.dims().to_vec(),
        grid_rank: grid_shape.rank(),
        method: args.method.to_string(),
        exchanges: sweeps.seq.len() - 1,
        repeat: args.repeat,
        inner: args.inner,
        warmup: args.warmup,
        min_s: samples[0],
        median_s: samples[samples.len() / 2],
        mean_s,
        stages,
        array_bytes: shape.iter().product::<usize>() as u64 * elem,
        max_block_bytes: layouts
            .iter()
            .map(|l| l.max_local_len() as u64)
            .max()
            .unwrap_or(0)
            * elem,
        verified: true,
    };
    let provenance = crate::provenance::Provenance::collect(world);
    if rank == 0 {
        if args.json {
            println!("{}", report.to_json(&args.grid.to_string(), &provenance));
        } else {
            print!("{}", report.to_table());
        }
    }
    Ok(())
}

/// Refuses (on every rank alike) what would not fit, before anything is allocated: one
/// block per layout, and message buffers of at most the largest block each way.
fn check_memory(world: &SimpleCommunicator, layouts: &[Layout]) -> Result<(), BenchError> {
    let limit = crate::memory_limit::agreed(world)?;
    let elem = std::mem::size_of::<Complex<f64>>() as u64;
    let blocks: Vec<u64> = layouts
        .iter()
        .map(|l| (l.max_local_len() as u64).saturating_mul(elem))
        .collect();
    let all_blocks = blocks.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let messages = blocks.iter().max().copied().unwrap_or(0).saturating_mul(2);
    crate::memory_limit::check(
        "dfft bench-redist",
        all_blocks.saturating_add(messages),
        &format!(
            "{} layouts' blocks {} + message buffers {}",
            blocks.len(),
            fft_core::memory::format_bytes(all_blocks),
            fft_core::memory::format_bytes(messages)
        ),
        limit.as_ref(),
    )
    .map_err(BenchError::Memory)
}

/// `--repeat` samples of `--inner` sequences each (from a barrier, max over ranks) and the
/// stages per sequence, max over ranks.
fn time_samples(
    world: &SimpleCommunicator,
    args: &BenchRedistArgs,
    rank: usize,
    sweeps: &mut Sweeps,
) -> Result<(Vec<f64>, RedistStages), BenchError> {
    let mut bar = crate::progress::start(
        args.repeat,
        rank,
        args.json,
        args.progress,
        "dfft bench-redist: samples",
    );
    let mut times = StageTimes::default();
    let mut samples = Vec::with_capacity(args.repeat as usize);
    for _ in 0..args.repeat {
        world.barrier();
        let t = Instant::now();
        for _ in 0..args.inner {
            sweeps.run(&mut times)?;
        }
        let local = t.elapsed().as_secs_f64() / args.inner as f64;
        let mut max = 0.0;
        world.all_reduce_into(&local, &mut max, SystemOperation::max());
        samples.push(max);
        if let Some(b) = &mut bar {
            b.inc();
        }
    }
    if let Some(b) = bar {
        b.finish();
    }
    let sequences = (args.repeat * args.inner) as f64;
    let per_seq = |x: f64| {
        let mut max = 0.0;
        world.all_reduce_into(&(x / sequences), &mut max, SystemOperation::max());
        max
    };
    let stages = RedistStages {
        pack_s: per_seq(times.pack),
        comm_s: per_seq(times.comm),
        unpack_s: per_seq(times.unpack),
    };
    Ok((samples, stages))
}

/// The two-sweep sequence with its exchanges and buffers: one exchange per direction between
/// neighbouring layouts, `up[k]` = L(k) → L(k+1), `down[k]` = L(k+1) → L(k).
struct Sweeps {
    seq: Vec<usize>,
    bufs: Vec<Vec<Complex<f64>>>,
    up: Vec<Exchange>,
    down: Vec<Exchange>,
    send: Vec<Complex<f64>>,
    recv: Vec<Complex<f64>>,
}

impl Sweeps {
    /// The exchanges and buffers, the first layout's block index-valued.
    /// `r` is the grid's rank (layouts L0..=Lr are used).
    fn new(
        grid: &ProcessGrid,
        r: usize,
        layouts: &[Layout],
        method: Method,
    ) -> Result<Sweeps, BenchError> {
        let rank = grid.rank();
        let mut up = Vec::with_capacity(r);
        let mut down = Vec::with_capacity(r);
        for k in 0..r {
            let plan = ExchangePlan::new(&layouts[k], &layouts[k + 1])?;
            up.push(Exchange::new(grid, &plan, method)?);
            let plan = ExchangePlan::new(&layouts[k + 1], &layouts[k])?;
            down.push(Exchange::new(grid, &plan, method)?);
        }
        let send_len = up.iter().chain(&down).map(Exchange::send_len).max();
        let recv_len = up.iter().chain(&down).map(Exchange::recv_len).max();
        let zero = Complex::new(0.0, 0.0);
        let mut bufs: Vec<Vec<Complex<f64>>> = layouts
            .iter()
            .map(|l| vec![zero; l.local_len(rank)])
            .collect();
        index_values(&layouts[0], rank, &mut bufs[0], false);
        Ok(Sweeps {
            seq: sweep_sequence(r),
            bufs,
            up,
            down,
            send: vec![zero; send_len.unwrap_or(0)],
            recv: vec![zero; recv_len.unwrap_or(0)],
        })
    }

    /// Runs the exchanges between consecutive layouts of the sequence.
    fn run(&mut self, times: &mut StageTimes) -> Result<(), RedistError> {
        for w in self.seq.windows(2) {
            let (from, to) = (w[0], w[1]);
            let (src, dst) = two_mut(&mut self.bufs, from, to);
            let ex = if to > from {
                &mut self.up[from]
            } else {
                &mut self.down[to]
            };
            ex.execute(src, dst, &mut self.send, &mut self.recv, times)?;
        }
        Ok(())
    }

    /// Checks every layout's block exactly (each element its global index), agreed.
    fn verify(
        &mut self,
        world: &SimpleCommunicator,
        layouts: &[Layout],
        rank: usize,
    ) -> Result<(), BenchError> {
        for (k, l) in layouts.iter().enumerate() {
            let local = index_values(l, rank, &mut self.bufs[k], true);
            let mut wrong = 0u64;
            world.all_reduce_into(&local, &mut wrong, SystemOperation::sum());
            if wrong > 0 {
                return Err(BenchError::Verification { layout: k, wrong });
            }
        }
        Ok(())
    }
}

/// Two distinct elements of `v`, the first shared and the second mutable.
fn two_mut<T>(v: &mut [T], a: usize, b: usize) -> (&T, &mut T) {
    assert_ne!(a, b, "an exchange moves between two different layouts");
    if a < b {
        let (lo, hi) = v.split_at_mut(b);
        (&lo[a], &mut hi[0])
    } else {
        let (lo, hi) = v.split_at_mut(a);
        (&hi[0], &mut lo[b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sweeps_are_2r_plus_1_exchanges_between_neighbours() {
        assert_eq!(sweep_sequence(1), vec![0, 1, 0, 1]);
        assert_eq!(sweep_sequence(2), vec![0, 1, 2, 1, 0, 1]);
        for r in 1..6 {
            let s = sweep_sequence(r);
            assert_eq!(s.len() - 1, 2 * r + 1);
            assert!(s.windows(2).all(|w| w[0].abs_diff(w[1]) == 1));
            assert_eq!(*s.iter().max().unwrap(), r);
        }
    }

    #[test]
    fn index_values_round_trip() {
        let grid = redist::GridShape::new(vec![3, 2]).unwrap();
        let p = pipeline(&[7, 5, 6], grid, true).unwrap();
        for l in &p.layouts {
            for rank in 0..6 {
                let mut buf = vec![Complex::new(0.0, 0.0); l.local_len(rank)];
                index_values(l, rank, &mut buf, false);
                assert_eq!(index_values(l, rank, &mut buf, true), 0);
                if let Some(x) = buf.first_mut() {
                    x.re += 1.0;
                    assert_eq!(index_values(l, rank, &mut buf, true), 1);
                }
            }
        }
    }
}
