//! `dfft calibrate`: measures this machine's model parameters under `mpirun`/`srun` and writes
//! a machine profile (JSON): by default into this machine's profile cache, which `dfft run`
//! then uses (see `profile_cache`), or to `--out FILE` for `dfft plan --machine FILE`.
//! `dfft run` measures the same quick profile itself when the cache has none.
//!
//! * **network**: `MPI_Alltoall` of several message sizes inside groups of 1, 2, 4, … and P
//!   consecutive ranks (all groups at once, as the exchanges of one grid dimension); on
//!   several nodes also among one rank per node (each rank's own link) and among the ranks of
//!   equal local rank on every node (all of a node's ranks through its one interface at
//!   once). One sample per (kind, group, size): the minimum over a few repetitions of the mean
//!   over a timed loop, max over ranks. `calibrate_fit` fits the profile's ts, tw, node link,
//!   call overhead and intra/inter overlap to them. Intra-node values are divided by the
//!   oversubscription (ranks on a node per core; the model multiplies it back).
//! * **FFT rate**: rank 0 alone, one thread, rustfft on batches of contiguous lines of several
//!   power-of-two lengths: seconds per element·log2 n.
//! * **copy rates**: rank 0 alone, one thread, the exchange's copy kernel on a 3-D block of
//!   4 MiB: with two axes transposed (`copy_bytes_per_s`, element-granular copies) and as a
//!   box of 1 KiB contiguous runs, the way messages are packed (`stream_bytes_per_s`).
//! * **node memory**: one rank per core of every node copies a block far larger than its
//!   caches, all at once: the node's bytes read and written per second
//!   (`tw_memory_s_per_byte`).
//!
//! * **anchor**: one real transform on these ranks, the way `dfft run` runs it; the profile is
//!   scaled so that the model predicts it (`calibrate_anchor`).
//!
//! With all ranks on one node no inter-node pair exists; the inter-node values are set to the
//! intra-node ones and the profile's `source` says so. Switch size and uplink taper cannot be
//! seen from a few nodes: they keep one switch and no taper.

use crate::calibrate_anchor::measure_anchor;
use crate::calibrate_fit::{fit_network, CommSample, NetworkFit};
use clap::Args;
use fft_core::model::MachineProfile;
use fft_core::FftError;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use num_complex::Complex;
use redist::pack::CopyPlan;
use rustfft::FftPlanner;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;

/// Arguments of `dfft calibrate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Run it under the launcher with the rank count and placement you will use \
(ideally one rank per core):\n  mpirun -n 2 dfft calibrate            (this machine's cached \
profile, used by dfft run)\n  mpirun -n 2 dfft calibrate --out machine.json\n  dfft plan \
--shape 256,256,256 --ranks 2 --machine machine.json\n  DFFT_MACHINE=machine.json mpirun -n 2 \
dfft run --shape 128,128,128"
)]
pub struct CalibrateArgs {
    /// Where to write the profile (JSON); default: this machine's profile cache
    /// ($DFFT_CACHE_DIR, else $XDG_CACHE_HOME/dfft, else ~/.cache/dfft), which `dfft run`
    /// uses when no --machine or $DFFT_MACHINE is given.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Fewer sizes and repetitions (a few seconds; for tests).
    #[arg(long)]
    pub quick: bool,
    /// Print the profile as one JSON line (rank 0) instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// Why `dfft calibrate` failed.
#[derive(Debug, Error)]
pub enum CalibrateError {
    /// Writing the profile failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The fitted profile is unusable.
    #[error(transparent)]
    Fft(#[from] FftError),
    /// No --out and no cache directory (no $HOME).
    #[error("no --out FILE given and no cache directory for this machine's profile (set $DFFT_CACHE_DIR or $HOME)")]
    NoCache,
}

/// What calibration measured, stored beside the profile.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    /// Ranks of the calibration run.
    pub ranks: usize,
    /// Nodes they ran on.
    pub nodes: usize,
    /// Most ranks on one node.
    pub ranks_on_node: usize,
    /// Ranks per core on a node, which the intra-node values were divided by.
    pub oversubscription: f64,
    /// The network fit (what the profile holds) and its error.
    pub fit: NetworkFit,
    /// The samples.
    pub samples: Vec<CommSample>,
    /// FFT seconds per element·log2 n, per length.
    pub fft_per_length: Vec<(usize, f64)>,
    /// The transform the profile was scaled to (`calibrate_anchor`).
    pub anchor: crate::calibrate_anchor::AnchorFit,
}

#[derive(Serialize)]
struct ProfileFile<'a> {
    #[serde(flatten)]
    profile: &'a MachineProfile,
    /// The machine it was measured on (what the profile cache checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<&'a crate::profile_cache::MachineKey>,
    provenance: &'a crate::provenance::Provenance,
    calibration: &'a Calibration,
}

fn max_over(comm: &SimpleCommunicator, x: f64) -> f64 {
    let mut out = 0.0;
    comm.all_reduce_into(&x, &mut out, SystemOperation::max());
    out
}

/// Times `body` (collective over `world`): a first call sizes the loop to about `target` s,
/// then the minimum over `tries` of the loop's mean, max over ranks.
fn time_collective(
    world: &SimpleCommunicator,
    target: f64,
    tries: usize,
    mut body: impl FnMut(),
) -> f64 {
    world.barrier();
    let t = Instant::now();
    body();
    let first = max_over(world, t.elapsed().as_secs_f64());
    let reps = ((target / first.max(1e-9)) as usize).clamp(1, 2000);
    let mut best = f64::INFINITY;
    for _ in 0..tries {
        world.barrier();
        let t = Instant::now();
        for _ in 0..reps {
            body();
        }
        let mean = max_over(world, t.elapsed().as_secs_f64() / reps as f64);
        best = best.min(mean);
    }
    best
}

/// Where the ranks sit: the node of every rank (its lowest world rank), this rank's index on
/// its node, the number of nodes and the most ranks on one node.
struct Placement {
    node_of: Vec<usize>,
    local_rank: usize,
    nodes: usize,
    per_node: usize,
}

impl Placement {
    fn new(world: &SimpleCommunicator) -> Self {
        let node = world.split_shared(0);
        let mut first = 0i64;
        node.all_reduce_into(&(world.rank() as i64), &mut first, SystemOperation::min());
        let mut node_of = vec![0i64; world.size() as usize];
        world.all_gather_into(&first, &mut node_of[..]);
        let node_of: Vec<usize> = node_of.into_iter().map(|n| n as usize).collect();
        let mut ids = node_of.clone();
        ids.sort_unstable();
        ids.dedup();
        let per_node = ids
            .iter()
            .map(|&id| node_of.iter().filter(|&&n| n == id).count())
            .max()
            .unwrap_or(1);
        Self {
            local_rank: node.rank() as usize,
            nodes: ids.len(),
            per_node,
            node_of,
        }
    }

    /// (peers on the same node, peers beyond) of `member` among `group` (world ranks).
    fn peers(&self, group: &[usize], member: usize) -> (usize, usize) {
        let near = group
            .iter()
            .filter(|&&r| r != member && self.node_of[r] == self.node_of[member])
            .count();
        (near, group.len() - 1 - near)
    }
}

/// Times `MPI_Alltoall` of every size in `sizes` inside `group` (this rank's group, or none
/// when it takes no part; all groups at once) and records the samples, described by the
/// group of world rank 0 (`members`).
#[allow(clippy::too_many_arguments)]
fn time_alltoalls(
    world: &SimpleCommunicator,
    group: Option<&SimpleCommunicator>,
    kind: &'static str,
    members: &[usize],
    node_ranks: usize,
    placement: &Placement,
    sizes: &[usize],
    (target, tries): (f64, usize),
    samples: &mut Vec<CommSample>,
) {
    let (intra_peers, inter_peers) = placement.peers(members, members[0]);
    for &m in sizes {
        let k = group.map_or(1, |g| g.size() as usize);
        let send = vec![1u8; m * k];
        let mut recv = vec![0u8; m * k];
        let seconds = time_collective(world, target, tries, || {
            if let Some(g) = group {
                g.all_to_all_into(&send[..], &mut recv[..]);
            }
        });
        samples.push(CommSample {
            kind,
            group: members.len(),
            bytes: m,
            seconds,
            intra_peers,
            inter_peers,
            node_ranks,
        });
    }
}

/// All-to-all and ping-pong samples of the network (collective; none on one rank): inside
/// groups of consecutive ranks and, on several nodes, among the nodes.
fn comm_samples(world: &SimpleCommunicator, quick: bool, placement: &Placement) -> Vec<CommSample> {
    let size = world.size() as usize;
    let mut samples = Vec::new();
    if size < 2 {
        return samples;
    }
    let sizes: &[usize] = if quick {
        &[8, 16 << 10, 256 << 10]
    } else {
        &[8, 1 << 10, 16 << 10, 128 << 10, 1 << 20]
    };
    let timing = if quick { (0.01, 2) } else { (0.05, 5) };
    let mut groups: Vec<usize> = (0..)
        .map(|e| 1usize << e)
        .take_while(|&k| k <= size)
        .collect();
    if !groups.contains(&size) {
        groups.push(size);
    }
    for &k in &groups {
        // Consecutive ranks, all groups at once (as the exchanges of one grid dimension).
        let group = split(world, Some(world.rank() as usize / k)).expect("every rank has a color");
        let members: Vec<usize> = (0..k.min(size)).collect();
        if k == 2 {
            samples.extend(pingpong_samples(world, &group, placement, sizes, timing));
        }
        let node_ranks = if placement.peers(&members, 0).1 > 0 {
            placement.per_node
        } else {
            0
        };
        time_alltoalls(
            world,
            Some(&group),
            "alltoall",
            &members,
            node_ranks,
            placement,
            sizes,
            timing,
            &mut samples,
        );
    }
    if placement.nodes > 1 {
        node_samples(world, placement, sizes, timing, &mut samples);
    }
    samples
}

/// `world` split by `color` (`None`: this rank takes part in no group).
fn split(world: &SimpleCommunicator, color: Option<usize>) -> Option<SimpleCommunicator> {
    let color = color.map_or(mpi::topology::Color::undefined(), |c| {
        mpi::topology::Color::with_value(c as mpi::Count)
    });
    world.split_by_color(color)
}

/// Ping-pong inside the pairs of consecutive ranks: member 0 sends, member 1 returns.
fn pingpong_samples(
    world: &SimpleCommunicator,
    pair: &SimpleCommunicator,
    placement: &Placement,
    sizes: &[usize],
    (target, tries): (f64, usize),
) -> Vec<CommSample> {
    let (gsize, grank) = (pair.size(), pair.rank());
    let near = placement.peers(&[0, 1], 0).0;
    sizes
        .iter()
        .map(|&m| {
            let mut buf = vec![0u8; m];
            let seconds = time_collective(world, target, tries, || {
                if gsize == 2 {
                    if grank == 0 {
                        pair.process_at_rank(1).send(&buf[..]);
                        pair.process_at_rank(1).receive_into(&mut buf[..]);
                    } else {
                        pair.process_at_rank(0).receive_into(&mut buf[..]);
                        pair.process_at_rank(0).send(&buf[..]);
                    }
                }
            }) / 2.0;
            CommSample {
                kind: "pingpong",
                group: 2,
                bytes: m,
                seconds,
                intra_peers: near,
                inter_peers: 1 - near,
                node_ranks: 1,
            }
        })
        .collect()
}

/// Among the nodes: one rank per node (the others wait; each rank's own link), then every
/// rank at once with the ranks of equal local rank on the other nodes (all of a node's ranks
/// through its one interface).
fn node_samples(
    world: &SimpleCommunicator,
    placement: &Placement,
    sizes: &[usize],
    timing: (f64, usize),
    samples: &mut Vec<CommSample>,
) {
    let size = world.size() as usize;
    let leaders: Vec<usize> = (0..size).filter(|&r| placement.node_of[r] == r).collect();
    let group = split(world, (placement.local_rank == 0).then_some(0));
    time_alltoalls(
        world,
        group.as_ref(),
        "leaders",
        &leaders,
        1,
        placement,
        sizes,
        timing,
        samples,
    );
    // World rank 0 has local rank 0: its group is the node leaders'.
    let group = split(world, Some(placement.local_rank)).expect("every rank has a color");
    time_alltoalls(
        world,
        Some(&group),
        "nodes",
        &leaders,
        placement.per_node,
        placement,
        sizes,
        timing,
        samples,
    );
}

/// Seconds per byte of a node's memory traffic (all its ranks together): one rank per core
/// of every node copies a block far larger than its caches at once (the others wait), in
/// chunks of 2 MiB timed one by one, a few times over; the node's bytes read and written per
/// chunk over the slowest rank's best chunk is its bandwidth. Short timings, each rank's
/// best: a busy machine preempts some chunks, it does not slow the memory.
fn memory_rate(
    world: &SimpleCommunicator,
    quick: bool,
    placement: &Placement,
    cores: usize,
) -> f64 {
    const CHUNK: usize = 1 << 18; // f64s: 2 MiB
    let active = placement.per_node.min(cores).max(1);
    let copying = placement.local_rank < active;
    let len = if quick { 4 << 20 } else { 16 << 20 }; // f64s: 32 or 128 MiB
    let (src, mut dst) = if copying {
        (vec![1.0f64; len], vec![0.0f64; len])
    } else {
        (Vec::new(), Vec::new())
    };
    let mut best = f64::INFINITY;
    for _ in 0..if quick { 3 } else { 5 } {
        world.barrier();
        if !copying {
            continue;
        }
        for (d, s) in dst.chunks_mut(CHUNK).zip(src.chunks(CHUNK)) {
            let t = Instant::now();
            d.copy_from_slice(s);
            std::hint::black_box(&mut *d);
            best = best.min(t.elapsed().as_secs_f64());
        }
    }
    let slowest = max_over(world, if copying { best } else { 0.0 });
    slowest / (2.0 * (CHUNK * std::mem::size_of::<f64>() * active) as f64)
}

/// Seconds per element·log2 n for each length, one thread.
fn fft_rates(quick: bool) -> Vec<(usize, f64)> {
    let lengths: &[usize] = if quick {
        &[64, 1024]
    } else {
        &[64, 256, 1024, 4096]
    };
    let total = if quick { 1 << 16 } else { 1 << 18 };
    let mut planner = FftPlanner::<f64>::new();
    lengths
        .iter()
        .map(|&n| {
            let fft = planner.plan_fft_forward(n);
            let mut data = vec![Complex::new(1.0, 0.5); total];
            let mut scratch = vec![Complex::new(0.0, 0.0); fft.get_inplace_scratch_len()];
            let mut best = f64::INFINITY;
            for _ in 0..if quick { 3 } else { 7 } {
                let t = Instant::now();
                fft.process_with_scratch(&mut data, &mut scratch);
                best = best.min(t.elapsed().as_secs_f64());
            }
            (n, best / (total as f64 * (n as f64).log2()))
        })
        .collect()
}

/// Bytes per second of the exchange's strided copy kernel (a transpose of two axes).
fn copy_rate(quick: bool) -> f64 {
    let n = 64; // 4 MiB: beyond most cores' private caches
    let len = n * n * n;
    let src = vec![Complex::new(1.0f64, 2.0); len];
    let mut dst = vec![Complex::new(0.0f64, 0.0); len];
    let plan = CopyPlan::new(&[n, n, n], &[n * n, n, 1], &[n * n, 1, n]);
    let mut best = f64::INFINITY;
    for _ in 0..if quick { 5 } else { 15 } {
        let t = Instant::now();
        plan.run(&src, 0, &mut dst, 0);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (len * std::mem::size_of::<Complex<f64>>()) as f64 / best.max(1e-12)
}

/// Bytes per second of the exchange's copy kernel on contiguous runs of 1 KiB (64 complex
/// f64): an n×n×n box of an n×n×2n block, as packing a message copies it.
fn stream_rate(quick: bool) -> f64 {
    let n = 64;
    let len = n * n * n;
    let src = vec![Complex::new(1.0f64, 2.0); 2 * len];
    let mut dst = vec![Complex::new(0.0f64, 0.0); len];
    let plan = CopyPlan::new(&[n, n, n], &[2 * n * n, 2 * n, 1], &[n * n, n, 1]);
    let mut best = f64::INFINITY;
    for _ in 0..if quick { 5 } else { 15 } {
        let t = Instant::now();
        plan.run(&src, 0, &mut dst, 0);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (len * std::mem::size_of::<Complex<f64>>()) as f64 / best.max(1e-12)
}

/// A measured profile and what it was fitted to.
pub struct Measured {
    /// The profile.
    pub profile: MachineProfile,
    /// What calibration measured.
    pub calibration: Calibration,
}

/// Runs `dfft calibrate` (collective): measures, fits, writes the profile from rank 0.
pub fn calibrate(world: &SimpleCommunicator, args: &CalibrateArgs) -> Result<(), CalibrateError> {
    let key = crate::profile_cache::MachineKey::this_machine();
    let out = match &args.out {
        Some(path) => path.clone(),
        None => crate::profile_cache::cache_path().ok_or(CalibrateError::NoCache)?,
    };
    let measured = measure(world, args.quick)?;
    let provenance = crate::provenance::Provenance::collect(world);
    write_profile(world, &out, &measured, Some(&key), &provenance)?;
    if world.rank() != 0 {
        return Ok(());
    }
    let Measured {
        profile,
        calibration,
    } = &measured;
    if args.json {
        let problem = serde_json::json!({
            "ranks": world.size(),
            "quick": args.quick,
            "out": out.display().to_string(),
        });
        let result = serde_json::json!({
            "profile": profile,
            "calibration": calibration,
            "written": out.display().to_string(),
            "cached": args.out.is_none(),
        });
        println!(
            "{}",
            crate::report::envelope("calibrate", problem, result, &provenance)
        );
    } else {
        print!(
            "{}",
            summary(&out, args.out.is_none(), profile, calibration)
        );
    }
    Ok(())
}

/// Measures this machine (collective): the network samples and their fit, then the local
/// rates on rank 0 alone and the node's memory bandwidth; every rank gets the same profile.
pub fn measure(world: &SimpleCommunicator, quick: bool) -> Result<Measured, FftError> {
    let size = world.size() as usize;
    let placement = Placement::new(world);
    let max_on_node = placement.per_node;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let samples = comm_samples(world, quick, &placement);
    let (local, fft_per_length) = local_rates(world, quick);
    let memory = memory_rate(world, quick, &placement, cores);
    let oversubscription = (max_on_node as f64 / cores as f64).max(1.0);
    let defaults = MachineProfile::default();
    let fit = fit_network(&samples, oversubscription, &defaults);
    let mut profile = MachineProfile {
        ts_intra_s: fit.ts_intra_s,
        tw_intra_s_per_byte: fit.tw_intra_s_per_byte,
        ts_inter_s: fit.ts_inter_s,
        tw_inter_s_per_byte: fit.tw_inter_s_per_byte,
        // One node: nothing to share beyond it; the node link is left unlimited.
        tw_node_s_per_byte: fit.tw_node_s_per_byte,
        // One switch is all a few nodes show: no uplink contention measured.
        switch_nodes: defaults.switch_nodes.max(placement.nodes),
        uplink_taper: 1.0,
        intra_inter_overlap: fit.intra_inter_overlap,
        exchange_overhead_s: fit.exchange_overhead_s,
        // A window exchange: a synchronization of the node's ranks (about one message's
        // latency) and one streaming copy; the anchor transform measures it for real.
        ts_window_s: fit.ts_intra_s,
        tw_window_s_per_byte: 1.0 / local[2].max(1.0),
        fft_s_per_element_log2: local[0],
        copy_bytes_per_s: local[1],
        stream_bytes_per_s: local[2],
        tw_memory_s_per_byte: memory,
        cores_per_node: cores,
        ranks_per_node: max_on_node.max(1),
        threads_per_rank: 1,
        source: source_line(
            size,
            &placement,
            cores,
            samples.is_empty(),
            fit.inter_measured,
        ),
    };
    profile.validate()?;
    // The run's model sees this launch's threads per rank; so does the anchor's.
    let mut threads = 0.0f64;
    world.all_reduce_into(
        &(rayon::current_num_threads() as f64),
        &mut threads,
        SystemOperation::max(),
    );
    profile.threads_per_rank = threads as usize;
    let target = if quick { 0.3 } else { 1.0 };
    let (mut profile, anchor) = measure_anchor(world, &profile, target)?;
    profile.source.push_str(&format!(
        "; scaled to one {} transform on grid {:?} (FFTs x{:.2}, exchanges x{:.2}: {})",
        anchor
            .shape
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join("x"),
        anchor.grid,
        anchor.compute_scale,
        anchor.exchange_scale,
        anchor.scaled
    ));
    Ok(Measured {
        profile,
        calibration: Calibration {
            anchor,
            ranks: size,
            nodes: placement.nodes,
            ranks_on_node: max_on_node,
            oversubscription,
            fit,
            samples,
            fft_per_length,
        },
    })
}

/// The FFT rate and the two copy rates, measured on rank 0 alone with one thread while the
/// others wait, broadcast to all: ([fft, copy, stream], FFT rate per length).
fn local_rates(world: &SimpleCommunicator, quick: bool) -> ([f64; 3], Vec<(usize, f64)>) {
    let mut local = [0.0f64; 3];
    let mut per_length = Vec::new();
    if world.rank() == 0 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread pool");
        let (rates, copy, stream) =
            pool.install(|| (fft_rates(quick), copy_rate(quick), stream_rate(quick)));
        let work: f64 = rates.iter().map(|&(_, r)| r).sum::<f64>() / rates.len() as f64;
        local = [work, copy, stream];
        per_length = rates;
    }
    world.process_at_rank(0).broadcast_into(&mut local[..]);
    (local, per_length)
}

/// The profile's `source`: where and how it was measured.
fn source_line(
    size: usize,
    placement: &Placement,
    cores: usize,
    one_rank: bool,
    inter_measured: bool,
) -> String {
    let host = crate::machine::hostname();
    let (nodes, per_node) = (placement.nodes, placement.per_node);
    let mut source = format!(
        "dfft calibrate on {host}: {size} rank(s) on {nodes} node(s), {per_node} per node, {cores} cores per node"
    );
    if one_rank {
        source.push_str("; one rank: ts/tw are the defaults");
    }
    source.push_str(if inter_measured {
        "; inter-node ts/tw from one rank per node, the node link from all ranks at once"
    } else {
        "; one node: inter-node ts/tw and the node link set to the intra-node values"
    });
    source
}

/// Writes `measured` (with `provenance`) to `out` from rank 0, atomically (a temporary file renamed into place),
/// stamped with the machine's `key` (collective: every rank learns whether it worked).
pub fn write_profile(
    world: &SimpleCommunicator,
    out: &Path,
    measured: &Measured,
    key: Option<&crate::profile_cache::MachineKey>,
    provenance: &crate::provenance::Provenance,
) -> Result<(), CalibrateError> {
    let mut ok = [0u8];
    let mut written = Ok(());
    if world.rank() == 0 {
        let file = ProfileFile {
            profile: &measured.profile,
            machine: key,
            provenance,
            calibration: &measured.calibration,
        };
        let text = serde_json::to_string_pretty(&file).expect("a profile serializes");
        let write = || -> std::io::Result<()> {
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = out.with_extension(format!("json.tmp-{}", std::process::id()));
            std::fs::write(&tmp, text.as_bytes())?;
            std::fs::rename(&tmp, out).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
        };
        written = write().map_err(|source| CalibrateError::Write {
            path: out.display().to_string(),
            source,
        });
        ok[0] = u8::from(written.is_ok());
    }
    world.process_at_rank(0).broadcast_into(&mut ok[..]);
    written?;
    if ok[0] == 0 {
        return Err(CalibrateError::Write {
            path: out.display().to_string(),
            source: std::io::Error::other("rank 0 could not write the profile"),
        });
    }
    Ok(())
}

/// What `dfft calibrate` prints for people.
fn summary(out: &Path, cached: bool, profile: &MachineProfile, cal: &Calibration) -> String {
    let gbs = |tw: f64| 1e-9 / tw.max(1e-300);
    let mut s = if cached {
        format!(
            "dfft calibrate: wrote this machine's profile to {} (used by dfft run from now on; --machine FILE overrides)\n",
            out.display()
        )
    } else {
        format!("dfft calibrate: wrote {}\n", out.display())
    };
    s.push_str(&format!("  {}\n", profile.source));
    s.push_str(&format!(
        "  inside a node:  ts {:.3e} s   tw {:.3e} s/B ({:.2} GB/s)   call overhead {:.3e} s\n",
        profile.ts_intra_s,
        profile.tw_intra_s_per_byte,
        gbs(profile.tw_intra_s_per_byte),
        profile.exchange_overhead_s
    ));
    if cal.fit.inter_measured {
        s.push_str(&format!(
            "  between nodes:  ts {:.3e} s   tw {:.3e} s/B ({:.2} GB/s) per rank, node link {:.3e} s/B ({:.2} GB/s), overlap {:.2}\n",
            profile.ts_inter_s,
            profile.tw_inter_s_per_byte,
            gbs(profile.tw_inter_s_per_byte),
            profile.tw_node_s_per_byte,
            gbs(profile.tw_node_s_per_byte),
            profile.intra_inter_overlap
        ));
    }
    s.push_str(&format!(
        "  fit: rms relative error {:.1} % over {} all-to-all samples\n",
        100.0 * cal.fit.rms_relative_error,
        cal.samples.iter().filter(|x| x.kind != "pingpong").count()
    ));
    s.push_str(&format!(
        "  fft {:.3e} s per element·log2 n   copies {:.2} GB/s transposing, {:.2} GB/s in 1 KiB runs (one core)\n",
        profile.fft_s_per_element_log2,
        profile.copy_bytes_per_s * 1e-9,
        profile.stream_bytes_per_s * 1e-9
    ));
    s
}
