//! Shared memory on 2 MiB pages for large windows ([`HugeSegment`]).
//!
//! `MPI_Win_allocate_shared` maps its segment wherever the kernel puts it. Where shared
//! memory is not set up for transparent huge pages (Linux's common `shmem_enabled=never`),
//! that memory stays on 4 KiB pages, and a strided sweep over a block in it (a column FFT
//! reading a row every few hundred KiB) pays a page walk for nearly every row it touches,
//! where private memory on huge pages pays none. `madvise(MADV_COLLAPSE)` (Linux 6.1 and
//! later) makes shared-memory pages huge whatever that setting says (short of `deny`), but
//! only pages whose addresses line up with 2 MiB boundaries in the mapping. So a large
//! window is a POSIX shared-memory object that its first member creates, every member maps
//! at a 2 MiB boundary, and each member allocates (so that running out of memory is an error
//! here, not a `SIGBUS` later, and so that its share lies on its own NUMA node, where first
//! touch would put an MPI window's) and collapses one share of. Any failure on any member
//! leaves every member with `None` (the caller then takes an MPI window); a collapse
//! that fails leaves small pages, which work all the same.

use crate::error::Result;
use crate::transport::SendPtr;
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of a huge page (x86-64's and aarch64's PMD size with 4 KiB base pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Bytes of the broadcast object name (NUL-padded; a leading NUL: no object).
const NAME_BYTES: usize = 64;

/// Objects this process has created, for unique names.
static CREATED: AtomicU64 = AtomicU64::new(0);

/// One shared mapping of `len` bytes (a whole number of huge pages) starting on a 2 MiB
/// boundary in every member's address space; zeroed when made. Unmapped on drop (not
/// collective: the object was unlinked when every member had mapped it).
pub(crate) struct HugeSegment {
    base: SendPtr<u8>,
    len: usize,
}

impl HugeSegment {
    /// A mapping of at least `bytes` over `comm` (all on one node), or `None` on every member
    /// when any of them cannot make it. Collective over `comm`.
    pub(crate) fn new(comm: &SimpleCommunicator, bytes: usize) -> Result<Option<Self>> {
        let len = bytes.max(1).next_multiple_of(HUGE_PAGE);
        let me = comm.rank();
        let mut name = [0u8; NAME_BYTES];
        if me == 0 {
            if let Some(created) = create(len) {
                name = created;
            }
        }
        comm.process_at_rank(0).broadcast_into(&mut name[..]);
        let share = Share::of(me as usize, comm.size() as usize, len);
        let mapped = (name[0] != 0).then(|| map(&name, len, share)).flatten();
        let mut all = 0i32;
        comm.all_reduce_into(
            &i32::from(mapped.is_some()),
            &mut all,
            SystemOperation::min(),
        );
        if me == 0 && name[0] != 0 {
            // Every member has opened it (or given up): the name is no longer needed, and the
            // memory lives as long as a mapping does.
            // SAFETY: a NUL-terminated name (`create` leaves the last byte NUL).
            unsafe { libc::shm_unlink(name.as_ptr().cast()) };
        }
        let segment = mapped.map(|base| Self {
            base: SendPtr::new(base),
            len,
        });
        if all == 0 {
            return Ok(None);
        }
        let segment = segment.expect("mapped on every member");
        segment.collapse(share);
        // Nobody touches the memory before every share is collapsed: the peers' first
        // accesses then map whole huge pages.
        comm.barrier();
        Ok(Some(segment))
    }

    /// Start of the mapping (on a 2 MiB boundary).
    pub(crate) fn base(&self) -> *mut u8 {
        self.base.get()
    }

    /// Orders this process's accesses to the mapping: with a barrier between, every
    /// member's stores before it are visible to every member after it (what `MPI_Win_sync`
    /// does for an MPI window).
    pub(crate) fn fence(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    /// Asks for `share` of the huge pages to be made huge; errors (an older kernel,
    /// `shmem_enabled=deny`, no free huge page) leave small pages.
    fn collapse(&self, share: Share) {
        if share.bytes == 0 {
            return;
        }
        let start = self.base.get().wrapping_add(share.offset).cast();
        // SAFETY: advice on whole pages of our own mapping; neither call changes its
        // contents (a collapse copies the pages into huge ones).
        unsafe {
            libc::madvise(start, share.bytes, libc::MADV_HUGEPAGE);
            libc::madvise(start, share.bytes, MADV_COLLAPSE);
        }
    }
}

/// The huge pages one member allocates and collapses: an equal share of the mapping's, so
/// that with equal regions (a plan's blocks) each member's region is mostly its own.
#[derive(Clone, Copy)]
struct Share {
    offset: usize,
    bytes: usize,
}

impl Share {
    fn of(me: usize, members: usize, len: usize) -> Self {
        let pages = len / HUGE_PAGE;
        let (first, last) = (pages * me / members, pages * (me + 1) / members);
        Share {
            offset: first * HUGE_PAGE,
            bytes: (last - first) * HUGE_PAGE,
        }
    }
}

impl Drop for HugeSegment {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, of `len` bytes, no longer referenced (the window
        // that holds it is being dropped).
        unsafe { libc::munmap(self.base.get().cast(), self.len) };
    }
}

/// `MADV_COLLAPSE` (Linux 6.1), which not every libc target defines.
const MADV_COLLAPSE: libc::c_int = 25;

/// Creates a shared-memory object of `len` bytes (its memory not yet allocated); its
/// NUL-padded name.
fn create(len: usize) -> Option<[u8; NAME_BYTES]> {
    let count = CREATED.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let text = format!("/dfft-{}-{count}-{nanos}", std::process::id());
    let mut name = [0u8; NAME_BYTES];
    name[..text.len()].copy_from_slice(text.as_bytes());
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
    // SAFETY: a NUL-terminated name (it is shorter than the buffer).
    let fd = unsafe { libc::shm_open(name.as_ptr().cast(), flags, 0o600) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a plain call on the descriptor just opened.
    let sized =
        libc::off_t::try_from(len).is_ok_and(|size| unsafe { libc::ftruncate(fd, size) } == 0);
    // SAFETY: closing the descriptor opened above (the members open the object by name).
    unsafe { libc::close(fd) };
    if !sized {
        // SAFETY: the NUL-terminated name of the object created above.
        unsafe { libc::shm_unlink(name.as_ptr().cast()) };
        return None;
    }
    Some(name)
}

/// Maps the object `name` (`len` bytes) at a 2 MiB boundary (a reservation of a huge page
/// more than needed, the object mapped over its first boundary, the rest given back) and
/// allocates this member's `share` of its memory.
fn map(name: &[u8; NAME_BYTES], len: usize, share: Share) -> Option<*mut u8> {
    // SAFETY: opening by a NUL-terminated name.
    let fd = unsafe { libc::shm_open(name.as_ptr().cast(), libc::O_RDWR, 0) };
    if fd < 0 {
        return None;
    }
    let reserve = len + HUGE_PAGE;
    // SAFETY: a new private reservation that nothing accesses.
    let start = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            reserve,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if start == libc::MAP_FAILED {
        // SAFETY: closing our descriptor.
        unsafe { libc::close(fd) };
        return None;
    }
    let start = start as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    // SAFETY: MAP_FIXED over part of the reservation above, which nothing else uses.
    let base = unsafe {
        libc::mmap(
            aligned as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            0,
        )
    };
    // Allocated now, by this process: a full /dev/shm fails here, and the pages lie on this
    // process's NUMA node.
    let filled = base != libc::MAP_FAILED && allocate(fd, share);
    // SAFETY: the mapping keeps the object; the descriptor is ours.
    unsafe { libc::close(fd) };
    if !filled {
        // SAFETY: the whole reservation (with the object's mapping in it, if made) is ours
        // and unused.
        unsafe { libc::munmap(start as *mut libc::c_void, reserve) };
        return None;
    }
    // SAFETY: the reservation's parts before and after the mapping (page-aligned, since the
    // reservation and the huge pages are), ours and unused.
    unsafe {
        if aligned > start {
            libc::munmap(start as *mut libc::c_void, aligned - start);
        }
        let end = aligned + len;
        if start + reserve > end {
            libc::munmap(end as *mut libc::c_void, start + reserve - end);
        }
    }
    Some(base.cast())
}

/// Allocates the memory of `share` of the object open as `fd`.
fn allocate(fd: libc::c_int, share: Share) -> bool {
    if share.bytes == 0 {
        return true;
    }
    let (Ok(offset), Ok(bytes)) = (
        libc::off_t::try_from(share.offset),
        libc::off_t::try_from(share.bytes),
    ) else {
        return false;
    };
    // SAFETY: a plain call on an open descriptor, within the object's size.
    unsafe { libc::posix_fallocate(fd, offset, bytes) == 0 }
}
