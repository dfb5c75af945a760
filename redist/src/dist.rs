//! Block, cyclic and block-cyclic distributions (seed 003, Parallel ESSL; seed 002, Table 1),
//! per axis and as tensor products over a process grid.
//!
//! All indices are 0-based. For one axis of `M` items over `P` processes:
//!
//! | distribution | global `m` → (process, block, offset) | local index |
//! |---|---|---|
//! | [`AxisDist::Block`] (ESSL, `L = ⌈M/P⌉`) | `(⌊m/L⌋, 0, m mod L)` | `m mod L` |
//! | [`AxisDist::Balanced`] (DESIGN §4) | `(p, 0, m − start(p))` | `m − start(p)` |
//! | [`AxisDist::Cyclic`] | `(m mod P, ⌊m/P⌋, 0)` | `⌊m/P⌋` |
//! | [`AxisDist::BlockCyclic`]`(r)`, `T = rP` | `(⌊(m mod T)/r⌋, ⌊m/T⌋, m mod r)` | `b·r + i` |
//! | [`AxisDist::Local`] (not distributed) | `(0, 0, m)` | `m` |
//!
//! and the inverse `(p, b, i) → p·r + b·T + i`. Block and cyclic are block-cyclic with
//! `r = L` and `r = 1`; the balanced block split (parts `0..M mod P` one item longer) is the
//! one irregular member.
//!
//! **Local storage** (the ScaLAPACK local layout): along each axis a process stores its blocks
//! one after the other in increasing global order, so its local index along the axis is
//! `b·r + i`; the local array is stored in **C order over local indices** (axis 0 slowest,
//! the last axis contiguous), like every other array in dfft. ScaLAPACK stores the same local
//! indices in Fortran (column-major) order, so a dfft array of shape `[m, n]` has the local
//! memory of a ScaLAPACK `n × m` matrix with the axes swapped.
//!
//! ```
//! use redist::dist::{AxisDist, AxisMap, Loc};
//! // Seed 003, Figure 3: M = 23 over P = 3 in blocks of 2.
//! let map = AxisMap::new(AxisDist::BlockCyclic(2), 23, 3).unwrap();
//! assert_eq!(map.locate(9), Loc { process: 1, block: 1, offset: 1 });
//! assert_eq!(map.global_index(2, 6), 22); // the last of process 2's 7 items
//! assert_eq!(map.local_len(0), 8);
//! assert_eq!(map.local_len(2), 7);
//! ```

use crate::error::{RedistError, Result};
use crate::split::{balanced_owner, balanced_range};
use std::fmt;

/// How one axis is distributed over the processes of one grid dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisDist {
    /// ESSL's block distribution: blocks of `L = ⌈M/P⌉`; trailing processes may own less or
    /// nothing.
    Block,
    /// The balanced block split of DESIGN §4 (`redist::split::balanced_range`).
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
    /// The block number on that process (`b` of seed 003).
    pub block: usize,
    /// The offset inside the block (`i` of seed 003).
    pub offset: usize,
}

/// One axis of `len` items distributed over `procs` processes: every index map of the module
/// documentation, exact and O(1) (the balanced split's owner is O(1) too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxisMap {
    dist: AxisDist,
    len: usize,
    procs: usize,
    /// Block size r of the regular (block-cyclic) forms; 0 for `Balanced`.
    block: usize,
}

impl AxisMap {
    /// The map of `dist` for `len ≥ 1` items over `procs ≥ 1` processes (`Local` needs
    /// `procs == 1`).
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
        })
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

    /// Block size `r` of the regular forms, `None` for the balanced split.
    pub fn block_size(&self) -> Option<usize> {
        (self.block > 0).then_some(self.block)
    }

    /// The period `T = r·P` of the ownership pattern, `None` for the balanced split.
    pub fn period(&self) -> Option<usize> {
        self.block_size().map(|r| r * self.procs)
    }

    /// Global index → (process, block, offset).
    #[inline]
    pub fn locate(&self, m: usize) -> Loc {
        debug_assert!(m < self.len);
        if self.block == 0 {
            let p = balanced_owner(self.len, self.procs, m);
            let start = balanced_range(self.len, self.procs, p).start;
            return Loc {
                process: p,
                block: 0,
                offset: m - start,
            };
        }
        let r = self.block;
        let t = r * self.procs;
        Loc {
            process: (m % t) / r,
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

    /// (process, local index) → global index: `p·r + b·T + i` with `b = ⌊l/r⌋`, `i = l mod r`.
    #[inline]
    pub fn global_index(&self, process: usize, local: usize) -> usize {
        if self.block == 0 {
            return balanced_range(self.len, self.procs, process).start + local;
        }
        let r = self.block;
        process * r + (local / r) * r * self.procs + local % r
    }

    /// Items owned by `process` (ScaLAPACK's `NUMROC`).
    pub fn local_len(&self, process: usize) -> usize {
        if self.block == 0 {
            return balanced_range(self.len, self.procs, process).len();
        }
        let r = self.block;
        let full_blocks = self.len / r;
        let mut n = (full_blocks / self.procs) * r;
        let extra = full_blocks % self.procs;
        if process < extra {
            n += r;
        } else if process == extra {
            n += self.len % r;
        }
        n
    }

    /// The global runs `(start, len)` owned by `process`, in local order.
    pub fn runs(&self, process: usize) -> Vec<(usize, usize)> {
        if self.block == 0 {
            let r = balanced_range(self.len, self.procs, process);
            return if r.is_empty() {
                vec![]
            } else {
                vec![(r.start, r.len())]
            };
        }
        let (r, t) = (self.block, self.block * self.procs);
        (0..)
            .map(|b| process * r + b * t)
            .take_while(|&s| s < self.len)
            .map(|s| (s, r.min(self.len - s)))
            .collect()
    }
}

/// Order in which the ranks fill a process grid (seed 003, Tables 12 and 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GridOrder {
    /// Row-major: the last grid coordinate varies fastest (BLACS' default, MPI_Cart_create's).
    #[default]
    Row,
    /// Column-major: the first grid coordinate varies fastest (HPF's default).
    Column,
}

/// A distributed array: global shape, process grid (dimensions and order) and one
/// [`AxisDist`] per axis, as a tensor product of per-axis distributions (seed 003).
///
/// The grid has one dimension per distributed axis (every axis not [`AxisDist::Local`]), in
/// axis order. Ranks `0..grid_size()` of the communicator form the grid; higher ranks own
/// nothing (so a 1×1 grid on P processes is "everything on rank 0").
///
/// ```
/// use redist::dist::{AxisDist, DistArray, GridOrder};
/// // Seed 003, Figures 5-7: 16×30 in 3×4 blocks on a 2×3 grid.
/// let a = DistArray::new(vec![16, 30], vec![2, 3], GridOrder::Row,
///     vec![AxisDist::BlockCyclic(3), AxisDist::BlockCyclic(4)]).unwrap();
/// assert_eq!(a.coords_of(4), Some(vec![1, 1]));
/// assert_eq!(a.local_shape(0), vec![9, 12]);
/// assert_eq!(a.owner(&[15, 29]), (4, 6 * 10 + 9)); // process P11, local (6, 9)
/// let c = DistArray::parse_spec("grid=2x3,order=col,dist=cyclic(3),cyclic(4)", &[16, 30]).unwrap();
/// assert_eq!(c.coords_of(3), Some(vec![1, 1]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DistArray {
    shape: Vec<usize>,
    grid: Vec<usize>,
    order: GridOrder,
    dists: Vec<AxisDist>,
    maps: Vec<AxisMap>,
    /// Grid dimension of each axis (None for local axes).
    grid_dim_of_axis: Vec<Option<usize>>,
}

impl DistArray {
    /// Builds and checks a distribution. `grid` has one entry per non-local axis.
    pub fn new(
        shape: Vec<usize>,
        grid: Vec<usize>,
        order: GridOrder,
        dists: Vec<AxisDist>,
    ) -> Result<Self> {
        if shape.is_empty() {
            return Err(RedistError::EmptyShape);
        }
        if shape.contains(&0) {
            return Err(RedistError::ZeroExtent { shape });
        }
        if shape
            .iter()
            .try_fold(1usize, |a, &n| a.checked_mul(n))
            .is_none()
        {
            return Err(RedistError::ShapeOverflow { shape });
        }
        if dists.len() != shape.len() {
            return Err(RedistError::BadDistribution {
                reason: format!(
                    "{} axis distributions for the {}-dimensional shape {shape:?}",
                    dists.len(),
                    shape.len()
                ),
            });
        }
        let distributed = dists.iter().filter(|d| **d != AxisDist::Local).count();
        if grid.len() != distributed || grid.contains(&0) {
            return Err(RedistError::BadDistribution {
                reason: format!(
                    "the grid {grid:?} must have one dimension ≥ 1 per distributed axis, and \
                     {distributed} of the axes {} are distributed",
                    list(&dists)
                ),
            });
        }
        if grid
            .iter()
            .try_fold(1usize, |a, &n| a.checked_mul(n))
            .is_none()
        {
            return Err(RedistError::BadGridDims { dims: grid });
        }
        let mut grid_dim_of_axis = Vec::with_capacity(shape.len());
        let mut maps = Vec::with_capacity(shape.len());
        let mut next = 0;
        for (&n, &d) in shape.iter().zip(&dists) {
            if d == AxisDist::Local {
                grid_dim_of_axis.push(None);
                maps.push(AxisMap::new(d, n, 1)?);
            } else {
                grid_dim_of_axis.push(Some(next));
                maps.push(AxisMap::new(d, n, grid[next])?);
                next += 1;
            }
        }
        Ok(Self {
            shape,
            grid,
            order,
            dists,
            maps,
            grid_dim_of_axis,
        })
    }

    /// Parses a SPEC of comma-separated `key=value` items for an array of `shape`:
    ///
    /// * `grid=AxB…` — one dimension per distributed axis (default: all 1s);
    /// * `order=row|col` — how ranks fill the grid (default `row`; also `row-major`,
    ///   `column`, `column-major`, `c`, `r`);
    /// * `dist=D0,D1,…` — one [`AxisDist`] per axis (`block`, `balanced`, `cyclic`,
    ///   `cyclic(r)`, `*`); a single entry applies to every axis. Items after `dist=` that
    ///   contain no `=` continue the list.
    ///
    /// Example: `grid=2x3,order=row,dist=cyclic(36),cyclic(36)`.
    pub fn parse_spec(spec: &str, shape: &[usize]) -> Result<Self> {
        let bad = |near: &str, reason: String| RedistError::BadDistSpec {
            spec: spec.to_string(),
            near: near.to_string(),
            reason,
        };
        let (mut grid, mut order, mut dists): (Option<Vec<usize>>, _, Vec<AxisDist>) =
            (None, GridOrder::Row, Vec::new());
        let mut in_dist = false;
        let mut seen = Vec::new();
        // Split on commas outside parentheses.
        let mut items = Vec::new();
        let (mut depth, mut start) = (0i32, 0);
        for (i, c) in spec.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&spec[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&spec[start..]);
        for item in items {
            let t = item.trim();
            if t.is_empty() {
                return Err(bad(item, "an empty item (two commas in a row?)".into()));
            }
            let Some((key, value)) = t.split_once('=') else {
                if in_dist {
                    dists.push(AxisDist::parse(t).map_err(|e| bad(t, e))?);
                    continue;
                }
                return Err(bad(
                    t,
                    "expected key=value with key grid, order or dist".into(),
                ));
            };
            let key = key.trim().to_ascii_lowercase();
            if seen.contains(&key) {
                return Err(bad(t, format!("'{key}' given twice")));
            }
            seen.push(key.clone());
            in_dist = false;
            match key.as_str() {
                "grid" => {
                    let mut dims = Vec::new();
                    for part in value.split(['x', 'X']) {
                        match part.trim().parse::<usize>() {
                            Ok(n) if n > 0 => dims.push(n),
                            _ => {
                                return Err(bad(
                                    t,
                                    format!("grid dimension '{part}' is not a positive integer (expected e.g. grid=2x3)"),
                                ))
                            }
                        }
                    }
                    grid = Some(dims);
                }
                "order" => {
                    order = match value.trim().to_ascii_lowercase().as_str() {
                        "row" | "row-major" | "r" => GridOrder::Row,
                        "col" | "column" | "column-major" | "c" => GridOrder::Column,
                        other => {
                            return Err(bad(
                                t,
                                format!("unknown grid order '{other}' (expected row or col)"),
                            ))
                        }
                    }
                }
                "dist" => {
                    in_dist = true;
                    dists.push(AxisDist::parse(value).map_err(|e| bad(t, e))?);
                }
                other => {
                    return Err(bad(
                        t,
                        format!("unknown key '{other}' (expected grid, order or dist)"),
                    ))
                }
            }
        }
        if dists.is_empty() {
            return Err(bad(spec, "no dist= given (e.g. dist=cyclic(64),*)".into()));
        }
        if dists.len() == 1 && shape.len() > 1 {
            dists = vec![dists[0]; shape.len()];
        }
        if dists.len() != shape.len() {
            return Err(bad(
                &list(&dists),
                format!(
                    "{} distributions for the {}-dimensional shape {shape:?}",
                    dists.len(),
                    shape.len()
                ),
            ));
        }
        let distributed = dists.iter().filter(|d| **d != AxisDist::Local).count();
        let grid = grid.unwrap_or_else(|| vec![1; distributed]);
        if grid.len() != distributed {
            return Err(bad(
                &format!("grid={}", join_x(&grid)),
                format!(
                    "the grid has {} dimensions but {distributed} axes are distributed ({})",
                    grid.len(),
                    list(&dists)
                ),
            ));
        }
        Self::new(shape.to_vec(), grid, order, dists).map_err(|e| bad(spec, e.to_string()))
    }

    /// The SPEC text of this distribution (accepted by [`DistArray::parse_spec`]).
    pub fn spec(&self) -> String {
        format!(
            "grid={},order={},dist={}",
            join_x(&self.grid),
            match self.order {
                GridOrder::Row => "row",
                GridOrder::Column => "col",
            },
            list(&self.dists)
        )
    }

    /// The global shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The grid dimensions (one per distributed axis).
    pub fn grid(&self) -> &[usize] {
        &self.grid
    }

    /// The grid order.
    pub fn order(&self) -> GridOrder {
        self.order
    }

    /// The per-axis distributions.
    pub fn dists(&self) -> &[AxisDist] {
        &self.dists
    }

    /// The per-axis maps (process counts resolved).
    pub fn axis_maps(&self) -> &[AxisMap] {
        &self.maps
    }

    /// Number of processes in the grid (ranks `0..grid_size()` take part).
    pub fn grid_size(&self) -> usize {
        self.grid.iter().product()
    }

    /// Number of global elements.
    pub fn global_len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Grid coordinates of `rank`, or `None` when it is outside the grid.
    pub fn coords_of(&self, rank: usize) -> Option<Vec<usize>> {
        if rank >= self.grid_size() {
            return None;
        }
        let mut coords = vec![0; self.grid.len()];
        let mut rest = rank;
        let dims: Vec<usize> = match self.order {
            GridOrder::Row => (0..self.grid.len()).rev().collect(),
            GridOrder::Column => (0..self.grid.len()).collect(),
        };
        for j in dims {
            coords[j] = rest % self.grid[j];
            rest /= self.grid[j];
        }
        Some(coords)
    }

    /// The rank at grid coordinates `coords`.
    pub fn rank_of(&self, coords: &[usize]) -> usize {
        debug_assert_eq!(coords.len(), self.grid.len());
        let dims: Vec<usize> = match self.order {
            GridOrder::Row => (0..self.grid.len()).collect(),
            GridOrder::Column => (0..self.grid.len()).rev().collect(),
        };
        dims.into_iter()
            .fold(0, |acc, j| acc * self.grid[j] + coords[j])
    }

    /// Per axis, the process index of `rank` along that axis (0 for local axes), or `None`
    /// outside the grid.
    pub fn axis_coords(&self, rank: usize) -> Option<Vec<usize>> {
        let coords = self.coords_of(rank)?;
        Some(
            self.grid_dim_of_axis
                .iter()
                .map(|g| g.map_or(0, |j| coords[j]))
                .collect(),
        )
    }

    /// The local shape of `rank` (all zeros outside the grid).
    pub fn local_shape(&self, rank: usize) -> Vec<usize> {
        match self.axis_coords(rank) {
            Some(c) => self
                .maps
                .iter()
                .zip(c)
                .map(|(m, p)| m.local_len(p))
                .collect(),
            None => vec![0; self.shape.len()],
        }
    }

    /// Elements stored by `rank`.
    pub fn local_len(&self, rank: usize) -> usize {
        self.local_shape(rank).iter().product()
    }

    /// The owner of a global multi-index and the C-order linear offset in its local array.
    pub fn owner(&self, index: &[usize]) -> (usize, usize) {
        let mut coords = vec![0; self.grid.len()];
        let mut offset = 0;
        let mut axis_procs = vec![0; self.shape.len()];
        for (a, (&m, map)) in index.iter().zip(&self.maps).enumerate() {
            let p = map.owner(m);
            axis_procs[a] = p;
            if let Some(j) = self.grid_dim_of_axis[a] {
                coords[j] = p;
            }
        }
        for (a, (&m, map)) in index.iter().zip(&self.maps).enumerate() {
            offset = offset * map.local_len(axis_procs[a]) + map.local_index(m);
        }
        (self.rank_of(&coords), offset)
    }

    /// The global multi-index of local C-order offset `offset` on `rank`.
    pub fn global_of(&self, rank: usize, mut offset: usize) -> Vec<usize> {
        let c = self.axis_coords(rank).expect("rank outside the grid");
        let mut out = vec![0; self.shape.len()];
        for a in (0..self.shape.len()).rev() {
            let n = self.maps[a].local_len(c[a]);
            out[a] = self.maps[a].global_index(c[a], offset % n);
            offset /= n;
        }
        out
    }

    /// Fills `rank`'s local array with each element's global C-order linear index (the
    /// index-valued test data of DESIGN §5), converted by `f`.
    pub fn fill_index_valued<T>(&self, rank: usize, local: &mut [T], f: impl Fn(u64) -> T) {
        let shape = self.local_shape(rank);
        let Some(c) = self.axis_coords(rank) else {
            return;
        };
        assert_eq!(local.len(), shape.iter().product::<usize>());
        if local.is_empty() {
            return;
        }
        // Global index of each local index along every axis, then an odometer.
        let globals: Vec<Vec<u64>> = (0..shape.len())
            .map(|a| {
                (0..shape[a])
                    .map(|l| self.maps[a].global_index(c[a], l) as u64)
                    .collect()
            })
            .collect();
        let d = shape.len();
        let mut scale = vec![1u64; d];
        for a in (0..d.saturating_sub(1)).rev() {
            scale[a] = scale[a + 1] * self.shape[a + 1] as u64;
        }
        let inner = shape[d - 1];
        let mut idx = vec![0usize; d];
        for row in local.chunks_mut(inner) {
            let base: u64 = (0..d - 1).map(|a| globals[a][idx[a]] * scale[a]).sum();
            for (x, &g) in row.iter_mut().zip(&globals[d - 1]) {
                *x = f(base + g);
            }
            for a in (0..d - 1).rev() {
                idx[a] += 1;
                if idx[a] < shape[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
    }
}

fn list(dists: &[AxisDist]) -> String {
    dists
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn join_x(v: &[usize]) -> String {
    v.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("x")
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

    /// Brute force from the definitions of seed 003 (ESSL) and seed 002 Table 1 (converted
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
        fn tensor_product_owner_and_inverse(
            shape in prop::collection::vec(1usize..9, 1..4),
            dists in prop::collection::vec(prop_oneof![any_dist(), Just(AxisDist::Local)], 3),
            grid_seed in prop::collection::vec(1usize..4, 3),
            column in any::<bool>(),
        ) {
            let d = shape.len();
            let dists = dists[..d].to_vec();
            let grid: Vec<usize> = dists.iter().zip(&grid_seed)
                .filter(|(x, _)| **x != AxisDist::Local).map(|(_, &g)| g).collect();
            let order = if column { GridOrder::Column } else { GridOrder::Row };
            let a = DistArray::new(shape.clone(), grid, order, dists).unwrap();
            let total: usize = shape.iter().product();
            let mut seen: Vec<Vec<bool>> = (0..a.grid_size()).map(|r| vec![false; a.local_len(r)]).collect();
            for lin in 0..total {
                let mut idx = vec![0; d];
                let mut rest = lin;
                for k in (0..d).rev() { idx[k] = rest % shape[k]; rest /= shape[k]; }
                let (rank, off) = a.owner(&idx);
                prop_assert!(!seen[rank][off]);
                seen[rank][off] = true;
                prop_assert_eq!(a.global_of(rank, off), idx.clone());
                prop_assert_eq!(a.coords_of(rank).map(|c| a.rank_of(&c)), Some(rank));
            }
            prop_assert!(seen.iter().all(|s| s.iter().all(|&x| x)));
            // Index-valued fill agrees with global_of.
            for r in 0..a.grid_size() {
                let mut buf = vec![0u64; a.local_len(r)];
                a.fill_index_valued(r, &mut buf, |g| g);
                for (off, &g) in buf.iter().enumerate() {
                    let idx = a.global_of(r, off);
                    let lin = idx.iter().zip(&shape).fold(0u64, |acc, (&i, &n)| acc * n as u64 + i as u64);
                    prop_assert_eq!(g, lin);
                }
            }
        }
    }

    #[test]
    fn essl_tables_12_and_13() {
        let d = [AxisDist::Cyclic, AxisDist::Cyclic];
        let row = DistArray::new(vec![4, 6], vec![2, 3], GridOrder::Row, d.to_vec()).unwrap();
        let col = DistArray::new(vec![4, 6], vec![2, 3], GridOrder::Column, d.to_vec()).unwrap();
        assert_eq!(row.coords_of(3), Some(vec![1, 0])); // t3 -> P10
        assert_eq!(col.coords_of(3), Some(vec![1, 1])); // t3 -> P11
        assert_eq!(row.coords_of(6), None);
        assert_eq!(row.local_len(7), 0);
    }

    #[test]
    fn spec_round_trip_and_errors() {
        let a = DistArray::parse_spec("grid=2x3,order=row,dist=cyclic(36),cyclic(36)", &[100, 50])
            .unwrap();
        assert_eq!(a.dists(), &[AxisDist::BlockCyclic(36); 2]);
        assert_eq!(DistArray::parse_spec(&a.spec(), &[100, 50]).unwrap(), a);
        let b =
            DistArray::parse_spec("dist=block,*,cyclic,grid=4x2,order=col", &[5, 6, 7]).unwrap();
        assert_eq!(b.grid(), &[4, 2]);
        assert_eq!(
            DistArray::parse_spec("dist=*", &[5, 6])
                .unwrap()
                .grid_size(),
            1
        );
        for (spec, near) in [
            ("grid=2x0,dist=block", "grid=2x0"),
            ("grid=2,dist=cyclic(0)", "dist=cyclic(0)"),
            ("grid=2,dist=cyclic(3", "dist=cyclic(3"),
            ("grid=2x3,dist=block,block,block", "block,block,block"),
            ("grid=2x3,dist=block,*", "grid=2x3"),
            ("grid=2,order=diagonal,dist=block", "order=diagonal"),
            ("grid=2,colour=red,dist=block", "colour=red"),
            ("grid=2", "grid=2"),
            ("grid=2,,dist=block", ""),
            ("grid=2,grid=2,dist=block", "grid=2"),
        ] {
            match DistArray::parse_spec(spec, &[10, 10]) {
                Err(RedistError::BadDistSpec { near: n, .. }) => assert_eq!(n, near, "{spec}"),
                other => panic!("{spec}: {other:?}"),
            }
        }
    }
}
