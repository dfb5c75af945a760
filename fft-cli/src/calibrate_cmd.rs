//! `dfft calibrate`: measures this machine's model parameters under `mpirun`/`srun` and writes
//! a machine profile (JSON) that `dfft plan --machine` and `dfft run --machine` (or
//! `$DFFT_MACHINE`) read.
//!
//! * **ts, tw**: ping-pong between the two members of every pair of consecutive ranks (all
//!   pairs at once) and `MPI_Alltoall` inside sub-communicators of consecutive ranks of several
//!   sizes k (all groups at once, as the exchanges of an FFT run), for several message sizes m.
//!   One sample per (kind, k, m): the minimum over a few repetitions of the mean over a timed
//!   loop, max over ranks. The model `T = c + (k − 1)(ts + tw·m)` (c: the fixed cost of one
//!   collective call; ping-pong: k = 2, one-way time, no c) is fitted by least squares on relative errors to the all-to-all samples (what the
//!   profile holds: the exchanges are all-to-alls), to the ping-pong samples and to both (the
//!   last two are recorded beside the profile). When a node runs more
//!   ranks than it has cores, the fitted ts and tw are divided by that oversubscription (the
//!   model multiplies them back for the ranks it plans).
//! * **FFT rate**: rank 0 alone, one thread, rustfft on batches of contiguous lines of several
//!   power-of-two lengths: seconds per element·log2 n.
//! * **copy rates**: rank 0 alone, one thread, the exchange's copy kernel on a 3-D block of
//!   4 MiB: with two axes transposed (`copy_bytes_per_s`, element-granular copies) and as a
//!   box of 1 KiB contiguous runs, the way messages are packed (`stream_bytes_per_s`).
//!
//! With all ranks on one node no inter-node pair exists; the inter-node values are set to the
//! intra-node ones and the profile's `source` says so.

use clap::Args;
use fft_core::model::MachineProfile;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use num_complex::Complex;
use redist::pack::CopyPlan;
use rustfft::FftPlanner;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use thiserror::Error;

/// Arguments of `dfft calibrate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Run it under the launcher with the rank count and placement you will use \
(ideally one rank per core):\n  mpirun -n 2 dfft calibrate --out machine.json\n  dfft plan \
--shape 256,256,256 --ranks 2 --machine machine.json\n  DFFT_MACHINE=machine.json mpirun -n 2 \
dfft run --shape 128,128,128"
)]
pub struct CalibrateArgs {
    /// Where to write the profile (JSON).
    #[arg(long, default_value = "dfft-machine.json")]
    pub out: PathBuf,
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
}

/// One timing sample of the communication fit.
#[derive(Debug, Clone, Serialize)]
pub struct CommSample {
    /// "pingpong" or "alltoall".
    pub kind: &'static str,
    /// Group size k.
    pub group: usize,
    /// Bytes per message.
    pub bytes: usize,
    /// Seconds (ping-pong: one way; all-to-all: one call), max over ranks.
    pub seconds: f64,
}

/// What calibration measured, stored beside the profile.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    /// Ranks of the calibration run.
    pub ranks: usize,
    /// Ranks sharing rank 0's node.
    pub ranks_on_node: usize,
    /// Oversubscription the ts/tw fit was divided by.
    pub oversubscription: f64,
    /// (call overhead, ts, tw) fitted to the ping-pong samples alone (no call overhead there).
    pub pingpong_fit: Option<[f64; 3]>,
    /// (call overhead, ts, tw) fitted to the all-to-all samples alone: what the profile holds (divided by
    /// the oversubscription), since the exchanges are all-to-alls.
    pub alltoall_fit: Option<[f64; 3]>,
    /// (call overhead, ts, tw) fitted to all samples.
    pub joint_fit: Option<[f64; 3]>,
    /// Root mean square relative error of the joint fit.
    pub joint_rms_relative_error: Option<f64>,
    /// Root mean square relative error of the all-to-all fit.
    pub alltoall_rms_relative_error: Option<f64>,
    /// The samples.
    pub samples: Vec<CommSample>,
    /// FFT seconds per element·log2 n, per length.
    pub fft_per_length: Vec<(usize, f64)>,
}

#[derive(Serialize)]
struct ProfileFile<'a> {
    #[serde(flatten)]
    profile: &'a MachineProfile,
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

/// Least squares of `t ≈ Σ c_i·x_i` (three columns: calls, messages, bytes) on relative
/// errors, with every coefficient ≥ 0: the best fit over the subsets of columns whose
/// unconstrained solution is non-negative. Returns (coefficients, rms relative error).
pub fn fit_nonnegative(rows: &[([f64; 3], f64)]) -> Option<([f64; 3], f64)> {
    if rows.len() < 2 {
        return None;
    }
    let err = |c: &[f64; 3]| -> f64 {
        (rows
            .iter()
            .map(|(x, t)| ((c[0] * x[0] + c[1] * x[1] + c[2] * x[2] - t) / t).powi(2))
            .sum::<f64>()
            / rows.len() as f64)
            .sqrt()
    };
    let mut best: Option<([f64; 3], f64)> = None;
    for mask in 1u32..8 {
        let cols: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
        let k = cols.len();
        // Normal equations with weights 1/t² (relative errors), solved by Gauss–Jordan.
        let mut a = vec![vec![0.0f64; k + 1]; k];
        for (x, t) in rows {
            let w = 1.0 / (t * t).max(1e-30);
            for (i, &ci) in cols.iter().enumerate() {
                for (j, &cj) in cols.iter().enumerate() {
                    a[i][j] += w * x[ci] * x[cj];
                }
                a[i][k] += w * x[ci] * t;
            }
        }
        let mut ok = true;
        for i in 0..k {
            let pivot = (i..k).max_by(|&p, &q| a[p][i].abs().total_cmp(&a[q][i].abs()));
            let Some(p) = pivot.filter(|&p| a[p][i].abs() > 1e-300) else {
                ok = false;
                break;
            };
            a.swap(i, p);
            let pivot_row = a[i].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != i {
                    let f = row[i] / pivot_row[i];
                    for (x, &y) in row.iter_mut().zip(&pivot_row).skip(i) {
                        *x -= f * y;
                    }
                }
            }
        }
        if !ok {
            continue;
        }
        let mut coef = [0.0f64; 3];
        for (i, &ci) in cols.iter().enumerate() {
            coef[ci] = a[i][k] / a[i][i];
        }
        if coef.iter().any(|&c| c.is_nan() || c < 0.0) {
            continue;
        }
        let e = err(&coef);
        if best.as_ref().is_none_or(|(_, b)| e < *b) {
            best = Some((coef, e));
        }
    }
    best
}

fn comm_samples(world: &SimpleCommunicator, quick: bool) -> Vec<CommSample> {
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
    let (target, tries) = if quick { (0.01, 2) } else { (0.05, 5) };
    let mut groups: Vec<usize> = (1..)
        .map(|e| 1usize << e)
        .take_while(|&k| k <= size)
        .collect();
    if !groups.contains(&size) {
        groups.push(size);
    }
    for &k in &groups {
        let color = (rank / k) as mpi::Count;
        let group = world
            .split_by_color(mpi::topology::Color::with_value(color))
            .expect("every rank has a color");
        let gsize = group.size() as usize;
        let grank = group.rank();
        for &m in sizes {
            if k == 2 {
                // Ping-pong: member 0 sends, member 1 returns (when the group has two).
                let mut buf = vec![0u8; m];
                let seconds = time_collective(world, target, tries, || {
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
                });
            }
            let send = vec![1u8; m * gsize];
            let mut recv = vec![0u8; m * gsize];
            let seconds = time_collective(world, target, tries, || {
                group.all_to_all_into(&send[..], &mut recv[..]);
            });
            samples.push(CommSample {
                kind: "alltoall",
                group: k,
                bytes: m,
                seconds,
            });
        }
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
    let node = world.split_shared(0);
    let ranks_on_node = node.size() as usize;
    let mut max_on_node = 0.0;
    world.all_reduce_into(
        &(ranks_on_node as f64),
        &mut max_on_node,
        SystemOperation::max(),
    );
    let max_on_node = max_on_node as usize;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let samples = comm_samples(world, args.quick);

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

    // Columns: collective calls (all-to-all only), messages per rank, bytes per rank. With a
    // single group size (2 ranks) calls and messages are collinear: ts only, no call column.
    let mut group_sizes: Vec<usize> = samples
        .iter()
        .filter(|s| s.kind == "alltoall")
        .map(|s| s.group)
        .collect();
    group_sizes.dedup();
    let separable = group_sizes.len() > 1;
    let rows = |kind: Option<&str>| -> Vec<([f64; 3], f64)> {
        samples
            .iter()
            .filter(|s| kind.is_none_or(|k| s.kind == k))
            .map(|s| {
                let peers = (s.group - 1) as f64;
                let calls = if s.kind == "alltoall" && separable {
                    1.0
                } else {
                    0.0
                };
                ([calls, peers, peers * s.bytes as f64], s.seconds)
            })
            .collect()
    };
    let pingpong = fit_nonnegative(&rows(Some("pingpong")));
    let alltoall = fit_nonnegative(&rows(Some("alltoall")));
    let joint = fit_nonnegative(&rows(None));
    let oversubscription = (max_on_node as f64 / cores as f64).max(1.0);
    let defaults = MachineProfile::default();
    // The exchanges are all-to-alls: the profile takes that fit (the joint one if missing).
    let (overhead, ts, tw) = match alltoall.or(joint) {
        Some((c, _)) => (
            c[0] / oversubscription,
            c[1] / oversubscription,
            c[2] / oversubscription,
        ),
        None => (
            defaults.exchange_overhead_s,
            defaults.ts_intra_s,
            defaults.tw_intra_s_per_byte,
        ),
    };
    let nodes = size.div_ceil(max_on_node.max(1));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown host".into());
    let mut source = format!(
        "dfft calibrate on {host}: {size} rank(s), {max_on_node} per node, {cores} cores per node"
    );
    if joint.is_none() {
        source.push_str("; one rank: ts/tw are the defaults");
    }
    if nodes == 1 {
        source.push_str("; one node: inter-node ts/tw set to the intra-node values");
    } else {
        source.push_str("; several nodes: ts/tw fitted to mixed intra/inter-node groups");
    }
    let profile = MachineProfile {
        ts_intra_s: ts,
        tw_intra_s_per_byte: tw,
        ts_inter_s: ts,
        tw_inter_s_per_byte: tw,
        exchange_overhead_s: overhead,
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
        ranks_on_node: max_on_node,
        oversubscription,
        pingpong_fit: pingpong.map(|(c, _)| c),
        alltoall_fit: alltoall.map(|(c, _)| c),
        joint_fit: joint.map(|(c, _)| c),
        joint_rms_relative_error: joint.map(|(_, e)| e),
        alltoall_rms_relative_error: alltoall.map(|(_, e)| e),
        samples,
        fft_per_length,
    };
    if rank == 0 {
        let file = ProfileFile {
            profile: &profile,
            calibration: &calibration,
        };
        let text = serde_json::to_string_pretty(&file).expect("a profile serializes");
        let write = || -> std::io::Result<()> {
            let tmp = args.out.with_extension("json.tmp");
            std::fs::write(&tmp, text.as_bytes())?;
            std::fs::rename(&tmp, &args.out)
        };
        let written = write().map_err(|source| CalibrateError::Write {
            path: args.out.display().to_string(),
            source,
        });
        let mut ok = [u8::from(written.is_ok())];
        world.process_at_rank(0).broadcast_into(&mut ok[..]);
        written?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string(&file).expect("a profile serializes")
            );
        } else {
            println!("dfft calibrate: wrote {}", args.out.display());
            println!("  {}", profile.source);
            println!(
                "  ts {:.3e} s   tw {:.3e} s/B ({:.2} GB/s), all-to-all fit, rms relative error {:.1} %",
                profile.ts_intra_s,
                profile.tw_intra_s_per_byte,
                1e-9 / profile.tw_intra_s_per_byte.max(1e-300),
                100.0 * calibration.alltoall_rms_relative_error.unwrap_or(0.0)
            );
            println!(
                "  exchange call overhead {:.3e} s",
                profile.exchange_overhead_s
            );
            if let Some(p) = calibration.pingpong_fit {
                println!("  ping-pong alone: ts {:.3e} tw {:.3e}", p[1], p[2]);
            }
            println!(
                "  fft {:.3e} s per element·log2 n   copies {:.2} GB/s transposing, {:.2} GB/s in 1 KiB runs (one core)",
                profile.fft_s_per_element_log2,
                profile.copy_bytes_per_s * 1e-9,
                profile.stream_bytes_per_s * 1e-9
            );
        }
    } else {
        let mut ok = [0u8];
        world.process_at_rank(0).broadcast_into(&mut ok[..]);
        if ok[0] == 0 {
            return Err(CalibrateError::Write {
                path: args.out.display().to_string(),
                source: std::io::Error::other("rank 0 could not write the profile"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fit_nonnegative;

    #[test]
    fn fit_recovers_exact_parameters() {
        let (c, ts, tw) = (5e-6, 2e-6, 3e-10);
        let rows: Vec<([f64; 3], f64)> = [1usize, 3, 7]
            .iter()
            .flat_map(|&k| {
                [8.0, 1024.0, 1e6].map(move |m| {
                    let x = k as f64;
                    ([1.0, x, x * m], c + x * (ts + tw * m))
                })
            })
            .collect();
        let (coef, e) = fit_nonnegative(&rows).unwrap();
        for (got, want) in coef.iter().zip([c, ts, tw]) {
            assert!((got / want - 1.0).abs() < 1e-6, "{coef:?}");
        }
        assert!(e < 1e-9);
        assert!(fit_nonnegative(&rows[..1]).is_none());
        // A negative unconstrained intercept is dropped, not returned.
        let rows: Vec<([f64; 3], f64)> = [1.0, 2.0, 4.0]
            .map(|x| ([1.0, x, 0.0], 3.0 * x - 0.5))
            .to_vec();
        let (coef, _) = fit_nonnegative(&rows).unwrap();
        assert!(coef.iter().all(|&v| v >= 0.0) && coef[0] == 0.0, "{coef:?}");
    }
}
