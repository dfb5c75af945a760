//! In-place transforms for `dfft.PFFT`, after FFTW's and pyFFTW's: one buffer per rank, of
//! the plan's in-place length, holds the forward input and then the spectrum (and back); the
//! caller passes one view of it and gets the other view back.
//!
//! The buffer is a C-contiguous numpy array of the forward input's element type whose
//! memory is exactly the in-place length (`PFFT.zeros(in_place=True)` makes one, on a cache
//! line, and returns a view of it; for c2c and r2r plans whose blocks have that length any array of the block's
//! shape is its own buffer). The views: the forward input is the first `local_shape` elements
//! (for r2c, FFTW's padded real layout: rows of the last axis padded from `n` to
//! `2·(n//2+1)` scalars, a strided view), the spectrum the first `local_spectral_shape`
//! elements (for r2c, the buffer's scalars read as complex). The buffer is found from the
//! array passed through numpy's `base`, and only a base with exactly that many bytes counts:
//! a view into a larger array (whose other elements the transform would use as scratch) is
//! refused.

use crate::arrays::{data_address, dtype_name, shape_str};
use crate::comm::{agree, collective};
use crate::errors::{fft_error, value_error};
use crate::transform::{AssertSend, Context, Transform};
use fft_core::Direction;
use mpi::topology::Communicator;
use numpy::ndarray::ArrayViewMut1;
use numpy::prelude::*;
use numpy::{PyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use redist::alloc::AlignedBuf;

/// What the in-place views of a plan look like on this rank.
pub(crate) struct InPlaceShapes<'a> {
    /// Local forward-input shape (batch first).
    pub input: &'a [usize],
    /// Local forward-output shape, memory order (batch first).
    pub output: &'a [usize],
    /// Elements (of the forward input's type) of the in-place buffer.
    pub len: usize,
    /// Whether the plan is real-to-complex: padded real rows, the spectrum as complex.
    pub real_to_complex: bool,
}

impl InPlaceShapes<'_> {
    /// The buffer's shape before the input view's slicing: FFTW's padded rows for r2c.
    fn padded_input(&self) -> Vec<usize> {
        let mut shape = self.input.to_vec();
        if self.real_to_complex {
            if let Some(last) = shape.last_mut() {
                *last = 2 * (*last / 2 + 1);
            }
        }
        shape
    }
}

/// The view of the input (`spectral` false) or of the spectrum in `buffer` (an array of the
/// forward input's element type and the in-place length).
pub(crate) fn view<'py>(
    buffer: &Bound<'py, PyAny>,
    shapes: &InPlaceShapes<'_>,
    spectral: bool,
    spectral_dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = buffer.py();
    let head = |n: usize| -> PyResult<Bound<'py, PyAny>> {
        buffer.get_item(PySlice::new(py, 0, n as isize, 1))
    };
    let count = |s: &[usize]| s.iter().product::<usize>();
    if spectral {
        let out = shapes.output;
        if shapes.real_to_complex {
            head(2 * count(out))?
                .call_method1("view", (spectral_dtype,))?
                .call_method1("reshape", (PyTuple::new(py, out)?,))
        } else {
            head(count(out))?.call_method1("reshape", (PyTuple::new(py, out)?,))
        }
    } else {
        let padded = shapes.padded_input();
        let whole = head(count(&padded))?.call_method1("reshape", (PyTuple::new(py, &padded)?,))?;
        if shapes.real_to_complex {
            // `whole[..., :n]`: the real values of each padded row.
            let n = *shapes.input.last().expect("d >= 1") as isize;
            let mut index = vec![py.Ellipsis()];
            index.push(PySlice::new(py, 0, n, 1).into_any().unbind());
            whole.get_item(PyTuple::new(py, index)?)
        } else {
            Ok(whole)
        }
    }
}

/// The base object of a buffer `PFFT.zeros(in_place=True)` makes: owns its memory, an
/// [`AlignedBuf`] (on a cache line, as the out-of-place `zeros` arrays are; numpy's own large
/// arrays start 16 bytes past one), for as long as an array uses it.
#[pyclass(module = "dfft", name = "_InPlaceBuffer", frozen)]
pub struct BufferOwner {
    _memory: Box<dyn std::any::Any + Send + Sync>,
}

/// A new zeroed in-place buffer and its view (see [`view`]).
pub(crate) fn zeros<'py, E: numpy::Element + redist::Element>(
    py: Python<'py>,
    shapes: &InPlaceShapes<'_>,
    spectral: bool,
    spectral_dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut memory = AlignedBuf::<E>::new(shapes.len);
    // SAFETY: `memory`'s `len` elements, initialized; the heap allocation does not move when
    // the `AlignedBuf` moves into the owner, and is never reallocated.
    let view1 = unsafe { ArrayViewMut1::from_shape_ptr(shapes.len, memory.as_mut_ptr()) };
    let owner = Bound::new(
        py,
        BufferOwner {
            _memory: Box::new(memory),
        },
    )?;
    // SAFETY: the owner becomes the array's base object, so the memory outlives the array.
    let buffer = unsafe { numpy::PyArray1::<E>::borrow_from_array(&view1, owner.into_any()) };
    view(buffer.as_any(), shapes, spectral, spectral_dtype)
}

/// Checks that `x` is the input (`spectral` false) or spectral view of an in-place buffer
/// (see the module docs) and returns the buffer, or this rank's message.
fn find_buffer<'py, E: numpy::Element>(
    x: &Bound<'py, PyAny>,
    shapes: &InPlaceShapes<'_>,
    spectral: bool,
    spectral_dtype: &Bound<'py, PyAny>,
    what: &str,
) -> Result<Bound<'py, PyArrayDyn<E>>, String> {
    let py = x.py();
    let (want_dtype, want_shape) = if spectral {
        (spectral_dtype.clone(), shapes.output)
    } else {
        (numpy::dtype::<E>(py).into_any(), shapes.input)
    };
    let dtype_text = want_dtype.str().map(|s| s.to_string()).unwrap_or_default();
    let how = format!(
        "must be a view of a writable in-place buffer, as PFFT.zeros(in_place=True) makes: \
         shape {}, dtype {dtype_text}, lying at the start of a C-contiguous array of exactly \
         {} {} elements",
        shape_str(want_shape),
        shapes.len,
        dtype_name::<E>(py)
    );
    let array = x
        .cast::<PyUntypedArray>()
        .map_err(|_| format!("{what} {how}; got {}", type_name(x)))?;
    let want_descr = want_dtype
        .cast::<numpy::PyArrayDescr>()
        .map_err(|e| e.to_string())?;
    let dtype_ok = array.dtype().is_equiv_to(want_descr);
    if !dtype_ok || array.shape() != want_shape {
        let got = array
            .dtype()
            .str()
            .map(|s| s.to_string())
            .unwrap_or_default();
        return Err(format!(
            "{what} {how}; got shape {}, dtype {got}",
            shape_str(array.shape())
        ));
    }
    let start = data_address(array);
    // The array that owns the memory: numpy points views at it (or at an object that is not
    // an ndarray, whose extent cannot be checked).
    let mut owner = x.clone();
    while let Ok(base) = owner.getattr("base") {
        if base.cast::<PyUntypedArray>().is_err() {
            break;
        }
        owner = base;
    }
    // Memory of its own, or of a buffer `zeros` made (numpy collapses views' bases to it).
    let owns = owner
        .getattr("base")
        .map(|b| b.is_none() || b.is_instance_of::<BufferOwner>())
        .unwrap_or(false);
    let buffer = owner.cast::<PyUntypedArray>().ok().filter(|base| {
        owns && data_address(base) == start
            && base.len() * base.dtype().itemsize() == shapes.len * std::mem::size_of::<E>()
            && base.is_c_contiguous()
            && base.dtype().is_equiv_to(&numpy::dtype::<E>(py))
    });
    let Some(buffer) = buffer else {
        return Err(format!(
            "{what} {how}; its memory is not such a buffer (a view into a larger array would \
             let the transform overwrite the rest of it)"
        ));
    };
    let buffer = buffer
        .cast::<PyArrayDyn<E>>()
        .map_err(|e| e.to_string())?
        .clone();
    // The array must be the view the buffer's `view` makes: the same strides.
    let expected = view(buffer.as_any(), shapes, spectral, spectral_dtype)
        .and_then(|v| v.getattr("strides"))
        .map_err(|e| e.to_string())?;
    let strides = x.getattr("strides").map_err(|e| e.to_string())?;
    if !strides.eq(&expected).map_err(|e| e.to_string())? {
        return Err(format!(
            "{what} {how}; got strides {strides}, expected {expected}"
        ));
    }
    Ok(buffer)
}

fn type_name(x: &Bound<'_, PyAny>) -> String {
    x.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `PFFT.forward_in_place` (`forward`) or `backward_in_place`: checks `x` on every rank,
/// agrees, runs the plan's in-place transform without the GIL and returns the other view
/// of the buffer.
pub(crate) fn run_in_place<'py, P: Transform>(
    py: Python<'py>,
    ctx: Context<'_>,
    plan: &mut P,
    x: &Bound<'py, PyAny>,
    shapes: &InPlaceShapes<'_>,
    direction: Direction,
    spectral_dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let rank = ctx.comm.rank();
    let forward = direction.is_forward();
    let what = format!("rank {rank}: {}_in_place input", direction.name());
    let found = find_buffer::<P::In>(x, shapes, !forward, spectral_dtype, &what);
    let mut borrowed = match &found {
        Ok(buffer) => buffer
            .try_readwrite()
            .map(Some)
            .map_err(|e| format!("{what} cannot be written: {e}")),
        Err(e) => Err(e.clone()),
    };
    // The slice is taken now so that a failure is part of this rank's agreed verdict.
    let mut local =
        crate::comm::thread_allowed(rank).and(borrowed.as_ref().map(|_| ()).map_err(|e| e.clone()));
    let slice = match borrowed.as_mut() {
        Ok(Some(b)) if local.is_ok() => match b.as_slice_mut() {
            Ok(s) => Some(s),
            Err(e) => {
                local = Err(format!("{what} cannot be written as a slice: {e}"));
                None
            }
        },
        _ => None,
    };
    let state = AssertSend((ctx.comm, ctx.pool, plan, slice));
    let outcome = py.detach(move || {
        let (comm, pool, plan, slice) = state.into_inner();
        collective(
            comm,
            move || -> Result<(), Result<String, fft_core::FftError>> {
                agree(comm, local).map_err(Ok)?;
                let buffer = slice.expect("checked on this rank");
                let work = AssertSend((plan, buffer));
                let go = move || {
                    let (plan, buffer) = work.into_inner();
                    plan.transform_in_place(direction, buffer)
                };
                match pool {
                    Some(pool) => {
                        let go = AssertSend(go);
                        pool.install(move || (go.into_inner())())
                    }
                    None => go(),
                }
                .map_err(Err)
            },
        )
    });
    drop(borrowed);
    match outcome {
        Ok(()) => {
            let buffer = found.map_err(value_error)?;
            view(buffer.as_any(), shapes, forward, spectral_dtype)
        }
        Err(Ok(message)) => Err(value_error(message)),
        Err(Err(e)) => Err(fft_error(e)),
    }
}
