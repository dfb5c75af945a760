//! `dfft calibrate`: measures this machine's model parameters under `mpirun`/`srun` and writes
//! a machine profile (JSON): by default into this machine's profile cache, which `dfft run`
//! then uses (see `machine::cache_path`), or to `--out FILE` for `dfft plan --machine FILE`.
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
//!
//! With all ranks on one node no inter-node pair exists; the inter-node values are set to the
//! intra-node ones and the profile's `source` says so. Switch size and uplink taper cannot be
//! seen from a few nodes: they keep one switch and no taper.

use crate::calibrate_fit::{fit_network, CommSample, NetworkFit};
use clap::Args;
use fft_core::model::MachineProfile;
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
    Fft(#[from] fft_core::FftError),
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
}

#[derive(Serialize)]
struct ProfileFile<'a> {
    #[serde(flatten)]
    profile: &'a MachineProfile,
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

fn comm_samples(world: &SimpleCommunicator, quick: bool, placement: &Placement) -> Vec<CommSample> {
    let size = world.size() as usize;
    let rank = world.rank() as usize;
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
    let split = |color: Option<usize>| {
        let color = color.map_or(mpi::topology::Color::undefined(), |c| {
            mpi::topology::Color::with_value(c as mpi::Count)
        });
        world.split_by_color(color)
    };
    for &k in &groups {
        // Consecutive ranks, all groups at once (as the exchanges of one grid dimension).
        let group = split(Some(rank / k)).expect("every rank has a color");
        let members: Vec<usize> = (0..k.min(size)).collect();
        if k == 2 {
            // Ping-pong: member 0 sends, member 1 returns (when the group has two).
            let (gsize, grank) = (group.size(), group.rank());
            let near = placement.peers(&members, 0).0;
            for &m in sizes {
                let mut buf = vec![0u8; m];
                let seconds = time_collective(world, timing.0, timing.1, || {
                    if gsize == 2 {
                        if grank == 0 {
                            group.process_at_rank(1).send(&buf[..]);
                            group.process_at_rank(1).receive_into(&mut buf[..]);
                        } else {
                            group.process_at_rank(0).receive_into(&mut buf[..]);
                            group.process_at_rank(0).send(&buf[..]);
                        }
                    }
                }) / 2.0;
                samples.push(CommSample {
                    kind: "pingpong",
                    group: 2,
                    bytes: m,
                    seconds,
                    intra_peers: near,
                    inter_peers: 1 - near,
                    node_ranks: 1,
                });
            }
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
        // One rank per node (the others wait): each rank's own link between nodes.
        let leaders: Vec<usize> = (0..size).filter(|&r| placement.node_of[r] == r).collect();
        let group = split((placement.local_rank == 0).then_some(0));
        time_alltoalls(
            world,
            group.as_ref(),
            "leaders",
            &leaders,
            1,
            placement,
            sizes,
            timing,
            &mut samples,
        );
        // Every rank at once, each with the ranks of equal local rank on the other nodes:
        // all of a node's ranks send beyond it together, through its one interface.
        // World rank 0 has local rank 0: its group is the node leaders'.
        let group = split(Some(placement.local_rank)).expect("every rank has a color");
        time_alltoalls(
            world,
            Some(&group),
            "nodes",
            &leaders,
            placement.per_node,
            placement,
            sizes,
            timing,
            &mut samples,
        );
    }
    samples
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
    let n = if quick { 32 } else { 64 };
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
    let n = if quick { 32 } else { 64 };
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

/// Runs `dfft calibrate` (collective): measures, fits, writes the profile from rank 0.
pub fn calibrate(world: &SimpleCommunicator, args: &CalibrateArgs) -> Result<(), CalibrateError> {
    let rank = world.rank() as usize;
    let size = world.size() as usize;
    let placement = Placement::new(world);
    let max_on_node = placement.per_node;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let out = match &args.out {
        Some(path) => path.clone(),
        None => crate::machine::cache_path().ok_or(CalibrateError::NoCache)?,
    };

    let samples = comm_samples(world, args.quick, &placement);

    // Local rates on rank 0 alone, one thread, while the others wait.
    let mut local = [0.0f64; 3];
    let mut fft_per_length = Vec::new();
    if rank == 0 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread pool");
        let (rates, copy, stream) = pool.install(|| {
            (
                fft_rates(args.quick),
                copy_rate(args.quick),
                stream_rate(args.quick),
            )
        });
        let work: f64 = rates.iter().map(|&(_, r)| r).sum::<f64>() / rates.len() as f64;
        local = [work, copy, stream];
        fft_per_length = rates;
    }
    world.process_at_rank(0).broadcast_into(&mut local[..]);

    let oversubscription = (max_on_node as f64 / cores as f64).max(1.0);
    let defaults = MachineProfile::default();
    let fit = fit_network(&samples, oversubscription, &defaults);
    let host = crate::machine::hostname();
    let nodes = placement.nodes;
    let mut source = format!(
        "dfft calibrate on {host}: {size} rank(s) on {nodes} node(s), {max_on_node} per node, {cores} cores per node"
    );
    if samples.is_empty() {
        source.push_str("; one rank: ts/tw are the defaults");
    }
    if fit.inter_measured {
        source.push_str(
            "; inter-node ts/tw from one rank per node, the node link from all ranks at once",
        );
    } else {
        source.push_str(
            "; one node: inter-node ts/tw and the node link set to the intra-node values",
        );
    }
    let profile = MachineProfile {
        ts_intra_s: fit.ts_intra_s,
        tw_intra_s_per_byte: fit.tw_intra_s_per_byte,
        ts_inter_s: fit.ts_inter_s,
        tw_inter_s_per_byte: fit.tw_inter_s_per_byte,
        // One node: nothing to share beyond it; the node link is left unlimited.
        tw_node_s_per_byte: fit.tw_node_s_per_byte,
        // One switch is all a few nodes show: no uplink contention measured.
        switch_nodes: defaults.switch_nodes.max(nodes),
        uplink_taper: 1.0,
        intra_inter_overlap: fit.intra_inter_overlap,
        exchange_overhead_s: fit.exchange_overhead_s,
        fft_s_per_element_log2: local[0],
        copy_bytes_per_s: local[1],
        stream_bytes_per_s: local[2],
        cores_per_node: cores,
        ranks_per_node: max_on_node.max(1),
        threads_per_rank: 1,
        source,
    };
    profile.validate()?;
    let calibration = Calibration {
        ranks: size,
        nodes,
        ranks_on_node: max_on_node,
        oversubscription,
        fit,
        samples,
        fft_per_length,
    };
    let provenance = crate::provenance::Provenance::collect(world);
    if rank == 0 {
        let file = ProfileFile {
            provenance: &provenance,
            profile: &profile,
            calibration: &calibration,
        };
        let text = serde_json::to_string_pretty(&file).expect("a profile serializes");
        let write = || -> std::io::Result<()> {
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = out.with_extension(format!("json.tmp-{}", std::process::id()));
            std::fs::write(&tmp, text.as_bytes())?;
            std::fs::rename(&tmp, &out)
        };
        let written = write().map_err(|source| CalibrateError::Write {
            path: out.display().to_string(),
            source,
        });
        let mut ok = [u8::from(written.is_ok())];
        world.process_at_rank(0).broadcast_into(&mut ok[..]);
        written?;
        if args.json {
            let problem = serde_json::json!({
                "ranks": size,
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
                summary(&out, args.out.is_none(), &profile, &calibration)
            );
        }
    } else {
        let mut ok = [0u8];
        world.process_at_rank(0).broadcast_into(&mut ok[..]);
        if ok[0] == 0 {
            return Err(CalibrateError::Write {
                path: out.display().to_string(),
                source: std::io::Error::other("rank 0 could not write the profile"),
            });
        }
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
