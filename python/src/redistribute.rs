//! `dfft.Redistribution`: block-cyclic redistribution of numpy arrays (ScaLAPACK-style
//! distributions, `redist`'s SPEC syntax), planned once and run many times.

use crate::arrays::{new_array, Checked, Expect};
use crate::comm::{agree, agree_on_arguments, collective, from_mpi4py, thread_allowed, MpiOwned};
use crate::errors::{redist_error, value_error, DfftError};
use crate::transform::AssertSend;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use num_complex::Complex;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution as Runner, Schedule};
use redist::dist::DistArray;
use redist::{Element, StageTimes};
use std::str::FromStr;

/// The send and receive buffers' type: one variant per numpy dtype name, with the element
/// type it holds.
macro_rules! buffers {
    ($($name:literal => $variant:ident($t:ty)),* $(,)?) => {
        /// Send and receive buffers of the element type chosen at construction.
        enum Buffers {
            $($variant(Vec<$t>, Vec<$t>),)*
        }

        impl Buffers {
            fn new(dtype: &str, send: usize, recv: usize) -> PyResult<Self> {
                match dtype {
                    $($name => Ok(Buffers::$variant(
                        vec![<$t>::default(); send],
                        vec![<$t>::default(); recv],
                    )),)*
                    other => Err(DfftError::new_err(format!(
                        "unsupported dtype {other} (expected one of {})",
                        [$($name),*].join(", ")
                    ))),
                }
            }
        }
    };
}

buffers! {
    "float64" => F64(f64),
    "float32" => F32(f32),
    "complex128" => C128(Complex<f64>),
    "complex64" => C64(Complex<f32>),
    "int64" => I64(i64),
    "int32" => I32(i32),
    "uint64" => U64(u64),
    "uint32" => U32(u32),
    "uint8" => U8(u8),
}

macro_rules! with_buffers {
    ($b:expr, $send:ident, $recv:ident => $body:expr) => {
        match $b {
            Buffers::F64($send, $recv) => $body,
            Buffers::F32($send, $recv) => $body,
            Buffers::C128($send, $recv) => $body,
            Buffers::C64($send, $recv) => $body,
            Buffers::I64($send, $recv) => $body,
            Buffers::I32($send, $recv) => $body,
            Buffers::U64($send, $recv) => $body,
            Buffers::U32($send, $recv) => $body,
            Buffers::U8($send, $recv) => $body,
        }
    };
}

/// A planned redistribution of a global array of ``shape`` from distribution ``from_spec``
/// to ``to_spec`` over the processes of ``comm`` (collective).
///
/// A SPEC is ``grid=AxB..,order=row|col,dist=D0,D1,..`` with one distribution per axis:
/// ``block``, ``balanced``, ``cyclic``, ``cyclic(r)`` (block-cyclic with blocks of ``r``) or
/// ``*`` (not distributed); e.g. ``"grid=2x3,dist=cyclic(64),cyclic(64)"`` is ScaLAPACK's
/// 2-D block-cyclic layout on a 2x3 process grid. Grids may use fewer processes than ``comm``
/// has: the others hold empty blocks. ``schedule``: ``alltoallv`` (default), ``caterpillar``,
/// ``async``, ``pipelined`` or ``shared``; all give the same result.
///
/// Free it with ``destroy()`` (collective) or a ``with`` block, as ``dfft.PFFT``.
#[pyclass(module = "dfft", name = "Redistribution")]
pub struct Redistribution {
    /// The runner and its communicator; `None` once destroyed.
    live: Option<MpiOwned<(Runner, SimpleCommunicator)>>,
    rank: i32,
    schedule: Schedule,
    buffers: Buffers,
    dtype: String,
    from: DistArray,
    to: DistArray,
    src_shape: Vec<usize>,
    dst_shape: Vec<usize>,
}

#[pymethods]
impl Redistribution {
    #[new]
    #[pyo3(signature = (comm, shape, from_spec, to_spec, dtype=None, schedule="alltoallv"))]
    fn new(
        comm: &Bound<'_, PyAny>,
        shape: Vec<usize>,
        from_spec: &str,
        to_spec: &str,
        dtype: Option<&Bound<'_, PyAny>>,
        schedule: &str,
    ) -> PyResult<Self> {
        // A dtype numpy does not know is this rank's error, agreed with the others below.
        let dtype: PyResult<String> = match dtype {
            None => Ok("float64".to_string()),
            Some(d) => crate::args::dtype_name_of(d),
        };
        let comm = from_mpi4py(comm)?;
        let ranks = comm.size() as usize;
        let (dtype, dtype_error) = match dtype {
            Ok(d) => (d, None),
            Err(e) => (String::new(), Some(e)),
        };
        let checked = (|| {
            if let Some(e) = dtype_error {
                return Err(e);
            }
            let from = DistArray::parse_spec(from_spec, &shape).map_err(redist_error)?;
            let to = DistArray::parse_spec(to_spec, &shape).map_err(redist_error)?;
            let schedule = Schedule::from_str(schedule).map_err(redist_error)?;
            let plan = RedistPlan::new(&from, &to, ranks).map_err(redist_error)?;
            Buffers::new(&dtype, 0, 0)?;
            Ok((from, to, schedule, plan))
        })();
        let args = format!(
            "shape={shape:?} from={from_spec:?} to={to_spec:?} dtype={dtype} schedule={schedule}"
        );
        let (from, to, schedule, plan) = agree_on_arguments(&comm, checked, &args)?;
        let runner =
            collective(&comm, || Runner::new(&comm, &plan, schedule)).map_err(redist_error)?;
        let buffers = Buffers::new(&dtype, runner.send_len(), runner.recv_len())?;
        let rank = comm.rank() as usize;
        let (src_shape, dst_shape) = (from.local_shape(rank), to.local_shape(rank));
        Ok(Self {
            live: Some(MpiOwned::new((runner, comm))),
            rank: rank as i32,
            schedule,
            buffers,
            dtype,
            from,
            to,
            src_shape,
            dst_shape,
        })
    }

    /// Shape of this rank's source block.
    #[getter]
    fn src_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.src_shape)
    }

    /// Shape of this rank's destination block.
    #[getter]
    fn dst_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.dst_shape)
    }

    /// The element dtype.
    #[getter]
    fn dtype(&self) -> &str {
        &self.dtype
    }

    /// The source SPEC, normalized.
    #[getter(from_spec)]
    fn source_spec(&self) -> String {
        self.from.spec()
    }

    /// The destination SPEC, normalized.
    #[getter(to_spec)]
    fn destination_spec(&self) -> String {
        self.to.spec()
    }

    /// Global index (one int per axis) of this rank's source element at local ``offset``
    /// (C order in the local block): which element a local value is.
    #[pyo3(signature = (offset, destination=false))]
    fn global_index(&self, offset: usize, destination: bool) -> PyResult<Vec<usize>> {
        let (dist, shape) = if destination {
            (&self.to, &self.dst_shape)
        } else {
            (&self.from, &self.src_shape)
        };
        let len: usize = shape.iter().product();
        if offset >= len {
            return Err(value_error(format!(
                "offset {offset} is outside this rank's block of {len} elements"
            )));
        }
        Ok(dist.global_of(self.rank as usize, offset))
    }

    /// Moves ``src`` (this rank's source block, C order) into ``out`` (its destination block;
    /// allocated when ``None``) and returns it. Collective.
    #[pyo3(signature = (src, out=None))]
    fn execute<'py>(
        &mut self,
        py: Python<'py>,
        src: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rank = self.rank;
        let src_shape = self.src_shape.clone();
        let dst_shape = self.dst_shape.clone();
        let want_src = Expect {
            what: "source block",
            shape: &src_shape,
            rank,
        };
        let want_dst = Expect {
            what: "destination block",
            shape: &dst_shape,
            rank,
        };
        let (runner, comm) = &mut **self
            .live
            .as_mut()
            .ok_or_else(|| value_error(DESTROYED.to_string()))?;
        let comm = &*comm;
        with_buffers!(&mut self.buffers, send, recv => {
            let target = match out {
                Some(o) => o.clone(),
                None => new_array_like(py, send, &dst_shape).into_any(),
            };
            let mut checked = Checked::new((&want_src, &want_dst), src, &target);
            let local = thread_allowed(rank).and(checked.local.clone());
            let slices = checked.slices()?;
            let state = AssertSend((comm, runner, send, recv, slices));
            let outcome = py.detach(move || {
                let (comm, runner, send, recv, slices) = state.into_inner();
                collective(comm, move || {
                    agree(comm, local).map_err(Err)?;
                    let (s, d) = slices.expect("checked on this rank");
                    // Agreed above and sized from the runner: no second agreement.
                    runner
                        .execute_sized(s, d, send, recv, &mut StageTimes::default())
                        .map_err(Ok)
                })
            });
            drop(checked);
            match outcome {
                Ok(()) => Ok(target),
                Err(Err(message)) => Err(value_error(message)),
                Err(Ok(e)) => Err(redist_error(e)),
            }
        })
    }

    /// Runs ``execute`` ``repeat`` times on blocks it allocates, entirely in Rust, after one
    /// untimed run, each run after a barrier, and returns the seconds of each timed run (this
    /// rank's clock): the Rust runner's own time, to compare with the Python call's. Collective.
    #[pyo3(signature = (repeat=10))]
    fn time_rust(&mut self, py: Python<'_>, repeat: usize) -> PyResult<Vec<f64>> {
        let n_src: usize = self.src_shape.iter().product();
        let n_dst: usize = self.dst_shape.iter().product();
        let (runner, comm) = &mut **self
            .live
            .as_mut()
            .ok_or_else(|| value_error(DESTROYED.to_string()))?;
        let comm = &*comm;
        agree(comm, thread_allowed(self.rank))
            .map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
        with_buffers!(&mut self.buffers, send, recv => {
            let state = AssertSend((comm, runner, send, recv));
            py.detach(move || {
                let (comm, runner, send, recv) = state.into_inner();
                collective(comm, move || time_runs(comm, runner, send, recv, n_src, n_dst, repeat))
            })
            .map_err(redist_error)
        })
    }

    /// Frees the redistribution's MPI objects now; collective, idempotent (see
    /// ``PFFT.destroy``).
    fn destroy(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(live) = &self.live {
            agree(&live.1, thread_allowed(self.rank))
                .map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
        }
        if let Some(live) = self.live.take() {
            let (runner, comm) = live.into_inner();
            let state = AssertSend((runner, comm));
            py.detach(move || {
                let (runner, comm) = state.into_inner();
                collective(&comm, move || drop(runner));
            });
        }
        Ok(())
    }

    /// Whether ``destroy`` has run.
    #[getter]
    fn destroyed(&self) -> bool {
        self.live.is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Destroys the redistribution at the end of a ``with`` block.
    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.destroy(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "Redistribution(shape={:?}, from_spec='{}', to_spec='{}', dtype={}, schedule='{}')",
            self.from.shape(),
            self.from.spec(),
            self.to.spec(),
            self.dtype,
            self.schedule
        )
    }
}

impl Drop for Redistribution {
    fn drop(&mut self) {
        if let Some(live) = self.live.take() {
            // As for PFFT: freeing MPI objects is collective and Python's drop order differs
            // between ranks, so only `destroy` frees them.
            std::mem::forget(live);
        }
    }
}

const DESTROYED: &str =
    "this Redistribution was destroyed (destroy() or the end of its with block)";

/// `repeat` timed runs of `runner` (after one untimed run), each after a barrier, on zeroed blocks of `n_src` and
/// `n_dst` elements.
fn time_runs<T: Element>(
    comm: &SimpleCommunicator,
    runner: &mut Runner,
    send: &mut [T],
    recv: &mut [T],
    n_src: usize,
    n_dst: usize,
    repeat: usize,
) -> redist::Result<Vec<f64>> {
    let mut src = vec![T::default(); n_src];
    let mut dst = vec![T::default(); n_dst];
    // Written, not only allocated: a zeroed allocation that is only read maps the kernel's
    // single zero page, which reads faster than a caller's array.
    src.iter_mut()
        .chain(dst.iter_mut())
        .for_each(|x| *x = std::hint::black_box(T::default()));
    let mut times = Vec::with_capacity(repeat + 1);
    for _ in 0..=repeat {
        // Each run starts together on every rank, as a caller's timing after a barrier does.
        comm.barrier();
        let t = std::time::Instant::now();
        runner.execute_sized(&src, &mut dst, send, recv, &mut StageTimes::default())?;
        times.push(t.elapsed().as_secs_f64());
    }
    // The first run touched the pages, as a caller's arrays have been.
    times.remove(0);
    std::hint::black_box(&mut dst);
    Ok(times)
}

/// The global shape of an array distributed by `spec` whose blocks have the shapes `blocks`
/// (one per rank of the communicator, in rank order). Along each axis, the blocks of the
/// ranks at grid coordinate 0 on every other axis add up to the global length; the result is
/// checked by recomputing every rank's block from it. Pure: the caller gathers `blocks`, so
/// every rank gets the same answer or the same error.
#[pyfunction]
#[pyo3(name = "_global_shape")]
pub fn global_shape(spec: &str, blocks: Vec<Vec<usize>>) -> PyResult<Vec<usize>> {
    let ndim = blocks.first().map_or(0, Vec::len);
    if let Some((r, b)) = blocks.iter().enumerate().find(|(_, b)| b.len() != ndim) {
        return Err(DfftError::new_err(format!(
            "rank {r} holds a {}-dimensional block, rank 0 a {ndim}-dimensional one",
            b.len()
        )));
    }
    // Any shape at least as large parses to the same grid and rank coordinates.
    let probe: Vec<usize> = (0..ndim)
        .map(|a| blocks.iter().map(|b| b[a]).sum::<usize>().max(1))
        .collect();
    let dist = DistArray::parse_spec(spec, &probe).map_err(redist_error)?;
    if dist.ranks_needed() > blocks.len() {
        return Err(DfftError::new_err(format!(
            "{spec:?} needs {} ranks, the communicator has {}",
            dist.ranks_needed(),
            blocks.len()
        )));
    }
    let coords: Vec<Option<Vec<usize>>> = (0..blocks.len()).map(|r| dist.axis_coords(r)).collect();
    let shape: Vec<usize> = (0..ndim)
        .map(|a| {
            coords
                .iter()
                .zip(&blocks)
                .filter(|(c, _)| {
                    c.as_ref()
                        .is_some_and(|c| c.iter().enumerate().all(|(i, &x)| i == a || x == 0))
                })
                .map(|(_, b)| b[a])
                .sum()
        })
        .collect();
    let dist = DistArray::parse_spec(spec, &shape).map_err(redist_error)?;
    for (r, b) in blocks.iter().enumerate() {
        let want = dist.local_shape(r);
        if *b != want {
            return Err(DfftError::new_err(format!(
                "the blocks are not {spec:?} of any global shape: with shape {shape:?} rank \
                 {r} would hold {want:?}, it holds {b:?}"
            )));
        }
    }
    Ok(shape)
}

/// A new array of the element type of `like` (a buffer of that type).
fn new_array_like<'py, T: numpy::Element>(
    py: Python<'py>,
    _like: &[T],
    shape: &[usize],
) -> Bound<'py, numpy::PyArrayDyn<T>> {
    new_array::<T>(py, shape)
}
