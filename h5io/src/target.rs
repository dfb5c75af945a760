//! What a write may change in an HDF5 file: the datasets it names, and nothing else. A name
//! must be a dataset path (not empty, not the root group, no `.` or `..`); in an existing
//! file every group on the way must be a group and the name itself, if it exists, a dataset
//! (which is then replaced); a file that exists must be an HDF5 file. Checked before any
//! work ([`check_target`]) and again on the copy the write changes.

use crate::H5Error;
use hdf5::LocationType;
use std::path::Path;

/// What writing a dataset does to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new file holding the dataset.
    Created,
    /// The dataset is added to an existing file; the rest of the file is kept.
    Added,
    /// An existing dataset of that name is replaced; the rest of the file is kept.
    Replaced,
}

impl Action {
    /// How the `dfft` output line says it.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Created => "new file",
            Action::Added => "dataset added; the file's other contents kept",
            Action::Replaced => "the existing dataset replaced; the file's other contents kept",
        }
    }
}

/// The components of a dataset path (`/a/b/u` → `["a", "b", "u"]`), or why it names no
/// dataset.
pub(crate) fn components<'a>(path: &Path, dataset: &'a str) -> Result<Vec<&'a str>, H5Error> {
    let bad = |reason: String| H5Error::DatasetName {
        path: path.to_path_buf(),
        dataset: dataset.to_string(),
        reason,
    };
    let parts: Vec<&str> = dataset.split('/').filter(|p| !p.is_empty()).collect();
    if dataset.is_empty() {
        return Err(bad(format!(
            "names no dataset: give one after the colon, e.g. {}:/u",
            path.display()
        )));
    }
    if parts.is_empty() {
        return Err(bad(
            "is the file's root group, not a dataset: give a dataset name, e.g. /u".to_string(),
        ));
    }
    if let Some(p) = parts.iter().find(|p| **p == "." || **p == "..") {
        return Err(bad(format!(
            "holds '{p}': dataset paths are absolute names without . or .."
        )));
    }
    Ok(parts)
}

/// In an open file: fails if a group on the way to `dataset` is not a group or `dataset` is
/// a group (or another kind of object); whether `dataset` exists (and will be replaced).
pub(crate) fn existing_dataset(
    file: &hdf5::File,
    path: &Path,
    dataset: &str,
) -> Result<bool, H5Error> {
    let parts = components(path, dataset)?;
    let conflict = |name: String, what: &str| H5Error::Conflict {
        path: path.to_path_buf(),
        name,
        what: what.to_string(),
    };
    let mut so_far = String::new();
    for (i, part) in parts.iter().enumerate() {
        so_far.push('/');
        so_far.push_str(part);
        if !file.link_exists(&so_far) {
            return Ok(false);
        }
        let kind = file
            .loc_type_by_name(&so_far)
            .map_err(|source| H5Error::Hdf5 {
                path: path.to_path_buf(),
                what: format!("cannot tell what {so_far} is"),
                source,
            })?;
        let last = i + 1 == parts.len();
        match (kind, last) {
            (LocationType::Group, false) | (LocationType::Dataset, true) => {}
            (LocationType::Group, true) => {
                return Err(conflict(
                    so_far,
                    "is a group, not a dataset: an output replaces a dataset only, never a \
                     group and what it holds (choose another name)",
                ))
            }
            (LocationType::Dataset, false) => {
                return Err(conflict(
                    so_far,
                    "is a dataset, not a group: it cannot hold the output (choose another name)",
                ))
            }
            _ => {
                return Err(conflict(
                    so_far,
                    "is a named datatype: an output replaces a dataset only (choose another name)",
                ))
            }
        }
    }
    Ok(true)
}

/// Checks, before any work, that writing `datasets` into the HDF5 file at `path` can succeed
/// and what it will do to each: the target is absent or a regular file in a directory this
/// process may write into ([`npyio::check_output_target`]), an existing file is an HDF5 file,
/// every name is a dataset path whose groups are groups, and no name is a group. Local and
/// read-only (no MPI): every rank can call it, and [`crate::write_fields`] checks the same
/// again on the copy it changes.
pub fn check_target(path: &Path, datasets: &[&str]) -> Result<Vec<Action>, H5Error> {
    for d in datasets {
        components(path, d)?;
    }
    let resolved = npyio::check_output_target(path)?;
    let exists = std::fs::metadata(&resolved).is_ok_and(|m| m.len() > 0);
    if !exists {
        return Ok(vec![Action::Created; datasets.len()]);
    }
    drop(npyio::open_input(&resolved)?);
    let file = hdf5::File::open(&resolved).map_err(|source| H5Error::NotHdf5 {
        path: path.to_path_buf(),
        source,
    })?;
    datasets
        .iter()
        .map(|d| {
            existing_dataset(&file, path, d).map(|replaced| {
                if replaced {
                    Action::Replaced
                } else {
                    Action::Added
                }
            })
        })
        .collect()
}

/// A dataset's element type as people name it: `uint8`, `int64`, `float16`, `a string`, `a
/// compound {x: float64, y: int32}`, ... (HDF5 types that dfft does not read, for messages).
pub(crate) fn type_name(descriptor: &hdf5::types::TypeDescriptor) -> String {
    use hdf5::types::{FloatSize, IntSize, TypeDescriptor as T};
    let int = |s: &IntSize| match s {
        IntSize::U1 => 8,
        IntSize::U2 => 16,
        IntSize::U4 => 32,
        IntSize::U8 => 64,
    };
    match descriptor {
        T::Integer(s) => format!("int{}", int(s)),
        T::Unsigned(s) => format!("uint{}", int(s)),
        T::Float(FloatSize::U4) => "float32".to_string(),
        T::Float(FloatSize::U8) => "float64".to_string(),
        #[allow(unreachable_patterns)]
        T::Float(_) => "a float of another width".to_string(),
        T::Boolean => "bool".to_string(),
        T::Enum(_) => "an enum".to_string(),
        T::Compound(c) => format!(
            "a compound {{{}}}",
            c.fields
                .iter()
                .map(|f| format!("{}: {}", f.name, type_name(&f.ty)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        T::FixedArray(t, n) => format!("an array of {n} {}", type_name(t)),
        T::FixedAscii(_) | T::FixedUnicode(_) | T::VarLenAscii | T::VarLenUnicode => {
            "a string".to_string()
        }
        T::VarLenArray(t) => format!("a variable-length array of {}", type_name(t)),
        #[allow(unreachable_patterns)]
        _ => "a type dfft does not read".to_string(),
    }
}
