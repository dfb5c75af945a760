//! General redistribution between any two [`DistArray`]s of one global array over one
//! communicator (seed 001, ScaLAPACK's `pdgemr2d` problem): planning, with no MPI.
//!
//! **Per axis** ([`AxisOverlap`]), the two block patterns are scanned together like a merge
//! (seed 001 §3.1): a cursor walks the global index, stopping at every block boundary of
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

use super::copy::{row_order, CopyMap, RankRedist, RowTables, Side, Transfer};
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

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
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
        let len = from.len();
        let (sp, dp) = (from.procs(), to.procs());
        let mut pairs = vec![Vec::new(); sp * dp];
        // The period of the joint pattern, when both are regular and it is shorter than M.
        let period = match (from.period(), to.period()) {
            (Some(a), Some(b)) => (a / gcd(a, b)).checked_mul(b).filter(|&l| l < len),
            _ => None,
        };
        let scan_end = period.unwrap_or(len);
        let mut g = 0;
        while g < scan_end {
            let (ls, ld) = (from.locate(g), to.locate(g));
            let end = block_end(from, g).min(block_end(to, g)).min(scan_end);
            push_merged(
                &mut pairs[ls.process * dp + ld.process],
                Interval {
                    src: from.local_index(g),
                    dst: to.local_index(g),
                    len: end - g,
                },
            );
            g = end;
        }
        if let Some(period) = period {
            // Each period holds period/T full blocks of every process on either side.
            let (ts, td) = (from.period().unwrap(), to.period().unwrap());
            let src_shift = period / ts * from.block_size().unwrap();
            let dst_shift = period / td * to.block_size().unwrap();
            let src_len: Vec<usize> = (0..sp).map(|s| from.local_len(s)).collect();
            for s in 0..sp {
                for d in 0..dp {
                    let base = std::mem::take(&mut pairs[s * dp + d]);
                    let mut out = Vec::new();
                    'periods: for k in 0.. {
                        for iv in &base {
                            let src = iv.src + k * src_shift;
                            let dst = iv.dst + k * dst_shift;
                            // Clip at the end of the axis. Local order is global order
                            // and the shift is one period on both sides, so the items that
                            // exist are those below the source's local length.
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
        for (name, d) in [("source", from), ("destination", to)] {
            if d.grid_size() > ranks {
                return Err(RedistError::BadDistribution {
                    reason: format!(
                        "the {name} grid {:?} needs {} processes but the communicator has {ranks}",
                        d.grid(),
                        d.grid_size()
                    ),
                });
            }
        }
        let axes = from
            .axis_maps()
            .iter()
            .zip(to.axis_maps())
            .map(|(a, b)| AxisOverlap::new(a, b))
            .collect();
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            ranks,
            axes,
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
        let src_shape = self.from.local_shape(rank);
        let dst_shape = self.to.local_shape(rank);
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        let mut own = None;
        let (mut send_len, mut recv_len) = (0, 0);
        for peer in 0..self.ranks {
            if let Some(m) = self.message(rank, peer) {
                if peer == rank {
                    // The direct copy pairs source and destination runs one to one.
                    let src = CopyMap::new(&m, &src_shape, Side::Src, false);
                    let dst = CopyMap::new(&m, &dst_shape, Side::Dst, false);
                    own = Some((src, dst));
                } else {
                    let map = CopyMap::new(&m, &src_shape, Side::Src, true);
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
                let map = CopyMap::new(&m, &dst_shape, Side::Dst, true);
                let len = map.len;
                recvs.push(Transfer {
                    peer,
                    offset: recv_len,
                    map,
                });
                recv_len += len;
            }
        }
        let src_len: usize = src_shape.iter().product();
        let dst_len: usize = dst_shape.iter().product();
        let pack_rows = row_order(&sends, None, src_len, tables);
        let unpack_rows = row_order(&recvs, own.as_ref().map(|(s, d)| (d, s)), dst_len, tables);
        RankRedist {
            rank,
            src_len,
            dst_len,
            sends,
            recvs,
            own,
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
        assert_eq!(src.len(), self.ranks);
        let parts: Vec<RankRedist> = (0..self.ranks)
            .map(|r| self.for_rank_with(r, tables))
            .collect();
        let mut dst: Vec<Vec<T>> = parts
            .iter()
            .map(|p| vec![T::default(); p.dst_len])
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
        dst
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
