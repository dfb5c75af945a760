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

    /// The file on disk.
    pub fn file(&self) -> &Path {
        match self {
            FileRef::Npy(p) => p,
            FileRef::H5 { file, .. } => file,
        }
    }
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
/// all-or-nothing); an HDF5 dataset gets `attributes`, and rank 0 writes an XDMF file beside
/// an HDF5 file of a real 2-D or 3-D field.
pub fn write_block<T: npyio::NpyElement + h5io::H5Element>(
    world: &SimpleCommunicator,
    r: &FileRef,
    shape: &[usize],
    starts: &[usize],
    counts: &[usize],
    data: &[T],
    attributes: &[(&str, String)],
) -> Result<(), RunError> {
    match r {
        FileRef::Npy(p) => Ok(npyio::write_block(world, p, shape, starts, counts, data)?),
        FileRef::H5 { file, dataset } => {
            let field = h5io::FieldWrite {
                dataset,
                global_shape: shape,
                starts,
                counts,
                data,
                attributes,
            };
            h5io::write_fields(world, file, &[field])?;
            let real = matches!(T::FIELD_DTYPE, npyio::Dtype::F32 | npyio::Dtype::F64);
            if real && matches!(shape.len(), 2 | 3) && mpi::topology::Communicator::rank(world) == 0
            {
                // Best effort: the data file is complete; a missing description is not fatal.
                if let Err(e) = h5io::write_xdmf(file, &[(dataset, shape, T::FIELD_DTYPE)]) {
                    eprintln!(
                        "dfft: warning: {}: cannot write the XDMF file: {e}",
                        file.display()
                    );
                }
            }
            Ok(())
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
