//! Where the rows of a fused sweep lie: one block, or where an exchange's run map says
//! ([`RunMap`]), in a block or a message buffer ([`Rows`]).

use num_complex::Complex;
use redist::piecewise::{Run, RunBuffer};
use std::sync::Arc;

/// Rows shorter than this many elements keep their runs listed: a [`RunMap::Grid`] row
/// costs a division, which a short row's copy does not hide.
const GRID_MIN_ROW: usize = 32;

/// Whether rows `bytes` apart fall in different L1 sets: `bytes` is no multiple of 512. A
/// column FFT's pass works on 16 rows at once; in place on rows a power of two apart (a
/// 128³ plane's, 2 KiB) they all share a set and its 12 ways, which a staging block or a
/// plane buffer avoids (`super::column`).
pub(crate) fn spread_apart(bytes: usize) -> bool {
    bytes.trailing_zeros() < 9
}

/// Where each row of a fused sweep's block lies ([`redist::piecewise`]): a run per row, or, when
/// the rows form a grid in one buffer, the grid's few numbers ([`Grid`]). An exchange within
/// one rank maps its rows so: a transposed slab on one rank holds no list then (512 KiB at
/// 256³).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RunMap {
    Listed(Arc<[Run]>),
    Grid(Grid),
}

/// Rows in one buffer, row `r` at `first + q' · outer + p' · step` with `q = r / per`,
/// `p = r % per`, and `q'`, `p'` the same or digit-swapped ([`Swap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    buffer: RunBuffer,
    first: usize,
    per: Divisor,
    outer: isize,
    step: isize,
    len: usize,
    swap: Swap,
}

/// Which index of a [`Grid`] is digit-swapped, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Swap {
    None,
    /// `q` (the row's index over `per`).
    Outer(DigitSwap),
    /// `p` (the row's index within `per`).
    Inner(DigitSwap),
}

/// The permutation `i = n1 + a · n2 ↦ n2 + b · n1` of `0..a · b` (a column FFT's
/// digit-swapped rows, `super::column::ColumnFft::swapped`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DigitSwap {
    a: Divisor,
    b: usize,
}

impl DigitSwap {
    /// The swap of `0..a · b` (`a`, `b` > 0).
    pub(crate) fn new(a: usize, b: usize) -> Self {
        Self {
            a: Divisor::new(a),
            b,
        }
    }

    /// The length `a · b` it permutes.
    pub(crate) fn len(self) -> usize {
        self.a.d as usize * self.b
    }

    /// Where `i` goes (`i` below [`DigitSwap::len`]).
    pub(crate) fn apply(self, i: usize) -> usize {
        let (q, r) = self.a.div_rem(i);
        q + self.b * r
    }
}

/// A divisor below 2³² with its reciprocal, for quotients and remainders of numbers below
/// 2³² by two multiplications instead of a division (Lemire, Kaser and Kurz, "Faster
/// remainder by direct computation", 2019): a grid's row offsets in a sweep's inner loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Divisor {
    d: u64,
    /// ⌈2⁶⁴ / d⌉ (wrapping to 0 for d = 1).
    m: u64,
}

impl Divisor {
    fn new(d: usize) -> Self {
        assert!(d > 0 && d < 1 << 32, "a divisor in 1..2³²: {d}");
        let d = d as u64;
        Self {
            d,
            m: (u64::MAX / d).wrapping_add(1),
        }
    }

    /// `(n / d, n % d)` for `n` below 2³².
    fn div_rem(self, n: usize) -> (usize, usize) {
        debug_assert!(n < 1 << 32);
        if self.d == 1 {
            return (n, 0);
        }
        let low = self.m.wrapping_mul(n as u64);
        let q = ((self.m as u128 * n as u128) >> 64) as usize;
        let r = ((low as u128 * self.d as u128) >> 64) as usize;
        (q, r)
    }
}

impl Grid {
    /// The offset of row `r`.
    fn offset(&self, r: usize) -> usize {
        let (mut q, mut p) = self.per.div_rem(r);
        match self.swap {
            Swap::None => {}
            Swap::Outer(d) => q = d.apply(q),
            Swap::Inner(d) => p = d.apply(p),
        }
        let at = q as isize * self.outer + p as isize * self.step;
        self.first.wrapping_add_signed(at)
    }

    /// The grid of `runs` with `swap`, if they form one (fewer than 2³² of them).
    fn of(runs: &[Run], swap: Swap) -> Option<Self> {
        let head = runs.first().filter(|_| runs.len() < 1 << 32)?;
        let (buffer, first) = (head.buffer(), head.offset());
        // The grid's steps from the runs themselves, undoing the swap on the rows that give
        // them: row 1 is `(q, p) = (0, 1)`, row `per` is `(1, 0)`.
        let at = |r: usize| {
            runs.get(r)
                .map(|run| run.offset() as isize - first as isize)
        };
        let step_row = match swap {
            Swap::Inner(d) => (0..d.len()).find(|&p| d.apply(p) == 1)?,
            _ => 1,
        };
        let step = at(step_row).unwrap_or(0);
        let per = match swap {
            Swap::Inner(d) => d.len(),
            _ => (1..runs.len())
                .find(|&r| at(r) != Some(r as isize * step))
                .unwrap_or(runs.len()),
        };
        let outer_row = match swap {
            Swap::Outer(d) => per * (0..d.len()).find(|&q| d.apply(q) == 1)?,
            _ => per,
        };
        let outer = at(outer_row).unwrap_or(0);
        let grid = Self {
            buffer,
            first,
            per: Divisor::new(per),
            outer,
            step,
            len: runs.len(),
            swap,
        };
        // Every row where the runs say, and (a swap being a permutation of its indices only)
        // within its range.
        let planes = runs.len().div_ceil(per);
        let ranges = match swap {
            Swap::None => true,
            Swap::Outer(d) => d.len() == planes && runs.len().is_multiple_of(per),
            Swap::Inner(d) => d.len() == per && runs.len().is_multiple_of(per),
        };
        let fits = ranges
            && runs
                .iter()
                .enumerate()
                .all(|(r, run)| run.buffer() == buffer && run.offset() == grid.offset(r));
        fits.then_some(grid)
    }
}

impl RunMap {
    /// The map of `runs`, rows of `inner` elements: a grid where the runs form one (rows
    /// shorter than [`GRID_MIN_ROW`] stay listed).
    pub(crate) fn new(runs: Vec<Run>, inner: usize) -> Self {
        Self::with_swaps(runs, inner, &[Swap::None])
    }

    /// The map of `runs`, a grid with the first of `swaps` whose grid the runs form.
    fn with_swaps(runs: Vec<Run>, inner: usize, swaps: &[Swap]) -> Self {
        let grid = (runs.len() >= 2 && inner >= GRID_MIN_ROW)
            .then(|| swaps.iter().find_map(|&swap| Grid::of(&runs, swap)))
            .flatten();
        match grid {
            Some(grid) => Self::Grid(grid),
            None => Self::Listed(runs.into()),
        }
    }

    /// This map with the rows it names put digit-swapped (`swap`) within each sub-block of
    /// `rows` rows of `inner` elements of the block: the row at offset `(s · rows + i) ·
    /// inner` goes to `(s · rows + swap(i)) · inner`. `None` unless every run is such a row.
    pub(crate) fn swap_rows(&self, inner: usize, rows: usize, swap: DigitSwap) -> Option<Self> {
        if swap.len() != rows || inner == 0 {
            return None;
        }
        let runs = (0..self.len())
            .map(|r| {
                let run = self.get(r);
                let whole = run.buffer() == RunBuffer::Block && run.offset().is_multiple_of(inner);
                let row = run.offset() / inner;
                let (s, i) = (row / rows, row % rows);
                whole.then(|| Run::new(RunBuffer::Block, (s * rows + swap.apply(i)) * inner))
            })
            .collect::<Option<Vec<Run>>>()?;
        let swaps = [Swap::Outer(swap), Swap::Inner(swap), Swap::None];
        Some(Self::with_swaps(runs, inner, &swaps))
    }

    /// Rows in the map.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Listed(runs) => runs.len(),
            Self::Grid(grid) => grid.len,
        }
    }

    /// Whether the map has no rows.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The run of row `r` (below [`Self::len`]).
    pub(crate) fn get(&self, r: usize) -> Run {
        match self {
            Self::Listed(runs) => runs[r],
            Self::Grid(grid) => Run::new(grid.buffer, grid.offset(r)),
        }
    }

    /// The rows' pitch within a plane of a grid: `(rows per plane, elements between them)`.
    pub(crate) fn pitch(&self) -> Option<(usize, isize)> {
        match self {
            Self::Grid(grid) if grid.swap == Swap::None => Some((grid.per.d as usize, grid.step)),
            _ => None,
        }
    }

    /// Bytes the map holds.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Self::Listed(runs) => std::mem::size_of_val(&runs[..]),
            Self::Grid(_) => 0,
        }
    }
}

/// Where the rows of a strided sweep lie: row `r` (a run of `inner` elements) either at
/// `r · inner` in one block, or where a run map of an exchange says, in a block or a message
/// buffer.
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a, T> {
    map: Where<'a>,
    block: *mut Complex<T>,
    message: *mut Complex<T>,
    inner: usize,
}

/// How a [`Rows`] finds its rows.
#[derive(Clone, Copy)]
enum Where<'a> {
    /// One after another in the block.
    Block,
    /// As a listed run map says.
    Listed(&'a [Run]),
    /// As a grid says, from its row `start` on.
    Grid(Grid, usize),
}

// SAFETY: the pointers are only dereferenced under the contracts of `Sweep::run_mapped` and
// `Sweep::strided_task`, which keep workers on disjoint elements.
unsafe impl<T: Send> Send for Rows<'_, T> {}
unsafe impl<T: Send> Sync for Rows<'_, T> {}

impl<'a, T> Rows<'a, T> {
    /// Rows one after another in `block`.
    pub(crate) fn block(block: *mut Complex<T>, inner: usize) -> Self {
        Self {
            map: Where::Block,
            block,
            message: std::ptr::null_mut(),
            inner,
        }
    }

    /// Rows one after another: read from `input` (same length as `data`) when given, else
    /// from `data`; written to `data`.
    pub(crate) fn in_or_out(
        data: &mut [Complex<T>],
        input: Option<&[Complex<T>]>,
        inner: usize,
    ) -> (Self, Self)
    where
        T: Copy,
    {
        let to = Self::block(data.as_mut_ptr(), inner);
        let from = match input {
            Some(input) => {
                assert_eq!(input.len(), data.len());
                Self::block(input.as_ptr() as *mut Complex<T>, inner)
            }
            None => to,
        };
        (from, to)
    }

    /// Rows where `runs` says, in `block` or `message`.
    #[cfg(test)]
    pub(crate) fn mapped(
        runs: &'a [Run],
        block: *mut Complex<T>,
        message: *mut Complex<T>,
        inner: usize,
    ) -> Self {
        Self {
            map: Where::Listed(runs),
            block,
            message,
            inner,
        }
    }

    /// Rows where `map` says, in `block` or `message`.
    pub(crate) fn from_map(
        map: &'a RunMap,
        block: *mut Complex<T>,
        message: *mut Complex<T>,
        inner: usize,
    ) -> Self {
        let map = match map {
            RunMap::Listed(runs) => Where::Listed(runs),
            RunMap::Grid(grid) => Where::Grid(*grid, 0),
        };
        Self {
            map,
            block,
            message,
            inner,
        }
    }

    /// The rows from row `r` on, numbered from zero (`r` at most the map's row count).
    pub(crate) fn skip(self, r: usize) -> Self {
        let map = match self.map {
            Where::Block => {
                return Self {
                    block: self.block.wrapping_add(r * self.inner),
                    ..self
                };
            }
            Where::Listed(runs) => Where::Listed(&runs[r..]),
            Where::Grid(grid, start) => Where::Grid(grid, start + r),
        };
        Self { map, ..self }
    }

    /// The address of the first element of row `r` (an address only: whoever reads or
    /// writes through it upholds the kernel's contract).
    #[inline]
    pub(crate) fn row(&self, r: usize) -> *mut Complex<T> {
        let base = |buffer| match buffer {
            RunBuffer::Block => self.block,
            RunBuffer::Message => self.message,
        };
        match self.map {
            Where::Block => self.block.wrapping_add(r * self.inner),
            Where::Listed(runs) => {
                let run = runs[r];
                base(run.buffer()).wrapping_add(run.offset())
            }
            Where::Grid(grid, start) => base(grid.buffer).wrapping_add(grid.offset(start + r)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quotients and remainders by two multiplications, against `/` and `%`.
    #[test]
    fn divisors_divide_like_the_operators() {
        for d in (1..300).chain([1 << 16, (1 << 32) - 1]) {
            let divisor = Divisor::new(d);
            let numbers = (0..2000).chain([(1 << 32) - 1, (1 << 31) + 12345, d * 977 + d - 1]);
            for n in numbers.filter(|&n| n < 1 << 32) {
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
        let swap = DigitSwap::new(4, 3);
        let mut seen: Vec<usize> = (0..12).map(|i| swap.apply(i)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..12).collect::<Vec<_>>(), "a permutation");
        assert_eq!(swap.apply(1 + 4 * 2), 2 + 3);
    }

    fn runs(offsets: impl IntoIterator<Item = usize>) -> Vec<Run> {
        offsets
            .into_iter()
            .map(|o| Run::new(RunBuffer::Block, o))
            .collect()
    }

    /// Grids are found where the runs form one (also descending steps and one plane), and
    /// every row, from any row skipped to, is where the list says.
    #[test]
    fn grid_maps_put_every_row_where_the_list_does() {
        let cases: Vec<(Vec<Run>, bool)> = vec![
            // A transposed slab: planes of 5 rows 1000 apart, rows 7 · 64 apart.
            (runs((0..20).map(|r| 1000 * (r / 5) + 448 * (r % 5))), true),
            // Rows across a plane, descending planes.
            (
                runs((0..12).map(|r| 9000 - 3000 * (r / 4) + 64 * (r % 4))),
                true,
            ),
            // One plane: a single step.
            (runs((0..7).map(|r| 50 + 64 * r)), true),
            // Not a grid: one row out of place.
            (
                runs((0..12).map(|r| {
                    if r == 9 {
                        5
                    } else {
                        1000 * (r / 4) + 64 * (r % 4)
                    }
                })),
                false,
            ),
            // Not a grid: one row in another buffer.
            (
                {
                    let mut v = runs((0..8).map(|r| 1000 * (r / 4) + 64 * (r % 4)));
                    v[7] = Run::new(RunBuffer::Message, v[7].offset());
                    v
                },
                false,
            ),
        ];
        for (list, grid) in cases {
            let map = RunMap::new(list.clone(), 64);
            assert_eq!(matches!(map, RunMap::Grid(_)), grid, "{list:?}");
            assert_eq!(map.len(), list.len());
            assert_eq!(map.bytes(), if grid { 0 } else { 8 * list.len() });
            let mut block = vec![Complex::new(0.0f64, 0.0); 10_000];
            let mut message = vec![Complex::new(0.0f64, 0.0); 10_000];
            let (b, m) = (block.as_mut_ptr(), message.as_mut_ptr());
            let listed = Rows::mapped(&list, b, m, 64);
            let rows = Rows::from_map(&map, b, m, 64);
            for skip in 0..list.len() {
                let (l, g) = (listed.skip(skip), rows.skip(skip));
                for r in 0..list.len() - skip {
                    assert_eq!(g.row(r), l.row(r), "skip {skip} row {r}");
                    assert_eq!(map.get(skip + r), list[skip + r]);
                }
            }
        }
        // Rows digit-swapped within sub-blocks: every row where the swap puts it, as a grid
        // with the swap where the rows allow one.
        let swap = DigitSwap::new(4, 2);
        let inner = 40;
        // A transposed slab, 3 planes of 8 rows of `inner`: row (o, i) at row i · 3 + o.
        let slab = runs((0..24).map(|r| ((r % 8) * 3 + r / 8) * inner));
        // The identity swap leaves every row where it was.
        for (list, rows) in [(slab.clone(), 3), (runs((0..24).map(|r| r * inner)), 8)] {
            let map = RunMap::new(list.clone(), inner);
            let Some(swapped) = map.swap_rows(inner, rows, DigitSwap::new(rows, 1)) else {
                panic!("whole rows");
            };
            assert!(matches!(swapped, RunMap::Grid(_)));
            for (r, run) in list.iter().enumerate() {
                assert_eq!(swapped.get(r), *run, "the identity swap");
            }
        }
        let map = RunMap::new(runs((0..24).map(|r| r * inner)), inner);
        let swapped = map.swap_rows(inner, 8, swap).expect("whole rows");
        assert!(matches!(
            swapped,
            RunMap::Grid(Grid {
                swap: Swap::Inner(_),
                ..
            })
        ));
        for (map, rows) in [
            (RunMap::new(runs((0..24).map(|r| r * inner)), inner), 8),
            (RunMap::new(slab.clone(), inner), 8),
            (
                RunMap::new(runs((0..48).map(|r| (47 - r) * inner)), inner),
                8,
            ),
        ] {
            let swapped = map.swap_rows(inner, rows, swap).expect("whole rows");
            for r in 0..map.len() {
                let row = map.get(r).offset() / inner;
                let want = (row / rows * rows + swap.apply(row % rows)) * inner;
                assert_eq!(swapped.get(r).offset(), want, "row {r}");
            }
        }
        // Not whole rows, or not in the block: no swapped map.
        assert!(RunMap::new(runs([3, 43]), inner)
            .swap_rows(inner, 8, swap)
            .is_none());

        // Short rows stay listed.
        let short = RunMap::new(runs((0..20).map(|r| 1000 * (r / 5) + 448 * (r % 5))), 8);
        assert!(matches!(short, RunMap::Listed(_)));
    }
}
