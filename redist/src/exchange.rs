//! Executing an exchange over MPI: pack, communicate, unpack.
//!
//! An [`Exchange`] is built once from an [`ExchangePlan`] and this rank's [`ProcessGrid`]; it
//! owns its group communicator, its copy plans and the MPI count arrays, so running it
//! allocates nothing. The caller owns the data and message buffers.

use crate::comm::{check_buffers, FourBuffers, ProcessGrid};
use crate::element::Element;
use crate::error::{RedistError, Result};
use crate::piecewise::Messages;
use crate::plan::{ExchangePlan, RankExchange};
use crate::transport::null_request;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::fmt;
use std::time::Instant;

pub use crate::transport::{chunk_count, message_chunks, MPI_MAX_COUNT};

crate::names::named_enum! {
    /// How the messages of an exchange travel. Every method gives identical results.
    ///
    /// ```
    /// use redist::exchange::Method;
    /// assert_eq!("pairwise".parse::<Method>().unwrap(), Method::Pairwise);
    /// assert!("smoke-signals".parse::<Method>().is_err());
    /// ```
    #[derive(Default)]
    pub enum Method ("exchange method") {
        /// One `MPI_Alltoallv` in the group communicator.
        #[default]
        Alltoallv = "alltoallv" | "alltoall",
        /// Birkeland & Sørøvik's pairwise schedule: at step `i` send to `(me + i) % n` and receive from
        /// `(me - i) % n` with nonblocking calls, then wait.
        Pairwise = "pairwise" | "p2p",
    }
}

/// Seconds spent per stage, accumulated over calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimes {
    /// Local 1-D FFTs.
    pub fft: f64,
    /// Packing messages.
    pub pack: f64,
    /// MPI communication.
    pub comm: f64,
    /// Unpacking messages (with the fused local transpose).
    pub unpack: f64,
}

impl StageTimes {
    /// The sum of all stages.
    pub fn total(&self) -> f64 {
        self.fft + self.pack + self.comm + self.unpack
    }

    /// Stage-wise sum.
    pub fn add(&mut self, other: &StageTimes) {
        self.fft += other.fft;
        self.pack += other.pack;
        self.comm += other.comm;
        self.unpack += other.unpack;
    }
}

/// An exchange ready to run on this rank. See the module documentation.
///
/// ```no_run
/// use redist::{comm::ProcessGrid, exchange::{Exchange, Method, StageTimes}, grid::GridShape,
///              layout::{Layout, MemoryOrder}, plan::ExchangePlan};
/// use mpi::topology::Communicator;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let grid = ProcessGrid::new(&world, GridShape::balanced(world.size() as usize, 1).unwrap()).unwrap();
/// let from = Layout::pencil(&[64, 64], grid.shape().clone()).unwrap();
/// let to = Layout::new(&[64, 64], grid.shape().clone(), vec![1], MemoryOrder::new(vec![1, 0]).unwrap()).unwrap();
/// let mut exchange = Exchange::new(&grid, &ExchangePlan::new(&from, &to).unwrap(), Method::Pairwise).unwrap();
/// let src = vec![1.0f64; exchange.src_len()];
/// let mut dst = vec![0.0; exchange.dst_len()];
/// let (mut send, mut recv) = (vec![0.0; exchange.send_len()], vec![0.0; exchange.recv_len()]);
/// exchange.execute(&src, &mut dst, &mut send, &mut recv, &mut StageTimes::default()).unwrap();
/// ```
pub struct Exchange {
    pub(crate) method: Method,
    pub(crate) comm: SimpleCommunicator,
    /// The whole grid's communicator (a duplicate), over which [`Exchange::execute`] agrees
    /// on the caller's buffers.
    grid_comm: SimpleCommunicator,
    pub(crate) group_size: usize,
    src_len: usize,
    dst_len: usize,
    /// The axis the exchange gathers and the one it scatters (see [`ExchangePlan`]).
    axes: (usize, usize),
    /// The grid dimension whose groups communicate.
    grid_dim: usize,
    /// Whether some block of some rank exceeds `max_count`: then every message travels as
    /// point-to-point chunks of at most `max_count` elements, whatever the method.
    pub(crate) chunked: bool,
    /// Largest element count of one MPI message (at most `i32::MAX`).
    pub(crate) max_count: usize,
    /// Request slots for one pairwise step, allocated once.
    pub(crate) requests: Vec<ffi::MPI_Request>,
    /// The messages of the whole exchange.
    pub(crate) whole: Messages,
}

impl fmt::Debug for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchange")
            .field("rank", &self.whole.part.rank)
            .field("method", &self.method)
            .field("group_size", &self.group_size)
            .finish()
    }
}

impl Exchange {
    /// Prepares this rank's part of `plan`; collective over the grid (duplicates the grid's
    /// and the group's communicators). All checks use global arguments only, so every rank agrees.
    ///
    /// Messages of more than `i32::MAX` elements (MPI's count limit) are sent as several
    /// chunks of at most that many elements, with either method, never truncated.
    pub fn new(grid: &ProcessGrid, plan: &ExchangePlan, method: Method) -> Result<Self> {
        Self::with_max_count(grid, plan, method, MPI_MAX_COUNT)
    }

    /// Like [`Exchange::new`], with messages split into chunks of at most `max_count`
    /// elements (clamped to `1..=i32::MAX`). When the largest block of any rank exceeds
    /// `max_count`, every rank sends chunked point-to-point messages (also for
    /// [`Method::Alltoallv`], since `MPI_Alltoallv` takes 32-bit counts and displacements);
    /// the choice depends only on the global plan, so all ranks agree. A small `max_count`
    /// exercises that path in tests with small arrays.
    pub fn with_max_count(
        grid: &ProcessGrid,
        plan: &ExchangePlan,
        method: Method,
        max_count: usize,
    ) -> Result<Self> {
        let max_count = max_count.clamp(1, MPI_MAX_COUNT);
        if grid.shape() != plan.from().grid() {
            return Err(RedistError::LayoutMismatch {
                what: format!(
                    "the process grid is {} but the plan's layouts use {}",
                    grid.shape(),
                    plan.from().grid()
                ),
            });
        }
        // The largest block over all ranks bounds every count and displacement, so this
        // decision is the same on every rank.
        let ranks = grid.shape().ranks();
        let biggest = (0..ranks)
            .map(|r| plan.from().local_len(r).max(plan.to().local_len(r)))
            .max()
            .unwrap_or(0);
        let chunked = biggest > max_count;
        let part = plan.for_rank(grid.rank());
        let comm = grid.duplicate_group(plan.grid_dim());
        let grid_comm = grid.communicator().duplicate();
        let group_size = part.peers.len();
        let whole = Messages::new(part, chunked);
        let requests = vec![null_request(); whole.most_chunks(max_count)];
        Ok(Self {
            axes: (plan.from_axis(), plan.to_axis()),
            grid_dim: plan.grid_dim(),
            max_count,
            chunked,
            requests,
            src_len: plan.from().local_len(grid.rank()),
            dst_len: plan.to().local_len(grid.rank()),
            method,
            comm,
            grid_comm,
            group_size,
            whole,
        })
    }

    /// The group communicator of this exchange (this rank's group along its grid dimension).
    pub(crate) fn group_comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// The axis this exchange gathers (split before, local after) and the one it scatters
    /// (local before, split after).
    pub fn plan_axes(&self) -> (usize, usize) {
        self.axes
    }

    /// The grid dimension whose groups communicate.
    pub fn grid_dim(&self) -> usize {
        self.grid_dim
    }

    /// Ranks in this rank's group (the processes along [`Exchange::grid_dim`]); with one,
    /// the exchange moves nothing between processes.
    pub fn group_size(&self) -> usize {
        self.group_size
    }

    /// Whether messages travel in chunks of at most [`Exchange::max_count`] elements
    /// (point-to-point, whatever the method) because some block exceeds that count.
    pub fn is_chunked(&self) -> bool {
        self.chunked && self.group_size > 1
    }

    /// The largest element count of one MPI message.
    pub fn max_count(&self) -> usize {
        self.max_count
    }

    /// The method in use.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Elements of this rank's source block.
    pub fn src_len(&self) -> usize {
        self.src_len
    }

    /// Elements of this rank's destination block.
    pub fn dst_len(&self) -> usize {
        self.dst_len
    }

    /// Minimum send-buffer length: what goes to other ranks (0 for a group of one).
    pub fn send_len(&self) -> usize {
        self.whole.send_len()
    }

    /// Minimum receive-buffer length: what comes from other ranks (0 for a group of one).
    pub fn recv_len(&self) -> usize {
        self.whole.recv_len()
    }

    /// This rank's part of the plan.
    pub fn rank_part(&self) -> &RankExchange {
        &self.whole.part
    }

    /// Packs the messages of every other peer from the source block into `send`.
    pub fn pack<T: Element>(&self, src: &[T], send: &mut [T]) {
        self.whole.pack(src, send);
    }

    /// Copies this rank's own part from the source block straight into the destination
    /// block (with the local transpose), bypassing the message buffers.
    pub fn copy_own<T: Element>(&self, src: &[T], dst: &mut [T]) {
        let w = &self.whole;
        w.own_copy.run(src, w.own_src_offset, dst, w.own_dst_offset);
    }

    /// Moves the packed messages: `send` on every rank of the group to `recv`. A building
    /// block: the lengths are checked on this rank alone (a wrong one can leave the group's
    /// other ranks waiting); [`Exchange::execute`] agrees on them first.
    pub fn communicate<T: Element>(&mut self, send: &[T], recv: &mut [T]) -> Result<()> {
        let Self {
            whole,
            comm,
            method,
            max_count,
            requests,
            group_size,
            ..
        } = self;
        move_messages(
            whole,
            comm,
            *method,
            *max_count,
            requests,
            *group_size,
            send,
            recv,
        )
    }

    /// Unpacks every other peer's message from `recv` into the destination block.
    pub fn unpack<T: Element>(&self, recv: &[T], dst: &mut [T]) {
        self.whole.unpack(recv, dst);
    }

    /// Runs the whole exchange: `src` (this rank's source block) to `dst`, through the
    /// caller's message buffers (lengths at least [`Exchange::src_len`],
    /// [`Exchange::dst_len`], [`Exchange::send_len`] and [`Exchange::recv_len`]), adding the
    /// time of each stage to `times`. This rank's own part is copied directly (counted as
    /// unpack time). Collective over the whole grid: the ranks first agree on the buffer
    /// lengths (one small `MPI_Allreduce`), so a short buffer on any rank is the same
    /// [`RedistError::CallBufferLength`] on every rank, before anything moves.
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

    /// [`Exchange::execute`] without the agreement, for callers whose buffers are sized from
    /// this exchange on every rank (fft-core's plans, which agree on their own callers'
    /// buffers once per transform): collective over the group only, no extra MPI call. The
    /// lengths are checked on this rank alone ([`RedistError::BufferLength`]), so a wrong
    /// one is a bug of the caller that can leave the group's other ranks waiting.
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
}

impl FourBuffers for Exchange {
    fn needs(&self) -> [usize; 4] {
        [
            self.src_len,
            self.dst_len,
            self.whole.send_len(),
            self.whole.recv_len(),
        ]
    }

    fn agreement(&self) -> &SimpleCommunicator {
        &self.grid_comm
    }

    fn run<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let t0 = Instant::now();
        self.pack(src, send);
        let t1 = Instant::now();
        self.copy_own(src, dst);
        let t2 = Instant::now();
        self.communicate(send, recv)?;
        let t3 = Instant::now();
        self.unpack(recv, dst);
        let t4 = Instant::now();
        times.pack += (t1 - t0).as_secs_f64();
        times.unpack += (t2 - t1).as_secs_f64() + (t4 - t3).as_secs_f64();
        times.comm += (t3 - t2).as_secs_f64();
        Ok(())
    }
}

/// Moves the packed `messages` of one exchange or piece: `send` on every rank of the group to
/// `recv`, with `MPI_Alltoallv` or the pairwise schedule (chunked past `max_count`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn move_messages<T: Element>(
    messages: &Messages,
    comm: &SimpleCommunicator,
    method: Method,
    max_count: usize,
    requests: &mut Vec<ffi::MPI_Request>,
    group_size: usize,
    send: &[T],
    recv: &mut [T],
) -> Result<()> {
    if group_size == 1 {
        return Ok(());
    }
    let m = messages;
    check_buffers(&[
        ("send", m.part.send_len, send.len()),
        ("receive", m.part.recv_len, recv.len()),
    ])?;
    let comm = comm.as_raw();
    if method == Method::Alltoallv && !m.chunked {
        return m.counts.alltoallv(comm, send, recv);
    }
    // Pairwise schedule; each message goes as chunks of at most max_count elements.
    let n = group_size;
    let me = m.part.group_index;
    for step in 1..n {
        let to = (me + step) % n;
        let from = (me + n - step) % n;
        m.counts.exchange_with(
            comm,
            PAIRWISE_TAG,
            max_count,
            to,
            from,
            send,
            recv,
            requests,
        )?;
    }
    Ok(())
}

/// The message tag of the pairwise schedule.
const PAIRWISE_TAG: i32 = 7;
