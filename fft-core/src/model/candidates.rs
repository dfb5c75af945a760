//! The candidate grids of a prediction, enumerated from the prime factorization of P so that
//! the work grows with the number of candidates, never with P itself.

use crate::error::{FftError, Result};
use redist::GridShape;

/// The largest process count the model plans for: 2^40. Factoring P by trial division takes
/// up to 2^20 divisions, well under a millisecond.
pub const MAX_RANKS: usize = 1 << 40;

/// The most candidate grids one evaluation takes on. A 3-D shape has at most 6721 candidates
/// for any P ≤ [`MAX_RANKS`]; 4-D and 5-D shapes on process counts with many divisors can have
/// millions, which are refused (restrict the grid rank, or give the grid).
pub const MAX_CANDIDATES: usize = 20_000;

/// The prime factorization of `n` as (prime, exponent), primes ascending.
fn factorize(mut n: usize) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    let mut p = 2usize;
    while p.saturating_mul(p) <= n {
        if n.is_multiple_of(p) {
            let mut e = 0;
            while n.is_multiple_of(p) {
                n /= p;
                e += 1;
            }
            out.push((p, e));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if n > 1 {
        out.push((n, 1));
    }
    out
}

/// Every divisor of `n`, ascending.
fn divisors(n: usize) -> Vec<usize> {
    let mut out = vec![1usize];
    for (p, e) in factorize(n) {
        let len = out.len();
        let mut power = 1usize;
        for _ in 0..e {
            power *= p;
            for i in 0..len {
                out.push(out[i] * power);
            }
        }
    }
    out.sort_unstable();
    out
}

/// The number of ordered factorizations of `ranks` into `grid_rank` factors ≥ 1:
/// Π over the prime powers p^e of P of C(e + r − 1, r − 1), saturating.
pub fn factorization_count(ranks: usize, grid_rank: usize) -> u128 {
    if ranks == 0 || grid_rank == 0 {
        return 0;
    }
    factorize(ranks).iter().fold(1u128, |acc, &(_, e)| {
        // C(e + r − 1, r − 1) = C(e + r − 1, e), built up term by term (exact at each step).
        let mut c = 1u128;
        for i in 1..=e as u128 {
            c = c.saturating_mul(grid_rank as u128 - 1 + i) / i;
        }
        acc.saturating_mul(c)
    })
}

/// Which candidates to evaluate: every grid rank r < d, one grid rank, or one grid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Candidates {
    /// Every grid rank r < d and every ordered factorization of P into r dimensions.
    #[default]
    All,
    /// The ordered factorizations of P into this many dimensions.
    Rank(usize),
    /// This grid alone.
    Grid(Vec<usize>),
}

/// Checks `ranks` and the number of candidates against [`MAX_RANKS`] and [`MAX_CANDIDATES`]
/// without enumerating anything; returns that number.
pub fn check_size(shape: &[usize], ranks: usize, which: &Candidates) -> Result<usize> {
    if ranks > MAX_RANKS {
        return Err(FftError::TooManyRanks {
            ranks: ranks as u64,
            limit: MAX_RANKS as u64,
        });
    }
    let count: u128 = match which {
        Candidates::All => (1..shape.len())
            .map(|r| factorization_count(ranks, r))
            .fold(0u128, u128::saturating_add),
        Candidates::Rank(r) => factorization_count(ranks, *r),
        Candidates::Grid(_) => 1,
    };
    if count > MAX_CANDIDATES as u128 {
        return Err(FftError::TooManyCandidates {
            shape: shape.to_vec(),
            ranks: ranks as u64,
            candidates: count,
            limit: MAX_CANDIDATES,
        });
    }
    Ok(count as usize)
}

/// The ordered factorizations of `ranks` into `grid_rank` factors, lexicographically
/// ascending (as `redist::grid::factorizations`, without its O(P) scans).
pub fn factorizations(ranks: usize, grid_rank: usize) -> Vec<Vec<usize>> {
    fn rec(
        divs: &[usize],
        rest: usize,
        slots: usize,
        prefix: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if slots == 1 {
            prefix.push(rest);
            out.push(prefix.clone());
            prefix.pop();
            return;
        }
        for &f in divs.iter().take_while(|&&f| f <= rest) {
            if rest.is_multiple_of(f) {
                prefix.push(f);
                rec(divs, rest / f, slots - 1, prefix, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    if ranks > 0 && grid_rank > 0 {
        rec(
            &divisors(ranks),
            ranks,
            grid_rank,
            &mut Vec::new(),
            &mut out,
        );
    }
    out
}

/// Every candidate grid for `shape` on `ranks` processes: each rank r < d and each ordered
/// factorization of `ranks` into r dimensions, each once. r = 1 is the slab, the §4
/// projection of Birkeland and Sørøvik: all P ranks on one grid dimension.
pub fn candidates(shape: &[usize], ranks: usize) -> Vec<GridShape> {
    (1..shape.len())
        .flat_map(|r| factorizations(ranks, r))
        .map(|dims| GridShape::new(dims).expect("factors are ≥ 1"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factorizations_match_the_scan_and_the_count() {
        for ranks in 1..=200usize {
            for r in 1..=4 {
                let ours = factorizations(ranks, r);
                assert_eq!(ours, redist::grid::factorizations(ranks, r), "{ranks} {r}");
                assert_eq!(factorization_count(ranks, r), ours.len() as u128);
            }
        }
        assert_eq!(factorize(1 << 40), vec![(2, 40)]);
        assert_eq!(factorize(1_000_000_007), vec![(1_000_000_007, 1)]);
        // 2^40: C(41, 1) = 41 two-factor grids, C(43, 3) = 12341 four-factor ones.
        assert_eq!(factorization_count(1 << 40, 2), 41);
        assert_eq!(factorization_count(1 << 40, 4), 12341);
        assert_eq!(divisors(963_761_198_400).len(), 6720);
    }

    #[test]
    fn sizes_beyond_the_bounds_are_refused() {
        let three = [8usize, 8, 8];
        assert_eq!(check_size(&three, MAX_RANKS, &Candidates::All).unwrap(), 42);
        assert!(matches!(
            check_size(&three, MAX_RANKS + 1, &Candidates::All),
            Err(FftError::TooManyRanks { .. })
        ));
        // 2^6·3^4·5^2·7·11·13·17·19·23: 4-D shapes have 1.8 million three-factor grids.
        let p = 963_761_198_400;
        assert_eq!(check_size(&three, p, &Candidates::All).unwrap(), 6721);
        let e = check_size(&[8, 8, 8, 8], p, &Candidates::All).unwrap_err();
        let all = 1 + 6720 + 28 * 15 * 6 * 3u128.pow(6);
        assert!(
            matches!(e, FftError::TooManyCandidates { candidates, .. } if candidates == all),
            "{e}"
        );
        assert_eq!(
            check_size(&[8, 8, 8, 8], p, &Candidates::Rank(2)).unwrap(),
            6720
        );
    }
}
