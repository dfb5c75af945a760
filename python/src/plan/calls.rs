//! Running a `dfft.PFFT`'s transforms: the out-of-place and in-place calls on numpy arrays,
//! dispatched to the plan's element type.

use super::{Pfft, DESTROYED};
use crate::args::Kind;
use crate::errors::{value_error, DfftError};
use crate::in_place::{run_in_place, InPlaceShapes};
use crate::transform::{run, Context};
use fft_core::{with_any_plan, Direction};
use pyo3::prelude::*;

impl Pfft {
    /// `forward` (or `backward`) of `x` into `out`.
    pub(super) fn call<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        direction: Direction,
    ) -> PyResult<Bound<'py, PyAny>> {
        let forward = direction.is_forward();
        // Disjoint field borrows: the shapes and blocks are read while the plan runs, so a
        // call copies nothing.
        let (shapes, names) = if forward {
            let shapes = (&self.input_shape[..], &self.output_shape[..]);
            (shapes, ("forward input", "forward output"))
        } else {
            let shapes = (&self.output_shape[..], &self.input_shape[..]);
            (shapes, ("backward input", "backward output"))
        };
        let live = self
            .live
            .as_deref_mut()
            .ok_or_else(|| value_error(DESTROYED.into()))?;
        let ctx = Context {
            comm: &live.comm,
            pool: live.pool.as_ref(),
            blocks: &self.blocks,
        };
        let s = shapes;
        if forward {
            with_any_plan!(&mut live.plan, p => run(py, ctx, p, x, out, names, s, fft_core::Transform::forward))
        } else {
            with_any_plan!(&mut live.plan, p => run(py, ctx, p, x, out, names, s, fft_core::Transform::backward))
        }
    }

    pub(super) fn require_in_place(&self, call: &str) -> PyResult<()> {
        if self.in_place {
            Ok(())
        } else {
            Err(DfftError::new_err(format!(
                "{call} needs a plan made with in_place=True (PFFT(..., in_place=True))"
            )))
        }
    }

    pub(super) fn in_place_shapes(&self) -> InPlaceShapes<'_> {
        InPlaceShapes {
            input: &self.input_shape,
            output: &self.output_shape,
            len: self.in_place_len,
            real_to_complex: self.kind == Kind::R2c,
        }
    }

    /// `forward_in_place` (or `backward_in_place`) of `x`.
    pub(super) fn call_in_place<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        direction: Direction,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.require_in_place(&format!("{}_in_place", direction.name()))?;
        let out_dtype = self.spectral_dtype(py)?;
        let shapes = InPlaceShapes {
            input: &self.input_shape,
            output: &self.output_shape,
            len: self.in_place_len,
            real_to_complex: self.kind == Kind::R2c,
        };
        let live = self
            .live
            .as_deref_mut()
            .ok_or_else(|| value_error(DESTROYED.into()))?;
        let ctx = Context {
            comm: &live.comm,
            pool: live.pool.as_ref(),
            blocks: &self.blocks,
        };
        with_any_plan!(&mut live.plan, p => run_in_place(py, ctx, p, x, &shapes, direction, &out_dtype))
    }
}
