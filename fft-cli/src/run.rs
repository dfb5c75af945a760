//! `dfft run`: plan, fill or read the input, time forward+backward pairs, verify, report.

use crate::args::RunArgs;
use crate::planewave::PlaneWaves;
use crate::report::{RunReport, Stages};
use fft_core::{FftError, FftOptions, FftPlan, Normalization};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use npyio::{Dtype, NpyError};
use num_complex::Complex;
use std::path::Path;
use std::time::Instant;
use thiserror::Error;

/// Largest accepted verification error (f64 transforms are ~1e-15 here).
const VERIFY_LIMIT: f64 = 1e-10;

/// Why `dfft run` failed. Every variant is reached identically on every rank.
#[derive(Debug, Error)]
pub enum RunError {
    /// Planning failed.
    #[error(transparent)]
    Fft(#[from] FftError),
    /// A layout computation failed.
    #[error(transparent)]
    Redist(#[from] redist::RedistError),
    /// Reading or writing a .npy file failed.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// Neither --shape nor --input.
    #[error("--shape is required unless --input gives the array")]
    MissingShape,
    /// --shape disagrees with the input file.
    #[error("--shape {given:?} disagrees with the shape {file:?} of {path}")]
    ShapeMismatch {
        given: Vec<usize>,
        file: Vec<usize>,
        path: String,
    },
    /// The input file has fewer than 2 dimensions.
    #[error("{path}: a distributed FFT needs at least 2 axes, the file has shape {shape:?}")]
    InputRank { path: String, shape: Vec<usize> },
    /// The input file's header could not be read on some rank (but could on rank 0).
    #[error("{path}: the input file could not be read on {ranks} rank(s) (is it on a file system every node sees?)")]
    InputUnreadable { path: String, ranks: u64 },
    /// The input file's shape is not a valid global shape.
    #[error("{path}: {source}")]
    InputShape {
        path: String,
        source: redist::RedistError,
    },
    /// The input holds NaN or Inf values: the transforms ran (IEEE propagation) but cannot be
    /// verified.
    #[error("the input has {count} non-finite values (NaN or Inf): the transforms ran{written} but their results cannot be verified")]
    NonFinite { count: u64, written: &'static str },
    /// Verification failed.
    #[error("verification failed: {what} error {error:.3e} exceeds {limit:.0e}")]
    Verification {
        what: &'static str,
        error: f64,
        limit: f64,
    },
}

/// The maximum over all ranks; a NaN anywhere becomes +Inf (MPI_MAX may drop NaN).
fn max_over_ranks(world: &SimpleCommunicator, x: f64) -> f64 {
    let x = if x.is_nan() { f64::INFINITY } else { x };
    let mut out = 0.0;
    world.all_reduce_into(&x, &mut out, SystemOperation::max());
    out
}

fn sum_over_ranks(world: &SimpleCommunicator, x: u64) -> u64 {
    let mut out = 0;
    world.all_reduce_into(&x, &mut out, SystemOperation::sum());
    out
}

/// The largest value, NaN if any value is NaN (`f64::max` would skip NaN silently).
fn max_or_nan(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |m, v| {
        if m.is_nan() || v.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    })
}

/// Test-only fault injection: `DFFT_TEST_PANIC_RANK=<rank>` makes that rank panic in the
/// middle of the timed loop, so tests can check that the job ends through MPI_Abort.
const TEST_PANIC_ENV: &str = "DFFT_TEST_PANIC_RANK";

fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage writes into the struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    if ok {
        usage.ru_maxrss as u64 * 1024 // kilobytes on Linux
    } else {
        0
    }
}

/// Reads this rank's block of a .npy file, widening to complex f64.
fn read_input(
    world: &SimpleCommunicator,
    path: &Path,
    header: &npyio::NpyHeader,
    starts: &[usize],
    counts: &[usize],
    out: &mut [Complex<f64>],
) -> Result<(), NpyError> {
    fn widen<T: npyio::NpyElement + Default + Copy>(
        world: &SimpleCommunicator,
        path: &Path,
        header: &npyio::NpyHeader,
        starts: &[usize],
        counts: &[usize],
        out: &mut [Complex<f64>],
        convert: impl Fn(T) -> Complex<f64>,
    ) -> Result<(), NpyError> {
        let mut buf = vec![T::default(); out.len()];
        npyio::read_block(world, path, header, starts, counts, &mut buf)?;
        for (o, v) in out.iter_mut().zip(buf) {
            *o = convert(v);
        }
        Ok(())
    }
    match header.dtype {
        Dtype::C128 => npyio::read_block(world, path, header, starts, counts, out),
        Dtype::F64 => widen(world, path, header, starts, counts, out, |v: f64| {
            Complex::new(v, 0.0)
        }),
        Dtype::F32 => widen(world, path, header, starts, counts, out, |v: f32| {
            Complex::new(v as f64, 0.0)
        }),
        Dtype::C64 => widen(
            world,
            path,
            header,
            starts,
            counts,
            out,
            |v: Complex<f32>| Complex::new(v.re as f64, v.im as f64),
        ),
    }
}

/// Writes `--output` (if given): the forward transform as a C-order complex128 .npy file.
fn write_output(
    world: &SimpleCommunicator,
    args: &RunArgs,
    shape: &[usize],
    out_layout: &redist::Layout,
    spectrum: &[Complex<f64>],
) -> Result<(), RunError> {
    let rank = world.rank() as usize;
    if let Some(path) = &args.output {
        // The file is C order; a transposed output block is put in C order first.
        let out_starts = out_layout.global_offsets(rank);
        let out_counts = out_layout.local_shape(rank);
        if out_layout.memory_order().is_natural() {
            npyio::write_block(world, path, shape, &out_starts, &out_counts, spectrum)?;
        } else {
            let natural =
                out_layout.with_memory_order(redist::MemoryOrder::natural(shape.len()))?;
            let mut block = vec![Complex::new(0.0, 0.0); spectrum.len()];
            redist::pack::CopyPlan::new(
                &out_counts,
                &out_layout.local_strides(rank),
                &natural.local_strides(rank),
            )
            .run(spectrum, 0, &mut block, 0);
            npyio::write_block(world, path, shape, &out_starts, &out_counts, &block)?;
        }
    }
    Ok(())
}

/// Runs `dfft run`; prints the report on rank 0.
pub fn run(world: &SimpleCommunicator, args: &RunArgs) -> Result<(), RunError> {
    let rank = world.rank() as usize;
    // Every rank reads the header; all agree on the outcome before anything collective, so
    // a file missing on one node fails the job on every rank instead of hanging it.
    let header = match &args.input {
        Some(path) => {
            let header = npyio::read_header(path);
            let failed = sum_over_ranks(world, header.is_err() as u64);
            match header {
                Err(e) => return Err(e.into()),
                Ok(_) if failed > 0 => {
                    return Err(RunError::InputUnreadable {
                        path: path.display().to_string(),
                        ranks: failed,
                    })
                }
                Ok(h) => Some(h),
            }
        }
        None => None,
    };
    let shape = match (&args.shape, &header) {
        (Some(s), Some(h)) if s.0 != h.shape => {
            return Err(RunError::ShapeMismatch {
                given: s.0.clone(),
                file: h.shape.clone(),
                path: args.input.as_ref().unwrap().display().to_string(),
            })
        }
        (_, Some(h)) => {
            if h.shape.len() < 2 {
                return Err(RunError::InputRank {
                    path: args.input.as_ref().unwrap().display().to_string(),
                    shape: h.shape.clone(),
                });
            }
            redist::layout::check_shape(&h.shape).map_err(|source| RunError::InputShape {
                path: args.input.as_ref().unwrap().display().to_string(),
                source,
            })?;
            h.shape.clone()
        }
        (Some(s), None) => s.0.clone(),
        (None, None) => return Err(RunError::MissingShape),
    };
    let mut options = FftOptions::default()
        .grid(args.grid.clone())
        .method(args.method)
        .normalization(Normalization::Backward)
        .transposed_out(args.transposed_out);
    // `--grid auto`: the complexity model picks the grid (the same on every rank).
    let model;
    (options, model) =
        crate::plan_cmd::RunModel::prepare(world, &shape, options, args.machine.as_ref())?;
    let mut plan = FftPlan::<f64>::new(world, &shape, options)?;
    let in_layout = plan.input_layout().clone();
    let out_layout = plan.output_layout().clone();
    let starts = in_layout.global_offsets(rank);
    let counts = in_layout.local_shape(rank);

    let mut input: Vec<Complex<f64>> = redist::alloc::huge_vec(plan.input_len());
    let waves = PlaneWaves::random(&shape, 8, args.seed);
    match (&args.input, &header) {
        (Some(path), Some(h)) => read_input(world, path, h, &starts, &counts, &mut input)?,
        _ => waves.fill(&in_layout, rank, &mut input),
    }
    // NaN and Inf pass through the transforms (IEEE arithmetic); they are counted here so the
    // run can say why it cannot be verified.
    let nonfinite = sum_over_ranks(
        world,
        input
            .iter()
            .filter(|v| !(v.re.is_finite() && v.im.is_finite()))
            .count() as u64,
    );
    let panic_rank: Option<usize> = std::env::var(TEST_PANIC_ENV)
        .ok()
        .and_then(|v| v.parse().ok());
    let mut spectrum: Vec<Complex<f64>> = redist::alloc::huge_vec(plan.output_len());
    let mut back: Vec<Complex<f64>> = redist::alloc::huge_vec(plan.input_len());

    // The forward transform once, checked before any timing. --output is written at the end,
    // after every iteration and the verification, so a run that fails or is killed leaves
    // no file (npyio writes a temporary name and renames it when every rank finished).
    plan.forward(&input, &mut spectrum)?;
    let reference_error = match &args.input {
        Some(_) => None,
        None => Some(max_over_ranks(
            world,
            waves.forward_error(&out_layout, rank, &spectrum),
        )),
    };
    for _ in 0..args.warmup {
        plan.forward(&input, &mut spectrum)?;
        plan.backward(&spectrum, &mut back)?;
    }
    plan.reset_times();
    let mut pair_times = Vec::with_capacity(args.iters as usize);
    let bar = crate::progress::bar(args.iters, rank == 0 && !args.json, "dfft run");
    for iter in 0..args.iters {
        if panic_rank == Some(rank) && iter == args.iters / 2 {
            panic!("{TEST_PANIC_ENV}={rank}: deliberate panic on rank {rank} (test-only)");
        }
        world.barrier();
        let t = Instant::now();
        plan.forward(&input, &mut spectrum)?;
        plan.backward(&spectrum, &mut back)?;
        pair_times.push(max_over_ranks(world, t.elapsed().as_secs_f64()));
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let times = plan.times();
    let per_pair = |x: f64| max_over_ranks(world, x / args.iters as f64);
    let stages = Stages {
        fft_s: per_pair(times.fft),
        pack_s: per_pair(times.pack),
        comm_s: per_pair(times.comm),
        unpack_s: per_pair(times.unpack),
    };

    let local_max = max_or_nan(input.iter().map(|v| v.norm()));
    let global_max = max_over_ranks(world, local_max);
    let local_rt = max_or_nan(back.iter().zip(&input).map(|(a, b)| (a - b).norm()));
    let roundtrip_error = max_over_ranks(world, local_rt) / global_max.max(f64::MIN_POSITIVE);

    pair_times.sort_by(f64::total_cmp);
    let median_s = pair_times[pair_times.len() / 2];
    let report = RunReport {
        ranks: world.size() as usize,
        threads_per_rank: rayon::current_num_threads(),
        shape: shape.clone(),
        grid: plan.grid().shape().dims().to_vec(),
        grid_choice: if model.auto {
            "auto".to_string()
        } else {
            args.grid.to_string()
        },
        predicted_s: model.predicted_s(plan.grid().shape()),
        method: args.method.to_string(),
        transposed_out: args.transposed_out,
        iters: args.iters,
        warmup: args.warmup,
        min_s: pair_times[0],
        median_s,
        stages,
        roundtrip_error,
        reference_error,
        peak_rss_bytes: max_over_ranks(world, peak_rss_bytes() as f64) as u64,
        plan_work_bytes: max_over_ranks(
            world,
            (plan.work_len() * std::mem::size_of::<Complex<f64>>()) as f64,
        ) as u64,
        input: args.input.as_ref().map(|p| p.display().to_string()),
        output: args.output.as_ref().map(|p| p.display().to_string()),
    };
    if rank == 0 {
        if args.json {
            println!("{}", report.to_json());
        } else {
            print!("{}", report.to_table());
        }
    }
    // Non-finite input: the transform is still IEEE-exact, so the output is written, but the
    // run cannot be verified and fails. Finite input that fails verification writes nothing.
    if nonfinite > 0 {
        write_output(world, args, &shape, &out_layout, &spectrum)?;
        return Err(RunError::NonFinite {
            count: nonfinite,
            written: if args.output.is_some() {
                " and --output was written"
            } else {
                ""
            },
        });
    }
    for (what, error) in [
        ("round-trip", Some(roundtrip_error)),
        ("reference", reference_error),
    ] {
        if let Some(error) = error {
            if error.is_nan() || error > VERIFY_LIMIT {
                return Err(RunError::Verification {
                    what,
                    error,
                    limit: VERIFY_LIMIT,
                });
            }
        }
    }
    write_output(world, args, &shape, &out_layout, &spectrum)?;
    Ok(())
}
