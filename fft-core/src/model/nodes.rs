//! How the groups of one exchange sit on the nodes: which members share a node, over how
//! many nodes a group spreads. Ranks are placed on nodes in order, `ranks_per_node` each.
//!
//! The groups of an exchange along a grid dimension of `n` coordinates whose stride (in
//! ranks) is `s` are the ranks `base + c·s`, `c < n`: they tile the ranks in blocks of `n·s`
//! consecutive ranks, each block holding `s` interleaved groups. A node's traffic depends on
//! how many of its ranks' partners it holds itself, which differs from node to node when the
//! groups straddle node boundaries (32 consecutive ranks on nodes of 40); this module counts
//! it exactly for every kind of node, in O(ranks per node) steps whatever the rank count.

/// The placement of one exchange's groups on nodes.
#[derive(Debug, Clone, Copy)]
pub(super) struct GroupPlacement {
    /// Members of a group (the grid dimension's size).
    n: usize,
    /// Rank distance between consecutive members.
    stride: usize,
    /// All ranks.
    ranks: usize,
    /// Ranks on a (full) node: min(ranks, ranks_per_node).
    per_node: usize,
}

/// How many node kinds [`GroupPlacement::pair_range`] looks at, at most: beyond this the
/// node starts are sampled evenly (the answer is then approximate).
const MOST_NODE_KINDS: usize = 1 << 12;

impl GroupPlacement {
    pub(super) fn new(n: usize, stride: usize, ranks: usize, ranks_per_node: usize) -> Self {
        Self {
            n: n.max(1),
            stride: stride.max(1),
            ranks: ranks.max(1),
            per_node: ranks.max(1).min(ranks_per_node.max(1)),
        }
    }

    /// Ranks on a full node.
    pub(super) fn per_node(&self) -> usize {
        self.per_node
    }

    /// Nodes between the first and the last member of a group that starts a node, both
    /// included: the spread of the groups over the machine, whether or not every node in
    /// between holds a member.
    pub(super) fn span(&self) -> usize {
        let nodes = self.ranks.div_ceil(self.per_node);
        (((self.n - 1) as u128 * self.stride as u128 / self.per_node as u128) as usize + 1)
            .min(nodes)
    }

    /// Σ over the groups of (members among `m` consecutive ranks of one block)²: the ordered
    /// pairs of those ranks (a rank with itself included) that belong to one group. Of `m`
    /// consecutive ranks, `m mod s` groups hold ⌈m/s⌉ and the others ⌊m/s⌋.
    fn pairs_in_run(&self, m: usize) -> u128 {
        let s = self.stride as u128;
        let (q, rem) = ((m / self.stride) as u128, (m % self.stride) as u128);
        rem * (q + 1) * (q + 1) + (s - rem) * q * q
    }

    /// The same-group pairs of the full node whose first rank is `start`: its ranks split at
    /// the block boundaries into runs that each lie in one block.
    fn pairs_of_node(&self, start: usize) -> u128 {
        let block = self.n * self.stride;
        let first = self.per_node.min(block - start % block);
        let rest = self.per_node - first;
        self.pairs_in_run(first)
            + (rest / block) as u128 * self.pairs_in_run(block)
            + self.pairs_in_run(rest % block)
    }

    /// The fewest and the most same-group pairs of any full node (see [`Self::pairs_of_node`]):
    /// the node that sends the most beyond itself and the one that keeps the most inside. A
    /// node of `R` ranks with `C` pairs sends `(R·n − C)/(n − 1)` ranks' worth of its
    /// members' messages beyond itself (`R` when every member is on its own node, 0 when the
    /// groups stay inside). Node kinds repeat: with blocks at least a node long, a node holds
    /// at most one block boundary, whose offset repeats within ranks-per-node blocks; with
    /// shorter blocks every node's offset into its first block repeats within one block.
    pub(super) fn pair_range(&self) -> (u128, u128) {
        let (r, block) = (self.per_node, self.n * self.stride);
        let full_nodes = self.ranks / r;
        let mut range = (u128::MAX, 0u128);
        let mut add = |pairs: u128| range = (range.0.min(pairs), range.1.max(pairs));
        if block >= r {
            // Block boundaries inside nodes: the one at j·block lies `j·block mod r` into its
            // node; offsets repeat every r / gcd(block, r) boundaries.
            let boundaries = self.ranks / block - 1;
            let period = r / gcd(block % r, r);
            let kinds = boundaries.min(period);
            let mut no_boundary = full_nodes > boundaries;
            let mut any = false;
            for j in sampled(1, kinds) {
                let at = j as u128 * block as u128;
                if at >= (full_nodes * r) as u128 {
                    break;
                }
                let x = (at % r as u128) as usize;
                if x == 0 {
                    no_boundary = true;
                } else {
                    any = true;
                    add(self.pairs_in_run(x) + self.pairs_in_run(r - x));
                }
            }
            if no_boundary || !any {
                add(self.pairs_in_run(r));
            }
        } else {
            let period = block / gcd(r % block, block);
            for k in sampled(0, full_nodes.min(period).saturating_sub(1)) {
                add(self.pairs_of_node(k * r));
            }
        }
        range
    }
}

/// `first..=last`, or at most [`MOST_NODE_KINDS`] values spread evenly over it.
fn sampled(first: usize, last: usize) -> impl Iterator<Item = usize> {
    let count = (last + 1).saturating_sub(first);
    let step = count.div_ceil(MOST_NODE_KINDS).max(1);
    (first..=last).step_by(step).take_while(move |_| count > 0)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the same-group pairs of every full node, by listing its ranks' groups.
    fn brute(n: usize, stride: usize, ranks: usize, rpn: usize) -> (u128, u128) {
        let r = ranks.min(rpn);
        let group = |rank: usize| (rank / (n * stride), rank % stride);
        (0..ranks / r)
            .map(|node| {
                let members: Vec<_> = (node * r..(node + 1) * r).map(group).collect();
                members
                    .iter()
                    .map(|g| members.iter().filter(|h| *h == g).count() as u128)
                    .sum::<u128>()
            })
            .fold((u128::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)))
    }

    #[test]
    fn node_pairs_match_brute_force() {
        for ranks in 1..=96 {
            for n in (1..=ranks).filter(|n| ranks % n == 0) {
                for stride in (1..=ranks / n).filter(|s| (ranks / n) % s == 0) {
                    for rpn in [1, 2, 3, 5, 8, 12, 40, 1000] {
                        let p = GroupPlacement::new(n, stride, ranks, rpn);
                        assert_eq!(
                            p.pair_range(),
                            brute(n, stride, ranks, rpn),
                            "n {n} stride {stride} ranks {ranks} rpn {rpn}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn spans_and_straddling_groups_by_hand() {
        // 32 consecutive ranks on nodes of 40 (1024 ranks): a node with a group boundary 8
        // ranks in holds 8 + 32 of 2 groups (64 + 1024 pairs); one with a boundary 16 in
        // 16 + 24 (256 + 576); a node never holds a whole group and nothing else.
        let p = GroupPlacement::new(32, 1, 1024, 40);
        assert_eq!(p.pair_range(), (256 + 576, 64 + 32 * 32));
        assert_eq!(p.span(), 1);
        // 64 members 64 ranks apart on nodes of 40: every member on its own node, spread
        // over 101 nodes.
        let p = GroupPlacement::new(64, 64, 4096, 40);
        assert_eq!(p.pair_range(), (40, 40));
        assert_eq!(p.span(), 101);
        // Huge rank counts take bounded work.
        let p = GroupPlacement::new(1 << 20, 1 << 20, 1 << 40, 48);
        assert_eq!(p.pair_range(), (48, 48));
        let p = GroupPlacement::new(1 << 20, 1, 1 << 40, 40);
        assert!(p.pair_range().0 >= 40 * 40 / 2);
    }
}
