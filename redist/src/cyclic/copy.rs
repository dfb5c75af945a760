//! How one rank's messages of a [`RedistPlan`](super::plan::RedistPlan) map onto its local
//! arrays, and the copy kernels that pack and unpack them: per message a [`CopyMap`] (rows of
//! contiguous runs), per rank a [`RankRedist`] whose copies walk each local array once in
//! memory order.

use super::kernel::{self, RowKernel};
use super::plan::{Interval, Message};

/// How a [`CopyMap`] cuts the fastest message axis into runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// Runs that continue each other in local memory join (a message).
    Merged,
    /// One run per interval (the own part, paired with the other side run by run).
    PerInterval,
    /// One run per element (the own part when either side's fastest axis is strided).
    PerElement,
}

#[derive(Clone, Copy)]
pub(crate) enum Side {
    Src,
    Dst,
}

/// How one message maps onto one side's local array: per outer axis the local offsets
/// (already multiplied by the axis stride) of each message index, and for the last axis the
/// contiguous runs. Rows of the message (one per outer multi-index) are `inner` long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyMap {
    /// Per outer axis (all but the last), local offset of each message index.
    outer: Vec<Vec<usize>>,
    /// Runs of the last axis: (local start, message start within the row, length).
    runs: Vec<(usize, usize, usize)>,
    /// The whole-row copy (side A: local, side B: message row).
    kernel: RowKernel,
    /// Elements per message row.
    inner: usize,
    /// Number of message rows.
    rows: usize,
    /// Elements in the message.
    pub(crate) len: usize,
}

impl CopyMap {
    /// The map of message `m` onto a local array of `strides`, the message laid out in
    /// `order` (axes, slowest first), its fastest axis cut into `runs` (along a strided
    /// fastest axis every element is a run).
    pub(crate) fn new(
        m: &Message<'_>,
        strides: &[usize],
        order: &[usize],
        side: Side,
        runs_of: Runs,
    ) -> Self {
        let d = strides.len();
        let pick = |iv: &Interval| match side {
            Side::Src => iv.src,
            Side::Dst => iv.dst,
        };
        let outer: Vec<Vec<usize>> = order[..d - 1]
            .iter()
            .map(|&a| {
                let stride = strides[a];
                m.axes[a]
                    .iter()
                    .flat_map(|iv| (pick(iv)..pick(iv) + iv.len).map(move |l| l * stride))
                    .collect()
            })
            .collect();
        let fast = order[d - 1];
        let stride = strides[fast];
        // Runs of the fastest axis. The message side is always contiguous, so a run that
        // continues the previous one in local memory joins it (e.g. cyclic(11) blocks of one
        // process, consecutive locally but not on the other side): fewer, longer copies.
        let mut runs: Vec<(usize, usize, usize)> = Vec::with_capacity(m.axes[fast].len());
        let mut pos = 0;
        for iv in m.axes[fast] {
            if stride != 1 || runs_of == Runs::PerElement {
                for l in pick(iv)..pick(iv) + iv.len {
                    runs.push((l * stride, pos, 1));
                    pos += 1;
                }
                continue;
            }
            match runs.last_mut() {
                Some(last) if runs_of == Runs::Merged && last.0 + last.2 == pick(iv) => {
                    last.2 += iv.len
                }
                _ => runs.push((pick(iv), pos, iv.len)),
            }
            pos += iv.len;
        }
        let rows = outer.iter().map(Vec::len).product();
        let kernel = RowKernel::new(runs.iter().copied());
        Self {
            outer,
            kernel,
            runs,
            inner: pos,
            rows,
            len: rows * pos,
        }
    }

    /// Elements in the message.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of contiguous runs copied per message row (a measure of fragmentation).
    pub fn runs_per_row(&self) -> usize {
        self.runs.len()
    }

    /// Local offset of the start of message row `row`.
    #[inline]
    fn row_base(&self, mut row: usize) -> usize {
        let mut base = 0;
        for offs in self.outer.iter().rev() {
            base += offs[row % offs.len()];
            row /= offs.len();
        }
        base
    }

    /// Copies message elements `range` (message order) between the local array and `msg`
    /// (which holds the message starting at index 0). `pack` = local → message.
    #[inline]
    fn copy_range<T: Copy>(
        &self,
        range: std::ops::Range<usize>,
        local: *mut T,
        local_len: usize,
        msg: *mut T,
        pack: bool,
    ) {
        if range.is_empty() {
            return;
        }
        let (mut row, mut col) = (range.start / self.inner, range.start % self.inner);
        let mut left = range.len();
        let mut run = self.runs.partition_point(|r| r.1 + r.2 <= col);
        let mut base = self.row_base(row);
        let mut msg_pos = range.start;
        while left > 0 {
            let (lstart, mstart, rlen) = self.runs[run];
            let skip = col - mstart;
            let n = (rlen - skip).min(left);
            let l = base + lstart + skip;
            assert!(l + n <= local_len);
            // SAFETY: `l + n` checked against the local length; `msg_pos + n` is inside the
            // message, which the callers check against their buffers.
            unsafe {
                if pack {
                    std::ptr::copy_nonoverlapping(local.add(l), msg.add(msg_pos), n);
                } else {
                    std::ptr::copy_nonoverlapping(msg.add(msg_pos), local.add(l), n);
                }
            }
            left -= n;
            msg_pos += n;
            col += n;
            if col == mstart + rlen {
                run += 1;
                if run == self.runs.len() {
                    run = 0;
                    col = 0;
                    row += 1;
                    if left > 0 {
                        base = self.row_base(row);
                    }
                }
            }
        }
    }

    /// Packs message elements `range` from `local` into `msg[..range.len()]`.
    pub fn pack_range<T: Copy>(&self, range: std::ops::Range<usize>, local: &[T], msg: &mut [T]) {
        assert!(range.end <= self.len && msg.len() >= range.len());
        if range == (0..self.len) {
            for row in 0..self.rows {
                let at = self.row_base(row);
                kernel::a_to_b(&self.kernel, local, at, msg, row * self.inner);
            }
            return;
        }
        let shift = range.start;
        // The kernel addresses the message from its start; offset the pointer back.
        let msg_ptr = msg.as_mut_ptr().wrapping_sub(shift);
        self.copy_range(range, local.as_ptr() as *mut T, local.len(), msg_ptr, true);
    }

    /// Unpacks message elements `range` from `msg[..range.len()]` into `local`.
    pub fn unpack_range<T: Copy>(&self, range: std::ops::Range<usize>, msg: &[T], local: &mut [T]) {
        assert!(range.end <= self.len && msg.len() >= range.len());
        if range == (0..self.len) {
            for row in 0..self.rows {
                let at = self.row_base(row);
                kernel::b_to_a(&self.kernel, msg, row * self.inner, local, at);
            }
            return;
        }
        let shift = range.start;
        let msg_ptr = (msg.as_ptr() as *mut T).wrapping_sub(shift);
        self.copy_range(range, local.as_mut_ptr(), local.len(), msg_ptr, false);
    }
}

/// One message row (or one row of the own part) in a copy order over the local array: the
/// row's start in the local array, its start in the message buffer (for the own part: in the
/// source array) and which transfer it belongs to ([`OWN`] for the own part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowCopy {
    local: usize,
    buf: usize,
    transfer: usize,
}

/// Whether a rank's part keeps row tables ([`row_order`]); tests force both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowTables {
    /// When the table is small against the array.
    Auto,
    /// Always (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Always,
    /// Never (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Never,
}

/// `RowCopy::transfer` of the own part.
const OWN: usize = usize::MAX;

/// Largest row table, in entries per local element: above it (messages of rows shorter than
/// 8 elements on average) the whole-message copies go message by message, without a table.
const ROW_TABLE_DENSITY: usize = 8;

/// Every row of every transfer (and of the own part, given as (this side's map, the other
/// side's map)), sorted by the row's start in the local array, so that copying all messages
/// walks the local array once in memory order: the rows that several messages share (e.g.
/// runs of 11 from two senders interleaved in one destination row) are completed while in
/// cache, instead of each message touching every cache line of a large array in turn. Empty
/// (message-by-message order) when the table would be large against the array.
pub(crate) fn row_order(
    transfers: &[Transfer],
    own: Option<(&CopyMap, &CopyMap)>,
    local_len: usize,
    tables: RowTables,
) -> Vec<RowCopy> {
    let rows: usize =
        transfers.iter().map(|t| t.map.rows).sum::<usize>() + own.map_or(0, |(m, _)| m.rows);
    let dense = rows.saturating_mul(ROW_TABLE_DENSITY) > local_len.max(1);
    if rows == 0 || tables == RowTables::Never || (dense && tables == RowTables::Auto) {
        return Vec::new();
    }
    let mut table = Vec::with_capacity(rows);
    for (i, t) in transfers.iter().enumerate() {
        for row in 0..t.map.rows {
            table.push(RowCopy {
                local: t.map.row_base(row),
                buf: t.offset + row * t.map.inner,
                transfer: i,
            });
        }
    }
    if let Some((here, other)) = own {
        for row in 0..here.rows {
            table.push(RowCopy {
                local: here.row_base(row),
                buf: other.row_base(row),
                transfer: OWN,
            });
        }
    }
    // Stable: rows that start together keep transfer order.
    table.sort_by_key(|r| r.local);
    table
}

/// Copies one message row from `msg[pos..]` into `local[base..]`.
#[inline(always)]
fn copy_row<T: Copy>(map: &CopyMap, local: &mut [T], base: usize, msg: &[T], pos: usize) {
    kernel::b_to_a(&map.kernel, msg, pos, local, base);
}

/// A rank's own part, copied straight from the source to the destination array: the paired
/// runs of its two maps (side A: source, side B: destination).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnCopy {
    kernel: RowKernel,
}

impl OwnCopy {
    /// The copy of the own part whose source map is `src` and destination map `dst` (runs
    /// paired one to one).
    pub(crate) fn new(src: &CopyMap, dst: &CopyMap) -> Self {
        debug_assert!(src.runs.len() == dst.runs.len());
        let kernel = RowKernel::new(src.runs.iter().zip(&dst.runs).map(|(s, d)| {
            debug_assert_eq!(s.2, d.2);
            (s.0, d.0, s.2)
        }));
        Self { kernel }
    }

    /// Copies one row from `src[src_at..]` to `dst[dst_at..]`.
    #[inline(always)]
    fn row<T: Copy>(&self, src: &[T], src_at: usize, dst: &mut [T], dst_at: usize) {
        kernel::a_to_b(&self.kernel, src, src_at, dst, dst_at);
    }
}

/// Copies a rank's own part straight from the source to the destination array.
fn copy_direct<T: Copy>(
    src_map: &CopyMap,
    dst_map: &CopyMap,
    own: &OwnCopy,
    src: &[T],
    dst: &mut [T],
) {
    for row in 0..src_map.rows {
        own.row(src, src_map.row_base(row), dst, dst_map.row_base(row));
    }
}

/// One message of a rank: the peer, where it sits in the send or receive buffer, and how it
/// maps onto the local array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// The other rank.
    pub peer: usize,
    /// Offset in the send (or receive) buffer.
    pub offset: usize,
    /// The copy map onto this rank's local array.
    pub map: CopyMap,
}

/// One rank's part of a [`RedistPlan`](super::plan::RedistPlan): its messages in peer order and its own part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankRedist {
    /// The rank.
    pub rank: usize,
    /// Elements of its source array.
    pub src_len: usize,
    /// Elements of its destination array.
    pub dst_len: usize,
    /// Messages to other ranks (non-empty ones), by increasing peer.
    pub sends: Vec<Transfer>,
    /// Messages from other ranks (non-empty ones), by increasing peer.
    pub recvs: Vec<Transfer>,
    /// Its own part: source map and destination map, copied directly.
    pub own: Option<(CopyMap, CopyMap)>,
    /// The own part's paired runs, grouped.
    pub(crate) own_copy: Option<OwnCopy>,
    /// Length of the send buffer.
    pub send_len: usize,
    /// Length of the receive buffer.
    pub recv_len: usize,
    /// Rows of all sends in source memory order (empty: message by message).
    pub(crate) pack_rows: Vec<RowCopy>,
    /// Rows of all receives and the own part in destination memory order (empty: message by
    /// message).
    pub(crate) unpack_rows: Vec<RowCopy>,
}

impl RankRedist {
    /// Packs every outgoing message into `send` at its offset, walking the source array once
    /// in memory order (row by row over all messages) when the plan keeps a row table.
    pub fn pack_all<T: Copy>(&self, src: &[T], send: &mut [T]) {
        if self.pack_rows.is_empty() {
            for t in &self.sends {
                t.map
                    .pack_range(0..t.map.len, src, &mut send[t.offset..t.offset + t.map.len]);
            }
            return;
        }
        for r in &self.pack_rows {
            let map = &self.sends[r.transfer].map;
            kernel::a_to_b(&map.kernel, src, r.local, send, r.buf);
        }
    }

    /// Packs every outgoing message straight to where it is read: message `i` of
    /// [`RankRedist::sends`] starts at `out[i]` (in the same row order as
    /// [`RankRedist::pack_all`]).
    ///
    /// # Safety
    /// Each `out[i]` must be valid for writes of `sends[i].map.len()` elements, and no two of
    /// these regions, nor `src`, may overlap, nor be accessed by anything else meanwhile.
    pub unsafe fn pack_all_to<T: Copy>(&self, src: &[T], out: &[*mut T]) {
        assert_eq!(out.len(), self.sends.len());
        // SAFETY (both loops): the caller guarantees each region; one slice at a time.
        let msg =
            |i: usize| unsafe { std::slice::from_raw_parts_mut(out[i], self.sends[i].map.len) };
        if self.pack_rows.is_empty() {
            for (i, t) in self.sends.iter().enumerate() {
                t.map.pack_range(0..t.map.len, src, msg(i));
            }
            return;
        }
        for r in &self.pack_rows {
            let t = &self.sends[r.transfer];
            let (out, pos) = (msg(r.transfer), r.buf - t.offset);
            kernel::a_to_b(&t.map.kernel, src, r.local, out, pos);
        }
    }

    /// Unpacks every incoming message from `recv` at its offset (not the own part).
    pub fn unpack_all<T: Copy>(&self, recv: &[T], dst: &mut [T]) {
        if self.unpack_rows.is_empty() {
            for t in &self.recvs {
                t.map
                    .unpack_range(0..t.map.len, &recv[t.offset..t.offset + t.map.len], dst);
            }
            return;
        }
        for r in self.unpack_rows.iter().filter(|r| r.transfer != OWN) {
            copy_row(&self.recvs[r.transfer].map, dst, r.local, recv, r.buf);
        }
    }

    /// Copies the own part from `src` and unpacks every incoming message from `recv`: the
    /// same as [`RankRedist::copy_own`] then [`RankRedist::unpack_all`], but walking the
    /// destination array once in memory order when the plan keeps a row table.
    pub fn unpack_all_and_own<T: Copy>(&self, src: &[T], recv: &[T], dst: &mut [T]) {
        if self.unpack_rows.is_empty() {
            self.copy_own(src, dst);
            self.unpack_all(recv, dst);
            return;
        }
        for r in &self.unpack_rows {
            if r.transfer == OWN {
                let own = self
                    .own_copy
                    .as_ref()
                    .expect("own rows come from the own part");
                own.row(src, r.buf, dst, r.local);
            } else {
                copy_row(&self.recvs[r.transfer].map, dst, r.local, recv, r.buf);
            }
        }
    }

    /// Copies the own part from `src` to `dst`.
    pub fn copy_own<T: Copy>(&self, src: &[T], dst: &mut [T]) {
        if let (Some((s, d)), Some(own)) = (&self.own, &self.own_copy) {
            copy_direct(s, d, own, src, dst);
        }
    }
}
