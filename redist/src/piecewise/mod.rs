//! Piecewise exchanges: what a kernel fused with an exchange needs from it, in one place.
//!
//! `fft-core` runs some FFT steps fused with the exchanges next to them: the kernel reads its
//! rows straight from where the exchange before leaves them and writes them straight to where
//! the exchange after takes them, and the exchange moves in pieces of a few planes so that
//! the message buffers stay in cache. This module is the whole of that boundary:
//!
//! * [`Messages`]: one piece of an exchange made ready to move (copy plans, MPI counts), with
//!   [`RankExchange::piece`] (pure: the boxes of piece `k`) and
//!   [`ExchangePlan::piece_in_window`] (pure: the same piece received from the peers'
//!   regions of a shared-memory window);
//! * the piece calls of an [`Exchange`]: [`Exchange::piece`], [`Exchange::pack_piece`],
//!   [`Exchange::communicate_piece`], [`Exchange::unpack_piece`], and
//!   [`Exchange::group_window`] (a shared-memory window over the exchange's group);
//! * run maps ([`runs`]): where each row of a block lies in the buffers on the other side of
//!   an exchange ([`Run`], [`RunBuffer`], [`RankExchange::dst_runs_into`],
//!   [`RankExchange::src_runs_into`]), or among the peers' blocks in a window
//!   ([`window_runs`]).
//!
//! Every piece count and size must come from global arguments: all ranks of a group move the
//! same pieces in the same order.

pub mod runs;

pub use runs::{window_runs, Run, RunBuffer};

use crate::element::Element;
use crate::error::Result;
use crate::exchange::{move_messages, Exchange};
use crate::pack::CopyPlan;
use crate::plan::{ExchangePlan, PeerTransfer, RankExchange};
use crate::transport::window::GroupWindow;
use crate::transport::PeerCounts;
use std::fmt;
use std::ops::Range;

/// The messages of an exchange, or of one piece of it ([`Exchange::piece`]), made ready to
/// move: per peer its boxes, counts and buffer offsets, and the copy plans that pack and
/// unpack them. Built once at plan time.
pub struct Messages {
    pub(crate) part: RankExchange,
    pack_plans: Vec<CopyPlan>,
    pack_src_offsets: Vec<usize>,
    unpack_plans: Vec<CopyPlan>,
    unpack_dst_offsets: Vec<usize>,
    /// This rank's own part: source to destination directly.
    pub(crate) own_copy: CopyPlan,
    pub(crate) own_src_offset: usize,
    pub(crate) own_dst_offset: usize,
    /// Per group member: what is sent to it and received from it (zero for this rank's own
    /// part, which is copied directly).
    pub(crate) counts: PeerCounts,
    /// Whether the messages go pairwise in chunks (see [`Exchange::with_max_count`]).
    pub(crate) chunked: bool,
}

impl fmt::Debug for Messages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Messages")
            .field("rank", &self.part.rank)
            .field("send_len", &self.part.send_len)
            .field("recv_len", &self.part.recv_len)
            .finish()
    }
}

impl Messages {
    /// Prepares the messages of `part`; `chunked` as in [`Exchange`].
    pub(crate) fn new(part: RankExchange, chunked: bool) -> Self {
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
        let counts = |f: &dyn Fn(&crate::plan::PeerTransfer) -> usize| -> Vec<usize> {
            part.peers
                .iter()
                .map(|p| if p.peer == me { 0 } else { f(p) })
                .collect()
        };
        let counts = PeerCounts::new(
            counts(&|p| p.send_box.len()),
            counts(&|p| p.send_offset),
            counts(&|p| p.recv_box.len()),
            counts(&|p| p.recv_offset),
        );
        // Unchunked, every count and displacement is below the largest block of any rank,
        // hence below `max_count`: they fit MPI's int.
        debug_assert!(chunked || counts.fits_alltoallv());
        Self {
            counts,
            chunked,
            part,
            pack_plans,
            pack_src_offsets,
            unpack_plans,
            unpack_dst_offsets,
            own_copy,
            own_src_offset,
            own_dst_offset,
        }
    }

    /// Minimum send-buffer length: what goes to other ranks.
    pub fn send_len(&self) -> usize {
        self.part.send_len
    }

    /// Minimum receive-buffer length: what comes from other ranks.
    pub fn recv_len(&self) -> usize {
        self.part.recv_len
    }

    /// This rank's part of the plan (of this piece).
    pub fn rank_part(&self) -> &RankExchange {
        &self.part
    }

    /// Most requests one pairwise step needs with chunks of `max_count` elements.
    pub(crate) fn most_chunks(&self, max_count: usize) -> usize {
        self.counts.most_chunks(max_count)
    }

    /// Packs the messages of every other peer from the source block into `send`.
    pub(crate) fn pack<T: Element>(&self, src: &[T], send: &mut [T]) {
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

    /// Unpacks every other peer's message from `recv` into the destination block.
    pub(crate) fn unpack<T: Element>(&self, recv: &[T], dst: &mut [T]) {
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
}

impl Exchange {
    /// Messages of `part`, a rank part of this exchange or of a piece of it with its own
    /// buffer offsets: e.g. receive offsets that point into a [`crate::transport::window::GroupWindow`],
    /// so that [`Exchange::unpack_piece`] reads the peers' messages where they wrote them.
    pub fn messages(&self, part: RankExchange) -> Messages {
        Messages::new(part, self.chunked)
    }

    /// Piece `k` of this exchange cut along `axis` into runs of `size` indices (see
    /// [`RankExchange::piece`]), ready to move with [`Exchange::pack_piece`],
    /// [`Exchange::communicate_piece`] and [`Exchange::unpack_piece`] through message buffers
    /// of its own [`Messages::send_len`] and [`Messages::recv_len`]. Every rank of the group
    /// must move the same pieces in the same order (the piece count must come from global
    /// arguments).
    pub fn piece(&self, axis: usize, size: usize, k: usize) -> Messages {
        Messages::new(self.whole.part.piece(axis, size, k), self.chunked)
    }

    /// Packs one piece's messages (see [`Exchange::piece`]) into its own send buffer.
    pub fn pack_piece<T: Element>(&self, piece: &Messages, src: &[T], send: &mut [T]) {
        piece.pack(src, send);
    }

    /// Moves one piece's packed messages (see [`Exchange::piece`]); collective over the
    /// group like [`Exchange::communicate`].
    pub fn communicate_piece<T: Element>(
        &mut self,
        piece: &Messages,
        send: &[T],
        recv: &mut [T],
    ) -> Result<()> {
        let (method, max_count, group_size) = (self.method, self.max_count, self.group_size);
        move_messages(
            piece,
            &self.comm,
            method,
            max_count,
            &mut self.requests,
            group_size,
            send,
            recv,
        )
    }

    /// Unpacks one piece's messages (see [`Exchange::piece`]) into the destination block.
    pub fn unpack_piece<T: Element>(&self, piece: &Messages, recv: &[T], dst: &mut [T]) {
        piece.unpack(recv, dst);
    }

    /// A shared-memory window over this exchange's group with a region of at least
    /// `region_bytes` per member (the largest request of any member), or `None` when the
    /// group is not all on one node, has one member, or MPI does not place the regions
    /// contiguously. Collective over the group; every member gets the same answer.
    pub fn group_window(&self, region_bytes: usize) -> Result<Option<GroupWindow>> {
        GroupWindow::new(self.group_comm(), region_bytes)
    }
}

impl RankExchange {
    /// The `k`-th of the pieces into which cutting every box along `axis` into runs of
    /// `size` indices splits the exchange: each peer's send and receive box keeps the indices
    /// `start + k·size .. start + (k + 1)·size` of its range along `axis` (clipped; possibly
    /// none), and the messages are laid out compactly for those boxes, so the message buffers
    /// of a piece are about `size / extent` of the whole exchange's.
    ///
    /// When `axis` is the one the exchange gathers or scatters (every box spans a whole
    /// block's range along it on one side, and the peer's block's range on the other), the
    /// pieces of all ranks match: piece `k` of the sender holds exactly what piece `k` of the
    /// receiver expects, and the pieces together are the whole exchange. Pipelined consumers
    /// (`fft-core`'s fused slab sweep) exchange and transform one piece at a time with small
    /// message buffers.
    ///
    /// ```
    /// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, plan::ExchangePlan};
    /// let grid = GridShape::new(vec![2]).unwrap();
    /// let from = Layout::pencil(&[4, 6, 3], grid.clone()).unwrap();
    /// let to = Layout::new(&[4, 6, 3], grid, vec![1], MemoryOrder::new(vec![1, 0, 2]).unwrap())
    ///     .unwrap();
    /// let part = ExchangePlan::new(&from, &to).unwrap().for_rank(0);
    /// // Axis 1 is scattered: rank 1 gets indices 3..6 of it, in pieces of 2 indices.
    /// let pieces: Vec<_> = (0..2).map(|k| part.piece(1, 2, k)).collect();
    /// assert_eq!(pieces[0].peers[1].send_box.ranges[1], 3..5);
    /// assert_eq!(pieces[1].peers[1].send_box.ranges[1], 5..6);
    /// assert_eq!(pieces[0].send_len + pieces[1].send_len, part.send_len);
    /// ```
    pub fn piece(&self, axis: usize, size: usize, k: usize) -> RankExchange {
        let cut = |r: &Range<usize>| {
            let start = r.start.saturating_add(k.saturating_mul(size)).min(r.end);
            start..start.saturating_add(size).min(r.end)
        };
        let (mut send_offset, mut recv_offset) = (0, 0);
        let peers = self
            .peers
            .iter()
            .map(|p| {
                let mut send_box = p.send_box.clone();
                send_box.ranges[axis] = cut(&p.send_box.ranges[axis]);
                let mut recv_box = p.recv_box.clone();
                recv_box.ranges[axis] = cut(&p.recv_box.ranges[axis]);
                let own = p.peer == self.group_index;
                let piece = PeerTransfer {
                    send_offset: if own { 0 } else { send_offset },
                    recv_offset: if own { 0 } else { recv_offset },
                    send_box,
                    recv_box,
                    ..p.clone()
                };
                if !own {
                    send_offset += piece.send_box.len();
                    recv_offset += piece.recv_box.len();
                }
                piece
            })
            .collect();
        RankExchange {
            peers,
            send_len: send_offset,
            recv_len: recv_offset,
            ..self.clone()
        }
    }
}

impl ExchangePlan {
    /// Rank `rank`'s part of piece `k` of this exchange (cut along `axis` into runs of
    /// `size` indices, [`RankExchange::piece`]) when every member of the group writes its
    /// sends of the piece into its own region of a shared-memory window (`region` elements
    /// per member, the piece's messages from `base` on in each): each peer's message is
    /// received where that peer wrote it, `peer · region + base +` the peer's send offset
    /// for this rank in its own piece. Pure: every rank computes every peer's offsets.
    pub fn piece_in_window(
        &self,
        rank: usize,
        (axis, size, k): (usize, usize, usize),
        region: usize,
        base: usize,
    ) -> RankExchange {
        let mut part = self.for_rank(rank).piece(axis, size, k);
        let me = part.group_index;
        for p in part.peers.iter_mut().filter(|p| p.peer != me) {
            let theirs = self.for_rank(p.peer_rank).piece(axis, size, k);
            p.recv_offset = p.peer * region + base + theirs.peers[me].send_offset;
        }
        part
    }
}
