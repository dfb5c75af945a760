//! Processor-grid shapes: pure data, no MPI.
//!
//! A grid of rank r arranges P processes as `dims[0] × … × dims[r-1]`, in row-major order as
//! `MPI_Cart_create` does: the last grid coordinate varies fastest with the rank.

use crate::error::{RedistError, Result};
use std::fmt;

/// The shape of an r-dimensional Cartesian processor grid.
///
/// ```
/// use redist::grid::GridShape;
/// let g = GridShape::new(vec![2, 3]).unwrap();
/// assert_eq!(g.ranks(), 6);
/// assert_eq!(g.coords_of(4), vec![1, 1]);
/// assert_eq!(g.rank_of(&[1, 1]), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GridShape {
    dims: Vec<usize>,
}

impl GridShape {
    /// A grid with the given dimensions; each must be at least 1.
    pub fn new(dims: Vec<usize>) -> Result<Self> {
        if dims.is_empty() || dims.contains(&0) {
            return Err(RedistError::BadGridDims { dims });
        }
        Ok(Self { dims })
    }

    /// The balanced grid of rank `grid_rank` over `ranks` processes, as `MPI_Dims_create`
    /// chooses it: dimensions as close to each other as possible, in non-increasing order.
    ///
    /// ```
    /// use redist::grid::GridShape;
    /// assert_eq!(GridShape::balanced(12, 2).unwrap().dims(), &[4, 3]);
    /// assert_eq!(GridShape::balanced(8, 3).unwrap().dims(), &[2, 2, 2]);
    /// assert_eq!(GridShape::balanced(7, 2).unwrap().dims(), &[7, 1]);
    /// ```
    pub fn balanced(ranks: usize, grid_rank: usize) -> Result<Self> {
        if grid_rank == 0 {
            return Err(RedistError::ZeroGridRank);
        }
        if ranks == 0 {
            return Err(RedistError::BadGridDims { dims: vec![0] });
        }
        Ok(Self {
            dims: balanced_dims(ranks, grid_rank),
        })
    }

    /// Parses `"4x2"` (also `"4,2"` or `"4"`), checking each factor.
    ///
    /// ```
    /// use redist::grid::GridShape;
    /// assert_eq!(GridShape::parse("4x2").unwrap().dims(), &[4, 2]);
    /// assert!(GridShape::parse("4x0").is_err());
    /// assert!(GridShape::parse("4xb").is_err());
    /// ```
    pub fn parse(spec: &str) -> Result<Self> {
        let bad = |reason: String| RedistError::BadGridSpec {
            spec: spec.to_string(),
            reason,
        };
        let trimmed = spec.trim();
        if trimmed.is_empty() {
            return Err(bad("it is empty; expected dimensions such as 4x2".into()));
        }
        let mut dims = Vec::new();
        for part in trimmed.split(['x', 'X', ',']) {
            let value: usize = part.trim().parse().map_err(|_| {
                bad(format!(
                    "'{part}' is not a positive integer; expected dimensions such as 4x2"
                ))
            })?;
            if value == 0 {
                return Err(bad("a grid dimension of 0".into()));
            }
            dims.push(value);
        }
        Self::new(dims)
    }

    /// The grid dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The grid rank r (number of grid dimensions).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of processes P = product of the dimensions.
    pub fn ranks(&self) -> usize {
        self.dims.iter().product()
    }

    /// Row-major coordinates of process `rank`.
    pub fn coords_of(&self, rank: usize) -> Vec<usize> {
        debug_assert!(rank < self.ranks());
        let mut coords = vec![0; self.dims.len()];
        let mut rest = rank;
        for (c, &n) in coords.iter_mut().zip(&self.dims).rev() {
            *c = rest % n;
            rest /= n;
        }
        coords
    }

    /// The rank at row-major coordinates `coords`.
    pub fn rank_of(&self, coords: &[usize]) -> usize {
        debug_assert_eq!(coords.len(), self.dims.len());
        coords
            .iter()
            .zip(&self.dims)
            .fold(0, |acc, (&c, &n)| acc * n + c)
    }

    /// The ranks of the group `G^dim` that contains `rank`: processes that share all
    /// coordinates except the one along `dim`, in the order of that coordinate.
    ///
    /// ```
    /// use redist::grid::GridShape;
    /// let g = GridShape::new(vec![2, 3]).unwrap();
    /// assert_eq!(g.group_members(4, 0), vec![1, 4]);
    /// assert_eq!(g.group_members(4, 1), vec![3, 4, 5]);
    /// ```
    pub fn group_members(&self, rank: usize, dim: usize) -> Vec<usize> {
        let mut coords = self.coords_of(rank);
        (0..self.dims[dim])
            .map(|c| {
                coords[dim] = c;
                self.rank_of(&coords)
            })
            .collect()
    }
}

impl fmt::Display for GridShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        f.write_str(&parts.join("x"))
    }
}

/// Prime factors of `n` in non-increasing order.
fn prime_factors_descending(mut n: usize) -> Vec<usize> {
    let mut factors = Vec::new();
    let mut f = 2;
    while f * f <= n {
        while n.is_multiple_of(f) {
            factors.push(f);
            n /= f;
        }
        f += 1;
    }
    if n > 1 {
        factors.push(n);
    }
    factors.reverse();
    factors
}

/// MPI_Dims_create's rule: give each prime factor, largest first, to the currently smallest
/// dimension; sort the result non-increasing.
fn balanced_dims(ranks: usize, grid_rank: usize) -> Vec<usize> {
    let mut dims = vec![1; grid_rank];
    for f in prime_factors_descending(ranks) {
        let smallest = (0..grid_rank).min_by_key(|&i| dims[i]).unwrap_or(0);
        dims[smallest] *= f;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    dims
}

/// Every factorization of `ranks` into `grid_rank` ordered factors (each ≥ 1), each once.
///
/// ```
/// use redist::grid::factorizations;
/// assert_eq!(factorizations(4, 2), vec![vec![1, 4], vec![2, 2], vec![4, 1]]);
/// ```
pub fn factorizations(ranks: usize, grid_rank: usize) -> Vec<Vec<usize>> {
    fn rec(rest: usize, slots: usize, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if slots == 1 {
            prefix.push(rest);
            out.push(prefix.clone());
            prefix.pop();
            return;
        }
        for f in 1..=rest {
            if rest.is_multiple_of(f) {
                prefix.push(f);
                rec(rest / f, slots - 1, prefix, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    if ranks > 0 && grid_rank > 0 {
        rec(ranks, grid_rank, &mut Vec::new(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coords_round_trip_row_major() {
        let g = GridShape::new(vec![3, 1, 4]).unwrap();
        for r in 0..g.ranks() {
            assert_eq!(g.rank_of(&g.coords_of(r)), r);
        }
        // Row-major: the last coordinate varies fastest.
        assert_eq!(g.coords_of(1), vec![0, 0, 1]);
        assert_eq!(g.coords_of(4), vec![1, 0, 0]);
    }

    #[test]
    fn balanced_matches_mpi_dims_create() {
        // Values MPI_Dims_create returns (OpenMPI 4.1).
        assert_eq!(balanced_dims(6, 2), vec![3, 2]);
        assert_eq!(balanced_dims(16, 2), vec![4, 4]);
        assert_eq!(balanced_dims(12, 3), vec![3, 2, 2]);
        assert_eq!(balanced_dims(1, 3), vec![1, 1, 1]);
        assert_eq!(balanced_dims(5, 1), vec![5]);
        for p in 1..=64 {
            for r in 1..=4 {
                assert_eq!(balanced_dims(p, r).iter().product::<usize>(), p);
            }
        }
    }

    #[test]
    fn factorizations_are_complete_and_distinct() {
        for p in 1..=36 {
            for r in 1..=3 {
                let fs = factorizations(p, r);
                let mut brute = Vec::new();
                for code in 0..p.pow(r as u32) {
                    let mut rest = code;
                    let mut tuple = vec![0; r];
                    for t in tuple.iter_mut().rev() {
                        *t = rest % p + 1;
                        rest /= p;
                    }
                    if tuple.iter().product::<usize>() == p {
                        brute.push(tuple);
                    }
                }
                assert_eq!(fs, brute, "p={p} r={r}");
            }
        }
    }

    #[test]
    fn parse_rejects_nonsense() {
        for bad in ["", "x", "4x", "0", "-1", "2x3.5", "a"] {
            assert!(GridShape::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(GridShape::parse(" 2 x 3 ").unwrap().dims(), &[2, 3]);
    }
}
