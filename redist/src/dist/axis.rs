//! One axis: block, cyclic and block-cyclic distributions of `M` items over `P` processes, with
//! the first block on any process.

use crate::error::{RedistError, Result};
use crate::split::{balanced_owner, balanced_range};
use std::fmt;

/// How one axis is distributed over the processes of one grid dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisDist {
    /// ESSL's block distribution: blocks of `L = ⌈M/P⌉`; trailing processes may own less or
    /// nothing.
    Block,
    /// The balanced block split (first M mod P parts one longer) (`redist::split::balanced_range`).
    Balanced,
    /// Cyclic (round-robin), the same as `BlockCyclic(1)`.
    Cyclic,
    /// Block-cyclic, HPF's `CYCLIC(r)`: blocks of `r` dealt to the processes in turn.
    BlockCyclic(usize),
    /// Not distributed (HPF's `*`): the axis uses no grid dimension; everyone holds all of it.
    Local,
}

impl fmt::Display for AxisDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisDist::Block => f.write_str("block"),
            AxisDist::Balanced => f.write_str("balanced"),
            AxisDist::Cyclic => f.write_str("cyclic"),
            AxisDist::BlockCyclic(r) => write!(f, "cyclic({r})"),
            AxisDist::Local => f.write_str("*"),
        }
    }
}

impl AxisDist {
    /// Parses `block`, `balanced`, `cyclic`, `cyclic(r)` (also `block-cyclic(r)`, `bc(r)`)
    /// and `*` (also `local`, `none`).
    ///
    /// ```
    /// use redist::dist::AxisDist;
    /// assert_eq!(AxisDist::parse("cyclic(36)").unwrap(), AxisDist::BlockCyclic(36));
    /// assert_eq!(AxisDist::parse("*").unwrap(), AxisDist::Local);
    /// assert!(AxisDist::parse("cyclic(0)").is_err());
    /// ```
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "block" => return Ok(AxisDist::Block),
            "balanced" => return Ok(AxisDist::Balanced),
            "cyclic" => return Ok(AxisDist::Cyclic),
            "*" | "local" | "none" => return Ok(AxisDist::Local),
            _ => {}
        }
        for prefix in ["cyclic(", "block-cyclic(", "bc("] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| format!("'{text}' lacks its closing ')'"))?;
                return match inner.trim().parse::<usize>() {
                    Ok(0) => Err(format!("block size 0 in '{text}'; it must be at least 1")),
                    Ok(r) => Ok(AxisDist::BlockCyclic(r)),
                    Err(_) => Err(format!(
                        "'{inner}' in '{text}' is not a positive block size"
                    )),
                };
            }
        }
        Err(format!(
            "unknown distribution '{text}' (expected block, balanced, cyclic, cyclic(r) or *)"
        ))
    }
}

/// Where a global index lives: process, local block number and offset in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Loc {
    /// The owning process (coordinate along the axis' grid dimension).
    pub process: usize,
    /// The block number on that process (`b` of Parallel ESSL).
    pub block: usize,
    /// The offset inside the block (`i` of Parallel ESSL).
    pub offset: usize,
}

/// One axis of `len` items distributed over `procs` processes, the first block on process
/// `first` (ScaLAPACK's `RSRC`/`CSRC`): every index map of the module documentation, exact
/// and O(1). A first process `f` renumbers the processes: the one that would be `v` with
/// `f = 0` is `(v + f) mod P`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxisMap {
    dist: AxisDist,
    len: usize,
    procs: usize,
    /// Block size r of the regular (block-cyclic) forms; 0 for `Balanced`.
    block: usize,
    /// The process that holds the first block.
    first: usize,
}

impl AxisMap {
    /// The map of `dist` for `len ≥ 1` items over `procs ≥ 1` processes (`Local` needs
    /// `procs == 1`), the first block on process 0.
    pub fn new(dist: AxisDist, len: usize, procs: usize) -> Result<Self> {
        let bad = |reason: String| Err(RedistError::BadDistribution { reason });
        if len == 0 {
            return bad("an axis of length 0".into());
        }
        if procs == 0 {
            return bad(format!("{dist} over 0 processes"));
        }
        let block = match dist {
            AxisDist::Block => len.div_ceil(procs),
            AxisDist::Balanced => 0,
            AxisDist::Cyclic => 1,
            AxisDist::BlockCyclic(0) => return bad("cyclic(0): block sizes must be ≥ 1".into()),
            AxisDist::BlockCyclic(r) => r,
            AxisDist::Local if procs != 1 => {
                return bad(format!("a local axis ('*') over {procs} processes"))
            }
            AxisDist::Local => len,
        };
        Ok(Self {
            dist,
            len,
            procs,
            block,
            first: 0,
        })
    }

    /// The same map with its first block on process `first` (`< procs`).
    ///
    /// ```
    /// use redist::dist::{AxisDist, AxisMap};
    /// // Blocks of 2 over 3 processes, starting on process 2: 0-1 on 2, 2-3 on 0, 4-5 on 1.
    /// let map = AxisMap::new(AxisDist::BlockCyclic(2), 7, 3).unwrap().with_first(2).unwrap();
    /// assert_eq!((map.owner(0), map.owner(2), map.owner(5), map.owner(6)), (2, 0, 1, 2));
    /// assert_eq!(map.local_len(2), 3);
    /// assert_eq!(map.global_index(2, 2), 6);
    /// ```
    pub fn with_first(mut self, first: usize) -> Result<Self> {
        if first >= self.procs {
            return Err(RedistError::BadDistribution {
                reason: format!(
                    "first process {first} of {} over {} processes (it must be below {})",
                    self.dist, self.procs, self.procs
                ),
            });
        }
        self.first = first;
        Ok(self)
    }

    /// The distribution.
    pub fn dist(&self) -> AxisDist {
        self.dist
    }

    /// Number of items M.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (axes have at least one item); for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of processes P.
    pub fn procs(&self) -> usize {
        self.procs
    }

    /// The process holding the first block.
    pub fn first(&self) -> usize {
        self.first
    }

    /// Block size `r` of the regular forms, `None` for the balanced split.
    pub fn block_size(&self) -> Option<usize> {
        (self.block > 0).then_some(self.block)
    }

    /// The period `T = r·P` of the ownership pattern, `None` for the balanced split.
    pub fn period(&self) -> Option<usize> {
        self.block_size().map(|r| r * self.procs)
    }

    /// Process `p` as numbered with the first block on process 0.
    #[inline]
    fn virtual_of(&self, process: usize) -> usize {
        (process + self.procs - self.first) % self.procs
    }

    /// Virtual process `v` (first block on 0) as really numbered.
    #[inline]
    fn real_of(&self, virtual_process: usize) -> usize {
        (virtual_process + self.first) % self.procs
    }

    /// Global index → (process, block, offset).
    #[inline]
    pub fn locate(&self, m: usize) -> Loc {
        debug_assert!(m < self.len);
        if self.block == 0 {
            let v = balanced_owner(self.len, self.procs, m);
            let start = balanced_range(self.len, self.procs, v).start;
            return Loc {
                process: self.real_of(v),
                block: 0,
                offset: m - start,
            };
        }
        let r = self.block;
        let t = r * self.procs;
        Loc {
            process: self.real_of((m % t) / r),
            block: m / t,
            offset: m % r,
        }
    }

    /// The process owning global index `m`.
    #[inline]
    pub fn owner(&self, m: usize) -> usize {
        self.locate(m).process
    }

    /// Global index → local index on its owner.
    #[inline]
    pub fn local_index(&self, m: usize) -> usize {
        let loc = self.locate(m);
        loc.block * self.block + loc.offset
    }

    /// (process, local index) → global index: `v·r + b·T + i` with `b = ⌊l/r⌋`, `i = l mod r`
    /// and `v` the process counted from the first one.
    #[inline]
    pub fn global_index(&self, process: usize, local: usize) -> usize {
        let v = self.virtual_of(process);
        if self.block == 0 {
            return balanced_range(self.len, self.procs, v).start + local;
        }
        let r = self.block;
        v * r + (local / r) * r * self.procs + local % r
    }

    /// Items owned by `process` (ScaLAPACK's `NUMROC`).
    pub fn local_len(&self, process: usize) -> usize {
        self.local_len_below(process, self.len)
    }

    /// Items of `process` among the global indices `0..end` (`end ≤ len`): the local index
    /// where its part of `end..` begins.
    pub fn local_len_below(&self, process: usize, end: usize) -> usize {
        let v = self.virtual_of(process);
        if self.block == 0 {
            let range = balanced_range(self.len, self.procs, v);
            return end.clamp(range.start, range.end) - range.start;
        }
        let r = self.block;
        let full_blocks = end / r;
        let mut n = (full_blocks / self.procs) * r;
        let extra = full_blocks % self.procs;
        if v < extra {
            n += r;
        } else if v == extra {
            n += end % r;
        }
        n
    }

    /// The global runs `(start, len)` owned by `process`, in local order.
    pub fn runs(&self, process: usize) -> Vec<(usize, usize)> {
        let v = self.virtual_of(process);
        if self.block == 0 {
            let r = balanced_range(self.len, self.procs, v);
            return if r.is_empty() {
                vec![]
            } else {
                vec![(r.start, r.len())]
            };
        }
        let (r, t) = (self.block, self.block * self.procs);
        (0..)
            .map(|b| v * r + b * t)
            .take_while(|&s| s < self.len)
            .map(|s| (s, r.min(self.len - s)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_dist() -> impl Strategy<Value = AxisDist> {
        prop_oneof![
            Just(AxisDist::Block),
            Just(AxisDist::Balanced),
            Just(AxisDist::Cyclic),
            (1usize..12).prop_map(AxisDist::BlockCyclic),
        ]
    }

    /// Brute force from the definitions of Parallel ESSL (ESSL) and Thakur et al. Table 1 (converted
    /// to 0-based): owner, block, offset and local index of every m.
    fn brute(dist: AxisDist, m_len: usize, p: usize, m: usize) -> (usize, usize, usize) {
        match dist {
            AxisDist::Block => {
                let l = m_len.div_ceil(p);
                (m / l, 0, m % l)
            }
            AxisDist::Cyclic => (m % p, m / p, 0),
            AxisDist::BlockCyclic(r) => {
                // Table 1, 1-based g = m + 1: p = mod(CD(g, r) - 1, P),
                // l = mod(g - 1, r) + 1 + (g - 1)/(rP)·r  (0-based: l - 1).
                let g = m + 1;
                let cd = g.div_ceil(r);
                let proc = (cd - 1) % p;
                let local = (g - 1) % r + ((g - 1) / (r * p)) * r;
                (proc, local / r, local % r)
            }
            AxisDist::Balanced => {
                let proc = (0..p)
                    .find(|&q| balanced_range(m_len, p, q).contains(&m))
                    .unwrap();
                (proc, 0, m - balanced_range(m_len, p, proc).start)
            }
            AxisDist::Local => (0, 0, m),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn axis_maps_match_brute_force(dist in any_dist(), len in 1usize..200, procs in 1usize..9) {
            let map = AxisMap::new(dist, len, procs).unwrap();
            let mut counts = vec![0; procs];
            let mut seen = vec![vec![false; len]; procs];
            for m in 0..len {
                let (p, b, i) = brute(dist, len, procs, m);
                let loc = map.locate(m);
                prop_assert_eq!((loc.process, loc.block, loc.offset), (p, b, i), "m = {}", m);
                let l = map.local_index(m);
                prop_assert!(l < map.local_len(p));
                prop_assert!(!seen[p][l]);
                seen[p][l] = true;
                prop_assert_eq!(map.global_index(p, l), m);
                counts[p] += 1;
            }
            for (q, &count) in counts.iter().enumerate() {
                prop_assert_eq!(map.local_len(q), count);
                // Local order is increasing global order.
                let globals: Vec<usize> = (0..count).map(|l| map.global_index(q, l)).collect();
                prop_assert!(globals.windows(2).all(|w| w[0] < w[1]));
                let from_runs: Vec<usize> = map.runs(q).into_iter().flat_map(|(s, n)| s..s + n).collect();
                prop_assert_eq!(from_runs, globals);
            }
        }

        #[test]
        fn first_process_offsets_rotate_the_owners(
            dist in any_dist(), len in 1usize..120, procs in 1usize..7, first in 0usize..6,
        ) {
            let first = first % procs;
            let base = AxisMap::new(dist, len, procs).unwrap();
            let map = base.with_first(first).unwrap();
            let mut counts = vec![0; procs];
            for m in 0..len {
                let (b, l) = (base.locate(m), map.locate(m));
                prop_assert_eq!(l.process, (b.process + first) % procs);
                prop_assert_eq!((l.block, l.offset), (b.block, b.offset));
                let li = map.local_index(m);
                prop_assert_eq!(li, counts[l.process]);
                prop_assert_eq!(map.global_index(l.process, li), m);
                prop_assert_eq!(map.local_len_below(l.process, m), li);
                counts[l.process] += 1;
            }
            for (q, &count) in counts.iter().enumerate() {
                prop_assert_eq!(map.local_len(q), count);
                let from_runs: usize = map.runs(q).iter().map(|r| r.1).sum();
                prop_assert_eq!(from_runs, count);
            }
        }
    }

    #[test]
    fn first_process_must_exist() {
        let map = AxisMap::new(AxisDist::BlockCyclic(3), 10, 4).unwrap();
        assert!(map.with_first(3).is_ok());
        assert!(matches!(
            map.with_first(4),
            Err(RedistError::BadDistribution { .. })
        ));
    }
}
