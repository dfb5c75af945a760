//! Executing an exchange over MPI: pack, communicate, unpack.
//!
//! An [`Exchange`] is built once from an [`ExchangePlan`] and this rank's [`ProcessGrid`]; it
//! owns its group communicator, its copy plans and the MPI count arrays, so running it
//! allocates nothing. The caller owns the data and message buffers.

use crate::comm::ProcessGrid;
use crate::element::Element;
use crate::error::{RedistError, Result};
use crate::pack::CopyPlan;
use crate::plan::{ExchangePlan, RankExchange};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use std::ffi::c_void;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

/// How the messages of an exchange travel. Every method gives identical results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Method {
    /// One `MPI_Alltoallv` in the group communicator.
    #[default]
    Alltoallv,
    /// The seed's pairwise schedule: at step `i` send to `(me + i) % n` and receive from
    /// `(me - i) % n` with nonblocking calls, then wait.
    Pairwise,
}

impl Method {
    /// Every method, for tests and sweeps.
    pub const ALL: [Method; 2] = [Method::Alltoallv, Method::Pairwise];

    /// The method's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Alltoallv => "alltoallv",
            Method::Pairwise => "pairwise",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = RedistError;

    /// ```
    /// use redist::exchange::Method;
    /// assert_eq!("pairwise".parse::<Method>().unwrap(), Method::Pairwise);
    /// assert!("smoke-signals".parse::<Method>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "alltoallv" | "alltoall" => Ok(Method::Alltoallv),
            "pairwise" | "p2p" => Ok(Method::Pairwise),
            _ => Err(RedistError::UnknownMethod {
                name: s.to_string(),
            }),
        }
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
    part: RankExchange,
    method: Method,
    comm: SimpleCommunicator,
    group_size: usize,
    src_len: usize,
    dst_len: usize,
    pack_plans: Vec<CopyPlan>,
    pack_src_offsets: Vec<usize>,
    unpack_plans: Vec<CopyPlan>,
    unpack_dst_offsets: Vec<usize>,
    /// This rank's own part: source to destination directly.
    own_copy: CopyPlan,
    own_src_offset: usize,
    own_dst_offset: usize,
    send_counts: Vec<i32>,
    send_displs: Vec<i32>,
    recv_counts: Vec<i32>,
    recv_displs: Vec<i32>,
}

impl fmt::Debug for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchange")
            .field("rank", &self.part.rank)
            .field("method", &self.method)
            .field("group_size", &self.group_size)
            .finish()
    }
}

fn to_count(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| RedistError::CountOverflow {
        elements: n,
        limit: i32::MAX as usize,
    })
}

fn check_len(buffer: &'static str, expected: usize, actual: usize) -> Result<()> {
    if actual < expected {
        return Err(RedistError::BufferLength {
            buffer,
            expected,
            actual,
        });
    }
    Ok(())
}

fn check_mpi(call: &'static str, code: i32) -> Result<()> {
    if code == ffi::MPI_SUCCESS as i32 {
        Ok(())
    } else {
        Err(RedistError::Mpi { call, code })
    }
}

impl Exchange {
    /// Prepares this rank's part of `plan`; collective over the grid (duplicates the group
    /// communicator). All checks use global arguments only, so every rank agrees.
    pub fn new(grid: &ProcessGrid, plan: &ExchangePlan, method: Method) -> Result<Self> {
        if grid.shape() != plan.from().grid() {
            return Err(RedistError::LayoutMismatch {
                what: format!(
                    "the process grid is {} but the plan's layouts use {}",
                    grid.shape(),
                    plan.from().grid()
                ),
            });
        }
        // Counts of the largest message and buffer over all ranks, so all ranks agree.
        let ranks = grid.shape().ranks();
        let biggest = (0..ranks)
            .map(|r| plan.from().local_len(r).max(plan.to().local_len(r)))
            .max()
            .unwrap_or(0);
        to_count(biggest)?;
        let part = plan.for_rank(grid.rank());
        let comm = grid.duplicate_group(plan.grid_dim());
        let group_size = part.peers.len();
        let pack_plans = part.pack_plans();
        let unpack_plans = part.unpack_plans();
        let pack_src_offsets = part
            .peers
            .iter()
            .map(|p| p.send_box.offset(&part.src_strides))
            .collect();
        let unpack_dst_offsets = part
            .peers
            .iter()
            .map(|p| p.recv_box.offset(&part.dst_strides))
            .collect();
        let own = part.own();
        let own_copy = part.own_copy_plan();
        let own_src_offset = own.send_box.offset(&part.src_strides);
        let own_dst_offset = own.recv_box.offset(&part.dst_strides);
        let me = part.group_index;
        // The own part travels by direct copy: zero counts in the MPI arrays.
        let counts = |f: &dyn Fn(&crate::plan::PeerTransfer) -> usize| -> Result<Vec<i32>> {
            part.peers
                .iter()
                .map(|p| to_count(if p.peer == me { 0 } else { f(p) }))
                .collect()
        };
        Ok(Self {
            send_counts: counts(&|p| p.send_box.len())?,
            send_displs: counts(&|p| p.send_offset)?,
            recv_counts: counts(&|p| p.recv_box.len())?,
            recv_displs: counts(&|p| p.recv_offset)?,
            src_len: plan.from().local_len(grid.rank()),
            dst_len: plan.to().local_len(grid.rank()),
            part,
            method,
            comm,
            group_size,
            pack_plans,
            pack_src_offsets,
            unpack_plans,
            unpack_dst_offsets,
            own_copy,
            own_src_offset,
            own_dst_offset,
        })
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
        self.part.send_len
    }

    /// Minimum receive-buffer length: what comes from other ranks (0 for a group of one).
    pub fn recv_len(&self) -> usize {
        self.part.recv_len
    }

    /// This rank's part of the plan.
    pub fn rank_part(&self) -> &RankExchange {
        &self.part
    }

    /// Packs the messages of every other peer from the source block into `send`.
    pub fn pack<T: Element>(&self, src: &[T], send: &mut [T]) {
        for ((plan, &offset), peer) in self
            .pack_plans
            .iter()
            .zip(&self.pack_src_offsets)
            .zip(&self.part.peers)
        {
            if peer.peer != self.part.group_index {
                plan.run(src, offset, send, peer.send_offset);
            }
        }
    }

    /// Copies this rank's own part from the source block straight into the destination
    /// block (with the local transpose), bypassing the message buffers.
    pub fn copy_own<T: Element>(&self, src: &[T], dst: &mut [T]) {
        self.own_copy
            .run(src, self.own_src_offset, dst, self.own_dst_offset);
    }

    /// Moves the packed messages: `send` on every rank of the group to `recv`.
    pub fn communicate<T: Element>(&mut self, send: &[T], recv: &mut [T]) -> Result<()> {
        if self.group_size == 1 {
            return Ok(());
        }
        let datatype = T::mpi_datatype();
        let comm = self.comm.as_raw();
        match self.method {
            Method::Alltoallv => {
                // SAFETY: counts and displacements lie inside the buffers (lengths checked by
                // the callers against send_len/recv_len, which are the sums of the counts).
                let code = unsafe {
                    ffi::MPI_Alltoallv(
                        send.as_ptr() as *const c_void,
                        self.send_counts.as_ptr(),
                        self.send_displs.as_ptr(),
                        datatype,
                        recv.as_mut_ptr() as *mut c_void,
                        self.recv_counts.as_ptr(),
                        self.recv_displs.as_ptr(),
                        datatype,
                        comm,
                    )
                };
                check_mpi("MPI_Alltoallv", code)
            }
            Method::Pairwise => {
                let n = self.group_size;
                let me = self.part.group_index;
                for step in 1..n {
                    let to = (me + step) % n;
                    let from = (me + n - step) % n;
                    // SAFETY: as above; both requests complete before the next step.
                    unsafe {
                        let mut requests: [ffi::MPI_Request; 2] =
                            [ffi::RSMPI_REQUEST_NULL, ffi::RSMPI_REQUEST_NULL];
                        check_mpi(
                            "MPI_Irecv",
                            ffi::MPI_Irecv(
                                recv.as_mut_ptr().add(self.recv_displs[from] as usize)
                                    as *mut c_void,
                                self.recv_counts[from],
                                datatype,
                                from as i32,
                                7,
                                comm,
                                &mut requests[0],
                            ),
                        )?;
                        check_mpi(
                            "MPI_Isend",
                            ffi::MPI_Isend(
                                send.as_ptr().add(self.send_displs[to] as usize) as *const c_void,
                                self.send_counts[to],
                                datatype,
                                to as i32,
                                7,
                                comm,
                                &mut requests[1],
                            ),
                        )?;
                        check_mpi(
                            "MPI_Waitall",
                            ffi::MPI_Waitall(2, requests.as_mut_ptr(), ffi::RSMPI_STATUSES_IGNORE),
                        )?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Unpacks every other peer's message from `recv` into the destination block.
    pub fn unpack<T: Element>(&self, recv: &[T], dst: &mut [T]) {
        for ((plan, &offset), peer) in self
            .unpack_plans
            .iter()
            .zip(&self.unpack_dst_offsets)
            .zip(&self.part.peers)
        {
            if peer.peer != self.part.group_index {
                plan.run(recv, peer.recv_offset, dst, offset);
            }
        }
    }

    /// Runs the whole exchange: `src` (this rank's source block) to `dst`, through the
    /// caller's message buffers (lengths at least [`Exchange::send_len`] and
    /// [`Exchange::recv_len`]), adding the time of each stage to `times`. This rank's own part
    /// is copied directly (counted as unpack time).
    pub fn execute<T: Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        check_len("source", self.src_len, src.len())?;
        check_len("destination", self.dst_len, dst.len())?;
        check_len("send", self.part.send_len, send.len())?;
        check_len("receive", self.part.recv_len, recv.len())?;
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
