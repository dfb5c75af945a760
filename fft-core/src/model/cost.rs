//! What one exchange and one rank's local work cost: the terms [`super::predict`] adds up.
//!
//! Every function here works from the global problem and the rank with coordinate 0 in the
//! grid dimensions other than the exchanging one (it owns the largest block of every other
//! axis under the balanced split). The coordinates of the exchanging dimension are visited
//! only while they own something (`c < max(N_a, N_b)`), and the copies' run lengths come from
//! the two block sizes of the balanced split, so one exchange costs O(min(p, N)) time and O(d)
//! memory whatever P is.

use super::nodes::GroupPlacement;
use super::{Fusion, MachineProfile, Problem};
use redist::pack::compact_strides;
use redist::ExchangePlan;

/// How a rank's CPU-bound work (FFTs, copies, shared-memory transfers) turns into time.
/// A stage's work runs on the rank's threads (at most the node's cores), and the ranks of a
/// node share its cores: `time = max(most loaded rank / min(threads, cores), mean rank ·
/// ranks on the node / cores)`. The second bound is what oversubscription costs; it is taken
/// over the mean, not the most loaded rank, because a rank with less work (an uneven split,
/// or an idle rank) leaves its share of the cores to the others. Memory-bound work (copies,
/// FFT sweeps, shared-memory transfers) also shares the node's memory bandwidth: it takes at
/// least the bytes all the node's ranks read and write times `tw_memory_s_per_byte`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cpu {
    /// Cores one rank can use: min(threads, cores per node).
    rank_cores: f64,
    /// Ranks on the node divided by its cores.
    pub(super) node_load: f64,
    /// Slowdown of intra-node message latency: max(1, ranks on the node / cores).
    pub(super) intra_slowdown: f64,
    /// Ranks on the node.
    on_node: f64,
    /// Seconds per byte of the node's memory traffic (all its ranks together).
    memory_s_per_byte: f64,
}

impl Cpu {
    pub(super) fn new(profile: &MachineProfile, ranks: usize) -> Self {
        let on_node = ranks.min(profile.ranks_per_node) as f64;
        let cores = profile.cores_per_node as f64;
        let rank_cores = (profile.threads_per_rank as f64).min(cores);
        Self {
            rank_cores,
            node_load: on_node / cores,
            intra_slowdown: (on_node / cores).max(1.0),
            on_node,
            memory_s_per_byte: profile.tw_memory_s_per_byte,
        }
    }

    /// Time of a stage whose most loaded rank does `max` and the mean rank `mean` core-seconds.
    pub(super) fn time(&self, max: f64, mean: f64) -> f64 {
        (max / self.rank_cores).max(mean * self.node_load)
    }

    /// [`Cpu::time`] of memory-bound work whose mean rank reads and writes `mean_bytes`
    /// each (a copy of `mean_bytes`, or a sweep over them): at least the node's bytes at its
    /// memory bandwidth.
    pub(super) fn memory_time(&self, max: f64, mean: f64, mean_bytes: f64) -> f64 {
        self.time(max, mean)
            .max(self.node_memory(self.on_node * mean_bytes))
    }

    /// Seconds the node's memory needs to read and write `node_bytes` once.
    pub(super) fn node_memory(&self, node_bytes: f64) -> f64 {
        2.0 * node_bytes * self.memory_s_per_byte
    }
}

/// Seconds per byte of one core's copies: `slow` for element-granular ones, `fast` for long
/// contiguous runs (see [`MachineProfile::stream_bytes_per_s`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct CopyRates {
    slow: f64,
    fast: f64,
}

impl CopyRates {
    pub(super) fn new(profile: &MachineProfile) -> Self {
        let slow = 1.0 / profile.copy_bytes_per_s;
        let fast = if profile.stream_bytes_per_s > profile.copy_bytes_per_s {
            1.0 / profile.stream_bytes_per_s
        } else {
            slow
        };
        Self { slow, fast }
    }

    /// One core's seconds to copy `bytes` in contiguous runs, `runs_per_element` = 1 / run
    /// length (1 for a copy that moves single elements).
    pub(super) fn seconds(&self, bytes: f64, runs_per_element: f64) -> f64 {
        if self.slow == 0.0 {
            return 0.0;
        }
        bytes * self.fast + self.pattern(bytes, runs_per_element)
    }

    /// The part of [`CopyRates::seconds`] that comes from the runs being short: what reading
    /// or writing `bytes` in runs costs beyond streaming them.
    pub(super) fn pattern(&self, bytes: f64, runs_per_element: f64) -> f64 {
        bytes * (self.slow - self.fast) * runs_per_element
    }

    /// Whether run lengths matter at all (a separate, faster rate for long runs).
    fn distinguishes_runs(&self) -> bool {
        self.slow > self.fast
    }
}

/// Elements of a box copy that are one contiguous run on both sides: the fastest axes of the
/// destination, as long as the source runs through them in the same order without gaps (1
/// when the copy transposes). Strides per logical axis; axes of extent 1 do not count.
pub(super) fn common_run(extent: &[usize], src_strides: &[usize], dst_strides: &[usize]) -> usize {
    let mut dims: Vec<(usize, usize, usize)> = extent
        .iter()
        .zip(src_strides.iter().zip(dst_strides))
        .filter(|(&n, _)| n > 1)
        .map(|(&n, (&s, &d))| (n, s, d))
        .collect();
    dims.sort_by_key(|&(_, _, d)| d);
    let mut run = 1;
    for (n, s, d) in dims {
        if s != run || d != run {
            break;
        }
        run *= n;
    }
    run
}

/// The balanced split of `n` items into `parts`: part `c` owns `q + [c < m]` items starting at
/// `c·q + min(c, m)` (as `redist::split::balanced_range`, with the division done once).
#[derive(Debug, Clone, Copy)]
struct Split {
    q: usize,
    m: usize,
}

impl Split {
    fn new(n: usize, parts: usize) -> Self {
        Self {
            q: n / parts,
            m: n % parts,
        }
    }

    fn len(&self, c: usize) -> usize {
        self.q + usize::from(c < self.m)
    }

    /// Items owned by parts `lo..hi` (`hi` ≤ parts).
    fn span(&self, lo: usize, hi: usize) -> usize {
        let start = |p: usize| p * self.q + p.min(self.m);
        start(hi) - start(lo)
    }
}

/// Runs per element of an exchange's three kinds of copy (pack, unpack, own part), for the
/// boxes of rank 0 (the largest block of every axis under the balanced split): the
/// element-weighted mean of 1 / run length ([`common_run`]). Messages are in the source's
/// memory order, so packing copies runs of the source block and unpacking transposes when
/// the destination's memory order differs. The peers' boxes come in two sizes (the two block
/// sizes of the balanced split), so this takes O(1) box computations, not one per peer.
pub(super) fn runs_per_element(plan: &ExchangePlan) -> [f64; 3] {
    let (from, to) = (plan.from(), plan.to());
    let n = from.grid().dims()[plan.grid_dim()];
    let (a, b) = (plan.from_axis(), plan.to_axis());
    let shape = from.global_shape();
    let (split_a, split_b) = (Split::new(shape[a], n), Split::new(shape[b], n));
    let (src_shape, dst_shape) = (from.local_shape(0), to.local_shape(0));
    let (src_strides, dst_strides) = (from.local_strides(0), to.local_strides(0));
    let order = from.memory_order().axes();
    let mut sums = [(0.0f64, 0.0f64); 3];
    let mut add = |k: usize, extent: &[usize], count: usize, src: &[usize], dst: &[usize]| {
        let len: usize = extent.iter().product();
        if len > 0 && count > 0 {
            let weight = (len as f64) * count as f64;
            sums[k].0 += weight / common_run(extent, src, dst) as f64;
            sums[k].1 += weight;
        }
    };
    // Peers 1..n in two classes: c < m owns q + 1 items of the split axis, the others q.
    let classes = |split: Split| {
        let big = split.m.clamp(1, n);
        [(1, big - 1), (big, n - big)].map(|(first, count)| (split.len(first), count))
    };
    let mut own = src_shape.clone();
    own[b] = split_b.len(0);
    add(2, &own, 1, &src_strides, &dst_strides);
    for (len, count) in classes(split_b) {
        let mut e = src_shape.clone();
        e[b] = len;
        add(0, &e, count, &src_strides, &compact_strides(&e, order));
    }
    for (len, count) in classes(split_a) {
        let mut e = dst_shape.clone();
        e[a] = len;
        add(1, &e, count, &compact_strides(&e, order), &dst_strides);
    }
    sums.map(|(runs, len)| if len > 0.0 { runs / len } else { 1.0 })
}

/// Lines per tile of a strided FFT sweep along an axis of `n` elements of `element_bytes`
/// (the kernels' own tile size): each row of a tile is read and written as one run of that
/// many elements.
pub(super) fn tile_lines(n: usize, element_bytes: usize) -> usize {
    crate::kernels::tile_lines_of(n, element_bytes)
}

/// Costs of one exchange: (latency, bandwidth, memory, messages, bytes), each term for its
/// most loaded rank (and, where ranks share cores, for the node's mean rank; see [`Cpu`]).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ExchangeCost {
    pub(super) latency_s: f64,
    pub(super) bandwidth_s: f64,
    /// The intra-node and inter-node shares of `bandwidth_s` (they add up to it).
    pub(super) intra_s: f64,
    pub(super) inter_s: f64,
    pub(super) memory_s: f64,
    pub(super) messages: u64,
    pub(super) bytes: u64,
    /// Through a shared-memory window (one copy, no messages).
    pub(super) window: bool,
}

/// A transfer time with its intra-node and inter-node parts: (time, intra, inter).
type Transfer = (f64, f64, f64);

/// The extents an exchange moves, seen from the rank with coordinate 0 in the other grid
/// dimensions (it owns the largest part of each other axis under the balanced split, and
/// costs only grow with it).
struct ExchangeShape {
    /// Members of a group (the size of the exchanging grid dimension).
    n: usize,
    /// The axis split before (a) and after (b), their lengths and balanced splits.
    na: usize,
    nb: usize,
    split_a: Split,
    split_b: Split,
    /// Elements of the other axes in the rank's block.
    other: usize,
    /// Over all ranks the other axes' extents add up to the whole axes: a sum over the
    /// coordinates of this grid dimension (at coordinate 0 elsewhere) scales to the sum over
    /// every rank by this factor.
    to_all: f64,
    /// Rank distance between consecutive members.
    stride: usize,
}

impl ExchangeShape {
    fn new(plan: &ExchangePlan) -> Self {
        let from = plan.from();
        let grid = from.grid();
        let shape = from.global_shape();
        let j = plan.grid_dim();
        let (a, b) = (plan.from_axis(), plan.to_axis());
        let n = grid.dims()[j];
        let others = (0..shape.len()).filter(|&ax| ax != a && ax != b);
        let other: usize = others
            .clone()
            .map(|ax| match from.grid_dim_of(ax) {
                Some(g) => Split::new(shape[ax], grid.dims()[g]).len(0),
                None => shape[ax],
            })
            .product();
        let other_total: f64 = others.map(|ax| shape[ax] as f64).product();
        Self {
            n,
            na: shape[a],
            nb: shape[b],
            split_a: Split::new(shape[a], n),
            split_b: Split::new(shape[b], n),
            other,
            to_all: if other > 0 {
                other_total / other as f64
            } else {
                0.0
            },
            stride: grid.dims()[j + 1..].iter().product(),
        }
    }
}

/// What the members of one group pay, walked coordinate by coordinate: each per-rank term's
/// maximum, and the sums the node terms need.
#[derive(Default)]
struct MemberTotals {
    /// Call overhead plus the most loaded member's message latencies.
    latency_s: f64,
    /// The most loaded member's own transfer (each rank's link, shared memory).
    worst: Transfer,
    /// The most loaded member's copy seconds, and the sum over members of copy seconds
    /// and of bytes copied.
    max_copy: f64,
    sum_copy: f64,
    sum_copy_bytes: f64,
    /// Σ over members of the larger of the elements sent and received, and its largest term.
    sum_moved: f64,
    max_moved: f64,
    messages: u64,
    bytes: u64,
}

/// The cost of `plan`'s exchange within `problem` on `profile`, less what `fusion` takes over.
pub(super) fn exchange_cost(
    plan: &ExchangePlan,
    problem: &Problem,
    profile: &MachineProfile,
    cpu: Cpu,
    fusion: Fusion,
) -> ExchangeCost {
    let shape = ExchangeShape::new(plan);
    let members = walk_members(&shape, plan, problem, profile, cpu, fusion);
    let ranks = problem.ranks as f64;
    let eb = problem.element_bytes as f64;
    if fusion.window && on_one_node(&shape, problem, profile) {
        return window_cost(&shape, &members, problem, profile, cpu, fusion);
    }
    // The node's ranks together: their shared-memory and network transfers.
    let node = node_transfer(
        &shape,
        members.sum_moved * shape.to_all / ranks,
        problem,
        profile,
        cpu,
    );
    let (time, intra, inter) = if node.0 > members.worst.0 {
        node
    } else {
        members.worst
    };
    let mut cost = ExchangeCost {
        latency_s: members.latency_s,
        bandwidth_s: time,
        messages: members.messages,
        bytes: members.bytes,
        ..ExchangeCost::default()
    };
    // The two parts as shares of the time (with overlap, each is charged its share).
    let parts = intra + inter;
    if parts > 0.0 {
        cost.intra_s = time * intra / parts;
        cost.inter_s = time * inter / parts;
    }
    let mean_copy_bytes = members.sum_copy_bytes * eb * shape.to_all / ranks;
    cost.memory_s = cpu.memory_time(
        members.max_copy,
        members.sum_copy * shape.to_all / ranks,
        mean_copy_bytes,
    );
    cost
}

/// Whether every group of the exchange lies on one node (so that a fused exchange may go
/// through a shared-memory window): all ranks on one node, or groups of consecutive blocks
/// of ranks that the nodes hold whole.
fn on_one_node(shape: &ExchangeShape, problem: &Problem, profile: &MachineProfile) -> bool {
    let rpn = profile.ranks_per_node.max(1);
    let block = shape.stride.saturating_mul(shape.n);
    problem.ranks <= rpn || (block <= rpn && rpn.is_multiple_of(block))
}

/// The cost of an exchange through a shared-memory window: each rank reads (or writes) its
/// peers' parts straight from (or into) their memory inside the fused sweep, one copy at
/// `tw_window_s_per_byte` (the ranks sharing the node's cores and memory bandwidth), after
/// one synchronization of the group per piece. No messages, no separate pack or unpack.
fn window_cost(
    shape: &ExchangeShape,
    members: &MemberTotals,
    problem: &Problem,
    profile: &MachineProfile,
    cpu: Cpu,
    fusion: Fusion,
) -> ExchangeCost {
    let ranks = problem.ranks as f64;
    let eb = problem.element_bytes as f64;
    let tw = profile.tw_window_s_per_byte;
    let mean_bytes = members.sum_moved * eb * shape.to_all / ranks;
    let transfer = cpu.memory_time(members.max_moved * eb * tw, mean_bytes * tw, mean_bytes);
    let latency = if shape.n < 2 {
        0.0
    } else {
        fusion.pieces.max(1) as f64 * profile.ts_window_s * cpu.intra_slowdown
    };
    ExchangeCost {
        latency_s: latency,
        bandwidth_s: transfer,
        intra_s: transfer,
        inter_s: 0.0,
        memory_s: 0.0,
        messages: 0,
        bytes: members.bytes,
        window: true,
    }
}

/// What one member pays per message, per byte moved and per byte copied: the profile's
/// rates for this exchange.
struct MemberRates {
    /// Seconds per intra-node message (slowed by shared cores) and per inter-node one.
    ts_intra: f64,
    ts_inter: f64,
    /// Seconds per element moved inside and between nodes.
    tw_intra: f64,
    tw_inter: f64,
    overlap: f64,
    copies: CopyRates,
    /// Runs per element of the pack, unpack and own-part copies.
    runs: [f64; 3],
    eb: f64,
    fusion: Fusion,
}

impl MemberRates {
    fn new(
        plan: &ExchangePlan,
        problem: &Problem,
        profile: &MachineProfile,
        cpu: Cpu,
        fusion: Fusion,
    ) -> Self {
        let eb = problem.element_bytes as f64;
        let copies = CopyRates::new(profile);
        Self {
            ts_intra: profile.ts_intra_s * cpu.intra_slowdown,
            ts_inter: profile.ts_inter_s,
            tw_intra: profile.tw_intra_s_per_byte * eb,
            tw_inter: profile.tw_inter_s_per_byte * eb,
            overlap: profile.intra_inter_overlap,
            runs: if copies.distinguishes_runs() {
                runs_per_element(plan)
            } else {
                [1.0; 3]
            },
            copies,
            eb,
            fusion,
        }
    }

    /// Latency of `intra` messages inside the node out of `all`.
    fn latency(&self, intra: usize, all: usize) -> f64 {
        intra as f64 * self.ts_intra + (all - intra) as f64 * self.ts_inter
    }

    /// One side's transfer of `intra` and `inter` elements.
    fn transfer(&self, intra: usize, inter: usize) -> Transfer {
        let (i, e) = (intra as f64 * self.tw_intra, inter as f64 * self.tw_inter);
        (i.max(e) + (1.0 - self.overlap) * i.min(e), i, e)
    }

    /// (copy seconds on one core, bytes copied) of a member that sends `send`, receives
    /// `recv` and keeps `own` elements, less what fused sweeps do on the way.
    fn copies(&self, send: usize, recv: usize, own: usize) -> (f64, f64) {
        let f = self.fusion;
        let parts = [
            (send, !f.pack, self.runs[0]),
            (recv, !f.unpack, self.runs[1]),
            (own, !(f.pack || f.unpack), self.runs[2]),
        ];
        parts.iter().fold((0.0, 0.0), |(t, b), &(x, on, runs)| {
            let bytes = if on { x as f64 * self.eb } else { 0.0 };
            (t + self.copies.seconds(bytes, runs), b + bytes)
        })
    }
}

/// Walks the coordinates of the exchanging grid dimension that own something
/// (`c < max(N_a, N_b)`), in segments over which every quantity is the same: one node's
/// coordinates (or, when each node holds at most one member, any run of coordinates) that lie
/// on the same side of every block-size boundary of the two splits.
fn walk_members(
    shape: &ExchangeShape,
    plan: &ExchangePlan,
    problem: &Problem,
    profile: &MachineProfile,
    cpu: Cpu,
    fusion: Fusion,
) -> MemberTotals {
    let ExchangeShape {
        n,
        na,
        nb,
        split_a,
        split_b,
        other,
        stride,
        ..
    } = *shape;
    let rpn = profile.ranks_per_node.max(1);
    let rates = MemberRates::new(plan, problem, profile, cpu, fusion);
    let nonempty = |len: usize, lo: usize, hi: usize| hi.min(len.min(n)).saturating_sub(lo);
    // The fixed cost of the collective call (none for a group of one: a local copy).
    let overhead = if n < 2 {
        0.0
    } else if stride.saturating_mul(n) <= rpn {
        profile.exchange_overhead_s * cpu.intra_slowdown
    } else {
        profile.exchange_overhead_s
    };
    let pieces = fusion.pieces.max(1);
    // Every member pays at least the call overhead.
    let mut t = MemberTotals {
        latency_s: pieces as f64 * overhead,
        ..MemberTotals::default()
    };
    let limit = n.min(na.max(nb));
    let breaks = [split_a.m, split_b.m, na, nb];
    let mut c = 0;
    while c < limit {
        let (lo, hi, end) = segment(c, (n, limit), stride, rpn, &breaks);
        let count = (end.max(c + 1) - c) as f64;
        let (ac, bc) = (split_a.len(c), split_b.len(c));
        let own = ac * bc * other;
        // Send side: my rows of axis a, each peer's future range of axis b; receive side:
        // each peer's current range of axis a, my future range of axis b.
        let (send, recv) = (ac * nb * other - own, na * bc * other - own);
        let send_intra = ac * other * split_b.span(lo, hi) - own;
        let recv_intra = bc * other * split_a.span(lo, hi) - own;
        let (me_a, me_b) = (usize::from(ac > 0), usize::from(bc > 0));
        let msgs = |len: usize, me: usize, lo: usize, hi: usize| nonempty(len, lo, hi) - me;
        let (send_msgs, recv_msgs) = (
            if ac * other > 0 {
                [msgs(nb, me_b, lo, hi), msgs(nb, me_b, 0, n)]
            } else {
                [0; 2]
            },
            if bc * other > 0 {
                [msgs(na, me_a, lo, hi), msgs(na, me_a, 0, n)]
            } else {
                [0; 2]
            },
        );
        let latency = overhead
            + rates
                .latency(send_msgs[0], send_msgs[1])
                .max(rates.latency(recv_msgs[0], recv_msgs[1]));
        t.latency_s = t.latency_s.max(pieces as f64 * latency);
        for side in [
            rates.transfer(send_intra, send - send_intra),
            rates.transfer(recv_intra, recv - recv_intra),
        ] {
            if side.0 > t.worst.0 {
                t.worst = side;
            }
        }
        let (copy_s, copy_bytes) = rates.copies(send, recv, own);
        t.max_copy = t.max_copy.max(copy_s);
        t.sum_copy += copy_s * count;
        t.sum_copy_bytes += copy_bytes / rates.eb * count;
        t.sum_moved += send.max(recv) as f64 * count;
        t.max_moved = t.max_moved.max(send.max(recv) as f64);
        t.messages = t
            .messages
            .max((send_msgs[1].max(recv_msgs[1]) * pieces) as u64);
        t.bytes = t.bytes.max((send.max(recv) * problem.element_bytes) as u64);
        c += count as usize;
    }
    t
}

/// The segment of coordinates (of `n`, those below `limit` owning something) that starts at
/// `c`: the range `lo..hi` of c's peers on its node (consecutive coordinates), and the end of
/// the run over which nothing changes (c's node's coordinates, or any run when each node
/// holds one member, cut at every `breaks`).
fn segment(
    c: usize,
    (n, limit): (usize, usize),
    stride: usize,
    rpn: usize,
    breaks: &[usize],
) -> (usize, usize, usize) {
    let alone = stride >= rpn;
    let (lo, hi) = if alone {
        (c, c + 1)
    } else {
        let node = (c * stride) / rpn;
        let lo = (node * rpn).div_ceil(stride).min(n);
        let hi = ((node + 1).saturating_mul(rpn))
            .div_ceil(stride)
            .min(n)
            .max(lo);
        (lo, hi)
    };
    let mut end = if alone { limit } else { hi.min(limit) };
    for &b in breaks.iter().filter(|&&b| b > c) {
        end = end.min(b);
    }
    (lo, hi, end)
}

/// The transfer time of the node that takes longest, its ranks together: messages between
/// its own ranks are copies through shared memory (its cores and its memory carry them),
/// messages beyond it share its network interface, and what leaves its switch shares the
/// switch's uplinks. `mean_moved`: the mean rank's elements sent (or received, the larger);
/// a node of `R` ranks whose same-group pairs number `C` ([`GroupPlacement::pair_range`])
/// keeps `(C − R)/(n − 1)` and sends `(R·n − C)/(n − 1)` of them beyond itself (exact for
/// equal blocks: every peer gets the same share).
fn node_transfer(
    shape: &ExchangeShape,
    mean_moved: f64,
    problem: &Problem,
    profile: &MachineProfile,
    cpu: Cpu,
) -> Transfer {
    if shape.n < 2 {
        return (0.0, 0.0, 0.0);
    }
    let placement =
        GroupPlacement::new(shape.n, shape.stride, problem.ranks, profile.ranks_per_node);
    let eb = problem.element_bytes as f64;
    let r = placement.per_node() as f64;
    let n = shape.n as f64;
    let overlap = profile.intra_inter_overlap;
    let uplink = uplink_factor(profile, placement.span());
    let node_time = |pairs: u128| -> Transfer {
        let pairs = pairs as f64;
        let intra_bytes = mean_moved * eb * (pairs - r).max(0.0) / (n - 1.0);
        let inter_bytes = mean_moved * eb * (r * n - pairs).max(0.0) / (n - 1.0);
        let intra = (intra_bytes / r * profile.tw_intra_s_per_byte * cpu.node_load)
            .max(cpu.node_memory(intra_bytes));
        let inter = inter_bytes * profile.tw_node_s_per_byte * uplink;
        (
            intra.max(inter) + (1.0 - overlap) * intra.min(inter),
            intra,
            inter,
        )
    };
    // The time is convex in the pair count (intra grows, inter shrinks with it): the
    // slowest node is one of the two extremes.
    let (fewest, most) = placement.pair_range();
    let (a, b) = (node_time(fewest), node_time(most));
    if a.0 >= b.0 {
        a
    } else {
        b
    }
}

/// How much longer than through its own link a node's inter-node traffic takes when its
/// exchange partners spread over `span` consecutive nodes: the fraction
/// `(span − S)/(span − 1)` of them lies beyond its switch of `S` nodes, whose uplinks are
/// `uplink_taper` times thinner than its nodes' links together.
fn uplink_factor(profile: &MachineProfile, span: usize) -> f64 {
    let switch = profile.switch_nodes.max(1);
    if span <= switch || profile.uplink_taper <= 1.0 {
        return 1.0;
    }
    let off = (span - switch) as f64 / (span - 1) as f64;
    (profile.uplink_taper * off).max(1.0)
}
