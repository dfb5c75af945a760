//! A distributed array: the tensor product of per-axis distributions over a process grid,
//! with the grid's processes and each process's local storage.

use super::axis::{AxisDist, AxisMap};
use super::spec::list;
use crate::error::{RedistError, Result};

/// Order in which the ranks fill a process grid (Parallel ESSL, Tables 12 and 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GridOrder {
    /// Row-major: the last grid coordinate varies fastest (BLACS' default, MPI_Cart_create's).
    #[default]
    Row,
    /// Column-major: the first grid coordinate varies fastest (HPF's default).
    Column,
}

/// How a process stores its local array (over local indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Storage {
    /// C order: the last axis contiguous, axis 0 slowest (dfft's arrays).
    #[default]
    RowMajor,
    /// Fortran order: axis 0 contiguous (ScaLAPACK's local matrices).
    ColumnMajor,
}

/// A distributed array: global shape, process grid (dimensions, order and processes) and one
/// [`AxisDist`] per axis, as a tensor product of per-axis distributions (Parallel ESSL), and how
/// each process stores its part.
///
/// The grid has one dimension per distributed axis (every axis not [`AxisDist::Local`]), in
/// axis order. By default ranks `0..grid_size()` of the communicator form the grid and higher
/// ranks own nothing (so a 1×1 grid on P processes is "everything on rank 0");
/// [`DistArray::with_ranks`] puts any ranks of the communicator at the grid's positions.
/// Along each axis the first block may sit on any process ([`DistArray::with_first_procs`],
/// ScaLAPACK's `RSRC`/`CSRC`), and local arrays may be column-major with a leading dimension
/// ([`DistArray::with_storage`], ScaLAPACK's `LLD`).
///
/// ```
/// use redist::dist::{AxisDist, DistArray, GridOrder};
/// // Parallel ESSL Guide and Reference, "Distributing Your Data", Figures 5-7:
/// // 16×30 in 3×4 blocks on a 2×3 grid.
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
    storage: Storage,
    /// Distance between consecutive indices of the second-fastest stored axis (the leading
    /// dimension), when larger than the local extent of the fastest one.
    lead: Option<usize>,
    /// The communicator rank at each grid position (positions in grid order); `None`: rank =
    /// position.
    ranks: Option<Vec<usize>>,
    /// The inverse of `ranks`: the grid position of each rank (`usize::MAX`: none).
    positions: Vec<usize>,
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
            storage: Storage::RowMajor,
            lead: None,
            ranks: None,
            positions: Vec::new(),
        })
    }

    /// The same distribution with the first block of distributed axis `j` (grid dimension
    /// `j`) on process coordinate `firsts[j]` (ScaLAPACK's `RSRC`, `CSRC`).
    ///
    /// ```
    /// use redist::dist::DistArray;
    /// let a = DistArray::parse_spec("grid=2x3,dist=cyclic(2),cyclic(2)", &[8, 9]).unwrap()
    ///     .with_first_procs(vec![1, 2]).unwrap();
    /// assert_eq!(a.owner(&[0, 0]).0, 5); // grid position (1, 2)
    /// ```
    pub fn with_first_procs(mut self, firsts: Vec<usize>) -> Result<Self> {
        if firsts.len() != self.grid.len() {
            return Err(RedistError::BadDistribution {
                reason: format!(
                    "{} first processes {firsts:?} for a grid of {} dimensions {:?}",
                    firsts.len(),
                    self.grid.len(),
                    self.grid
                ),
            });
        }
        for (a, map) in self.maps.iter_mut().enumerate() {
            if let Some(j) = self.grid_dim_of_axis[a] {
                *map = map.with_first(firsts[j])?;
            }
        }
        Ok(self)
    }

    /// The same distribution stored as `storage`, with leading dimension `lead` (the distance
    /// between consecutive indices of the second-fastest stored axis; `None`: the local extent
    /// of the fastest axis). A lead below a process's local extent is an error when that
    /// process's part is planned ([`DistArray::check_lead`]).
    pub fn with_storage(mut self, storage: Storage, lead: Option<usize>) -> Result<Self> {
        if lead == Some(0) {
            return Err(RedistError::BadDistribution {
                reason: "a leading dimension of 0".into(),
            });
        }
        self.storage = storage;
        self.lead = lead;
        Ok(self)
    }

    /// The same distribution with communicator rank `ranks[q]` at grid position `q` (positions
    /// numbered in the grid's order), e.g. a grid on ranks `[4, 5, 6, 7]` of eight. The ranks
    /// must be distinct, one per position.
    ///
    /// ```
    /// use redist::dist::DistArray;
    /// let a = DistArray::parse_spec("grid=2x2,dist=block,block", &[4, 4]).unwrap()
    ///     .with_ranks(vec![7, 3, 5, 1]).unwrap();
    /// assert_eq!(a.coords_of(5), Some(vec![1, 0]));
    /// assert_eq!(a.coords_of(0), None);
    /// assert_eq!(a.rank_of(&[0, 1]), 3);
    /// assert_eq!(a.ranks_needed(), 8);
    /// ```
    pub fn with_ranks(mut self, ranks: Vec<usize>) -> Result<Self> {
        if ranks.len() != self.grid_size() {
            return Err(RedistError::BadDistribution {
                reason: format!(
                    "{} ranks {ranks:?} for the {} positions of the grid {:?}",
                    ranks.len(),
                    self.grid_size(),
                    self.grid
                ),
            });
        }
        let most = ranks.iter().max().map_or(0, |&r| r + 1);
        let mut positions = vec![usize::MAX; most];
        for (q, &r) in ranks.iter().enumerate() {
            if positions[r] != usize::MAX {
                return Err(RedistError::BadDistribution {
                    reason: format!("rank {r} appears twice in the grid's ranks {ranks:?}"),
                });
            }
            positions[r] = q;
        }
        self.ranks = Some(ranks);
        self.positions = positions;
        Ok(self)
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

    /// The per-axis maps (process counts and first processes resolved).
    pub fn axis_maps(&self) -> &[AxisMap] {
        &self.maps
    }

    /// The first process of each distributed axis, in grid-dimension order.
    pub fn first_procs(&self) -> Vec<usize> {
        self.maps
            .iter()
            .zip(&self.grid_dim_of_axis)
            .filter(|(_, g)| g.is_some())
            .map(|(m, _)| m.first())
            .collect()
    }

    /// How local arrays are stored.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// The leading dimension, when given.
    pub fn lead(&self) -> Option<usize> {
        self.lead
    }

    /// The ranks at the grid positions, when given ([`DistArray::with_ranks`]).
    pub fn ranks(&self) -> Option<&[usize]> {
        self.ranks.as_deref()
    }

    /// Whether this is the plain form: grid on ranks `0..grid_size()`, first blocks on process
    /// 0, C-order local arrays without padding.
    pub fn is_plain(&self) -> bool {
        self.ranks.is_none()
            && self.lead.is_none()
            && self.storage == Storage::RowMajor
            && self.maps.iter().all(|m| m.first() == 0)
    }

    /// Number of processes in the grid.
    pub fn grid_size(&self) -> usize {
        self.grid.iter().product()
    }

    /// The smallest communicator size that holds the grid (its largest rank plus one).
    pub fn ranks_needed(&self) -> usize {
        match &self.ranks {
            Some(_) => self.positions.len(),
            None => self.grid_size(),
        }
    }

    /// Number of global elements.
    pub fn global_len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Grid coordinates of `rank`, or `None` when it is outside the grid.
    pub fn coords_of(&self, rank: usize) -> Option<Vec<usize>> {
        let position = match &self.ranks {
            Some(_) => *self.positions.get(rank).filter(|&&q| q != usize::MAX)?,
            None if rank < self.grid_size() => rank,
            None => return None,
        };
        let mut coords = vec![0; self.grid.len()];
        let mut rest = position;
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
        let position = dims
            .into_iter()
            .fold(0, |acc, j| acc * self.grid[j] + coords[j]);
        self.ranks.as_ref().map_or(position, |r| r[position])
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

    /// The local shape (local extent per axis) of `rank` (all zeros outside the grid).
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

    /// The axes in storage order, slowest first.
    pub fn storage_order(&self) -> Vec<usize> {
        let d = self.shape.len();
        match self.storage {
            Storage::RowMajor => (0..d).collect(),
            Storage::ColumnMajor => (0..d).rev().collect(),
        }
    }

    /// The memory stride of each axis in `rank`'s local array.
    pub fn local_strides(&self, rank: usize) -> Vec<usize> {
        let shape = self.local_shape(rank);
        let order = self.storage_order();
        let mut strides = vec![0; shape.len()];
        let mut s = 1;
        for (k, &a) in order.iter().rev().enumerate() {
            strides[a] = s;
            s *= match (k, self.lead) {
                (0, Some(lead)) => lead,
                _ => shape[a],
            };
        }
        strides
    }

    /// An error when `rank`'s local extent along the fastest stored axis exceeds the leading
    /// dimension (the rows would overlap).
    pub fn check_lead(&self, rank: usize) -> Result<()> {
        let (Some(lead), Some(&fast)) = (self.lead, self.storage_order().last()) else {
            return Ok(());
        };
        let extent = self.local_shape(rank)[fast];
        if self.shape.len() > 1 && extent > lead {
            return Err(RedistError::BadDistribution {
                reason: format!(
                    "the leading dimension {lead} of rank {rank} is below its local extent \
                     {extent} along axis {fast}"
                ),
            });
        }
        Ok(())
    }

    /// Elements of `rank`'s local array, padding included (0 when it holds nothing).
    pub fn local_len(&self, rank: usize) -> usize {
        let shape = self.local_shape(rank);
        if shape.contains(&0) {
            return 0;
        }
        let strides = self.local_strides(rank);
        1 + shape
            .iter()
            .zip(&strides)
            .map(|(&n, &s)| (n - 1) * s)
            .sum::<usize>()
    }

    /// The owner of a global multi-index and the element's offset in its local array.
    pub fn owner(&self, index: &[usize]) -> (usize, usize) {
        let mut coords = vec![0; self.grid.len()];
        for (a, (&m, map)) in index.iter().zip(&self.maps).enumerate() {
            if let Some(j) = self.grid_dim_of_axis[a] {
                coords[j] = map.owner(m);
            }
        }
        let rank = self.rank_of(&coords);
        let strides = self.local_strides(rank);
        let offset = index
            .iter()
            .zip(&self.maps)
            .zip(&strides)
            .map(|((&m, map), &s)| map.local_index(m) * s)
            .sum();
        (rank, offset)
    }

    /// The global multi-index at offset `offset` of `rank`'s local array (not in padding).
    pub fn global_of(&self, rank: usize, mut offset: usize) -> Vec<usize> {
        let c = self.axis_coords(rank).expect("rank outside the grid");
        let strides = self.local_strides(rank);
        let mut out = vec![0; self.shape.len()];
        for a in self.storage_order() {
            let local = offset / strides[a];
            offset %= strides[a];
            out[a] = self.maps[a].global_index(c[a], local);
        }
        out
    }

    /// Fills `rank`'s local array with each element's global C-order linear index (the
    /// index-valued test data), converted by `f`; padding is left alone.
    pub fn fill_index_valued<T>(&self, rank: usize, local: &mut [T], f: impl Fn(u64) -> T) {
        let shape = self.local_shape(rank);
        let Some(c) = self.axis_coords(rank) else {
            return;
        };
        assert!(local.len() >= self.local_len(rank));
        if shape.contains(&0) {
            return;
        }
        let d = shape.len();
        let mut scale = vec![1u64; d];
        for a in (0..d.saturating_sub(1)).rev() {
            scale[a] = scale[a + 1] * self.shape[a + 1] as u64;
        }
        // Per axis, each local index's contribution to the global linear index.
        let globals: Vec<Vec<u64>> = (0..d)
            .map(|a| {
                (0..shape[a])
                    .map(|l| self.maps[a].global_index(c[a], l) as u64 * scale[a])
                    .collect()
            })
            .collect();
        let strides = self.local_strides(rank);
        let mut idx = vec![0usize; d];
        loop {
            let offset: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
            local[offset] = f(idx.iter().enumerate().map(|(a, &i)| globals[a][i]).sum());
            let mut a = d;
            loop {
                if a == 0 {
                    return;
                }
                a -= 1;
                idx[a] += 1;
                if idx[a] < shape[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn tensor_product_owner_and_inverse(
            shape in prop::collection::vec(1usize..9, 1..4),
            dists in prop::collection::vec(prop_oneof![any_dist(), Just(AxisDist::Local)], 3),
            grid_seed in prop::collection::vec(1usize..4, 3),
            first_seed in prop::collection::vec(0usize..4, 3),
            column in any::<bool>(),
            col_storage in any::<bool>(),
            pad in 0usize..3,
            shuffle in any::<u64>(),
        ) {
            let d = shape.len();
            let dists = dists[..d].to_vec();
            let grid: Vec<usize> = dists.iter().zip(&grid_seed)
                .filter(|(x, _)| **x != AxisDist::Local).map(|(_, &g)| g).collect();
            let firsts: Vec<usize> = grid.iter().zip(&first_seed).map(|(&g, &f)| f % g).collect();
            let order = if column { GridOrder::Column } else { GridOrder::Row };
            let storage = if col_storage { Storage::ColumnMajor } else { Storage::RowMajor };
            let size: usize = grid.iter().product();
            // The grid on a shuffled set of ranks of a communicator twice its size.
            let mut ranks: Vec<usize> = (0..2 * size).collect();
            let mut s = shuffle;
            for i in (1..ranks.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ranks.swap(i, (s >> 33) as usize % (i + 1));
            }
            ranks.truncate(size);
            let plain = DistArray::new(shape.clone(), grid, order, dists).unwrap()
                .with_first_procs(firsts).unwrap();
            // The leading dimension: the largest local extent of the fastest axis plus `pad`.
            let fast = plain.clone().with_storage(storage, None).unwrap().storage_order()[d - 1];
            let lead = (0..size).map(|r| plain.local_shape(r)[fast]).max().unwrap() + pad;
            let a = plain.with_storage(storage, (d > 1).then_some(lead)).unwrap()
                .with_ranks(ranks.clone()).unwrap();
            let total: usize = shape.iter().product();
            let mut seen: Vec<Vec<bool>> = (0..2 * size).map(|r| vec![false; a.local_len(r)]).collect();
            for lin in 0..total {
                let mut idx = vec![0; d];
                let mut rest = lin;
                for k in (0..d).rev() { idx[k] = rest % shape[k]; rest /= shape[k]; }
                let (rank, off) = a.owner(&idx);
                prop_assert!(ranks.contains(&rank));
                prop_assert!(!seen[rank][off]);
                seen[rank][off] = true;
                prop_assert_eq!(a.global_of(rank, off), idx.clone());
                prop_assert_eq!(a.coords_of(rank).map(|c| a.rank_of(&c)), Some(rank));
            }
            for (r, s) in seen.iter().enumerate() {
                let held = s.iter().filter(|&&x| x).count();
                prop_assert_eq!(held, a.local_shape(r).iter().product::<usize>());
                prop_assert!(a.check_lead(r).is_ok());
            }
            // Index-valued fill agrees with global_of; padding stays untouched.
            for (r, seen) in seen.iter().enumerate() {
                let mut buf = vec![u64::MAX; a.local_len(r)];
                a.fill_index_valued(r, &mut buf, |g| g);
                for (off, &g) in buf.iter().enumerate() {
                    if !seen[off] {
                        prop_assert_eq!(g, u64::MAX);
                        continue;
                    }
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
    fn scalapack_local_storage() {
        // A 7×5 matrix in 2×2 blocks on a 2×2 grid starting at process (1, 0), column-major
        // with a leading dimension of 6 on every process.
        let a = DistArray::parse_spec("grid=2x2,dist=cyclic(2),cyclic(2)", &[7, 5])
            .unwrap()
            .with_first_procs(vec![1, 0])
            .unwrap()
            .with_storage(Storage::ColumnMajor, Some(6))
            .unwrap();
        // Row 0 is on process row 1; rows 2-3 on process row 0 (its local rows 0-1).
        assert_eq!(a.owner(&[0, 0]), (2, 0));
        assert_eq!(a.owner(&[3, 2]), (1, 1));
        // Process (0, 0): rows 2,3,6 and columns 0,1,4: local (2, 2) at 2 + 2·6.
        assert_eq!(a.owner(&[6, 4]), (0, 14));
        assert_eq!(a.local_shape(0), vec![3, 3]);
        assert_eq!(a.local_len(0), 2 * 6 + 3);
        assert!(a
            .clone()
            .with_storage(Storage::ColumnMajor, Some(2))
            .unwrap()
            .check_lead(0)
            .is_err());
        assert!(DistArray::parse_spec("grid=2,dist=block", &[4])
            .unwrap()
            .with_ranks(vec![1, 1])
            .is_err());
    }
}
