//! Collective block-wise reading and writing of `.npy` files with MPI-IO.
//!
//! Every rank of a communicator reads or writes only its own rectangular block
//! `[starts, starts + counts)` of a C-order array stored in one shared `.npy`
//! file; nothing is gathered on one rank. Blocks are described to MPI with
//! `MPI_Type_create_subarray` file views and transferred with the collective
//! `MPI_File_read_all` / `MPI_File_write_all`, so the MPI library can aggregate
//! the many small pieces into large contiguous file accesses.
//!
//! # Collective semantics
//!
//! [`read_block`] and [`write_block`] are collective over the communicator:
//! every rank must call them, and they either succeed on every rank or fail on
//! every rank. Argument checks that depend on local values (buffer lengths,
//! block bounds) are agreed on with an `MPI_Allreduce` before any file is
//! touched, so one rank's bad argument makes all ranks return an error instead
//! of deadlocking. The failing rank returns its own error; the other ranks
//! return [`NpyError::Remote`] carrying the failing rank's message.
//!
//! The file named by `path` *on rank 0* is used (rank 0 makes it absolute and
//! broadcasts it); the arguments that describe the array (the header for
//! reading, dtype and global shape for writing) must be the same on every rank
//! and are checked against rank 0's.
//!
//! # Crash safety of writes
//!
//! [`write_block`] writes a temporary file with a short name beside the target
//! (see [`crate::staging`]: its whole length reserved first, so a full disk is
//! an error before any data moves), syncs and closes it, agrees on success
//! across all ranks, and only then has rank 0 rename it over the target. On any
//! failure the temporary file is removed and the target is left untouched (not
//! created, or with its previous contents). An existing target must be a
//! regular file. A process killed with SIGKILL can leave a stale temporary
//! file (never a half-written target); the next write of the same target on
//! the same host removes it, and [`crate::guard`] removes it on SIGINT/SIGTERM.
//!
//! MPI opens files through `/proc/self/fd/N` aliases of descriptors this
//! process holds, so long paths never reach OpenMPI's fixed-size buffers.
//!
//! # Limits
//!
//! MPI counts and subarray dimensions are C `int`s. Every dimension of the
//! global shape and the number of elements in each rank's (non-empty) block
//! must therefore be at most `i32::MAX`, otherwise [`NpyError::CountTooLarge`]
//! is returned rather than silently truncating. The array as a whole, and the
//! file, may be larger than 2³¹ elements or bytes.
//!
//! Error handling: the opened file's MPI error handler is set to
//! `MPI_ERRORS_RETURN` and every MPI return code is checked and turned into
//! [`NpyError::Mpi`]. Errors of `MPI_File_open` itself go to the handler of
//! `MPI_FILE_NULL`, which is `MPI_ERRORS_RETURN` unless the application changed
//! it. Communicator operations (allreduce, broadcast) use the communicator's
//! error handler as usual.

use std::ffi::{CStr, CString};
use std::mem::size_of;
use std::os::raw::c_int;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::topology::Communicator;
use mpi::traits::{CommunicatorCollectives, Root};
use num_complex::Complex;

use crate::error::NpyError;
use crate::header::{checked_product, encode_header, Dtype, NpyHeader};
use crate::staging::{mpi_name, open_input_as, Staged};

mod mpiio;

use mpiio::{keep_first, Datatype, Direction, MpiFile};

/// Element types that can be read from and written to `.npy` files.
///
/// Implemented for `f32`, `f64`, `Complex<f32>` and `Complex<f64>`. The
/// in-memory representation must be exactly the little-endian file
/// representation of [`DTYPE`](NpyElement::DTYPE); in particular
/// `size_of::<Self>()` must equal `DTYPE.size_bytes()` (checked at compile time
/// when [`read_block`] or [`write_block`] is instantiated). Only little-endian
/// hosts are supported.
///
/// ```
/// use npyio::{Dtype, NpyElement};
/// assert_eq!(<num_complex::Complex<f32> as NpyElement>::DTYPE, Dtype::C64);
/// ```
pub trait NpyElement: bytemuck::Pod + Send + Sync {
    /// The dtype of this element type in a `.npy` file.
    const DTYPE: Dtype;
}

impl NpyElement for f32 {
    const DTYPE: Dtype = Dtype::F32;
}

impl NpyElement for f64 {
    const DTYPE: Dtype = Dtype::F64;
}

impl NpyElement for Complex<f32> {
    const DTYPE: Dtype = Dtype::C64;
}

impl NpyElement for Complex<f64> {
    const DTYPE: Dtype = Dtype::C128;
}

#[cfg(target_endian = "big")]
compile_error!("npyio only supports little-endian targets");

/// Reads this rank's block `[starts, starts + counts)` of the C-order array in
/// the `.npy` file at `path` into `out`, in C order.
///
/// Collective over `comm` (see the [module documentation](self)). `header` is
/// normally obtained with [`read_header`](crate::read_header) and must be the
/// same on every rank. It must have `header.dtype == T::DTYPE` and C order;
/// `starts` and `counts` must have one entry per dimension with
/// `starts[i] + counts[i] <= header.shape[i]`, and `out.len()` must be the
/// product of `counts`. Blocks may overlap; a block with a zero count on some
/// axis is empty (that rank still takes part in the collective calls).
///
/// ```no_run
/// use std::path::Path;
/// use mpi::traits::*;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let path = Path::new("input.npy");
/// let header = npyio::read_header(path)?;
/// // Each rank reads one slab along axis 0 (assuming shape[0] >= number of ranks).
/// let (p, r) = (world.size() as usize, world.rank() as usize);
/// let n0 = header.shape[0];
/// let (start, end) = (r * n0 / p, (r + 1) * n0 / p);
/// let mut starts = vec![0; header.shape.len()];
/// let mut counts = header.shape.clone();
/// starts[0] = start;
/// counts[0] = end - start;
/// let mut block = vec![0.0f64; counts.iter().product()];
/// npyio::read_block(&world, path, &header, &starts, &counts, &mut block)?;
/// # Ok::<(), npyio::NpyError>(())
/// ```
pub fn read_block<T: NpyElement, C: Communicator>(
    comm: &C,
    path: &Path,
    header: &NpyHeader,
    starts: &[usize],
    counts: &[usize],
    out: &mut [T],
) -> Result<(), NpyError> {
    const {
        assert!(
            size_of::<T>() == T::DTYPE.size_bytes(),
            "NpyElement size mismatch"
        )
    };

    // Everything that depends on local arguments is checked and agreed on
    // before the file is opened.
    let local_desc = header_descriptor(header);
    let root_desc = broadcast_from(comm, 0, &local_desc);
    let local = (|| {
        if root_desc != local_desc {
            return Err(NpyError::InconsistentArguments {
                path: PathBuf::new(),
                reason: format!(
                    "this rank's header ({}) differs from rank 0's ({})",
                    describe_descriptor(&local_desc),
                    describe_descriptor(&root_desc)
                ),
            });
        }
        if header.fortran_order {
            return Err(NpyError::FortranOrder {
                path: PathBuf::new(),
            });
        }
        if header.dtype != T::DTYPE {
            return Err(NpyError::DtypeMismatch {
                path: PathBuf::new(),
                expected: T::DTYPE,
                found: header.dtype,
            });
        }
        check_file_extent(header)?;
        let plan = BlockPlan::new(&header.shape, starts, counts, out.len())?;
        let mpi_path = if comm.rank() == 0 {
            absolute_c_path(path)?
        } else {
            CString::default()
        };
        Ok((plan, mpi_path))
    })();
    let (plan, mpi_path) = agree(comm, local.map_err(|e| e.with_path(path)))?;
    let mpi_path = broadcast_c_path(comm, mpi_path);

    // Every rank opens rank 0's file itself (refusing anything but a regular
    // file, without blocking on a FIFO) and MPI opens that descriptor's alias.
    let absolute = Path::new(std::ffi::OsStr::from_bytes(mpi_path.as_bytes()));
    let input = agree(
        comm,
        open_input_as(absolute, path).and_then(|f| mpi_name(&f, absolute).map(|name| (f, name))),
    )?;
    let amode = ffi::MPI_MODE_RDONLY as c_int;
    let file = agree(comm, MpiFile::open(comm, path, &input.1, amode))?;

    // From here on every rank makes the same sequence of collective calls
    // whatever happens locally; local failures only shrink the transfer to
    // zero elements. The outcome is agreed on at the end.
    let mut outcome = file.set_errors_return(path);
    // Reads past the end of the file are not errors in MPI (and OpenMPI's
    // collective reads report the requested count even then), so check the
    // file is long enough up front. Every rank checks, so all report it.
    keep_first(&mut outcome, file.check_length(path, header));
    let (elem, filetype) =
        file.set_block_view(path, header.data_offset, T::DTYPE, &plan, &mut outcome);
    let count = if outcome.is_ok() { plan.count } else { 0 };
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
    keep_first(
        &mut outcome,
        file.transfer(
            path,
            Direction::Read,
            bytes.as_mut_ptr().cast(),
            count,
            &elem,
        ),
    );
    drop((elem, filetype));
    keep_first(&mut outcome, file.close(path));
    agree(comm, outcome)
}

/// Writes the `.npy` file at `path` holding a C-order array of `T` with shape
/// `global_shape`, each rank contributing its block `[starts, starts + counts)`
/// from `data` (in C order).
///
/// Collective over `comm` (see the [module documentation](self)).
/// `global_shape` must be the same on every rank; `starts`/`counts` must have
/// one entry per dimension with `starts[i] + counts[i] <= global_shape[i]`, and
/// `data.len()` must be the product of `counts`. Blocks should be disjoint and
/// cover the array; elements no block covers read back as zero bytes, and
/// overlapping blocks give unspecified results. A zero count on some axis makes
/// a rank's block empty.
///
/// The file is written under a temporary name in the same directory and renamed
/// to `path` by rank 0 only after every rank succeeded, so a failure (on any
/// rank) leaves no file behind and does not touch an existing `path`. The data
/// is synced (`MPI_File_sync`, then `fsync` by rank 0) before the rename.
///
/// ```no_run
/// use std::path::Path;
/// use mpi::traits::*;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// // Rank r writes row r of a (size x 4) array.
/// let (p, r) = (world.size() as usize, world.rank() as usize);
/// let row: Vec<f64> = (0..4).map(|j| (4 * r + j) as f64).collect();
/// npyio::write_block(&world, Path::new("rows.npy"), &[p, 4], &[r, 0], &[1, 4], &row)?;
/// # Ok::<(), npyio::NpyError>(())
/// ```
pub fn write_block<T: NpyElement, C: Communicator>(
    comm: &C,
    path: &Path,
    global_shape: &[usize],
    starts: &[usize],
    counts: &[usize],
    data: &[T],
) -> Result<(), NpyError> {
    const {
        assert!(
            size_of::<T>() == T::DTYPE.size_bytes(),
            "NpyElement size mismatch"
        )
    };
    let local_desc = shape_descriptor(T::DTYPE, global_shape);
    let root_desc = broadcast_from(comm, 0, &local_desc);
    let local = (|| {
        if root_desc != local_desc {
            return Err(NpyError::InconsistentArguments {
                path: PathBuf::new(),
                reason: format!(
                    "this rank's array ({}) differs from rank 0's ({})",
                    describe_descriptor(&local_desc),
                    describe_descriptor(&root_desc)
                ),
            });
        }
        let header_bytes = encode_header(T::DTYPE, global_shape);
        let header = NpyHeader {
            dtype: T::DTYPE,
            shape: global_shape.to_vec(),
            fortran_order: false,
            data_offset: header_bytes.len() as u64,
        };
        let file_len = check_file_extent(&header)?;
        // Written with one MPI call, so it must fit an MPI count.
        c_int::try_from(header_bytes.len()).map_err(|_| NpyError::CountTooLarge {
            path: PathBuf::new(),
            what: format!("the header length for shape {global_shape:?}"),
            value: header_bytes.len() as u64,
        })?;
        let plan = BlockPlan::new(global_shape, starts, counts, data.len())?;
        Ok((plan, header_bytes, file_len))
    })();
    let (plan, header_bytes, file_len) = agree(comm, local.map_err(|e| e.with_path(path)))?;

    let staged = Staged::create(comm, path, file_len)?;
    let written = agree(comm, staged.mpi_name())
        .and_then(|name| write_temporary(comm, path, &name, &plan, &header_bytes, file_len, data));
    staged.finish(comm, written)
}

/// Creates, fills, syncs and closes the temporary file. Collective; returns
/// this rank's local outcome.
fn write_temporary<T: NpyElement, C: Communicator>(
    comm: &C,
    path: &Path,
    mpi_name: &CStr,
    plan: &BlockPlan,
    header_bytes: &[u8],
    file_len: u64,
    data: &[T],
) -> Result<(), NpyError> {
    // The temporary file exists already (created and reserved by rank 0).
    let amode = ffi::MPI_MODE_WRONLY as c_int;
    let file = agree(comm, MpiFile::open(comm, path, mpi_name, amode))?;

    // Same sequence of collective calls on every rank, whatever happens locally.
    let mut outcome = file.set_errors_return(path);
    if comm.rank() == 0 {
        // Independent write through the default (byte) view.
        let byte = Datatype::byte();
        let len = header_bytes.len() as c_int; // checked by the caller
        keep_first(
            &mut outcome,
            file.transfer(
                path,
                Direction::WriteHeader,
                header_bytes.as_ptr().cast_mut().cast(),
                len,
                &byte,
            ),
        );
    }
    // Fixes the file length even if the blocks do not cover the whole array.
    keep_first(&mut outcome, file.set_size(path, file_len));
    let data_offset = header_bytes.len() as u64;
    let (elem, filetype) = file.set_block_view(path, data_offset, T::DTYPE, plan, &mut outcome);
    let count = if outcome.is_ok() { plan.count } else { 0 };
    let bytes: &[u8] = bytemuck::cast_slice(data);
    keep_first(
        &mut outcome,
        file.transfer(
            path,
            Direction::Write,
            bytes.as_ptr().cast_mut().cast(),
            count,
            &elem,
        ),
    );
    drop((elem, filetype));
    keep_first(&mut outcome, file.sync(path));
    keep_first(&mut outcome, file.close(path));
    outcome
}

/// `path` made absolute (without resolving symlinks) as a C string for MPI.
fn absolute_c_path(path: &Path) -> Result<CString, NpyError> {
    let absolute = std::path::absolute(path).map_err(|source| NpyError::Io {
        path: path.to_path_buf(),
        action: "failed to make the path absolute".to_owned(),
        source,
    })?;
    CString::new(absolute.into_os_string().into_vec()).map_err(|_| NpyError::InvalidPath {
        path: path.to_path_buf(),
        reason: "it contains a NUL byte".to_owned(),
    })
}

/// Broadcasts rank 0's path to all ranks.
fn broadcast_c_path<C: Communicator>(comm: &C, path: CString) -> CString {
    let bytes = broadcast_from(comm, 0, path.as_bytes());
    // Rank 0 built it from a `CString`, so it has no interior NUL.
    CString::new(bytes).unwrap_or_default()
}

/// Checks that the whole file fits MPI's `MPI_Offset`; returns its length.
fn check_file_extent(header: &NpyHeader) -> Result<u64, NpyError> {
    header
        .data_len_bytes()?
        .checked_add(header.data_offset)
        .filter(|&len| i64::try_from(len).is_ok())
        .ok_or_else(|| NpyError::ShapeOverflow {
            path: PathBuf::new(),
            shape: header.shape.clone(),
        })
}

/// The shape of this rank's block in the form MPI wants it.
#[derive(Debug)]
struct BlockPlan {
    /// `(sizes, subsizes, starts)` for `MPI_Type_create_subarray`, or `None`
    /// for an empty block (a zero-size subarray is invalid in MPI).
    subarray: Option<[Vec<c_int>; 3]>,
    /// Number of elements in the block.
    count: c_int,
}

impl BlockPlan {
    fn new(
        shape: &[usize],
        starts: &[usize],
        counts: &[usize],
        buffer_len: usize,
    ) -> Result<BlockPlan, NpyError> {
        let invalid = |reason: String| NpyError::InvalidBlock {
            path: PathBuf::new(),
            reason,
        };
        let ndim = shape.len();
        if starts.len() != ndim || counts.len() != ndim {
            return Err(invalid(format!(
                "starts has {} entries and counts has {}, but the array has {ndim} dimensions (shape {shape:?})",
                starts.len(),
                counts.len()
            )));
        }
        for (axis, ((&start, &count), &extent)) in starts.iter().zip(counts).zip(shape).enumerate()
        {
            if !matches!(start.checked_add(count), Some(end) if end <= extent) {
                return Err(invalid(format!(
                    "on axis {axis}, start {start} + count {count} exceeds the array extent {extent} (shape {shape:?})"
                )));
            }
        }
        let elements = checked_product(counts)
            .ok_or_else(|| invalid(format!("block element count overflows (counts {counts:?})")))?;
        if buffer_len != elements {
            return Err(NpyError::BufferLength {
                path: PathBuf::new(),
                expected: elements,
                actual: buffer_len,
            });
        }
        if elements == 0 {
            return Ok(BlockPlan {
                subarray: None,
                count: 0,
            });
        }
        let to_int = |value: usize, what: &dyn Fn() -> String| {
            c_int::try_from(value).map_err(|_| NpyError::CountTooLarge {
                path: PathBuf::new(),
                what: what(),
                value: value as u64,
            })
        };
        let count = to_int(elements, &|| {
            format!("the number of elements in this rank's block (counts {counts:?})")
        })?;
        let subarray = if ndim == 0 {
            // A 0-d array is one element; MPI subarrays need at least one dimension.
            [vec![1], vec![1], vec![0]]
        } else {
            let sizes = shape
                .iter()
                .enumerate()
                .map(|(axis, &n)| {
                    to_int(n, &|| {
                        format!("the extent of axis {axis} (shape {shape:?})")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Both are bounded by the (already checked) extents.
            let subsizes = counts.iter().map(|&c| c as c_int).collect();
            let starts = starts.iter().map(|&s| s as c_int).collect();
            [sizes, subsizes, starts]
        };
        Ok(BlockPlan {
            subarray: Some(subarray),
            count,
        })
    }
}

/// The header fields that must agree across ranks, flattened for a broadcast:
/// `[dtype, fortran_order, data_offset, shape...]`.
fn header_descriptor(header: &NpyHeader) -> Vec<u64> {
    let dtype = Dtype::ALL
        .iter()
        .position(|&d| d == header.dtype)
        .unwrap_or(0) as u64;
    let mut desc = vec![dtype, u64::from(header.fortran_order), header.data_offset];
    desc.extend(header.shape.iter().map(|&n| n as u64));
    desc
}

/// Like [`header_descriptor`] for a file about to be written.
fn shape_descriptor(dtype: Dtype, shape: &[usize]) -> Vec<u64> {
    header_descriptor(&NpyHeader {
        dtype,
        shape: shape.to_vec(),
        fortran_order: false,
        data_offset: 0,
    })
}

/// Human-readable form of a descriptor for error messages.
fn describe_descriptor(desc: &[u64]) -> String {
    match desc {
        [dtype, fortran, offset, shape @ ..] => {
            let dtype = usize::try_from(*dtype)
                .ok()
                .and_then(|i| Dtype::ALL.get(i))
                .map_or("?", |d| d.name());
            let order = if *fortran != 0 { ", Fortran order" } else { "" };
            let offset = if *offset != 0 {
                format!(", data offset {offset}")
            } else {
                String::new()
            };
            format!("dtype {dtype}, shape {shape:?}{order}{offset}")
        }
        _ => format!("{desc:?}"),
    }
}

/// Makes all ranks agree on whether `local` succeeded everywhere.
///
/// Returns `local` if every rank succeeded. Otherwise every rank returns an
/// error: a failing rank its own, the others [`NpyError::Remote`] with the
/// message of the lowest-numbered failing rank. Collective.
pub(crate) fn agree<C: Communicator, T>(
    comm: &C,
    local: Result<T, NpyError>,
) -> Result<T, NpyError> {
    let (rank, size) = (comm.rank(), comm.size());
    let mine = if local.is_ok() { size } else { rank };
    let mut first_failed = size;
    comm.all_reduce_into(&mine, &mut first_failed, SystemOperation::min());
    if first_failed == size {
        return local;
    }
    let message = match &local {
        Err(e) if rank == first_failed => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let message = broadcast_from(comm, first_failed, &message);
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(NpyError::Remote {
            rank: first_failed,
            message: String::from_utf8_lossy(&message).into_owned(),
        }),
    }
}

/// Broadcasts a variable-length slice from `root`; other ranks' `data` is ignored.
pub(crate) fn broadcast_from<C: Communicator, T: Equivalence + Copy + Default>(
    comm: &C,
    root: i32,
    data: &[T],
) -> Vec<T> {
    let root_process = comm.process_at_rank(root);
    let mut len = data.len() as u64;
    root_process.broadcast_into(&mut len);
    let mut buf = if comm.rank() == root {
        data.to_vec()
    } else {
        vec![T::default(); len as usize]
    };
    // (An empty slice's dangling pointer is OpenMPI's MPI_IN_PLACE: never broadcast one.)
    if !buf.is_empty() {
        root_process.broadcast_into(&mut buf[..]);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_plans() {
        let plan = BlockPlan::new(&[7, 5, 6], &[2, 1, 0], &[3, 4, 6], 72).unwrap();
        assert_eq!(plan.count, 72);
        assert_eq!(
            plan.subarray,
            Some([vec![7, 5, 6], vec![3, 4, 6], vec![2, 1, 0]])
        );

        let empty = BlockPlan::new(&[3, 5, 2], &[3, 0, 0], &[0, 5, 2], 0).unwrap();
        assert_eq!((empty.count, empty.subarray), (0, None));

        let zero_d = BlockPlan::new(&[], &[], &[], 1).unwrap();
        assert_eq!(zero_d.count, 1);
        assert_eq!(zero_d.subarray, Some([vec![1], vec![1], vec![0]]));
    }

    #[test]
    fn block_plan_errors() {
        let err = BlockPlan::new(&[7, 5], &[0], &[7, 5], 35).unwrap_err();
        assert_eq!(
            err.with_path("a.npy").to_string(),
            "a.npy: invalid block: starts has 1 entries and counts has 2, but the array has 2 dimensions (shape [7, 5])"
        );
        let err = BlockPlan::new(&[7, 5], &[6, 0], &[2, 5], 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid block: on axis 0, start 6 + count 2 exceeds the array extent 7 (shape [7, 5])"
        );
        let err = BlockPlan::new(&[7], &[usize::MAX], &[2], 2).unwrap_err();
        assert!(matches!(err, NpyError::InvalidBlock { .. }));
        let err = BlockPlan::new(&[7, 5], &[0, 0], &[7, 5], 34).unwrap_err();
        assert_eq!(
            err.to_string(),
            "buffer has 34 elements but the block has 35"
        );

        // MPI's int limits: an extent or a block element count above i32::MAX.
        let big = i32::MAX as usize + 1;
        let err = BlockPlan::new(&[2, big], &[0, 0], &[1, 1], 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the extent of axis 1 (shape [2, 2147483648]) is 2147483648, which exceeds the MPI count limit of 2147483647 (i32::MAX)"
        );
        let err =
            BlockPlan::new(&[1 << 16, 1 << 16], &[0, 0], &[1 << 16, 1 << 16], 1 << 32).unwrap_err();
        assert!(
            matches!(err, NpyError::CountTooLarge { value, .. } if value == 1 << 32),
            "{err}"
        );
        // Empty blocks of huge arrays are fine: nothing is described to MPI.
        assert!(BlockPlan::new(&[2, big], &[0, 0], &[0, big], 0).is_ok());
    }

    #[test]
    fn descriptors() {
        let desc = shape_descriptor(Dtype::C64, &[7, 5, 6]);
        assert_eq!(
            describe_descriptor(&desc),
            "dtype complex64, shape [7, 5, 6]"
        );
        let header = NpyHeader {
            dtype: Dtype::F32,
            shape: vec![3],
            fortran_order: true,
            data_offset: 128,
        };
        assert_eq!(
            describe_descriptor(&header_descriptor(&header)),
            "dtype float32, shape [3], Fortran order, data offset 128"
        );
    }
}
