//! Where `dfft run` reads and writes arrays: a C-order `.npy` file, or a dataset of a
//! parallel HDF5 file, named `file.h5:/dataset` (also `.hdf5`), one dataset of the global
//! shape that every rank reads or writes its block of (see docs/io.md). Both are
//! all-or-nothing on output.

use crate::run::RunError;
use mpi::topology::SimpleCommunicator;
use npyio::NpyHeader;
use std::path::{Path, PathBuf};

/// A `--input` or `--output` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRef {
    /// A `.npy` file.
    Npy(PathBuf),
    /// A dataset of an HDF5 file.
    H5 {
        /// The file.
        file: PathBuf,
        /// The dataset's path in it, e.g. `/f`.
        dataset: String,
    },
}

impl FileRef {
    /// `x.h5:/f` (or `x.hdf5:/a/b`) names a dataset of an HDF5 file; anything else a `.npy`.
    pub fn parse(arg: &Path) -> FileRef {
        let text = arg.to_string_lossy();
        for ext in [".h5:", ".hdf5:"] {
            if let Some(at) = text.rfind(ext) {
                let (file, dataset) = text.split_at(at + ext.len() - 1);
                return FileRef::H5 {
                    file: PathBuf::from(file),
                    dataset: dataset[1..].to_string(),
                };
            }
        }
        FileRef::Npy(arg.to_path_buf())
    }

    /// Why `arg` (`--input` or `--output`, named `flag`) cannot name an array, decided from
    /// the text alone (a usage error): a file named `.h5`/`.hdf5` without `:/dataset`, which
    /// would otherwise be read or written as `.npy`.
    pub fn usage_problem(flag: &str, arg: &Path) -> Option<String> {
        let FileRef::Npy(path) = FileRef::parse(arg) else {
            return None;
        };
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        matches!(ext.as_str(), "h5" | "hdf5").then(|| {
            format!(
                "{flag} {}: an HDF5 file needs a dataset name: {}:/name (a .npy file is \
                 named .npy)",
                path.display(),
                path.display()
            )
        })
    }
}

/// What writing `--output` did: a new `.npy` file or one replaced, or what HDF5 did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// A `.npy` file where there was none.
    NewNpy,
    /// A `.npy` file replaced.
    ReplacedNpy,
    /// A dataset of an HDF5 file.
    H5(h5io::Action),
}

impl Written {
    /// How the output line says it.
    pub fn describe(self) -> &'static str {
        match self {
            Written::NewNpy => "new file",
            Written::ReplacedNpy => "the existing file replaced",
            Written::H5(action) => action.describe(),
        }
    }

    /// One word for the JSON report: `created`, `replaced` or `added`.
    pub fn word(self) -> &'static str {
        match self {
            Written::NewNpy | Written::H5(h5io::Action::Created) => "created",
            Written::ReplacedNpy | Written::H5(h5io::Action::Replaced) => "replaced",
            Written::H5(h5io::Action::Added) => "added",
        }
    }
}

/// Checks, before any work, that `r` can be written (local; the caller agrees over the
/// ranks): a `.npy` target is absent or a regular file in a writable directory; an HDF5
/// target also is an HDF5 file if it exists, its dataset name names a dataset that is not a
/// group, and, for a real 2-D or 3-D field (`xdmf`), the `.xmf` beside it can be written.
pub fn check_output(r: &FileRef, xdmf: bool) -> Result<(), RunError> {
    match r {
        FileRef::Npy(p) => {
            npyio::check_output_target(p)?;
        }
        FileRef::H5 { file, dataset } => {
            h5io::check_target(file, &[dataset])?;
            if xdmf {
                npyio::check_output_target(&h5io::xdmf_path(file))?;
            }
        }
    }
    Ok(())
}

/// Whether an output of `dtype` and `shape` gets an XDMF description beside an HDF5 file:
/// real 2-D and 3-D fields (ParaView's regular grids).
pub fn gets_xdmf(dtype: npyio::Dtype, shape: &[usize]) -> bool {
    matches!(dtype, npyio::Dtype::F32 | npyio::Dtype::F64) && matches!(shape.len(), 2 | 3)
}

/// The array's dtype and shape (a `.npy` header, or an HDF5 dataset's as one). Local.
pub fn header(r: &FileRef) -> Result<NpyHeader, RunError> {
    match r {
        FileRef::Npy(p) => Ok(npyio::read_header(p)?),
        FileRef::H5 { file, dataset } => {
            let info = h5io::field_info(file, dataset)?;
            Ok(NpyHeader {
                dtype: info.dtype,
                shape: info.shape,
                fortran_order: false,
                data_offset: 0,
            })
        }
    }
}

/// Reads this rank's block (collective).
pub fn read_block<T: npyio::NpyElement + h5io::H5Element>(
    world: &SimpleCommunicator,
    r: &FileRef,
    header: &NpyHeader,
    starts: &[usize],
    counts: &[usize],
    out: &mut [T],
) -> Result<(), RunError> {
    match r {
        FileRef::Npy(p) => Ok(npyio::read_block(world, p, header, starts, counts, out)?),
        FileRef::H5 { file, dataset } => {
            Ok(h5io::read_field(world, file, dataset, starts, counts, out)?)
        }
    }
}

/// Writes the array of `shape`, this rank's block `[starts, starts + counts)` (collective,
/// all-or-nothing); an HDF5 dataset gets `attributes` (and replaces a dataset of that name,
/// keeping the rest of the file), and rank 0 writes an XDMF file beside an HDF5 file of a
/// real 2-D or 3-D field. What was written.
pub fn write_block<T: npyio::NpyElement + h5io::H5Element>(
    world: &SimpleCommunicator,
    r: &FileRef,
    shape: &[usize],
    starts: &[usize],
    counts: &[usize],
    data: &[T],
    attributes: &[(&str, String)],
) -> Result<Written, RunError> {
    match r {
        FileRef::Npy(p) => {
            // (Informational: rank 0's view just before the write.)
            let existed = p.exists();
            npyio::write_block(world, p, shape, starts, counts, data)?;
            Ok(if existed {
                Written::ReplacedNpy
            } else {
                Written::NewNpy
            })
        }
        FileRef::H5 { file, dataset } => {
            let field = h5io::FieldWrite {
                dataset,
                global_shape: shape,
                starts,
                counts,
                data,
                attributes,
            };
            let actions = h5io::write_fields(world, file, &[field])?;
            if gets_xdmf(T::FIELD_DTYPE, shape) && mpi::topology::Communicator::rank(world) == 0 {
                // Best effort: the data file is complete; a missing description is not fatal.
                if let Err(e) = h5io::write_xdmf(file, &[(dataset, shape, T::FIELD_DTYPE)]) {
                    eprintln!(
                        "dfft: warning: {}: cannot write the XDMF file: {e}",
                        file.display()
                    );
                }
            }
            Ok(Written::H5(actions[0]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_arguments_parse() {
        assert_eq!(
            FileRef::parse(Path::new("a.npy")),
            FileRef::Npy("a.npy".into())
        );
        assert_eq!(
            FileRef::parse(Path::new("dir/x.h5:/f")),
            FileRef::H5 {
                file: "dir/x.h5".into(),
                dataset: "/f".into()
            }
        );
        assert_eq!(
            FileRef::parse(Path::new("x.hdf5:/step_1/u")),
            FileRef::H5 {
                file: "x.hdf5".into(),
                dataset: "/step_1/u".into()
            }
        );
    }
}
