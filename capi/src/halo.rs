//! The C halo exchange on a plan's forward-input layout (`fft_core::halo`): `dfft_halo_plan`,
//! `dfft_halo_local`, `dfft_halo_exchange`, `dfft_halo_destroy`. Each rank's block extended
//! by `widths[a]` cells on both sides of every axis, filled from the neighbours' blocks
//! (periodic) or with a fill value past the global boundary.

use crate::ffi::plan_ref;
use crate::plan::DfftPlan;
use crate::status::{guard, Failure, Outcome, DFFT_ERROR_BAD_BUFFER, DFFT_ERROR_OTHER_RANK};
use fft_core::halo::{Boundary, HaloArray, HaloPlan};
use fft_core::ndarray::{ArrayViewD, IxDyn};
use fft_core::{with_any_plan, Complex, Transform};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::Element;
use std::ffi::{c_int, c_void};

/// An opaque halo exchange made by `dfft_halo_plan` and released by `dfft_halo_destroy`.
pub struct DfftHalo {
    inner: AnyHalo,
}

enum AnyHalo {
    F64(Halo<f64>),
    F32(Halo<f32>),
    C64(Halo<Complex<f64>>),
    C32(Halo<Complex<f32>>),
}

/// One element type's halo: the plan, the extended array it fills, and the input block's
/// shape (a leading field axis when several).
struct Halo<S: Element> {
    plan: HaloPlan<S>,
    array: HaloArray<S>,
    input_shape: Vec<usize>,
    comm: SimpleCommunicator,
}

/// The element types a plan's input may have.
trait Wrap: Element + Copy {
    fn wrap(halo: Halo<Self>) -> AnyHalo;
}

impl Wrap for f64 {
    fn wrap(halo: Halo<Self>) -> AnyHalo {
        AnyHalo::F64(halo)
    }
}

impl Wrap for f32 {
    fn wrap(halo: Halo<Self>) -> AnyHalo {
        AnyHalo::F32(halo)
    }
}

impl Wrap for Complex<f64> {
    fn wrap(halo: Halo<Self>) -> AnyHalo {
        AnyHalo::C64(halo)
    }
}

impl Wrap for Complex<f32> {
    fn wrap(halo: Halo<Self>) -> AnyHalo {
        AnyHalo::C32(halo)
    }
}

impl<S: Wrap> Halo<S> {
    /// # Safety
    /// `fill` is NULL or points to one `S`.
    unsafe fn plan<P: Transform<In = S>>(
        p: &P,
        widths: &[usize],
        periodic: bool,
        fill: *const c_void,
    ) -> Outcome<AnyHalo> {
        let boundary = if periodic {
            Boundary::Periodic
        } else if fill.is_null() {
            return Err(Failure::null(
                "fill (periodic = 0 needs the value past the boundary)",
            ));
        } else {
            // SAFETY: non-NULL, one `S` by the caller's contract (read unaligned).
            Boundary::Fill(unsafe { (fill as *const S).read_unaligned() })
        };
        let plan = HaloPlan::for_input(p, widths, boundary)?;
        let array = HaloArray::private(&plan);
        let rank = p.grid().rank();
        let mut input_shape = p.input_layout().local_shape(rank);
        if p.batch() > 1 {
            input_shape.insert(0, p.batch());
        }
        let comm = p.grid().communicator().duplicate();
        Ok(S::wrap(Self {
            plan,
            array,
            input_shape,
            comm,
        }))
    }

    fn input_len(&self) -> usize {
        self.input_shape.iter().product()
    }

    /// # Safety
    /// `input` points to `input_len()` elements, `output` to `output_len()`, when non-NULL;
    /// `input == output`: the extended block whose interior holds the input.
    unsafe fn exchange(&mut self, input: *const c_void, output: *mut c_void) -> Outcome {
        let in_place = std::ptr::eq(input, output);
        let n_out = self.array.as_slice().len();
        let n_in = if in_place { n_out } else { self.input_len() };
        let check = |ptr: *const c_void, len: usize, name: &str| -> Outcome {
            if len > 0 && ptr.is_null() {
                return Err(Failure::null(name));
            }
            if !(ptr as usize).is_multiple_of(std::mem::align_of::<S>()) {
                return Err(Failure::new(
                    DFFT_ERROR_BAD_BUFFER,
                    format!("{name} = {ptr:p} is not aligned to its element type"),
                ));
            }
            Ok(())
        };
        let local = check(input, n_in, "in").and_then(|()| check(output, n_out, "out"));
        // Any rank refused, any rank in place, any rank not: the in-place form and the
        // other run different collectives, so every rank must take the same one.
        let mine = [
            i32::from(local.is_err()),
            i32::from(in_place),
            i32::from(!in_place),
        ];
        let mut any = [0i32; 3];
        (self.comm).all_reduce_into(&mine[..], &mut any[..], SystemOperation::max());
        local?;
        if any[0] != 0 {
            return Err(Failure::new(
                DFFT_ERROR_OTHER_RANK,
                "another rank's arguments to dfft_halo_exchange were refused",
            ));
        }
        if any[1] != 0 && any[2] != 0 {
            return Err(Failure::argument(
                "dfft_halo_exchange: in == out (in place) on some ranks and not on others",
            ));
        }
        if in_place {
            // Only the halo cells: the interior is already where it belongs (C order is the
            // layout's memory order: checked at planning).
            let data: &mut [S] = match n_out {
                0 => &mut [],
                // SAFETY: checked non-NULL and aligned; `n_out` elements by the contract.
                _ => unsafe { std::slice::from_raw_parts_mut(output as *mut S, n_out) },
            };
            return Ok(self.plan.exchange_slice(data)?);
        }
        let input: &[S] = match n_in {
            0 => &[],
            // SAFETY: checked non-NULL and aligned; `n_in` elements by the contract.
            _ => unsafe { std::slice::from_raw_parts(input as *const S, n_in) },
        };
        let view = ArrayViewD::from_shape(IxDyn(&self.input_shape), input)
            .expect("the input block's shape holds its elements");
        self.array.interior_mut().assign(&view);
        self.plan.exchange(&mut self.array)?;
        let output: &mut [S] = match n_out {
            0 => &mut [],
            // SAFETY: checked non-NULL and aligned; `n_out` elements by the contract.
            _ => unsafe { std::slice::from_raw_parts_mut(output as *mut S, n_out) },
        };
        for (o, v) in output.iter_mut().zip(self.array.view().iter()) {
            *o = *v;
        }
        Ok(())
    }
}

macro_rules! with_halo {
    ($halo:expr, $h:ident => $body:expr) => {
        match $halo {
            AnyHalo::F64($h) => $body,
            AnyHalo::F32($h) => $body,
            AnyHalo::C64($h) => $body,
            AnyHalo::C32($h) => $body,
        }
    };
}

/// Plans the halo exchange of `plan`'s forward-input layout (all `howmany` fields):
/// `widths[a]` cells on both sides of axis `a` (C order; `d` entries, any size: cells come
/// from several ranks and wrap as often as needed). `periodic` nonzero: the array repeats
/// past the global boundary (`numpy.pad(x, w, mode="wrap")`); zero: every cell past it holds
/// `*fill`, one element of the plan's input type. Collective over the plan's ranks. A 1-D
/// plan (`d == 1`) has no halo: DFFT_ERROR_BAD_ARGUMENT on every rank.
///
/// # Safety
/// `plan` is a live plan, `widths` points to `d` entries, `fill` is NULL or points to one
/// element, `halo` is writable.
#[no_mangle]
pub unsafe extern "C" fn dfft_halo_plan(
    plan: *const DfftPlan,
    widths: *const isize,
    periodic: c_int,
    fill: *const c_void,
    halo: *mut *mut DfftHalo,
) -> c_int {
    if !halo.is_null() {
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { halo.write(std::ptr::null_mut()) };
    }
    guard(|| {
        if halo.is_null() {
            return Err(Failure::null("halo (the output argument)"));
        }
        // SAFETY: the caller's contract.
        let plan = unsafe { plan_ref(plan) }?;
        let d = plan.transform.input_layout().ndim();
        if plan.one_d {
            // A 1-D plan's blocks are ranges of its one axis, planned as a 2-axis layout whose
            // boxes are not that axis's halo: refused (the same on every rank) rather than
            // exchanged wrongly.
            let n = plan
                .transform
                .input_layout()
                .global_shape()
                .iter()
                .product::<usize>();
            return Err(Failure::argument(format!(
                "a halo needs a plan of d >= 2 axes; this plan is 1-D (n = {n})"
            )));
        }
        if !plan.transform.input_layout().memory_order().is_natural() {
            // dfft_halo_exchange's blocks are in C order, its in-place form in memory order.
            return Err(Failure::argument(
                "a halo needs the plan's input block in C order (a 1-D plan's scrambled input is not)",
            ));
        }
        if widths.is_null() {
            return Err(Failure::null("widths"));
        }
        // SAFETY: `d` entries by the caller's contract.
        let given = unsafe { std::slice::from_raw_parts(widths, d) };
        let widths = given
            .iter()
            .map(|&w| usize::try_from(w))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| Failure::argument(format!("widths = {given:?}: must be >= 0")))?;
        let periodic = periodic != 0;
        let inner = with_any_plan!(&plan.transform, p => {
            // SAFETY: `fill` as the caller's contract says.
            unsafe { Halo::plan(p, &widths, periodic, fill) }
        })?;
        let made = Box::into_raw(Box::new(DfftHalo { inner }));
        // SAFETY: as above.
        unsafe { halo.write(made) };
        Ok(())
    })
}

/// This rank's extended block: `*count` elements (all fields) and `extended_n` (`d`
/// entries, C order, one field): the input block's extents plus twice the widths.
///
/// # Safety
/// `halo` is a live halo; `count` and `extended_n` are NULL or writable (`d` entries).
#[no_mangle]
pub unsafe extern "C" fn dfft_halo_local(
    halo: *const DfftHalo,
    count: *mut isize,
    extended_n: *mut isize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let halo = unsafe { halo.as_ref() }.ok_or_else(|| Failure::null("halo"))?;
        let (len, shape) =
            with_halo!(&halo.inner, h => (h.array.as_slice().len(), h.plan.extended_shape()));
        if !count.is_null() {
            // SAFETY: writable by the contract.
            unsafe { count.write(len as isize) };
        }
        if !extended_n.is_null() {
            for (i, &n) in shape.iter().enumerate() {
                // SAFETY: `d` writable entries by the contract.
                unsafe { extended_n.add(i).write(n as isize) };
            }
        }
        Ok(())
    })
}

/// Fills `out` (`dfft_halo_local`'s count of elements: the extended block in C order, field
/// after field) with `in` (this rank's forward-input block, as `dfft_forward` takes it) and
/// the halo cells from the other ranks' `in`. With `in == out` (on every rank alike: an
/// error otherwise), in place: `out` is an extended block whose interior already holds the
/// input, and only its halo cells are written (no copy of the block). Collective; allocates nothing. A NULL or misaligned buffer
/// on any rank fails on every rank.
///
/// # Safety
/// `halo` is a live halo; `in` and `out` point to their blocks' elements.
#[no_mangle]
pub unsafe extern "C" fn dfft_halo_exchange(
    halo: *mut DfftHalo,
    input: *const c_void,
    out: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let halo = unsafe { halo.as_mut() }.ok_or_else(|| Failure::null("halo"))?;
        // SAFETY: the buffers as the caller's contract says.
        with_halo!(&mut halo.inner, h => unsafe { h.exchange(input, out) })
    })
}

/// Releases a halo (collective over the plan's ranks). NULL is ignored.
///
/// # Safety
/// `halo` is NULL or a live halo, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn dfft_halo_destroy(halo: *mut DfftHalo) -> c_int {
    if !halo.is_null() {
        // SAFETY: made by `dfft_halo_plan` (Box::into_raw), released once.
        drop(unsafe { Box::from_raw(halo) });
    }
    0
}
