//! Run maps: where each contiguous run of a block lies in the buffers of an exchange.
//!
//! When the trailing memory axes of a block are neither split nor reordered by an exchange
//! (a slab in FFTW's layout moves whole rows of the last axes), each run of those axes is
//! one contiguous piece of one buffer on the other side: of the block across the exchange
//! (the rank's own part) or of the message buffer (another rank's part). A consumer that
//! knows these pieces can read the data straight from where the exchange leaves it, or write
//! it straight to where the exchange takes it from, instead of unpacking or packing in a
//! separate pass: `fft-core` gathers the lines of its strided FFT tiles this way.

use crate::layout::Layout;
use crate::pack::compact_strides;
use crate::plan::{LocalBox, RankExchange};

/// The buffer a run lies in, on the other side of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunBuffer {
    /// The block on the other side (the source block for [`RankExchange::dst_runs`], the
    /// destination block for [`RankExchange::src_runs`]): this rank's own part.
    Block,
    /// The message buffer (receive buffer for `dst_runs`, send buffer for `src_runs`).
    Message,
}

/// Where one run lies: a buffer and the offset of its first element there, packed into 8
/// bytes (the top bit is the buffer), since a map holds one per row of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run(u64);

impl Run {
    const MESSAGE: u64 = 1 << 63;

    /// A run at `offset` (below 2⁶³) elements into `buffer`.
    ///
    /// ```
    /// use redist::piecewise::{Run, RunBuffer};
    /// let run = Run::new(RunBuffer::Message, 42);
    /// assert_eq!((run.buffer(), run.offset()), (RunBuffer::Message, 42));
    /// ```
    pub fn new(buffer: RunBuffer, offset: usize) -> Self {
        debug_assert!((offset as u64) < Self::MESSAGE, "offset {offset} too large");
        let flag = match buffer {
            RunBuffer::Block => 0,
            RunBuffer::Message => Self::MESSAGE,
        };
        Run(offset as u64 | flag)
    }

    /// A placeholder for a run not mapped yet (never a run of any map).
    pub const UNSET: Run = Run(Self::MESSAGE - 1);

    /// Which buffer.
    #[inline]
    pub fn buffer(self) -> RunBuffer {
        if self.0 & Self::MESSAGE != 0 {
            RunBuffer::Message
        } else {
            RunBuffer::Block
        }
    }

    /// Offset in elements.
    #[inline]
    pub fn offset(self) -> usize {
        (self.0 & !Self::MESSAGE) as usize
    }
}

/// Memory order (slowest first) recovered from strides: axes by decreasing stride, ties (axes
/// of extent one) broken by logical order. Only the trailing axes with extent above one
/// matter for runs, and those have distinct strides.
fn order_of(strides: &[usize], extent: &[usize]) -> Vec<usize> {
    let mut axes: Vec<usize> = (0..strides.len()).collect();
    axes.sort_by(|&a, &b| {
        let key = |x: usize| if extent[x] == 1 { 0 } else { strides[x] };
        key(b).cmp(&key(a)).then(a.cmp(&b))
    });
    axes
}

/// The trailing axes (in memory order) of a block with `strides`/`extent` whose product of
/// extents is `run_len`, or `None` if no suffix of the memory order has exactly that size.
fn run_axes(strides: &[usize], extent: &[usize], run_len: usize) -> Option<Vec<usize>> {
    let order = order_of(strides, extent);
    let mut size = 1;
    let mut axes = Vec::new();
    for &a in order.iter().rev() {
        if size == run_len {
            break;
        }
        size *= extent[a];
        axes.push(a);
    }
    (size == run_len).then(|| {
        axes.reverse();
        axes
    })
}

/// Whether [`map_runs`] would succeed, without building the map (which has one entry per
/// run, too many to allocate just to ask, e.g. for the model on a huge problem).
fn runs_exist(
    block_strides: &[usize],
    block_extent: &[usize],
    run_len: usize,
    parts: &[(LocalBox, Vec<usize>, usize, RunBuffer)],
) -> bool {
    let len: usize = block_extent.iter().product();
    if run_len == 0 || !len.is_multiple_of(run_len) {
        return false;
    }
    if len == 0 {
        return true;
    }
    let Some(trailing) = run_axes(block_strides, block_extent, run_len) else {
        return false;
    };
    parts
        .iter()
        .filter(|(part, ..)| !part.is_empty())
        .all(|(part, other_strides, ..)| {
            let mut expect = 1;
            trailing.iter().rev().all(|&a| {
                let ok = part.ranges[a].len() == block_extent[a]
                    && (block_extent[a] == 1 || other_strides[a] == expect);
                expect *= block_extent[a];
                ok
            })
        })
}

/// Maps the runs of a block (`block_strides`, `block_extent`) that boxes of it exchange with
/// the other side: for each `(box, other-side strides, other-side offset of the box's first
/// element, buffer)`, writes into `runs` (one entry per run of the block) where each run inside
/// a box lies on the other side; entries of runs outside every box are left alone. `false`
/// when a run is not contiguous on the other side.
fn map_runs_into(
    block_strides: &[usize],
    block_extent: &[usize],
    run_len: usize,
    parts: &[(LocalBox, Vec<usize>, usize, RunBuffer)],
    runs: &mut [Run],
) -> bool {
    let len: usize = block_extent.iter().product();
    if !runs_exist(block_strides, block_extent, run_len, parts) {
        return false;
    }
    if len == 0 {
        return true;
    }
    assert_eq!(runs.len(), len / run_len, "one entry per run of the block");
    let Some(trailing) = run_axes(block_strides, block_extent, run_len) else {
        return false;
    };
    let order = order_of(block_strides, block_extent);
    let outer: Vec<usize> = order
        .iter()
        .copied()
        .filter(|a| !trailing.contains(a))
        .collect();
    for (part, other_strides, base, buffer) in parts {
        if part.is_empty() {
            continue;
        }
        // Every combination of the box's outer indices starts one run (`runs_exist` checked
        // that the box covers the run axes whole, held compactly on the other side).
        let counts: Vec<usize> = outer.iter().map(|&a| part.ranges[a].len()).collect();
        for flat in 0..counts.iter().product::<usize>() {
            let (mut rest, mut here, mut there) = (flat, 0, *base);
            for (k, &a) in outer.iter().enumerate().rev() {
                let x = rest % counts[k];
                rest /= counts[k];
                here += (part.ranges[a].start + x) * block_strides[a];
                there += x * other_strides[a];
            }
            runs[here / run_len] = Run::new(*buffer, there);
        }
    }
    true
}

/// The whole map of [`map_runs_into`], `None` unless every run of the block is in a box.
fn map_runs(
    block_strides: &[usize],
    block_extent: &[usize],
    run_len: usize,
    parts: &[(LocalBox, Vec<usize>, usize, RunBuffer)],
) -> Option<Vec<Run>> {
    let len: usize = block_extent.iter().product();
    if run_len == 0 || !len.is_multiple_of(run_len) {
        return None;
    }
    let mut runs = vec![Run::UNSET; len / run_len];
    map_runs_into(block_strides, block_extent, run_len, parts, &mut runs)
        .then_some(())
        .and_then(|()| runs.iter().all(|&r| r != Run::UNSET).then_some(runs))
}

/// Where each run of `run_len` elements of rank `me`'s block of `mid` (runs in memory order,
/// run `i` at offset `i · run_len`) lies among the blocks of `other`, a layout of the same
/// global array, when every rank's block of `other` sits in one address range, rank `q`'s
/// from `q · region_len` on (a shared-memory window with a region per rank): the offset of
/// the run's first element there, as a [`RunBuffer::Message`] run. A consumer reads or writes
/// its rows straight in the peers' blocks this way, with no message at all: `fft-core`'s
/// fused sweeps do, when the caller's blocks are in such a window. `None` when `run_len` is
/// not the size of trailing memory axes of `mid`'s block, or a run is not contiguous, with
/// the same strides, in the block of `other` that holds it.
///
/// ```
/// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, piecewise::window_runs};
/// // Slab in FFTW's layout: axis 0 split (from) → axis 1 split, memory order 1, 0, 2 (to).
/// let grid = GridShape::new(vec![2]).unwrap();
/// let from = Layout::pencil(&[4, 4, 3], grid.clone()).unwrap();
/// let to = Layout::new(&[4, 4, 3], grid, vec![1], MemoryOrder::new(vec![1, 0, 2]).unwrap())
///     .unwrap();
/// // Rank 0's rows of `to` (i1 in 0..2, then i0 in 0..4) in the blocks of `from`, regions of 100.
/// let runs = window_runs(&to, 0, &from, 3, 100).unwrap();
/// let offsets: Vec<usize> = runs.iter().map(|r| r.offset()).collect();
/// assert_eq!(offsets, [0, 12, 100, 112, 3, 15, 103, 115]);
/// ```
pub fn window_runs(
    mid: &Layout,
    me: usize,
    other: &Layout,
    run_len: usize,
    region_len: usize,
) -> Option<Vec<Run>> {
    let extent = mid.local_shape(me);
    let strides = mid.local_strides(me);
    let len: usize = extent.iter().product();
    if len == 0 {
        return Some(Vec::new());
    }
    if run_len == 0 || !len.is_multiple_of(run_len) {
        return None;
    }
    let trailing = run_axes(&strides, &extent, run_len)?;
    let outer: Vec<usize> = order_of(&strides, &extent)
        .into_iter()
        .filter(|a| !trailing.contains(a))
        .collect();
    let start = mid.global_offsets(me);
    let ranks = other.grid().ranks();
    let ranges: Vec<Vec<std::ops::Range<usize>>> =
        (0..ranks).map(|q| other.global_ranges(q)).collect();
    let other_strides: Vec<Vec<usize>> = (0..ranks).map(|q| other.local_strides(q)).collect();
    // A run is one contiguous piece of the holder's block when its axes have the same strides
    // there as here (they are whole in the holder's block when its two corners are in it).
    let same_runs: Vec<bool> = other_strides
        .iter()
        .map(|s| {
            trailing
                .iter()
                .all(|&a| extent[a] == 1 || s[a] == strides[a])
        })
        .collect();
    let holds = |q: usize, index: &[usize]| ranges[q].iter().zip(index).all(|(r, i)| r.contains(i));
    let mut runs = Vec::with_capacity(len / run_len);
    let mut first = start.clone();
    let mut last = start.clone();
    let mut holder = 0;
    for flat in 0..len / run_len {
        let mut rest = flat;
        for &a in outer.iter().rev() {
            first[a] = start[a] + rest % extent[a];
            last[a] = first[a];
            rest /= extent[a];
        }
        for &a in &trailing {
            first[a] = start[a];
            last[a] = start[a] + extent[a] - 1;
        }
        if !holds(holder, &first) {
            holder = (0..ranks).find(|&q| holds(q, &first))?;
        }
        if !holds(holder, &last) || !same_runs[holder] {
            return None;
        }
        let offset: usize = first
            .iter()
            .zip(&ranges[holder])
            .zip(&other_strides[holder])
            .map(|((i, r), s)| (i - r.start) * s)
            .sum();
        runs.push(Run::new(RunBuffer::Message, holder * region_len + offset));
    }
    Some(runs)
}

impl RankExchange {
    /// The destination block cut into runs of `run_len` elements (consecutive in memory, run
    /// `i` at offset `i · run_len`), each mapped to where the exchange leaves it before
    /// unpacking: the source block (this rank's own part) or the receive buffer. `None` when
    /// `run_len` is not the size of trailing memory axes of the destination block that every
    /// part keeps whole and in the same order.
    ///
    /// ```
    /// use redist::{grid::GridShape, layout::{Layout, MemoryOrder}, plan::ExchangePlan};
    /// use redist::piecewise::RunBuffer;
    /// // A slab in FFTW's layout: axis 0 split → axis 1 split, memory order 1, 0, 2.
    /// let grid = GridShape::new(vec![2]).unwrap();
    /// let from = Layout::pencil(&[4, 4, 3], grid.clone()).unwrap();
    /// let to = Layout::new(&[4, 4, 3], grid, vec![1], MemoryOrder::new(vec![1, 0, 2]).unwrap())
    ///     .unwrap();
    /// let part = ExchangePlan::new(&from, &to).unwrap().for_rank(0);
    /// let runs = part.dst_runs(3).unwrap(); // rows of axis 2
    /// assert_eq!(runs.len(), 2 * 4);
    /// assert_eq!(runs[0].buffer(), RunBuffer::Block);     // (i1 = 0, i0 = 0): own part
    /// assert_eq!(runs[2].buffer(), RunBuffer::Message);   // (i1 = 0, i0 = 2): from rank 1
    /// assert!(part.dst_runs(2).is_none());              // not whole rows
    /// ```
    pub fn dst_runs(&self, run_len: usize) -> Option<Vec<Run>> {
        map_runs(
            &self.dst_strides,
            &self.dst_extent(),
            run_len,
            &self.dst_parts(),
        )
    }

    /// Writes the entries of [`RankExchange::dst_runs`] for the runs this part moves into
    /// `runs` (one entry per run of the destination block) and leaves the others alone: a
    /// piece of an exchange ([`RankExchange::piece`]) maps its own runs, with offsets into its
    /// own (small) receive buffer. `false` when the runs are not whole on the other side.
    pub fn dst_runs_into(&self, run_len: usize, runs: &mut [Run]) -> bool {
        map_runs_into(
            &self.dst_strides,
            &self.dst_extent(),
            run_len,
            &self.dst_parts(),
            runs,
        )
    }

    /// [`RankExchange::dst_runs_into`] for the source block and the send buffer.
    pub fn src_runs_into(&self, run_len: usize, runs: &mut [Run]) -> bool {
        map_runs_into(
            &self.src_strides,
            &self.src_extent(),
            run_len,
            &self.src_parts(),
            runs,
        )
    }

    /// Whether [`RankExchange::dst_runs`] has a map, without building it.
    pub fn has_dst_runs(&self, run_len: usize) -> bool {
        runs_exist(
            &self.dst_strides,
            &self.dst_extent(),
            run_len,
            &self.dst_parts(),
        )
    }

    /// Whether [`RankExchange::src_runs`] has a map, without building it.
    pub fn has_src_runs(&self, run_len: usize) -> bool {
        runs_exist(
            &self.src_strides,
            &self.src_extent(),
            run_len,
            &self.src_parts(),
        )
    }

    /// Per peer: its box of the destination block, where that box lies on the other side
    /// (strides and offset), and in which buffer.
    fn dst_parts(&self) -> Vec<(LocalBox, Vec<usize>, usize, RunBuffer)> {
        self.peers
            .iter()
            .map(|p| {
                if p.peer == self.group_index {
                    // Own part: dst-local x ↔ src-local x − recv.start + send.start.
                    (
                        p.recv_box.clone(),
                        self.src_strides.clone(),
                        p.send_box.offset(&self.src_strides),
                        RunBuffer::Block,
                    )
                } else {
                    (
                        p.recv_box.clone(),
                        compact_strides(&p.recv_box.extent(), &self.message_order),
                        p.recv_offset,
                        RunBuffer::Message,
                    )
                }
            })
            .collect()
    }

    /// The source block cut into runs of `run_len` elements, each mapped to where the
    /// exchange needs it: the destination block (this rank's own part) or the send buffer
    /// (as packing would place it). `None` as for [`RankExchange::dst_runs`].
    pub fn src_runs(&self, run_len: usize) -> Option<Vec<Run>> {
        map_runs(
            &self.src_strides,
            &self.src_extent(),
            run_len,
            &self.src_parts(),
        )
    }

    /// The same as [`RankExchange::dst_parts`] for the source block.
    fn src_parts(&self) -> Vec<(LocalBox, Vec<usize>, usize, RunBuffer)> {
        self.peers
            .iter()
            .map(|p| {
                if p.peer == self.group_index {
                    (
                        p.send_box.clone(),
                        self.dst_strides.clone(),
                        p.recv_box.offset(&self.dst_strides),
                        RunBuffer::Block,
                    )
                } else {
                    (
                        p.send_box.clone(),
                        compact_strides(&p.send_box.extent(), &self.message_order),
                        p.send_offset,
                        RunBuffer::Message,
                    )
                }
            })
            .collect()
    }

    /// Local extent of the source block.
    fn src_extent(&self) -> Vec<usize> {
        self.src_shape.clone()
    }

    /// Local extent of the destination block.
    fn dst_extent(&self) -> Vec<usize> {
        self.dst_shape.clone()
    }
}

#[cfg(test)]
mod tests {
    use crate::grid::GridShape;
    use crate::layout::{Layout, MemoryOrder};
    use crate::piecewise::RunBuffer;
    use crate::plan::ExchangePlan;

    use crate::piecewise::Run;
    use crate::plan::RankExchange;

    /// Checks the maps of one piece of an exchange (the whole exchange, or a
    /// [`RankExchange::piece`] of it) on index-valued data, rank by rank: every run the
    /// piece maps holds, in the piece's own message buffers, exactly the source's
    /// (destination's) elements. Marks the runs it mapped in `src_seen`/`dst_seen`.
    fn check_piece(
        src: &[Vec<u64>],
        dst: &[Vec<u64>],
        pieces: &[RankExchange],
        run_len: usize,
        src_seen: &mut [Vec<usize>],
        dst_seen: &mut [Vec<usize>],
    ) {
        let p = pieces.len();
        let unset = Run::UNSET;
        for rank in 0..p {
            let part = &pieces[rank];
            // Messages as packing lays them out.
            let mut send = vec![0u64; part.send_len];
            for (pl, peer) in part.pack_plans().iter().zip(&part.peers) {
                if peer.peer != part.group_index {
                    pl.run(
                        &src[rank],
                        peer.send_box.offset(&part.src_strides),
                        &mut send,
                        peer.send_offset,
                    );
                }
            }
            assert!(part.has_src_runs(run_len) && part.has_dst_runs(run_len));
            let mut runs = vec![unset; src[rank].len() / run_len];
            assert!(part.src_runs_into(run_len, &mut runs), "whole rows");
            for (i, run) in runs.iter().enumerate() {
                if *run == Run::UNSET {
                    continue;
                }
                src_seen[rank][i] += 1;
                let there = match run.buffer() {
                    RunBuffer::Block => &dst[rank][run.offset()..run.offset() + run_len],
                    RunBuffer::Message => &send[run.offset()..run.offset() + run_len],
                };
                assert_eq!(there, &src[rank][i * run_len..(i + 1) * run_len]);
            }
            // Receive side: what the peers' pieces packed for this rank, in peer order.
            let mut recv = vec![0u64; part.recv_len];
            for peer in part.peers.iter().filter(|q| q.peer != part.group_index) {
                let theirs = &pieces[peer.peer_rank];
                let mine = &theirs.peers[part.group_index];
                let mut msg = vec![0u64; theirs.send_len];
                theirs.pack_plans()[part.group_index].run(
                    &src[peer.peer_rank],
                    mine.send_box.offset(&theirs.src_strides),
                    &mut msg,
                    mine.send_offset,
                );
                let n = mine.send_box.len();
                assert_eq!(
                    n,
                    peer.recv_box.len(),
                    "the pieces of sender and receiver match"
                );
                recv[peer.recv_offset..peer.recv_offset + n]
                    .copy_from_slice(&msg[mine.send_offset..mine.send_offset + n]);
            }
            let mut runs = vec![unset; dst[rank].len() / run_len];
            assert!(part.dst_runs_into(run_len, &mut runs), "whole rows");
            for (i, run) in runs.iter().enumerate() {
                if *run == Run::UNSET {
                    continue;
                }
                dst_seen[rank][i] += 1;
                let there = match run.buffer() {
                    RunBuffer::Block => &src[rank][run.offset()..run.offset() + run_len],
                    RunBuffer::Message => &recv[run.offset()..run.offset() + run_len],
                };
                assert_eq!(there, &dst[rank][i * run_len..(i + 1) * run_len]);
            }
        }
    }

    /// Brute force: with index-valued blocks, every run read through the map holds exactly
    /// the destination's (source's) elements, for slabs of several shapes and group sizes,
    /// both directions; and the same for the pieces of [`RankExchange::piece`] along the
    /// slab's scattered/gathered axis 1, which together map every run exactly once.
    /// A 3-D slab over `p` ranks split along axis 0 in C order, and the same array split
    /// along axis 1 in FFTW's memory order 1, 0, 2.
    fn slab_pair(shape: &[usize; 3], p: usize) -> (Layout, Layout) {
        let grid = GridShape::new(vec![p]).unwrap();
        let l0 = Layout::pencil(shape, grid.clone()).unwrap();
        let l1 = Layout::new(
            shape,
            grid,
            vec![1],
            MemoryOrder::new(vec![1, 0, 2]).unwrap(),
        )
        .unwrap();
        (l0, l1)
    }

    #[test]
    fn runs_agree_with_the_exchange_on_index_valued_data() {
        for shape in [[4usize, 4, 3], [5, 7, 6], [3, 2, 5], [7, 3, 1]] {
            for p in 1..=4 {
                let (l0, l1) = slab_pair(&shape, p);
                for (from, to) in [(&l0, &l1), (&l1, &l0)] {
                    let plan = ExchangePlan::new(from, to).unwrap();
                    let src: Vec<Vec<u64>> = (0..p)
                        .map(|r| {
                            let mut b = vec![0u64; from.local_len(r)];
                            from.fill_index_valued(r, &mut b, |g| g);
                            b
                        })
                        .collect();
                    let dst = plan.simulate(&src);
                    let run_len = shape[2];
                    let whole: Vec<RankExchange> = (0..p).map(|r| plan.for_rank(r)).collect();
                    for (rank, part) in whole.iter().enumerate() {
                        let full = part.src_runs(run_len).expect("whole rows");
                        assert_eq!(full.len(), from.local_len(rank) / run_len);
                        assert!(part.dst_runs(run_len).is_some());
                    }
                    let seen = |len: &dyn Fn(usize) -> usize| -> Vec<Vec<usize>> {
                        (0..p).map(|r| vec![0; len(r) / run_len]).collect()
                    };
                    for size in [1, 2, 3, 100] {
                        let pieces = shape[1].div_ceil(size);
                        let mut src_seen = seen(&|r| from.local_len(r));
                        let mut dst_seen = seen(&|r| to.local_len(r));
                        for k in 0..pieces {
                            let chunked: Vec<RankExchange> =
                                whole.iter().map(|w| w.piece(1, size, k)).collect();
                            check_piece(
                                &src,
                                &dst,
                                &chunked,
                                run_len,
                                &mut src_seen,
                                &mut dst_seen,
                            );
                        }
                        for seen in src_seen.iter().chain(&dst_seen) {
                            assert!(seen.iter().all(|&c| c == 1), "{shape:?} {p} {size}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn no_map_when_runs_are_split() {
        // The classic pencil step transposes the last axis away: no whole runs.
        let grid = GridShape::new(vec![2]).unwrap();
        let l0 = Layout::pencil(&[4, 6, 5], grid.clone()).unwrap();
        let l1 = Layout::new(
            &[4, 6, 5],
            grid,
            vec![2],
            MemoryOrder::new(vec![1, 2, 0]).unwrap(),
        )
        .unwrap();
        let part = ExchangePlan::new(&l0, &l1).unwrap().for_rank(0);
        assert!(part.dst_runs(4).is_none() && !part.has_dst_runs(4));
        // Nor into the other layout's blocks in a window.
        assert!(super::window_runs(&l0, 0, &l1, 5, 1000).is_none());
        assert!(super::window_runs(&l1, 0, &l0, 4, 1000).is_none());
        assert!(part.src_runs(5).is_none() && !part.has_src_runs(5));
    }

    /// Each element of every rank's block of `mid`, found through [`super::window_runs`],
    /// is where brute force ([`Layout::locate`] of its global index) puts it in `other`.
    fn check_window_runs(mid: &Layout, other: &Layout, run_len: usize) {
        let shape = mid.global_shape().to_vec();
        let region = other.max_local_len() + 3;
        for me in 0..mid.grid().ranks() {
            let runs = super::window_runs(mid, me, other, run_len, region)
                .unwrap_or_else(|| panic!("{shape:?} rank {me}: whole runs"));
            let mut global = vec![0u64; mid.local_len(me)];
            mid.fill_index_valued(me, &mut global, |g| g);
            assert_eq!(runs.len() * run_len, global.len());
            for (o, &g) in global.iter().enumerate() {
                let mut index = vec![0; shape.len()];
                let mut rest = g as usize;
                for a in (0..shape.len()).rev() {
                    index[a] = rest % shape[a];
                    rest /= shape[a];
                }
                let (q, offset) = other.locate(&index);
                let run = runs[o / run_len];
                assert_eq!(run.buffer(), RunBuffer::Message);
                assert_eq!(
                    run.offset() + o % run_len,
                    q * region + offset,
                    "{shape:?} rank {me}, element {index:?}"
                );
            }
        }
    }

    #[test]
    fn window_runs_find_every_element_in_its_holders_block() {
        for (shape, p) in [([4, 6, 5], 2), ([7, 5, 3], 3), ([3, 8, 4], 4)] {
            let (slab, fftw) = slab_pair(&shape, p);
            check_window_runs(&fftw, &slab, shape[2]);
            check_window_runs(&slab, &fftw, shape[2]);
            check_window_runs(&slab, &slab, shape[2]);
        }
        // Pencils on a 2 x 2 grid, uneven: rows of the last axis stay whole when axis 1
        // moves between the grid dimensions.
        let grid = GridShape::new(vec![2, 2]).unwrap();
        let a = Layout::pencil(&[5, 3, 7, 4], grid.clone()).unwrap();
        let b = Layout::new(&[5, 3, 7, 4], grid, vec![0, 2], MemoryOrder::natural(4)).unwrap();
        check_window_runs(&a, &b, 4);
        check_window_runs(&b, &a, 4);
    }
}
