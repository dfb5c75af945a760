//! A shared-memory window over the group of an exchange: one region per rank, so that ranks on
//! one node read each other's messages in place instead of copying them through MPI.
//!
//! MPI's shared-memory transport moves a message with two copies (into a shared segment and
//! out again). When every rank of an exchange's group is on one node, a consumer that writes
//! its outgoing data into its own region of a [`GroupWindow`] and, after [`GroupWindow::sync`],
//! reads its peers' data straight from their regions, moves it with no copy at all: `fft-core`'s
//! fused slab sweep gathers its tiles from the peers' regions this way.

use crate::error::Result;
use crate::exchange::Exchange;
use crate::p2p::check;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::ffi::c_void;
use std::fmt;

/// An MPI-3 shared-memory window (`MPI_Win_allocate_shared`) over an exchange's group, with
/// one region of the same size per member, contiguous in group order: region `q` starts
/// `q · region_bytes` after region 0, in every member's address space, on a 64-byte boundary.
pub struct GroupWindow {
    win: ffi::MPI_Win,
    /// The window's own communicator (a duplicate of the group's), freed after the window.
    comm: SimpleCommunicator,
    /// Region 0 in this process's address space.
    base: *mut u8,
    region_bytes: usize,
    members: usize,
    me: usize,
}

// SAFETY: the window is used by the thread that owns the plan; the raw pointer is only
// dereferenced through the methods below, under the callers' synchronization.
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

impl Exchange {
    /// A shared-memory window over this exchange's group with a region of at least
    /// `region_bytes` per member (the largest request of any member), or `None` when the
    /// group is not all on one node, has one member, or MPI does not place the regions
    /// contiguously. Collective over the group; every member gets the same answer.
    pub fn group_window(&self, region_bytes: usize) -> Result<Option<GroupWindow>> {
        GroupWindow::new(self.group_comm(), region_bytes)
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
        let node = comm.split_shared(comm.rank());
        let local = i32::from(node.size() == comm.size() && members > 1);
        let mut all = 0i32;
        comm.all_reduce_into(&local, &mut all, SystemOperation::min());
        if all == 0 {
            return Ok(None);
        }
        let mut most = 0u64;
        comm.all_reduce_into(&(region_bytes as u64), &mut most, SystemOperation::max());
        // Whole cache lines per region, so that no two ranks write one line.
        let region_bytes = (most as usize).max(1).div_ceil(CACHE_LINE) * CACHE_LINE;
        let dup = comm.duplicate();
        // MPI may start the window off a cache line (OpenMPI: 264 bytes into a page), so the
        // last member asks for one line more and the regions start on the first boundary:
        // rows on cache-line boundaries let the column FFTs run on them in cache too.
        let me = comm.rank() as usize;
        let extra = if me + 1 == members { CACHE_LINE } else { 0 };
        let (win, _) = allocate_locked(&dup, region_bytes + extra, 1)?;
        let mut window = GroupWindow {
            win,
            comm: dup,
            base: std::ptr::null_mut(),
            region_bytes,
            members,
            me,
        };
        let mut contiguous = true;
        for q in 0..members {
            let base = shared_base(win, q)?;
            if q == 0 {
                window.base = base as *mut u8;
            } else if base as usize != window.base as usize + q * region_bytes {
                contiguous = false;
            }
        }
        // The segment is mapped on page boundaries, so the shift is the same in every
        // process; the layout depends on it, so that is checked all the same.
        let shift = (CACHE_LINE - window.base as usize % CACHE_LINE) % CACHE_LINE;
        // SAFETY: the window spans members · region_bytes + CACHE_LINE bytes from its base.
        window.base = unsafe { window.base.add(shift) };
        let (mut least, mut largest) = (0u64, 0u64);
        let shift = shift as u64;
        (window.comm).all_reduce_into(&shift, &mut least, SystemOperation::min());
        (window.comm).all_reduce_into(&shift, &mut largest, SystemOperation::max());
        contiguous &= least == largest;
        let local = i32::from(contiguous);
        window
            .comm
            .all_reduce_into(&local, &mut all, SystemOperation::min());
        Ok((all == 1).then_some(window))
    }

    /// [`GroupWindow::sync`] over several windows of one group at once (one barrier): every
    /// member's writes to any of them before the call are visible to every member after it.
    /// Collective over the group, which every window in `windows` must span alike.
    pub fn sync_all(windows: &[&GroupWindow]) -> Result<()> {
        let Some(first) = windows.first() else {
            return Ok(());
        };
        // SAFETY: plain calls on live windows and the first one's communicator.
        unsafe {
            for w in windows {
                check("MPI_Win_sync", ffi::MPI_Win_sync(w.win))?;
            }
            check("MPI_Barrier", ffi::MPI_Barrier(first.comm.as_raw()))?;
            for w in windows {
                check("MPI_Win_sync", ffi::MPI_Win_sync(w.win))?;
            }
        }
        Ok(())
    }
}

/// Allocates a shared-memory window of `bytes` on this rank (displacement unit `unit`) over
/// `comm` and locks it for passive-target access (no checks) until it is freed: the window
/// and this rank's base. Collective over `comm`.
pub(crate) fn allocate_locked(
    comm: &SimpleCommunicator,
    bytes: usize,
    unit: usize,
) -> Result<(ffi::MPI_Win, *mut c_void)> {
    let mut base: *mut c_void = std::ptr::null_mut();
    let mut win = unsafe { ffi::RSMPI_WIN_NULL };
    // SAFETY: plain MPI calls, collective over `comm` (the callers make every member call
    // with its own size in the same order); the window stays locked until it is freed.
    unsafe {
        check(
            "MPI_Win_allocate_shared",
            ffi::MPI_Win_allocate_shared(
                bytes as ffi::MPI_Aint,
                unit as i32,
                ffi::RSMPI_INFO_NULL,
                comm.as_raw(),
                &mut base as *mut *mut c_void as *mut c_void,
                &mut win,
            ),
        )?;
        check(
            "MPI_Win_lock_all",
            ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as i32, win),
        )?;
    }
    Ok((win, base))
}

/// Where member `rank`'s part of the shared window `win` starts in this process.
pub(crate) fn shared_base(win: ffi::MPI_Win, rank: usize) -> Result<*mut c_void> {
    let (mut size, mut unit) = (0 as ffi::MPI_Aint, 0i32);
    let mut base: *mut c_void = std::ptr::null_mut();
    // SAFETY: a query on a live shared window.
    unsafe {
        check(
            "MPI_Win_shared_query",
            ffi::MPI_Win_shared_query(
                win,
                rank as i32,
                &mut size,
                &mut unit,
                &mut base as *mut *mut c_void as *mut c_void,
            ),
        )?;
    }
    Ok(base)
}

impl GroupWindow {
    /// Bytes per region.
    pub fn region_bytes(&self) -> usize {
        self.region_bytes
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
        self.base as *mut T
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
        // SAFETY: region `me` lies inside the window (members · region_bytes bytes).
        unsafe { self.base::<T>().add(self.me * self.region_len::<T>()) }
    }

    /// Makes every member's writes to its region before this call visible to every member
    /// after it (`MPI_Win_sync`, barrier, `MPI_Win_sync`); collective over the group.
    pub fn sync(&self) -> Result<()> {
        // SAFETY: plain calls on the live window and its communicator.
        unsafe {
            check("MPI_Win_sync", ffi::MPI_Win_sync(self.win))?;
            check("MPI_Barrier", ffi::MPI_Barrier(self.comm.as_raw()))?;
            check("MPI_Win_sync", ffi::MPI_Win_sync(self.win))?;
        }
        Ok(())
    }
}

impl Drop for GroupWindow {
    fn drop(&mut self) {
        // SAFETY: the window was created and locked in `GroupWindow::new`; freeing is
        // collective, as is dropping the plan that holds it (every member holds one). Errors
        // are ignored: nothing can be done about them in a destructor.
        unsafe {
            ffi::MPI_Win_unlock_all(self.win);
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}
