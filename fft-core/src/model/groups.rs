//! The group split of a batch: K fields on P ranks transformed either all together over the P
//! ranks (one exchange per stage moving all K fields), or by G groups of P/G ranks, group `g`
//! taking the fields `balanced_range(K, G, g)` (fewer peers and larger messages per
//! exchange, and none at all when P/G = 1), at the price of redistributing the fields to the
//! groups and back ([`crate::groups`]).
//!
//! The cost of G groups per forward+backward pair is the slowest group's transform plus four
//! redistributions (into and out of the groups, each direction):
//!
//! * **transform**: [`super::predict`] of one field on P/G ranks on the grid the model picks
//!   for them, its latency once and its other terms times the group's fields (a batch moves
//!   all its fields in one message per peer); the P/G ranks of a group get their share of
//!   their node's cores (the other groups run at the same time);
//! * **redistribution**: what rank 0 (the most loaded: the largest block, in the group with
//!   the most fields) sends or receives, the larger side: `ts` per peer, `tw` per byte, one
//!   collective's overhead, and a pack and an unpack of its block at the copy rates.
//!
//! One group (G = 1) is the plain batched plan: its transform term alone, over P ranks.

use super::cost::{CopyRates, Cpu};
use super::{choose, predict, MachineProfile, Problem};
use crate::error::Result;
use crate::stages::Pipeline;
use redist::split::balanced_range;
use redist::{GridShape, Layout};
use serde::Serialize;
use std::ops::Range;

/// Beyond this many ranks the model does not walk the ranks a redistribution reaches: only
/// one group is weighed.
pub const MAX_GROUP_RANKS: usize = 1 << 16;

/// One candidate group count and its predicted time (seconds per forward+backward pair).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupCandidate {
    /// Groups G (1: all ranks transform all fields together).
    pub groups: usize,
    /// Ranks per group, P/G.
    pub ranks_per_group: usize,
    /// Fields of the largest group, ⌈K/G⌉.
    pub fields_per_group: usize,
    /// The grid each group transforms on.
    pub grid: Vec<usize>,
    /// The slowest group's batched transforms.
    pub transform_s: f64,
    /// The four redistributions into and out of the groups (0 for one group).
    pub redistribute_s: f64,
    /// `transform_s + redistribute_s`.
    pub predicted_s: f64,
    /// Whether this is the model's choice.
    pub chosen: bool,
}

/// The group counts the model weighs for `fields` fields on `ranks` ranks: the divisors G of
/// P with G ≤ K (every group gets a field), only 1 beyond [`MAX_GROUP_RANKS`].
pub fn group_counts(ranks: usize, fields: usize) -> Vec<usize> {
    if ranks > MAX_GROUP_RANKS {
        return vec![1];
    }
    (1..=ranks.min(fields.max(1)))
        .filter(|g| ranks.is_multiple_of(*g))
        .collect()
}

/// The candidate of `groups` groups for `fields` fields of `problem` (whose `ranks` is P), on
/// `grid` when given for one group (the plan's own grid), else the model's.
pub fn predict_groups(
    problem: &Problem,
    fields: usize,
    groups: usize,
    grid: Option<&GridShape>,
    profile: &MachineProfile,
) -> Result<GroupCandidate> {
    let ranks = problem.ranks;
    let per_group = ranks / groups;
    let most = balanced_range(fields, groups, 0).len();
    let inner = Problem {
        ranks: per_group,
        ..problem.clone()
    };
    let shared = group_profile(profile, ranks, per_group);
    let inner_grid = match grid {
        Some(g) if groups == 1 => g.clone(),
        _ => choose(&inner, &shared)?,
    };
    let p = predict(&inner, &inner_grid, &shared)?;
    let transform_s = p.latency_s + most as f64 * (p.predicted_s - p.latency_s);
    let redistribute_s = if groups == 1 {
        0.0
    } else {
        let outer_grid = match grid {
            Some(g) => g.clone(),
            None => choose(problem, profile)?,
        };
        let outer = problem.pipeline(outer_grid)?;
        let pipe = inner.pipeline(inner_grid.clone())?;
        let cpu = Cpu::new(profile, ranks);
        let ends = [(outer.input, pipe.input), (outer.output, pipe.output)];
        let mut total = 0.0;
        for (a, b) in ends {
            let sides = Sides {
                outer: &outer.layouts[a],
                inner: &pipe.layouts[b],
                fields,
                groups,
            };
            let bytes = element_bytes(problem, &outer, a);
            // The same volumes both ways: into the groups and back out of them.
            total += 2.0 * sides.cost(bytes, profile, cpu);
        }
        total
    };
    Ok(GroupCandidate {
        groups,
        ranks_per_group: per_group,
        fields_per_group: most,
        grid: inner_grid.dims().to_vec(),
        transform_s,
        redistribute_s,
        predicted_s: transform_s + redistribute_s,
        chosen: false,
    })
}

/// Every candidate of [`group_counts`], the chosen one first (the fastest; ties within 1e-9
/// relative go to fewer groups), the others by group count. `grid`: the plain plan's grid.
pub fn evaluate_groups(
    problem: &Problem,
    fields: usize,
    grid: Option<&GridShape>,
    profile: &MachineProfile,
) -> Result<Vec<GroupCandidate>> {
    let mut all = group_counts(problem.ranks, fields)
        .into_iter()
        .map(|g| predict_groups(problem, fields, g, grid, profile))
        .collect::<Result<Vec<_>>>()?;
    let mut best = 0;
    for (i, c) in all.iter().enumerate() {
        if c.predicted_s < all[best].predicted_s * (1.0 - 1e-9) {
            best = i;
        }
    }
    all[best].chosen = true;
    let chosen = all.remove(best);
    all.insert(0, chosen);
    Ok(all)
}

/// Why the first of `evaluated` was chosen, in one sentence.
pub fn explain_groups(evaluated: &[GroupCandidate], fields: usize, ranks: usize) -> String {
    let Some(best) = evaluated.first() else {
        return "no candidate".into();
    };
    let name = |c: &GroupCandidate| match c.groups {
        1 => format!("one transform of all {fields} fields over {ranks} ranks"),
        g => format!(
            "{g} groups of {} ranks with up to {} fields each",
            c.ranks_per_group, c.fields_per_group
        ),
    };
    let Some(next) = evaluated
        .iter()
        .skip(1)
        .min_by(|a, b| a.predicted_s.total_cmp(&b.predicted_s))
    else {
        return format!(
            "{}: the only choice ({fields} fields, {ranks} ranks)",
            name(best)
        );
    };
    let ratio = next.predicted_s / best.predicted_s.max(f64::MIN_POSITIVE);
    let why = if best.groups == 1 {
        format!(
            "redistributing into the groups and back ({:.3e} s) costs more than the larger groups' exchanges save",
            next.redistribute_s
        )
    } else {
        format!(
            "its groups' transforms ({:.3e} s) plus the redistributions ({:.3e} s) beat the others",
            best.transform_s, best.redistribute_s
        )
    };
    format!(
        "{} ({:.3e} s per forward+backward pair) is {ratio:.2}x faster than the next best, {} ({:.3e} s): {why}",
        name(best),
        best.predicted_s,
        name(next),
        next.predicted_s
    )
}

/// The profile one group of `per_group` ranks sees: its share of each node's cores and
/// memory bandwidth, as the other groups run on the rest at the same time (rank-major
/// numbering: a group's ranks are consecutive). A share of less than a core per rank (more
/// ranks than cores on the node) runs on one core per rank at that fraction of its speed, as
/// the plain plan's ranks do on the whole node.
fn group_profile(profile: &MachineProfile, ranks: usize, per_group: usize) -> MachineProfile {
    let on_node = ranks.min(profile.ranks_per_node).max(1);
    let mine = per_group.min(on_node);
    let share = (profile.cores_per_node.max(1) * mine) as f64 / on_node as f64;
    let cores = (share.floor() as usize).clamp(1, profile.cores_per_node.max(1));
    let slow = (cores as f64 / share).max(1.0);
    let groups_on_node = on_node as f64 / mine as f64;
    MachineProfile {
        cores_per_node: cores,
        ranks_per_node: mine,
        fft_s_per_element_log2: profile.fft_s_per_element_log2 * slow,
        copy_bytes_per_s: profile.copy_bytes_per_s / slow,
        stream_bytes_per_s: profile.stream_bytes_per_s / slow,
        ts_intra_s: profile.ts_intra_s * slow,
        tw_memory_s_per_byte: profile.tw_memory_s_per_byte * groups_on_node,
        ..profile.clone()
    }
}

/// Bytes per element of layout `layout` of `pipe`: a real layout holds half a complex element.
fn element_bytes(problem: &Problem, pipe: &Pipeline, layout: usize) -> usize {
    if pipe.real[layout] {
        (problem.element_bytes / 2).max(1)
    } else {
        problem.element_bytes
    }
}

/// The two ends of one redistribution: every field in `outer` over all P ranks, and the
/// groups' layout (group `g` holds its fields in `inner` over ranks `g·P/G ..`).
struct Sides<'a> {
    outer: &'a Layout,
    inner: &'a Layout,
    fields: usize,
    groups: usize,
}

/// Elements shared by two boxes.
fn overlap(a: &[Range<usize>], b: &[Range<usize>]) -> usize {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.end.min(y.end).saturating_sub(x.start.max(y.start)))
        .product()
}

impl Sides<'_> {
    /// Rank 0's (peers, elements) sent and received, without its own part.
    fn traffic(&self) -> ((usize, usize), (usize, usize)) {
        let per_group = self.inner.grid().ranks();
        let mine = self.outer.global_ranges(0);
        let my_fields = balanced_range(self.fields, self.groups, 0).len();
        let (mut send, mut recv) = ((0, 0), (0, 0));
        let inner0 = self.inner.global_ranges(0);
        for q in 1..per_group * self.groups {
            let (g, j) = (q / per_group, q % per_group);
            let theirs = self.inner.global_ranges(j);
            let fields = balanced_range(self.fields, self.groups, g).len();
            let out = fields * overlap(&mine, &theirs);
            if out > 0 {
                send = (send.0 + 1, send.1 + out);
            }
            let inn = my_fields * overlap(&self.outer.global_ranges(q), &inner0);
            if inn > 0 {
                recv = (recv.0 + 1, recv.1 + inn);
            }
        }
        (send, recv)
    }

    /// Seconds of one redistribution, the most loaded rank's.
    fn cost(&self, bytes: usize, profile: &MachineProfile, cpu: Cpu) -> f64 {
        let ((sp, se), (rp, re)) = self.traffic();
        let (peers, elements) = (sp.max(rp), se.max(re));
        let ranks = self.inner.grid().ranks() * self.groups;
        let (ts, tw) = if ranks <= profile.ranks_per_node {
            (
                profile.ts_intra_s * cpu.intra_slowdown,
                profile.tw_intra_s_per_byte,
            )
        } else {
            (profile.ts_inter_s, profile.tw_inter_s_per_byte)
        };
        let moved = (elements * bytes) as f64;
        // Charged as the model charges an exchange's transfer: inside a node the ranks
        // share its cores (`node_load`) and its memory.
        let transfer = if ranks <= profile.ranks_per_node {
            (moved * tw * cpu.node_load).max(cpu.node_memory(moved * ranks as f64))
        } else {
            moved * tw
        };
        let network = profile.exchange_overhead_s + peers as f64 * ts + transfer;
        // Pack the whole source block and unpack the whole destination block (the own part
        // is copied once, as the two halves of the others' are). The runs are the trailing
        // axes local on both sides, one run per field and index of the axes before them.
        let my_fields = balanced_range(self.fields, self.groups, 0).len();
        let src = (self.fields * self.outer.local_len(0) * bytes) as f64;
        let dst = (my_fields * self.inner.local_len(0) * bytes) as f64;
        let local_from = self.outer.grid().rank().max(self.inner.grid().rank());
        let row = self.outer.global_shape()[local_from.min(self.outer.ndim())..]
            .iter()
            .product::<usize>()
            .max(1);
        let global: usize = self.outer.global_shape().iter().product();
        let mean = (self.fields * global * bytes) as f64 / ranks as f64;
        let rates = CopyRates::new(profile);
        let copy = |b: f64| rates.seconds(b, 1.0 / row as f64);
        network + cpu.memory_time(copy(src) + copy(dst), 2.0 * copy(mean), 2.0 * mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-core node as `dfft calibrate` measured one (its FFT, copy and message rates).
    fn two_cores(ranks: usize) -> MachineProfile {
        MachineProfile {
            ts_intra_s: 6.2e-7,
            tw_intra_s_per_byte: 2.6e-10,
            ts_inter_s: 6.2e-7,
            tw_inter_s_per_byte: 2.6e-10,
            exchange_overhead_s: 1e-8,
            fft_s_per_element_log2: 5.4e-10,
            copy_bytes_per_s: 1.8e10,
            stream_bytes_per_s: 1.7e10,
            tw_memory_s_per_byte: 2.5e-11,
            cores_per_node: 2,
            ranks_per_node: ranks,
            ..MachineProfile::default()
        }
    }

    /// On one node, splitting a batch of small fields only adds the redistributions: the
    /// groups' ranks share the same cores (a group of one rank among eight on two cores gets
    /// a quarter of one), and the redistributions move as much as the exchanges they save.
    #[test]
    fn one_node_keeps_one_group_for_small_fields() {
        for ranks in [2, 4, 8] {
            for (shape, fields) in [([64, 64, 64], 8), ([32, 32, 32], 16)] {
                let problem = Problem {
                    shape: shape.to_vec(),
                    ranks,
                    element_bytes: 16,
                    transposed_out: false,
                    real_to_complex: false,
                    windows: false,
                };
                let all = evaluate_groups(&problem, fields, None, &two_cores(ranks)).unwrap();
                assert_eq!(
                    all[0].groups, 1,
                    "{ranks} ranks, {shape:?} x {fields}: {all:#?}"
                );
                assert!(all.len() > 1 && all[1..].iter().all(|c| c.redistribute_s > 0.0));
            }
        }
    }

    /// A group of one rank among eight on two cores runs at a quarter of a core.
    #[test]
    fn a_group_gets_its_share_of_the_cores() {
        let p = group_profile(&two_cores(8), 8, 1);
        assert_eq!((p.cores_per_node, p.ranks_per_node), (1, 1));
        assert!((p.fft_s_per_element_log2 / 5.4e-10 - 4.0).abs() < 1e-9);
        let p = group_profile(&two_cores(8), 8, 4);
        assert_eq!((p.cores_per_node, p.ranks_per_node), (1, 4));
        assert!((p.fft_s_per_element_log2 / 5.4e-10 - 1.0).abs() < 1e-9);
    }
}
