//! An FFTW-MPI planning call as plain data, checked as FFTW checks it, and its translation
//! into a dfft plan: the global shape in dfft's logical frame, the axis kinds, whether the
//! output is transposed and which of the dfft plan's directions computes FFTW's transform.
//! Pure: every process computes the same answer from the same arguments.

use crate::dist::{self, DimRequest, Dist, Side, FORWARD, MPI_FLAGS, SCRAMBLED_IN, SCRAMBLED_OUT};
use crate::dist::{TRANSPOSED_IN, TRANSPOSED_OUT};
use fft_core::{AxisKind, OneD, PlanKind, R2rKind};

/// `FFTW_DESTROY_INPUT`.
pub const DESTROY_INPUT: u32 = 1 << 0;
/// `FFTW_PRESERVE_INPUT`.
pub const PRESERVE_INPUT: u32 = 1 << 4;

/// What a plan computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transform {
    /// A complex DFT with the sign of its exponent (`FFTW_FORWARD` = −1 or `FFTW_BACKWARD`).
    Dft {
        /// −1 or +1.
        sign: i32,
    },
    /// Real to complex (forward).
    R2c,
    /// Complex to real (backward).
    C2r,
    /// Real to real, one `fftw_r2r_kind` per dimension.
    R2r(Vec<i32>),
}

/// Why no plan is made. FFTW answers both with a NULL plan; only what FFTW would plan is
/// worth a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// FFTW refuses it too (bad sizes, unknown kinds, flags a transform does not take, block
    /// sizes that need more processes than there are).
    Invalid(String),
    /// FFTW would plan it; this library cannot (yet).
    Unsupported(String),
}

/// One planning call: the transform, the global dimensions (of the real array for r2c and
/// c2r), `howmany` interleaved tuples, the block sizes given (`None`: default) and the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What is computed.
    pub transform: Transform,
    /// Global dimensions, slowest first.
    pub n: Vec<usize>,
    /// Elements per tuple (the innermost, untransformed index).
    pub howmany: usize,
    /// Block sizes of the distributed dimension of the input and of the output.
    pub block: [Option<usize>; 2],
    /// FFTW's planner flags, MPI flags included.
    pub flags: u32,
}

/// The dfft plan that computes a [`Problem`].
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    /// c2c, r2c or r2r.
    pub kind: PlanKind,
    /// Global shape in the dfft plan's logical frame (its input layout is this shape in C
    /// order, split along axis 0).
    pub shape: Vec<usize>,
    /// Kinds of the axes (`None`: every axis an FFT).
    pub axes: Option<Vec<AxisKind>>,
    /// Whether the dfft plan's output is transposed (axes 0 and 1 swapped, split along 1).
    pub transposed_out: bool,
    /// Whether the dfft frame has FFTW's first two dimensions swapped (a transposed side
    /// taken as the dfft plan's input).
    pub swapped: bool,
    /// A distributed 1-D transform (FFTW's six-step algorithm): dfft's columns and scrambled
    /// ends.
    pub one_d: Option<OneD>,
    /// Block sizes of the dfft plan's input and output splits, per axis of `shape`: FFTW's
    /// blocks on the distributed axes, FFTW's default `⌈n/P⌉` for the one dfft splits in
    /// between (so that FFTW's allocation holds dfft's intermediate blocks too).
    pub blocks: [Vec<Option<usize>>; 2],
    /// Whether FFTW's transform is the dfft plan's forward transform (else its backward one).
    pub forward: bool,
    /// Whether the transform may overwrite its input (FFTW's `FFTW_DESTROY_INPUT`, the
    /// default of c2r).
    pub destroy_input: bool,
    /// FFTW's distributions of the plan's input and output, in FFTW's frame (complex extents
    /// for the complex side of r2c/c2r).
    pub dist: Dist,
}

impl Problem {
    /// Checks the arguments as FFTW's planner does: rank ≥ 1, every extent ≥ 1, `howmany`
    /// and the block sizes ≥ 0 (0 meaning the default).
    pub fn new(
        transform: Transform,
        n: &[isize],
        howmany: isize,
        block: [isize; 2],
        flags: u32,
    ) -> Result<Self, Refusal> {
        if n.is_empty() {
            return Err(Refusal::Invalid("rank 0".into()));
        }
        if let Some(bad) = n.iter().find(|&&x| x < 1) {
            return Err(Refusal::Invalid(format!("extent {bad} in {n:?}")));
        }
        if howmany < 0 || block[0] < 0 || block[1] < 0 {
            return Err(Refusal::Invalid(format!(
                "howmany {howmany} or block sizes {block:?} below 0"
            )));
        }
        if let Transform::R2r(kinds) = &transform {
            if let Some(k) = kinds.iter().find(|k| !(0..=10).contains(*k)) {
                return Err(Refusal::Invalid(format!("r2r kind {k}")));
            }
        }
        let block = block.map(|b| (b > 0).then_some(b as usize));
        Ok(Self {
            transform,
            n: n.iter().map(|&x| x as usize).collect(),
            howmany: howmany as usize,
            block,
            flags,
        })
    }

    fn transposed(&self) -> (bool, bool) {
        (
            self.flags & TRANSPOSED_IN != 0,
            self.flags & TRANSPOSED_OUT != 0,
        )
    }

    /// Extents of the distributed (complex, for r2c and c2r) side: the last dimension of a
    /// real transform is `n/2 + 1` complex numbers.
    fn complex_extents(&self) -> Vec<usize> {
        let mut n = self.n.clone();
        if matches!(self.transform, Transform::R2c | Transform::C2r) {
            let last = n.len() - 1;
            n[last] = n[last] / 2 + 1;
        }
        n
    }

    /// FFTW's distributions of the input and output on `procs` processes, in FFTW's frame:
    /// `dims[0]` is the first dimension of the array as FFTW describes it (untransposed).
    pub fn dist(&self, procs: usize) -> Dist {
        let sign = match self.transform {
            Transform::Dft { sign } => sign,
            _ => FORWARD,
        };
        if self.n.len() == 1 {
            return dist::dist_1d(self.n[0], self.howmany, procs, 0, sign, self.flags).0;
        }
        let (t_in, t_out) = self.transposed();
        dist::resolve(
            &dist::md_requests(
                &self.complex_extents(),
                self.block[0],
                self.block[1],
                t_in,
                t_out,
            ),
            procs,
        )
    }

    /// The elements process `pe` of `procs` must allocate for this plan, as FFTW's
    /// `local_size` functions report for it (scalars of the complex side for r2c and c2r
    /// count as complex numbers).
    pub fn alloc(&self, procs: usize, pe: usize) -> usize {
        let sign = match self.transform {
            Transform::Dft { sign } => sign,
            _ => FORWARD,
        };
        if self.n.len() == 1 {
            let req = [DimRequest {
                n: self.n[0],
                block: [None, None],
            }];
            return dist::local_size(&req, self.howmany, procs, pe, sign, self.flags).alloc;
        }
        let (t_in, t_out) = self.transposed();
        let req = dist::md_requests(
            &self.complex_extents(),
            self.block[0],
            self.block[1],
            t_in,
            t_out,
        );
        dist::local_size(&req, self.howmany, procs, pe, sign, 0).alloc
    }

    /// The dfft plan that computes this transform on `procs` processes, or why there is none
    /// (`Ok(None)`: `howmany = 0`, nothing to compute).
    pub fn lower(&self, procs: usize) -> Result<Option<Lowered>, Refusal> {
        let dist = self.dist(procs);
        if dist.blocks(Side::In) > procs || dist.blocks(Side::Out) > procs {
            return Err(Refusal::Invalid(format!(
                "block sizes {:?} need more than {procs} processes",
                self.block
            )));
        }
        let mut lowered = if self.n.len() == 1 {
            self.lower_1d(&dist, procs)?
        } else {
            self.lower_md()?
        };
        if self.howmany == 0 {
            return Ok(None);
        }
        lowered.destroy_input = match self.transform {
            Transform::C2r => self.flags & PRESERVE_INPUT == 0,
            _ => self.flags & DESTROY_INPUT != 0,
        };
        if self.howmany > 1 {
            // FFTW's interleaved tuples: one more, innermost axis, not transformed (a real
            // transform's padded rows come before it: 2(n/2+1) x howmany, in dfft's in-place
            // r2c layout as in FFTW's).
            lowered.shape.push(self.howmany);
            let mut axes = lowered
                .axes
                .take()
                .unwrap_or_else(|| vec![AxisKind::Fft; lowered.shape.len() - 1]);
            axes.push(AxisKind::Identity);
            lowered.axes = Some(axes);
        }
        lowered.blocks = lowered.dfft_blocks(&dist, self.flags, procs);
        lowered.dist = dist;
        Ok(Some(lowered))
    }

    /// Rank ≥ 2: FFTW's transposed input is the array with its first two dimensions swapped
    /// (FFTW's manual says as much), so the dfft plan's logical shape is the input's as it
    /// lies in memory, and its output is transposed when exactly one side is. A backward
    /// complex DFT runs the backward transform of the plan whose input is FFTW's output.
    fn lower_md(&self) -> Result<Lowered, Refusal> {
        let (t_in, t_out) = self.transposed();
        if self.flags & (SCRAMBLED_IN | SCRAMBLED_OUT) != 0 {
            return Err(Refusal::Invalid(
                "FFTW_MPI_SCRAMBLED_IN/OUT are for 1-d transforms".into(),
            ));
        }
        let swap = |mut v: Vec<usize>, yes: bool| {
            if yes {
                v.swap(0, 1);
            }
            v
        };
        let base = |kind, swapped, axes, forward| Lowered {
            kind,
            shape: swap(self.n.clone(), swapped),
            axes,
            transposed_out: t_in != t_out,
            swapped,
            forward,
            destroy_input: false,
            one_d: None,
            blocks: [vec![], vec![]],
            dist: Dist { dims: vec![] },
        };
        Ok(match &self.transform {
            Transform::Dft { sign } => {
                let forward = dft_direction(*sign)?;
                let swapped = if forward { t_in } else { t_out };
                base(PlanKind::C2c, swapped, None, forward)
            }
            Transform::R2r(kinds) => {
                let mut axes = r2r_axes(kinds)?;
                if t_in {
                    axes.swap(0, 1);
                }
                base(PlanKind::R2r, t_in, Some(axes), true)
            }
            Transform::R2c if t_in => {
                return Err(Refusal::Invalid(
                    "FFTW_MPI_TRANSPOSED_IN on an r2c plan".into(),
                ))
            }
            Transform::C2r if t_out => {
                return Err(Refusal::Invalid(
                    "FFTW_MPI_TRANSPOSED_OUT on a c2r plan".into(),
                ))
            }
            Transform::R2c => Lowered {
                transposed_out: t_out,
                ..base(PlanKind::R2c, false, None, true)
            },
            Transform::C2r => Lowered {
                transposed_out: t_in,
                ..base(PlanKind::R2c, false, None, false)
            },
        })
    }

    /// Rank 1. Where FFTW keeps the whole array on process 0 (one process, a prime size), a
    /// 1 × n plan; where it transposes the tuples (`howmany ≥ P` without MPI flags: blocks of
    /// n, default or not), the n × howmany slab plan that transforms axis 0 only; otherwise
    /// dfft's distributed 1-D FFT with FFTW's factorization `n = rows · cols` and scrambled
    /// orders. FFTW's backward plan takes its forward's scrambled output, as dfft's backward
    /// transform does, so a `+1` plan is the backward transform of the same dfft plan with
    /// FFTW's scrambled input and output trading places.
    fn lower_1d(&self, dist: &Dist, procs: usize) -> Result<Lowered, Refusal> {
        let n = self.n[0];
        let whole = dist.dims[0].block == [n, n];
        let bigvec = self.howmany >= procs && self.flags & MPI_FLAGS == 0;
        let (kind, axis, forward) = match &self.transform {
            Transform::Dft { sign } => (PlanKind::C2c, AxisKind::Fft, dft_direction(*sign)?),
            Transform::R2r(kinds) => (PlanKind::R2r, r2r_axes(kinds)?[0], true),
            Transform::R2c | Transform::C2r => {
                return Err(Refusal::Invalid(
                    "FFTW-MPI has no 1-d real-data transforms".into(),
                ))
            }
        };
        let mut one_d = None;
        let (shape, axes) = if whole {
            (vec![1, n], vec![AxisKind::Identity, axis])
        } else if bigvec {
            // howmany ≥ P ≥ 2 tuples: the identity axis `lower` appends makes it 2-D.
            (vec![n], vec![axis])
        } else if kind == PlanKind::R2r {
            return Err(Refusal::Invalid(format!(
                "FFTW-MPI has no distributed 1-d r2r transform of {n} with howmany {} < {procs} processes",
                self.howmany
            )));
        } else {
            let Some(radix) = dist::radix(n, procs, FORWARD) else {
                return Err(Refusal::Invalid(format!(
                    "no six-step factorization of {n} on {procs} processes"
                )));
            };
            let (s_in, s_out) = (
                self.flags & SCRAMBLED_IN != 0,
                self.flags & SCRAMBLED_OUT != 0,
            );
            one_d = Some(OneD {
                columns: Some(radix.r),
                scrambled_in: if forward { s_in } else { s_out },
                scrambled_out: if forward { s_out } else { s_in },
            });
            (vec![n], vec![axis])
        };
        Ok(Lowered {
            kind,
            shape,
            axes: Some(axes),
            transposed_out: false,
            swapped: false,
            forward,
            destroy_input: false,
            one_d,
            blocks: [vec![], vec![]],
            dist: Dist { dims: vec![] },
        })
    }
}

impl Lowered {
    /// The block sizes of the dfft plan's input and output splits (see [`Lowered::blocks`]).
    /// FFTW's dimension `k` is the dfft plan's axis `k`, or `1 - k` for `k < 2` when the
    /// frame is swapped; the dfft plan's input is FFTW's input for a forward plan, else its
    /// output. A distributed 1-D transform's blocks are in points of its axis.
    fn dfft_blocks(&self, dist: &Dist, flags: u32, procs: usize) -> [Vec<Option<usize>>; 2] {
        let d = self.shape.len();
        if self.shape[0] == 1 && dist.dims.len() == 1 {
            // FFTW's whole 1-d array on process 0: dfft's balanced split of one row.
            return [vec![], vec![]];
        }
        let sides = if self.forward {
            [Side::In, Side::Out]
        } else {
            [Side::Out, Side::In]
        };
        let transposed = |side| match side {
            Side::In => flags & TRANSPOSED_IN != 0,
            Side::Out => flags & TRANSPOSED_OUT != 0,
        };
        let axis_of = |k: usize| if self.swapped && k < 2 { 1 - k } else { k };
        let mut blocks = [vec![None; d], vec![None; d]];
        for (role, side) in sides.into_iter().enumerate() {
            let k = usize::from(transposed(side) && dist.dims.len() > 1);
            blocks[role][axis_of(k)] = Some(dist.dims[k].block[side.index()]);
        }
        if blocks[1][0].is_some() && self.one_d.is_none() && d > 1 {
            // The output returns to axis 0: dfft splits axis 1 in between, in FFTW's default
            // blocks of its extent there (complex for a 2-d r2c's last axis; the tuples of
            // the big-vector plan n × howmany).
            let n = match dist.dims.len() {
                1 => self.shape[1],
                _ => dist.dims[axis_of(1)].n,
            };
            blocks[1][1] = Some(dist::default_block(n, procs));
        }
        blocks
    }
}

/// Whether a DFT of this sign is dfft's forward transform (−1) or its backward one (+1).
fn dft_direction(sign: i32) -> Result<bool, Refusal> {
    match sign {
        FORWARD => Ok(true),
        s if s == -FORWARD => Ok(false),
        s => Err(Refusal::Invalid(format!("sign {s} (not -1 or +1)"))),
    }
}

/// The dfft axes of `fftw_r2r_kind`s.
fn r2r_axes(kinds: &[i32]) -> Result<Vec<AxisKind>, Refusal> {
    kinds.iter().map(|&k| r2r_axis(k)).collect()
}

/// The dfft axis of an `fftw_r2r_kind` (R2HC = 0, HC2R = 1, DHT = 2, REDFT00 = 3 …
/// RODFT11 = 10).
fn r2r_axis(kind: i32) -> Result<AxisKind, Refusal> {
    let k = match kind {
        3 => R2rKind::Dct1,
        4 => R2rKind::Dct3,
        5 => R2rKind::Dct2,
        6 => R2rKind::Dct4,
        7 => R2rKind::Dst1,
        8 => R2rKind::Dst3,
        9 => R2rKind::Dst2,
        10 => R2rKind::Dst4,
        0 => R2rKind::R2hc,
        1 => R2rKind::Hc2r,
        2 => R2rKind::Dht,
        _ => return Err(Refusal::Invalid(format!("r2r kind {kind}"))),
    };
    Ok(AxisKind::R2r(k))
}
