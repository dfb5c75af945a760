//! Exchange plans: which block goes from whom to whom, computed without MPI.
//!
//! An [`ExchangePlan`] moves an array from one [`Layout`] to another that differs in exactly
//! one grid dimension `j` (Birkeland & Sørøvik §3.1): grid dimension `j` stops splitting axis `a` and
//! starts splitting axis `b`. The exchange happens inside the group `G^j` of each rank (the
//! processes that share all other grid coordinates). [`ExchangePlan::for_rank`] gives any
//! rank's part: per peer, the box to send and where it sits in the send buffer, the box to
//! receive and where it lands. A message is stored in the *source* memory order of its box,
//! so the sender's pack is a near-contiguous copy and the receiver's unpack does the local
//! transpose into the destination memory order.

use crate::error::{RedistError, Result};
use crate::layout::Layout;
use crate::pack::{compact_strides, CopyPlan};
use std::ops::Range;

/// A rectangular box of a rank's local block, in local indices of the logical frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalBox {
    /// Local index ranges, one per logical axis.
    pub ranges: Vec<Range<usize>>,
}

impl LocalBox {
    /// The box's extent per logical axis.
    pub fn extent(&self) -> Vec<usize> {
        self.ranges.iter().map(|r| r.len()).collect()
    }

    /// Number of elements in the box.
    pub fn len(&self) -> usize {
        self.ranges.iter().map(|r| r.len()).product()
    }

    /// Whether the box holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Offset of the box's first element in a buffer with the given strides.
    pub fn offset(&self, strides: &[usize]) -> usize {
        self.ranges
            .iter()
            .zip(strides)
            .map(|(r, &s)| r.start * s)
            .sum()
    }
}

/// What one rank exchanges with one peer of its group. The rank's own part (the peer that is
/// the rank itself) travels by a direct copy from source to destination, so it takes no
/// space in the message buffers: its offsets are 0 and not counted in the buffer lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerTransfer {
    /// The peer's index in the group (its coordinate along the exchange's grid dimension).
    pub peer: usize,
    /// The peer's rank in the whole grid.
    pub peer_rank: usize,
    /// The box of this rank's source block that goes to the peer.
    pub send_box: LocalBox,
    /// Where that message starts in the send buffer.
    pub send_offset: usize,
    /// The box of this rank's destination block that comes from the peer.
    pub recv_box: LocalBox,
    /// Where that message starts in the receive buffer.
    pub recv_offset: usize,
}

/// One rank's part of an exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankExchange {
    /// This rank in the whole grid.
    pub rank: usize,
    /// This rank's index in its group.
    pub group_index: usize,
    /// One entry per group member, in group order (including this rank itself).
    pub peers: Vec<PeerTransfer>,
    /// Elements this rank sends to other ranks (its source length minus its own part).
    pub send_len: usize,
    /// Elements this rank receives from other ranks (its destination length minus its own
    /// part).
    pub recv_len: usize,
    /// Strides of the source local buffer, per logical axis.
    pub src_strides: Vec<usize>,
    /// Strides of the destination local buffer, per logical axis.
    pub dst_strides: Vec<usize>,
    /// The source memory order, which is also the order of elements inside each message.
    pub message_order: Vec<usize>,
    /// Local shape of the whole source block (logical axis order).
    pub src_shape: Vec<usize>,
    /// Local shape of the whole destination block.
    pub dst_shape: Vec<usize>,
}

impl RankExchange {
    /// This rank's own part, copied directly from source to destination.
    pub fn own(&self) -> &PeerTransfer {
        &self.peers[self.group_index]
    }

    /// The copy plan of this rank's own part: from the source block straight into the
    /// destination block (the local transpose of the data that stays).
    pub fn own_copy_plan(&self) -> CopyPlan {
        CopyPlan::new(
            &self.own().send_box.extent(),
            &self.src_strides,
            &self.dst_strides,
        )
    }

    /// Copy plans that pack each peer's message from the source block (in peer order).
    pub fn pack_plans(&self) -> Vec<CopyPlan> {
        self.peers
            .iter()
            .map(|p| {
                let extent = p.send_box.extent();
                CopyPlan::new(
                    &extent,
                    &self.src_strides,
                    &compact_strides(&extent, &self.message_order),
                )
            })
            .collect()
    }

    /// Copy plans that unpack each peer's message into the destination block (in peer order).
    pub fn unpack_plans(&self) -> Vec<CopyPlan> {
        self.peers
            .iter()
            .map(|p| {
                let extent = p.recv_box.extent();
                CopyPlan::new(
                    &extent,
                    &compact_strides(&extent, &self.message_order),
                    &self.dst_strides,
                )
            })
            .collect()
    }
}

/// A planned single-dimension exchange between two layouts. Pure data: any rank can compute
/// any rank's part.
///
/// ```
/// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, plan::ExchangePlan};
/// let grid = GridShape::new(vec![2, 2]).unwrap();
/// let from = Layout::pencil(&[8, 6, 5], grid.clone()).unwrap(); // axes 0,1 split
/// let to = Layout::new(&[8, 6, 5], grid, vec![0, 2], MemoryOrder::natural(3).with_contiguous(1))
///     .unwrap(); // axes 0,2 split, axis 1 local and contiguous
/// let plan = ExchangePlan::new(&from, &to).unwrap();
/// assert_eq!(plan.grid_dim(), 1);
/// let part = plan.for_rank(0);
/// assert_eq!(part.peers.len(), 2);
/// assert_eq!(part.send_len + part.own().send_box.len(), from.local_len(0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangePlan {
    from: Layout,
    to: Layout,
    grid_dim: usize,
    from_axis: usize,
    to_axis: usize,
}

impl ExchangePlan {
    /// Plans the exchange; the layouts must describe the same array on the same grid and
    /// differ in exactly one grid dimension (their memory orders may differ freely).
    pub fn new(from: &Layout, to: &Layout) -> Result<Self> {
        from.check_compatible(to)?;
        let differing: Vec<usize> = (0..from.grid().rank())
            .filter(|&j| !from.same_split(to, j))
            .collect();
        let moves = |j: &usize| from.decomposed()[*j] != to.decomposed()[*j];
        if differing.len() != 1 || !differing.iter().all(moves) {
            return Err(RedistError::NotASingleExchange {
                from: from.decomposed().to_vec(),
                to: to.decomposed().to_vec(),
            });
        }
        let grid_dim = differing[0];
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            grid_dim,
            from_axis: from.decomposed()[grid_dim],
            to_axis: to.decomposed()[grid_dim],
        })
    }

    /// The source layout.
    pub fn from(&self) -> &Layout {
        &self.from
    }

    /// The destination layout.
    pub fn to(&self) -> &Layout {
        &self.to
    }

    /// The grid dimension whose groups communicate.
    pub fn grid_dim(&self) -> usize {
        self.grid_dim
    }

    /// The axis that grid dimension splits before the exchange (gathered by it).
    pub fn from_axis(&self) -> usize {
        self.from_axis
    }

    /// The axis that grid dimension splits after the exchange (scattered by it).
    pub fn to_axis(&self) -> usize {
        self.to_axis
    }

    /// Rank `rank`'s part of the exchange.
    pub fn for_rank(&self, rank: usize) -> RankExchange {
        let grid = self.from.grid();
        let n = grid.dims()[self.grid_dim];
        let members = grid.group_members(rank, self.grid_dim);
        let me = grid.coords_of(rank)[self.grid_dim];
        let src_shape = self.from.local_shape(rank);
        let dst_shape = self.to.local_shape(rank);
        let (a, b) = (self.from_axis, self.to_axis);
        let j = self.grid_dim;
        let mut peers = Vec::with_capacity(n);
        let (mut send_offset, mut recv_offset) = (0, 0);
        for (peer, &peer_rank) in members.iter().enumerate() {
            // Send: my source block with axis b cut to the peer's future range.
            let mut send = LocalBox {
                ranges: src_shape.iter().map(|&s| 0..s).collect(),
            };
            send.ranges[b] = self.to.split_range(j, peer);
            // Receive: my destination block with axis a cut to the peer's current range.
            let mut recv = LocalBox {
                ranges: dst_shape.iter().map(|&s| 0..s).collect(),
            };
            recv.ranges[a] = self.from.split_range(j, peer);
            let (send_len, recv_len) = (send.len(), recv.len());
            let own = peer == me;
            peers.push(PeerTransfer {
                peer,
                peer_rank,
                send_box: send,
                send_offset: if own { 0 } else { send_offset },
                recv_box: recv,
                recv_offset: if own { 0 } else { recv_offset },
            });
            if !own {
                send_offset += send_len;
                recv_offset += recv_len;
            }
        }
        RankExchange {
            rank,
            group_index: me,
            peers,
            send_len: send_offset,
            recv_len: recv_offset,
            src_strides: self.from.local_strides(rank),
            dst_strides: self.to.local_strides(rank),
            message_order: self.from.memory_order().axes().to_vec(),
            src_shape,
            dst_shape,
        }
    }

    /// Runs the exchange for every rank in one process, passing messages by memory copies,
    /// with the same pack and unpack kernels as the MPI path. `src[rank]` is each rank's source
    /// block; returns each rank's destination block. For planning tests; no MPI involved.
    ///
    /// ```
    /// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, plan::ExchangePlan};
    /// let grid = GridShape::new(vec![3]).unwrap();
    /// let from = Layout::pencil(&[5, 4], grid.clone()).unwrap();
    /// let to = Layout::new(&[5, 4], grid, vec![1], MemoryOrder::new(vec![1, 0]).unwrap()).unwrap();
    /// let plan = ExchangePlan::new(&from, &to).unwrap();
    /// // Index-valued data: element (i, j) holds 4 i + j.
    /// let src: Vec<Vec<u32>> = (0..3)
    ///     .map(|r| {
    ///         let rows = from.global_range(r, 0);
    ///         rows.flat_map(|i| (0..4).map(move |j| 4 * i as u32 + j)).collect()
    ///     })
    ///     .collect();
    /// let dst = plan.simulate(&src);
    /// // Rank 0 now owns column 0..2 of all rows, column-major in memory.
    /// assert_eq!(dst[0], vec![0, 4, 8, 12, 16, 1, 5, 9, 13, 17]);
    /// ```
    pub fn simulate<T: Copy + Default + Send + Sync>(&self, src: &[Vec<T>]) -> Vec<Vec<T>> {
        let ranks = self.from.grid().ranks();
        assert_eq!(src.len(), ranks);
        let parts: Vec<RankExchange> = (0..ranks).map(|r| self.for_rank(r)).collect();
        let send_bufs: Vec<Vec<T>> = parts
            .iter()
            .map(|part| {
                assert_eq!(src[part.rank].len(), self.from.local_len(part.rank));
                let mut buf = vec![T::default(); part.send_len];
                for (p, plan) in part.peers.iter().zip(part.pack_plans()) {
                    if p.peer == part.group_index {
                        continue;
                    }
                    plan.run(
                        &src[part.rank],
                        p.send_box.offset(&part.src_strides),
                        &mut buf,
                        p.send_offset,
                    );
                }
                buf
            })
            .collect();
        parts
            .iter()
            .map(|part| {
                let mut dst = vec![T::default(); self.to.local_len(part.rank)];
                let own = part.own();
                part.own_copy_plan().run(
                    &src[part.rank],
                    own.send_box.offset(&part.src_strides),
                    &mut dst,
                    own.recv_box.offset(&part.dst_strides),
                );
                for (p, plan) in part.peers.iter().zip(part.unpack_plans()) {
                    if p.peer == part.group_index {
                        continue;
                    }
                    // The peer's message to me.
                    let theirs = &parts[p.peer_rank].peers[part.group_index];
                    assert_eq!(theirs.send_box.len(), p.recv_box.len());
                    plan.run(
                        &send_bufs[p.peer_rank],
                        theirs.send_offset,
                        &mut dst,
                        p.recv_box.offset(&part.dst_strides),
                    );
                }
                dst
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use crate::layout::Layout;

    /// Fills each rank's block of `layout` with global linear indices (exactly representable).
    pub(crate) fn index_valued(layout: &Layout) -> Vec<Vec<u64>> {
        (0..layout.grid().ranks())
            .map(|rank| {
                let mut buf = vec![u64::MAX; layout.local_len(rank)];
                layout.fill_index_valued(rank, &mut buf, |g| g);
                buf
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::index_valued;
    use super::*;
    use crate::grid::GridShape;
    use crate::layout::MemoryOrder;
    use proptest::prelude::*;

    fn check_exchange(from: &Layout, to: &Layout) {
        let plan = ExchangePlan::new(from, to).unwrap();
        // Sends are exactly the source blocks; receives exactly the destination blocks.
        for rank in 0..from.grid().ranks() {
            let part = plan.for_rank(rank);
            assert_eq!(
                part.send_len + part.own().send_box.len(),
                from.local_len(rank)
            );
            assert_eq!(
                part.recv_len + part.own().recv_box.len(),
                to.local_len(rank)
            );
        }
        let dst = plan.simulate(&index_valued(from));
        assert_eq!(dst, index_valued(to), "from {from:?} to {to:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn every_element_lands_once_in_the_right_place(
            shape in prop::collection::vec(1usize..9, 2..5),
            ranks in 1usize..=64,
            grid_rank_seed in any::<usize>(),
            choice in any::<u64>(),
        ) {
            let d = shape.len();
            let r = 1 + grid_rank_seed % (d - 1);
            let factorizations = crate::grid::factorizations(ranks, r);
            let dims = factorizations[(choice as usize) % factorizations.len()].clone();
            let grid = GridShape::new(dims).unwrap();
            let from = Layout::pencil(&shape, grid.clone()).unwrap();
            // Move grid dimension j from axis j to a local axis b, b contiguous after.
            let j = (choice >> 20) as usize % r;
            let locals: Vec<usize> = (r..d).collect();
            let b = locals[(choice >> 30) as usize % locals.len()];
            let mut decomposed = from.decomposed().to_vec();
            decomposed[j] = b;
            let order = MemoryOrder::natural(d).with_contiguous(j);
            let to = Layout::new(&shape, grid, decomposed, order).unwrap();
            check_exchange(&from, &to);
            check_exchange(&to, &from);
        }
    }

    #[test]
    fn awkward_shapes_and_grids() {
        for (shape, dims) in [
            (vec![11, 7, 13], vec![3]),
            (vec![11, 7, 13], vec![2, 3]),
            (vec![16, 21, 41], vec![7, 1]),
            (vec![9, 7, 5, 12], vec![2, 2, 2]),
            (vec![3, 5, 4], vec![5]), // axis 0 shorter than the grid: ranks own nothing
        ] {
            let d = shape.len();
            let grid = GridShape::new(dims).unwrap();
            let from = Layout::pencil(&shape, grid.clone()).unwrap();
            let r = grid.rank();
            let mut decomposed = from.decomposed().to_vec();
            decomposed[r - 1] = d - 1;
            let to = Layout::new(
                &shape,
                grid,
                decomposed,
                MemoryOrder::natural(d).with_contiguous(r - 1),
            )
            .unwrap();
            check_exchange(&from, &to);
        }
    }

    /// FFTW-MPI's slab exchange with given block sizes on both sides (⌈n/P⌉ by default, so
    /// trailing ranks own nothing; other sizes too), both ways, on every P up to 9.
    #[test]
    fn exchanges_between_given_block_sizes() {
        let shape = [7, 5, 3];
        for ranks in 1..=9usize {
            let grid = GridShape::new(vec![ranks]).unwrap();
            let slab = Layout::pencil(&shape, grid.clone()).unwrap();
            let order = MemoryOrder::new(vec![1, 0, 2]).unwrap();
            let transposed = Layout::new(&shape, grid, vec![1], order).unwrap();
            let fftw = |n: usize| n.div_ceil(ranks);
            for (b0, b1) in [(fftw(7), fftw(5)), (7, 5), (fftw(7) + 1, 5.max(fftw(5)))] {
                let from = slab.with_blocks(vec![Some(b0)]).unwrap();
                let to = transposed.with_blocks(vec![Some(b1)]).unwrap();
                check_exchange(&from, &to);
                check_exchange(&to, &from);
                check_exchange(&slab, &to);
            }
        }
        // A grid dimension that stays must keep its blocks.
        let grid = GridShape::new(vec![2, 2]).unwrap();
        let from = Layout::pencil(&[4, 4, 4], grid.clone()).unwrap();
        let to = Layout::new(&[4, 4, 4], grid, vec![0, 2], MemoryOrder::natural(3)).unwrap();
        assert!(ExchangePlan::new(&from, &to).is_ok());
        let reblocked = to.with_blocks(vec![Some(3), None]).unwrap();
        assert!(ExchangePlan::new(&from, &reblocked).is_err());
    }

    #[test]
    fn rejects_layouts_that_differ_in_two_grid_dims() {
        let grid = GridShape::new(vec![2, 2]).unwrap();
        let from = Layout::pencil(&[4, 4, 4, 4], grid.clone()).unwrap();
        let to = Layout::new(&[4, 4, 4, 4], grid, vec![2, 3], MemoryOrder::natural(4)).unwrap();
        assert_eq!(
            ExchangePlan::new(&from, &to).unwrap_err(),
            RedistError::NotASingleExchange {
                from: vec![0, 1],
                to: vec![2, 3]
            }
        );
    }
}
