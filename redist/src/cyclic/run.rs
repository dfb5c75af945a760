//! Executing a [`RedistPlan`] over MPI with a choice of schedules (Dongarra et al. §3.3).
//!
//! A [`Redistribution`] is built once (collective: it duplicates the communicator) and owns
//! this rank's copy maps, the MPI count arrays and its request arrays, so
//! [`Redistribution::execute`] allocates nothing. Every schedule gives identical results:
//!
//! * [`Schedule::Alltoallv`]: pack everything, one `MPI_Alltoallv`, unpack everything;
//! * [`Schedule::Caterpillar`]: Dongarra et al.'s synchronous "rolling caterpillar": at step `d`
//!   process `i` exchanges with `(P − i − d) mod P` (a process paired with itself has only
//!   its own part, which is always copied directly), unpacking after each step;
//! * [`Schedule::Async`]: post every receive, then pack and send each message in turn, and
//!   unpack each incoming message as soon as `MPI_Waitany` reports it;
//! * [`Schedule::Pipelined`]: the caterpillar with each message cut into packets of
//!   [`Redistribution::packet_len`] elements; the next packet is packed while earlier ones
//!   travel, and each packet is unpacked as it arrives;
//! * [`Schedule::Shared`]: when every rank is on one node, each rank packs its messages
//!   straight into the receivers' buffers in an MPI-3 shared-memory window
//!   (`MPI_Win_allocate_shared`), a barrier, and each rank unpacks its own buffer: two copies
//!   of every element that changes rank instead of four (pack, MPI's copy into and out of its
//!   shared-memory transport, unpack). On several nodes it runs as `Alltoallv`. With
//!   [`Redistribution::with_double_buffering`] the window has two receive slots used in turn,
//!   and the barrier before packing (nobody still reads its buffer) is not needed: one
//!   synchronization per call instead of two, for twice the window's memory.
//!
//! A double-buffered shared schedule can also run in halves around a synchronization the
//! caller makes ([`Redistribution::pack_shared`], [`Redistribution::shared_fence`],
//! [`Redistribution::unpack_shared`]), e.g. an `MPI_Allreduce` that also tells every rank
//! whether to go on: a call then costs one collective operation in all.
//!
//! Messages longer than MPI's `int` counts (or than [`Redistribution::with_max_count`])
//! travel in chunks, with the chunking of [`crate::exchange`]: when the largest local array
//! of any rank exceeds the limit (a decision from the global plan, the same on every rank),
//! `Alltoallv` runs as the caterpillar's pairwise steps, the caterpillar and async schedules
//! send each message as consecutive chunks, and the pipelined schedule's packets are at most
//! the limit.

use super::copy::{RankRedist, Transfer};
use super::plan::RedistPlan;
use crate::comm::{check_buffers, FourBuffers};
use crate::element::Element;
use crate::error::{RedistError, Result};
use crate::exchange::StageTimes;
use crate::transport::p2p::{irecv, isend, wait_all, wait_any};
use crate::transport::window::{on_one_node, SharedSegment};
use crate::transport::{check_mpi, SendPtr};
use crate::transport::{chunk_count, message_chunks, null_request, PeerCounts, MPI_MAX_COUNT};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::fmt;
use std::time::Instant;

crate::names::named_enum! {
    /// How the messages of a redistribution travel. See the module documentation.
    ///
    /// ```
    /// use redist::cyclic::run::Schedule;
    /// assert_eq!("caterpillar".parse::<Schedule>().unwrap(), Schedule::Caterpillar);
    /// assert!("telepathy".parse::<Schedule>().is_err());
    /// ```
    #[derive(Default)]
    pub enum Schedule ("schedule") {
        /// One `MPI_Alltoallv`.
        #[default]
        Alltoallv = "alltoallv" | "alltoall",
        /// Synchronous caterpillar pairs (Dongarra et al., Fig. 2).
        Caterpillar = "caterpillar" | "sync" | "synchronous",
        /// Receives posted first, unpack in arrival order (`MPI_Waitany`).
        Async = "async" | "asynchronous",
        /// Caterpillar in fixed-size packets, pack and unpack overlapped with communication.
        Pipelined = "pipelined" | "pipeline",
        /// Pack straight into the receivers' buffers in a shared-memory window (one node only;
        /// otherwise `Alltoallv`).
        Shared = "shared" | "shm",
    }
}

/// Default packet length of the pipelined schedule, in elements (64 Ki elements).
pub const DEFAULT_PACKET: usize = 1 << 16;

const TAG: i32 = 71;

/// A redistribution ready to run on this rank. See the module documentation.
///
/// ```no_run
/// use redist::dist::DistArray;
/// use redist::cyclic::plan::RedistPlan;
/// use redist::cyclic::run::{Redistribution, Schedule};
/// use redist::StageTimes;
/// use mpi::topology::Communicator;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let from = DistArray::parse_spec(&format!("grid={p},dist=cyclic(36),*"), &[1000, 1000]).unwrap();
/// let to = DistArray::parse_spec(&format!("grid=1x{p},dist=cyclic(128)"), &[1000, 1000]).unwrap();
/// let plan = RedistPlan::new(&from, &to, p).unwrap();
/// let mut r = Redistribution::new(&world, &plan, Schedule::Async).unwrap();
/// let src = vec![0.0f64; r.src_len()];
/// let mut dst = vec![0.0; r.dst_len()];
/// let (mut send, mut recv) = (vec![0.0; r.send_len()], vec![0.0; r.recv_len()]);
/// r.execute(&src, &mut dst, &mut send, &mut recv, &mut StageTimes::default()).unwrap();
/// ```
pub struct Redistribution {
    part: RankRedist,
    schedule: Schedule,
    comm: SimpleCommunicator,
    size: usize,
    packet: usize,
    /// Per peer: what is sent and received (zero for the own part).
    counts: PeerCounts,
    /// Largest local array of any rank, either side (bounds every count and offset).
    biggest: usize,
    /// Largest element count of one MPI message.
    max_count: usize,
    /// Request slots of one chunked pairwise step.
    step_requests: Vec<ffi::MPI_Request>,
    /// Async schedule: chunks of each receive still in flight.
    chunks_left: Vec<usize>,
    /// Index into `part.sends` / `part.recvs` per peer (usize::MAX = none).
    send_of_peer: Vec<usize>,
    recv_of_peer: Vec<usize>,
    requests: Vec<ffi::MPI_Request>,
    send_requests: Vec<ffi::MPI_Request>,
    /// Which transfer (or packet) each receive request belongs to.
    request_owner: Vec<usize>,
    /// The shared-memory schedule's state (`None`: not that schedule, or not on one node).
    shared: Option<SharedWindow>,
}

/// The receive buffers of every rank in one MPI-3 shared-memory window: per rank `slots`
/// buffers of its receive length in elements of the window's element size, one after the
/// other, used in turn. A call with smaller elements uses the start of each slot: the slots
/// stay where they are whatever the element type, so a call never writes the slot the call
/// before it (of another type) may still be reading.
struct SharedWindow {
    /// Where this rank's message to the peer of `part.sends[i]` starts in that peer's receive
    /// buffer, in elements.
    remote_offset: Vec<usize>,
    /// The receive length of the peer of `part.sends[i]` (one slot), in elements.
    peer_recv_len: Vec<usize>,
    /// Receive buffers per rank: 1, or 2 (double buffering).
    slots: usize,
    /// The slot the next call writes and reads (the same on every rank).
    next: usize,
    /// The window, once allocated (at the first call, when the element size is known).
    segment: Option<SharedSegment>,
    /// Element size the window was allocated for (it serves any size up to this one).
    elem_size: usize,
    /// Per send, the start of the receiver's first buffer.
    peer_bases: Vec<SendPtr<u8>>,
    /// Per slot and send (`slot · sends + i`), the message's start in the receiver's buffer,
    /// for elements of `targets_elem` bytes.
    targets: Vec<SendPtr<u8>>,
    targets_elem: usize,
}

impl SharedWindow {
    fn set_targets(&mut self, elem_size: usize) {
        let sends = self.peer_bases.len();
        for slot in 0..self.slots {
            for i in 0..sends {
                // Slots at the window's element size, messages at the call's.
                let at = slot * self.peer_recv_len[i] * self.elem_size
                    + self.remote_offset[i] * elem_size;
                // In bounds: offset + message <= the peer's recv_len elements of at most
                // `self.elem_size` bytes, in a segment of `slots` such buffers.
                self.targets[slot * sends + i] =
                    SendPtr::new(self.peer_bases[i].get().wrapping_add(at));
            }
        }
        self.targets_elem = elem_size;
    }

    /// The targets of slot `next`.
    fn next_targets(&self) -> &[SendPtr<u8>] {
        let sends = self.peer_bases.len();
        &self.targets[self.next * sends..(self.next + 1) * sends]
    }
}

impl fmt::Debug for Redistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redistribution")
            .field("rank", &self.part.rank)
            .field("schedule", &self.schedule)
            .field("sends", &self.part.sends.len())
            .field("recvs", &self.part.recvs.len())
            .finish()
    }
}

/// Where each of `part`'s messages starts in its receiver's receive buffer, which holds the
/// messages from the other ranks by increasing sender ([`RedistPlan::for_rank`]).
fn remote_offsets(plan: &RedistPlan, part: &RankRedist) -> Vec<usize> {
    let me = part.rank;
    part.sends
        .iter()
        .map(|t| {
            (0..me)
                .filter(|&s| s != t.peer)
                .filter_map(|s| plan.message(s, t.peer).map(|m| m.len()))
                .sum()
        })
        .collect()
}

/// The receive length of each of `part`'s receivers (what the other ranks send it).
fn peer_recv_lens(plan: &RedistPlan, part: &RankRedist) -> Vec<usize> {
    part.sends
        .iter()
        .map(|t| {
            (0..plan.ranks())
                .filter(|&s| s != t.peer)
                .filter_map(|s| plan.message(s, t.peer).map(|m| m.len()))
                .sum()
        })
        .collect()
}

/// The shared schedule's layout when every rank of `comm` is on one node (agreed over all
/// ranks), else `None`: where each of this rank's messages lands in its receiver's buffer
/// (receivers store messages by increasing sender, as [`RedistPlan::for_rank`] does).
fn shared_layout(
    comm: &SimpleCommunicator,
    plan: &RedistPlan,
    part: &RankRedist,
) -> Option<SharedWindow> {
    on_one_node(comm).then(|| SharedWindow {
        remote_offset: remote_offsets(plan, part),
        peer_recv_len: peer_recv_lens(plan, part),
        slots: 1,
        next: 0,
        segment: None,
        elem_size: 0,
        peer_bases: vec![SendPtr::null(); part.sends.len()],
        targets: Vec::new(),
        targets_elem: 0,
    })
}

impl Redistribution {
    /// Prepares this rank's part of `plan` on `comm` (whose size must be `plan.ranks()`);
    /// collective (duplicates `comm`). Checks use global arguments only.
    pub fn new<C: Communicator>(comm: &C, plan: &RedistPlan, schedule: Schedule) -> Result<Self> {
        let size = comm.size() as usize;
        if size != plan.ranks() {
            return Err(RedistError::DistMismatch {
                what: format!(
                    "the plan is for {} processes but the communicator has {size}",
                    plan.ranks()
                ),
            });
        }
        // Every rank checks the largest local array of either side, so all agree.
        // Elements held, not the padded lengths: leading dimensions are each rank's own,
        // and every count and offset is at most the elements a rank holds.
        let held = |a: &crate::dist::DistArray, r| a.local_shape(r).iter().product::<usize>();
        let biggest = (0..size)
            .map(|r| held(plan.from(), r).max(held(plan.to(), r)))
            .max()
            .unwrap_or(0);
        let rank = comm.rank() as usize;
        plan.from().check_lead(rank)?;
        plan.to().check_lead(rank)?;
        let part = plan.for_rank(rank);
        let (mut send_counts, mut send_displs) = (vec![0; size], vec![0; size]);
        let (mut recv_counts, mut recv_displs) = (vec![0; size], vec![0; size]);
        let mut send_of_peer = vec![usize::MAX; size];
        let mut recv_of_peer = vec![usize::MAX; size];
        for (i, t) in part.sends.iter().enumerate() {
            send_counts[t.peer] = t.map.len();
            send_displs[t.peer] = t.offset;
            send_of_peer[t.peer] = i;
        }
        for (i, t) in part.recvs.iter().enumerate() {
            recv_counts[t.peer] = t.map.len();
            recv_displs[t.peer] = t.offset;
            recv_of_peer[t.peer] = i;
        }
        let comm = comm.duplicate();
        let shared = if schedule == Schedule::Shared {
            shared_layout(&comm, plan, &part)
        } else {
            None
        };
        let mut this = Self {
            part,
            schedule,
            comm,
            size,
            packet: DEFAULT_PACKET,
            counts: PeerCounts::new(send_counts, send_displs, recv_counts, recv_displs),
            biggest,
            max_count: MPI_MAX_COUNT,
            step_requests: Vec::new(),
            chunks_left: Vec::new(),
            send_of_peer,
            recv_of_peer,
            requests: Vec::new(),
            send_requests: Vec::new(),
            request_owner: Vec::new(),
            shared,
        };
        this.size_requests();
        Ok(this)
    }

    /// Gives the shared schedule two receive buffers per rank, used in turn: a call then
    /// needs one synchronization instead of two (nobody can still be reading the buffer a call
    /// writes), and the halves [`Redistribution::pack_shared`] and
    /// [`Redistribution::unpack_shared`] become available. Twice the window's memory; no
    /// effect on the other schedules or when the ranks are not on one node. Collective when
    /// the window exists already (it is made anew); otherwise it is made at the first call.
    pub fn with_double_buffering(mut self) -> Self {
        if let Some(sh) = self.shared.as_mut() {
            sh.segment = None;
            sh.elem_size = 0;
            sh.slots = 2;
            sh.next = 0;
        }
        self
    }

    /// Whether the shared schedule is double-buffered and its window is ready for elements of
    /// `T`: then [`Redistribution::pack_shared`] and [`Redistribution::unpack_shared`] make no
    /// collective call (the same answer on every rank; see
    /// [`Redistribution::prepare_shared`]).
    pub fn split_ready<T: Element>(&self) -> bool {
        self.shared.as_ref().is_some_and(|sh| {
            sh.slots == 2 && sh.segment.is_some() && sh.elem_size >= std::mem::size_of::<T>()
        })
    }

    /// Makes the shared schedule's window ready for elements of `T` (allocated at the first
    /// call otherwise). Collective; a no-op for the other schedules.
    pub fn prepare_shared<T: Element>(&mut self) -> Result<()> {
        if self.shared.is_some() {
            self.shared_window(std::mem::size_of::<T>())?;
        }
        Ok(())
    }

    /// Sets the packet length (elements, at least 1) of the pipelined schedule.
    pub fn with_packet_len(mut self, elements: usize) -> Self {
        self.packet = elements.max(1);
        self.size_requests();
        self
    }

    /// Sends messages in chunks of at most `max_count` elements (clamped to
    /// `1..=i32::MAX`; the default is `i32::MAX`, MPI's count limit) whenever the largest local
    /// array of any rank exceeds it. A small limit exercises that path with small arrays.
    pub fn with_max_count(mut self, max_count: usize) -> Self {
        self.max_count = max_count.clamp(1, MPI_MAX_COUNT);
        self.size_requests();
        self
    }

    /// Whether messages travel in chunks of at most [`Redistribution::max_count`] elements
    /// (then `Alltoallv` runs as pairwise steps): some rank's local array exceeds the limit.
    pub fn is_chunked(&self) -> bool {
        self.biggest > self.max_count && self.size > 1
    }

    /// The largest element count of one MPI message.
    pub fn max_count(&self) -> usize {
        self.max_count
    }

    /// The pipelined schedule's packet length, at most the message limit.
    fn packet(&self) -> usize {
        self.packet.min(self.max_count)
    }

    fn size_requests(&mut self) {
        let (packet, limit) = (self.packet(), self.max_count);
        let most = |ts: &[Transfer], per: usize| {
            ts.iter()
                .map(|t| chunk_count(t.map.len(), per))
                .max()
                .unwrap_or(0)
        };
        let total =
            |ts: &[Transfer]| -> usize { ts.iter().map(|t| chunk_count(t.map.len(), limit)).sum() };
        let (part_r, part_s) = (&self.part.recvs, &self.part.sends);
        let recvs = total(part_r).max(most(part_r, packet));
        let sends = total(part_s).max(most(part_s, packet));
        self.requests = vec![null_request(); recvs];
        self.request_owner = vec![0; recvs];
        self.send_requests = vec![null_request(); sends];
        self.step_requests = Vec::with_capacity(most(part_r, limit) + most(part_s, limit));
        self.chunks_left = vec![0; part_r.len()];
    }

    /// The schedule in use.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// Whether [`Schedule::Shared`] packs into a shared-memory window (every rank on one
    /// node); `false` for other schedules and when it runs as `Alltoallv`.
    pub fn uses_shared_memory(&self) -> bool {
        self.shared.is_some()
    }

    /// The pipelined schedule's packet length in elements (at most
    /// [`Redistribution::max_count`]).
    pub fn packet_len(&self) -> usize {
        self.packet()
    }

    /// Elements of this rank's source array.
    pub fn src_len(&self) -> usize {
        self.part.src_len
    }

    /// Elements of this rank's destination array.
    pub fn dst_len(&self) -> usize {
        self.part.dst_len
    }

    /// Minimum send-buffer length (0 when [`Schedule::Shared`] uses its window: the
    /// messages are packed straight into it).
    pub fn send_len(&self) -> usize {
        if self.shared.is_some() {
            0
        } else {
            self.part.send_len
        }
    }

    /// Minimum receive-buffer length (0 when [`Schedule::Shared`] uses its window, which holds
    /// the received messages).
    pub fn recv_len(&self) -> usize {
        if self.shared.is_some() {
            0
        } else {
            self.part.recv_len
        }
    }

    /// This rank's part of the plan.
    pub fn rank_part(&self) -> &RankRedist {
        &self.part
    }

    /// Redistributes `src` (this rank's source array) into `dst` through the caller's message
    /// buffers (at least [`Redistribution::src_len`], [`Redistribution::dst_len`],
    /// [`Redistribution::send_len`] and [`Redistribution::recv_len`] long), adding stage
    /// times to `times` (for the overlapped schedules, time spent inside MPI calls counts as
    /// communication and the rest as pack or unpack). Collective: the ranks first agree on
    /// the buffer lengths (one small `MPI_Allreduce`), so a short buffer on any rank is the
    /// same [`RedistError::CallBufferLength`] on every rank, before anything moves.
    pub fn execute<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        self.checked(true, (src, dst, send, recv), times)
    }

    /// [`Redistribution::execute`] without the agreement, for callers whose buffers are sized
    /// from this redistribution on every rank (the ScaLAPACK drop-in's kept plans): no MPI
    /// call beyond the schedule's own. The lengths are checked on this rank alone
    /// ([`RedistError::BufferLength`]), so a wrong one is a bug of the caller that can leave
    /// the other ranks waiting.
    pub fn execute_sized<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        self.checked(false, (src, dst, send, recv), times)
    }

    fn alltoallv<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let t0 = Instant::now();
        self.part.pack_all(src, send);
        let t1 = Instant::now();
        if self.is_chunked() {
            // MPI_Alltoallv takes int counts: the caterpillar's pairwise steps, chunked.
            for d in 0..self.size {
                self.step(d, send, recv)?;
            }
        } else if self.size > 1 {
            self.counts.alltoallv(self.comm.as_raw(), send, recv)?;
        }
        let t2 = Instant::now();
        self.part.unpack_all_and_own(src, recv, dst);
        times.pack += (t1 - t0).as_secs_f64();
        times.comm += (t2 - t1).as_secs_f64();
        times.unpack += t2.elapsed().as_secs_f64();
        Ok(())
    }

    /// Allocates the shared window for elements of `elem_size` bytes (collective; at the
    /// first call, or when a call uses a larger element type than the window holds).
    fn shared_window(&mut self, elem_size: usize) -> Result<()> {
        let sh = self.shared.as_mut().expect("the shared schedule");
        if sh.segment.is_some() && sh.elem_size >= elem_size {
            if sh.targets_elem != elem_size {
                sh.set_targets(elem_size);
            }
            return Ok(());
        }
        // Free the smaller window first (collective, like the allocation).
        sh.segment = None;
        let bytes = (sh.slots * self.part.recv_len * elem_size).max(1);
        // Collective over this rank's duplicated communicator: every rank runs the same
        // schedule and the same element type.
        let segment = SharedSegment::new(&self.comm, bytes, elem_size)?;
        for (i, t) in self.part.sends.iter().enumerate() {
            sh.peer_bases[i] = SendPtr::new(segment.base_of(t.peer)?);
        }
        sh.segment = Some(segment);
        sh.elem_size = elem_size;
        sh.targets = vec![SendPtr::null(); sh.slots * self.part.sends.len()];
        sh.set_targets(elem_size);
        Ok(())
    }

    /// Packs this rank's messages into the receivers' buffers of the next slot.
    ///
    /// # Safety
    /// No rank reads that slot meanwhile (see [`Redistribution::pack_shared`]).
    unsafe fn pack_next<T: Element>(&mut self, src: &[T]) {
        let sh = self.shared.as_mut().expect("the shared schedule");
        let size = std::mem::size_of::<T>();
        if sh.targets_elem != size {
            sh.set_targets(size);
        }
        let targets = sh.next_targets();
        // SAFETY: `targets` hold this rank's disjoint message regions in the receivers'
        // buffers of the next slot, each `map.len()` elements of `T` (the window holds at
        // least `slots · recv_len` elements of `T` per rank); the caller guarantees that
        // nobody reads them meanwhile.
        unsafe {
            let targets =
                std::slice::from_raw_parts(targets.as_ptr() as *const *mut T, targets.len());
            self.part.pack_all_to(src, targets);
        }
    }

    /// Unpacks this rank's buffer of the next slot (and copies its own part), then moves on
    /// to the other slot.
    ///
    /// # Safety
    /// Every message of the slot has been written and made visible, and nobody writes the
    /// slot meanwhile.
    unsafe fn unpack_next<T: Element>(&mut self, src: &[T], dst: &mut [T]) {
        let sh = self.shared.as_mut().expect("the shared schedule");
        let segment = sh.segment.as_ref().expect("allocated before packing");
        let start = sh.next * self.part.recv_len * sh.elem_size;
        // SAFETY: this rank's segment holds `slots` buffers of `recv_len` elements of
        // `sh.elem_size ≥ size_of::<T>()` bytes (a power of two, so the slot's start is
        // aligned for `T`); the caller guarantees the slot's contents are complete and stable.
        let recv = unsafe {
            std::slice::from_raw_parts(segment.own().add(start) as *const T, self.part.recv_len)
        };
        self.part.unpack_all_and_own(src, recv, dst);
        sh.next = (sh.next + 1) % sh.slots;
    }

    /// The first half of a double-buffered shared call: packs this rank's messages from `src`
    /// straight into the receivers' buffers, with no MPI call. Then every rank that packed
    /// calls [`Redistribution::shared_fence`], all ranks synchronize (any collective
    /// operation on this redistribution's ranks that none leaves before all have entered it:
    /// a barrier, an allreduce), and every rank calls [`Redistribution::shared_fence`] and
    /// [`Redistribution::unpack_shared`]. The ranks may instead all abandon the call after
    /// packing (none unpacks): the next call overwrites what was packed.
    ///
    /// Errors: not [`Redistribution::split_ready`] for `T`, or `src` too short.
    ///
    /// # Safety
    /// Every rank uses this redistribution only in that order: no rank packs while another
    /// is still unpacking the call before the previous one (guaranteed by the synchronization
    /// of every call), and either every rank unpacks a call or none does.
    pub unsafe fn pack_shared<T: Element>(&mut self, src: &[T]) -> Result<()> {
        self.check_split::<T>()?;
        check_buffers(&[("source", self.part.src_len, src.len())])?;
        // SAFETY: the caller's protocol: nobody reads the next slot meanwhile.
        unsafe { self.pack_next(src) };
        Ok(())
    }

    /// The second half of a double-buffered shared call (see
    /// [`Redistribution::pack_shared`]): unpacks what the ranks packed for this rank, and
    /// copies its own part from `src`, into `dst`.
    ///
    /// # Safety
    /// As [`Redistribution::pack_shared`]: every rank packed this call, fenced and
    /// synchronized, and this rank fenced after the synchronization.
    pub unsafe fn unpack_shared<T: Element>(&mut self, src: &[T], dst: &mut [T]) -> Result<()> {
        self.check_split::<T>()?;
        check_buffers(&[
            ("source", self.part.src_len, src.len()),
            ("destination", self.part.dst_len, dst.len()),
        ])?;
        // SAFETY: the caller's protocol: the slot is complete, visible and stable.
        unsafe { self.unpack_next(src, dst) };
        Ok(())
    }

    /// `MPI_Win_sync` on the shared window: this rank's stores to it become visible, and
    /// others' made visible to it are seen. A no-op when there is no window.
    pub fn shared_fence(&self) -> Result<()> {
        match self.shared.as_ref().and_then(|sh| sh.segment.as_ref()) {
            Some(segment) => segment.win_sync(),
            None => Ok(()),
        }
    }

    fn check_split<T: Element>(&self) -> Result<()> {
        if self.split_ready::<T>() {
            return Ok(());
        }
        Err(RedistError::NotSplitReady {
            elem_bytes: std::mem::size_of::<T>(),
        })
    }

    fn shared_memory<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        self.shared_window(std::mem::size_of::<T>())?;
        let t0 = Instant::now();
        if self.shared.as_ref().is_some_and(|sh| sh.slots == 1) {
            // Every rank has finished reading its buffer (the previous call's unpack). With
            // two slots, the previous call's synchronization guarantees that for the slot
            // written now (its last reader unpacked before entering it).
            // SAFETY: a plain collective call on the duplicated communicator.
            check_mpi("MPI_Barrier", unsafe {
                ffi::MPI_Barrier(self.comm.as_raw())
            })?;
        }
        let t1 = Instant::now();
        // SAFETY: nobody reads the next slot until the synchronization below (see above).
        unsafe { self.pack_next(src) };
        let t2 = Instant::now();
        // Make the stores visible, wait for every rank's stores, and see them.
        let sh = self.shared.as_ref().expect("the shared schedule");
        sh.segment
            .as_ref()
            .expect("allocated above")
            .sync(&self.comm)?;
        let t3 = Instant::now();
        // SAFETY: every rank wrote its messages of the slot before the synchronization, and
        // none writes the slot again before the next synchronization.
        unsafe { self.unpack_next(src, dst) };
        times.comm += (t1 - t0).as_secs_f64() + (t3 - t2).as_secs_f64();
        times.pack += (t2 - t1).as_secs_f64();
        times.unpack += t3.elapsed().as_secs_f64();
        Ok(())
    }

    /// Caterpillar step `d`: exchanges the messages with this step's partner (in chunks of at
    /// most `max_count` elements) and waits for both.
    fn step<T: Element>(&mut self, d: usize, send: &[T], recv: &mut [T]) -> Result<()> {
        let peer = self.partner(d);
        if peer == self.part.rank {
            return Ok(());
        }
        let comm = self.comm.as_raw();
        self.counts.exchange_with(
            comm,
            TAG,
            self.max_count,
            peer,
            peer,
            send,
            recv,
            &mut self.step_requests,
        )
    }

    /// The caterpillar partner of this rank at step `d`.
    fn partner(&self, d: usize) -> usize {
        let (p, i) = (self.size, self.part.rank);
        (2 * p - i - d) % p
    }

    fn caterpillar<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let t0 = Instant::now();
        self.part.pack_all(src, send);
        times.pack += t0.elapsed().as_secs_f64();
        for d in 0..self.size {
            let peer = self.partner(d);
            if peer == self.part.rank {
                continue;
            }
            let t1 = Instant::now();
            self.step(d, send, recv)?;
            let t2 = Instant::now();
            if let Some(t) = self.part.recvs.get(self.recv_of_peer[peer]) {
                t.map
                    .unpack_range(0..t.map.len(), &recv[t.offset..t.offset + t.map.len()], dst);
            }
            times.comm += (t2 - t1).as_secs_f64();
            times.unpack += t2.elapsed().as_secs_f64();
        }
        Ok(())
    }

    fn asynchronous<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let comm = self.comm.as_raw();
        let limit = self.max_count;
        let t0 = Instant::now();
        // Every chunk of every message is its own request; a message is unpacked when its
        // last chunk has arrived.
        let mut nrecv = 0;
        for (i, t) in self.part.recvs.iter().enumerate() {
            self.chunks_left[i] = chunk_count(t.map.len(), limit);
            for (offset, len) in message_chunks(t.map.len(), limit) {
                // SAFETY: the chunk lies inside the message inside the checked receive
                // buffer; completed below.
                unsafe {
                    let buf = recv.as_mut_ptr().add(t.offset + offset);
                    irecv(buf, len, t.peer, TAG, comm, &mut self.requests[nrecv])?;
                }
                self.request_owner[nrecv] = i;
                nrecv += 1;
            }
        }
        let mut comm_s = t0.elapsed().as_secs_f64();
        let mut pack_s = 0.0;
        let mut nsend = 0;
        for t in &self.part.sends {
            let t1 = Instant::now();
            let msg = &mut send[t.offset..t.offset + t.map.len()];
            t.map.pack_range(0..t.map.len(), src, msg);
            let t2 = Instant::now();
            for (offset, len) in message_chunks(t.map.len(), limit) {
                // SAFETY: the packed message stays untouched until MPI_Waitall below.
                unsafe {
                    let buf = msg.as_ptr().add(offset);
                    isend(buf, len, t.peer, TAG, comm, &mut self.send_requests[nsend])?;
                }
                nsend += 1;
            }
            pack_s += (t2 - t1).as_secs_f64();
            comm_s += t2.elapsed().as_secs_f64();
        }
        let mut unpack_s = 0.0;
        for _ in 0..nrecv {
            let t1 = Instant::now();
            // SAFETY: the first nrecv requests are live or null.
            let index = unsafe { wait_any(&mut self.requests[..nrecv])? };
            let t2 = Instant::now();
            let i = self.request_owner[index];
            self.chunks_left[i] -= 1;
            if self.chunks_left[i] == 0 {
                let t = &self.part.recvs[i];
                t.map
                    .unpack_range(0..t.map.len(), &recv[t.offset..t.offset + t.map.len()], dst);
            }
            comm_s += (t2 - t1).as_secs_f64();
            unpack_s += t2.elapsed().as_secs_f64();
        }
        let t3 = Instant::now();
        // SAFETY: every send request is live or null.
        unsafe { wait_all(&mut self.send_requests[..nsend])? };
        comm_s += t3.elapsed().as_secs_f64();
        times.pack += pack_s;
        times.comm += comm_s;
        times.unpack += unpack_s;
        Ok(())
    }

    fn pipelined<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let comm = self.comm.as_raw();
        let s = self.packet();
        let (mut pack_s, mut comm_s, mut unpack_s) = (0.0, 0.0, 0.0);
        for d in 0..self.size {
            let peer = self.partner(d);
            if peer == self.part.rank {
                continue;
            }
            let t0 = Instant::now();
            // Post every packet receive from the partner.
            let mut nrecv = 0;
            if let Some(t) = self.part.recvs.get(self.recv_of_peer[peer]) {
                for (start, n) in message_chunks(t.map.len(), s) {
                    // SAFETY: the packet lies inside the message inside the checked buffer.
                    unsafe {
                        let buf = recv.as_mut_ptr().add(t.offset + start);
                        irecv(buf, n, peer, TAG, comm, &mut self.requests[nrecv])?;
                    }
                    self.request_owner[nrecv] = start;
                    nrecv += 1;
                }
            }
            comm_s += t0.elapsed().as_secs_f64();
            // Pack and send packet by packet: packet k+1 is packed while k travels.
            let mut nsend = 0;
            if let Some(t) = self.part.sends.get(self.send_of_peer[peer]) {
                for (start, n) in message_chunks(t.map.len(), s) {
                    let t1 = Instant::now();
                    let msg = &mut send[t.offset + start..t.offset + start + n];
                    t.map.pack_range(start..start + n, src, msg);
                    let t2 = Instant::now();
                    // SAFETY: each packet is written once and then only read by MPI.
                    unsafe {
                        let buf = msg.as_ptr();
                        isend(buf, n, peer, TAG, comm, &mut self.send_requests[nsend])?;
                    }
                    pack_s += (t2 - t1).as_secs_f64();
                    comm_s += t2.elapsed().as_secs_f64();
                    nsend += 1;
                }
            }
            // Unpack packets as they arrive.
            if let Some(t) = self.part.recvs.get(self.recv_of_peer[peer]) {
                for _ in 0..nrecv {
                    let t1 = Instant::now();
                    // SAFETY: the first nrecv requests are live or null.
                    let index = unsafe { wait_any(&mut self.requests[..nrecv])? };
                    let t2 = Instant::now();
                    let start = self.request_owner[index];
                    let n = s.min(t.map.len() - start);
                    t.map.unpack_range(
                        start..start + n,
                        &recv[t.offset + start..t.offset + start + n],
                        dst,
                    );
                    comm_s += (t2 - t1).as_secs_f64();
                    unpack_s += t2.elapsed().as_secs_f64();
                }
            }
            let t3 = Instant::now();
            // SAFETY: the first nsend send requests are live or null.
            unsafe { wait_all(&mut self.send_requests[..nsend])? };
            comm_s += t3.elapsed().as_secs_f64();
        }
        times.pack += pack_s;
        times.comm += comm_s;
        times.unpack += unpack_s;
        Ok(())
    }
}

impl FourBuffers for Redistribution {
    fn needs(&self) -> [usize; 4] {
        [
            self.part.src_len,
            self.part.dst_len,
            self.send_len(),
            self.recv_len(),
        ]
    }

    fn agreement(&self) -> &SimpleCommunicator {
        &self.comm
    }

    fn run<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let schedule = match self.schedule {
            Schedule::Shared if self.shared.is_none() => Schedule::Alltoallv,
            s => s,
        };
        if !matches!(schedule, Schedule::Alltoallv | Schedule::Shared) {
            // Copied while nothing else can happen; alltoallv copies it with the unpack.
            let t0 = Instant::now();
            self.part.copy_own(src, dst);
            times.unpack += t0.elapsed().as_secs_f64();
        }
        match schedule {
            Schedule::Shared => self.shared_memory(src, dst, times),
            Schedule::Alltoallv => self.alltoallv(src, dst, send, recv, times),
            Schedule::Caterpillar => self.caterpillar(src, dst, send, recv, times),
            Schedule::Async => self.asynchronous(src, dst, send, recv, times),
            Schedule::Pipelined => self.pipelined(src, dst, send, recv, times),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::DistArray;

    /// The shared schedule writes each message where its receiver's plan reads it.
    #[test]
    fn remote_offsets_match_the_receivers_plans() {
        let shape = [13, 11];
        let specs = [
            "grid=2x3,dist=cyclic(2),cyclic(3)",
            "grid=3x2,order=col,dist=cyclic(3),block",
            "grid=1x1,dist=block,block",
            "grid=5,dist=cyclic(5),*",
        ];
        for a in specs {
            for b in specs {
                let from = DistArray::parse_spec(a, &shape).unwrap();
                let to = DistArray::parse_spec(b, &shape).unwrap();
                let plan = RedistPlan::new(&from, &to, 6).unwrap();
                let parts: Vec<RankRedist> = (0..6).map(|r| plan.for_rank(r)).collect();
                for p in &parts {
                    for (t, off) in p.sends.iter().zip(remote_offsets(&plan, p)) {
                        let r = parts[t.peer]
                            .recvs
                            .iter()
                            .find(|r| r.peer == p.rank)
                            .unwrap();
                        assert_eq!((off, r.map.len()), (r.offset, t.map.len()), "{a} -> {b}");
                    }
                }
            }
        }
    }
}
