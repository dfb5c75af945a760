//! Thakur, Choudhary and Ramanujam's cyclic(x) → cyclic(y) methods for one axis (Thakur et al.).
//!
//! Each method computes, at redistribution time, what this process sends to and receives
//! from every other process (the paper's timings include that address calculation, and so do
//! the `thakur` benchmark's), then exchanges one packed message per peer:
//!
//! * [`ThakurMethod::KyToY`] (`x = k·y`): every local block of `x` splits into `k` sub-blocks
//!   going to the stored destination sequence `(k·p + i) mod P`; the receiver finds the
//!   source of its `y`-block `l` as `⌊(l·P + q)/k⌋ mod P`, a sequence of period `k` stored
//!   once when `k ≤ P` and `P mod k = 0`.
//! * [`ThakurMethod::XToKx`] (`y = k·x`): the reverse; the receiver's `k` sub-blocks of each
//!   `y`-block come from the stored sequence `(k·q + i) mod P`.
//! * [`ThakurMethod::Gcd`] / [`ThakurMethod::Lcm`]: two phases through cyclic(m) with
//!   `m = gcd(x, y)` (KY_TO_Y then X_TO_KX) or `m = lcm(x, y)` (X_TO_KX then KY_TO_Y).
//! * [`ThakurMethod::General`]: the destination (source) of every element computed from its
//!   global index.
//!
//! For more axes, [`AxisMethod`] and [`redistribute_axis`] apply a method along the one axis
//! a multi-dimensional redistribution changes, the others unchanged.
//!
//! Receives are [`Receive::Sync`] (wait for every message, then unpack) or
//! [`Receive::Async`] (unpack each message as `MPI_Waitany` reports it). Local storage is the
//! block-cyclic local layout of [`crate::dist`]; all methods give identical results, equal to
//! the general planner's ([`crate::cyclic::plan::RedistPlan`]).
//!
//! ```
//! use redist::cyclic::thakur::{simulate, ThakurMethod};
//! use redist::dist::{AxisDist, AxisMap};
//! let (n, p) = (100, 3);
//! let from = AxisMap::new(AxisDist::BlockCyclic(15), n, p).unwrap();
//! let to = AxisMap::new(AxisDist::BlockCyclic(10), n, p).unwrap();
//! let src: Vec<Vec<u32>> = (0..p)
//!     .map(|q| (0..from.local_len(q)).map(|l| from.global_index(q, l) as u32).collect())
//!     .collect();
//! for method in [ThakurMethod::Gcd, ThakurMethod::Lcm, ThakurMethod::General] {
//!     let dst = simulate(method, n, p, 15, 10, &src).unwrap();
//!     for q in 0..p {
//!         assert!(dst[q].iter().enumerate().all(|(l, &g)| g as usize == to.global_index(q, l)));
//!     }
//! }
//! ```

use super::gcd;
use crate::dist::{AxisDist, AxisMap, DistArray};
use crate::element::Element;
use crate::error::{RedistError, Result};
use crate::transport::p2p::{irecv, isend, wait_all, wait_any};
use crate::transport::{null_request, MPI_MAX_COUNT};
use mpi::topology::Communicator;

crate::names::named_enum! {
    /// Thakur et al.'s redistribution methods (Thakur et al.).
    ///
    /// ```
    /// use redist::cyclic::thakur::ThakurMethod;
    /// assert_eq!("LCM".parse::<ThakurMethod>().unwrap(), ThakurMethod::Lcm);
    /// assert_eq!("ky-to-y".parse::<ThakurMethod>().unwrap(), ThakurMethod::KyToY);
    /// ```
    pub enum ThakurMethod ("Thakur method") {
        /// `x = k·y` (Fig. 2).
        KyToY = "ky_to_y",
        /// `y = k·x` (Fig. 5).
        XToKx = "x_to_kx",
        /// Two phases through cyclic(gcd(x, y)) (Fig. 8).
        Gcd = "gcd",
        /// Two phases through cyclic(lcm(x, y)) (Fig. 8).
        Lcm = "lcm",
        /// Element-wise address calculation (§5.1).
        General = "general",
    }
}

impl ThakurMethod {
    /// Whether the method applies to cyclic(x) → cyclic(y).
    pub fn applies(self, x: usize, y: usize) -> bool {
        match self {
            ThakurMethod::KyToY => x.is_multiple_of(y),
            ThakurMethod::XToKx => y.is_multiple_of(x),
            _ => true,
        }
    }
}

crate::names::named_enum! {
    /// Synchronous or asynchronous receive (Thakur et al. §3).
    ///
    /// ```
    /// use redist::cyclic::thakur::Receive;
    /// assert_eq!("async".parse::<Receive>().unwrap(), Receive::Async);
    /// assert!("later".parse::<Receive>().is_err());
    /// ```
    pub enum Receive ("receive mode") {
        /// Wait for every message, then unpack.
        Sync = "sync" | "synchronous",
        /// Unpack each message as it arrives.
        Async = "async" | "asynchronous",
    }
}

/// One phase for one process: per peer, the local runs `(start, len)` sent (in the source
/// array) and received (in the destination array), in message order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// Block size of the source distribution.
    pub x: usize,
    /// Block size of the destination distribution.
    pub y: usize,
    /// Local length of the source array.
    pub src_len: usize,
    /// Local length of the destination array.
    pub dst_len: usize,
    /// Per peer, runs of the source array it receives.
    pub sends: Vec<Vec<(usize, usize)>>,
    /// Per peer, runs of the destination array it sends.
    pub recvs: Vec<Vec<(usize, usize)>>,
}

fn push(list: &mut Vec<(usize, usize)>, start: usize, len: usize) {
    if let Some(last) = list.last_mut() {
        if last.0 + last.1 == start {
            last.1 += len;
            return;
        }
    }
    list.push((start, len));
}

fn maps(n: usize, procs: usize, x: usize, y: usize) -> Result<(AxisMap, AxisMap)> {
    Ok((
        AxisMap::new(AxisDist::BlockCyclic(x), n, procs)?,
        AxisMap::new(AxisDist::BlockCyclic(y), n, procs)?,
    ))
}

/// Per peer, the runs of a local array of `len` items in blocks of `big` items, each cut into
/// `k = big / small` sub-blocks of `small` items, sub-block `i` going to (or coming from) peer
/// `(k·p + i) mod P`: a destination sequence stored once and reused for every block.
fn split_blocks(
    len: usize,
    big: usize,
    small: usize,
    procs: usize,
    p: usize,
) -> Vec<Vec<(usize, usize)>> {
    let k = big / small;
    let mut runs = vec![Vec::new(); procs];
    let peers: Vec<usize> = (0..k).map(|i| (k * p + i) % procs).collect();
    for j in 0..len.div_ceil(big) {
        for (i, &q) in peers.iter().enumerate() {
            let start = j * big + i * small;
            if start >= len {
                break;
            }
            push(&mut runs[q], start, small.min(len - start));
        }
    }
    runs
}

/// Per peer, the runs of a local array of `len` items in blocks of `block` items whose peers
/// repeat with period `k`: block `l` goes to (or comes from) `⌊(l·P + p)/k⌋ mod P`, a sequence
/// of period `k` stored once when `k ≤ P` and `P mod k = 0`.
fn periodic_blocks(
    len: usize,
    block: usize,
    k: usize,
    procs: usize,
    p: usize,
) -> Vec<Vec<(usize, usize)>> {
    let mut runs = vec![Vec::new(); procs];
    let stored = k <= procs && procs.is_multiple_of(k);
    let seq: Vec<usize> = if stored {
        (0..k).map(|i| (p / k + i * (procs / k)) % procs).collect()
    } else {
        Vec::new()
    };
    for l in 0..len.div_ceil(block) {
        let q = if stored {
            seq[l % k]
        } else {
            ((l * procs + p) / k) % procs
        };
        push(&mut runs[q], l * block, block.min(len - l * block));
    }
    runs
}

impl Phase {
    /// The phase from cyclic(x) to cyclic(y) of `n` items for process `p` of `procs`, its runs
    /// made by `sends` and `recvs` from the local lengths of the source and destination arrays.
    fn new(
        n: usize,
        procs: usize,
        x: usize,
        y: usize,
        p: usize,
        sends: impl FnOnce(usize) -> Vec<Vec<(usize, usize)>>,
        recvs: impl FnOnce(usize) -> Vec<Vec<(usize, usize)>>,
    ) -> Result<Phase> {
        let (from, to) = maps(n, procs, x, y)?;
        let (ls, ld) = (from.local_len(p), to.local_len(p));
        Ok(Phase {
            x,
            y,
            src_len: ls,
            dst_len: ld,
            sends: sends(ls),
            recvs: recvs(ld),
        })
    }
}

/// KY_TO_Y (x = k·y) for process `p` (Fig. 2): every x-block splits into `k` y-blocks sent
/// to a stored sequence; the sources of consecutive y-blocks repeat with period `k`.
fn ky_to_y(n: usize, procs: usize, x: usize, y: usize, p: usize) -> Result<Phase> {
    Phase::new(
        n,
        procs,
        x,
        y,
        p,
        |ls| split_blocks(ls, x, y, procs, p),
        |ld| periodic_blocks(ld, y, x / y, procs, p),
    )
}

/// X_TO_KX (y = k·x) for process `p` (Fig. 5): the reverse of [`ky_to_y`], the destinations
/// of consecutive x-blocks repeating with period `k`, every y-block gathered from `k`
/// x-blocks of a stored sequence of sources.
fn x_to_kx(n: usize, procs: usize, x: usize, y: usize, p: usize) -> Result<Phase> {
    Phase::new(
        n,
        procs,
        x,
        y,
        p,
        |ls| periodic_blocks(ls, x, y / x, procs, p),
        |ld| split_blocks(ld, y, x, procs, p),
    )
}

/// The general method: per element, global index then owner (§5.1).
fn general(n: usize, procs: usize, x: usize, y: usize, p: usize) -> Result<Phase> {
    // Element by element: local index, global index, its owner on the other side.
    let owners = |len: usize, own: usize, other: usize| {
        let mut runs = vec![Vec::new(); procs];
        for i in 0..len {
            let g = i % own + ((i / own) * procs + p) * own;
            push(&mut runs[(g / other) % procs], i, 1);
        }
        runs
    };
    Phase::new(
        n,
        procs,
        x,
        y,
        p,
        |ls| owners(ls, x, y),
        |ld| owners(ld, y, x),
    )
}

/// The phases of `method` for process `p` of `procs`, redistributing `n` items from
/// cyclic(x) to cyclic(y).
pub fn plan_phases(
    method: ThakurMethod,
    n: usize,
    procs: usize,
    x: usize,
    y: usize,
    p: usize,
) -> Result<Vec<Phase>> {
    if x == 0 || y == 0 || n == 0 || procs == 0 || p >= procs {
        return Err(RedistError::BadDistribution {
            reason: format!(
                "cyclic({x}) -> cyclic({y}) of {n} items on process {p} of {procs}: sizes must be ≥ 1"
            ),
        });
    }
    if !method.applies(x, y) {
        return Err(RedistError::BadDistribution {
            reason: format!(
                "{method} needs {} but got cyclic({x}) -> cyclic({y})",
                if method == ThakurMethod::KyToY {
                    "x = k·y"
                } else {
                    "y = k·x"
                }
            ),
        });
    }
    Ok(match method {
        ThakurMethod::KyToY => vec![ky_to_y(n, procs, x, y, p)?],
        ThakurMethod::XToKx => vec![x_to_kx(n, procs, x, y, p)?],
        ThakurMethod::General => vec![general(n, procs, x, y, p)?],
        ThakurMethod::Gcd => {
            let m = gcd(x, y);
            vec![ky_to_y(n, procs, x, m, p)?, x_to_kx(n, procs, m, y, p)?]
        }
        ThakurMethod::Lcm => {
            let m = x / gcd(x, y) * y;
            vec![x_to_kx(n, procs, x, m, p)?, ky_to_y(n, procs, m, y, p)?]
        }
    })
}

fn runs_len(runs: &[(usize, usize)]) -> usize {
    runs.iter().map(|r| r.1).sum()
}

/// How a local array is seen by a method along its axis: `outer` lines of `len` items (the
/// redistributed axis) of `inner` elements each, C order. The 1-D case is `outer = inner = 1`.
#[derive(Debug, Clone, Copy)]
struct Lines {
    outer: usize,
    inner: usize,
}

impl Lines {
    const ONE: Lines = Lines { outer: 1, inner: 1 };

    /// Elements of a message whose runs along the axis hold `items` items.
    fn message_len(self, items: usize) -> usize {
        self.outer * items * self.inner
    }
}

/// Packs the runs (along the axis, `len` items long locally) of every line, line by line.
fn pack<T: Copy>(runs: &[(usize, usize)], lines: Lines, len: usize, src: &[T], out: &mut [T]) {
    let (mut pos, w) = (0, lines.inner);
    for o in 0..lines.outer {
        for &(s, n) in runs {
            let from = (o * len + s) * w;
            out[pos..pos + n * w].copy_from_slice(&src[from..from + n * w]);
            pos += n * w;
        }
    }
}

/// The inverse of [`pack`].
fn unpack<T: Copy>(runs: &[(usize, usize)], lines: Lines, len: usize, msg: &[T], dst: &mut [T]) {
    let (mut pos, w) = (0, lines.inner);
    for o in 0..lines.outer {
        for &(s, n) in runs {
            let to = (o * len + s) * w;
            dst[to..to + n * w].copy_from_slice(&msg[pos..pos + n * w]);
            pos += n * w;
        }
    }
}

/// Runs `method` for every process inside one process: `src[p]` is process p's cyclic(x)
/// local array; returns every cyclic(y) local array.
pub fn simulate<T: Copy + Default>(
    method: ThakurMethod,
    n: usize,
    procs: usize,
    x: usize,
    y: usize,
    src: &[Vec<T>],
) -> Result<Vec<Vec<T>>> {
    let plans: Vec<Vec<Phase>> = (0..procs)
        .map(|p| plan_phases(method, n, procs, x, y, p))
        .collect::<Result<_>>()?;
    let mut cur: Vec<Vec<T>> = src.to_vec();
    for phase in 0..plans[0].len() {
        let mut next: Vec<Vec<T>> = plans
            .iter()
            .map(|pl| vec![T::default(); pl[phase].dst_len])
            .collect();
        for (q, pl) in plans.iter().enumerate() {
            for (s, plan_s) in plans.iter().enumerate() {
                let runs = &plan_s[phase].sends[q];
                let mut msg = vec![T::default(); runs_len(runs)];
                pack(runs, Lines::ONE, plan_s[phase].src_len, &cur[s], &mut msg);
                assert_eq!(msg.len(), runs_len(&pl[phase].recvs[s]));
                unpack(
                    &pl[phase].recvs[s],
                    Lines::ONE,
                    pl[phase].dst_len,
                    &msg,
                    &mut next[q],
                );
            }
        }
        cur = next;
    }
    Ok(cur)
}

/// Redistributes this process's cyclic(x) local array `src` of an `n`-item array into its
/// cyclic(y) local array `dst` on `comm` with `method` and `receive`, computing the
/// communication sets on the way (as the paper does; this allocates its message buffers).
/// Collective over `comm`; the ranks agree on the buffer lengths first (one small
/// `MPI_Allreduce`: a wrong length on any rank is [`RedistError::CallBufferLength`] on all).
#[allow(clippy::too_many_arguments)]
pub fn redistribute<T: Element, C: Communicator>(
    comm: &C,
    method: ThakurMethod,
    receive: Receive,
    n: usize,
    x: usize,
    y: usize,
    src: &[T],
    dst: &mut [T],
) -> Result<()> {
    let (procs, p) = (comm.size() as usize, comm.rank() as usize);
    if n > MPI_MAX_COUNT {
        // One message per peer with an int count; decided from `n`, so every rank agrees.
        return Err(RedistError::CountOverflow {
            elements: n,
            limit: MPI_MAX_COUNT,
        });
    }
    let phases = plan_phases(method, n, procs, x, y, p)?;
    let (first, last) = (&phases[0], &phases[phases.len() - 1]);
    let checks = [
        ("source", first.src_len, src.len()),
        ("destination", last.dst_len, dst.len()),
    ];
    crate::comm::agree_buffers(comm, &checks, true)?;
    run_phases(comm, &phases, receive, Lines::ONE, src, dst)
}

/// Runs the phases of one process along an axis seen as `lines`, through a temporary array
/// between phases.
fn run_phases<T: Element, C: Communicator>(
    comm: &C,
    phases: &[Phase],
    receive: Receive,
    lines: Lines,
    src: &[T],
    dst: &mut [T],
) -> Result<()> {
    let last = phases.len() - 1;
    let mut tmp: Vec<T> = Vec::new();
    for (i, ph) in phases.iter().enumerate() {
        let input: &[T] = if i == 0 { src } else { &tmp };
        if input.len() != lines.message_len(ph.src_len) {
            return Err(RedistError::BufferLength {
                buffer: "source",
                expected: lines.message_len(ph.src_len),
                actual: input.len(),
            });
        }
        if i == last {
            if dst.len() != lines.message_len(ph.dst_len) {
                return Err(RedistError::BufferLength {
                    buffer: "destination",
                    expected: lines.message_len(ph.dst_len),
                    actual: dst.len(),
                });
            }
            exchange(comm, ph, receive, lines, input, dst)?;
        } else {
            let mut out = vec![T::default(); lines.message_len(ph.dst_len)];
            exchange(comm, ph, receive, lines, input, &mut out)?;
            tmp = out;
        }
    }
    Ok(())
}

/// A multi-dimensional redistribution that changes one axis from cyclic(x) to cyclic(y) and
/// leaves every other axis, the grid and its order as they are: Thakur's 1-D methods apply
/// along that axis (Thakur et al. "per axis"), inside each group of processes that share their
/// other grid coordinates, moving whole lines of the other axes. Pure; see
/// [`AxisMethod::new`] and [`redistribute_axis`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisMethod {
    from: DistArray,
    to: DistArray,
    /// The method.
    pub method: ThakurMethod,
    /// The redistributed axis.
    pub axis: usize,
    /// Its grid dimension.
    pub grid_dim: usize,
    /// Processes along it.
    pub procs: usize,
    /// Source block size (`block` is cyclic(⌈M/P⌉), `cyclic` is cyclic(1)).
    pub x: usize,
    /// Destination block size.
    pub y: usize,
}

impl AxisMethod {
    /// Checks that `from → to` changes at most one axis, from one regular block-cyclic form
    /// to another over the same processes, on the same grid in the same order, and that
    /// `method` applies to its block sizes. Uses global arguments only (every rank agrees).
    ///
    /// ```
    /// use redist::dist::DistArray;
    /// use redist::cyclic::thakur::{AxisMethod, ThakurMethod};
    /// let shape = [100, 30];
    /// let from = DistArray::parse_spec("grid=3x2,dist=cyclic(15),cyclic(4)", &shape).unwrap();
    /// let to = DistArray::parse_spec("grid=3x2,dist=cyclic(10),cyclic(4)", &shape).unwrap();
    /// let a = AxisMethod::new(&from, &to, ThakurMethod::Lcm).unwrap();
    /// assert_eq!((a.axis, a.procs, a.x, a.y), (0, 3, 15, 10));
    /// // Two axes change: not a per-axis redistribution.
    /// let other = DistArray::parse_spec("grid=3x2,dist=cyclic(10),cyclic(2)", &shape).unwrap();
    /// assert!(AxisMethod::new(&from, &other, ThakurMethod::Lcm).is_err());
    /// // KY_TO_Y needs x = k·y.
    /// assert!(AxisMethod::new(&to, &from, ThakurMethod::KyToY).is_err());
    /// ```
    pub fn new(from: &DistArray, to: &DistArray, method: ThakurMethod) -> Result<Self> {
        let bad = |what: String| {
            Err(RedistError::DistMismatch {
                what: format!(
                    "Thakur's {method} per axis needs {what}; got {} -> {}",
                    from.spec(),
                    to.spec()
                ),
            })
        };
        if !from.is_plain() || !to.is_plain() {
            return bad(
                "grids on ranks 0.., first blocks on process 0 and C-order local arrays".into(),
            );
        }
        if from.shape() != to.shape() {
            return bad("one global shape".into());
        }
        if from.grid() != to.grid() || from.order() != to.order() {
            return bad("one grid in one order".into());
        }
        let changed: Vec<usize> = (0..from.shape().len())
            .filter(|&a| from.axis_maps()[a] != to.axis_maps()[a])
            .collect();
        if changed.len() > 1 {
            return bad(format!(
                "one changed axis (the others unchanged), not axes {changed:?}"
            ));
        }
        // With nothing changed, any distributed axis will do (the methods then copy).
        let axis = match changed.first() {
            Some(&a) => a,
            None => match (0..from.shape().len()).find(|&a| from.dists()[a] != AxisDist::Local) {
                Some(a) => a,
                None => return bad("a distributed axis".into()),
            },
        };
        let (fm, tm) = (&from.axis_maps()[axis], &to.axis_maps()[axis]);
        let regular = |d: AxisDist| !matches!(d, AxisDist::Balanced | AxisDist::Local);
        if !regular(fm.dist()) || !regular(tm.dist()) {
            return bad(format!(
                "block, cyclic or cyclic(r) on both sides of axis {axis}, not {} -> {}",
                fm.dist(),
                tm.dist()
            ));
        }
        let (x, y) = (fm.block_size().unwrap(), tm.block_size().unwrap());
        if !method.applies(x, y) {
            return bad(format!(
                "{} on axis {axis}, but it is cyclic({x}) -> cyclic({y})",
                if method == ThakurMethod::KyToY {
                    "x = k·y"
                } else {
                    "y = k·x"
                }
            ));
        }
        let grid_dim = from.dists()[..axis]
            .iter()
            .filter(|&&d| d != AxisDist::Local)
            .count();
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            method,
            axis,
            grid_dim,
            procs: fm.procs(),
            x,
            y,
        })
    }

    /// The source distribution.
    pub fn from(&self) -> &DistArray {
        &self.from
    }

    /// The destination distribution.
    pub fn to(&self) -> &DistArray {
        &self.to
    }
}

/// Redistributes this rank's local array `src` of `plan.from()` into its local array `dst`
/// of `plan.to()` (C order over local indices, as [`crate::dist`] stores them) with Thakur's
/// `plan.method` along `plan.axis`, inside the group of ranks that share their other grid
/// coordinates (an `MPI_Comm_split` per call; ranks outside the grid only take part in the
/// split). Each message carries whole lines of the other axes. Collective over `comm`, whose
/// size must be at least the grid's; computes its sets on the way, as the 1-D methods do.
/// The ranks agree on the buffer lengths first, as [`redistribute`] does.
///
/// ```no_run
/// use redist::dist::DistArray;
/// use redist::cyclic::thakur::{redistribute_axis, AxisMethod, Receive, ThakurMethod};
/// use mpi::topology::Communicator;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let (p, rank) = (world.size() as usize, world.rank() as usize);
/// let shape = [64, 1000];
/// let from = DistArray::parse_spec(&format!("grid={p},dist=*,cyclic(15)"), &shape).unwrap();
/// let to = DistArray::parse_spec(&format!("grid={p},dist=*,cyclic(10)"), &shape).unwrap();
/// let plan = AxisMethod::new(&from, &to, ThakurMethod::Lcm).unwrap();
/// let src = vec![1.0f64; from.local_len(rank)];
/// let mut dst = vec![0.0; to.local_len(rank)];
/// redistribute_axis(&world, &plan, Receive::Async, &src, &mut dst).unwrap();
/// ```
pub fn redistribute_axis<T: Element, C: Communicator>(
    comm: &C,
    plan: &AxisMethod,
    receive: Receive,
    src: &[T],
    dst: &mut [T],
) -> Result<()> {
    use mpi::topology::Color;
    let (size, rank) = (comm.size() as usize, comm.rank() as usize);
    let (from, to) = (&plan.from, &plan.to);
    if from.grid_size() > size {
        return Err(RedistError::BadDistribution {
            reason: format!(
                "the grid {:?} needs {} processes but the communicator has {size}",
                from.grid(),
                from.grid_size()
            ),
        });
    }
    let n = from.shape()[plan.axis];
    if from.global_len() > MPI_MAX_COUNT {
        return Err(RedistError::CountOverflow {
            elements: from.global_len(),
            limit: MPI_MAX_COUNT,
        });
    }
    let coords = from.coords_of(rank);
    // Agreed over `comm` before the split, which ranks outside the grid leave at once.
    let checks = [
        ("source", from.local_len(rank), src.len()),
        ("destination", to.local_len(rank), dst.len()),
    ];
    let checks = if coords.is_some() { &checks[..] } else { &[] };
    crate::comm::agree_buffers(comm, checks, true)?;
    // The group: same grid coordinates except along the axis; ordered by that coordinate.
    let (color, key) = match &coords {
        Some(c) => {
            let others = c
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != plan.grid_dim)
                .fold(0usize, |acc, (j, &v)| acc * from.grid()[j] + v);
            (Color::with_value(others as i32), c[plan.grid_dim] as i32)
        }
        None => (Color::undefined(), 0),
    };
    let group = comm.split_by_color_with_key(color, key);
    let (Some(group), Some(c)) = (group, coords) else {
        return Ok(());
    };
    let local = from.local_shape(rank);
    let lines = Lines {
        outer: local[..plan.axis].iter().product(),
        inner: local[plan.axis + 1..].iter().product(),
    };
    let phases = plan_phases(plan.method, n, plan.procs, plan.x, plan.y, c[plan.grid_dim])?;
    run_phases(&group, &phases, receive, lines, src, dst)
}

/// The message tag of the Thakur exchanges.
const TAG: i32 = 72;

fn exchange<T: Element, C: Communicator>(
    comm: &C,
    ph: &Phase,
    receive: Receive,
    lines: Lines,
    src: &[T],
    dst: &mut [T],
) -> Result<()> {
    let runs_len = |r: &[(usize, usize)]| lines.message_len(runs_len(r));
    let (procs, me) = (comm.size() as usize, comm.rank() as usize);
    let raw = comm.as_raw();
    let send_offsets: Vec<usize> = ph
        .sends
        .iter()
        .scan(0, |acc, r| {
            let o = *acc;
            *acc += runs_len(r);
            Some(o)
        })
        .collect();
    let recv_offsets: Vec<usize> = ph
        .recvs
        .iter()
        .scan(0, |acc, r| {
            let o = *acc;
            *acc += runs_len(r);
            Some(o)
        })
        .collect();
    let mut send = vec![T::default(); ph.sends.iter().map(|r| runs_len(r)).sum()];
    let mut recv = vec![T::default(); ph.recvs.iter().map(|r| runs_len(r)).sum()];
    let mut rreq = Vec::new();
    let mut rpeer = Vec::new();
    for q in (0..procs).filter(|&q| q != me) {
        let len = runs_len(&ph.recvs[q]);
        if len > 0 {
            let mut r = null_request();
            // SAFETY: the message lies in `recv`, which outlives the wait below.
            unsafe {
                irecv(
                    recv.as_mut_ptr().add(recv_offsets[q]),
                    len,
                    q,
                    TAG,
                    raw,
                    &mut r,
                )?
            };
            rreq.push(r);
            rpeer.push(q);
        }
    }
    let mut sreq = Vec::new();
    for q in 0..procs {
        let len = runs_len(&ph.sends[q]);
        let out = &mut send[send_offsets[q]..send_offsets[q] + len];
        pack(&ph.sends[q], lines, ph.src_len, src, out);
        if q == me {
            unpack(&ph.recvs[q], lines, ph.dst_len, out, dst);
        } else if len > 0 {
            let mut r = null_request();
            // SAFETY: `send` is not touched until the Waitall below.
            unsafe { isend(out.as_ptr(), len, q, TAG, raw, &mut r)? };
            sreq.push(r);
        }
    }
    match receive {
        Receive::Sync => {
            // SAFETY: all requests are live.
            unsafe { wait_all(&mut rreq)? };
            for &q in &rpeer {
                let len = runs_len(&ph.recvs[q]);
                unpack(
                    &ph.recvs[q],
                    lines,
                    ph.dst_len,
                    &recv[recv_offsets[q]..recv_offsets[q] + len],
                    dst,
                );
            }
        }
        Receive::Async => {
            for _ in 0..rreq.len() {
                // SAFETY: requests are live or null.
                let q = rpeer[unsafe { wait_any(&mut rreq)? }];
                let len = runs_len(&ph.recvs[q]);
                unpack(
                    &ph.recvs[q],
                    lines,
                    ph.dst_len,
                    &recv[recv_offsets[q]..recv_offsets[q] + len],
                    dst,
                );
            }
        }
    }
    // SAFETY: all send requests are live.
    unsafe { wait_all(&mut sreq)? };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cyclic::plan::RedistPlan;
    use crate::dist::DistArray;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Every applicable method agrees with the general planner, for random (n, P, x, y).
        #[test]
        fn methods_agree_with_general_planner(
            n in 1usize..400, procs in 1usize..9, x in 1usize..16, k in 1usize..6, mult in any::<bool>(),
            y0 in 1usize..16,
        ) {
            // Half the cases have x, y multiples of each other, so KY_TO_Y / X_TO_KX apply.
            let y = if mult { x * k } else { y0 };
            let spec = |b: usize| DistArray::parse_spec(&format!("grid={procs},dist=cyclic({b})"), &[n]).unwrap();
            let (from, to) = (spec(x), spec(y));
            let src: Vec<Vec<u32>> = (0..procs).map(|r| {
                let mut v = vec![0; from.local_len(r)];
                from.fill_index_valued(r, &mut v, |g| g as u32);
                v
            }).collect();
            let want = RedistPlan::new(&from, &to, procs).unwrap().simulate(&src);
            for m in ThakurMethod::ALL {
                for (a, b) in [(x, y), (y, x)] {
                    if !m.applies(a, b) { continue; }
                    let (sa, sb) = (spec(a), spec(b));
                    let src: Vec<Vec<u32>> = (0..procs).map(|r| {
                        let mut v = vec![0; sa.local_len(r)];
                        sa.fill_index_valued(r, &mut v, |g| g as u32);
                        v
                    }).collect();
                    let got = simulate(m, n, procs, a, b, &src).unwrap();
                    let want_ab = if (a, b) == (x, y) { want.clone() } else {
                        RedistPlan::new(&sa, &sb, procs).unwrap().simulate(&src)
                    };
                    prop_assert_eq!(got, want_ab, "{} cyclic({})->cyclic({}) n={} P={}", m, a, b, n, procs);
                }
            }
        }
    }

    #[test]
    fn inapplicable_methods_are_errors() {
        assert!(plan_phases(ThakurMethod::KyToY, 100, 4, 3, 2, 0).is_err());
        assert!(plan_phases(ThakurMethod::XToKx, 100, 4, 3, 2, 0).is_err());
        assert!(plan_phases(ThakurMethod::Lcm, 100, 4, 3, 2, 0).is_ok());
        assert_eq!(
            plan_phases(ThakurMethod::Gcd, 100, 4, 15, 10, 1)
                .unwrap()
                .len(),
            2
        );
    }
}
