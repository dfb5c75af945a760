//! General redistribution between any two [`DistArray`]s of one global array over one
//! communicator (Dongarra et al., ScaLAPACK's `pdgemr2d` problem): planning, with no MPI.
//!
//! **Per axis** ([`AxisOverlap`]), the two block patterns are scanned together like a merge
//! (Dongarra et al. §3.1): a cursor walks the global index, stopping at every block boundary of
//! either distribution, and each stretch between stops is one interval with a fixed source
//! process and destination process. When both distributions are regular the pattern repeats
//! with period `lcm(r·P, r'·P')`, so only one period is scanned and the rest is obtained by
//! shifting local offsets (§3.3). Adjacent intervals of one process pair that are contiguous
//! on both sides are merged.
//!
//! **Across axes** (§3.2) the message from rank `s` to rank `d` is the Cartesian product of
//! the per-axis interval lists of their coordinates: a compact array in C order over the
//! concatenated intervals, packed into one message per peer. Any rank can compute any pair's
//! sets ([`RedistPlan::message`]).
//!
//! [`RedistPlan::simulate`] runs the plan for every rank inside one process with the same
//! kernels the MPI schedules use ([`crate::redistribution`]).
//!
//! ```
//! use redist::dist::DistArray;
//! use redist::cyclic::plan::RedistPlan;
//! let shape = [10, 7];
//! let from = DistArray::parse_spec("grid=2x3,dist=cyclic(2),cyclic(3)", &shape).unwrap();
//! let to = DistArray::parse_spec("grid=3x2,order=col,dist=block,balanced", &shape).unwrap();
//! let plan = RedistPlan::new(&from, &to, 6).unwrap();
//! let src: Vec<Vec<u64>> = (0..6).map(|r| {
//!     let mut v = vec![0; from.local_len(r)];
//!     from.fill_index_valued(r, &mut v, |g| g);
//!     v
//! }).collect();
//! let dst = plan.simulate(&src);
//! for r in 0..6 {
//!     let mut want = vec![0; to.local_len(r)];
//!     to.fill_index_valued(r, &mut want, |g| g);
//!     assert_eq!(dst[r], want);
//! }
//! ```

use super::copy::{row_order, CopyMap, OwnCopy, RankRedist, RowTables, Runs, Side, Transfer};
use super::gcd;
use crate::dist::{AxisMap, DistArray};
use crate::error::{RedistError, Result};

/// One interval of an axis: `len` items at local index `src` on the source process and `dst`
/// on the destination process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Local index on the source process.
    pub src: usize,
    /// Local index on the destination process.
    pub dst: usize,
    /// Number of items.
    pub len: usize,
}

/// Per axis, the intervals each (source process, destination process) pair exchanges, in
/// increasing global order. Processes are per-axis process indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisOverlap {
    src_procs: usize,
    dst_procs: usize,
    /// `pairs[s * dst_procs + d]`.
    pairs: Vec<Vec<Interval>>,
    scanned: usize,
}

impl AxisOverlap {
    /// Scans both patterns (one period when both are regular). Both maps must have one
    /// length.
    ///
    /// ```
    /// use redist::dist::{AxisDist, AxisMap};
    /// use redist::cyclic::plan::{AxisOverlap, Interval};
    /// let a = AxisMap::new(AxisDist::BlockCyclic(4), 16, 2).unwrap();
    /// let b = AxisMap::new(AxisDist::BlockCyclic(2), 16, 2).unwrap();
    /// let o = AxisOverlap::new(&a, &b);
    /// // Process 0 holds 0..4 and 8..12; 0..2 and 8..10 go to process 0 of cyclic(2).
    /// assert_eq!(o.intervals(0, 0), &[Interval { src: 0, dst: 0, len: 2 },
    ///                                 Interval { src: 4, dst: 4, len: 2 }]);
    /// assert_eq!(o.scanned(), 8); // one period: lcm(4·2, 2·2)
    /// ```
    pub fn new(from: &AxisMap, to: &AxisMap) -> Self {
        assert_eq!(from.len(), to.len(), "axis lengths differ");
        Self::window(from, 0, to, 0, from.len())
    }

    /// Scans the window of `len` indices starting at `from_start` on the source axis and at
    /// `to_start` on the destination axis (window index `k` is global index `from_start + k`
    /// of the source and `to_start + k` of the destination), one joint period when both
    /// patterns are regular. The intervals hold local indices of the whole axes.
    ///
    /// ```
    /// use redist::dist::{AxisDist, AxisMap};
    /// use redist::cyclic::plan::{AxisOverlap, Interval};
    /// let a = AxisMap::new(AxisDist::BlockCyclic(2), 10, 2).unwrap();
    /// let b = AxisMap::new(AxisDist::BlockCyclic(3), 9, 1).unwrap();
    /// // a[3..7] → b[1..5]: global 3 is process 1's local 1, 4..6 process 0's local 2..4.
    /// let o = AxisOverlap::window(&a, 3, &b, 1, 4);
    /// assert_eq!(o.intervals(1, 0), &[Interval { src: 1, dst: 1, len: 1 },
    ///                                 Interval { src: 2, dst: 4, len: 1 }]);
    /// assert_eq!(o.intervals(0, 0), &[Interval { src: 2, dst: 2, len: 2 }]);
    /// ```
    pub fn window(
        from: &AxisMap,
        from_start: usize,
        to: &AxisMap,
        to_start: usize,
        len: usize,
    ) -> Self {
        assert!(from_start + len <= from.len() && to_start + len <= to.len());
        let (sp, dp) = (from.procs(), to.procs());
        let mut pairs = vec![Vec::new(); sp * dp];
        // The period of the joint pattern, when both are regular and it is shorter than M.
        let period = match (from.period(), to.period()) {
            (Some(a), Some(b)) => (a / gcd(a, b)).checked_mul(b).filter(|&l| l < len),
            _ => None,
        };
        let scan_end = period.unwrap_or(len);
        let mut k = 0;
        while k < scan_end {
            let (ga, gb) = (from_start + k, to_start + k);
            let (ls, ld) = (from.locate(ga), to.locate(gb));
            let end = (block_end(from, ga) - from_start)
                .min(block_end(to, gb) - to_start)
                .min(scan_end);
            push_merged(
                &mut pairs[ls.process * dp + ld.process],
                Interval {
                    src: from.local_index(ga),
                    dst: to.local_index(gb),
                    len: end - k,
                },
            );
            k = end;
        }
        if let Some(period) = period {
            // Each period holds period/T full blocks of every process on either side.
            let (ts, td) = (from.period().unwrap(), to.period().unwrap());
            let src_shift = period / ts * from.block_size().unwrap();
            let dst_shift = period / td * to.block_size().unwrap();
            // Local order is global order, so each source process's part of the window ends
            // at its count of items below the window's end.
            let src_len: Vec<usize> = (0..sp)
                .map(|s| from.local_len_below(s, from_start + len))
                .collect();
            for s in 0..sp {
                for d in 0..dp {
                    let base = std::mem::take(&mut pairs[s * dp + d]);
                    let mut out = Vec::new();
                    'periods: for k in 0.. {
                        for iv in &base {
                            let src = iv.src + k * src_shift;
                            let dst = iv.dst + k * dst_shift;
                            // Clip at the end of the window: the shift is one period on
                            // both sides, so the items in it are those below the source's
                            // local end of the window.
                            if src >= src_len[s] {
                                break 'periods;
                            }
                            push_merged(
                                &mut out,
                                Interval {
                                    src,
                                    dst,
                                    len: iv.len.min(src_len[s] - src),
                                },
                            );
                        }
                        if base.is_empty() {
                            break;
                        }
                    }
                    pairs[s * dp + d] = out;
                }
            }
        }
        Self {
            src_procs: sp,
            dst_procs: dp,
            pairs,
            scanned: scan_end,
        }
    }

    /// The intervals source process `s` sends to destination process `d`.
    pub fn intervals(&self, s: usize, d: usize) -> &[Interval] {
        &self.pairs[s * self.dst_procs + d]
    }

    /// Number of global indices the merge scanned (the period, or the whole axis).
    pub fn scanned(&self) -> usize {
        self.scanned
    }

    /// Number of source processes.
    pub fn src_procs(&self) -> usize {
        self.src_procs
    }
}

fn block_end(map: &AxisMap, g: usize) -> usize {
    match map.block_size() {
        Some(r) => ((g / r + 1) * r).min(map.len()),
        None => {
            let p = map.owner(g);
            map.global_index(p, map.local_len(p) - 1) + 1
        }
    }
}

fn push_merged(list: &mut Vec<Interval>, iv: Interval) {
    if let Some(last) = list.last_mut() {
        if last.src + last.len == iv.src && last.dst + last.len == iv.dst {
            last.len += iv.len;
            return;
        }
    }
    list.push(iv);
}

/// The message from one rank to another: one interval list per axis; the message is the
/// C-order product of the lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<'a> {
    /// Per axis, the intervals (local indices on both sides).
    pub axes: Vec<&'a [Interval]>,
}

impl Message<'_> {
    /// The message's extent per axis (sum of interval lengths).
    pub fn extent(&self) -> Vec<usize> {
        self.axes
            .iter()
            .map(|ivs| ivs.iter().map(|i| i.len).sum())
            .collect()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.extent().iter().product()
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A redistribution between two distributions of one array over `ranks` processes. Pure data.
#[derive(Debug, Clone)]
pub struct RedistPlan {
    from: DistArray,
    to: DistArray,
    ranks: usize,
    axes: Vec<AxisOverlap>,
    /// The axes in the order messages are laid out, slowest first (the source's storage
    /// order, so that packing reads runs of its contiguous axis).
    msg_order: Vec<usize>,
}

impl RedistPlan {
    /// Plans `from → to` over a communicator of `ranks` processes. Both must describe the same
    /// global shape, and both grids must fit in `ranks`.
    pub fn new(from: &DistArray, to: &DistArray, ranks: usize) -> Result<Self> {
        if from.shape() != to.shape() {
            return Err(RedistError::DistMismatch {
                what: format!(
                    "global shapes {:?} and {:?} differ",
                    from.shape(),
                    to.shape()
                ),
            });
        }
        let zeros = vec![0; from.shape().len()];
        Self::section(from, &zeros, to, &zeros, from.shape(), ranks)
    }

    /// Plans the copy of the section of `extent` starting at `from_start` of `from` onto the
    /// section of the same extent starting at `to_start` of `to` (ScaLAPACK's submatrices
    /// `A(IA:IA+M-1, JA:JA+N-1)` and `B(IB:…, JB:…)`, 0-based), over a communicator of
    /// `ranks` processes; everything else of `to` keeps its values. An extent may be 0 (then
    /// nothing moves).
    ///
    /// ```
    /// use redist::dist::DistArray;
    /// use redist::cyclic::plan::RedistPlan;
    /// let a = DistArray::parse_spec("grid=2x2,dist=cyclic(2),cyclic(3)", &[9, 8]).unwrap();
    /// let b = DistArray::parse_spec("grid=1x3,first=0x2,dist=cyclic(4),cyclic(1)", &[6, 6]).unwrap();
    /// // a[2..7, 1..5] → b[1..6, 2..6]
    /// let plan = RedistPlan::section(&a, &[2, 1], &b, &[1, 2], &[5, 4], 4).unwrap();
    /// let total: usize = (0..4).flat_map(|s| (0..4).map(move |d| (s, d)))
    ///     .filter_map(|(s, d)| plan.message(s, d).map(|m| m.len())).sum();
    /// assert_eq!(total, 20);
    /// ```
    pub fn section(
        from: &DistArray,
        from_start: &[usize],
        to: &DistArray,
        to_start: &[usize],
        extent: &[usize],
        ranks: usize,
    ) -> Result<Self> {
        let d = extent.len();
        if from.shape().len() != d || to.shape().len() != d {
            return Err(RedistError::DistMismatch {
                what: format!(
                    "a {d}-dimensional section of arrays of shapes {:?} and {:?}",
                    from.shape(),
                    to.shape()
                ),
            });
        }
        for (name, array, start) in [("source", from, from_start), ("destination", to, to_start)] {
            let outside = start.len() != d
                || (0..d).any(|a| match start[a].checked_add(extent[a]) {
                    Some(end) => end > array.shape()[a],
                    None => true,
                });
            if outside {
                return Err(RedistError::DistMismatch {
                    what: format!(
                        "the {name} section at {start:?} of extent {extent:?} lies outside its \
                         array of shape {:?}",
                        array.shape()
                    ),
                });
            }
            if array.ranks_needed() > ranks {
                return Err(RedistError::BadDistribution {
                    reason: format!(
                        "the {name} grid {:?} needs {} processes but the communicator has {ranks}",
                        array.grid(),
                        array.ranks_needed()
                    ),
                });
            }
        }
        let axes = (0..d)
            .map(|a| {
                let (fm, tm) = (&from.axis_maps()[a], &to.axis_maps()[a]);
                AxisOverlap::window(fm, from_start[a], tm, to_start[a], extent[a])
            })
            .collect();
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            ranks,
            axes,
            msg_order: from.storage_order(),
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

    /// Number of processes of the communicator.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The per-axis overlaps.
    pub fn axes(&self) -> &[AxisOverlap] {
        &self.axes
    }

    /// The message from rank `src` to rank `dst`, `None` when either is outside its grid or
    /// the message is empty.
    pub fn message(&self, src: usize, dst: usize) -> Option<Message<'_>> {
        let (cs, cd) = (self.from.axis_coords(src)?, self.to.axis_coords(dst)?);
        let axes: Vec<&[Interval]> = self
            .axes
            .iter()
            .zip(cs.iter().zip(&cd))
            .map(|(o, (&s, &d))| o.intervals(s, d))
            .collect();
        let m = Message { axes };
        (!m.is_empty()).then_some(m)
    }

    /// Elements that leave their rank (all messages except each rank's own part), summed.
    pub fn bytes_moved(&self, element_size: usize) -> usize {
        (0..self.ranks)
            .flat_map(|s| (0..self.ranks).map(move |d| (s, d)))
            .filter(|(s, d)| s != d)
            .filter_map(|(s, d)| self.message(s, d).map(|m| m.len()))
            .sum::<usize>()
            * element_size
    }

    /// This rank's part: what it sends to and receives from every rank, with the copy maps.
    pub fn for_rank(&self, rank: usize) -> RankRedist {
        self.for_rank_with(rank, RowTables::Auto)
    }

    fn for_rank_with(&self, rank: usize, tables: RowTables) -> RankRedist {
        let src_strides = self.from.local_strides(rank);
        let dst_strides = self.to.local_strides(rank);
        let order = &self.msg_order;
        let fast = order[order.len() - 1];
        // The own part pairs source and destination runs one to one: element runs on both
        // sides when either side's fastest message axis is strided.
        let own_runs = if src_strides[fast] != 1 || dst_strides[fast] != 1 {
            Runs::PerElement
        } else {
            Runs::PerInterval
        };
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        let mut own = None;
        let (mut send_len, mut recv_len) = (0, 0);
        for peer in 0..self.ranks {
            if let Some(m) = self.message(rank, peer) {
                if peer == rank {
                    // The direct copy pairs source and destination runs one to one.
                    let src = CopyMap::new(&m, &src_strides, order, Side::Src, own_runs);
                    let dst = CopyMap::new(&m, &dst_strides, order, Side::Dst, own_runs);
                    own = Some((src, dst));
                } else {
                    let map = CopyMap::new(&m, &src_strides, order, Side::Src, Runs::Merged);
                    let len = map.len;
                    sends.push(Transfer {
                        peer,
                        offset: send_len,
                        map,
                    });
                    send_len += len;
                }
            }
            if peer == rank {
                continue;
            }
            if let Some(m) = self.message(peer, rank) {
                let map = CopyMap::new(&m, &dst_strides, order, Side::Dst, Runs::Merged);
                let len = map.len;
                recvs.push(Transfer {
                    peer,
                    offset: recv_len,
                    map,
                });
                recv_len += len;
            }
        }
        let src_len = self.from.local_len(rank);
        let dst_len = self.to.local_len(rank);
        let own_copy = own.as_ref().map(|(s, d)| OwnCopy::new(s, d));
        let pack_rows = row_order(&sends, None, src_len, tables);
        let unpack_rows = row_order(&recvs, own.as_ref().map(|(s, d)| (d, s)), dst_len, tables);
        RankRedist {
            rank,
            src_len,
            dst_len,
            sends,
            recvs,
            own,
            own_copy,
            send_len,
            recv_len,
            pack_rows,
            unpack_rows,
        }
    }

    /// Runs the plan for every rank in one process: `src[r]` is rank r's source block; returns
    /// every rank's destination block. Uses the pack and unpack kernels of the MPI schedules.
    pub fn simulate<T: Copy + Default>(&self, src: &[Vec<T>]) -> Vec<Vec<T>> {
        self.simulate_with(src, RowTables::Auto)
    }

    fn simulate_with<T: Copy + Default>(&self, src: &[Vec<T>], tables: RowTables) -> Vec<Vec<T>> {
        let mut dst: Vec<Vec<T>> = (0..self.ranks)
            .map(|r| vec![T::default(); self.to.local_len(r)])
            .collect();
        self.simulate_into_with(src, &mut dst, tables);
        dst
    }

    /// [`RedistPlan::simulate`] into existing destination arrays `dst[r]` (what lies outside
    /// the destination section keeps its values).
    pub fn simulate_into<T: Copy + Default>(&self, src: &[Vec<T>], dst: &mut [Vec<T>]) {
        self.simulate_into_with(src, dst, RowTables::Auto)
    }

    fn simulate_into_with<T: Copy + Default>(
        &self,
        src: &[Vec<T>],
        dst: &mut [Vec<T>],
        tables: RowTables,
    ) {
        assert_eq!(src.len(), self.ranks);
        assert_eq!(dst.len(), self.ranks);
        let parts: Vec<RankRedist> = (0..self.ranks)
            .map(|r| self.for_rank_with(r, tables))
            .collect();
        let sendbufs: Vec<Vec<T>> = parts
            .iter()
            .map(|p| {
                let mut buf = vec![T::default(); p.send_len];
                p.pack_all(&src[p.rank], &mut buf);
                buf
            })
            .collect();
        for p in &parts {
            let mut recv = vec![T::default(); p.recv_len];
            for t in &p.recvs {
                let sender = &parts[t.peer];
                let st = sender.sends.iter().find(|s| s.peer == p.rank).unwrap();
                assert_eq!(st.map.len, t.map.len);
                recv[t.offset..t.offset + t.map.len]
                    .copy_from_slice(&sendbufs[t.peer][st.offset..st.offset + st.map.len]);
            }
            p.unpack_all_and_own(&src[p.rank], &recv, &mut dst[p.rank]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{AxisDist, GridOrder};
    use proptest::prelude::*;

    fn any_dist() -> impl Strategy<Value = AxisDist> {
        prop_oneof![
            Just(AxisDist::Block),
            Just(AxisDist::Balanced),
            Just(AxisDist::Cyclic),
            (1usize..9).prop_map(AxisDist::BlockCyclic),
            Just(AxisDist::Local),
        ]
    }

    fn any_array(shape: Vec<usize>, ranks: usize) -> impl Strategy<Value = DistArray> {
        let d = shape.len();
        (
            prop::collection::vec(any_dist(), d),
            prop::collection::vec(1usize..5, d),
            any::<bool>(),
        )
            .prop_map(move |(dists, g, col)| {
                // Shrink the grid until it fits in `ranks`.
                let mut grid: Vec<usize> = dists
                    .iter()
                    .zip(&g)
                    .filter(|(x, _)| **x != AxisDist::Local)
                    .map(|(_, &n)| n)
                    .collect();
                while grid.iter().product::<usize>() > ranks {
                    let i = (0..grid.len()).max_by_key(|&i| grid[i]).unwrap();
                    grid[i] -= 1;
                }
                let order = if col {
                    GridOrder::Column
                } else {
                    GridOrder::Row
                };
                DistArray::new(shape.clone(), grid, order, dists).unwrap()
            })
    }

    /// `plain` with random first processes, storage, leading dimension and ranks.
    fn generalize(
        plain: DistArray,
        ranks: usize,
        (firsts, col, pad, shuffle): (Vec<usize>, bool, usize, u64),
    ) -> DistArray {
        use crate::dist::Storage;
        let firsts = plain
            .grid()
            .iter()
            .zip(&firsts)
            .map(|(&g, &f)| f % g)
            .collect();
        let a = plain.with_first_procs(firsts).unwrap();
        let storage = if col {
            Storage::ColumnMajor
        } else {
            Storage::RowMajor
        };
        let d = a.shape().len();
        let fast = if col { 0 } else { d - 1 };
        let lead = (0..ranks).map(|r| a.local_shape(r)[fast]).max().unwrap() + pad;
        let a = a.with_storage(storage, (d > 1).then_some(lead)).unwrap();
        let mut pool: Vec<usize> = (0..ranks).collect();
        let mut s = shuffle;
        for i in (1..pool.len()).rev() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            pool.swap(i, (s >> 33) as usize % (i + 1));
        }
        pool.truncate(a.grid_size());
        a.with_ranks(pool).unwrap()
    }

    fn any_general(shape: Vec<usize>, ranks: usize) -> impl Strategy<Value = DistArray> {
        (
            any_array(shape.clone(), ranks),
            prop::collection::vec(0usize..4, shape.len()),
            any::<bool>(),
            0usize..3,
            any::<u64>(),
        )
            .prop_map(move |(a, f, col, pad, shuffle)| generalize(a, ranks, (f, col, pad, shuffle)))
    }

    /// The section copy checked element by element: every destination element in the section
    /// holds its source element's global index, every other one its old value.
    fn check_section(
        from: &DistArray,
        from_start: &[usize],
        to: &DistArray,
        to_start: &[usize],
        extent: &[usize],
        ranks: usize,
    ) -> std::result::Result<(), TestCaseError> {
        let plan = RedistPlan::section(from, from_start, to, to_start, extent, ranks).unwrap();
        let src = index_blocks(from, ranks);
        let old: Vec<Vec<u64>> = index_blocks(to, ranks)
            .into_iter()
            .map(|v| v.into_iter().map(|x| x ^ (1 << 60)).collect())
            .collect();
        let mut want = old.clone();
        let d = extent.len();
        let total: usize = extent.iter().product();
        for lin in 0..total {
            let (mut k, mut rest) = (vec![0; d], lin);
            for a in (0..d).rev() {
                k[a] = rest % extent[a];
                rest /= extent[a];
            }
            let ga: Vec<usize> = (0..d).map(|a| from_start[a] + k[a]).collect();
            let gb: Vec<usize> = (0..d).map(|a| to_start[a] + k[a]).collect();
            let value = ga
                .iter()
                .zip(from.shape())
                .fold(0u64, |acc, (&i, &n)| acc * n as u64 + i as u64);
            let (rank, off) = to.owner(&gb);
            want[rank][off] = value;
        }
        for tables in [RowTables::Auto, RowTables::Always, RowTables::Never] {
            let mut got = old.clone();
            plan.simulate_into_with(&src, &mut got, tables);
            prop_assert_eq!(
                &got,
                &want,
                "{} {:?} -> {} {:?} extent {:?} on {} ranks ({:?})",
                from.spec(),
                from_start,
                to.spec(),
                to_start,
                extent,
                ranks,
                tables
            );
        }
        Ok(())
    }

    fn index_blocks(a: &DistArray, ranks: usize) -> Vec<Vec<u64>> {
        (0..ranks)
            .map(|r| {
                let mut v = vec![u64::MAX; a.local_len(r)];
                a.fill_index_valued(r, &mut v, |g| g);
                v
            })
            .collect()
    }

    /// Every element sent exactly once, to the right rank and offset: the simulated
    /// destination equals the index-valued fill; and every global element is in exactly one
    /// message.
    fn check(
        from: &DistArray,
        to: &DistArray,
        ranks: usize,
    ) -> std::result::Result<(), TestCaseError> {
        let plan = RedistPlan::new(from, to, ranks).unwrap();
        let src = index_blocks(from, ranks);
        let got = plan.simulate(&src);
        let want = index_blocks(to, ranks);
        // Whole-message copies in row-table order and message by message.
        for tables in [RowTables::Always, RowTables::Never] {
            prop_assert_eq!(&plan.simulate_with(&src, tables), &want, "{:?}", tables);
        }
        prop_assert_eq!(
            &got,
            &want,
            "{} -> {} on {} ranks",
            from.spec(),
            to.spec(),
            ranks
        );
        let total: usize = (0..ranks)
            .flat_map(|s| (0..ranks).map(move |d| (s, d)))
            .filter_map(|(s, d)| plan.message(s, d).map(|m| m.len()))
            .sum();
        prop_assert_eq!(total, from.global_len());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Random shapes (1-3 axes), random distributions and grids (up to 4 per axis, both
        /// orders, possibly smaller than the communicator) on P up to 64.
        #[test]
        fn random_pairs_simulated_for_all_ranks(
            (_shape, ranks, from, to) in (prop::collection::vec(1usize..14, 1..4), 1usize..65)
                .prop_flat_map(|(shape, ranks)| (
                    Just(shape.clone()), Just(ranks),
                    any_array(shape.clone(), ranks), any_array(shape, ranks)))
        ) {
            check(&from, &to, ranks)?;
        }

        /// General distributions (first processes, column-major storage with padding, grids
        /// on shuffled ranks) and random sections of both.
        #[test]
        fn random_sections_of_general_arrays(
            (ranks, from, to, fs, ts, extent) in (
                prop::collection::vec(1usize..12, 1..4),
                prop::collection::vec(1usize..12, 3),
                1usize..13,
            ).prop_flat_map(|(shape_a, shape_b, ranks)| {
                let d = shape_a.len();
                let shape_b = shape_b[..d].to_vec();
                (
                    Just(ranks),
                    any_general(shape_a.clone(), ranks),
                    any_general(shape_b.clone(), ranks),
                    Just(shape_a),
                    Just(shape_b),
                    prop::collection::vec((0usize..100, 0usize..100, 0usize..100), d),
                )
            }).prop_map(|(ranks, from, to, sa, sb, seeds)| {
                // An extent that fits both, and starts that keep it inside.
                let mut ext = Vec::new();
                let (mut fs, mut ts) = (Vec::new(), Vec::new());
                for (a, &(e, f, t)) in seeds.iter().enumerate() {
                    let most = sa[a].min(sb[a]);
                    let e = e % (most + 1);
                    ext.push(e);
                    fs.push(f % (sa[a] - e + 1));
                    ts.push(t % (sb[a] - e + 1));
                }
                (ranks, from, to, fs, ts, ext)
            })
        ) {
            check_section(&from, &fs, &to, &ts, &extent, ranks)?;
        }

        #[test]
        fn axis_overlap_covers_every_index_once(
            a in any_dist(), b in any_dist(), len in 1usize..300, p in 1usize..7, q in 1usize..7,
        ) {
            let p = if a == AxisDist::Local { 1 } else { p };
            let q = if b == AxisDist::Local { 1 } else { q };
            let (ma, mb) = (AxisMap::new(a, len, p).unwrap(), AxisMap::new(b, len, q).unwrap());
            let o = AxisOverlap::new(&ma, &mb);
            let mut seen = vec![false; len];
            for s in 0..p {
                for d in 0..q {
                    for iv in o.intervals(s, d) {
                        for k in 0..iv.len {
                            let g = ma.global_index(s, iv.src + k);
                            prop_assert_eq!(mb.global_index(d, iv.dst + k), g);
                            prop_assert_eq!(ma.owner(g), s);
                            prop_assert_eq!(mb.owner(g), d);
                            prop_assert!(!seen[g]);
                            seen[g] = true;
                        }
                    }
                }
            }
            prop_assert!(seen.iter().all(|&x| x));
        }
    }

    #[test]
    fn grids_of_different_sizes_scatter_gather_and_orders() {
        let shape = [13, 11];
        let specs = [
            "grid=2x3,dist=cyclic(2),cyclic(3)",
            "grid=3x2,order=col,dist=cyclic(3),block",
            "grid=6x1,dist=balanced,cyclic",
            "grid=1x6,dist=block,cyclic(4)",
            "grid=1x1,dist=block,block", // everything on rank 0
            "grid=6,dist=cyclic(5),*",
            "grid=2x2,order=col,dist=cyclic,cyclic", // ranks 4, 5 own nothing
        ];
        for a in specs {
            for b in specs {
                let from = DistArray::parse_spec(a, &shape).unwrap();
                let to = DistArray::parse_spec(b, &shape).unwrap();
                check(&from, &to, 6).unwrap();
            }
        }
    }

    #[test]
    fn period_scan_is_short() {
        let a = AxisMap::new(AxisDist::BlockCyclic(36), 8192, 2).unwrap();
        let b = AxisMap::new(AxisDist::BlockCyclic(128), 8192, 1).unwrap();
        assert_eq!(AxisOverlap::new(&a, &b).scanned(), 1152);
    }

    #[test]
    fn period_scan_stays_short_for_windows_and_first_processes() {
        let a = AxisMap::new(AxisDist::BlockCyclic(36), 9000, 2)
            .unwrap()
            .with_first(1)
            .unwrap();
        let b = AxisMap::new(AxisDist::BlockCyclic(128), 8500, 3)
            .unwrap()
            .with_first(2)
            .unwrap();
        let o = AxisOverlap::window(&a, 101, &b, 7, 8000);
        assert_eq!(o.scanned(), 1152); // lcm(36·2, 128·3)
                                       // Every window index once, at the right local indices.
        let mut seen = vec![false; 8000];
        for s in 0..2 {
            for d in 0..3 {
                for iv in o.intervals(s, d) {
                    for k in 0..iv.len {
                        let g = a.global_index(s, iv.src + k);
                        assert_eq!(b.global_index(d, iv.dst + k), g - 101 + 7);
                        assert!(!std::mem::replace(&mut seen[g - 101], true));
                    }
                }
            }
        }
        assert!(seen.iter().all(|&x| x));
    }

    #[test]
    fn mismatched_shapes_and_oversized_grids_are_errors() {
        let a = DistArray::parse_spec("grid=2,dist=block", &[10]).unwrap();
        let b = DistArray::parse_spec("grid=2,dist=block", &[11]).unwrap();
        assert!(matches!(
            RedistPlan::new(&a, &b, 2),
            Err(RedistError::DistMismatch { .. })
        ));
        assert!(matches!(
            RedistPlan::new(&a, &a, 1),
            Err(RedistError::BadDistribution { .. })
        ));
    }
}
