//! Thin safe wrappers over the raw MPI-IO and datatype calls of `mpi::ffi`.
//!
//! Every MPI return code is checked and turned into [`NpyError::Mpi`].

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::path::Path;

use mpi::ffi;
use mpi::topology::Communicator;

use crate::error::NpyError;
use crate::header::{Dtype, NpyHeader};

use super::{check_file_extent, BlockPlan};

/// Records `result` in `outcome` unless an earlier error is already there.
pub(super) fn keep_first(outcome: &mut Result<(), NpyError>, result: Result<(), NpyError>) {
    if outcome.is_ok() {
        *outcome = result;
    }
}

/// Turns an MPI return code into a `Result`.
pub(super) fn check(path: &Path, call: &'static str, code: c_int) -> Result<(), NpyError> {
    if code == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(NpyError::Mpi {
            path: path.to_path_buf(),
            call,
            code,
            message: error_string(code),
        })
    }
}

/// `MPI_Error_string` for `code`.
fn error_string(code: c_int) -> String {
    let mut buf = vec![0 as c_char; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: `buf` has room for MPI_MAX_ERROR_STRING characters plus a NUL.
    let rc = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr(), &mut len) };
    if rc != ffi::MPI_SUCCESS as c_int {
        return "unknown error".to_owned();
    }
    let len = usize::try_from(len).unwrap_or(0).min(buf.len());
    let bytes: Vec<u8> = buf[..len].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .to_owned()
}

/// An owned MPI datatype, freed on drop (`MPI_Type_free` is a local call).
pub(super) struct Datatype {
    raw: ffi::MPI_Datatype,
    /// Predefined datatypes must not be freed.
    owned: bool,
}

impl Datatype {
    /// The predefined one-byte type. rsmpi does not expose `MPI_BYTE`;
    /// `MPI_UINT8_T` has the same size and, with the `"native"` data
    /// representation, the same meaning.
    pub(super) fn byte() -> Datatype {
        Datatype {
            // SAFETY: reading an initialised extern static of mpi-sys.
            raw: unsafe { ffi::RSMPI_UINT8_T },
            owned: false,
        }
    }

    fn commit(raw: ffi::MPI_Datatype, path: &Path) -> Result<Datatype, NpyError> {
        let mut ty = Datatype { raw, owned: true };
        // SAFETY: `ty.raw` is a valid, uncommitted derived datatype.
        check(path, "MPI_Type_commit", unsafe {
            ffi::MPI_Type_commit(&mut ty.raw)
        })?;
        Ok(ty)
    }

    /// One element of `dtype`: `size_bytes` contiguous bytes.
    fn element(dtype: Dtype, path: &Path) -> Result<Datatype, NpyError> {
        let byte = Datatype::byte();
        let mut raw = byte.raw;
        // SAFETY: plain MPI call with valid arguments and out-pointer.
        let code =
            unsafe { ffi::MPI_Type_contiguous(dtype.size_bytes() as c_int, byte.raw, &mut raw) };
        check(path, "MPI_Type_contiguous", code)?;
        Datatype::commit(raw, path)
    }

    /// The subarray `(sizes, subsizes, starts)` of `element`s in C order.
    fn subarray(
        spec: &[Vec<c_int>; 3],
        element: &Datatype,
        path: &Path,
    ) -> Result<Datatype, NpyError> {
        let [sizes, subsizes, starts] = spec;
        let mut raw = element.raw;
        // SAFETY: the three arrays have `sizes.len()` entries each, as MPI requires.
        let code = unsafe {
            ffi::MPI_Type_create_subarray(
                sizes.len() as c_int,
                sizes.as_ptr(),
                subsizes.as_ptr(),
                starts.as_ptr(),
                ffi::MPI_ORDER_C as c_int,
                element.raw,
                &mut raw,
            )
        };
        check(path, "MPI_Type_create_subarray", code)?;
        Datatype::commit(raw, path)
    }
}

impl Drop for Datatype {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: `raw` is a derived datatype we created and still own.
            // Nothing useful can be done about a failure here.
            let _ = unsafe { ffi::MPI_Type_free(&mut self.raw) };
        }
    }
}

/// Which way [`MpiFile::transfer`] moves data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Collective `MPI_File_read_all`.
    Read,
    /// Collective `MPI_File_write_all`.
    Write,
    /// Independent `MPI_File_write_at` at offset 0.
    WriteHeader,
}

/// An open MPI file. Deliberately not closed on drop: `MPI_File_close` is
/// collective and must be called explicitly, by every rank, at the same point.
pub(super) struct MpiFile {
    handle: ffi::MPI_File,
}

impl MpiFile {
    /// Collective `MPI_File_open` of `mpi_path` (`path` is for messages).
    ///
    /// If the open fails on some ranks only (which a conforming MPI does not
    /// do), the handles opened elsewhere are leaked rather than risking a
    /// deadlock in a collective close.
    pub(super) fn open<C: Communicator>(
        comm: &C,
        path: &Path,
        mpi_path: &CStr,
        amode: c_int,
    ) -> Result<MpiFile, NpyError> {
        // SAFETY: reading an initialised extern static of mpi-sys.
        let mut handle = unsafe { ffi::RSMPI_FILE_NULL };
        // SAFETY: `mpi_path` is NUL-terminated; the communicator is valid.
        let code = unsafe {
            ffi::MPI_File_open(
                comm.as_raw(),
                mpi_path.as_ptr(),
                amode,
                ffi::RSMPI_INFO_NULL,
                &mut handle,
            )
        };
        check(path, "MPI_File_open", code)?;
        Ok(MpiFile { handle })
    }

    /// Sets the file's error handler to `MPI_ERRORS_RETURN` (local call).
    pub(super) fn set_errors_return(&self, path: &Path) -> Result<(), NpyError> {
        // SAFETY: valid file handle and predefined error handler.
        let code = unsafe { ffi::MPI_File_set_errhandler(self.handle, ffi::RSMPI_ERRORS_RETURN) };
        check(path, "MPI_File_set_errhandler", code)
    }

    /// Fails with [`NpyError::Truncated`] if the file is shorter than `header`
    /// says (local call).
    pub(super) fn check_length(&self, path: &Path, header: &NpyHeader) -> Result<(), NpyError> {
        let mut size: ffi::MPI_Offset = 0;
        // SAFETY: valid file handle and out-pointer.
        let code = unsafe { ffi::MPI_File_get_size(self.handle, &mut size) };
        check(path, "MPI_File_get_size", code)?;
        let expected = check_file_extent(header)? - header.data_offset;
        let actual = u64::try_from(size)
            .unwrap_or(0)
            .saturating_sub(header.data_offset);
        if actual < expected {
            return Err(NpyError::Truncated {
                path: path.to_path_buf(),
                expected,
                actual,
            });
        }
        Ok(())
    }

    /// Collective `MPI_File_set_view` at byte `disp` with a one-byte etype and
    /// this rank's subarray (or a single element for an empty block) as the
    /// filetype. Records failures in `outcome` but always makes the collective
    /// call. Returns the element datatype (to describe the memory buffer) and
    /// the filetype, which must outlive the transfer.
    pub(super) fn set_block_view(
        &self,
        path: &Path,
        disp: u64,
        dtype: Dtype,
        plan: &BlockPlan,
        outcome: &mut Result<(), NpyError>,
    ) -> (Datatype, Option<Datatype>) {
        let elem = match Datatype::element(dtype, path) {
            Ok(elem) => elem,
            Err(e) => {
                keep_first(outcome, Err(e));
                Datatype::byte()
            }
        };
        let filetype = match &plan.subarray {
            Some(spec) if outcome.is_ok() => match Datatype::subarray(spec, &elem, path) {
                Ok(t) => Some(t),
                Err(e) => {
                    keep_first(outcome, Err(e));
                    None
                }
            },
            _ => None,
        };
        let byte = Datatype::byte();
        let filetype_raw = filetype.as_ref().map_or(elem.raw, |t| t.raw);
        // SAFETY: valid file handle and committed datatypes; "native" is NUL-terminated.
        let code = unsafe {
            ffi::MPI_File_set_view(
                self.handle,
                disp as ffi::MPI_Offset,
                byte.raw,
                filetype_raw,
                c"native".as_ptr(),
                ffi::RSMPI_INFO_NULL,
            )
        };
        keep_first(outcome, check(path, "MPI_File_set_view", code));
        (elem, filetype)
    }

    /// Transfers `count` items of `datatype` between `buf` and the file and
    /// checks that all of them were moved.
    pub(super) fn transfer(
        &self,
        path: &Path,
        direction: Direction,
        buf: *mut c_void,
        count: c_int,
        datatype: &Datatype,
    ) -> Result<(), NpyError> {
        // SAFETY: MPI_Status is a plain C struct; all-zero is a valid value.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: `buf` points to at least `count` items of `datatype` (the
        // callers pass buffers whose length was checked against the block),
        // and is only written to for reads.
        let (call, code) = unsafe {
            match direction {
                Direction::Read => (
                    "MPI_File_read_all",
                    ffi::MPI_File_read_all(self.handle, buf, count, datatype.raw, &mut status),
                ),
                Direction::Write => (
                    "MPI_File_write_all",
                    ffi::MPI_File_write_all(
                        self.handle,
                        buf.cast_const(),
                        count,
                        datatype.raw,
                        &mut status,
                    ),
                ),
                Direction::WriteHeader => (
                    "MPI_File_write_at",
                    ffi::MPI_File_write_at(
                        self.handle,
                        0,
                        buf.cast_const(),
                        count,
                        datatype.raw,
                        &mut status,
                    ),
                ),
            }
        };
        check(path, call, code)?;
        if count == 0 {
            return Ok(());
        }
        let mut done: c_int = 0;
        // SAFETY: `status` was filled in by the successful call above.
        let code = unsafe { ffi::MPI_Get_count(&status, datatype.raw, &mut done) };
        check(path, "MPI_Get_count", code)?;
        if done != count {
            return Err(NpyError::IncompleteTransfer {
                path: path.to_path_buf(),
                op: if direction == Direction::Read {
                    "read"
                } else {
                    "write"
                },
                expected: count as usize,
                // MPI_UNDEFINED (negative) means a partial element.
                actual: usize::try_from(done).unwrap_or(0),
            });
        }
        Ok(())
    }

    /// Collective `MPI_File_set_size`; `len` was checked to fit `MPI_Offset`.
    pub(super) fn set_size(&self, path: &Path, len: u64) -> Result<(), NpyError> {
        // SAFETY: valid file handle.
        let code = unsafe { ffi::MPI_File_set_size(self.handle, len as ffi::MPI_Offset) };
        check(path, "MPI_File_set_size", code)
    }

    /// Collective `MPI_File_sync`: flushes every rank's writes to storage.
    pub(super) fn sync(&self, path: &Path) -> Result<(), NpyError> {
        // SAFETY: valid file handle.
        let code = unsafe { ffi::MPI_File_sync(self.handle) };
        check(path, "MPI_File_sync", code)
    }

    /// Collective `MPI_File_close`.
    pub(super) fn close(mut self, path: &Path) -> Result<(), NpyError> {
        // SAFETY: valid open file handle; MPI sets it to MPI_FILE_NULL.
        let code = unsafe { ffi::MPI_File_close(&mut self.handle) };
        check(path, "MPI_File_close", code)
    }
}
