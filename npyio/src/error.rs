//! The error type shared by the header and the MPI-IO parts of the crate.

use std::path::{Path, PathBuf};

use crate::header::Dtype;

/// Everything that can go wrong while reading or writing a `.npy` file.
///
/// Most variants carry the `path` of the file concerned; it is empty when the
/// error was produced without a file (for example by
/// [`parse_header`](crate::parse_header) on an in-memory buffer), in which case
/// the message has no `path: ` prefix. [`NpyError::with_path`] fills it in.
///
/// The messages name the offending values, e.g.
///
/// ```text
/// input.npy: not a .npy file (bad magic bytes)
/// input.npy: dtype '<i4' is not supported (expected one of float32, float64, complex64, complex128)
/// input.npy: file is truncated: header says 4096 bytes of data, file has 1000
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// An operating-system level I/O error (open, read, rename, fsync, ...).
    #[error("{}{action}: {source}", at(.path))]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// What was being done, e.g. `"failed to open"`.
        action: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The data does not start with the `.npy` magic string `"\x93NUMPY"`.
    #[error("{}not a .npy file (bad magic bytes)", at(.path))]
    BadMagic {
        /// The file concerned.
        path: PathBuf,
    },

    /// The format version is not 1.0, 2.0 or 3.0.
    #[error(
        "{}unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)",
        at(.path)
    )]
    UnsupportedVersion {
        /// The file concerned.
        path: PathBuf,
        /// Major version byte found in the file.
        major: u8,
        /// Minor version byte found in the file.
        minor: u8,
    },

    /// The input ends before the end of the header.
    #[error(
        "{}header is truncated: it needs {expected} bytes, only {actual} are present",
        at(.path)
    )]
    TruncatedHeader {
        /// The file concerned.
        path: PathBuf,
        /// Number of bytes needed (so far known) to hold the header.
        expected: u64,
        /// Number of bytes available.
        actual: u64,
    },

    /// The header dictionary is not a valid `.npy` header.
    #[error("{}malformed .npy header: {reason}", at(.path))]
    InvalidHeader {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong, naming the offending text.
        reason: String,
    },

    /// The dtype is not one of the four supported little-endian types.
    #[error(
        "{}dtype '{descr}' is not supported (expected one of float32, float64, complex64, complex128)",
        at(.path)
    )]
    UnsupportedDtype {
        /// The file concerned.
        path: PathBuf,
        /// The `descr` value found in the header (Python syntax).
        descr: String,
    },

    /// The dtype is a supported type, but stored big-endian.
    #[error(
        "{}dtype '{descr}' is big-endian; only little-endian ('<') float32, float64, complex64 and complex128 are supported",
        at(.path)
    )]
    BigEndian {
        /// The file concerned.
        path: PathBuf,
        /// The `descr` value found in the header.
        descr: String,
    },

    /// The array is stored in Fortran (column-major) order.
    #[error(
        "{}array is stored in Fortran order (fortran_order: True); only C-order arrays are supported",
        at(.path)
    )]
    FortranOrder {
        /// The file concerned.
        path: PathBuf,
    },

    /// The element count or the byte size of the array overflows.
    #[error(
        "{}shape {shape:?} is too large: its element count or byte size overflows 64 bits",
        at(.path)
    )]
    ShapeOverflow {
        /// The file concerned.
        path: PathBuf,
        /// The offending shape.
        shape: Vec<usize>,
    },

    /// The file holds fewer data bytes than the header announces.
    #[error(
        "{}file is truncated: header says {expected} bytes of data, file has {actual}",
        at(.path)
    )]
    Truncated {
        /// The file concerned.
        path: PathBuf,
        /// Data bytes announced by the header.
        expected: u64,
        /// Data bytes present after the header.
        actual: u64,
    },

    /// The file holds more data bytes than the header announces.
    #[error(
        "{}file has trailing bytes: header says {expected} bytes of data, file has {actual}",
        at(.path)
    )]
    TrailingBytes {
        /// The file concerned.
        path: PathBuf,
        /// Data bytes announced by the header.
        expected: u64,
        /// Data bytes present after the header.
        actual: u64,
    },

    /// The file's dtype differs from the element type of the caller's buffer.
    #[error(
        "{}array has dtype {found} but the buffer's element type is {expected}",
        at(.path)
    )]
    DtypeMismatch {
        /// The file concerned.
        path: PathBuf,
        /// The dtype of the caller's element type.
        expected: Dtype,
        /// The dtype stored in the file.
        found: Dtype,
    },

    /// The block `[starts, starts + counts)` does not fit the array.
    #[error("{}invalid block: {reason}", at(.path))]
    InvalidBlock {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong, naming the offending values.
        reason: String,
    },

    /// The caller's buffer length differs from the number of elements of the block.
    #[error(
        "{}buffer has {actual} elements but the block has {expected}",
        at(.path)
    )]
    BufferLength {
        /// The file concerned.
        path: PathBuf,
        /// Product of the block's counts.
        expected: usize,
        /// Length of the buffer passed in.
        actual: usize,
    },

    /// Arguments that must be identical on all ranks are not.
    #[error("{}arguments differ between ranks: {reason}", at(.path))]
    InconsistentArguments {
        /// The file concerned.
        path: PathBuf,
        /// What differs, naming the values.
        reason: String,
    },

    /// A count or dimension exceeds what MPI's `int` arguments can express.
    ///
    /// Every dimension of the global shape and the number of elements of each
    /// rank's (non-empty) block must be at most `i32::MAX`; the array as a whole
    /// may be larger.
    #[error(
        "{}{what} is {value}, which exceeds the MPI count limit of {limit} (i32::MAX)",
        at(.path),
        limit = i32::MAX
    )]
    CountTooLarge {
        /// The file concerned.
        path: PathBuf,
        /// Which quantity is too large.
        what: String,
        /// Its value.
        value: u64,
    },

    /// The path cannot be used (no file name, interior NUL byte, ...).
    #[error("{}unusable path: {reason}", at(.path))]
    InvalidPath {
        /// The path concerned.
        path: PathBuf,
        /// Why it is unusable.
        reason: String,
    },

    /// An existing file that is not a regular file (a device, a FIFO, a directory, ...):
    /// never read as an input (a FIFO would block) nor replaced by an output.
    #[error(
        "{}is a {kind}, not a regular file: only regular files are read or replaced",
        at(.path)
    )]
    NotRegularFile {
        /// The file concerned.
        path: PathBuf,
        /// What it is, e.g. `"FIFO"` or `"character device"`.
        kind: &'static str,
    },

    /// A file read whole (a machine profile, a list of problems) that is larger than the cap
    /// of what is read that way.
    #[error(
        "{}is larger than {cap} bytes ({size} bytes): not a file dfft reads whole",
        at(.path)
    )]
    TooLarge {
        /// The file concerned.
        path: PathBuf,
        /// Its size in bytes (at least `cap + 1` when it grew while being read).
        size: u64,
        /// The most bytes read.
        cap: u64,
    },

    /// A `.npy` input that holds an HDF5 file.
    #[error(
        "{}is an HDF5 file, not .npy: read one of its datasets as FILE.h5:/dataset (HDF5 \
         files are recognized by the extension .h5 or .hdf5)",
        at(.path)
    )]
    Hdf5NotNpy {
        /// The file concerned.
        path: PathBuf,
    },

    /// The process's launcher (`mpirun`, `srun`) is gone: the job failed, and its output is
    /// not published.
    #[error("{}not published: the launcher of this job is gone", at(.path))]
    LauncherGone {
        /// The output not published.
        path: PathBuf,
    },

    /// An MPI call returned an error code.
    #[error(
        "{}{call} failed: {message} (MPI error code {code})",
        at(.path)
    )]
    Mpi {
        /// The file concerned.
        path: PathBuf,
        /// The MPI function that failed, e.g. `"MPI_File_open"`.
        call: &'static str,
        /// The error code it returned.
        code: i32,
        /// The text `MPI_Error_string` gives for `code`.
        message: String,
    },

    /// A collective read or write moved fewer elements than requested.
    #[error(
        "{}{op} transferred {actual} of {expected} elements",
        at(.path)
    )]
    IncompleteTransfer {
        /// The file concerned.
        path: PathBuf,
        /// `"read"` or `"write"`.
        op: &'static str,
        /// Elements requested.
        expected: usize,
        /// Elements actually transferred.
        actual: usize,
    },

    /// A collective operation failed because of an error on another rank.
    ///
    /// Every rank returns an error when any rank fails; the failing rank returns
    /// its own error and the others return this variant, carrying the message of
    /// the lowest-numbered failing rank.
    #[error("rank {rank} failed: {message}")]
    Remote {
        /// Rank (in the communicator passed in) of the lowest failing rank.
        rank: i32,
        /// That rank's error message.
        message: String,
    },
}

/// Formats the `path: ` prefix of a message, or nothing for an empty path.
fn at(path: &Path) -> String {
    if path.as_os_str().is_empty() {
        String::new()
    } else {
        format!("{}: ", path.display())
    }
}

/// `match $err { <every variant with a path field bound to $p> => $with, Remote => $without }`:
/// one list of the variants that carry a file path, for reading and for setting it.
macro_rules! match_path {
    ($err:expr, $p:ident => $with:expr, $without:expr) => {
        match $err {
            NpyError::Io { path: $p, .. }
            | NpyError::BadMagic { path: $p }
            | NpyError::UnsupportedVersion { path: $p, .. }
            | NpyError::TruncatedHeader { path: $p, .. }
            | NpyError::InvalidHeader { path: $p, .. }
            | NpyError::UnsupportedDtype { path: $p, .. }
            | NpyError::BigEndian { path: $p, .. }
            | NpyError::FortranOrder { path: $p }
            | NpyError::ShapeOverflow { path: $p, .. }
            | NpyError::Truncated { path: $p, .. }
            | NpyError::TrailingBytes { path: $p, .. }
            | NpyError::DtypeMismatch { path: $p, .. }
            | NpyError::InvalidBlock { path: $p, .. }
            | NpyError::BufferLength { path: $p, .. }
            | NpyError::InconsistentArguments { path: $p, .. }
            | NpyError::CountTooLarge { path: $p, .. }
            | NpyError::InvalidPath { path: $p, .. }
            | NpyError::NotRegularFile { path: $p, .. }
            | NpyError::TooLarge { path: $p, .. }
            | NpyError::Hdf5NotNpy { path: $p }
            | NpyError::LauncherGone { path: $p }
            | NpyError::Mpi { path: $p, .. }
            | NpyError::IncompleteTransfer { path: $p, .. } => $with,
            NpyError::Remote { .. } => $without,
        }
    };
}

impl NpyError {
    /// The file this error is about, if known.
    ///
    /// ```
    /// let err = npyio::parse_header(b"GIF89a").unwrap_err().with_path("x.npy");
    /// assert_eq!(err.path(), Some(std::path::Path::new("x.npy")));
    /// ```
    pub fn path(&self) -> Option<&Path> {
        let path = match_path!(self, path => path, return None);
        (!path.as_os_str().is_empty()).then_some(path.as_path())
    }

    /// Sets the file path of this error if it has none yet.
    ///
    /// ```
    /// let err = npyio::parse_header(b"GIF89a").unwrap_err();
    /// assert_eq!(err.to_string(), "not a .npy file (bad magic bytes)");
    /// let err = err.with_path("input.npy");
    /// assert_eq!(err.to_string(), "input.npy: not a .npy file (bad magic bytes)");
    /// ```
    pub fn with_path(mut self, new_path: impl AsRef<Path>) -> Self {
        let slot = match_path!(&mut self, path => path, return self);
        if slot.as_os_str().is_empty() {
            *slot = new_path.as_ref().to_path_buf();
        }
        self
    }
}
