//! `PFFT.exchange_halo`: this rank's block of the forward-input layout extended by halo
//! cells from the neighbours' blocks ([`fft_core::halo::HaloPlan`]), as a new numpy array.

use crate::arrays::{new_array, Expect};
use crate::comm::{agree, collective};
use crate::errors::{fft_error, value_error, DfftError};
use crate::transform::Transform;
use fft_core::halo::{Boundary, HaloArray, HaloPlan};
use fft_core::ndarray::{ArrayViewD, IxDyn};
use fft_core::Complex;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::SimpleCommunicator;
use numpy::PyArrayMethods;
use pyo3::prelude::*;

/// An element type whose fill value comes from a Python number (complex for complex arrays;
/// real arrays take the real part and refuse an imaginary one).
pub(crate) trait FillValue: Sized {
    fn from_complex(v: Complex<f64>) -> Result<Self, String>;
}

fn real_part(v: Complex<f64>) -> Result<f64, String> {
    if v.im == 0.0 {
        Ok(v.re)
    } else {
        Err(format!("fill={v} is complex but the array is real"))
    }
}

impl FillValue for f64 {
    fn from_complex(v: Complex<f64>) -> Result<Self, String> {
        real_part(v)
    }
}

impl FillValue for f32 {
    fn from_complex(v: Complex<f64>) -> Result<Self, String> {
        real_part(v).map(|r| r as f32)
    }
}

impl FillValue for Complex<f64> {
    fn from_complex(v: Complex<f64>) -> Result<Self, String> {
        Ok(v)
    }
}

impl FillValue for Complex<f32> {
    fn from_complex(v: Complex<f64>) -> Result<Self, String> {
        Ok(Complex::new(v.re as f32, v.im as f32))
    }
}

/// The widths per axis from an int (every axis) or a sequence of `d` ints.
pub(crate) fn halo_widths(width: &Bound<'_, PyAny>, d: usize) -> PyResult<Vec<usize>> {
    if let Ok(w) = width.extract::<usize>() {
        return Ok(vec![w; d]);
    }
    let widths: Vec<usize> = width.extract().map_err(|_| {
        DfftError::new_err(format!(
            "width must be a non-negative int or {d} of them (one per axis), got {width}"
        ))
    })?;
    if widths.len() != d {
        return Err(DfftError::new_err(format!(
            "width {widths:?} has {} entries for {d} axes",
            widths.len()
        )));
    }
    Ok(widths)
}

/// What `exchange_halo` was asked for.
pub(crate) struct HaloRequest<'a> {
    pub widths: &'a [usize],
    /// `None`: periodic; else the fill value past the global boundary.
    pub fill: Option<Complex<f64>>,
    /// This rank's forward-input array shape (batch first when several fields).
    pub shape: &'a [usize],
    /// This rank in the plan.
    pub rank: usize,
    /// `u` is the extended array (its interior holding the block): fill its halo in place.
    pub in_place: bool,
}

/// `u` (this rank's forward-input block of `plan`) extended by the halo of `request`, as a
/// new array. Collective over `comm` (the plan's ranks): the checks of `u` are agreed on, so
/// every rank raises the same error or none does.
pub(crate) fn exchange_halo<'py, P>(
    py: Python<'py>,
    comm: &SimpleCommunicator,
    plan: &P,
    u: &Bound<'py, PyAny>,
    request: HaloRequest<'_>,
) -> PyResult<Bound<'py, PyAny>>
where
    P: Transform,
    P::In: FillValue + Copy,
{
    let rank = request.rank;
    // The in-place form and the other run different collectives: every rank takes one.
    let mine = [i32::from(request.in_place), i32::from(!request.in_place)];
    let mut any = [0i32; 2];
    comm.all_reduce_into(&mine[..], &mut any[..], SystemOperation::max());
    if any == [1, 1] {
        return Err(DfftError::new_err(
            "exchange_halo: in_place=True on some ranks and not on others",
        ));
    }
    let boundary = match request.fill.map(P::In::from_complex).transpose() {
        Ok(Some(v)) => Ok(Boundary::Fill(v)),
        Ok(None) => Ok(Boundary::Periodic),
        Err(e) => Err(e),
    };
    if request.in_place {
        return exchange_in_place(comm, plan, u, request, boundary);
    }
    let want = Expect {
        what: "exchange_halo input",
        shape: request.shape,
        rank: rank as i32,
    };
    let input = want.input::<P::In>(u);
    let local = match (&input, &boundary) {
        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        _ => Ok(()),
    };
    agree(comm, local).map_err(value_error)?;
    let (input, boundary) = (input.expect("agreed"), boundary.expect("agreed"));
    let mut halo = collective(comm, || {
        HaloPlan::new(
            plan.grid().communicator(),
            plan.input_layout(),
            plan.batch(),
            request.widths,
            boundary,
        )
    })
    .map_err(fft_error)?;
    let mut array = HaloArray::private(&halo);
    // numpy's ndarray and fft-core's are different versions: the blocks cross as slices.
    let slice = input.as_slice().map_err(|e| value_error(e.to_string()))?;
    let view = ArrayViewD::from_shape(IxDyn(request.shape), slice)
        .map_err(|e| value_error(e.to_string()))?;
    array.interior_mut().assign(&view);
    collective(comm, || halo.exchange(&mut array)).map_err(fft_error)?;
    let extended = array.view();
    let out = new_array::<P::In>(py, extended.shape());
    {
        let mut writable = out.readwrite();
        let target = writable
            .as_slice_mut()
            .map_err(|e| value_error(e.to_string()))?;
        for (o, v) in target.iter_mut().zip(extended.iter()) {
            *o = *v;
        }
    }
    Ok(out.into_any())
}

/// The in-place form: `u` is this rank's extended array (`request.shape` widened by twice the
/// widths, batch first), its interior holding the block; only its halo cells are written
/// ([`HaloPlan::exchange_slice`]). Returns `u`. Collective, checks agreed as above.
fn exchange_in_place<'py, P>(
    comm: &SimpleCommunicator,
    plan: &P,
    u: &Bound<'py, PyAny>,
    request: HaloRequest<'_>,
    boundary: Result<Boundary<P::In>, String>,
) -> PyResult<Bound<'py, PyAny>>
where
    P: Transform,
    P::In: FillValue + Copy,
{
    let batch = usize::from(plan.batch() > 1);
    let extended: Vec<usize> = (request.shape.iter().enumerate())
        .map(|(a, &n)| match a.checked_sub(batch) {
            Some(axis) => n + 2 * request.widths[axis],
            None => n,
        })
        .collect();
    let want = Expect {
        what: "exchange_halo in_place array",
        shape: &extended,
        rank: request.rank as i32,
    };
    let array = want.output::<P::In>(u);
    let natural = plan.input_layout().memory_order().is_natural();
    let local = match (&array, &boundary) {
        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        _ if !natural => Err("exchange_halo in_place needs the input block in C order".into()),
        _ => Ok(()),
    };
    agree(comm, local).map_err(value_error)?;
    let (mut array, boundary) = (array.expect("agreed"), boundary.expect("agreed"));
    let mut halo = collective(comm, || {
        HaloPlan::new(
            plan.grid().communicator(),
            plan.input_layout(),
            plan.batch(),
            request.widths,
            boundary,
        )
    })
    .map_err(fft_error)?;
    let data = array
        .as_slice_mut()
        .map_err(|e| value_error(e.to_string()))?;
    collective(comm, || halo.exchange_slice(data)).map_err(fft_error)?;
    Ok(u.clone())
}
