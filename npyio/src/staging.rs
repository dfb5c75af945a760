//! All-or-nothing output files: a temporary file with a short name beside the target, filled
//! by every rank, renamed over the target by rank 0 once every rank succeeded.
//!
//! What this module guarantees, and how:
//!
//! * **Only regular files are replaced.** An existing target that is a device, a FIFO, a
//!   directory or a socket is refused ([`NpyError::NotRegularFile`]); a symbolic link to a
//!   regular file keeps the link and replaces the file it names. Inputs are opened without
//!   blocking and refused unless regular (a FIFO with no writer would block forever).
//! * **No half-written target, no lying success.** The temporary file's whole length is
//!   reserved with `fallocate(2)` before any rank writes, so a full disk or quota is an error
//!   up front instead of a short write that MPI-IO may not report (OpenMPI's `fbtl/posix`
//!   ignores short `pwritev`s). File systems without `fallocate` fall back to the MPI-IO
//!   status checks alone.
//! * **Short names for OpenMPI.** MPI opens the file through `/proc/self/fd/N`, a short alias
//!   of a descriptor this process holds: OpenMPI 4.1's shared-file-pointer components copy
//!   the name into fixed 256-byte buffers and abort on long paths. The temporary file's own
//!   name is short too (`.dfft-tmp-<target hash>-<host>-<pid>-<n>`), so a target name of up
//!   to `NAME_MAX` bytes works.
//! * **Interrupted writes clean up.** Every rank records the temporary path in a table that
//!   [`remove_staged_files`] (async-signal-safe) unlinks; [`crate::guard`] installs signal
//!   handlers that call it. Temporary files of the same target left by a process that no
//!   longer runs (on the same host; the name holds the host and the pid) are removed when the
//!   next write of that target starts. Temporaries of other hosts are left alone: a pid of
//!   another host cannot be checked.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::os::raw::c_char;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use mpi::topology::Communicator;

use crate::error::NpyError;
use crate::parallel::{agree, broadcast_from};

/// Prefix of every temporary file name.
const TMP_PREFIX: &str = ".dfft-tmp-";

/// Longest path handed to MPI when `/proc/self/fd` is unavailable: OpenMPI's `lockedfile`
/// component formats `<path>.locktest.<rank>` into a 256-byte buffer.
const MPI_PATH_LIMIT: usize = 230;

/// The kind of a file that is not regular, for messages.
fn kind_of(file_type: std::fs::FileType) -> Option<&'static str> {
    Some(if file_type.is_file() {
        return None;
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "special file"
    })
}

/// Opens an input file for reading, refusing anything but a regular file. The open does not
/// block (a FIFO without a writer would), and the check is made on the opened descriptor.
pub fn open_input(path: &Path) -> Result<File, NpyError> {
    open_input_as(path, path)
}

/// [`open_input`] of `path`, naming `label` in errors.
pub(crate) fn open_input_as(path: &Path, label: &Path) -> Result<File, NpyError> {
    let path_for_errors = label;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| NpyError::Io {
            path: path_for_errors.to_path_buf(),
            action: "failed to open".to_owned(),
            source,
        })?;
    let meta = file.metadata().map_err(|source| NpyError::Io {
        path: path_for_errors.to_path_buf(),
        action: "failed to stat".to_owned(),
        source,
    })?;
    if let Some(kind) = kind_of(meta.file_type()) {
        return Err(NpyError::NotRegularFile {
            path: path_for_errors.to_path_buf(),
            kind,
        });
    }
    Ok(file)
}

/// Reads a whole file that is small by nature (a machine profile, a list of problems), with
/// [`open_input`]'s rule (regular files only, opened without blocking) and at most `cap`
/// bytes: a FIFO, a device (a link to `/dev/zero`) or a file larger than `cap` is refused
/// with its path instead of blocking or reading until memory runs out. Local, no MPI.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, NpyError> {
    use std::io::Read;
    let file = open_input(path)?;
    let too_large = |size: u64| NpyError::TooLarge {
        path: path.to_path_buf(),
        size,
        cap,
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > cap {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // One byte more than the cap tells a file that grew while it was read.
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| NpyError::Io {
            path: path.to_path_buf(),
            action: "failed to read".to_owned(),
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Whether this process may create files in `dir` (`access(2)` with `W_OK | X_OK`: the
/// permissions, and a read-only mount even for root).
fn writable_dir(dir: &Path) -> std::io::Result<()> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: access(2) on a NUL-terminated path we own.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Checks that `target` may be written: it is absent or a regular file (a symbolic link is
/// followed), in a directory this process may create files in. Returns the path the output will be published at: `target`, or the file a link
/// names (so the link is kept). Local, no MPI; [`write_block`](crate::write_block) makes the
/// same check itself, and callers can use this one to refuse a bad target before any work.
pub fn check_output_target(target: &Path) -> Result<PathBuf, NpyError> {
    let invalid = |reason: String| NpyError::InvalidPath {
        path: target.to_path_buf(),
        reason,
    };
    if target.file_name().is_none() {
        return Err(invalid("it does not name a file".to_owned()));
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let unwritable = |source| NpyError::Io {
        path: target.to_path_buf(),
        action: format!("cannot write into {}", dir.display()),
        source,
    };
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => writable_dir(dir).map_err(unwritable)?,
        other => {
            return Err(unwritable(other.err().unwrap_or_else(|| {
                std::io::Error::from_raw_os_error(libc::ENOTDIR)
            })))
        }
    }
    match std::fs::metadata(target) {
        Ok(meta) => match kind_of(meta.file_type()) {
            Some(kind) => Err(NpyError::NotRegularFile {
                path: target.to_path_buf(),
                kind,
            }),
            None if target.is_symlink() => {
                let resolved = std::fs::canonicalize(target).map_err(|source| NpyError::Io {
                    path: target.to_path_buf(),
                    action: "failed to resolve the symbolic link".to_owned(),
                    source,
                })?;
                // The file is replaced in the directory the link points into.
                if let Some(dir) = resolved.parent() {
                    writable_dir(dir).map_err(|source| NpyError::Io {
                        path: target.to_path_buf(),
                        action: format!("cannot write into {}", dir.display()),
                        source,
                    })?;
                }
                Ok(resolved)
            }
            None => Ok(target.to_path_buf()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if target.is_symlink() {
                Err(invalid(
                    "it is a symbolic link to a file that does not exist".to_owned(),
                ))
            } else {
                Ok(target.to_path_buf())
            }
        }
        Err(source) => Err(NpyError::Io {
            path: target.to_path_buf(),
            action: "failed to stat".to_owned(),
            source,
        }),
    }
}

/// 64-bit FNV-1a: a stable hash (the same in every process and run) of a target's name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A hash of this host's name (32 bits), so stale temporaries are judged only on their host.
fn host_hash() -> u32 {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let len = if rc == 0 {
        buf.iter().position(|&b| b == 0).unwrap_or(buf.len())
    } else {
        0
    };
    fnv1a(&buf[..len]) as u32
}

/// The prefix shared by every temporary file of `target_name` written on this host:
/// `.dfft-tmp-<16 hex digits of the name's hash>-<8 hex digits of the host's>-`.
fn temporary_prefix(target_name: &OsStr, host: u32) -> String {
    format!(
        "{TMP_PREFIX}{:016x}-{host:08x}-",
        fnv1a(target_name.as_bytes())
    )
}

/// The name of a new temporary file for `target_name`, owned by process `pid`.
fn temporary_name(target_name: &OsStr, host: u32, pid: u32) -> OsString {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    OsString::from(format!("{}{pid}-{n}", temporary_prefix(target_name, host)))
}

/// The owner's pid of a temporary file named `name`, if it is one of `prefix`'s.
fn owner_pid(name: &OsStr, prefix: &str) -> Option<u32> {
    let rest = name.to_str()?.strip_prefix(prefix)?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether a process with this pid runs on this host (`kill(pid, 0)`; a pid taken by another
/// process since counts as running, so nothing in use is ever removed).
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes the temporary files of `target_name` in `dir` whose owner no longer runs on this
/// host. Best effort: an unreadable directory or a failed removal is ignored.
fn remove_stale(dir: &Path, target_name: &OsStr, host: u32) {
    let prefix = temporary_prefix(target_name, host);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some(pid) = owner_pid(&name, &prefix) {
            if !process_exists(pid) {
                let _ = std::fs::remove_file(dir.join(&name));
            }
        }
    }
}

/// Reserves `len` bytes of `file` on disk, so that later writes cannot run out of space. A
/// file system without `fallocate` is not an error (the MPI-IO checks remain).
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    reserve_with(file, len, 0)
}

/// [`reserve`] with `fallocate` flags `mode`.
fn reserve_with(file: &File, len: u64, mode: libc::c_int) -> std::io::Result<()> {
    let Ok(len) = libc::off_t::try_from(len) else {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    };
    if len == 0 {
        return Ok(());
    }
    // SAFETY: plain system call on a descriptor we own.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), mode, 0, len) };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => Ok(()),
        _ => Err(err),
    }
}

/// The name MPI should open for `file` (whose path is `path`): the short alias
/// `/proc/self/fd/N` where the kernel provides it, else the absolute path if it is short
/// enough for OpenMPI.
pub fn mpi_name(file: &File, path: &Path) -> Result<CString, NpyError> {
    if Path::new("/proc/self/fd").is_dir() {
        let alias = format!("/proc/self/fd/{}", file.as_raw_fd());
        return Ok(CString::new(alias).expect("no NUL in a number"));
    }
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() > MPI_PATH_LIMIT {
        return Err(NpyError::InvalidPath {
            path: path.to_path_buf(),
            reason: format!(
                "it is {} bytes long and /proc/self/fd is unavailable; OpenMPI's MPI-IO takes \
                 at most {MPI_PATH_LIMIT}",
                bytes.len()
            ),
        });
    }
    CString::new(bytes).map_err(|_| NpyError::InvalidPath {
        path: path.to_path_buf(),
        reason: "it contains a NUL byte".to_owned(),
    })
}

/// Slots of the table of temporary files being written by this process.
const SLOTS: usize = 32;

/// Temporary files being written, as leaked C strings, for [`remove_staged_files`].
static STAGED: [AtomicPtr<c_char>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// Records `path` in the table; `None` if the table is full (the file is then only removed
/// by the normal error paths and the next run's stale-file check).
fn register(path: &Path) -> Option<usize> {
    let raw = CString::new(path.as_os_str().as_bytes()).ok()?.into_raw();
    for (i, slot) in STAGED.iter().enumerate() {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                raw,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `raw` came from `CString::into_raw` above and was stored nowhere.
    drop(unsafe { CString::from_raw(raw) });
    None
}

/// Takes a path out of the table. Its string is deliberately leaked (a few dozen bytes per
/// file written): a signal handler on another thread may be reading it at this moment.
fn deregister(slot: Option<usize>) {
    if let Some(i) = slot {
        STAGED[i].store(std::ptr::null_mut(), Ordering::Release);
    }
}

/// Unlinks every temporary file this process is writing. Async-signal-safe (atomic loads and
/// `unlink(2)` only): meant for signal handlers, as [`crate::guard`] installs.
pub fn remove_staged_files() {
    for slot in &STAGED {
        let path = slot.load(Ordering::Acquire);
        if !path.is_null() {
            // SAFETY: `path` is a NUL-terminated string that is never freed.
            unsafe { libc::unlink(path) };
        }
    }
}

/// A temporary file beside an output target, open on this rank; collective to create and to
/// finish. [`write_block`](crate::write_block) uses it; writers of other formats (the `h5io`
/// crate's HDF5 files) use it the same way: [`Staged::create`], open [`Staged::mpi_name`]
/// with MPI-IO, write, close, [`Staged::finish`].
pub struct Staged {
    /// Absolute path of the temporary file.
    tmp: PathBuf,
    /// Where it is published (symbolic links resolved).
    target: PathBuf,
    /// This rank's descriptor of it (MPI opens it through [`mpi_name`]).
    file: File,
    /// Its slot in the signal-cleanup table.
    slot: Option<usize>,
}

impl Staged {
    /// Rank 0 checks `target`, removes stale temporaries of it, creates the temporary file and
    /// reserves `len` bytes; then every rank opens it. Collective; every rank returns the same
    /// outcome, and on failure no temporary file is left.
    pub fn create<C: Communicator>(comm: &C, target: &Path, len: u64) -> Result<Staged, NpyError> {
        let created = if comm.rank() == 0 {
            create_temporary(target, len).map(Some)
        } else {
            Ok(None)
        };
        let created = agree(comm, created)?;
        // Rank 0's paths, on every rank.
        let (tmp, resolved) = match &created {
            Some((tmp, resolved, _, _)) => (
                tmp.as_os_str().as_bytes().to_vec(),
                resolved.as_os_str().as_bytes().to_vec(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let tmp = PathBuf::from(OsString::from_vec(broadcast_from(comm, 0, &tmp)));
        let resolved = PathBuf::from(OsString::from_vec(broadcast_from(comm, 0, &resolved)));
        let (opened, slot) = match created {
            Some((_, _, file, slot)) => (Ok(file), slot),
            None => {
                let opened = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&tmp)
                    .map_err(|source| NpyError::Io {
                        path: target.to_path_buf(),
                        action: format!(
                        "rank {} cannot open the temporary file {} that rank 0 created (is the \
                         directory on a file system every rank shares?)",
                        comm.rank(),
                        tmp.display()
                    ),
                        source,
                    });
                let slot = opened.as_ref().ok().and_then(|_| register(&tmp));
                (opened, slot)
            }
        };
        match agree(comm, opened) {
            Ok(file) => Ok(Staged {
                tmp,
                target: resolved,
                file,
                slot,
            }),
            Err(e) => {
                deregister(slot);
                if comm.rank() == 0 {
                    let _ = std::fs::remove_file(&tmp);
                }
                Err(e)
            }
        }
    }

    /// The name MPI should open this file by.
    pub fn mpi_name(&self) -> Result<CString, NpyError> {
        mpi_name(&self.file, &self.tmp)
    }

    /// Rank 0 reserves `len` bytes of disk for the file without changing its size
    /// (`FALLOC_FL_KEEP_SIZE`): for writers that truncate the file when they open it, as
    /// HDF5 does. Collective; every rank returns the same outcome.
    pub fn reserve_keeping_size<C: Communicator>(
        &self,
        comm: &C,
        len: u64,
    ) -> Result<(), NpyError> {
        let reserved = if comm.rank() == 0 {
            reserve_with(&self.file, len, libc::FALLOC_FL_KEEP_SIZE).map_err(|source| {
                NpyError::Io {
                    path: self.target.clone(),
                    action: format!("failed to reserve {len} bytes for the output"),
                    source,
                }
            })
        } else {
            Ok(())
        };
        agree(comm, reserved)
    }

    /// Rank 0 copies the target's current contents, if it exists, into the temporary file
    /// (keeping the target's permission bits), for writers that change part of a file: an
    /// HDF5 writer adding a dataset to a file of others. The target itself is never opened
    /// for writing: it stays as it was until [`Staged::finish`] renames the copy over it.
    /// Collective; every rank returns the same outcome: the bytes copied (0: no target, or
    /// an empty one).
    pub fn copy_target<C: Communicator>(&self, comm: &C) -> Result<u64, NpyError> {
        let copied = if comm.rank() == 0 {
            self.copy_target_here()
        } else {
            Ok(0)
        };
        let copied = agree(comm, copied)?;
        let bytes = broadcast_from(comm, 0, &copied.to_le_bytes());
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    /// Rank 0's part of [`Staged::copy_target`].
    fn copy_target_here(&self) -> Result<u64, NpyError> {
        use std::os::unix::fs::PermissionsExt;
        let io_err = |action: String| {
            let path = self.target.clone();
            move |source| NpyError::Io {
                path,
                action,
                source,
            }
        };
        let mut source = match open_input(&self.target) {
            Ok(file) => file,
            Err(NpyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(0)
            }
            Err(e) => return Err(e),
        };
        let meta = source
            .metadata()
            .map_err(io_err("failed to stat".to_owned()))?;
        // (std::io::copy uses copy_file_range, which clones on XFS and Btrfs.)
        let copied = std::io::copy(&mut source, &mut &self.file).map_err(io_err(format!(
            "failed to copy it into the temporary file {}",
            self.tmp.display()
        )))?;
        let mode = std::fs::Permissions::from_mode(meta.permissions().mode() & 0o7777);
        self.file
            .set_permissions(mode)
            .map_err(io_err("failed to copy its permissions".to_owned()))?;
        Ok(copied)
    }

    /// Agrees on `outcome` over all ranks; if every rank succeeded, rank 0 renames the file
    /// over the target, else removes it. Collective; every rank returns the same outcome, and
    /// only after the temporary file is gone.
    pub fn finish<C: Communicator>(
        self,
        comm: &C,
        outcome: Result<(), NpyError>,
    ) -> Result<(), NpyError> {
        let target = &self.target;
        let io_err = |action: String| {
            move |source| NpyError::Io {
                path: target.clone(),
                action,
                source,
            }
        };
        // The data reach the disk before the vote, so that nothing slow stands between the
        // vote and the rename; the vote includes every rank's launcher: a job whose mpirun
        // was killed must not publish.
        let outcome = outcome
            .and_then(|()| {
                if comm.rank() != 0 {
                    return Ok(());
                }
                // Space reserved past the end (`reserve_keeping_size`) is released: cutting a
                // file to its own length frees the blocks beyond it.
                let len = self.file.metadata().map_err(io_err(format!(
                    "failed to stat the temporary file {}",
                    self.tmp.display()
                )))?;
                self.file.set_len(len.len()).map_err(io_err(format!(
                    "failed to release the space reserved past the end of {}",
                    self.tmp.display()
                )))?;
                self.file.sync_all().map_err(io_err(format!(
                    "failed to fsync the temporary file {}",
                    self.tmp.display()
                )))
            })
            .map(|()| {
                // Right after SIGINT or SIGTERM OpenMPI's mpirun sends the ranks SIGCONT,
                // and SIGTERM only a second later: hold the vote back until that SIGTERM
                // would have come, so an interrupted job does not publish.
                crate::guard::wait_after_continue();
            })
            .and_then(|()| {
                if crate::guard::launcher_gone() {
                    Err(NpyError::LauncherGone {
                        path: target.clone(),
                    })
                } else {
                    Ok(())
                }
            });
        let written = agree(comm, outcome);
        let published = if comm.rank() != 0 {
            Ok(())
        } else if written.is_ok() {
            publish(&self.tmp, target)
        } else {
            let _ = std::fs::remove_file(&self.tmp);
            Ok(())
        };
        let published = agree(comm, published);
        deregister(self.slot);
        written.and(published)
    }
}

/// What rank 0's part of [`Staged::create`] makes: the temporary file's path, the resolved
/// target, the open file and its slot in the signal-cleanup table.
type Created = (PathBuf, PathBuf, File, Option<usize>);

/// Rank 0's part of [`Staged::create`].
fn create_temporary(target: &Path, len: u64) -> Result<Created, NpyError> {
    let resolved = check_output_target(target)?;
    let name = resolved
        .file_name()
        .expect("check_output_target refuses paths without a file name")
        .to_os_string();
    let dir = match resolved.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let io_err = |action: String| {
        move |source| NpyError::Io {
            path: target.to_path_buf(),
            action,
            source,
        }
    };
    let dir =
        std::path::absolute(&dir).map_err(io_err("failed to make the path absolute".to_owned()))?;
    let host = host_hash();
    remove_stale(&dir, &name, host);
    let tmp = dir.join(temporary_name(&name, host, std::process::id()));
    // Recorded before it exists, so a signal at any moment after its creation removes it.
    let slot = register(&tmp);
    let file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
    {
        Ok(file) => file,
        Err(source) => {
            deregister(slot);
            return Err(NpyError::Io {
                path: target.to_path_buf(),
                action: format!("failed to create the temporary file {}", tmp.display()),
                source,
            });
        }
    };
    if let Err(source) = reserve(&file, len) {
        drop(file);
        let _ = std::fs::remove_file(&tmp);
        deregister(slot);
        return Err(NpyError::Io {
            path: target.to_path_buf(),
            action: format!("failed to reserve {len} bytes for the output"),
            source,
        });
    }
    Ok((tmp, dir.join(&name), file, slot))
}

/// Writes `bytes` as the file `target` all-or-nothing, on this process alone: a temporary
/// file beside it (short name, its space reserved first, removed by the signal handlers of
/// [`crate::guard`]), synced and renamed over `target`. `target` must be absent or a regular
/// file (a symbolic link keeps the link), as [`check_output_target`] says. For small files
/// written by one rank, such as an XDMF description beside an HDF5 file. Local, no MPI.
pub fn replace_file(target: &Path, bytes: &[u8]) -> Result<(), NpyError> {
    use std::io::Write;
    let (tmp, resolved, file, slot) = create_temporary(target, bytes.len() as u64)?;
    let written = (&file)
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|source| NpyError::Io {
            path: target.to_path_buf(),
            action: format!("failed to write the temporary file {}", tmp.display()),
            source,
        });
    drop(file);
    let published = written.and_then(|()| publish(&tmp, &resolved));
    if published.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    deregister(slot);
    published
}

/// Renames the (synced) temporary file to `target` and syncs the directory; removes the
/// temporary file if the rename fails. Rank 0 only.
fn publish(tmp: &Path, target: &Path) -> Result<(), NpyError> {
    if let Err(source) = std::fs::rename(tmp, target) {
        let _ = std::fs::remove_file(tmp);
        return Err(NpyError::Io {
            path: target.to_path_buf(),
            action: format!(
                "failed to rename the temporary file {} to it",
                tmp.display()
            ),
            source,
        });
    }
    // Make the rename itself durable. Best effort: not every file system supports fsync on
    // directories, and the data is already in place.
    if let Some(dir) = target.parent() {
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_short_and_name_their_owner() {
        let long = OsString::from("a".repeat(250) + ".npy");
        let name = temporary_name(&long, 0xdead_beef, 4242);
        let text = name.to_str().unwrap();
        assert!(text.len() < 64, "{text}");
        let prefix = temporary_prefix(&long, 0xdead_beef);
        assert!(text.starts_with(&prefix), "{text}");
        assert!(prefix.starts_with(".dfft-tmp-") && prefix.ends_with("-deadbeef-"));
        assert_eq!(owner_pid(&name, &prefix), Some(4242));
        // Another target, another host or a foreign name is never taken for ours.
        assert_eq!(
            owner_pid(&name, &temporary_prefix(OsStr::new("b.npy"), 0xdead_beef)),
            None
        );
        assert_eq!(owner_pid(&name, &temporary_prefix(&long, 1)), None);
        assert_eq!(owner_pid(OsStr::new("notes.txt"), &prefix), None);
        assert_eq!(
            owner_pid(&OsString::from(format!("{prefix}12")), &prefix),
            None
        );
        assert_ne!(
            temporary_name(&long, 1, 1),
            temporary_name(&long, 1, 1),
            "two files of one process differ"
        );
        // The hash is stable: the same in every process and run.
        assert_eq!(fnv1a(b"x.npy"), 0xcbb5_bf40_816c_560c);
    }

    #[test]
    fn stale_temporaries_of_dead_owners_are_removed() {
        let dir = std::env::temp_dir().join(format!("npyio-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = OsStr::new("out.npy");
        let host = host_hash();
        // A pid that has exited (and, just reaped, is not reused yet).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = temporary_name(target, host, dead);
        let live = temporary_name(target, host, std::process::id());
        let other_host = temporary_name(target, host.wrapping_add(1), dead);
        let other_target = temporary_name(OsStr::new("other.npy"), host, dead);
        for name in [&stale, &live, &other_host, &other_target] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        remove_stale(&dir, target, host);
        assert!(!dir.join(&stale).exists(), "a dead owner's file is removed");
        for name in [&live, &other_host, &other_target] {
            assert!(dir.join(name).exists(), "{name:?} is kept");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn targets_must_be_regular_files() {
        let dir = std::env::temp_dir().join(format!("npyio-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = check_output_target(&fifo).unwrap_err();
        assert!(
            matches!(err, NpyError::NotRegularFile { kind: "FIFO", .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "{}: is a FIFO, not a regular file: only regular files are read or replaced",
                fifo.display()
            )
        );
        let err = open_input(&fifo).unwrap_err();
        assert!(
            matches!(err, NpyError::NotRegularFile { kind: "FIFO", .. }),
            "{err}"
        );
        assert!(matches!(
            check_output_target(&dir).unwrap_err(),
            NpyError::NotRegularFile {
                kind: "directory",
                ..
            }
        ));
        assert!(matches!(
            check_output_target(Path::new("/dev/null")).unwrap_err(),
            NpyError::NotRegularFile {
                kind: "character device",
                ..
            }
        ));
        // A link to a regular file publishes at the file; a dangling link is refused.
        let file = dir.join("file.npy");
        std::fs::write(&file, b"x").unwrap();
        let link = dir.join("link.npy");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(
            check_output_target(&link).unwrap(),
            std::fs::canonicalize(&file).unwrap()
        );
        let dangling = dir.join("dangling.npy");
        std::os::unix::fs::symlink(dir.join("missing"), &dangling).unwrap();
        assert!(matches!(
            check_output_target(&dangling).unwrap_err(),
            NpyError::InvalidPath { .. }
        ));
        assert_eq!(
            check_output_target(&dir.join("new.npy")).unwrap(),
            dir.join("new.npy")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_signal_table_unlinks_registered_files() {
        let path = std::env::temp_dir().join(format!("npyio-table-{}", std::process::id()));
        std::fs::write(&path, b"x").unwrap();
        let slot = register(&path);
        assert!(slot.is_some());
        remove_staged_files();
        assert!(!path.exists());
        deregister(slot);
        std::fs::write(&path, b"x").unwrap();
        remove_staged_files();
        assert!(path.exists(), "a deregistered file is left alone");
        std::fs::remove_file(&path).unwrap();
    }
}
