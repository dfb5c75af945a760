//! `PFFT.exchange_halo`: this rank's block of the forward-input layout extended by halo
//! cells from the neighbours' blocks ([`fft_core::halo::HaloPlan`]), as a new numpy array
//! or in place; the halo plans are made once per widths and boundary and kept ([`HaloCache`]).

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
use std::any::Any;

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

/// Halo plans kept per plan: a solver calls `exchange_halo` every step, and each plan holds a
/// duplicated communicator and its message buffers. The dtype and layout are the PFFT's, so
/// the widths and the boundary are the key.
type HaloKey = (Vec<usize>, Option<[u64; 2]>);

/// The halo plans `exchange_halo` made, reused by later calls with the same key (at most
/// [`HaloCache::KEEP`], the oldest dropped first). Every rank makes and drops them together:
/// whether any rank lacks the key is agreed on before each call. Freed by `PFFT.destroy`.
#[derive(Default)]
pub(crate) struct HaloCache {
    entries: Vec<(HaloKey, Box<dyn Any>)>,
    /// Halo plans made so far (`PFFT.halo_plans_made`, for the tests).
    pub made: usize,
}

impl HaloCache {
    const KEEP: usize = 8;

    fn key(request: &HaloRequest<'_>) -> HaloKey {
        let fill = request.fill.map(|v| [v.re.to_bits(), v.im.to_bits()]);
        (request.widths.to_vec(), fill)
    }

    fn holds(&self, key: &HaloKey) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// The plan for `key`, made by `make` when `remake` (some rank lacks it). Collective when
    /// `remake`.
    fn plan<S: redist::Element>(
        &mut self,
        key: HaloKey,
        remake: bool,
        make: impl FnOnce() -> PyResult<HaloPlan<S>>,
    ) -> PyResult<&mut HaloPlan<S>> {
        if remake {
            let made = make()?;
            self.made += 1;
            self.entries.retain(|(k, _)| *k != key);
            if self.entries.len() >= Self::KEEP {
                self.entries.remove(0);
            }
            self.entries.push((key.clone(), Box::new(made)));
        }
        let entry = (self.entries.iter_mut()).find(|(k, _)| *k == key);
        let plan = entry.and_then(|(_, p)| p.downcast_mut::<HaloPlan<S>>());
        Ok(plan.expect("every rank holds the key: agreed before the call"))
    }
}

/// A call's way into the cache: its key and whether every rank makes the plan anew.
struct Cached<'c> {
    cache: &'c mut HaloCache,
    key: HaloKey,
    remake: bool,
}

impl<'c> Cached<'c> {
    /// The halo plan of `plan`'s input layout with `widths` and `boundary`, made (collective)
    /// when `remake`, else the kept one.
    fn plan<P: Transform>(
        self,
        comm: &SimpleCommunicator,
        plan: &P,
        widths: &[usize],
        boundary: Boundary<P::In>,
    ) -> PyResult<&'c mut HaloPlan<P::In>> {
        self.cache.plan(self.key, self.remake, || {
            collective(comm, || {
                HaloPlan::new(
                    plan.grid().communicator(),
                    plan.input_layout(),
                    plan.batch(),
                    widths,
                    boundary,
                )
            })
            .map_err(fft_error)
        })
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
    cache: &mut HaloCache,
    u: &Bound<'py, PyAny>,
    request: HaloRequest<'_>,
) -> PyResult<Bound<'py, PyAny>>
where
    P: Transform,
    P::In: FillValue + Copy,
{
    let rank = request.rank;
    // The in-place form and the other run different collectives: every rank takes one. A
    // rank without the halo plan makes every rank make it (its communicator is collective).
    let key = HaloCache::key(&request);
    let mine = [
        i32::from(request.in_place),
        i32::from(!request.in_place),
        i32::from(!cache.holds(&key)),
    ];
    let mut any = [0i32; 3];
    comm.all_reduce_into(&mine[..], &mut any[..], SystemOperation::max());
    let remake = any[2] == 1;
    if any[..2] == [1, 1] {
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
        let cached = Cached { cache, key, remake };
        return exchange_in_place(comm, plan, u, request, boundary, cached);
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
    let cached = Cached { cache, key, remake };
    let halo = cached.plan(comm, plan, request.widths, boundary)?;
    let mut array = HaloArray::private(halo);
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
    cached: Cached<'_>,
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
    let halo = cached.plan(comm, plan, request.widths, boundary)?;
    let data = array
        .as_slice_mut()
        .map_err(|e| value_error(e.to_string()))?;
    collective(comm, || halo.exchange_slice(data)).map_err(fft_error)?;
    Ok(u.clone())
}
