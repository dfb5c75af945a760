//! `dfft_plan`: the plan handle, its constructors' argument checks, and its queries.

use crate::comm::Borrowed;
use crate::status::{Failure, Outcome, DFFT_ERROR_BAD_GRID};
use fft_core::{
    AnyPlan, AxisKind, FftOptions, GridChoice, Normalization, OneD, Precision, R2rKind,
};
use redist::Layout;
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicU64, Ordering};

/// The per-rank memory limit later plans check (`dfft_set_memory_limit`; 0: none). A
/// program-wide setting like FFTW's planner settings; the library reads no environment.
pub(crate) static MEMORY_LIMIT: AtomicU64 = AtomicU64::new(0);

/// The group split later plans take (`dfft_plan_with_groups`): 0 the model's choice, G ≥ 1
/// that many groups (1, the default: none).
pub(crate) static GROUPS: AtomicU64 = AtomicU64::new(1);

/// Forward output left in the last pencil layout (FFTW's `FFTW_MPI_TRANSPOSED_OUT`); the
/// backward transform then takes that layout as input (`FFTW_MPI_TRANSPOSED_IN`). Saves the
/// exchanges back to the input layout; `dfft_local_output` says where each element is.
pub const DFFT_TRANSPOSED_OUT: c_uint = 1;
/// The transforms may overwrite their input (FFTW's `FFTW_DESTROY_INPUT`): the plan then
/// needs less work memory. Without it the input is left alone.
pub const DFFT_DESTROY_INPUT: c_uint = 2;
/// Backward scaled by 1/N (numpy's default), so backward(forward(x)) = x. Without a
/// normalization flag neither direction is scaled (FFTW's convention).
pub const DFFT_NORMALIZE_BACKWARD: c_uint = 4;
/// Both directions scaled by 1/sqrt(N) (unitary).
pub const DFFT_NORMALIZE_ORTHO: c_uint = 8;
/// Exchanges between ranks on one node use MPI messages only, never a shared-memory window
/// (a tuning switch; results do not depend on it).
pub const DFFT_NO_SHARED_MEMORY: c_uint = 16;
/// The plan runs in place too (FFTW's plans made with `in == out`): `dfft_forward(plan, buf,
/// buf)` and `dfft_backward(plan, buf, buf)` transform one buffer of the element count
/// `dfft_local_in_place` reports (c2c: complex; r2c and r2r: real). For r2c the real block
/// lies in FFTW's padded in-place layout: each row of the last (contiguous) axis of n reals
/// takes 2*(n/2+1) scalars (the strides `dfft_local_input` gives, those of the other axes
/// scaled by 2*(n/2+1)/n; in Fortran's order the first axis is the padded one), and the
/// spectrum (`double _Complex`, output layout) starts at the buffer's start afterwards.
/// The plan's work memory covers both ways of calling it.
pub const DFFT_IN_PLACE: c_uint = 32;
/// Bit-for-bit reproducible results whatever the decomposition: the same bits on any number
/// of ranks, grid, threads and allocation (a fixed order of axes and the same 1-D kernel for
/// every line of a length; slower, see docs/spectral.md).
pub const DFFT_DETERMINISTIC: c_uint = 64;
/// A 1-D transform's forward input (backward output) in FFTW-MPI's scrambled order
/// (`FFTW_MPI_SCRAMBLED_IN`, the axis's `rows × cols` matrix transposed: position `p` holds
/// `x[(p % rows)·cols + p / rows]`), saving an exchange each way; `d = 1` only.
pub const DFFT_SCRAMBLED_IN: c_uint = 128;
/// A 1-D transform's forward output (backward input) in FFTW-MPI's scrambled order
/// (`FFTW_MPI_SCRAMBLED_OUT`: position `p` holds `X[p / cols + rows·(p % cols)]`), saving an
/// exchange each way; `d = 1` only. `dfft_local_output` gives the range of positions.
pub const DFFT_SCRAMBLED_OUT: c_uint = 256;

const KNOWN_FLAGS: c_uint = DFFT_TRANSPOSED_OUT
    | DFFT_DETERMINISTIC
    | DFFT_SCRAMBLED_IN
    | DFFT_SCRAMBLED_OUT
    | DFFT_IN_PLACE
    | DFFT_DESTROY_INPUT
    | DFFT_NORMALIZE_BACKWARD
    | DFFT_NORMALIZE_ORTHO
    | DFFT_NO_SHARED_MEMORY;

/// A real-to-real kind, numbered as FFTW's `fftw_r2r_kind` so that ported code keeps its
/// values (`FFTW_REDFT10` is `DFFT_REDFT10`).
#[allow(non_camel_case_types)]
pub type dfft_r2r_kind = c_int;
/// The real-input DFT in FFTW's halfcomplex order (R2HC): `Re X_0 … Re X_{n/2}`, then
/// `Im X_{(n-1)/2} … Im X_1`.
pub const DFFT_R2HC: dfft_r2r_kind = 0;
/// The inverse of R2HC up to n (HC2R), unnormalized.
pub const DFFT_HC2R: dfft_r2r_kind = 1;
/// The discrete Hartley transform, its own inverse up to n.
pub const DFFT_DHT: dfft_r2r_kind = 2;
/// DCT-I.
pub const DFFT_REDFT00: dfft_r2r_kind = 3;
/// DCT-III, the inverse of DCT-II up to 2N.
pub const DFFT_REDFT01: dfft_r2r_kind = 4;
/// DCT-II, "the" DCT.
pub const DFFT_REDFT10: dfft_r2r_kind = 5;
/// DCT-IV.
pub const DFFT_REDFT11: dfft_r2r_kind = 6;
/// DST-I.
pub const DFFT_RODFT00: dfft_r2r_kind = 7;
/// DST-III, the inverse of DST-II up to 2N.
pub const DFFT_RODFT01: dfft_r2r_kind = 8;
/// DST-II.
pub const DFFT_RODFT10: dfft_r2r_kind = 9;
/// DST-IV.
pub const DFFT_RODFT11: dfft_r2r_kind = 10;
/// No transform along this axis (a partial transform; not an FFTW kind): the axis is left as
/// it is, and an axis distributed in the input needs no exchange.
pub const DFFT_IDENTITY: dfft_r2r_kind = 11;

/// An opaque distributed transform made by one of the `dfft_plan_*`/`dfftf_plan_*`
/// constructors and released by `dfft_destroy`.
pub struct DfftPlan {
    pub(crate) transform: AnyPlan,
    /// A distributed 1-D transform (`d == 1`): its blocks are ranges of the one axis.
    pub(crate) one_d: bool,
}

/// What a constructor makes.
pub(crate) use fft_core::PlanKind as Kind;

/// A constructor's arguments, read from C and checked: the same on every rank when the
/// callers pass the same values, so every rank fails alike.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub(crate) kind: Kind,
    pub(crate) single: bool,
    pub(crate) shape: Vec<usize>,
    pub(crate) options: FftOptions,
}

/// The raw arguments of a constructor, as the C caller passed them.
pub(crate) struct RawRequest {
    pub(crate) d: c_int,
    pub(crate) n: *const isize,
    pub(crate) howmany: isize,
    pub(crate) kinds: *const dfft_r2r_kind,
    pub(crate) grid_rank: c_int,
    pub(crate) grid_dims: *const c_int,
    pub(crate) flags: c_uint,
    /// Arrays given in Fortran's order (fastest axis first): `n`, `kinds` and `grid_dims`
    /// are reversed into C order.
    pub(crate) fortran: bool,
}

impl RawRequest {
    /// Reads and checks the arguments.
    ///
    /// # Safety
    /// `n` (and `kinds` for real-to-real, and `grid_dims` when not NULL) must point to `d`
    /// (`grid_rank`) readable elements when `d` (`grid_rank`) is positive.
    pub(crate) unsafe fn read(&self, kind: Kind, single: bool) -> Outcome<Request> {
        // A complex transform of one dimension is a distributed 1-D transform.
        let least = if kind == Kind::C2c { 1 } else { 2 };
        let d = usize::try_from(self.d)
            .ok()
            .filter(|&d| d >= least)
            .ok_or_else(|| {
                Failure::argument(format!(
                    "d = {}: a distributed {} transform needs at least {least} dimension{}",
                    self.d,
                    if kind == Kind::C2c { "complex" } else { "real" },
                    if least > 1 {
                        "s (1-D transforms are complex)"
                    } else {
                        ""
                    },
                ))
            })?;
        // SAFETY: the caller's contract: `n` holds `d` elements (or is NULL, refused inside).
        let n = unsafe { read_array(self.n, d, "n") }?;
        let mut shape = Vec::with_capacity(d);
        for (i, &extent) in n.iter().enumerate() {
            match usize::try_from(extent) {
                Ok(e) if e >= 1 => shape.push(e),
                _ => {
                    return Err(Failure::argument(format!(
                        "{} = {extent}: every extent must be at least 1 (n = {n:?})",
                        self.entry("n", i)
                    )))
                }
            }
        }
        let batch = usize::try_from(self.howmany)
            .ok()
            .filter(|&b| b >= 1)
            .ok_or_else(|| {
                Failure::argument(format!("howmany = {}: must be at least 1", self.howmany))
            })?;
        let mut options = options_from_flags(self.flags)?.batch(batch);
        let (scrambled_in, scrambled_out) = (
            self.flags & DFFT_SCRAMBLED_IN != 0,
            self.flags & DFFT_SCRAMBLED_OUT != 0,
        );
        if scrambled_in || scrambled_out {
            if d != 1 {
                return Err(Failure::argument(format!(
                    "flags = {:#x}: DFFT_SCRAMBLED_IN and DFFT_SCRAMBLED_OUT need d = 1, got d = {d}",
                    self.flags
                )));
            }
            options = options.one_d(OneD {
                columns: None,
                scrambled_in,
                scrambled_out,
            });
        }
        options.grid = self.grid(d)?;
        if kind == Kind::R2r {
            // SAFETY: the caller's contract: `kinds` holds `d` elements (or is NULL).
            let codes = unsafe { read_array(self.kinds, d, "kinds") }?;
            let mut axes = codes
                .iter()
                .enumerate()
                .map(|(i, &code)| {
                    let kind = match code {
                        DFFT_IDENTITY => Some(AxisKind::Identity),
                        _ => R2rKind::from_fftw(code).map(AxisKind::R2r),
                    };
                    kind.ok_or_else(|| {
                        Failure::argument(format!(
                            "{} = {code}: not a real-to-real kind (DFFT_R2HC..DFFT_RODFT11, 0..10, or DFFT_IDENTITY, 11)",
                            self.entry("kinds", i)
                        ))
                    })
                })
                .collect::<Outcome<Vec<_>>>()?;
            if self.fortran {
                axes.reverse();
            }
            options = options.axes(axes);
        }
        if self.fortran {
            shape.reverse();
        }
        Ok(Request {
            kind,
            single,
            shape,
            options,
        })
    }

    /// How the caller names entry `i` of array `name`: `n[1]` in C, `n(2)` in Fortran.
    fn entry(&self, name: &str, i: usize) -> String {
        if self.fortran {
            format!("{name}({})", i + 1)
        } else {
            format!("{name}[{i}]")
        }
    }

    /// The grid request: `grid_dims` NULL asks for a grid rank (`0`: the model's choice),
    /// otherwise for the `grid_rank` dimensions listed.
    fn grid(&self, d: usize) -> Outcome<GridChoice> {
        let bad = |why: String| Failure::new(DFFT_ERROR_BAD_GRID, why);
        let rank = usize::try_from(self.grid_rank)
            .map_err(|_| bad(format!("grid_rank = {}: must be >= 0", self.grid_rank)))?;
        if self.grid_dims.is_null() {
            return Ok(match rank {
                0 => GridChoice::Auto,
                r => GridChoice::Rank(r),
            });
        }
        if rank == 0 || rank >= d {
            return Err(bad(format!(
                "grid_rank = {rank} with explicit grid_dims: a grid of an array of {d} dimensions has 1 to {} dimensions",
                d - 1
            )));
        }
        // SAFETY: the caller's contract: `grid_dims` holds `grid_rank` elements.
        let given = unsafe { read_array(self.grid_dims, rank, "grid_dims") }?;
        let mut dims = Vec::with_capacity(rank);
        for (i, &g) in given.iter().enumerate() {
            match usize::try_from(g) {
                Ok(g) if g >= 1 => dims.push(g),
                _ => {
                    return Err(bad(format!(
                        "{} = {g}: every grid dimension must be at least 1 (grid_dims = {given:?})",
                        self.entry("grid_dims", i)
                    )))
                }
            }
        }
        if self.fortran {
            dims.reverse();
        }
        Ok(GridChoice::Dims(dims))
    }
}

/// `len` elements from `ptr`, copied.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable elements.
unsafe fn read_array<E: Copy>(ptr: *const E, len: usize, what: &str) -> Outcome<Vec<E>> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-NULL, and `len` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec())
}

/// The options the flags ask for.
fn options_from_flags(flags: c_uint) -> Outcome<FftOptions> {
    let unknown = flags & !KNOWN_FLAGS;
    if unknown != 0 {
        return Err(Failure::argument(format!(
            "flags = {flags:#x}: unknown bits {unknown:#x} (FFTW's planner flags such as FFTW_MEASURE have no dfft equivalent: pass 0)"
        )));
    }
    let normalization = match (
        flags & DFFT_NORMALIZE_BACKWARD != 0,
        flags & DFFT_NORMALIZE_ORTHO != 0,
    ) {
        (false, false) => Normalization::None,
        (true, false) => Normalization::Backward,
        (false, true) => Normalization::Ortho,
        (true, true) => {
            return Err(Failure::argument(
                "flags: DFFT_NORMALIZE_BACKWARD and DFFT_NORMALIZE_ORTHO exclude each other",
            ))
        }
    };
    let limit = MEMORY_LIMIT.load(Ordering::Relaxed);
    let groups = match GROUPS.load(Ordering::Relaxed) {
        0 => fft_core::Groups::Auto,
        g => fft_core::Groups::Fixed(g as usize),
    };
    Ok(FftOptions::default()
        .groups(groups)
        .memory_limit((limit > 0).then_some(limit))
        .transposed_out(flags & DFFT_TRANSPOSED_OUT != 0)
        .destroy_input(flags & DFFT_DESTROY_INPUT != 0)
        .in_place(flags & DFFT_IN_PLACE != 0)
        .deterministic(flags & DFFT_DETERMINISTIC != 0)
        .shared_memory(flags & DFFT_NO_SHARED_MEMORY == 0)
        .normalization(normalization))
}

impl Request {
    /// Transforms only the `naxes` axes listed in `axes` (C order), the others
    /// [`AxisKind::Identity`].
    ///
    /// # Safety
    /// `axes` points to `naxes` readable entries when `naxes` is positive.
    pub(crate) unsafe fn only_axes(mut self, naxes: c_int, axes: *const c_int) -> Outcome<Self> {
        let d = self.shape.len();
        let count = usize::try_from(naxes)
            .ok()
            .filter(|&k| (1..=d).contains(&k))
            .ok_or_else(|| Failure::argument(format!("naxes = {naxes}: must be 1 to d = {d}")))?;
        // SAFETY: the caller's contract.
        let given = unsafe { read_array(axes, count, "axes") }?;
        let listed: Vec<usize> = given
            .iter()
            .map(|&a| usize::try_from(a).unwrap_or(usize::MAX))
            .collect();
        let kinds = AxisKind::partial(d, &listed, AxisKind::Fft)
            .map_err(|e| Failure::argument(format!("axes = {given:?}: {e}")))?;
        self.options = self.options.axes(kinds);
        Ok(self)
    }

    /// Makes the plan; collective over `comm`.
    pub(crate) fn plan(self, comm: &Borrowed) -> Outcome<DfftPlan> {
        let comm = &**comm;
        let precision = if self.single {
            Precision::F32
        } else {
            Precision::F64
        };
        let one_d = self.shape.len() == 1;
        let transform = AnyPlan::new(comm, self.kind, precision, &self.shape, self.options)?;
        Ok(DfftPlan { transform, one_d })
    }
}

/// This rank's block of one layout: extents, global offsets and memory strides per axis
/// (C order), in elements.
pub(crate) struct Block {
    pub(crate) local_n: Vec<isize>,
    pub(crate) start: Vec<isize>,
    pub(crate) strides: Vec<isize>,
}

fn signed(v: Vec<usize>) -> Vec<isize> {
    // Extents, offsets and strides of a block are below the isize extents it came from.
    v.into_iter().map(|x| x as isize).collect()
}

impl DfftPlan {
    /// This rank's block of the forward input (`input`) or output layout.
    pub(crate) fn block(&self, input: bool) -> Block {
        let p = &self.transform;
        let layout: &Layout = if input {
            p.input_layout()
        } else {
            p.output_layout()
        };
        let rank = p.rank();
        if self.one_d {
            // One contiguous range of the axis (the layout is a slab of its matrix).
            let range = fft_core::one_d::range_1d(layout, rank);
            return Block {
                local_n: vec![range.len() as isize],
                start: vec![range.start as isize],
                strides: vec![1],
            };
        }
        Block {
            local_n: signed(layout.local_shape(rank)),
            start: signed(layout.global_offsets(rank)),
            strides: signed(layout.local_strides(rank)),
        }
    }

    /// Elements of this rank's forward input and output (all `howmany` fields).
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.transform.input_len(), self.transform.output_len())
    }

    /// The processor grid's dimensions.
    pub(crate) fn grid_dims(&self) -> Vec<usize> {
        self.transform.grid().shape().dims().to_vec()
    }

    /// Elements (of the plan's in-place type) of this rank's in-place buffer, 0 without
    /// `DFFT_IN_PLACE`.
    pub(crate) fn in_place_count(&self) -> usize {
        if !self.in_place() {
            return 0;
        }
        self.transform.in_place_len()
    }

    /// Whether the plan was made with `DFFT_IN_PLACE`.
    pub(crate) fn in_place(&self) -> bool {
        self.transform.options().in_place
    }

    /// Whether the plan may write into its input.
    pub(crate) fn destroys_input(&self) -> bool {
        self.transform.options().destroy_input
    }
}
