//! MPI-3 shared-memory windows: ranks on one node read and write each other's memory in place
//! instead of copying through MPI.
//!
//! MPI's shared-memory transport moves a message with two copies (into a shared segment and
//! out again). [`SharedSegment`] is one locked `MPI_Win_allocate_shared` window; on it,
//!
//! * [`GroupWindow`] gives every member of an exchange's group one region of one size, in
//!   group order: a consumer writes its outgoing data into its own region and, after
//!   [`GroupWindow::sync`], reads its peers' data straight from theirs (`fft-core`'s fused slab
//!   sweep gathers its tiles this way);
//! * the shared schedule of [`crate::cyclic::run::Redistribution`] packs each message straight
//!   into its receiver's segment.
//!
//! A [`GroupWindow`] whose regions are large lies instead on huge pages where the system
//! allows (`super::huge`): strided sweeps over a peer's block then walk no page tables.

use super::{check_mpi, SendPtr};
use crate::error::Result;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::ffi::c_void;
use std::fmt;

/// A shared-memory window of a communicator, allocated and locked for passive-target access
/// (no checks) until it is dropped; each member owns one segment of its own size.
pub struct SharedSegment {
    win: ffi::MPI_Win,
    /// This rank's segment.
    own: SendPtr<u8>,
}

impl fmt::Debug for SharedSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedSegment").finish_non_exhaustive()
    }
}

impl SharedSegment {
    /// Allocates `bytes` on this rank (displacement unit `unit`) over `comm`, whose members
    /// must all be on one node. Collective over `comm`: every member calls with its own size,
    /// in the same order.
    pub fn new(comm: &SimpleCommunicator, bytes: usize, unit: usize) -> Result<Self> {
        let mut base: *mut c_void = std::ptr::null_mut();
        // SAFETY: reading a constant the MPI library initializes at load time.
        let mut win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: plain collective calls over `comm` writing `base` and `win`.
        check_mpi("MPI_Win_allocate_shared", unsafe {
            ffi::MPI_Win_allocate_shared(
                bytes as ffi::MPI_Aint,
                unit as i32,
                ffi::RSMPI_INFO_NULL,
                comm.as_raw(),
                &mut base as *mut *mut c_void as *mut c_void,
                &mut win,
            )
        })?;
        let segment = Self {
            win,
            own: SendPtr::new(base as *mut u8),
        };
        // SAFETY: a live window; it stays locked until `drop` unlocks and frees it.
        check_mpi("MPI_Win_lock_all", unsafe {
            ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as i32, win)
        })?;
        Ok(segment)
    }

    /// Where this rank's segment starts.
    pub fn own(&self) -> *mut u8 {
        self.own.get()
    }

    /// Where member `rank`'s segment starts in this process.
    pub fn base_of(&self, rank: usize) -> Result<*mut u8> {
        let (mut size, mut unit) = (0 as ffi::MPI_Aint, 0i32);
        let mut base: *mut c_void = std::ptr::null_mut();
        // SAFETY: a query on a live shared window, writing the three locals.
        check_mpi("MPI_Win_shared_query", unsafe {
            ffi::MPI_Win_shared_query(
                self.win,
                rank as i32,
                &mut size,
                &mut unit,
                &mut base as *mut *mut c_void as *mut c_void,
            )
        })?;
        Ok(base as *mut u8)
    }

    /// Makes this process's stores to the window visible and the others' visible here
    /// (`MPI_Win_sync`); pair it with a barrier for a full synchronization.
    pub fn win_sync(&self) -> Result<()> {
        // SAFETY: a plain call on the live window.
        check_mpi("MPI_Win_sync", unsafe { ffi::MPI_Win_sync(self.win) })
    }

    /// `MPI_Win_sync`, a barrier on `comm`, `MPI_Win_sync`: every member's stores before the
    /// call are visible to every member after it. Collective over `comm`.
    pub fn sync(&self, comm: &SimpleCommunicator) -> Result<()> {
        Self::sync_many(std::iter::once(self), comm)
    }

    /// [`SharedSegment::sync`] over several windows of one communicator with one barrier.
    pub fn sync_many<'a, I>(segments: I, comm: &SimpleCommunicator) -> Result<()>
    where
        I: IntoIterator<Item = &'a SharedSegment>,
        I::IntoIter: Clone,
    {
        // An iterator, not a slice: callers pass views of their windows without collecting
        // them, so a sync allocates nothing (it runs on every transform).
        let segments = segments.into_iter();
        for s in segments.clone() {
            s.win_sync()?;
        }
        // SAFETY: a plain collective call on a live communicator.
        check_mpi("MPI_Barrier", unsafe { ffi::MPI_Barrier(comm.as_raw()) })?;
        for s in segments {
            s.win_sync()?;
        }
        Ok(())
    }
}

impl Drop for SharedSegment {
    fn drop(&mut self) {
        // SAFETY: the window was created and locked in `new`; freeing is collective, as is
        // dropping the object that holds it (every member holds one). Errors are ignored:
        // nothing can be done about them in a destructor.
        unsafe {
            ffi::MPI_Win_unlock_all(self.win);
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}

/// Whether every member of `comm` is on one node (the same answer on every member).
/// Collective over `comm`.
pub fn on_one_node<C: Communicator>(comm: &C) -> bool {
    let node = comm.split_shared(comm.rank());
    let local = i32::from(node.size() == comm.size());
    let mut all = 0i32;
    comm.all_reduce_into(&local, &mut all, SystemOperation::min());
    all == 1
}

/// An MPI-3 shared-memory window over an exchange's group, with one region of the same size
/// per member, contiguous in group order: region `q` starts `q · region_bytes` after region 0,
/// in every member's address space, on a 64-byte boundary.
pub struct GroupWindow {
    memory: Memory,
    /// The window's own communicator (a duplicate of the group's). Declared after the
    /// segment, so that the window is freed first.
    comm: SimpleCommunicator,
    /// Region 0 in this process's address space.
    base: SendPtr<u8>,
    region_bytes: usize,
    members: usize,
    me: usize,
}

// SAFETY: the window and its communicator are used by the one thread that owns the plan
// holding them (MPI handles carry no thread affinity); the regions are reached only through
// `unsafe` code of the users, under their synchronization.
unsafe impl Send for GroupWindow {}

impl fmt::Debug for GroupWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupWindow")
            .field("members", &self.members)
            .field("me", &self.me)
            .field("region_bytes", &self.region_bytes)
            .finish()
    }
}

/// Bytes of a cache line: the regions start and end on its boundaries.
const CACHE_LINE: usize = 64;

/// Region bytes from which a [`GroupWindow`] asks for memory on huge pages: smaller windows
/// (a fused step's pieces) stay in cache, where pages do not matter.
const HUGE_REGION: usize = 2 << 20;

/// What holds a [`GroupWindow`]'s regions.
enum Memory {
    /// An MPI window (one segment per member).
    Mpi(SharedSegment),
    /// One mapping on 2 MiB boundaries, synchronized by fences and the group's barrier.
    #[cfg(target_os = "linux")]
    Huge(super::huge::HugeSegment),
}

impl Memory {
    /// Makes this process's stores visible to the others and theirs visible here; pair it
    /// with a barrier for a full synchronization.
    fn fence(&self) -> Result<()> {
        match self {
            Memory::Mpi(segment) => segment.win_sync(),
            #[cfg(target_os = "linux")]
            Memory::Huge(segment) => {
                segment.fence();
                Ok(())
            }
        }
    }
}

impl GroupWindow {
    /// A shared-memory window over `comm` with a region of at least `region_bytes` per member
    /// (the largest request of any member, rounded up to whole cache lines; region `q` belongs
    /// to the member of rank `q` in `comm`), or `None` when `comm` is not all on one node, has
    /// one member, or MPI does not place the regions contiguously. The regions start zeroed.
    /// Collective over `comm`; every member gets the same answer.
    pub fn new<C: Communicator>(comm: &C, region_bytes: usize) -> Result<Option<GroupWindow>> {
        let members = comm.size() as usize;
        if !on_one_node(comm) || members < 2 {
            return Ok(None);
        }
        let mut most = 0u64;
        comm.all_reduce_into(&(region_bytes as u64), &mut most, SystemOperation::max());
        // Whole cache lines per region, so that no two ranks write one line.
        let region_bytes = (most as usize).max(1).div_ceil(CACHE_LINE) * CACHE_LINE;
        let dup = comm.duplicate();
        let me = comm.rank() as usize;
        #[cfg(target_os = "linux")]
        if region_bytes >= HUGE_REGION {
            if let Some(segment) = super::huge::HugeSegment::new(&dup, members * region_bytes)? {
                return Ok(Some(GroupWindow {
                    // On a 2 MiB boundary, so on a cache line.
                    base: SendPtr::new(segment.base()),
                    memory: Memory::Huge(segment),
                    comm: dup,
                    region_bytes,
                    members,
                    me,
                }));
            }
        }
        // MPI may start the window off a cache line (OpenMPI: 264 bytes into a page), so the
        // last member asks for one line more and the regions start on the first boundary:
        // rows on cache-line boundaries let the column FFTs run on them in cache too.
        let extra = if me + 1 == members { CACHE_LINE } else { 0 };
        let segment = SharedSegment::new(&dup, region_bytes + extra, 1)?;
        let first = segment.base_of(0)?;
        let mut contiguous = true;
        for q in 1..members {
            contiguous &= segment.base_of(q)? as usize == first as usize + q * region_bytes;
        }
        // The segment is mapped on page boundaries, so the shift is the same in every
        // process; the layout depends on it, so that is checked all the same.
        let shift = (CACHE_LINE - first as usize % CACHE_LINE) % CACHE_LINE;
        let (mut least, mut largest) = (0u64, 0u64);
        dup.all_reduce_into(&(shift as u64), &mut least, SystemOperation::min());
        dup.all_reduce_into(&(shift as u64), &mut largest, SystemOperation::max());
        contiguous &= least == largest;
        let mut all = 0i32;
        dup.all_reduce_into(&i32::from(contiguous), &mut all, SystemOperation::min());
        Ok((all == 1).then(|| GroupWindow {
            memory: Memory::Mpi(segment),
            comm: dup,
            // In bounds: the window spans members · region_bytes + CACHE_LINE bytes.
            base: SendPtr::new(first.wrapping_add(shift)),
            region_bytes,
            members,
            me,
        }))
    }

    /// [`GroupWindow::sync`] over several windows of one group at once (one barrier): every
    /// member's writes to any of them before the call are visible to every member after it.
    /// Collective over the group, which every window in `windows` must span alike.
    pub fn sync_all(windows: &[&GroupWindow]) -> Result<()> {
        let Some(first) = windows.first() else {
            return Ok(());
        };
        for w in windows {
            w.memory.fence()?;
        }
        // SAFETY: a plain collective call on a live communicator.
        check_mpi("MPI_Barrier", unsafe {
            ffi::MPI_Barrier(first.comm.as_raw())
        })?;
        for w in windows {
            w.memory.fence()?;
        }
        Ok(())
    }

    /// Bytes per region.
    pub fn region_bytes(&self) -> usize {
        self.region_bytes
    }

    /// Whether the regions lie in one mapping on 2 MiB boundaries, made for huge pages
    /// (regions of 2 MiB or more where POSIX shared memory works), rather than in an MPI
    /// window.
    pub fn on_huge_boundaries(&self) -> bool {
        match self.memory {
            Memory::Mpi(_) => false,
            #[cfg(target_os = "linux")]
            Memory::Huge(_) => true,
        }
    }

    /// Members of the group (regions).
    pub fn members(&self) -> usize {
        self.members
    }

    /// This rank's index in the group (its region).
    pub fn me(&self) -> usize {
        self.me
    }

    /// Elements of type `T` per region.
    pub fn region_len<T>(&self) -> usize {
        self.region_bytes / std::mem::size_of::<T>()
    }

    /// The start of region 0, as elements of `T` (`T`'s alignment must divide 64).
    pub fn base<T>(&self) -> *mut T {
        debug_assert_eq!(64 % std::mem::align_of::<T>(), 0);
        self.base.get() as *mut T
    }

    /// Every region, as one slice of `T`.
    ///
    /// # Safety
    /// No member writes any of it while the slice is in use (between two
    /// [`GroupWindow::sync`]s in which only reads happen).
    pub unsafe fn all<T>(&self) -> &[T] {
        std::slice::from_raw_parts(self.base::<T>(), self.members * self.region_len::<T>())
    }

    /// The start of this rank's region, as elements of `T` ([`GroupWindow::region_len`] of
    /// them). Write to it only while no other member reads it (between two
    /// [`GroupWindow::sync`]s after which the peers read).
    pub fn own<T>(&self) -> *mut T {
        // In bounds: region `me` lies inside the window (members · region_bytes bytes).
        self.base::<T>()
            .wrapping_add(self.me * self.region_len::<T>())
    }

    /// Makes every member's writes to its region before this call visible to every member
    /// after it (a fence or `MPI_Win_sync`, a barrier, again); collective over the group.
    pub fn sync(&self) -> Result<()> {
        Self::sync_all(&[self])
    }
}
