//! What one call means, as plain data: the parameters each process contributes, and the pure
//! step from every process's parameters to the two distributions and sections of the copy.
//! No MPI and no BLACS here, so it is tested alone.

use redist::dist::{AxisDist, DistArray, GridOrder, Storage};
use redist::RedistError;
use thiserror::Error;

/// Why a call cannot be carried out. Every process computes it from the same gathered
/// parameters (every process's leading dimensions included), so every process reports the
/// same error; processes are named by their rank in the union context.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CallError {
    /// No process of the union context is in the grid of `matrix` (A or B).
    #[error("no process of the context is in the grid of {matrix}")]
    NoGrid {
        /// `A` or `B`.
        matrix: char,
    },
    /// Processes of one grid disagree about it.
    #[error(
        "the processes of {matrix}'s grid disagree about its {what}: {first} on process \
         {first_process} and {other} on process {process}"
    )]
    Incoherent {
        /// `A` or `B`.
        matrix: char,
        /// Which parameter.
        what: &'static str,
        /// The value of the grid's first process.
        first: i64,
        /// That process.
        first_process: usize,
        /// The first differing value.
        other: i64,
        /// The process that has it.
        process: usize,
    },
    /// A process's leading dimension `LLD_` is below its local rows (ScaLAPACK's "bad lda
    /// arg"), checked for every process of the grid on every process.
    #[error(
        "{matrix}: bad lda arg on process {process}: LLD_={lld} but its local array has \
         {rows} rows (grid row {row} of {nprow}, M_={m}, MB_={mb}, RSRC_={rsrc})"
    )]
    BadLead {
        /// `A` or `B`.
        matrix: char,
        /// The process, by rank in the union context.
        process: usize,
        /// Its leading dimension.
        lld: i64,
        /// Its local rows.
        rows: usize,
        /// Its grid row.
        row: i64,
        /// Grid rows.
        nprow: i64,
        /// Global rows.
        m: i64,
        /// Row block size.
        mb: i64,
        /// First process row.
        rsrc: i64,
    },
    /// A position of a grid has no process, or two.
    #[error("{matrix}'s {rows}x{cols} grid has {count} process(es) at ({row}, {col})")]
    GridHole {
        /// `A` or `B`.
        matrix: char,
        /// Grid rows.
        rows: i64,
        /// Grid columns.
        cols: i64,
        /// The position's row.
        row: i64,
        /// The position's column.
        col: i64,
        /// Processes found there.
        count: usize,
    },
    /// A parameter out of its range (ScaLAPACK's `paramcheck` cases, with the values).
    #[error("{matrix}: {what}")]
    Bad {
        /// `A` or `B`.
        matrix: char,
        /// What is wrong, with the values.
        what: String,
    },
    /// The redistribution layer refused the problem.
    #[error(transparent)]
    Redist(#[from] RedistError),
}

/// Length of one process's record ([`Record::to_ints`]).
pub const RECORD_LEN: usize = 2 * SIDE_LEN + 3;

/// Integers of one side (A or B) in a record.
const SIDE_LEN: usize = 14;

/// One matrix as one process sees it: its grid position (or none) and, when in the grid, the
/// descriptor fields and the submatrix start (1-based, as passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Side {
    /// Whether this process is in the matrix's grid.
    pub in_grid: bool,
    /// Grid rows.
    pub nprow: i32,
    /// Grid columns.
    pub npcol: i32,
    /// This process's grid row.
    pub myrow: i32,
    /// This process's grid column.
    pub mycol: i32,
    /// Global rows `M_`.
    pub m: i32,
    /// Global columns `N_`.
    pub n: i32,
    /// Row block size `MB_`.
    pub mb: i32,
    /// Column block size `NB_`.
    pub nb: i32,
    /// First process row `RSRC_`.
    pub rsrc: i32,
    /// First process column `CSRC_`.
    pub csrc: i32,
    /// Local leading dimension `LLD_`.
    pub lld: i32,
    /// Submatrix start row (1-based `IA`).
    pub i: i32,
    /// Submatrix start column (1-based `JA`).
    pub j: i32,
}

impl Side {
    /// The side of a process in the grid `(nprow, npcol, myrow, mycol)` with descriptor `desc`
    /// (`[DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD]`) and submatrix start `(i, j)`.
    pub fn new(grid: (i32, i32, i32, i32), desc: &[i32; 9], i: i32, j: i32) -> Self {
        let (nprow, npcol, myrow, mycol) = grid;
        Side {
            in_grid: true,
            nprow,
            npcol,
            myrow,
            mycol,
            m: desc[2],
            n: desc[3],
            mb: desc[4],
            nb: desc[5],
            rsrc: desc[6],
            csrc: desc[7],
            lld: desc[8],
            i,
            j,
        }
    }

    fn to_ints(self) -> [i32; SIDE_LEN] {
        [
            i32::from(self.in_grid),
            self.nprow,
            self.npcol,
            self.myrow,
            self.mycol,
            self.m,
            self.n,
            self.mb,
            self.nb,
            self.rsrc,
            self.csrc,
            self.lld,
            self.i,
            self.j,
        ]
    }

    fn from_ints(v: &[i32]) -> Self {
        Side {
            in_grid: v[0] != 0,
            nprow: v[1],
            npcol: v[2],
            myrow: v[3],
            mycol: v[4],
            m: v[5],
            n: v[6],
            mb: v[7],
            nb: v[8],
            rsrc: v[9],
            csrc: v[10],
            lld: v[11],
            i: v[12],
            j: v[13],
        }
    }
}

/// What one process contributes to a call: its A side, its B side, `M`, `N` and its rank in
/// `MPI_COMM_WORLD` (which tells processes apart across communicators).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Record {
    /// The A side.
    pub a: Side,
    /// The B side.
    pub b: Side,
    /// Rows of the submatrices.
    pub m: i32,
    /// Columns of the submatrices.
    pub n: i32,
    /// Rank in `MPI_COMM_WORLD`.
    pub world: i32,
}

impl Record {
    /// The record as `RECORD_LEN` integers (what is gathered).
    pub fn to_ints(&self) -> [i32; RECORD_LEN] {
        let mut out = [0; RECORD_LEN];
        out[..SIDE_LEN].copy_from_slice(&self.a.to_ints());
        out[SIDE_LEN..2 * SIDE_LEN].copy_from_slice(&self.b.to_ints());
        out[2 * SIDE_LEN..].copy_from_slice(&[self.m, self.n, self.world]);
        out
    }

    /// The record back from its integers.
    pub fn from_ints(v: &[i32]) -> Self {
        Record {
            a: Side::from_ints(&v[..SIDE_LEN]),
            b: Side::from_ints(&v[SIDE_LEN..2 * SIDE_LEN]),
            m: v[2 * SIDE_LEN],
            n: v[2 * SIDE_LEN + 1],
            world: v[2 * SIDE_LEN + 2],
        }
    }
}

/// One matrix of the call, resolved from every process's record: the distribution over the
/// union communicator and the section copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    /// The distribution (column-major local arrays; the leading dimension is this process's).
    pub array: DistArray,
    /// The submatrix start, 0-based.
    pub start: [usize; 2],
}

/// The whole call: both matrices and the submatrix extent, over a union communicator of
/// `records.len()` processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The source.
    pub a: Matrix,
    /// The destination.
    pub b: Matrix,
    /// Rows and columns copied.
    pub extent: [usize; 2],
}

/// Resolves the call from every process's record (indexed by rank in the union
/// communicator), as process `me` sees it (its own leading dimensions).
pub fn resolve(records: &[Record], me: usize) -> Result<Call, CallError> {
    let (m, n) = (records[me].m, records[me].n);
    if let Some(r) = records.iter().find(|r| (r.m, r.n) != (m, n)) {
        return Err(CallError::Bad {
            matrix: 'A',
            what: format!(
                "processes disagree about the submatrix size: {m}x{n} and {}x{}",
                r.m, r.n
            ),
        });
    }
    if m < 0 || n < 0 {
        return Err(CallError::Bad {
            matrix: 'A',
            what: format!("the submatrix is {m}x{n}; M and N must be at least 0"),
        });
    }
    let extent = [m as usize, n as usize];
    let a = matrix('A', records, me, |r| r.a, extent)?;
    let b = matrix('B', records, me, |r| r.b, extent)?;
    Ok(Call { a, b, extent })
}

/// One matrix of the call from every process's record (`side` picks A or B).
fn matrix(
    name: char,
    records: &[Record],
    me: usize,
    side: impl Fn(&Record) -> Side,
    extent: [usize; 2],
) -> Result<Matrix, CallError> {
    let members: Vec<(usize, Side)> = records
        .iter()
        .enumerate()
        .map(|(q, r)| (q, side(r)))
        .filter(|(_, s)| s.in_grid)
        .collect();
    let s = coherent(name, &members)?;
    check_descriptor(name, &s, extent)?;
    let ranks = grid_ranks(name, &s, &members)?;
    // An empty matrix has no distribution; nothing of it is copied (the extent is 0 too).
    let shape = [(s.m as usize).max(1), (s.n as usize).max(1)];
    let mine = side(&records[me]);
    let lead = mine.in_grid.then_some(mine.lld.max(1) as usize);
    let array = DistArray::new(
        shape.to_vec(),
        vec![s.nprow as usize, s.npcol as usize],
        GridOrder::Row,
        vec![
            AxisDist::BlockCyclic(s.mb as usize),
            AxisDist::BlockCyclic(s.nb as usize),
        ],
    )?
    .with_first_procs(vec![s.rsrc as usize, s.csrc as usize])?
    .with_storage(Storage::ColumnMajor, lead)?
    .with_ranks(ranks)?;
    check_leads(name, &s, &members, &array)?;
    Ok(Matrix {
        array,
        start: [s.i as usize - 1, s.j as usize - 1],
    })
}

/// The descriptor every member of the grid (`members`: rank in the union communicator and
/// its side) gave, when they all gave the same global values.
fn coherent(name: char, members: &[(usize, Side)]) -> Result<Side, CallError> {
    let Some(&(first_process, first)) = members.first() else {
        return Err(CallError::NoGrid { matrix: name });
    };
    let global = |s: &Side| {
        [
            ("grid rows", s.nprow),
            ("grid columns", s.npcol),
            ("rows M_", s.m),
            ("columns N_", s.n),
            ("row block MB_", s.mb),
            ("column block NB_", s.nb),
            ("first process row RSRC_", s.rsrc),
            ("first process column CSRC_", s.csrc),
            ("submatrix row I", s.i),
            ("submatrix column J", s.j),
        ]
    };
    for &(process, s) in &members[1..] {
        for ((what, x), (_, y)) in global(&first).into_iter().zip(global(&s)) {
            if x != y {
                return Err(CallError::Incoherent {
                    matrix: name,
                    what,
                    first: x as i64,
                    first_process,
                    other: y as i64,
                    process,
                });
            }
        }
    }
    Ok(first)
}

/// Checks the grid, block sizes, first process and the submatrix of `extent` against the
/// matrix.
fn check_descriptor(name: char, s: &Side, extent: [usize; 2]) -> Result<(), CallError> {
    let bad = |what: String| CallError::Bad { matrix: name, what };
    if s.nprow < 1 || s.npcol < 1 {
        return Err(bad(format!("a {}x{} grid", s.nprow, s.npcol)));
    }
    if s.m < 0 || s.n < 0 || s.mb < 1 || s.nb < 1 {
        return Err(bad(format!(
            "a {}x{} matrix in {}x{} blocks",
            s.m, s.n, s.mb, s.nb
        )));
    }
    if s.rsrc < 0 || s.rsrc >= s.nprow || s.csrc < 0 || s.csrc >= s.npcol {
        return Err(bad(format!(
            "bad first process coordinates ({}, {}) on a {}x{} grid",
            s.rsrc, s.csrc, s.nprow, s.npcol
        )));
    }
    let (i, j) = (s.i as i64 - 1, s.j as i64 - 1);
    if i < 0 || j < 0 || i + extent[0] as i64 > s.m as i64 || j + extent[1] as i64 > s.n as i64 {
        return Err(bad(format!(
            "bad submatrix: i={}, j={}, m={}, n={}, M={}, N={}",
            s.i, s.j, extent[0], extent[1], s.m, s.n
        )));
    }
    Ok(())
}

/// The rank in the union communicator at each grid position (row-major), when every
/// position has exactly one member.
fn grid_ranks(name: char, s: &Side, members: &[(usize, Side)]) -> Result<Vec<usize>, CallError> {
    let (rows, cols) = (s.nprow as usize, s.npcol as usize);
    let mut ranks = vec![Vec::new(); rows * cols];
    for &(q, t) in members {
        let (r, c) = (t.myrow, t.mycol);
        if r < 0 || c < 0 || r >= s.nprow || c >= s.npcol {
            return Err(CallError::Bad {
                matrix: name,
                what: format!("a process at ({r}, {c}) of the {rows}x{cols} grid"),
            });
        }
        ranks[r as usize * cols + c as usize].push(q);
    }
    if let Some(hole) = ranks.iter().position(|v| v.len() != 1) {
        return Err(CallError::GridHole {
            matrix: name,
            rows: rows as i64,
            cols: cols as i64,
            row: (hole / cols) as i64,
            col: (hole % cols) as i64,
            count: ranks[hole].len(),
        });
    }
    Ok(ranks.into_iter().map(|v| v[0]).collect())
}

/// Checks every member's leading dimension, not only this process's: the same error
/// everywhere.
fn check_leads(
    name: char,
    s: &Side,
    members: &[(usize, Side)],
    array: &DistArray,
) -> Result<(), CallError> {
    for &(process, t) in members {
        let rows = array.local_shape(process)[0];
        if (t.lld.max(1) as usize) < rows {
            return Err(CallError::BadLead {
                matrix: name,
                process,
                lld: t.lld as i64,
                rows,
                row: t.myrow as i64,
                nprow: s.nprow as i64,
                m: s.m as i64,
                mb: s.mb as i64,
                rsrc: s.rsrc as i64,
            });
        }
    }
    Ok(())
}

/// Whether element `(i, j)` of an `m × n` submatrix (0-based) is copied by `p?trmr2d` with
/// `uplo` and `diag`: ScaLAPACK's trapezoid, anchored at the bottom-right corner for an upper
/// one taller than wide and at the top-left for a lower one wider than tall. `uplo` `U`
/// (either case) is upper, anything else lower; the diagonal is copied unless `diag` is `U`
/// for a lower trapezoid, and only if `diag` is `N` for an upper one.
pub fn in_trapezoid(uplo: u8, diag: u8, m: usize, n: usize, i: usize, j: usize) -> bool {
    let (m, n, i, j) = (m as i64, n as i64, i as i64, j as i64);
    if uplo.eq_ignore_ascii_case(&b'U') {
        let rows = ((m - n).max(0) + j + i64::from(diag.eq_ignore_ascii_case(&b'N'))).min(m);
        i < rows
    } else {
        let first = (j - (n - m).max(0) + i64::from(diag.eq_ignore_ascii_case(&b'U'))).max(0);
        i >= first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(grid: (i32, i32, i32, i32), m: i32, n: i32, lld: i32) -> Side {
        Side::new(grid, &[1, 0, m, n, 2, 3, 0, 1, lld], 2, 1)
    }

    fn records() -> Vec<Record> {
        // A on a 1x2 grid of union ranks 2 and 0; B on a 1x1 grid of rank 1.
        let none = Side::default();
        let a = |c| side((1, 2, 0, c), 6, 7, 6);
        let b = Side::new((1, 1, 0, 0), &[1, 0, 9, 9, 2, 3, 0, 0, 9], 2, 1);
        vec![
            Record {
                a: a(1),
                b: none,
                m: 3,
                n: 4,
                world: 5,
            },
            Record {
                a: none,
                b,
                m: 3,
                n: 4,
                world: 6,
            },
            Record {
                a: a(0),
                b: none,
                m: 3,
                n: 4,
                world: 7,
            },
        ]
    }

    #[test]
    fn records_round_trip_and_resolve() {
        let rs = records();
        for r in &rs {
            assert_eq!(Record::from_ints(&r.to_ints()), *r);
        }
        let call = resolve(&rs, 0).unwrap();
        assert_eq!(call.extent, [3, 4]);
        assert_eq!(call.a.start, [1, 0]);
        assert_eq!(call.a.array.ranks(), Some(&[2, 0][..]));
        assert_eq!(call.a.array.first_procs(), vec![0, 1]);
        assert_eq!(call.a.array.lead(), Some(6));
        assert_eq!(call.b.array.ranks(), Some(&[1][..]));
        // Rank 0 is not in B: no leading dimension of its own there.
        assert_eq!(call.b.array.lead(), None);
    }

    #[test]
    fn bad_calls_are_typed_errors_with_values() {
        let mut rs = records();
        rs[2].a.mb = 5;
        assert!(matches!(
            resolve(&rs, 0),
            Err(CallError::Incoherent {
                matrix: 'A',
                first: 2,
                first_process: 0,
                other: 5,
                process: 2,
                ..
            })
        ));
        let mut rs = records();
        rs[1].b.in_grid = false;
        assert_eq!(resolve(&rs, 0), Err(CallError::NoGrid { matrix: 'B' }));
        let mut rs = records();
        rs[0].a.mycol = 0;
        assert!(matches!(
            resolve(&rs, 0),
            Err(CallError::GridHole {
                count: 2,
                row: 0,
                col: 0,
                ..
            })
        ));
        let mut rs = records();
        for r in &mut rs {
            r.m = 6;
        }
        let err = resolve(&rs, 0).unwrap_err().to_string();
        assert!(err.contains("i=2, j=1, m=6, n=4, M=6, N=7"), "{err}");
        let mut rs = records();
        rs[2].a.lld = 1;
        // Process 2's small LLD is the same error on every process, naming it.
        for me in 0..3 {
            assert_eq!(
                resolve(&rs, me),
                Err(CallError::BadLead {
                    matrix: 'A',
                    process: 2,
                    lld: 1,
                    rows: 6,
                    row: 0,
                    nprow: 1,
                    m: 6,
                    mb: 2,
                    rsrc: 0
                })
            );
        }
    }

    #[test]
    fn trapezoids_match_scalapack() {
        // Upper, 3x5 with the diagonal: rows 0..=j (capped at 3).
        let upper: Vec<usize> = (0..5)
            .map(|j| {
                (0..3)
                    .filter(|&i| in_trapezoid(b'U', b'N', 3, 5, i, j))
                    .count()
            })
            .collect();
        assert_eq!(upper, vec![1, 2, 3, 3, 3]);
        // Upper, 5x3 without the diagonal: the bottom-right anchored trapezoid.
        let tall: Vec<usize> = (0..3)
            .map(|j| {
                (0..5)
                    .filter(|&i| in_trapezoid(b'u', b'U', 5, 3, i, j))
                    .count()
            })
            .collect();
        assert_eq!(tall, vec![2, 3, 4]);
        // Lower, 3x5 with the diagonal: the first rows start at j - 2.
        let lower: Vec<usize> = (0..5)
            .map(|j| {
                (0..3)
                    .filter(|&i| in_trapezoid(b'L', b'N', 3, 5, i, j))
                    .count()
            })
            .collect();
        assert_eq!(lower, vec![3, 3, 3, 2, 1]);
        // A diag of neither U nor N keeps the diagonal of a lower and drops an upper's.
        assert!(in_trapezoid(b'L', b'x', 3, 3, 1, 1));
        assert!(!in_trapezoid(b'U', b'x', 3, 3, 1, 1));
    }
}
