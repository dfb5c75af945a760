//! What a user chooses when making a plan.

use crate::error::{FftError, Result};
use redist::{GridShape, Method};
use std::fmt;
use std::str::FromStr;

/// How to shape the processor grid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GridChoice {
    /// Let dfft choose with the complexity model ([`crate::model::resolve_grid`]) and the
    /// machine profile of [`FftOptions::machine`].
    #[default]
    Auto,
    /// A grid of this rank r with balanced dimensions, as `MPI_Dims_create` would choose.
    Rank(usize),
    /// Explicit grid dimensions; their product must be the number of processes.
    Dims(Vec<usize>),
}

impl FromStr for GridChoice {
    type Err = FftError;

    /// ```
    /// use fft_core::GridChoice;
    /// assert_eq!("auto".parse::<GridChoice>().unwrap(), GridChoice::Auto);
    /// assert_eq!("2".parse::<GridChoice>().unwrap(), GridChoice::Rank(2));
    /// assert_eq!("4x2".parse::<GridChoice>().unwrap(), GridChoice::Dims(vec![4, 2]));
    /// assert!("4x".parse::<GridChoice>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(GridChoice::Auto);
        }
        let bad = || FftError::BadGridChoice {
            spec: s.to_string(),
        };
        if t.contains(['x', 'X']) {
            return GridShape::parse(t)
                .map(|g| GridChoice::Dims(g.dims().to_vec()))
                .map_err(|_| bad());
        }
        match t.parse::<usize>() {
            Ok(r) if r >= 1 => Ok(GridChoice::Rank(r)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for GridChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridChoice::Auto => f.write_str("auto"),
            GridChoice::Rank(r) => write!(f, "{r}"),
            GridChoice::Dims(d) => {
                let parts: Vec<String> = d.iter().map(|x| x.to_string()).collect();
                f.write_str(&parts.join("x"))
            }
        }
    }
}

/// Scaling of the transforms. The forward transform computes
/// `X[k] = Σ_n x[n] exp(-2πi k·n/N)`, the backward one the same sum with `+`; `N` is the
/// total number of elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Normalization {
    /// Neither direction is scaled (FFTW's convention): backward(forward(x)) = N·x.
    #[default]
    None,
    /// Backward is scaled by 1/N (numpy's default): backward(forward(x)) = x.
    Backward,
    /// Both directions are scaled by 1/√N (unitary).
    Ortho,
    /// Forward is scaled by 1/N, backward not (numpy's `norm="forward"`; the convention of
    /// mpi4py-fft and FluidFFT, whose spectra are Fourier coefficients): backward(forward(x)) = x.
    Forward,
}

impl FromStr for Normalization {
    type Err = FftError;

    /// ```
    /// use fft_core::Normalization;
    /// assert_eq!("ortho".parse::<Normalization>().unwrap(), Normalization::Ortho);
    /// assert_eq!("forward".parse::<Normalization>().unwrap(), Normalization::Forward);
    /// assert_eq!(Normalization::Forward.factors(4), (0.25, 1.0));
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Normalization::None),
            "backward" => Ok(Normalization::Backward),
            "ortho" => Ok(Normalization::Ortho),
            "forward" => Ok(Normalization::Forward),
            _ => Err(FftError::UnknownNormalization {
                name: s.to_string(),
            }),
        }
    }
}

impl Normalization {
    /// The factors (forward, backward) for `n` elements.
    pub fn factors(self, n: usize) -> (f64, f64) {
        self.factors_f64(n as f64)
    }

    /// The factors (forward, backward) for a logical size `n` (the product of the logical
    /// sizes of the axes, which may exceed `usize` for real-to-real axes of huge arrays).
    pub fn factors_f64(self, n: f64) -> (f64, f64) {
        match self {
            Normalization::None => (1.0, 1.0),
            Normalization::Backward => (1.0, 1.0 / n),
            Normalization::Ortho => {
                let s = 1.0 / n.sqrt();
                (s, s)
            }
            Normalization::Forward => (1.0 / n, 1.0),
        }
    }

    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Normalization::None => "none",
            Normalization::Backward => "backward",
            Normalization::Ortho => "ortho",
            Normalization::Forward => "forward",
        }
    }
}

/// Real-to-real transform kinds with FFTW's (and scipy's `norm=None`) conventions, 0-based,
/// for an axis of `N` points:
///
/// | kind | FFTW | `Y_k` | logical size |
/// |---|---|---|---|
/// | `Dct1` | REDFT00 | `x_0 + (-1)^k x_{N-1} + 2 Σ_{n=1}^{N-2} x_n cos(π n k/(N-1))` | 2(N−1) |
/// | `Dct2` | REDFT10 | `2 Σ x_n cos(π (n+1/2) k / N)` | 2N |
/// | `Dct3` | REDFT01 | `x_0 + 2 Σ_{n≥1} x_n cos(π n (k+1/2) / N)` | 2N |
/// | `Dct4` | REDFT11 | `2 Σ x_n cos(π (n+1/2)(k+1/2) / N)` | 2N |
/// | `Dst1` | RODFT00 | `2 Σ x_n sin(π (n+1)(k+1)/(N+1))` | 2(N+1) |
/// | `Dst2` | RODFT10 | `2 Σ x_n sin(π (n+1/2)(k+1)/N)` | 2N |
/// | `Dst3` | RODFT01 | `(-1)^k x_{N-1} + 2 Σ_{n=0}^{N-2} x_n sin(π (n+1)(k+1/2)/N)` | 2N |
/// | `Dst4` | RODFT11 | `2 Σ x_n sin(π (n+1/2)(k+1/2)/N)` | 2N |
/// | `R2hc` | R2HC | `r_0, r_1, …, r_{⌊N/2⌋}, i_{⌈N/2⌉−1}, …, i_1` with `r_k + i·i_k = Σ x_n e^{−2πi nk/N}` | N |
/// | `Hc2r` | HC2R | `Σ_k X_k e^{+2πi nk/N}` of the Hermitian `X` stored as R2HC writes it | N |
/// | `Dht` | DHT | `Σ x_n (cos(2π nk/N) + sin(2π nk/N))` | N |
///
/// The backward transform of a plan applies the inverse kind ([`R2rKind::inverse`]: I↔I,
/// II↔III, IV↔IV, R2HC↔HC2R, DHT↔DHT), so backward(forward(x)) = (logical size)·x per axis with
/// [`Normalization::None`], exactly like FFT axes; the normalization factors use the logical
/// sizes.
///
/// ```
/// use fft_core::R2rKind;
/// assert_eq!("dct2".parse::<R2rKind>().unwrap(), R2rKind::Dct2);
/// assert_eq!(R2rKind::Dct2.inverse(), R2rKind::Dct3);
/// assert_eq!(R2rKind::Dct1.logical_size(5), 8);
/// assert_eq!(R2rKind::Dst1.logical_size(5), 12);
/// assert_eq!("r2hc".parse::<R2rKind>().unwrap().inverse(), R2rKind::Hc2r);
/// assert_eq!(R2rKind::Dht.logical_size(5), 5);
/// assert!("dct5".parse::<R2rKind>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum R2rKind {
    /// DCT-I (REDFT00); needs N ≥ 2.
    Dct1,
    /// DCT-II (REDFT10), "the" DCT.
    Dct2,
    /// DCT-III (REDFT01), the inverse of DCT-II up to 2N.
    Dct3,
    /// DCT-IV (REDFT11).
    Dct4,
    /// DST-I (RODFT00).
    Dst1,
    /// DST-II (RODFT10).
    Dst2,
    /// DST-III (RODFT01), the inverse of DST-II up to 2N.
    Dst3,
    /// DST-IV (RODFT11).
    Dst4,
    /// The real-input DFT in FFTW's halfcomplex order (R2HC): the real parts of modes
    /// `0 ..= N/2`, then the imaginary parts of modes `(N−1)/2 … 1`.
    R2hc,
    /// The inverse of [`R2rKind::R2hc`] up to N (HC2R): the real signal whose spectrum is
    /// stored in halfcomplex order, with `e^{+2πi nk/N}`, unnormalized.
    Hc2r,
    /// The discrete Hartley transform (DHT), its own inverse up to N.
    Dht,
}

impl R2rKind {
    /// Every kind, in order.
    pub const ALL: [R2rKind; 11] = [
        R2rKind::Dct1,
        R2rKind::Dct2,
        R2rKind::Dct3,
        R2rKind::Dct4,
        R2rKind::Dst1,
        R2rKind::Dst2,
        R2rKind::Dst3,
        R2rKind::Dst4,
        R2rKind::R2hc,
        R2rKind::Hc2r,
        R2rKind::Dht,
    ];

    /// The kind with FFTW's `fftw_r2r_kind` number (`FFTW_R2HC` = 0, `FFTW_HC2R` = 1,
    /// `FFTW_DHT` = 2, `FFTW_REDFT00` = 3 … `FFTW_RODFT11` = 10), or `None`.
    ///
    /// ```
    /// use fft_core::R2rKind;
    /// assert_eq!(R2rKind::from_fftw(5), Some(R2rKind::Dct2)); // FFTW_REDFT10
    /// assert_eq!(R2rKind::from_fftw(0), Some(R2rKind::R2hc));
    /// assert!((0..11).all(|k| R2rKind::from_fftw(k).unwrap().fftw() == k));
    /// assert_eq!(R2rKind::from_fftw(11), None);
    /// ```
    pub fn from_fftw(number: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.fftw() == number)
    }

    /// FFTW's `fftw_r2r_kind` number of this kind (see [`R2rKind::from_fftw`]).
    pub fn fftw(self) -> i32 {
        match self {
            R2rKind::R2hc => 0,
            R2rKind::Hc2r => 1,
            R2rKind::Dht => 2,
            R2rKind::Dct1 => 3,
            R2rKind::Dct3 => 4,
            R2rKind::Dct2 => 5,
            R2rKind::Dct4 => 6,
            R2rKind::Dst1 => 7,
            R2rKind::Dst3 => 8,
            R2rKind::Dst2 => 9,
            R2rKind::Dst4 => 10,
        }
    }

    /// The kind that undoes this one up to the logical size (I↔I, II↔III, IV↔IV).
    pub fn inverse(self) -> Self {
        match self {
            R2rKind::Dct2 => R2rKind::Dct3,
            R2rKind::Dct3 => R2rKind::Dct2,
            R2rKind::Dst2 => R2rKind::Dst3,
            R2rKind::Dst3 => R2rKind::Dst2,
            R2rKind::R2hc => R2rKind::Hc2r,
            R2rKind::Hc2r => R2rKind::R2hc,
            other => other,
        }
    }

    /// The logical size of an axis of `n` points (the length of the equivalent real-even or
    /// real-odd DFT): 2(n−1) for DCT-I, 2(n+1) for DST-I, n for R2HC, HC2R and DHT, 2n
    /// otherwise.
    pub fn logical_size(self, n: usize) -> usize {
        match self {
            R2rKind::Dct1 => 2 * n.saturating_sub(1),
            R2rKind::Dst1 => 2 * (n + 1),
            R2rKind::R2hc | R2rKind::Hc2r | R2rKind::Dht => n,
            _ => 2 * n,
        }
    }

    /// The name as the command line spells it (`dct1` .. `dst4`, `r2hc`, `hc2r`, `dht`).
    pub fn name(self) -> &'static str {
        match self {
            R2rKind::Dct1 => "dct1",
            R2rKind::Dct2 => "dct2",
            R2rKind::Dct3 => "dct3",
            R2rKind::Dct4 => "dct4",
            R2rKind::Dst1 => "dst1",
            R2rKind::Dst2 => "dst2",
            R2rKind::Dst3 => "dst3",
            R2rKind::Dst4 => "dst4",
            R2rKind::R2hc => "r2hc",
            R2rKind::Hc2r => "hc2r",
            R2rKind::Dht => "dht",
        }
    }
}

impl FromStr for R2rKind {
    type Err = FftError;

    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        R2rKind::ALL
            .into_iter()
            .find(|k| k.name() == t)
            .ok_or_else(|| FftError::UnknownR2rKind {
                name: s.to_string(),
            })
    }
}

impl fmt::Display for R2rKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a plan does along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AxisKind {
    /// A DFT (complex, or the real-to-complex FFT on the last axis of a
    /// [`crate::RealFftPlan`]).
    #[default]
    Fft,
    /// A real-to-real transform (on complex data: on the real and imaginary parts separately).
    R2r(R2rKind),
    /// No transform: the axis is left as it is (numpy's `fftn(x, axes=…)` without this
    /// axis, PencilFFTs' `NoTransform`). A partial transform needs no exchange to make such an
    /// axis local, and the normalization counts it as size 1. At least one axis of a plan
    /// must be transformed.
    Identity,
}

impl AxisKind {
    /// The logical size of an axis of `n` points (`n` for FFT axes, 1 for identity axes).
    pub fn logical_size(self, n: usize) -> usize {
        match self {
            AxisKind::Fft => n,
            AxisKind::R2r(k) => k.logical_size(n),
            AxisKind::Identity => 1,
        }
    }

    /// Whether the axis is transformed (every kind but [`AxisKind::Identity`]).
    pub fn is_transformed(self) -> bool {
        self != AxisKind::Identity
    }

    /// The kinds of a partial transform of `d` axes: `kind` along each axis listed in
    /// `axes`, [`AxisKind::Identity`] along the others (numpy's `fftn(x, axes=axes)`).
    /// Errors name an axis out of range or listed twice.
    ///
    /// ```
    /// use fft_core::AxisKind;
    /// let kinds = AxisKind::partial(3, &[1, 2], AxisKind::Fft).unwrap();
    /// assert_eq!(kinds, vec![AxisKind::Identity, AxisKind::Fft, AxisKind::Fft]);
    /// assert!(AxisKind::partial(3, &[1, 1], AxisKind::Fft).is_err());
    /// assert!(AxisKind::partial(3, &[3], AxisKind::Fft).is_err());
    /// ```
    pub fn partial(d: usize, axes: &[usize], kind: AxisKind) -> Result<Vec<AxisKind>> {
        let mut kinds = vec![AxisKind::Identity; d];
        for &a in axes {
            let bad = |reason: &str| FftError::BadAxes {
                axes: axes.to_vec(),
                d,
                reason: reason.to_string(),
            };
            if a >= d {
                return Err(bad("an axis is out of range"));
            }
            if kinds[a] != AxisKind::Identity {
                return Err(bad("an axis is listed twice"));
            }
            kinds[a] = kind;
        }
        Ok(kinds)
    }
}

/// A distributed 1-D transform (FFTW-MPI's rank-1 plans; [`crate::one_d`]): how its axis of
/// `n = rows · cols` points is cut, and whether its input and output are in FFTW-MPI's
/// scrambled orders. A complex plan of a 1-D shape is one, with these defaults; a plan of a
/// shape `[n, h…]` whose axes after the first are [`AxisKind::Identity`] (FFTW's interleaved
/// `howmany`) is one when [`FftOptions::one_d`] is given.
///
/// ```
/// use fft_core::{FftOptions, OneD};
/// let opts = FftOptions::default().one_d(OneD { columns: Some(16), scrambled_out: true, ..OneD::default() });
/// assert_eq!(opts.one_d.unwrap().columns, Some(16));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OneD {
    /// `cols`, a divisor of `n`: the axis is a `rows × cols` matrix (`x[j]` at row
    /// `j / cols`), whose rows the ordered input splits and whose columns the ordered output
    /// splits. `None`: FFTW-MPI's choice for the plan's ranks ([`crate::one_d::fftw_columns`]),
    /// so that the layouts are FFTW-MPI's.
    pub columns: Option<usize>,
    /// The forward input (backward output) in the scrambled order, FFTW-MPI's
    /// `SCRAMBLED_IN`: the matrix transposed, split along its columns (position `p` holds
    /// `x[(p % rows)·cols + p / rows]`); saves an exchange each way.
    pub scrambled_in: bool,
    /// The forward output (backward input) in the scrambled order, FFTW-MPI's
    /// `SCRAMBLED_OUT`: position `p` holds `X[p / cols + rows·(p % cols)]`, split along the
    /// rows; saves an exchange each way. A backward plan takes the forward's scrambled output.
    pub scrambled_out: bool,
}

/// Options of an [`crate::FftPlan`], [`crate::RealFftPlan`] or [`crate::R2rPlan`].
///
/// ```
/// use fft_core::{AxisKind, FftOptions, GridChoice, Normalization, R2rKind};
/// let opts = FftOptions::default()
///     .grid(GridChoice::Rank(2))
///     .normalization(Normalization::Backward)
///     .transposed_out(true)
///     .batch(3)
///     .axes(vec![AxisKind::R2r(R2rKind::Dct2), AxisKind::Fft, AxisKind::Fft])
///     .padding(vec![1.5; 3]);
/// assert!(opts.transposed_out);
/// assert_eq!(opts.batch, 3);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FftOptions {
    /// Processor grid.
    pub grid: GridChoice,
    /// How exchanges move data.
    pub method: Method,
    /// Scaling.
    pub normalization: Normalization,
    /// Leave the forward output in the last pencil layout (skip the exchanges back); backward
    /// then takes that layout as input. Like FFTW-MPI's `TRANSPOSED_OUT`/`TRANSPOSED_IN`.
    pub transposed_out: bool,
    /// Take the forward input in the last pencil layout (the layout `transposed_out` leaves
    /// the forward output in: for a slab, axes 0 and 1 swapped in memory, split along axis 1),
    /// FFTW-MPI's `TRANSPOSED_IN`; backward then ends in it. The forward transform visits the
    /// pencils backwards, so it saves the same exchanges. Complex and real-to-real plans (a
    /// real-to-complex plan's real FFT comes first: its backward takes the transposed
    /// layout when `transposed_out`).
    pub transposed_in: bool,
    /// Block sizes of the input layout's splits (FFTW-MPI's `block0`, or `block1` with
    /// `transposed_in`): per logical axis, where that axis is split, grid coordinate `c` owns
    /// `c·b .. (c+1)·b` (cut at the extent, so trailing ranks may own nothing; FFTW-MPI's
    /// default is `b = ⌈n/P⌉`); `None` per axis or for all: dfft's balanced split. A block
    /// must cover its axis (`b·P ≥ n`). Pencil grids (rank ≥ 2) need the same blocks in and
    /// out.
    pub input_blocks: Option<Vec<Option<usize>>>,
    /// Block sizes of the output layout's splits, as [`FftOptions::input_blocks`]; the
    /// layouts in between take these where given, else the input's.
    pub output_blocks: Option<Vec<Option<usize>>>,
    /// Threads per rank of this plan (FFTW's `fftw_plan_with_nthreads`): its kernels are cut
    /// into that many tasks, each with its own scratch, run in the rayon pool current at the
    /// call (the global pool unless the caller installs another) while every MPI call stays
    /// on the calling thread. `None` (the default): the current pool's size when the plan is
    /// made. At least 1.
    pub threads: Option<usize>,
    /// A distributed 1-D transform along axis 0 ([`OneD`]); implied for a complex plan of a
    /// 1-D shape. `None` otherwise.
    pub one_d: Option<OneD>,
    /// Number of fields transformed together (≥ 1): the input holds `batch` blocks one after
    /// another (field-major), the output likewise, and every exchange moves all of them in one
    /// message per peer.
    pub batch: usize,
    /// How a batch is split over the ranks ([`crate::groups`]): `Fixed(1)` (the default) has
    /// every rank transform every field; `Fixed(g)` has `g` groups of `P/g` ranks transform
    /// `balanced_range(batch, g, group)` fields each, on their own sub-communicators, with
    /// the fields redistributed into the groups and back, so that the caller's layouts stay
    /// those of the plain plan; [`crate::groups::Groups::Auto`] lets the complexity model
    /// pick ([`crate::model::groups`]). `g` must divide P and be at most `batch`; a split
    /// batch takes neither `in_place`, `one_d`, `transposed_out`, `transposed_in` nor block
    /// sizes (refused for `Fixed(g > 1)`; `Auto` then keeps one group).
    pub groups: crate::groups::Groups,
    /// What happens along each axis; `None`: every axis is an FFT.
    pub axes: Option<Vec<AxisKind>>,
    /// Dealiasing: per axis, the physical grid has `floor(N·factor)` points while the spectrum
    /// keeps the `N` modes of the shape given to the plan (3/2 rule: `vec![1.5; d]`); `None`:
    /// no padding. Factors must be ≥ 1 and are allowed on FFT axes only (1 elsewhere).
    pub padding: Option<Vec<f64>>,
    /// Tuning: bytes of the sweep's planes that one piece of a fused slab exchange carries
    /// (default [`FftOptions::DEFAULT_PIECE_BYTES`]). The exchanges around a strided sweep
    /// move a piece at a time through message buffers of about that size, which then stay in
    /// cache; at least one plane goes per piece. Results do not depend on it.
    pub piece_bytes: usize,
    /// Whether fused exchanges whose group is on one node move their pieces through an MPI-3
    /// shared-memory window (each rank writes its messages into its own region and reads its
    /// peers' straight from theirs: no copy through MPI) instead of MPI messages. Default
    /// `true`; results do not depend on it.
    pub shared_memory: bool,
    /// Let the transforms use the caller's input as scratch space, like FFTW's
    /// `FFTW_DESTROY_INPUT` (the default of FFTW's out-of-place complex-to-real plans): a plan
    /// made with it takes its input as `&mut` ([`crate::FftPlan::forward_destroying`] and
    /// the like) and leaves it with undefined contents, and in exchange holds no work block
    /// where the input can host the data instead (a c2r backward, a pencil's
    /// transposed-output forward). Its `forward`/`backward`, which promise to leave the input
    /// alone, return [`crate::FftError::InputNotWritable`]. Default `false`.
    pub destroy_input: bool,
    /// Plan for in-place transforms too ([`crate::FftPlan::forward_in_place`] and
    /// [`crate::FftPlan::backward_in_place`] on one buffer of
    /// [`crate::FftPlan::in_place_len`] elements, like an FFTW plan made with `in == out`):
    /// the plan lowers a second schedule that starts and ends in that buffer and sizes its
    /// work buffers for both (the out-of-place calls keep working). Every plan kind:
    /// [`crate::RealFftPlan`]'s buffer holds the real rows in FFTW's padded layout
    /// ([`crate::RealFftPlan::forward_in_place`]). Without it the in-place
    /// calls return [`crate::FftError::InPlaceNotPlanned`]. Default `false`.
    pub in_place: bool,
    /// Bit-for-bit reproducible results whatever the decomposition: with the same shape,
    /// kind, precision and other options, `forward` and `backward` give the same bits on any
    /// number of ranks, any grid rank and shape, any threads per rank, either allocation of
    /// the blocks, either exchange method, in or out of place. Every 1-D line is transformed
    /// whole on one rank anyway; this option makes the plan transform the axes in one fixed
    /// order (forward: the last axis first, down to axis 0; backward: the reverse) and each
    /// line of a length with the same code (no AVX-512 column FFTs for strided lines, which
    /// round differently from the contiguous lines' FFTs). The cost is measured in
    /// docs/spectral.md. Default `false`.
    pub deterministic: bool,
    /// The machine the complexity model describes when [`GridChoice::Auto`] picks the grid
    /// (default: [`crate::model::MachineProfile::default`], a generic cluster node). The
    /// library never reads a profile itself; `dfft` reads `--machine`, `$DFFT_MACHINE` or its
    /// per-machine cache and passes the result here. Every rank must pass the same profile.
    pub machine: crate::model::MachineProfile,
    /// The memory one rank may use, in bytes: a plan whose estimate
    /// ([`crate::memory::estimate_memory`]: work and message buffers, FFT scratch, the
    /// caller's blocks) exceeds the smallest limit over the ranks is refused with
    /// [`crate::FftError::InsufficientMemory`] before anything is allocated. `None` (the
    /// default): no check. The library never reads the environment; the `dfft` program fills
    /// this from the kernel's meminfo, cgroups, `RLIMIT_AS` and `DFFT_MEMORY_LIMIT`.
    pub memory_limit: Option<u64>,
}

impl Default for FftOptions {
    fn default() -> Self {
        Self {
            grid: GridChoice::default(),
            method: Method::default(),
            normalization: Normalization::default(),
            transposed_out: false,
            transposed_in: false,
            input_blocks: None,
            output_blocks: None,
            threads: None,
            one_d: None,
            batch: 1,
            groups: crate::groups::Groups::Fixed(1),
            axes: None,
            padding: None,
            piece_bytes: Self::DEFAULT_PIECE_BYTES,
            shared_memory: true,
            destroy_input: false,
            in_place: false,
            deterministic: false,
            machine: crate::model::MachineProfile::default(),
            memory_limit: None,
        }
    }
}

impl FftOptions {
    /// The default of [`FftOptions::piece_bytes`]: 1 MiB, so that a piece's messages stay in
    /// a core's L2 cache between packing, moving and transforming (larger pieces measured
    /// slower; the measurements are in docs/performance.md's history).
    pub const DEFAULT_PIECE_BYTES: usize = 1 << 20;

    /// Sets the bytes per piece of a fused exchange (tuning; see [`FftOptions::piece_bytes`]).
    pub fn piece_bytes(mut self, bytes: usize) -> Self {
        self.piece_bytes = bytes;
        self
    }

    /// Sets whether fused exchanges may use shared memory (see [`FftOptions::shared_memory`]).
    pub fn shared_memory(mut self, shared: bool) -> Self {
        self.shared_memory = shared;
        self
    }

    /// Sets whether the transforms may use their input as scratch (see
    /// [`FftOptions::destroy_input`]).
    ///
    /// ```
    /// let opts = fft_core::FftOptions::default().destroy_input(true);
    /// assert!(opts.destroy_input);
    /// ```
    pub fn destroy_input(mut self, destroy: bool) -> Self {
        self.destroy_input = destroy;
        self
    }

    /// Sets whether the plan supports in-place transforms (see [`FftOptions::in_place`]).
    ///
    /// ```
    /// let opts = fft_core::FftOptions::default().in_place(true);
    /// assert!(opts.in_place);
    /// ```
    pub fn in_place(mut self, in_place: bool) -> Self {
        self.in_place = in_place;
        self
    }

    /// Sets bit-for-bit reproducible results whatever the decomposition (see
    /// [`FftOptions::deterministic`]).
    ///
    /// ```
    /// let opts = fft_core::FftOptions::default().deterministic(true);
    /// assert!(opts.deterministic);
    /// ```
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    /// Sets the machine profile the model uses for [`GridChoice::Auto`] (see
    /// [`FftOptions::machine`]).
    ///
    /// ```
    /// use fft_core::{model::MachineProfile, FftOptions};
    /// let fast_network = MachineProfile::network_only(1e-6, 1e-11);
    /// let opts = FftOptions::default().machine(fast_network.clone());
    /// assert_eq!(opts.machine, fast_network);
    /// ```
    pub fn machine(mut self, profile: crate::model::MachineProfile) -> Self {
        self.machine = profile;
        self
    }

    /// Sets the per-rank memory limit in bytes (`None`: no check; see
    /// [`FftOptions::memory_limit`]).
    pub fn memory_limit(mut self, bytes: Option<u64>) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// Sets the grid choice.
    pub fn grid(mut self, grid: GridChoice) -> Self {
        self.grid = grid;
        self
    }

    /// Sets the exchange method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Sets the normalization.
    pub fn normalization(mut self, normalization: Normalization) -> Self {
        self.normalization = normalization;
        self
    }

    /// Sets transposed output.
    pub fn transposed_out(mut self, transposed_out: bool) -> Self {
        self.transposed_out = transposed_out;
        self
    }

    /// Sets transposed input (see [`FftOptions::transposed_in`]).
    pub fn transposed_in(mut self, transposed_in: bool) -> Self {
        self.transposed_in = transposed_in;
        self
    }

    /// Sets the block sizes of the input layout's splits, one entry per logical axis (see
    /// [`FftOptions::input_blocks`]).
    ///
    /// ```
    /// // FFTW-MPI's default for 10 × 6 on 4 ranks: rows in blocks of ⌈10/4⌉ = 3.
    /// let opts = fft_core::FftOptions::default()
    ///     .input_blocks(vec![Some(3), None])
    ///     .output_blocks(vec![Some(3), None]);
    /// assert_eq!(opts.input_blocks, Some(vec![Some(3), None]));
    /// ```
    pub fn input_blocks(mut self, blocks: Vec<Option<usize>>) -> Self {
        self.input_blocks = Some(blocks);
        self
    }

    /// Sets the block sizes of the output layout's splits (see
    /// [`FftOptions::output_blocks`]).
    pub fn output_blocks(mut self, blocks: Vec<Option<usize>>) -> Self {
        self.output_blocks = Some(blocks);
        self
    }

    /// Sets the threads per rank of the plan (`None`: the current rayon pool's size; see
    /// [`FftOptions::threads`]).
    pub fn threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        self
    }

    /// Makes the plan a distributed 1-D transform along axis 0 (see [`OneD`]).
    pub fn one_d(mut self, one_d: OneD) -> Self {
        self.one_d = Some(one_d);
        self
    }

    /// The input and output layouts these options ask for ([`crate::stages::Ends`]).
    pub(crate) fn ends(&self) -> crate::stages::Ends {
        crate::stages::Ends {
            transposed_in: self.transposed_in,
            transposed_out: self.transposed_out,
            input_blocks: self.input_blocks.clone().unwrap_or_default(),
            output_blocks: self.output_blocks.clone().unwrap_or_default(),
        }
    }

    /// Sets the number of fields transformed together.
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch;
        self
    }

    /// Sets how the batch is split over the ranks (see [`FftOptions::groups`]).
    ///
    /// ```
    /// use fft_core::{FftOptions, Groups};
    /// let opts = FftOptions::default().batch(6).groups(Groups::Auto);
    /// assert_eq!(opts.groups, Groups::Auto);
    /// ```
    pub fn groups(mut self, groups: crate::groups::Groups) -> Self {
        self.groups = groups;
        self
    }

    /// Sets the transform kind of each axis.
    pub fn axes(mut self, axes: Vec<AxisKind>) -> Self {
        self.axes = Some(axes);
        self
    }

    /// Sets the padding factor of each axis (dealiasing; see [`FftOptions::padding`]).
    pub fn padding(mut self, factors: Vec<f64>) -> Self {
        self.padding = Some(factors);
        self
    }
}
