//! Distributed fields in parallel HDF5 files.
//!
//! ```no_run
//! use mpi::topology::Communicator;
//! use num_complex::Complex;
//! use std::path::Path;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let (rank, size) = (world.rank() as usize, world.size() as usize);
//! // An 8 x 4 field, each rank holding its rows (here 8 divides evenly over 1, 2, 4, 8 ranks).
//! let rows = 8 / size;
//! let block: Vec<Complex<f64>> = (0..rows * 4)
//!     .map(|i| Complex::new((rank * rows * 4 + i) as f64, 0.0))
//!     .collect();
//! let path = Path::new("field.h5");
//! let field = h5io::FieldWrite {
//!     dataset: "/u",
//!     global_shape: &[8, 4],
//!     starts: &[rank * rows, 0],
//!     counts: &[rows, 4],
//!     data: &block,
//!     attributes: &[("kind", "c2c".to_string())],
//! };
//! h5io::write_fields(&world, path, &[field]).unwrap(); // collective, all-or-nothing
//! let mut back = vec![Complex::default(); rows * 4];
//! h5io::read_field(&world, path, "/u", &[rank * rows, 0], &[rows, 4], &mut back).unwrap();
//! assert_eq!(back, block);
//! ```
//!
//! Every rank writes (or reads) only its own block of each field, as a hyperslab of one
//! dataset of the field's global shape, with collective MPI-IO transfers (HDF5's MPI-IO
//! driver over `hdf5-metno`). Complex values are the compound `{r, i}` that h5py and
//! numpy read as `complex64`/`complex128`. Several fields (and steps: datasets in groups such
//! as `/step_000100/u`) go into one file in one call, each with its attributes.
//!
//! Files are all-or-nothing, as `.npy` outputs are ([`npyio::Staged`]): written under a short
//! temporary name beside the target, its space reserved first, and renamed over the target
//! only after every rank succeeded; HDF5 opens the file through `/proc/self/fd/N`.
//! [`write_xdmf`] writes an XDMF description beside a file so ParaView opens its real fields.

mod target;
mod xdmf;

pub use target::{check_target, Action};
pub use xdmf::{write_xdmf, xdmf_path};

use std::ffi::CStr;
use std::path::{Path, PathBuf};

use hdf5::types::{FloatSize, TypeDescriptor};
use hdf5_sys::{h5d, h5i::hid_t, h5p, h5s};
use mpi::topology::Communicator;
use npyio::{Dtype, NpyError, Staged};
use num_complex::Complex;

/// Everything that can go wrong, with the file and dataset concerned.
#[derive(Debug, thiserror::Error)]
pub enum H5Error {
    /// The staging of the output (target checks, temporary file, rename) failed.
    #[error(transparent)]
    Staging(#[from] NpyError),
    /// The HDF5 library returned an error.
    #[error("{path}: {what}: {source}")]
    Hdf5 {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: String,
        /// HDF5's error.
        #[source]
        source: hdf5::Error,
    },
    /// A raw HDF5 call failed.
    #[error("{path}: {call} failed for dataset {dataset}")]
    Call {
        /// The file.
        path: PathBuf,
        /// The dataset.
        dataset: String,
        /// The HDF5 function.
        call: &'static str,
    },
    /// A block that does not fit the field, or a buffer of the wrong length.
    #[error("{path}: dataset {dataset}: {reason}")]
    Block {
        /// The file.
        path: PathBuf,
        /// The dataset.
        dataset: String,
        /// What is wrong, with the values.
        reason: String,
    },
    /// This rank's list of fields to write differs from rank 0's (their number, a dataset
    /// name, a global shape or the attributes), which HDF5's collective metadata calls need
    /// the same on every rank.
    #[error("{path}: this rank's fields differ from rank 0's: {what}")]
    InconsistentFields {
        /// The file.
        path: PathBuf,
        /// What differs, with both values.
        what: String,
    },
    /// A dataset name that names no dataset (empty, the root group, `.` or `..`).
    #[error("{path}: dataset name '{dataset}' {reason}")]
    DatasetName {
        /// The file.
        path: PathBuf,
        /// The name given.
        dataset: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An object of the file stands in the way of a dataset to write: a group of that name,
    /// or a dataset where a group of its path should be.
    #[error("{path}: {name} {what}")]
    Conflict {
        /// The file.
        path: PathBuf,
        /// The object in the way.
        name: String,
        /// What it is and why that is refused.
        what: String,
    },
    /// An existing target that HDF5 cannot open: it is not replaced.
    #[error("{path}: exists and is not an HDF5 file ({source}): it is left as it is; remove it or choose another name")]
    NotHdf5 {
        /// The file.
        path: PathBuf,
        /// HDF5's error.
        #[source]
        source: hdf5::Error,
    },
    /// A dataset of a type this crate does not read.
    #[error("{path}: dataset {dataset} holds {found}; expected float32, float64, or the complex compound {{r, i}} of either")]
    UnsupportedType {
        /// The file.
        path: PathBuf,
        /// The dataset.
        dataset: String,
        /// What it holds.
        found: String,
    },
    /// Another rank failed.
    #[error("rank {rank} failed: {message}")]
    Remote {
        /// The lowest failing rank.
        rank: i32,
        /// Its message.
        message: String,
    },
}

/// Element types of fields: `f32`, `f64`, `Complex<f32>`, `Complex<f64>`.
pub trait H5Element: hdf5::H5Type + Copy + Default + Send + Sync + 'static {
    /// The same type's `.npy` dtype (the names the rest of dfft uses).
    const FIELD_DTYPE: Dtype;
}

impl H5Element for f32 {
    const FIELD_DTYPE: Dtype = Dtype::F32;
}
impl H5Element for f64 {
    const FIELD_DTYPE: Dtype = Dtype::F64;
}
impl H5Element for Complex<f32> {
    const FIELD_DTYPE: Dtype = Dtype::C64;
}
impl H5Element for Complex<f64> {
    const FIELD_DTYPE: Dtype = Dtype::C128;
}

/// One field to write: this rank's block `[starts, starts + counts)` of a dataset of
/// `global_shape`, in C order, with string attributes (shape, kind, normalization, layout...).
pub struct FieldWrite<'a, T> {
    /// Dataset path in the file, e.g. `/u` or `/step_000100/u` (groups are created).
    pub dataset: &'a str,
    /// The global shape.
    pub global_shape: &'a [usize],
    /// This rank's block.
    pub starts: &'a [usize],
    /// This rank's block.
    pub counts: &'a [usize],
    /// The block's values, C order.
    pub data: &'a [T],
    /// Attributes of the dataset (name, value).
    pub attributes: &'a [(&'a str, String)],
}

/// What [`field_info`] finds: the dataset's shape and element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    /// The global shape.
    pub shape: Vec<usize>,
    /// Its element type.
    pub dtype: Dtype,
}

/// Makes every rank agree on `local`: the failing rank returns its error, the others
/// [`H5Error::Remote`] with its message.
fn agree<C: Communicator, T>(comm: &C, local: Result<T, H5Error>) -> Result<T, H5Error> {
    use mpi::collective::SystemOperation;
    use mpi::traits::CommunicatorCollectives;
    let (rank, size) = (comm.rank(), comm.size());
    let mine = if local.is_ok() { size } else { rank };
    let mut first = size;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == size {
        return local;
    }
    let message = match &local {
        Err(e) if rank == first => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let message = broadcast_bytes(comm, first, message);
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(H5Error::Remote {
            rank: first,
            message: String::from_utf8_lossy(&message).into_owned(),
        }),
    }
}

/// `root`'s bytes on every rank (the others' `bytes` are ignored). Collective.
fn broadcast_bytes<C: Communicator>(comm: &C, root: i32, mut bytes: Vec<u8>) -> Vec<u8> {
    use mpi::traits::Root;
    let root = comm.process_at_rank(root);
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    // (An empty slice's dangling pointer is OpenMPI's MPI_IN_PLACE: never broadcast one.)
    if !bytes.is_empty() {
        root.broadcast_into(&mut bytes[..]);
    }
    bytes
}

/// What of `fields` must be the same on every rank, one line per field: its dataset, global
/// shape and attributes.
fn describe_fields<T>(fields: &[FieldWrite<'_, T>]) -> Vec<String> {
    fields
        .iter()
        .map(|f| {
            format!(
                "dataset {} of shape {:?} with attributes {:?}",
                f.dataset, f.global_shape, f.attributes
            )
        })
        .collect()
}

/// An error on the ranks whose `fields` differ from rank 0's, naming the first difference.
/// Collective (one broadcast of rank 0's description); the caller agrees on the outcome.
fn check_same_fields<C: Communicator, T>(
    comm: &C,
    path: &Path,
    fields: &[FieldWrite<'_, T>],
) -> Result<(), H5Error> {
    let mine = describe_fields(fields);
    let theirs = broadcast_bytes(comm, 0, mine.join("\n").into_bytes());
    let theirs = String::from_utf8_lossy(&theirs);
    let theirs: Vec<&str> = if fields.is_empty() && theirs.is_empty() {
        Vec::new()
    } else {
        theirs.split('\n').collect()
    };
    let what = if mine.len() != theirs.len() {
        format!("{} fields here, {} on rank 0", mine.len(), theirs.len())
    } else if let Some((i, (a, b))) = mine
        .iter()
        .zip(&theirs)
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        format!("field {i} is {a} here and {b} on rank 0")
    } else {
        return Ok(());
    };
    Err(H5Error::InconsistentFields {
        path: path.to_path_buf(),
        what,
    })
}

/// How [`open_file`] opens.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Create,
    ReadWrite,
    Read,
}

/// Opens the file `name` (an MPI name of `path`) with MPI-IO over `comm`.
fn open_file<C: Communicator>(
    comm: &C,
    name: &CStr,
    how: Open,
    path: &Path,
) -> Result<hdf5::File, H5Error> {
    let name = name.to_string_lossy().into_owned();
    let mut builder = hdf5::FileBuilder::new();
    builder.with_fapl(|p| p.mpio(comm.as_raw(), None));
    let opened = match how {
        Open::Create => builder.create(&name),
        Open::ReadWrite => builder.open_rw(&name),
        Open::Read => builder.open(&name),
    };
    opened.map_err(|source| match how {
        Open::ReadWrite => H5Error::NotHdf5 {
            path: path.to_path_buf(),
            source,
        },
        _ => H5Error::Hdf5 {
            path: path.to_path_buf(),
            what: if how == Open::Create {
                "cannot create"
            } else {
                "cannot open"
            }
            .to_string(),
            source,
        },
    })
}

/// Checks a block against the shape and the buffer length; its element count.
fn check_block(
    path: &Path,
    dataset: &str,
    shape: &[usize],
    starts: &[usize],
    counts: &[usize],
    len: usize,
) -> Result<usize, H5Error> {
    let bad = |reason: String| H5Error::Block {
        path: path.to_path_buf(),
        dataset: dataset.to_string(),
        reason,
    };
    if starts.len() != shape.len() || counts.len() != shape.len() {
        return Err(bad(format!(
            "starts {starts:?} and counts {counts:?} do not match the shape {shape:?}"
        )));
    }
    for (axis, ((&s, &c), &n)) in starts.iter().zip(counts).zip(shape).enumerate() {
        if !matches!(s.checked_add(c), Some(end) if end <= n) {
            return Err(bad(format!(
                "on axis {axis}, start {s} + count {c} exceeds the extent {n}"
            )));
        }
    }
    let elements: usize = counts.iter().product();
    if elements != len {
        return Err(bad(format!(
            "the buffer has {len} elements but the block {counts:?} has {elements}"
        )));
    }
    Ok(elements)
}

/// Moves this rank's block between `buf` and the dataset with a collective transfer.
///
/// # Safety
/// `buf` must hold `counts`' product elements of the dataset's memory type `T`.
fn transfer<T: H5Element>(
    dataset: &hdf5::Dataset,
    starts: &[usize],
    counts: &[usize],
    buf: *mut T,
    write: bool,
    path: &Path,
    name: &str,
) -> Result<(), H5Error> {
    let fail = |call| H5Error::Call {
        path: path.to_path_buf(),
        dataset: name.to_string(),
        call,
    };
    let elements: usize = counts.iter().product();
    let memtype = hdf5::Datatype::from_type::<T>().map_err(|source| H5Error::Hdf5 {
        path: path.to_path_buf(),
        what: format!("no HDF5 type for {}", T::FIELD_DTYPE),
        source,
    })?;
    let st: Vec<u64> = starts.iter().map(|&s| s as u64).collect();
    let ct: Vec<u64> = counts.iter().map(|&c| c as u64).collect();
    // SAFETY: plain HDF5 calls on live identifiers; every identifier made here is closed
    // below; `buf` holds `elements` values of `T` (the caller's promise), matching the memory
    // dataspace of `elements` (an empty selection when there are none).
    unsafe {
        let fspace: hid_t = h5d::H5Dget_space(dataset.id());
        let mspace: hid_t =
            h5s::H5Screate_simple(1, [elements.max(1) as u64].as_ptr(), std::ptr::null());
        let dxpl: hid_t = h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_XFER);
        let mut rc = if fspace < 0 || mspace < 0 || dxpl < 0 {
            -1
        } else {
            0
        };
        if rc >= 0 {
            rc = if elements > 0 {
                h5s::H5Sselect_hyperslab(
                    fspace,
                    h5s::H5S_seloper_t::H5S_SELECT_SET,
                    st.as_ptr(),
                    std::ptr::null(),
                    ct.as_ptr(),
                    std::ptr::null(),
                )
            } else {
                // This rank moves nothing but still takes part in the collective call.
                h5s::H5Sselect_none(fspace).min(h5s::H5Sselect_none(mspace))
            };
        }
        if rc >= 0 {
            rc = h5p::H5Pset_dxpl_mpio(dxpl, h5p::H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE);
        }
        let (call, moved) = if write {
            (
                "H5Dwrite",
                h5d::H5Dwrite(
                    dataset.id(),
                    memtype.id(),
                    mspace,
                    fspace,
                    dxpl,
                    buf.cast_const().cast(),
                ),
            )
        } else {
            (
                "H5Dread",
                h5d::H5Dread(dataset.id(), memtype.id(), mspace, fspace, dxpl, buf.cast()),
            )
        };
        for id in [dxpl] {
            if id >= 0 {
                h5p::H5Pclose(id);
            }
        }
        for id in [mspace, fspace] {
            if id >= 0 {
                h5s::H5Sclose(id);
            }
        }
        if rc < 0 {
            return Err(fail("selecting the hyperslab"));
        }
        if moved < 0 {
            return Err(fail(call));
        }
    }
    Ok(())
}

/// The group of `dataset`'s path, created with its parents as needed, and the last name.
fn parent_group<'a>(file: &hdf5::File, dataset: &'a str) -> hdf5::Result<(hdf5::Group, &'a str)> {
    let trimmed = dataset.trim_start_matches('/');
    let (dirs, name) = match trimmed.rsplit_once('/') {
        Some((dirs, name)) => (dirs, name),
        None => ("", trimmed),
    };
    let mut group = file.as_group()?;
    for part in dirs.split('/').filter(|p| !p.is_empty()) {
        group = match group.group(part) {
            Ok(g) => g,
            Err(_) => group.create_group(part)?,
        };
    }
    Ok((group, name))
}

/// Writes `fields` (the same list on every rank; each rank its own blocks) into the HDF5 file
/// at `path`, all-or-nothing: each field's dataset is added, or replaces an existing dataset
/// of that name, and everything else in the file (other datasets, groups, attributes) is
/// kept byte for byte. The file is changed as a copy beside it (`npyio::Staged`) renamed over
/// it only once every rank succeeded, so a failed or interrupted write leaves it exactly as
/// it was. A name that is a group, or whose path runs through a dataset, and an existing
/// target that is not an HDF5 file are refused ([`check_target`] says so before any work).
/// Collective over `comm`; every rank returns the same outcome: what was done to each field.
/// The ranks agree on their arguments before any file is made: a list that differs from rank
/// 0's (number of fields, dataset names, global shapes, attributes:
/// [`H5Error::InconsistentFields`]) or a block or buffer that does not fit on any rank
/// ([`H5Error::Block`]) fails there and is [`H5Error::Remote`] on the others.
pub fn write_fields<C: Communicator, T: H5Element>(
    comm: &C,
    path: &Path,
    fields: &[FieldWrite<'_, T>],
) -> Result<Vec<Action>, H5Error> {
    let same = check_same_fields(comm, path, fields);
    let checked = same.and_then(|()| {
        fields.iter().try_for_each(|f| {
            target::components(path, f.dataset)?;
            check_block(
                path,
                f.dataset,
                f.global_shape,
                f.starts,
                f.counts,
                f.data.len(),
            )
            .map(|_| ())
        })
    });
    agree(comm, checked)?;
    let staged = Staged::create(comm, path, 0)?;
    let written = agree(comm, staged.copy_target(comm).map_err(H5Error::from))
        .and_then(|copied| write_into(comm, &staged, path, fields, copied));
    match written {
        Ok(actions) => staged
            .finish(comm, Ok(()))
            .map(|()| actions)
            .map_err(H5Error::from),
        Err(e) => {
            // Every rank failed alike: the vote fails and the temporary file goes.
            let _ = staged.finish(
                comm,
                Err(NpyError::InvalidPath {
                    path: path.to_path_buf(),
                    reason: "not written".to_string(),
                }),
            );
            Err(e)
        }
    }
}

/// [`write_fields`] into the staged file, which holds a copy of the target's `copied` bytes
/// (0: a new file). Collective; what was done to each field.
fn write_into<C: Communicator, T: H5Element>(
    comm: &C,
    staged: &Staged,
    path: &Path,
    fields: &[FieldWrite<'_, T>],
    copied: u64,
) -> Result<Vec<Action>, H5Error> {
    let name = agree(comm, staged.mpi_name().map_err(H5Error::from))?;
    let how = if copied > 0 {
        Open::ReadWrite
    } else {
        Open::Create
    };
    let file = agree(comm, open_file(comm, &name, how, path))?;
    // HDF5 truncates a file it creates: the space is reserved now, past its end (the data,
    // the copy's length, and room for the metadata), and released when the file is done.
    let data: u64 = fields
        .iter()
        .map(|f| f.global_shape.iter().product::<usize>() as u64 * std::mem::size_of::<T>() as u64)
        .sum();
    let metadata = (64 << 10) + (8 << 10) * fields.len() as u64;
    let mut outcome = staged
        .reserve_keeping_size(comm, copied + data + metadata)
        .map_err(H5Error::from);
    let mut actions = Vec::with_capacity(fields.len());
    for f in fields {
        if outcome.is_err() {
            break;
        }
        // Whether the ranks' blocks cover the whole dataset (then one of the same shape and
        // type is overwritten in place instead of unlinked: the file does not grow by it).
        let covered = {
            use mpi::collective::SystemOperation;
            use mpi::traits::CommunicatorCollectives;
            let mine = f.counts.iter().product::<usize>() as u64;
            let mut total = 0u64;
            comm.all_reduce_into(&mine, &mut total, SystemOperation::sum());
            total == f.global_shape.iter().product::<usize>() as u64
        };
        // Metadata calls are collective: every rank makes them with the same values (and
        // sees the same file, so takes the same decisions).
        outcome = agree(comm, make_dataset(&file, path, f, covered)).and_then(|(ds, replaced)| {
            actions.push(match (copied, replaced) {
                (0, _) => Action::Created,
                (_, false) => Action::Added,
                (_, true) => Action::Replaced,
            });
            let moved = transfer(
                &ds,
                f.starts,
                f.counts,
                f.data.as_ptr().cast_mut(),
                true,
                path,
                f.dataset,
            );
            agree(comm, moved)
        });
    }
    let closed = file.close().map_err(|source| H5Error::Hdf5 {
        path: path.to_path_buf(),
        what: "cannot close".to_string(),
        source,
    });
    let closed = agree(comm, closed);
    outcome.and(closed).map(|()| actions)
}

/// Creates `f`'s dataset (its groups as needed), replacing an existing dataset of that name,
/// with its attributes; the dataset and whether one was replaced. An existing dataset of the
/// same shape and type, stored contiguously without filters, whose every element the ranks
/// write (`covered`) is overwritten in place, its attributes replaced; any other is unlinked
/// and a new one made (HDF5 does not reuse the old one's space: `h5repack` compacts).
fn make_dataset<T: H5Element>(
    file: &hdf5::File,
    path: &Path,
    f: &FieldWrite<'_, T>,
    covered: bool,
) -> Result<(hdf5::Dataset, bool), H5Error> {
    let replaced = target::existing_dataset(file, path, f.dataset)?;
    let hdf = |what: String| {
        let path = path.to_path_buf();
        move |source| H5Error::Hdf5 { path, what, source }
    };
    let (group, name) = parent_group(file, f.dataset)
        .map_err(hdf(format!("cannot create the groups of {}", f.dataset)))?;
    let mut reused = None;
    if replaced {
        let old = group.dataset(name).map_err(hdf(format!(
            "cannot open the dataset {} it replaces",
            f.dataset
        )))?;
        if covered && same_storage::<T>(&old, f.global_shape) {
            reused = Some(old);
        } else {
            drop(old);
            group.unlink(name).map_err(hdf(format!(
                "cannot remove the dataset {} it replaces",
                f.dataset
            )))?;
        }
    }
    let made = (|| {
        let ds = match reused {
            Some(ds) => {
                for key in ds.attr_names()? {
                    ds.delete_attr(&key)?;
                }
                ds
            }
            None => group
                .new_dataset::<T>()
                .shape(f.global_shape.to_vec())
                .create(name)?,
        };
        for (key, value) in f.attributes {
            let v: hdf5::types::VarLenUnicode = value.parse().unwrap_or_default();
            ds.new_attr::<hdf5::types::VarLenUnicode>()
                .create(*key)?
                .write_scalar(&v)?;
        }
        Ok(ds)
    })()
    .map_err(hdf(format!("cannot create dataset {}", f.dataset)))?;
    Ok((made, replaced))
}

/// Whether `ds` holds `shape` elements of `T` in one contiguous, allocated, unfiltered,
/// fixed-size block: what a new dataset of `T` would be, so it can be overwritten in place.
fn same_storage<T: H5Element>(ds: &hdf5::Dataset, shape: &[usize]) -> bool {
    let same_type = match (ds.dtype(), hdf5::Datatype::from_type::<T>()) {
        (Ok(a), Ok(b)) => {
            matches!((a.to_descriptor(), b.to_descriptor()), (Ok(x), Ok(y)) if x == y)
        }
        _ => false,
    };
    same_type
        && ds.shape() == shape
        && ds.layout() == hdf5::dataset::Layout::Contiguous
        && ds.offset().is_some()
        && !ds.is_resizable()
        && ds.dcpl().is_ok_and(|p| p.filters().is_empty())
}

/// The shape and element type of `dataset` in the file at `path` (local: no MPI; every rank
/// can call it, as [`npyio::read_header`]).
pub fn field_info(path: &Path, dataset: &str) -> Result<FieldInfo, H5Error> {
    // Refuses devices and FIFOs, and names a missing file plainly.
    drop(npyio::open_input(path)?);
    let hdf = |what: &str| {
        let what = what.to_string();
        let path = path.to_path_buf();
        move |source| H5Error::Hdf5 { path, what, source }
    };
    let file = hdf5::File::open(path).map_err(hdf("cannot open"))?;
    let ds = file
        .dataset(dataset)
        .map_err(hdf(&format!("no dataset {dataset}")))?;
    let descriptor = ds
        .dtype()
        .and_then(|t| t.to_descriptor())
        .map_err(hdf("unreadable type"))?;
    let dtype = match &descriptor {
        TypeDescriptor::Float(FloatSize::U4) => Dtype::F32,
        TypeDescriptor::Float(FloatSize::U8) => Dtype::F64,
        TypeDescriptor::Compound(c)
            if c.fields.len() == 2 && c.fields[0].name == "r" && c.fields[1].name == "i" =>
        {
            match (&c.fields[0].ty, &c.fields[1].ty) {
                (TypeDescriptor::Float(FloatSize::U4), TypeDescriptor::Float(FloatSize::U4)) => {
                    Dtype::C64
                }
                (TypeDescriptor::Float(FloatSize::U8), TypeDescriptor::Float(FloatSize::U8)) => {
                    Dtype::C128
                }
                _ => {
                    return Err(H5Error::UnsupportedType {
                        path: path.to_path_buf(),
                        dataset: dataset.to_string(),
                        found: target::type_name(&descriptor),
                    })
                }
            }
        }
        _ => {
            return Err(H5Error::UnsupportedType {
                path: path.to_path_buf(),
                dataset: dataset.to_string(),
                found: target::type_name(&descriptor),
            })
        }
    };
    Ok(FieldInfo {
        shape: ds.shape(),
        dtype,
    })
}

/// The string attributes of `dataset` in the file at `path`, sorted by name (local: no MPI,
/// like [`field_info`]). Attributes of other types are left out.
pub fn read_attributes(path: &Path, dataset: &str) -> Result<Vec<(String, String)>, H5Error> {
    drop(npyio::open_input(path)?);
    let hdf = |what: String| {
        let path = path.to_path_buf();
        move |source| H5Error::Hdf5 { path, what, source }
    };
    let file = hdf5::File::open(path).map_err(hdf("cannot open".to_string()))?;
    let ds = file
        .dataset(dataset)
        .map_err(hdf(format!("no dataset {dataset}")))?;
    let mut names = ds
        .attr_names()
        .map_err(hdf(format!("cannot list the attributes of {dataset}")))?;
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let attr = ds
            .attr(&name)
            .map_err(hdf(format!("cannot open attribute {name} of {dataset}")))?;
        if let Ok(value) = attr.read_scalar::<hdf5::types::VarLenUnicode>() {
            out.push((name, value.as_str().to_string()));
        }
    }
    Ok(out)
}

/// Reads this rank's block `[starts, starts + counts)` of `dataset` into `out` (C order).
/// Collective over `comm`; every rank returns the same outcome.
pub fn read_field<C: Communicator, T: H5Element>(
    comm: &C,
    path: &Path,
    dataset: &str,
    starts: &[usize],
    counts: &[usize],
    out: &mut [T],
) -> Result<(), H5Error> {
    let info = agree(comm, field_info(path, dataset))?;
    let checked =
        check_block(path, dataset, &info.shape, starts, counts, out.len()).and_then(|_| {
            if info.dtype == T::FIELD_DTYPE {
                Ok(())
            } else {
                Err(H5Error::UnsupportedType {
                    path: path.to_path_buf(),
                    dataset: dataset.to_string(),
                    found: format!("{} where {} is read", info.dtype, T::FIELD_DTYPE),
                })
            }
        });
    agree(comm, checked)?;
    let input = agree(comm, npyio::open_input(path).map_err(H5Error::from))?;
    let name = agree(
        comm,
        npyio::staging::mpi_name(&input, path).map_err(H5Error::from),
    )?;
    let file = agree(comm, open_file(comm, &name, Open::Read, path))?;
    let ds = agree(
        comm,
        file.dataset(dataset).map_err(|source| H5Error::Hdf5 {
            path: path.to_path_buf(),
            what: format!("no dataset {dataset}"),
            source,
        }),
    )?;
    let moved = transfer(&ds, starts, counts, out.as_mut_ptr(), false, path, dataset);
    drop(ds);
    let closed = file.close().map_err(|source| H5Error::Hdf5 {
        path: path.to_path_buf(),
        what: "cannot close".to_string(),
        source,
    });
    agree(comm, moved.and(closed))
}
