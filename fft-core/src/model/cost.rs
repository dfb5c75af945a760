//! What one exchange and one rank's local work cost: the terms [`super::predict`] adds up.
//!
//! Every function here works from the global problem and the rank with coordinate 0 in the
//! grid dimensions other than the exchanging one (it owns the largest block of every other
//! axis under the balanced split). The coordinates of the exchanging dimension are visited
//! only while they own something (`c < max(N_a, N_b)`), and the copies' run lengths come from
//! the two block sizes of the balanced split, so one exchange costs O(min(p, N)) time and O(d)
//! memory whatever P is.

use super::{Fusion, MachineProfile, Problem};
use redist::pack::compact_strides;
use redist::ExchangePlan;

/// How a rank's CPU-bound work (FFTs, copies, shared-memory transfers) turns into time.
/// A stage's work runs on the rank's threads (at most the node's cores), and the ranks of a
/// node share its cores: `time = max(most loaded rank / min(threads, cores), mean rank ·
/// ranks on the node / cores)`. The second bound is what oversubscription costs; it is taken
/// over the mean, not the most loaded rank, because a rank with less work (an uneven split,
/// or an idle rank) leaves its share of the cores to the others.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cpu {
    /// Cores one rank can use: min(threads, cores per node).
    rank_cores: f64,
    /// Ranks on the node divided by its cores.
    pub(super) node_load: f64,
    /// Slowdown of intra-node message latency: max(1, ranks on the node / cores).
    pub(super) intra_slowdown: f64,
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
        }
    }

    /// Time of a stage whose most loaded rank does `max` and the mean rank `mean` core-seconds.
    pub(super) fn time(&self, max: f64, mean: f64) -> f64 {
        (max / self.rank_cores).max(mean * self.node_load)
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
/// (as `local::tile_lines`: 1 MiB tiles, 4..=64 lines): each row of a tile is read and
/// written as one run of that many elements.
pub(super) fn tile_lines(n: usize, element_bytes: usize) -> usize {
    ((1usize << 20) / (n.max(1) * element_bytes.max(1))).clamp(4, 64)
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
}

/// How much longer than through its own link a node's inter-node traffic takes in an
/// exchange among `n` members `stride` ranks apart: the members lie on `G` consecutive nodes,
/// and the fraction `(G − S)/(G − 1)` of a node's partners lies beyond its switch of `S`
/// nodes, whose uplinks are `uplink_taper` times thinner than its nodes' links together.
fn uplink_factor(profile: &MachineProfile, n: usize, stride: usize) -> f64 {
    let rpn = profile.ranks_per_node.max(1);
    let nodes = if stride >= rpn {
        n
    } else {
        (n.saturating_sub(1) * stride) / rpn + 1
    };
    let switch = profile.switch_nodes.max(1);
    if nodes <= switch || profile.uplink_taper <= 1.0 {
        return 1.0;
    }
    let off = (nodes - switch) as f64 / (nodes - 1) as f64;
    (profile.uplink_taper * off).max(1.0)
}

/// The cost of `plan`'s exchange within `problem` on `profile`, less what `fusion` takes over.
pub(super) fn exchange_cost(
    plan: &ExchangePlan,
    problem: &Problem,
    profile: &MachineProfile,
    cpu: Cpu,
    fusion: Fusion,
) -> ExchangeCost {
    let from = plan.from();
    let grid = from.grid();
    let shape = from.global_shape();
    let j = plan.grid_dim();
    let (a, b) = (plan.from_axis(), plan.to_axis());
    let (na, nb) = (shape[a], shape[b]);
    let n = grid.dims()[j];
    let (split_a, split_b) = (Split::new(na, n), Split::new(nb, n));
    // Largest extent of every other axis: the rank with coordinate 0 in the other grid
    // dimensions owns the largest part of each (balanced split), and costs only grow with it.
    let others = (0..shape.len()).filter(|&ax| ax != a && ax != b);
    let other: usize = others
        .clone()
        .map(|ax| match from.grid_dim_of(ax) {
            Some(g) => Split::new(shape[ax], grid.dims()[g]).len(0),
            None => shape[ax],
        })
        .product();
    // Over all ranks, the other axes' extents add up to the whole axes: a sum over the
    // coordinates c of this grid dimension (at coordinate 0 elsewhere) scales to the sum over
    // every rank by this factor.
    let other_total: f64 = others.map(|ax| shape[ax] as f64).product();
    let to_all = if other > 0 {
        other_total / other as f64
    } else {
        0.0
    };
    let stride: usize = grid.dims()[j + 1..].iter().product();
    let rpn = profile.ranks_per_node.max(1);
    let eb = problem.element_bytes as f64;
    let nonempty = |len: usize, lo: usize, hi: usize| hi.min(len.min(n)).saturating_sub(lo);
    // The fixed cost of the collective call (none for a group of one: a local copy).
    let whole_group_on_node = stride.saturating_mul(n) <= rpn;
    let overhead = if n > 1 {
        profile.exchange_overhead_s
            * if whole_group_on_node {
                cpu.intra_slowdown
            } else {
                1.0
            }
    } else {
        0.0
    };
    let rates = CopyRates::new(profile);
    let pieces = fusion.pieces.max(1) as f64;
    let [pack_runs, unpack_runs, own_runs] = if rates.distinguishes_runs() {
        runs_per_element(plan)
    } else {
        [1.0; 3]
    };
    // Single-core seconds of the copies of a rank that sends `send`, receives `recv` and
    // keeps `own` elements, less what fused sweeps do on the way.
    let copy_seconds = |send: usize, recv: usize, own: usize| {
        let bytes = |x: usize, on: bool| if on { x as f64 * eb } else { 0.0 };
        rates.seconds(bytes(send, !fusion.pack), pack_runs)
            + rates.seconds(bytes(recv, !fusion.unpack), unpack_runs)
            + rates.seconds(bytes(own, !(fusion.pack || fusion.unpack)), own_runs)
    };
    // Every member pays at least the call overhead.
    let mut cost = ExchangeCost {
        latency_s: pieces * overhead,
        ..ExchangeCost::default()
    };
    let (mut max_copy, mut sum_copy) = (0.0f64, 0.0f64);
    let (mut sum_intra, mut sum_inter) = (0usize, 0usize);
    // The transfer time of the most loaded rank, with its intra- and inter-node parts.
    let mut worst = (0.0f64, 0.0f64, 0.0f64);
    let overlap = profile.intra_inter_overlap;
    let combine = |intra: f64, inter: f64| intra.max(inter) + (1.0 - overlap) * intra.min(inter);
    // Coordinates from max(N_a, N_b) on own nothing on either side: no message, no copy. The
    // others are visited in segments over which every quantity below is the same: one node's
    // coordinates (or, when each node holds at most one member, any run of coordinates) that
    // lie on the same side of every block-size boundary of the two splits.
    let limit = n.min(na.max(nb));
    let breaks = [split_a.m, split_b.m, na, nb];
    let alone = stride >= rpn;
    let mut c = 0;
    while c < limit {
        // Peers c' on c's node form one contiguous range of coordinates.
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
        for b in breaks {
            if b > c {
                end = end.min(b);
            }
        }
        let count = end.max(c + 1) - c;
        let ac = split_a.len(c);
        let bc = split_b.len(c);
        let own = ac * bc * other;
        // Send side: my rows of axis a, each peer's future range of axis b.
        let send_total = ac * nb * other - own;
        let send_intra = ac * other * split_b.span(lo, hi) - own;
        let send_inter = send_total - send_intra;
        // Receive side: each peer's current range of axis a, my future range of axis b.
        let recv_total = na * bc * other - own;
        let recv_intra = bc * other * split_a.span(lo, hi) - own;
        let recv_inter = recv_total - recv_intra;
        let me_b = usize::from(bc > 0);
        let me_a = usize::from(ac > 0);
        let (send_msgs_intra, send_msgs_all) = if ac * other > 0 {
            (nonempty(nb, lo, hi) - me_b, nonempty(nb, 0, n) - me_b)
        } else {
            (0, 0)
        };
        let (recv_msgs_intra, recv_msgs_all) = if bc * other > 0 {
            (nonempty(na, lo, hi) - me_a, nonempty(na, 0, n) - me_a)
        } else {
            (0, 0)
        };
        let lat = |intra: usize, all: usize| {
            intra as f64 * profile.ts_intra_s * cpu.intra_slowdown
                + (all - intra) as f64 * profile.ts_inter_s
        };
        // One side's transfers: (time, intra-node part, inter-node part).
        let bw = |intra: usize, inter: usize| {
            let i = intra as f64 * profile.tw_intra_s_per_byte * eb;
            let e = inter as f64 * profile.tw_inter_s_per_byte * eb;
            (combine(i, e), i, e)
        };
        let latency_s = pieces
            * (overhead
                + lat(send_msgs_intra, send_msgs_all).max(lat(recv_msgs_intra, recv_msgs_all)));
        cost.latency_s = cost.latency_s.max(latency_s);
        for side in [bw(send_intra, send_inter), bw(recv_intra, recv_inter)] {
            if side.0 > worst.0 {
                worst = side;
            }
        }
        let copies = copy_seconds(send_total, recv_total, own);
        max_copy = max_copy.max(copies);
        sum_copy += copies * count as f64;
        sum_intra += send_intra.max(recv_intra) * count;
        sum_inter += send_inter.max(recv_inter) * count;
        cost.messages = cost
            .messages
            .max((send_msgs_all.max(recv_msgs_all) * fusion.pieces.max(1)) as u64);
        cost.bytes = cost
            .bytes
            .max((send_total.max(recv_total) * problem.element_bytes) as u64);
        c += count;
    }
    // What the node's ranks do together: intra-node messages are copies through shared
    // memory, so the node's cores carry them; inter-node messages of all its ranks share the
    // node's network interface, and what leaves the node's switch shares its uplinks.
    let ranks = problem.ranks as f64;
    let mean_intra = sum_intra as f64 * to_all / ranks;
    let mean_inter = sum_inter as f64 * to_all / ranks;
    let node_intra = mean_intra * eb * profile.tw_intra_s_per_byte * cpu.node_load;
    let node_bytes = mean_inter * eb * problem.ranks.min(rpn) as f64;
    let node_inter = node_bytes * profile.tw_node_s_per_byte * uplink_factor(profile, n, stride);
    let node = (combine(node_intra, node_inter), node_intra, node_inter);
    let (time, intra, inter) = if node.0 > worst.0 { node } else { worst };
    cost.bandwidth_s = time;
    // The two parts as shares of the time (with overlap, each is charged its share).
    let parts = intra + inter;
    if parts > 0.0 {
        cost.intra_s = time * intra / parts;
        cost.inter_s = time * inter / parts;
    }
    cost.memory_s = cpu.time(max_copy, sum_copy * to_all / ranks);
    cost
}
