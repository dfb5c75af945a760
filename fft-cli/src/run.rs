//! `dfft run`: plan, fill or read the input, time forward+backward pairs, verify, report.
//!
//! One code path for every `--kind` and `--precision`: [`run`] checks the global arguments
//! (the same outcome on every rank), makes the plan of the kind in the precision asked for,
//! and hands it to `Context::execute`, which only sees a [`RunPlan`].

use crate::args::{Alloc, RunArgs};
use crate::files::{self, FileRef};
use crate::kind::{Kind, Precision};
use crate::memory::{peak_rss_bytes, pss_bytes, PssSampler};
use crate::report::{RunReport, Stages};
use crate::synthetic::Reference;
use crate::transform::{Inverse, RunPlan, Sample};
use fft_core::view::{block_view, block_view_mut};
use fft_core::{AxisKind, FftError, FftOptions, FftPlan, R2rPlan, Real, RealFftPlan, SharedBlock};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use npyio::{Dtype, NpyError, NpyHeader};
use num_complex::Complex;
use redist::alloc::AlignedBuf;
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

/// What [`run`] settled from the global arguments before planning.
struct Setup {
    /// The physical (real-space) global shape.
    shape: Vec<usize>,
    /// The `--input` header, if any (its dtype already checked).
    header: Option<NpyHeader>,
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
fn read_input<S: Sample>(
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

/// Writes `--output` (if given): the forward output as a C-order .npy file of `S`'s dtype.
/// Whether a file was written.
fn write_output<S: Sample>(
    world: &SimpleCommunicator,
    args: &RunArgs,
    layout: &Layout,
    batch: usize,
    data: &[S],
) -> Result<bool, RunError> {
    let Some(path) = &args.output else {
        return Ok(false);
    };
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
        ("direction", "forward output".to_string()),
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
    if layout.memory_order().is_natural() {
        files::write_block(world, &target, &shape, &starts, &counts, data, &attributes)?;
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
        )?;
    }
    Ok(true)
}

/// Reads the `--input` header on every rank and agrees on the outcome; checks the dtype and
/// shape against `--kind`, `--precision`, `--batch` and `--shape`. Global arguments only.
fn setup(world: &SimpleCommunicator, args: &RunArgs) -> Result<Setup, RunError> {
    // An --output that cannot be written (a device, a FIFO, a directory, a missing directory)
    // is refused before any work, on every rank alike.
    if let Some(path) = &args.output {
        let checked = npyio::check_output_target(FileRef::parse(path).file());
        let failed = sum_over_ranks(world, checked.is_err() as u64);
        match checked {
            Err(e) => return Err(e.into()),
            Ok(_) if failed > 0 => {
                return Err(RunError::OutputUnusable {
                    path: path.display().to_string(),
                    ranks: failed,
                })
            }
            Ok(_) => {}
        }
    }
    // Every rank reads the header; all agree on the outcome before anything collective, so
    // a file missing on one node fails the job on every rank instead of hanging it.
    let header = match &args.input {
        Some(path) => {
            let header = files::header(&FileRef::parse(path));
            let failed = sum_over_ranks(world, header.is_err() as u64);
            match header {
                Err(e) => return Err(e),
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
    let (path, header) = match (&args.input, header) {
        (Some(path), Some(h)) => (path.display().to_string(), h),
        _ => {
            let shape = args.shape.as_ref().ok_or(RunError::MissingShape)?.0.clone();
            args.kind.check_axes(&shape)?;
            return Ok(Setup {
                shape,
                header: None,
            });
        }
    };
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
            let want = args.kind.input_shape(&s.0);
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
    Ok(Setup {
        shape,
        header: Some(header),
    })
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
    let options = FftOptions::default()
        .memory_limit(limit.as_ref().map(|l| l.bytes))
        .grid(args.grid.clone())
        .method(args.method)
        .normalization(args.normalization)
        .transposed_out(args.transposed_out)
        .destroy_input(args.destroy_input)
        .in_place(args.in_place)
        .batch(args.batch);
    // `--grid auto`: the complexity model picks the grid (the same on every rank).
    let (options, model) = crate::plan_cmd::RunModel::prepare(
        world,
        &setup.shape,
        options,
        args.machine.as_ref(),
        std::mem::size_of::<Complex<T>>(),
    )?;
    let elements = setup.shape.iter().map(|&n| n as f64).product();
    let verify_limit = verify_limit(args.precision, elements);
    let ctx = Context {
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

/// Everything [`Context::execute`] needs besides the plan.
struct Context<'a> {
    world: &'a SimpleCommunicator,
    args: &'a RunArgs,
    setup: &'a Setup,
    model: crate::plan_cmd::RunModel,
    verify_limit: f64,
    /// The agreed per-rank memory limit (`None`: no check).
    limit: Option<crate::memory_limit::Limit>,
    /// When planning began (for the phase log).
    planning: Instant,
}

impl Context<'_> {
    /// The synthetic input and exact output of field `field` (seed `--seed` + field).
    fn reference(&self, field: usize, forward_scale: f64) -> Reference {
        let seed = self.args.seed.wrapping_add(field as u64);
        let shape = &self.setup.shape;
        match &self.args.kind {
            Kind::C2c => Reference::c2c(shape, seed, forward_scale),
            Kind::R2c => Reference::r2c(shape, seed, forward_scale),
            Kind::C2r => Reference::c2r(shape, seed, forward_scale),
            Kind::R2r(types) => Reference::r2r(shape, types, seed, forward_scale),
        }
    }

    /// The plan checked its estimate (work and message buffers, scratch, one input and one
    /// output block) against the limit; the run holds more before it allocates its blocks:
    /// `back`, the round trip's input-sized block, and an output-sized one for the c2r check
    /// (`again`) or a reordered `--output`. Global arguments only: every rank agrees.
    fn check_memory<P: RunPlan>(&self, plan: &P) -> Result<(), RunError> {
        let Some(limit) = &self.limit else {
            return Ok(());
        };
        let batch = plan.batch() as u64;
        let plan_needs = fft_core::memory::estimate_memory_batched(
            plan.pipeline(),
            plan.complex_bytes(),
            rayon::current_num_threads(),
            plan.batch(),
        );
        let block = |layout: &Layout, element: usize| {
            (layout.max_local_len() as u64)
                .saturating_mul(batch)
                .saturating_mul(element as u64)
        };
        let reordered =
            self.args.output.is_some() && !plan.output_layout().memory_order().is_natural();
        let output_copy = self.args.kind.forward_is_backward() || reordered;
        let copies = block(plan.input_layout(), std::mem::size_of::<P::In>()).saturating_add(
            if output_copy {
                block(plan.output_layout(), std::mem::size_of::<P::Out>())
            } else {
                0
            },
        );
        let need = plan_needs.total().saturating_add(copies);
        if need > limit.bytes {
            use fft_core::memory::format_bytes;
            return Err(RunError::Memory {
                detail: format!(
                    "needs {} = work {} + messages {} + FFT scratch {} + input/output {} + the run's round-trip{} copies {} per rank, limit {} per rank",
                    format_bytes(need),
                    format_bytes(plan_needs.work_bytes),
                    format_bytes(plan_needs.message_bytes),
                    format_bytes(plan_needs.scratch_bytes),
                    format_bytes(plan_needs.data_bytes),
                    if output_copy { " and output" } else { "" },
                    format_bytes(copies),
                    format_bytes(limit.bytes)
                ),
                origin: limit.source.clone(),
            });
        }
        Ok(())
    }

    /// Fills or reads the input, checks one forward transform against the reference, times
    /// forward+backward pairs, checks the round trip, reports, writes `--output`.
    fn execute<P: RunPlan>(&self, mut plan: P) -> Result<(), RunError> {
        self.check_memory(&plan)?;
        let (world, args) = (self.world, self.args);
        let rank = world.rank() as usize;
        let mut phases = crate::logging::Phases::new("dfft run", rank, self.planning);
        phases.done("plan");
        let in_layout = plan.input_layout().clone();
        let out_layout = plan.output_layout().clone();
        let batch = plan.batch();
        let in_block = in_layout.local_len(rank);
        let out_block = out_layout.local_len(rank);
        if rank == 0 {
            log::info!(
                "dfft run: planned {} {:?} on {} rank(s): grid {} ({}), method {}, batch {}, blocks in {:?} out {:?} (rank 0), plan work {:.1} MiB, model {}",
                args.kind,
                self.setup.shape,
                world.size(),
                plan.grid().shape(),
                if self.model.auto { "chosen by the model" } else { "given" },
                args.method,
                batch,
                in_layout.local_shape(0),
                out_layout.local_shape(0),
                plan.work_bytes() as f64 / (1024.0 * 1024.0),
                self.model.loaded.describe()
            );
        }
        // Scaling of this run's forward and backward, and of backward(forward(x)) / x.
        let logical = args.kind.logical_len(&self.setup.shape);
        let (forward_scale, backward_scale) = args.normalization.factors_f64(logical);
        let (forward_scale, backward_scale) = if args.kind.forward_is_backward() {
            (backward_scale, forward_scale)
        } else {
            (forward_scale, backward_scale)
        };
        let roundtrip_scale = forward_scale * backward_scale * logical;

        // Every block of the run starts on a cache line, as FFTW's driver's (fftw_malloc).
        let mut input: AlignedBuf<P::In> = AlignedBuf::new(in_block * batch);
        let references: Vec<Reference> = match &self.setup.header {
            Some(header) => {
                let path = args.input.as_ref().expect("a header comes from --input");
                read_input(
                    world,
                    &FileRef::parse(path),
                    header,
                    &in_layout,
                    batch,
                    &mut input,
                )?;
                Vec::new()
            }
            None => (0..batch)
                .map(|f| {
                    let r = self.reference(f, forward_scale);
                    r.input.fill(
                        &in_layout,
                        rank,
                        &mut input[f * in_block..(f + 1) * in_block],
                    );
                    r
                })
                .collect(),
        };
        // NaN and Inf pass through the transforms (IEEE arithmetic); they are counted here so
        // the run can say why it cannot be verified.
        let nonfinite = sum_over_ranks(
            world,
            input.iter().filter(|v| !v.is_finite()).count() as u64,
        );
        let panic_rank = crate::fault::panic_rank();
        // The blocks the transforms write; with `--alloc plan` the plan's (shared-memory
        // windows on one node). The input stays a plain vector: no step reads it across ranks.
        // With --in-place, `back` is the one buffer and `output` stays empty.
        let in_place = args.in_place;
        let (mut output, mut back): (SharedBlock<P::Out>, SharedBlock<P::In>) = match args.alloc {
            _ if in_place => (
                AlignedBuf::new(0).into(),
                AlignedBuf::new(plan.in_place_len()).into(),
            ),
            Alloc::Plan => (plan.alloc_output()?, plan.alloc_input()?),
            Alloc::Caller => (
                AlignedBuf::new(out_block * batch).into(),
                AlignedBuf::new(in_block * batch).into(),
            ),
        };

        // The forward transform once, checked before any timing. --output is written at the
        // end, after every iteration and the verification, so a run that fails or is killed
        // leaves no file (npyio writes a temporary name and renames it when every rank
        // finished).
        // With --destroy-input every transform reads a copy (`back` serves as the scratch
        // block): forward(back -> output), backward(output -> back).
        let destroy = args.destroy_input;
        let forward_of_input =
            |plan: &mut P, back: &mut [P::In], output: &mut [P::Out]| -> Result<(), FftError> {
                if in_place {
                    plan.in_place_load(back, &input);
                    plan.forward_in_place(back)
                } else if destroy {
                    back.copy_from_slice(&input);
                    plan.forward_destroying(back, output)
                } else {
                    plan.forward(&input, output)
                }
            };
        let pair = |plan: &mut P, back: &mut [P::In], output: &mut [P::Out]| {
            if in_place {
                plan.forward_in_place(back)?;
                plan.backward_in_place(back)
            } else if destroy {
                plan.forward_destroying(back, output)?;
                plan.backward_destroying(output, back)
            } else {
                plan.forward(&input, output)?;
                plan.backward(output, back)
            }
        };
        phases.done("input and blocks");
        forward_of_input(&mut plan, &mut back, &mut output)?;
        if let (Some(delta), Some(r)) = (crate::fault::perturbation(), references.first()) {
            // Test-only: a wrong answer of relative size `delta` that the checks must catch.
            if let Some(v) = output.first_mut() {
                *v = P::Out::from_c64(v.to_c64() + delta * r.magnitude);
            }
        }
        // Per field: max over ranks of the relative error of the forward output.
        let reference_errors: Vec<f64> = references
            .iter()
            .enumerate()
            .map(|(f, r)| {
                let forward = if in_place {
                    plan.as_output(&back)
                } else {
                    &output
                };
                let got = &forward[f * out_block..(f + 1) * out_block];
                let e = r.output.max_error(&out_layout, rank, got) / r.magnitude;
                max_over_ranks(world, e)
            })
            .collect();
        phases.done("first forward and its check");
        let n_input = input.len();
        for _ in 0..args.warmup {
            reload(&plan, &mut back, &input, destroy, in_place);
            pair(&mut plan, &mut back, &mut output)?;
        }
        phases.done("warm-up pairs");
        plan.reset_times();
        let mut pair_times = Vec::with_capacity(args.iters as usize);
        let mut bar = crate::progress::start(
            args.iters,
            rank,
            args.json,
            args.progress,
            "dfft run: timed pairs",
        );
        for iter in 0..args.iters {
            if panic_rank == Some(rank) && iter == args.iters / 2 {
                crate::fault::deliberate_panic(rank);
            }
            reload(&plan, &mut back, &input, destroy, in_place);
            world.barrier();
            let t = Instant::now();
            pair(&mut plan, &mut back, &mut output)?;
            pair_times.push(max_over_ranks(world, t.elapsed().as_secs_f64()));
            if let Some(b) = &mut bar {
                b.inc();
            }
        }
        if let Some(b) = bar {
            b.finish();
        }
        phases.done("timed pairs");
        let times = plan.times();
        let per_pair = |x: f64| max_over_ranks(world, x / args.iters as f64);
        let stages = Stages {
            fft_s: per_pair(times.fft),
            pack_s: per_pair(times.pack),
            comm_s: per_pair(times.comm),
            unpack_s: per_pair(times.unpack),
        };
        // One more pair, untimed, with the proportional set sampled while it runs: its peak
        // counts whatever a transform holds only while it runs (FFTW's driver measures the
        // same way). It leaves `back` as a timed pair does.
        reload(&plan, &mut back, &input, destroy, in_place);
        world.barrier();
        let sampler = PssSampler::start();
        pair(&mut plan, &mut back, &mut output)?;
        let pss_peak = sampler.finish();
        phases.done("memory-sampled pair");

        // Round trip per field: backward(forward(x)) against roundtrip_scale·x, relative to
        // roundtrip_scale·max |x|. For c2r the input (a half spectrum) need not be Hermitian, so the round
        // trip is taken on the real side: forward(backward(y)) against y = forward(x).
        // `back` holds backward(forward(input)); with --destroy-input, `output` is scratch
        // now and is computed again (for the c2r check and --output).
        let roundtrip_errors: Vec<f64> = if args.kind.forward_is_backward() {
            let mut again: AlignedBuf<P::Out> = AlignedBuf::new(out_block * batch);
            if destroy {
                plan.forward_destroying(&mut back, &mut again)?;
                forward_of_input(&mut plan, &mut back, &mut output)?;
            } else {
                plan.forward(&back, &mut again)?;
            }
            roundtrip(world, &output, &again, roundtrip_scale, out_block, batch)
        } else {
            let mut dense: AlignedBuf<P::In> = AlignedBuf::new(if in_place { n_input } else { 0 });
            if in_place {
                plan.in_place_unload(&back, &mut dense);
            }
            let errors = roundtrip(
                world,
                &input,
                if in_place { &dense } else { &back[..n_input] },
                roundtrip_scale,
                in_block,
                batch,
            );
            if destroy {
                forward_of_input(&mut plan, &mut back, &mut output)?;
            }
            errors
        };
        let worst = |errors: &[f64]| -> Option<(usize, f64)> {
            errors
                .iter()
                .copied()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        let (rt_field, roundtrip_error) = worst(&roundtrip_errors).expect("batch >= 1");
        let reference = worst(&reference_errors);
        phases.done("round trip check");

        // The verdict comes before --output: finite input that fails verification writes
        // nothing. Non-finite input is still transformed IEEE-exactly, so its output is
        // written, but the run cannot be verified and fails.
        let field = |f: usize| {
            if batch > 1 {
                format!(" (field {f} of {batch})")
            } else {
                String::new()
            }
        };
        // Memory as the transforms left it, before --output's buffers.
        let pss_at_end = pss_bytes();
        let memory = (
            max_over_ranks(world, peak_rss_bytes() as f64) as u64,
            max_over_ranks(world, pss_at_end as f64) as u64,
            max_over_ranks(world, pss_peak.max(pss_at_end) as f64) as u64,
            max_over_ranks(world, plan.work_bytes() as f64) as u64,
        );
        let mut verdict = Ok(());
        if nonfinite == 0 {
            for (what, worst) in [
                ("round-trip", Some((rt_field, roundtrip_error))),
                ("reference", reference),
            ] {
                if let Some((f, error)) = worst {
                    if verdict.is_ok() && (error.is_nan() || error > self.verify_limit) {
                        verdict = Err(RunError::Verification {
                            what,
                            error,
                            limit: self.verify_limit,
                            field: field(f),
                        });
                    }
                }
            }
        }
        let written = if verdict.is_ok() {
            write_output(world, args, &out_layout, batch, &output)
        } else {
            Ok(false)
        };
        phases.done("output");
        phases.summary();
        if nonfinite > 0 {
            verdict = Err(RunError::NonFinite {
                count: nonfinite,
                written: if matches!(written, Ok(true)) {
                    " and --output was written"
                } else {
                    ""
                },
            });
        }

        pair_times.sort_by(f64::total_cmp);
        let median_s = pair_times[pair_times.len() / 2];
        let report = RunReport {
            ranks: world.size() as usize,
            threads_per_rank: rayon::current_num_threads(),
            shape: self.setup.shape.clone(),
            grid: plan.grid().shape().dims().to_vec(),
            grid_choice: if self.model.auto {
                "auto".to_string()
            } else {
                args.grid.to_string()
            },
            // The model describes one c2c or r2c field.
            predicted_s: match (&args.kind, batch) {
                (Kind::C2c, 1) => self.model.predicted_s(plan.grid().shape(), false),
                (Kind::R2c, 1) => self.model.predicted_s(plan.grid().shape(), true),
                _ => None,
            },
            machine_profile: self.model.loaded.describe(),
            generic_profile: self.model.loaded.origin == crate::machine::Origin::Defaults,
            method: args.method.to_string(),
            transposed_out: args.transposed_out,
            destroy_input: args.destroy_input,
            in_place: args.in_place,
            kind: args.kind.to_string(),
            precision: args.precision.name().to_string(),
            batch,
            normalization: args.normalization.name().to_string(),
            iters: args.iters,
            warmup: args.warmup,
            min_s: pair_times[0],
            median_s,
            stages,
            roundtrip_error,
            reference_error: reference.map(|r| r.1),
            peak_rss_bytes: memory.0,
            pss_bytes: memory.1,
            pss_peak_bytes: memory.2,
            // The in-place buffer is the run's own, whatever --alloc says.
            alloc: if in_place {
                Alloc::Caller.to_string()
            } else {
                args.alloc.to_string()
            },
            plan_work_bytes: memory.3,
            input: args.input.as_ref().map(|p| p.display().to_string()),
            // Only an output that exists now: a failed run names none.
            output: match written {
                Ok(true) => args.output.as_ref().map(|p| p.display().to_string()),
                _ => None,
            },
        };
        let provenance = crate::provenance::Provenance::collect(world);
        if rank == 0 {
            if args.json {
                println!("{}", report.to_json(&provenance));
            } else {
                print!("{}", report.to_table());
            }
        }
        written?;
        verdict
    }
}

/// Puts the input back before a timed pair where the transforms overwrite it: into the
/// in-place buffer (`in_place`, FFTW's padded rows for r2c) or the scratch block (`destroy`).
fn reload<P: RunPlan>(
    plan: &P,
    back: &mut [P::In],
    input: &[P::In],
    destroy: bool,
    in_place: bool,
) {
    if in_place {
        plan.in_place_load(back, input);
    } else if destroy {
        back[..input.len()].copy_from_slice(input);
    }
}

/// Per field: max over ranks of max |got − scale·want| / (scale · max |want|).
fn roundtrip<S: Sample>(
    world: &SimpleCommunicator,
    want: &[S],
    got: &[S],
    scale: f64,
    block: usize,
    batch: usize,
) -> Vec<f64> {
    (0..batch)
        .map(|f| {
            let range = f * block..(f + 1) * block;
            let (want, got) = (&want[range.clone()], &got[range]);
            let local_max = max_or_nan(want.iter().map(|v| v.to_c64().norm()));
            let global_max = max_over_ranks(world, local_max);
            let local = max_or_nan(
                got.iter()
                    .zip(want)
                    .map(|(g, w)| (g.to_c64() - w.to_c64() * scale).norm()),
            );
            max_over_ranks(world, local) / (scale * global_max).max(f64::MIN_POSITIVE)
        })
        .collect()
}
