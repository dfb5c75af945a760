//! FFTW-MPI's data distributions, computed without MPI: which block of an array each process
//! holds before and after a transform, and how many elements it must allocate (the
//! `local_size` functions). The rules are FFTW 3.3's, as its manual states them and its
//! `mpi/api.c`, `mpi/block.c` and `mpi/choose-radix.c` apply them:
//!
//! - a distributed dimension of `n` is cut into blocks of `b` (default `⌈n/P⌉`), block `i` on
//!   process `i`, so trailing processes may own nothing (an idle process reports 0 elements
//!   starting at 0 in every dimension);
//! - a multi-dimensional array is distributed along its first dimension, or along its second
//!   when transposed; the other dimensions are whole;
//! - a 1-D transform's distribution depends on its size, `howmany`, direction and flags
//!   (FFTW's radix choice of the six-step algorithm);
//! - the allocation covers the input, the output and the intermediate layouts of FFTW's own
//!   algorithms, so that a program allocating what FFTW asks for has room for either library.

/// `FFTW_MPI_DEFAULT_BLOCK`: let FFTW choose the block size.
pub const DEFAULT_BLOCK: isize = 0;
/// `FFTW_MPI_SCRAMBLED_IN`.
pub const SCRAMBLED_IN: u32 = 1 << 27;
/// `FFTW_MPI_SCRAMBLED_OUT`.
pub const SCRAMBLED_OUT: u32 = 1 << 28;
/// `FFTW_MPI_TRANSPOSED_IN`.
pub const TRANSPOSED_IN: u32 = 1 << 29;
/// `FFTW_MPI_TRANSPOSED_OUT`.
pub const TRANSPOSED_OUT: u32 = 1 << 30;
/// Every MPI-specific flag.
pub const MPI_FLAGS: u32 = SCRAMBLED_IN | SCRAMBLED_OUT | TRANSPOSED_IN | TRANSPOSED_OUT;

/// `FFTW_FORWARD`: the sign of the exponent of a forward transform.
pub const FORWARD: i32 = -1;

/// Input or output distribution of a transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The transform's input.
    In,
    /// The transform's output.
    Out,
}

impl Side {
    /// 0 for the input, 1 for the output (the index of [`DimRequest::block`]).
    pub fn index(self) -> usize {
        match self {
            Side::In => 0,
            Side::Out => 1,
        }
    }
}

/// FFTW's default block size: `⌈n/procs⌉`.
pub fn default_block(n: usize, procs: usize) -> usize {
    n.div_ceil(procs.max(1))
}

/// How many blocks of `block` cover `n`.
pub fn num_blocks(n: usize, block: usize) -> usize {
    n.div_ceil(block.max(1))
}

/// The length of block `which` of `n` cut into blocks of `block` (0 past the end).
pub fn block_len(n: usize, block: usize, which: usize) -> usize {
    n.saturating_sub(which.saturating_mul(block)).min(block)
}

/// One dimension of a distributed array: its extent and its block size in the input and
/// output distributions (a block of `n` or more: the dimension is not distributed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    /// Extent.
    pub n: usize,
    /// Block size of the input (`[0]`) and output (`[1]`) distributions.
    pub block: [usize; 2],
}

/// A process's block of one distribution: extent and first global index per dimension.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Block {
    /// Local extent of each dimension.
    pub n: Vec<usize>,
    /// Global index of the first local element in each dimension.
    pub start: Vec<usize>,
}

impl Block {
    /// The number of elements (one per `howmany` tuple).
    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Whether the block is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The distributions of an array before and after a transform (FFTW's `dtensor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dist {
    /// The dimensions, slowest first.
    pub dims: Vec<Dim>,
}

impl Dist {
    /// The number of blocks of one side: the processes that hold data there.
    pub fn blocks(&self, side: Side) -> usize {
        let k = side.index();
        self.dims
            .iter()
            .map(|d| num_blocks(d.n, d.block[k]))
            .product()
    }

    /// Process `pe`'s block of one side. Blocks go to processes in row-major order of the
    /// block coordinates; a process past the last block owns nothing and reports zero
    /// extents and zero starts.
    pub fn local(&self, side: Side, pe: usize) -> Block {
        let k = side.index();
        let rank = self.dims.len();
        if pe >= self.blocks(side) {
            return Block {
                n: vec![0; rank],
                start: vec![0; rank],
            };
        }
        let mut rest = pe;
        let mut coords = vec![0; rank];
        for (i, d) in self.dims.iter().enumerate().rev() {
            let nb = num_blocks(d.n, d.block[k]);
            coords[i] = rest % nb;
            rest /= nb;
        }
        let n = (0..rank)
            .map(|i| block_len(self.dims[i].n, self.dims[i].block[k], coords[i]))
            .collect();
        let start = (0..rank)
            .map(|i| coords[i] * self.dims[i].block[k])
            .collect();
        Block { n, start }
    }

    /// The one distributed dimension of a side, when it is 0 or 1 and the later ones are
    /// whole (FFTW's `is_block1d`).
    pub fn block1d_dim(&self, side: Side) -> Option<usize> {
        let k = side.index();
        let split = |d: &Dim| num_blocks(d.n, d.block[k]) > 1;
        let first = self.dims.iter().position(split)?;
        (first < 2 && !self.dims[first + 1..].iter().any(split)).then_some(first)
    }
}

/// What a caller asked of one dimension: its extent and the block sizes it gave for the input
/// and the output (`None`: FFTW's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimRequest {
    /// Extent.
    pub n: usize,
    /// Input and output block sizes, or `None` for the default.
    pub block: [Option<usize>; 2],
}

impl DimRequest {
    /// A dimension that stays whole on both sides (FFTW's "simple" dimension).
    pub fn whole(n: usize) -> Self {
        Self {
            n,
            block: [Some(n), Some(n)],
        }
    }
}

/// Fills in the default block sizes as FFTW does: on each side, the dimensions without a
/// given block are split, in order, over the processes the given blocks leave unused
/// (`⌈n/p⌉` with `p` the processes per block so far), so that as few dimensions as possible
/// are distributed; a block covering the whole dimension is normalized to `n`. A 1-D array of
/// prime size stays whole (FFTW has no parallel algorithm for it).
pub fn resolve(dims: &[DimRequest], procs: usize) -> Dist {
    let mut out: Vec<Dim> = dims
        .iter()
        .map(|d| Dim {
            n: d.n,
            block: [d.block[0].unwrap_or(d.n), d.block[1].unwrap_or(d.n)],
        })
        .collect();
    for k in 0..2 {
        let mut blocks: usize = out.iter().map(|d| num_blocks(d.n, d.block[k])).product();
        let mut per_block = procs / blocks.max(1);
        for (d, req) in out.iter_mut().zip(dims) {
            if per_block <= 1 {
                break;
            }
            if req.block[k].is_none() {
                d.block[k] = default_block(d.n, per_block);
                blocks *= num_blocks(d.n, d.block[k]);
                per_block = procs / blocks.max(1);
            }
        }
    }
    if out.len() == 1 && is_prime(out[0].n) {
        out[0].block = [out[0].n; 2];
    }
    for d in &mut out {
        for k in 0..2 {
            if num_blocks(d.n, d.block[k]) <= 1 {
                d.block[k] = d.n;
            }
        }
    }
    Dist { dims: out }
}

fn is_prime(n: usize) -> bool {
    n > 1
        && (2..)
            .take_while(|f| f * f <= n)
            .all(|f| !n.is_multiple_of(f))
}

fn isqrt(n: usize) -> usize {
    let mut r = (n as f64).sqrt() as usize;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// The six-step factorization FFTW chooses for a distributed 1-D transform of `n` on
/// `procs` processes: `n = r·m`, the data seen as an `m × r` array at the input and `r × m`
/// at the output; for a backward transform `r` and `m` trade places so that a scrambled
/// forward output is a scrambled backward input. `None` when `n` does not factor usefully
/// (FFTW then does not use its six-step algorithm).
pub fn radix(n: usize, procs: usize, sign: i32) -> Option<Radix> {
    let mut r = if n.is_multiple_of(procs) && n / procs >= procs {
        n / procs
    } else {
        let mut r = isqrt(n).max(1);
        while !n.is_multiple_of(r) {
            r += 1;
        }
        r
    };
    if r == 1 || r == n {
        return None;
    }
    let mut m = n / r;
    if sign != FORWARD {
        std::mem::swap(&mut r, &mut m);
    }
    Some(Radix {
        r,
        m,
        r_block: default_block(r, procs),
        m_block: default_block(m, procs),
    })
}

/// FFTW's six-step factorization of a 1-D size ([`radix`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Radix {
    /// The radix.
    pub r: usize,
    /// `n / r`.
    pub m: usize,
    /// Block size of the `r` dimension.
    pub r_block: usize,
    /// Block size of the `m` dimension.
    pub m_block: usize,
}

/// What `fftw_mpi_local_size_guru` reports for one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSize {
    /// Elements to allocate, counting `howmany` (never 0).
    pub alloc: usize,
    /// The input block.
    pub input: Block,
    /// The output block.
    pub output: Block,
}

/// The distribution of a 1-D transform of `n` (tuples of `howmany`): everything on process 0
/// for a prime `n` or one process; default blocks when `howmany ≥ P` and no MPI flag is given
/// (FFTW's "big vector" algorithm transposes the tuples instead); otherwise the blocks of the
/// six-step factorization ([`radix`]), which depend on `sign` and the scrambled flags. Also
/// returns the tuples process `pe` needs for the six-step algorithm's intermediate layouts.
pub fn dist_1d(
    n: usize,
    howmany: usize,
    procs: usize,
    pe: usize,
    sign: i32,
    flags: u32,
) -> (Dist, usize) {
    let mut dist = resolve(
        &[DimRequest {
            n,
            block: [None, None],
        }],
        procs,
    );
    let mut alloc = 1;
    if howmany >= procs && flags & MPI_FLAGS == 0 {
        // The big-vector transposes: n whole, the tuples split in default blocks.
        let tuples = block_len(howmany, default_block(howmany, procs), pe);
        alloc = alloc.max((n * tuples).div_ceil(howmany.max(1)));
    } else if let Some(rd) = radix(n, procs, sign) {
        let d = &mut dist.dims[0];
        if flags & SCRAMBLED_IN != 0 {
            d.block[0] = rd.r_block * rd.m;
        } else {
            d.block[0] = rd.r * rd.m_block;
            alloc = alloc.max(rd.r_block * rd.m);
        }
        if flags & SCRAMBLED_OUT != 0 {
            d.block[1] = rd.r * rd.m_block;
        } else {
            alloc = alloc.max(rd.r * rd.m_block);
            d.block[1] = rd.r_block * rd.m;
        }
    }
    (dist, alloc)
}

/// The tuples a process needs beyond its input and output blocks for the intermediate
/// layouts of FFTW's multi-dimensional algorithms (only when input and output are each
/// distributed along one of the first two dimensions): the array transposed to its second
/// dimension, and the whole array spread over the processes by its first or second
/// dimension's rows.
fn intermediate_md(dist: &Dist, howmany: usize, procs: usize, pe: usize) -> usize {
    let (Some(_), Some(_)) = (dist.block1d_dim(Side::In), dist.block1d_dim(Side::Out)) else {
        return 1;
    };
    let mut alloc = 1;
    // A dimension of the first two split on neither side: FFTW may transpose to it.
    let whole = |d: &Dim| num_blocks(d.n, d.block[0]) == 1 && num_blocks(d.n, d.block[1]) == 1;
    if let Some(i) = (0..2).find(|&i| whole(&dist.dims[i])) {
        let mut t = dist.clone();
        t.dims[i].block[0] = default_block(t.dims[i].n, procs);
        t.dims[1 - i].block[0] = t.dims[1 - i].n;
        alloc = alloc.max(t.local(Side::In, pe).len());
    }
    let n: Vec<usize> = dist.dims.iter().map(|d| d.n).collect();
    let rest: usize = n[2..].iter().product();
    for (lead, other) in [(n[0], n[1]), (n[1], n[0])] {
        let after = howmany * other * rest;
        let share = block_len(after, default_block(after, procs), pe);
        alloc = alloc.max((lead * share).div_ceil(howmany));
    }
    alloc
}

/// `fftw_mpi_local_size_guru` for process `pe` of `procs`: the blocks of `dims` (as
/// [`resolve`] completes them) and the elements to allocate, for a transform of `howmany`
/// tuples with the given `sign` and `flags` (both matter for 1-D only).
pub fn local_size(
    dims: &[DimRequest],
    howmany: usize,
    procs: usize,
    pe: usize,
    sign: i32,
    flags: u32,
) -> LocalSize {
    let (dist, mut alloc) = match dims.len() {
        1 => dist_1d(dims[0].n, howmany, procs, pe, sign, flags),
        _ => {
            let dist = resolve(dims, procs);
            let alloc = intermediate_md(&dist, howmany, procs, pe);
            (dist, alloc)
        }
    };
    let input = dist.local(Side::In, pe);
    let output = dist.local(Side::Out, pe);
    alloc = alloc.max(input.len()).max(output.len());
    LocalSize {
        alloc: alloc * howmany,
        input,
        output,
    }
}

/// The requests of a multi-dimensional array distributed along its first dimension (second
/// when `transposed_in`) at the input and along its first (second when `transposed_out`) at
/// the output, with the given block sizes (`None`: default): what FFTW's `plan_many_*` and
/// `local_size_many_transposed` ask.
pub fn md_requests(
    n: &[usize],
    block_in: Option<usize>,
    block_out: Option<usize>,
    transposed_in: bool,
    transposed_out: bool,
) -> Vec<DimRequest> {
    let mut dims: Vec<DimRequest> = n.iter().map(|&n| DimRequest::whole(n)).collect();
    if dims.len() > 1 {
        dims[usize::from(transposed_in)].block[0] = block_in;
        dims[usize::from(transposed_out)].block[1] = block_out;
    }
    dims
}

#[cfg(test)]
mod tests;
