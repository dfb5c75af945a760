//! Checks of the numpy arrays a caller passes: type, dtype, shape, C-contiguity, writability
//! and aliasing, each failure a message with the offending values. No copies: a valid array is
//! borrowed as a slice of its own memory.

use crate::errors::value_error;
use numpy::prelude::*;
use numpy::{BorrowError, Element, PyArrayDyn, PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// `(a, b, c)` as Python prints a shape.
pub fn shape_str(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The numpy name of `T`'s dtype (`float64`, `complex128`, ...).
pub fn dtype_name<T: Element>(py: Python<'_>) -> String {
    numpy::dtype::<T>(py)
        .getattr("name")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "?".to_string())
}

/// What an array must be: its role in messages, its shape and its element type.
pub struct Expect<'a> {
    /// "forward input", "backward output", ...
    pub what: &'a str,
    /// The required shape.
    pub shape: &'a [usize],
    /// This rank, for the message.
    pub rank: i32,
}

impl Expect<'_> {
    fn fail(&self, why: String) -> String {
        format!("rank {}: {} {why}", self.rank, self.what)
    }

    /// Checks everything but the element type's borrow: type, dtype, shape, contiguity.
    fn array<'py, T: Element>(
        &self,
        obj: &Bound<'py, PyAny>,
    ) -> Result<Bound<'py, PyArrayDyn<T>>, String> {
        let py = obj.py();
        let untyped = obj.cast::<PyUntypedArray>().map_err(|_| {
            let ty = obj
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into());
            self.fail(format!(
                "must be a numpy.ndarray of dtype {} and shape {}, got {ty}",
                dtype_name::<T>(py),
                shape_str(self.shape)
            ))
        })?;
        let dtype = untyped.dtype();
        if !dtype.is_equiv_to(&numpy::dtype::<T>(py)) {
            let text = |attr: &str| {
                dtype
                    .getattr(attr)
                    .and_then(|n| n.extract::<String>())
                    .unwrap_or_else(|_| "?".into())
            };
            let (name, want) = (text("name"), dtype_name::<T>(py));
            // The same name in the other byte order: say which ('>f8 (big-endian float64)').
            let got = if name == want && text("byteorder") == ">" {
                format!("{} (big-endian {name})", text("str"))
            } else {
                name
            };
            return Err(self.fail(format!(
                "has dtype {got}, expected {want}{}",
                if got.contains("big-endian") {
                    format!(" in native byte order: pass a.astype(numpy.{want})")
                } else {
                    String::new()
                }
            )));
        }
        if untyped.shape() != self.shape {
            return Err(self.fail(format!(
                "has shape {}, expected {} (this rank's block)",
                shape_str(untyped.shape()),
                shape_str(self.shape)
            )));
        }
        let aligned = obj
            .getattr("flags")
            .and_then(|f| f.getattr("aligned"))
            .and_then(|a| a.extract::<bool>())
            .unwrap_or(false);
        if !aligned {
            return Err(self.fail(format!(
                "is not aligned: its data start at {:#x}, not a multiple of {} bytes (its \
                 element size); pass a copy, e.g. numpy.require(a, requirements='CA')",
                data_address(untyped),
                untyped.dtype().itemsize()
            )));
        }
        if !untyped.is_c_contiguous() {
            return Err(self.fail(
                "is not C-contiguous: pass numpy.ascontiguousarray(a) (dfft reads and writes \
                 the caller's memory in place, without copies)"
                    .to_string(),
            ));
        }
        obj.cast::<PyArrayDyn<T>>()
            .cloned()
            .map_err(|e| self.fail(e.to_string()))
    }

    /// A read-only borrow of a valid input array.
    pub fn input<'py, T: Element>(
        &self,
        obj: &Bound<'py, PyAny>,
    ) -> Result<PyReadonlyArrayDyn<'py, T>, String> {
        self.array::<T>(obj)?
            .try_readonly()
            .map_err(|e| self.fail(format!("cannot be read: {e}")))
    }

    /// A writable borrow of a valid output array; fails when it shares memory with a borrowed
    /// input.
    pub fn output<'py, T: Element>(
        &self,
        obj: &Bound<'py, PyAny>,
    ) -> Result<PyReadwriteArrayDyn<'py, T>, String> {
        self.array::<T>(obj)?.try_readwrite().map_err(|e| match e {
            BorrowError::NotWriteable => self.fail("is read-only".to_string()),
            _ => self.fail(
                "shares memory with the input: pass a separate output array (in place: a \
                 plan made with in_place=True, and forward_in_place/backward_in_place)"
                    .to_string(),
            ),
        })
    }
}

/// An input and an output array checked against their [`Expect`]s, borrowed when both pass.
pub struct Checked<'py, I: Element, O: Element> {
    /// This rank's verdict, for [`crate::comm::agree`].
    pub local: Result<(), String>,
    borrowed: Option<(PyReadonlyArrayDyn<'py, I>, PyReadwriteArrayDyn<'py, O>)>,
}

impl<'py, I: Element, O: Element> Checked<'py, I, O> {
    pub fn new(
        want: (&Expect<'_>, &Expect<'_>),
        input: &Bound<'py, PyAny>,
        output: &Bound<'py, PyAny>,
    ) -> Self {
        let checked = want
            .0
            .input::<I>(input)
            .and_then(|i| want.1.output::<O>(output).map(|o| (i, o)))
            .and_then(|(i, mut o)| {
                // What `slices` will need, checked now so that a failure is part of this
                // rank's verdict (agreed) instead of an error raised on this rank alone.
                let probe = i
                    .as_slice()
                    .map(drop)
                    .map_err(|e| want.0.fail(format!("cannot be read as a slice: {e}")))
                    .and_then(|()| {
                        o.as_slice_mut()
                            .map(drop)
                            .map_err(|e| want.1.fail(format!("cannot be written as a slice: {e}")))
                    });
                probe.map(|()| (i, o))
            });
        Self {
            local: checked.as_ref().map(|_| ()).map_err(|e| e.clone()),
            borrowed: checked.ok(),
        }
    }

    /// The arrays' memory, when both passed.
    #[allow(clippy::type_complexity)]
    pub fn slices(&mut self) -> PyResult<Option<(&[I], &mut [O])>> {
        let slice_error = |e: numpy::AsSliceError| value_error(e.to_string());
        match self.borrowed.as_mut() {
            Some((i, o)) => Ok(Some((
                i.as_slice().map_err(slice_error)?,
                o.as_slice_mut().map_err(slice_error)?,
            ))),
            None => Ok(None),
        }
    }
}

/// A new C-ordered array of `shape`, contents undefined (every element is written by the
/// transform that fills it).
pub fn new_array<'py, T: Element>(py: Python<'py>, shape: &[usize]) -> Bound<'py, PyArrayDyn<T>> {
    // SAFETY: the element types used here (plain integers, floats and complex floats) have no
    // invalid bit patterns, and the caller overwrites every element before Python sees the
    // array.
    unsafe { PyArrayDyn::<T>::new(py, shape.to_vec(), false) }
}

/// Where an array's first element lies.
pub fn data_address(array: &Bound<'_, PyUntypedArray>) -> usize {
    // SAFETY: a live ndarray's object; only its data pointer is read.
    unsafe { (*array.as_array_ptr()).fields.data as usize }
}

/// A zeroed C-ordered array of `shape` and `dtype` that starts on a cache line: a view of a
/// byte array a line longer (the large arrays numpy allocates start 16 bytes past a line,
/// after glibc's chunk header, so every row of whole lines would straddle two).
pub fn aligned_zeros<'py>(
    py: Python<'py>,
    shape: &[usize],
    dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let line = redist::alloc::CACHE_LINE;
    let numpy = py.import("numpy")?;
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let bytes = shape.iter().product::<usize>() * itemsize;
    let raw = numpy.getattr("zeros")?.call1((bytes + line, "uint8"))?;
    let address = data_address(raw.cast::<PyUntypedArray>()?);
    let start = (line - address % line) % line;
    raw.get_item(pyo3::types::PySlice::new(
        py,
        start as isize,
        (start + bytes) as isize,
        1,
    ))?
    .call_method1("view", (dtype,))?
    .call_method1("reshape", (pyo3::types::PyTuple::new(py, shape)?,))
}
