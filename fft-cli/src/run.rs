//! `dfft run`: plan, fill or read the input, time forward+backward pairs, verify, report.
//!
//! One code path for every `--kind` and `--precision`: [`run`] checks the global arguments
//! (the same outcome on every rank), makes the plan of the kind in the precision asked for,
//! and hands it to `crate::execute::Context::execute`, which only sees a `RunPlan`.

use crate::args::RunArgs;
use crate::files::{self, FileRef};
use crate::kind::{Kind, Precision};
use crate::transform::{Inverse, Sample};
use fft_core::view::{block_view, block_view_mut};
use fft_core::{AxisKind, FftError, FftOptions, FftPlan, R2rPlan, Real, RealFftPlan};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use npyio::{Dtype, NpyError, NpyHeader};
use num_complex::Complex;
use redist::{Element, Layout, MemoryOrder};
use std::time::Instant;
use thiserror::Error;

/// The largest relative error `dfft run` accepts, per precision and transform size: the
/// error of an FFT of `n` elements grows like ε·log2(n) (ε the unit round-off), so the limit
/// is `c·log2(n)` with `c` = 1e-12 for f64 (ε = 1.1e-16) and 1e-5 for f32 (ε = 6e-8), the
/// bounds the test suite holds every transform to. `n` counts the physical elements of one
/// field; `log2(n)` is at least 1. A 3×36×5 f64 transform (n = 540) accepts 9.1e-12.
///
/// ```ignore
/// assert!(verify_limit(Precision::F64, 540.0) < 1e-11);
/// ```
pub fn verify_limit(precision: Precision, n: f64) -> f64 {
    let per_level = match precision {
        Precision::F64 => 1e-12,
        Precision::F32 => 1e-5,
    };
    per_level * n.log2().max(1.0)
}

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
    /// Reading or writing an HDF5 file failed.
    #[error(transparent)]
    H5(#[from] h5io::H5Error),
    /// `--kind` does not fit the shape.
    #[error(transparent)]
    Kind(#[from] crate::kind::KindError),
    /// The per-rank memory limit is malformed.
    #[error(transparent)]
    MemoryLimit(#[from] crate::memory_limit::MalformedLimit),
    /// The plan would not fit the memory limit.
    #[error("not enough memory for the plan: {detail} ({origin}); use more ranks or nodes, a smaller shape, or set DFFT_MEMORY_LIMIT")]
    Memory { detail: String, origin: String },
    /// --in-place with --kind c2r.
    #[error("--in-place runs c2c, r2c and r2r plans; a c2r run's input is the half spectrum: use --kind r2c --in-place (its backward is the c2r, in place)")]
    InPlaceC2r,
    /// --roundtrip-output with --kind c2r.
    #[error("--roundtrip-output writes backward(forward(x)) of c2c, r2c and r2r runs; a c2r run's forward is the backward: use --kind r2c --roundtrip-output")]
    RoundtripC2r,
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
    /// The input file's dtype is not the one the kind and precision read.
    #[error("{path}: the file holds {found}, but --kind {kind} --precision {precision} reads {expected}")]
    DtypeMismatch {
        path: String,
        found: Dtype,
        kind: String,
        precision: Precision,
        expected: String,
    },
    /// A batch file without the leading axis of fields.
    #[error("{path}: --batch {batch} reads {batch} fields along the first axis, but the file has shape {shape:?}")]
    BatchAxis {
        path: String,
        batch: usize,
        shape: Vec<usize>,
    },
    /// c2r: the file is not the half spectrum of --shape.
    #[error("--kind c2r --shape {shape:?} reads the half spectrum {want:?}, but {path} has shape {file:?}")]
    HalfSpectrumMismatch {
        shape: Vec<usize>,
        want: Vec<usize>,
        file: Vec<usize>,
        path: String,
    },
    /// The input file has fewer than 2 dimensions.
    #[error("{path}: a distributed FFT needs at least 2 axes, the file has shape {shape:?}")]
    InputRank { path: String, shape: Vec<usize> },
    /// The input file's header could not be read on some rank (but could on rank 0).
    #[error("{path}: the input file could not be read on {ranks} rank(s) (is it on a file system every node sees?)")]
    InputUnreadable { path: String, ranks: u64 },
    /// The --output target is fine on rank 0 but not on some other rank.
    #[error("{path}: the output cannot be written from {ranks} rank(s) (is it on a file system every node sees?)")]
    OutputUnusable { path: String, ranks: u64 },
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
    /// The input is finite but the transforms overflowed to Inf or NaN: the data are too
    /// large for the precision, not the transforms wrong.
    #[error("the transforms overflowed: the input is finite but {what} holds Inf or NaN values (the input's largest magnitude is {largest:.3e}; a transform of {n} values sums up to {n} of them and {precision} holds at most {max:.3e}): scale the data down{written}")]
    Overflow {
        what: &'static str,
        largest: f64,
        n: f64,
        precision: Precision,
        max: f64,
        /// Empty, or why nothing was written.
        written: &'static str,
    },
    /// Verification failed.
    #[error("verification failed: {what} error {error:.3e} exceeds {limit:.0e}{field}")]
    Verification {
        what: &'static str,
        error: f64,
        limit: f64,
        /// Empty, or " (field F of K)" for a batch.
        field: String,
    },
}

/// The maximum over all ranks; a NaN anywhere becomes +Inf (MPI_MAX may drop NaN).
pub(crate) fn max_over_ranks(world: &SimpleCommunicator, x: f64) -> f64 {
    let x = if x.is_nan() { f64::INFINITY } else { x };
    let mut out = 0.0;
    world.all_reduce_into(&x, &mut out, SystemOperation::max());
    out
}

pub(crate) fn sum_over_ranks(world: &SimpleCommunicator, x: u64) -> u64 {
    let mut out = 0;
    world.all_reduce_into(&x, &mut out, SystemOperation::sum());
    out
}

/// The largest value, NaN if any value is NaN (`f64::max` would skip NaN silently).
pub(crate) fn max_or_nan(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |m, v| {
        if m.is_nan() || v.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    })
}

/// What [`run`] settled from the global arguments before planning.
pub(crate) struct Setup {
    /// The physical (real-space) global shape.
    pub shape: Vec<usize>,
    /// The `--input` header, if any (its dtype already checked).
    pub header: Option<NpyHeader>,
}

/// The block of `rank` in a C-order file holding `batch` fields of `layout`'s global shape
/// (a leading axis of length `batch` when `batch > 1`): (starts, counts).
fn file_block(layout: &Layout, rank: usize, batch: usize) -> (Vec<usize>, Vec<usize>) {
    let mut starts = layout.global_offsets(rank);
    let mut counts = layout.local_shape(rank);
    if batch > 1 {
        starts.insert(0, 0);
        counts.insert(0, batch);
    }
    (starts, counts)
}

/// The global shape of a file holding `batch` fields of `shape`.
fn file_shape(shape: &[usize], batch: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    if batch > 1 {
        s.insert(0, batch);
    }
    s
}

/// Copies `batch` fields of `rank`'s block from the memory order of `from` to that of `to`
/// (two layouts of one distribution): both as views in logical axis order.
fn reorder<S: Copy>(
    from: &Layout,
    to: &Layout,
    rank: usize,
    batch: usize,
    src: &[S],
    dst: &mut [S],
) {
    let src = block_view(from, rank, batch, src).expect("a block of `from`");
    block_view_mut(to, rank, batch, dst)
        .expect("a block of `to`")
        .assign(&src);
}

/// Reads this rank's blocks of `--input` into `out` (in `layout`'s memory order). The dtype
/// is `S`'s or, for complex `S`, the real dtype of its precision (widened).
pub(crate) fn read_input<S: Sample>(
    world: &SimpleCommunicator,
    path: &FileRef,
    header: &NpyHeader,
    layout: &Layout,
    batch: usize,
    out: &mut [S],
) -> Result<(), RunError> {
    let rank = world.rank() as usize;
    let (starts, counts) = file_block(layout, rank, batch);
    let natural = layout.with_memory_order(MemoryOrder::natural(layout.ndim()))?;
    if header.dtype == <S as npyio::NpyElement>::DTYPE && layout.memory_order().is_natural() {
        files::read_block(world, path, header, &starts, &counts, out)?;
        return Ok(());
    }
    let mut c_order: Vec<S> = vec![S::default(); out.len()];
    if header.dtype == <S as npyio::NpyElement>::DTYPE {
        files::read_block(world, path, header, &starts, &counts, &mut c_order)?;
    } else {
        let mut real: Vec<S::Real> = vec![S::Real::default(); out.len()];
        files::read_block(world, path, header, &starts, &counts, &mut real)?;
        for (o, v) in c_order.iter_mut().zip(real) {
            *o = S::from_real(v);
        }
    }
    reorder(&natural, layout, rank, batch, &c_order, out);
    Ok(())
}

/// Writes `--output` (if given): the forward output as a C-order .npy file or HDF5 dataset
/// of `S`'s dtype. What was written, if anything.
pub(crate) fn write_output<S: Sample>(
    world: &SimpleCommunicator,
    args: &RunArgs,
    layout: &Layout,
    batch: usize,
    data: &[S],
) -> Result<Option<files::Written>, RunError> {
    let Some(path) = &args.output else {
        return Ok(None);
    };
    let written = write_array(world, args, (path, "forward output"), layout, batch, data)?;
    Ok(Some(written))
}

/// Writes `data` (this rank's blocks of `layout`, `batch` fields) to `path` as a C-order
/// file of `S`'s dtype, every rank its own block; `direction` says what it holds. What was
/// written.
pub(crate) fn write_array<S: Sample>(
    world: &SimpleCommunicator,
    args: &RunArgs,
    (path, direction): (&std::path::Path, &str),
    layout: &Layout,
    batch: usize,
    data: &[S],
) -> Result<files::Written, RunError> {
    let target = FileRef::parse(path);
    let rank = world.rank() as usize;
    let shape = file_shape(layout.global_shape(), batch);
    let (starts, counts) = file_block(layout, rank, batch);
    let list = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    // An HDF5 dataset says what it holds.
    let attributes = [
        ("shape", list(&shape)),
        ("kind", args.kind.to_string()),
        ("precision", args.precision.name().to_string()),
        ("normalization", args.normalization.name().to_string()),
        ("direction", direction.to_string()),
        (
            "layout",
            if batch > 1 {
                "C order, fields along axis 0".to_string()
            } else {
                "C order".to_string()
            },
        ),
    ];
    // The file is C order; a transposed output block is put in C order first.
    let written = if layout.memory_order().is_natural() {
        files::write_block(world, &target, &shape, &starts, &counts, data, &attributes)?
    } else {
        let natural = layout.with_memory_order(MemoryOrder::natural(layout.ndim()))?;
        let mut block = vec![S::default(); data.len()];
        reorder(layout, &natural, rank, batch, data, &mut block);
        files::write_block(
            world,
            &target,
            &shape,
            &starts,
            &counts,
            &block,
            &attributes,
        )?
    };
    Ok(written)
}

/// Reads the `--input` header on every rank and agrees on the outcome; checks the dtype and
/// shape against `--kind`, `--precision`, `--batch` and `--shape`. Global arguments only.
fn setup(world: &SimpleCommunicator, args: &RunArgs) -> Result<Setup, RunError> {
    let setup = match read_header_agreed(world, args)? {
        Some((path, header)) => {
            let shape = check_input(args, &path, &header)?;
            Setup {
                shape,
                header: Some(header),
            }
        }
        None => {
            let shape = args.shape.as_ref().ok_or(RunError::MissingShape)?.0.clone();
            args.kind.check_axes(&shape)?;
            Setup {
                shape,
                header: None,
            }
        }
    };
    check_output_target(world, args, &setup.shape)?;
    Ok(setup)
}

/// An --output (or --roundtrip-output) that cannot be written (a device, a FIFO, a
/// directory, a missing or read-only directory; for HDF5 also a file that is not HDF5, a
/// dataset name that is a group, an `.xmf` path that cannot be written) is refused before any
/// work, on every rank alike.
fn check_output_target(
    world: &SimpleCommunicator,
    args: &RunArgs,
    shape: &[usize],
) -> Result<(), RunError> {
    let real = matches!(args.kind, Kind::C2r | Kind::R2r(_));
    let dims = shape.len() + usize::from(args.batch > 1);
    // The round trip has the input's dtype: real for r2c and r2r.
    let roundtrip_real = matches!(args.kind, Kind::R2c | Kind::R2r(_));
    let targets = [
        (&args.output, real),
        (&args.roundtrip_output, roundtrip_real),
    ];
    for (path, real) in targets {
        let Some(path) = path else {
            continue;
        };
        let checked = files::check_output(&FileRef::parse(path), real && matches!(dims, 2 | 3));
        let failed = sum_over_ranks(world, checked.is_err() as u64);
        match checked {
            Err(e) => return Err(e),
            Ok(_) if failed > 0 => {
                return Err(RunError::OutputUnusable {
                    path: path.display().to_string(),
                    ranks: failed,
                })
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Every rank reads the `--input` header; all agree on the outcome before anything
/// collective, so a file missing on one node fails the job on every rank instead of hanging
/// it. The path as displayed and the header.
fn read_header_agreed(
    world: &SimpleCommunicator,
    args: &RunArgs,
) -> Result<Option<(String, NpyHeader)>, RunError> {
    let Some(path) = &args.input else {
        return Ok(None);
    };
    let header = files::header(&FileRef::parse(path));
    let failed = sum_over_ranks(world, header.is_err() as u64);
    match header {
        Err(e) => Err(e),
        Ok(_) if failed > 0 => Err(RunError::InputUnreadable {
            path: path.display().to_string(),
            ranks: failed,
        }),
        Ok(h) => Ok(Some((path.display().to_string(), h))),
    }
}

/// Checks the input's dtype against `--kind` and `--precision`, and its shape against
/// `--batch` and `--shape`; the physical global shape of the run.
fn check_input(args: &RunArgs, path: &str, header: &NpyHeader) -> Result<Vec<usize>, RunError> {
    let path = path.to_string();
    let expected = args.kind.input_dtype(args.precision);
    let widened = args.kind.widened_input_dtype(args.precision);
    if header.dtype != expected && Some(header.dtype) != widened {
        return Err(RunError::DtypeMismatch {
            path,
            found: header.dtype,
            kind: args.kind.to_string(),
            precision: args.precision,
            expected: match widened {
                Some(w) => format!("{expected} (or {w})"),
                None => expected.to_string(),
            },
        });
    }
    // With --batch K > 1 the fields lie along a leading axis of length K.
    let mut file = header.shape.clone();
    if args.batch > 1 {
        if file.first() != Some(&args.batch) {
            return Err(RunError::BatchAxis {
                path,
                batch: args.batch,
                shape: file,
            });
        }
        file.remove(0);
    }
    if file.len() < 2 {
        return Err(RunError::InputRank {
            path,
            shape: header.shape.clone(),
        });
    }
    redist::layout::check_shape(&file).map_err(|source| RunError::InputShape {
        path: path.clone(),
        source,
    })?;
    let shape = match (&args.kind, &args.shape) {
        // c2r: the file holds the half spectrum; --shape (required) gives the real array.
        (Kind::C2r, Some(s)) => {
            let mut want = args.kind.input_shape(&s.0);
            // A partial c2r halves its highest transformed axis instead of the last.
            if let Some(&half) = args.axes.as_ref().and_then(|a| a.iter().max()) {
                want = s.0.clone();
                want[half] = s.0[half] / 2 + 1;
            }
            if want != file {
                return Err(RunError::HalfSpectrumMismatch {
                    shape: s.0.clone(),
                    want,
                    file,
                    path,
                });
            }
            s.0.clone()
        }
        // (`Cli::check` refuses c2r without --shape before MPI starts.)
        (Kind::C2r, None) => return Err(RunError::MissingShape),
        (_, Some(s)) if s.0 != file => {
            return Err(RunError::ShapeMismatch {
                given: s.0.clone(),
                file,
                path,
            })
        }
        _ => file,
    };
    args.kind.check_axes(&shape)?;
    Ok(shape)
}

/// Runs `dfft run`; prints the report on rank 0.
pub fn run(world: &SimpleCommunicator, args: &RunArgs) -> Result<(), RunError> {
    let setup = setup(world, args)?;
    match args.precision {
        Precision::F32 => run_in::<f32>(world, args, &setup),
        Precision::F64 => run_in::<f64>(world, args, &setup),
    }
}

/// Makes the plan of `--kind` in precision `T` and runs it.
fn run_in<T>(world: &SimpleCommunicator, args: &RunArgs, setup: &Setup) -> Result<(), RunError>
where
    T: Real + Sample<Real = T>,
    Complex<T>: Element + Sample<Real = T>,
{
    // The limit is read here and agreed over the ranks; the plan checks its estimate.
    let limit = crate::memory_limit::agreed(world)?;
    let mut options = FftOptions::default()
        .memory_limit(limit.as_ref().map(|l| l.bytes))
        .grid(args.grid.clone())
        .method(args.method)
        .normalization(args.normalization)
        .transposed_out(args.transposed_out)
        .destroy_input(args.destroy_input)
        .in_place(args.in_place)
        .deterministic(args.deterministic)
        .batch(args.batch)
        .groups(args.groups);
    if args.scrambled_in || args.scrambled_out {
        options = options.one_d(fft_core::OneD {
            columns: None,
            scrambled_in: args.scrambled_in,
            scrambled_out: args.scrambled_out,
        });
    }
    if let Some(axes) = &args.axes {
        options = options.axes(AxisKind::partial(setup.shape.len(), axes, AxisKind::Fft)?);
    }
    // `--grid auto`: the complexity model picks the grid (the same on every rank).
    let (options, model) = crate::plan_cmd::RunModel::prepare(
        world,
        &setup.shape,
        options,
        args.machine.as_ref(),
        std::mem::size_of::<Complex<T>>(),
        args.axes.as_deref(),
    )?;
    let elements = setup.shape.iter().map(|&n| n as f64).product();
    let verify_limit = verify_limit(args.precision, elements);
    let ctx = crate::execute::Context {
        world,
        args,
        setup,
        model,
        verify_limit,
        limit: limit.clone(),
        planning: Instant::now(),
    };
    let shape = &setup.shape;
    // A plan the limit refuses says where the limit comes from.
    let planned = |e: FftError| match e {
        FftError::InsufficientMemory { detail, .. } => RunError::Memory {
            detail,
            origin: limit.as_ref().map_or(String::new(), |l| l.source.clone()),
        },
        e => e.into(),
    };
    if args.in_place && matches!(args.kind, Kind::C2r) {
        return Err(RunError::InPlaceC2r);
    }
    if args.roundtrip_output.is_some() && matches!(args.kind, Kind::C2r) {
        return Err(RunError::RoundtripC2r);
    }
    match &args.kind {
        Kind::C2c => ctx.execute(FftPlan::<T>::new(world, shape, options).map_err(planned)?),
        Kind::R2c => ctx.execute(RealFftPlan::<T>::new(world, shape, options).map_err(planned)?),
        Kind::C2r => ctx.execute(Inverse(
            RealFftPlan::<T>::new(world, shape, options).map_err(planned)?,
        )),
        Kind::R2r(types) => {
            let axes = types.iter().map(|&t| AxisKind::R2r(t)).collect();
            ctx.execute(R2rPlan::<T>::new(world, shape, options.axes(axes)).map_err(planned)?)
        }
    }
}
