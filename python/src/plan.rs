//! `dfft.PFFT`: a distributed FFT plan on numpy arrays, after mpi4py-fft's `PFFT`.

mod calls;
mod making;

use crate::args::Kind;
use crate::arrays::{aligned_zeros, shape_str};
use crate::blocks::Blocks;
use crate::comm::{agree, agree_on_arguments, collective, from_mpi4py, thread_allowed, MpiOwned};
use crate::errors::{fft_error, value_error, DfftError};
use crate::halo::{exchange_halo, halo_widths, HaloCache, HaloRequest};
use crate::in_place::{zeros as zeros_in_place, InPlaceShapes};
use crate::one_d::OneDBlocks;
use crate::spectral::{self, AxisWaves};
use crate::transform::{time_runs, AssertSend, Context, Transform};
use fft_core::model::{self, MachineProfile, Problem};
use fft_core::{
    with_any_plan, AnyPlan, AxisKind, Complex, Direction, Normalization, SpectralAxis, SpectralGrid,
};
use making::{make_plan, thread_pool, Request};
use mpi::topology::SimpleCommunicator;
use numpy::ndarray::IxDyn;
use numpy::prelude::*;
use numpy::{PyArray1, PyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use redist::Layout;

/// A distributed FFT of a global array over the processes of an mpi4py communicator, planned
/// once and run many times on numpy arrays (no copies; the GIL is released while it runs).
///
/// Arguments follow mpi4py-fft's ``PFFT``:
///
/// * ``comm``: an ``mpi4py.MPI.Intracomm`` (duplicated; the plan never uses the caller's).
/// * ``shape``: the global shape (the spectral resolution when padded). A 1-D shape ``(n,)``
///   makes a distributed 1-D c2c transform (the four-step method): each rank holds one
///   contiguous range of the axis (``local_slice``), in the input's and the output's own
///   ranges.
/// * ``kind``: ``"c2c"``, ``"r2c"`` (real input, half spectrum along the last axis, as
///   ``numpy.fft.rfftn``) or ``"r2r"`` (a real-to-real kind on every axis); by default
///   ``"r2c"`` for a real ``dtype`` and ``"c2c"`` for a complex one.
/// * ``dtype``: the forward input's dtype: ``float64``/``float32`` (r2c, r2r) or
///   ``complex128``/``complex64`` (c2c); default ``float64``, or ``complex128`` for c2c.
/// * ``grid``: ``"auto"`` (the complexity model chooses), a grid rank (``1`` slabs, ``2``
///   pencils) or the grid's dimensions as a tuple.
/// * ``axes_kinds``: per axis ``"fft"``, ``"identity"`` (not transformed) or a real-to-real
///   kind (``"dct1"`` .. ``"dst4"``, ``"r2hc"``, ``"hc2r"``, ``"dht"``).
/// * ``axes``: the axes transformed (numpy's ``fftn(x, axes=...)``; negative counts from the
///   end); the others are left as they are. With ``axes_kinds`` it marks the other axes
///   ``"identity"``. An r2c plan halves the last axis listed in increasing order.
/// * ``deterministic``: the same bits whatever the ranks, grid and threads (see the docs).
/// * ``scrambled_in``, ``scrambled_out`` (1-D shapes only): FFTW-MPI's ``SCRAMBLED_IN`` and
///   ``SCRAMBLED_OUT``: the forward input (output) in the scrambled order, saving an
///   exchange; ``local_slice`` then gives positions in that order (see the docs).
/// * ``normalization``: ``"backward"`` (numpy's default: 1/N on backward), ``"forward"``
///   (1/N on forward: mpi4py-fft's and FluidFFT's), ``"ortho"`` or ``"none"``.
/// * ``transposed_out``: leave the spectrum in the last pencil layout (its axes permuted, see
///   ``spectral_axes``), skipping the exchanges back.
/// * ``padding``: a factor (or one per axis) >= 1 for dealiasing: the physical grid has
///   ``floor(N * factor)`` points, the spectrum keeps the ``N`` modes of ``shape``.
/// * ``batch``: fields transformed together (arrays get a leading axis of that length).
/// * ``groups``: how a batch is split over the ranks: ``1`` (every rank transforms every
///   field), ``G`` (G groups of P/G ranks transform about batch/G fields each on their own
///   sub-communicators; G divides P and is at most ``batch``) or ``"auto"`` (the complexity
///   model picks, with ``machine``). The arrays are the same either way; ``plan.groups``
///   tells the count used.
/// * ``threads``: threads per rank; default: this process's CPUs divided by the ranks on
///   its node. With MPI below ``MPI_THREAD_SERIALIZED`` the plan uses rayon's global pool
///   whatever its size; ``plan.threads`` tells what it uses.
/// * ``machine``: the machine profile the complexity model uses for ``grid="auto"`` (a dict,
///   or the path of a JSON file as ``dfft calibrate`` writes); default: a generic cluster
///   node.
/// * ``in_place``: also plan in-place transforms (``forward_in_place``,
///   ``backward_in_place`` on one buffer, as FFTW plans with ``in == out``).
///
/// Every argument error is a ``ValueError`` (``dfft.DfftError``) raised on every rank.
///
/// Free the plan with ``destroy()`` (collective) or a ``with`` block: a plan that Python
/// merely drops keeps its MPI objects (see ``destroy``).
#[pyclass(module = "dfft", name = "PFFT")]
pub struct Pfft {
    live: Option<MpiOwned<Live>>,
    /// The arrays' memory that `alloc` made.
    blocks: Blocks,
    mpi4py_comm: Py<PyAny>,
    single: bool,
    rank: usize,
    size: usize,
    grid_dims: Vec<usize>,
    input_layout: Layout,
    output_layout: Layout,
    kind: Kind,
    axes: Vec<AxisKind>,
    resolution: Vec<usize>,
    normalization: Normalization,
    transposed_out: bool,
    batch: usize,
    /// Groups of ranks the batch is split into.
    groups: usize,
    threads: usize,
    machine: MachineProfile,
    /// Whether the plan was made with `in_place` (its in-place schedule).
    in_place: bool,
    /// Elements of the forward input's type in this rank's in-place buffer.
    in_place_len: usize,
    /// Local forward-input array shape (batch first when batch > 1).
    input_shape: Vec<usize>,
    /// Local forward-output array shape, memory order (batch first when batch > 1).
    output_shape: Vec<usize>,
    /// A distributed 1-D transform's ranges of the axis, forward input and output.
    one_d: Option<OneDBlocks>,
}

/// What `destroy` frees: the plan, its communicator and its threads.
struct Live {
    plan: AnyPlan,
    comm: SimpleCommunicator,
    pool: Option<rayon::ThreadPool>,
    /// `exchange_halo`'s plans, kept for later calls.
    halos: HaloCache,
}

impl Drop for Pfft {
    fn drop(&mut self) {
        if let Some(live) = self.live.take() {
            let Live {
                plan,
                comm,
                pool,
                halos,
            } = live.into_inner();
            // Freeing the plan's MPI objects (shared-memory windows, communicators) is
            // collective, and Python drops objects at moments that differ between ranks (its
            // cycle collector runs when each process's allocations say so) or after
            // MPI_Finalize: freeing here could deadlock or fail, so only `destroy` frees them.
            drop(pool);
            self.blocks.give_up();
            std::mem::forget(plan);
            std::mem::forget(comm);
            std::mem::forget(halos);
        }
    }
}

const DESTROYED: &str = "this PFFT was destroyed (destroy() or the end of its with block)";

impl Pfft {
    fn live_mut(&mut self) -> PyResult<&mut Live> {
        self.live
            .as_deref_mut()
            .ok_or_else(|| value_error(DESTROYED.to_string()))
    }

    fn live(&self) -> PyResult<&Live> {
        self.live
            .as_deref()
            .ok_or_else(|| value_error(DESTROYED.to_string()))
    }

    /// Agrees that this thread may call MPI (see [`thread_allowed`]) before a collective step
    /// that has no argument checks of its own. Collective.
    fn agree_on_thread(&self) -> PyResult<()> {
        let live = self.live()?;
        agree(&live.comm, thread_allowed(self.rank as i32))
            .map_err(pyo3::exceptions::PyRuntimeError::new_err)
    }

    fn layout(&self, spectral: bool) -> &Layout {
        if spectral {
            &self.output_layout
        } else {
            &self.input_layout
        }
    }

    /// numpy's names of the forward input's and output's dtypes.
    fn dtype_names(&self) -> (&'static str, &'static str) {
        match (self.kind, self.single) {
            (Kind::C2c, false) => ("complex128", "complex128"),
            (Kind::C2c, true) => ("complex64", "complex64"),
            (Kind::R2c, false) => ("float64", "complex128"),
            (Kind::R2c, true) => ("float32", "complex64"),
            (Kind::R2r, false) => ("float64", "float64"),
            (Kind::R2r, true) => ("float32", "float32"),
        }
    }

    /// This rank's range of every axis of the forward input (`spectral`: output), logical
    /// order: the layout's, or a 1-D transform's range of its axis.
    fn local_ranges(&self, spectral: bool) -> Vec<std::ops::Range<usize>> {
        match &self.one_d {
            Some(blocks) => vec![blocks.ranges[usize::from(spectral)].clone()],
            None => self.layout(spectral).global_ranges(self.rank),
        }
    }

    /// The logical axis of each axis of a local array (slowest first).
    fn memory_axes(&self, spectral: bool) -> Vec<usize> {
        match &self.one_d {
            Some(_) => vec![0],
            None => self.layout(spectral).memory_order().axes().to_vec(),
        }
    }

    fn with_batch(&self, shape: Vec<usize>) -> Vec<usize> {
        if self.batch > 1 {
            std::iter::once(self.batch).chain(shape).collect()
        } else {
            shape
        }
    }

    /// Local wavenumbers per logical axis.
    fn waves(&self) -> Vec<AxisWaves> {
        if let Some(blocks) = &self.one_d {
            return vec![blocks.waves(self.resolution[0])];
        }
        let ranges = self.local_ranges(true);
        let d = ranges.len();
        (0..d)
            .map(|a| {
                spectral::axis_waves(
                    self.axes[a],
                    self.resolution[a],
                    self.kind == Kind::R2c && a + 1 == d,
                    ranges[a].clone(),
                )
            })
            .collect()
    }
}

#[pymethods]
impl Pfft {
    #[new]
    #[pyo3(signature = (comm, shape, kind=None, dtype=None, grid=None, axes_kinds=None,
        normalization="backward", transposed_out=false, padding=None, batch=1, threads=None,
        machine=None, in_place=false, axes=None, deterministic=false, scrambled_in=false,
        scrambled_out=false, groups=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        comm: &Bound<'_, PyAny>,
        shape: Vec<usize>,
        kind: Option<&str>,
        dtype: Option<&Bound<'_, PyAny>>,
        grid: Option<&Bound<'_, PyAny>>,
        axes_kinds: Option<Vec<String>>,
        normalization: &str,
        transposed_out: bool,
        padding: Option<&Bound<'_, PyAny>>,
        batch: usize,
        threads: Option<usize>,
        machine: Option<&Bound<'_, PyAny>>,
        in_place: bool,
        axes: Option<Vec<isize>>,
        deterministic: bool,
        scrambled_in: bool,
        scrambled_out: bool,
        groups: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let request = Request {
            shape: &shape,
            kind,
            dtype,
            grid,
            axes_kinds,
            normalization,
            transposed_out,
            padding,
            batch,
            threads,
            machine,
            in_place,
            axes,
            deterministic,
            scrambled: (scrambled_in, scrambled_out),
            groups,
        };
        // Checked on every rank, then agreed on once the communicator is duplicated: a rank
        // whose arguments are wrong or differ must not leave the others in the plan's set-up.
        let checked = request.checked();
        let comm_dup = from_mpi4py(comm)?;
        let args = match &checked {
            Ok(c) => format!(
                "shape={shape:?} kind={:?} single={} {:?}",
                c.kind, c.single, c.options
            ),
            Err(_) => String::new(),
        };
        let checked = agree_on_arguments(&comm_dup, checked, &args)?;
        let (pool, threads) = thread_pool(py, &comm_dup, threads)?;
        let plan = make_plan(&comm_dup, pool.as_ref(), &checked, &shape)?;
        let live = Live {
            plan,
            comm: comm_dup,
            pool,
            halos: HaloCache::default(),
        };
        Ok(Self::from_plan(comm, live, threads, &request, checked))
    }

    /// The forward transform of ``a`` (shape ``local_shape``, dtype ``dtype``) into ``out``
    /// (shape ``local_spectral_shape``, dtype ``spectral_dtype``; allocated when ``None``).
    /// Collective. Returns the output array. ``a`` is left unchanged.
    #[pyo3(signature = (a, out=None))]
    fn forward<'py>(
        &mut self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, a, out, Direction::Forward)
    }

    /// This rank's block of the forward input ``u`` (shape ``local_shape``, dtype ``dtype``)
    /// extended by ``width`` cells on both sides of every axis (an int, or one per axis),
    /// the extra cells from the neighbours' blocks: ``numpy.pad(x, w, mode="wrap")`` of the
    /// global array ``x`` sliced to this rank's block widened by ``w`` (with
    /// ``periodic=False``: ``mode="constant"`` with ``fill``, default 0). Widths may exceed
    /// the neighbours' blocks and the axis (cells from several ranks). A new array (batch
    /// first when ``batch > 1``); ``u`` is unchanged. Collective. With ``in_place=True``,
    /// ``u`` is the extended array itself (``local_shape`` plus ``2 * width`` per axis), its
    /// interior ``u[w0:-w0, ...]`` holding the block: only its halo cells are written (no
    /// copy of the block), and ``u`` is returned. The halo plan of each widths and boundary is
    /// made on its first call and kept (up to 8) until ``destroy``. A 1-D plan has no halo.
    #[pyo3(signature = (u, width, periodic=true, fill=None, in_place=false))]
    fn exchange_halo<'py>(
        &mut self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        width: &Bound<'py, PyAny>,
        periodic: bool,
        fill: Option<&Bound<'py, PyAny>>,
        in_place: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if self.one_d.is_some() {
            // Its blocks are ranges of one axis planned as a 2-axis layout (see the C API).
            return Err(DfftError::new_err(format!(
                "exchange_halo needs a plan of 2 or more axes; this plan is 1-D (shape {})",
                shape_str(&self.resolution)
            )));
        }
        let widths = halo_widths(width, self.input_layout.ndim())?;
        let fill = match (periodic, fill) {
            (true, Some(_)) => return Err(DfftError::new_err(
                "fill is the value past the boundary of a non-periodic halo: pass periodic=False",
            )),
            (true, None) => None,
            (false, None) => Some(Complex::new(0.0, 0.0)),
            (false, Some(v)) => Some(match v.extract::<f64>() {
                Ok(re) => Complex::new(re, 0.0),
                Err(_) => Complex::new(
                    v.getattr("real")?.extract::<f64>()?,
                    v.getattr("imag")?.extract::<f64>()?,
                ),
            }),
        };
        let (shape, rank) = (self.input_shape.clone(), self.rank);
        let live = self.live_mut()?;
        let request = HaloRequest {
            widths: &widths,
            fill,
            shape: &shape,
            rank,
            in_place,
        };
        let (comm, halos) = (&live.comm, &mut live.halos);
        with_any_plan!(&live.plan, p => exchange_halo(py, comm, p, halos, u, request))
    }

    /// The backward transform of ``b`` (shape ``local_spectral_shape``) into ``out`` (shape
    /// ``local_shape``; allocated when ``None``). Collective. Returns the output array. ``b``
    /// is left unchanged.
    #[pyo3(signature = (b, out=None))]
    fn backward<'py>(
        &mut self,
        py: Python<'py>,
        b: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, b, out, Direction::Backward)
    }

    /// The forward transform in place (a plan made with ``in_place=True``): ``a`` is the
    /// forward input as a view of an in-place buffer of this rank, as ``zeros(in_place=True)``
    /// makes (for c2c and r2r, an array of ``local_shape`` is its own buffer when
    /// ``in_place_len`` is its size; for r2c, FFTW's layout: the last axis padded to
    /// ``2*(n//2+1)`` scalars). Returns the spectrum, a view of the same buffer
    /// (``local_spectral_shape``, ``spectral_dtype``); ``a``'s values are gone. A view into
    /// a larger array, or an array of another layout, raises ``ValueError`` on every rank.
    /// Collective; allocates nothing.
    fn forward_in_place<'py>(
        &mut self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call_in_place(py, a, Direction::Forward)
    }

    /// The backward transform in place: ``b`` is the spectrum as a view of an in-place
    /// buffer (what ``forward_in_place`` returns, or ``zeros(True, in_place=True)``).
    /// Returns the physical array, a view of the same buffer. Collective.
    fn backward_in_place<'py>(
        &mut self,
        py: Python<'py>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call_in_place(py, b, Direction::Backward)
    }

    /// Whether the plan was made with ``in_place=True``.
    #[getter(in_place)]
    fn get_in_place(&self) -> bool {
        self.in_place
    }

    /// Elements (of ``dtype``) of this rank's in-place buffer: at least the forward input's
    /// and output's (for r2c, scalars: FFTW's padded real block or twice the complex one).
    /// 0 for a plan made without ``in_place``.
    #[getter(in_place_len)]
    fn get_in_place_len(&self) -> usize {
        if self.in_place {
            self.in_place_len
        } else {
            0
        }
    }

    /// Runs ``forward`` (or ``backward``) ``repeat`` times on arrays it allocates, entirely in
    /// Rust, after one untimed run, each run after a barrier, and returns the seconds of each
    /// timed run (this rank's clock): the Rust plan's own time, to compare with the Python
    /// call's. With ``alloc=True`` the arrays are in the plan's memory, as ``alloc`` makes
    /// them; else private memory on a cache line, as ``zeros`` makes. Collective.
    #[pyo3(signature = (repeat=10, backward=false, alloc=false))]
    fn time_rust(
        &mut self,
        py: Python<'_>,
        repeat: usize,
        backward: bool,
        alloc: bool,
    ) -> PyResult<Vec<f64>> {
        let n_in: usize = self.input_shape.iter().product();
        let n_out: usize = self.output_shape.iter().product();
        self.agree_on_thread()?;
        let blocks = self.blocks.clone();
        let live = self.live_mut()?;
        let ctx = Context {
            comm: &live.comm,
            pool: live.pool.as_ref(),
            blocks: &blocks,
        };
        let state = AssertSend((ctx, &mut live.plan));
        py.detach(move || {
            let (ctx, plan) = state.into_inner();
            let comm = ctx.comm;
            collective(
                comm,
                move || with_any_plan!(plan, p => time_runs(p, ctx, (n_in, n_out), repeat, backward, alloc)),
            )
        })
        .map_err(fft_error)
    }

    /// The global shape of the physical array (padded when ``padding`` is given), or of the
    /// spectrum with ``spectral=True`` (logical axis order; no batch axis).
    #[pyo3(signature = (spectral=false))]
    fn global_shape_of<'py>(
        &self,
        py: Python<'py>,
        spectral: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        match &self.one_d {
            Some(_) => PyTuple::new(py, &self.resolution),
            None => PyTuple::new(py, self.layout(spectral).global_shape()),
        }
    }

    /// Global shape of the physical array (forward input), logical axis order.
    #[getter]
    fn global_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.global_shape_of(py, false)
    }

    /// Global shape of the spectrum (forward output), logical axis order.
    #[getter]
    fn spectral_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.global_shape_of(py, true)
    }

    /// Shape of this rank's forward-input array (batch first when ``batch > 1``).
    #[getter]
    fn local_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.input_shape)
    }

    /// Shape of this rank's forward-output array, its axes in ``spectral_axes`` order (batch
    /// first when ``batch > 1``).
    #[getter]
    fn local_spectral_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.output_shape)
    }

    /// mpi4py-fft's ``shape(forward_output)``: ``local_spectral_shape`` or ``local_shape``.
    #[pyo3(signature = (forward_output=false))]
    fn shape<'py>(&self, py: Python<'py>, forward_output: bool) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            if forward_output {
                &self.output_shape
            } else {
                &self.input_shape
            },
        )
    }

    /// The logical axis held by each axis of a local spectral array (slowest first): the
    /// identity unless ``transposed_out``. The physical arrays are always in logical order.
    #[getter]
    fn spectral_axes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.memory_axes(true))
    }

    /// This rank's block as slices of the global array, one per axis of the local array: for
    /// the physical array ``global[plan.local_slice()] == local``; for the spectrum
    /// ``global.transpose(plan.spectral_axes)[plan.local_slice(True)] == local``. No batch
    /// axis.
    #[pyo3(signature = (spectral=false))]
    fn local_slice<'py>(&self, py: Python<'py>, spectral: bool) -> PyResult<Bound<'py, PyTuple>> {
        let ranges = self.local_ranges(spectral);
        let slices = (self.memory_axes(spectral).iter())
            .map(|&a| PySlice::new(py, ranges[a].start as isize, ranges[a].end as isize, 1))
            .collect::<Vec<_>>();
        PyTuple::new(py, slices)
    }

    /// The processor grid's dimensions (one per distributed axis; ``len == 1``: slabs).
    #[getter]
    fn grid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.grid_dims)
    }

    /// ``"c2c"``, ``"r2c"`` or ``"r2r"``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.name()
    }

    /// The forward input's dtype.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("numpy")?
            .getattr("dtype")?
            .call1((self.dtype_names().0,))
    }

    /// The forward output's dtype.
    #[getter]
    fn spectral_dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("numpy")?
            .getattr("dtype")?
            .call1((self.dtype_names().1,))
    }

    /// The normalization's name.
    #[getter]
    fn normalization(&self) -> &'static str {
        self.normalization.name()
    }

    /// Whether the spectrum stays in the last pencil layout.
    #[getter]
    fn transposed_out(&self) -> bool {
        self.transposed_out
    }

    /// Fields per call.
    #[getter]
    fn batch(&self) -> usize {
        self.batch
    }

    /// Groups of ranks the batch is split into (1: every rank transforms every field).
    #[getter]
    fn groups(&self) -> usize {
        self.groups
    }

    /// Threads per rank.
    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }

    /// Each axis's kind: ``"fft"`` or a real-to-real kind.
    #[getter]
    fn axes_kinds(&self) -> Vec<&'static str> {
        self.axes
            .iter()
            .map(|k| match k {
                AxisKind::Fft => "fft",
                AxisKind::R2r(r) => r.name(),
                AxisKind::Identity => "identity",
            })
            .collect()
    }

    /// The mpi4py communicator the plan was made with.
    #[getter]
    fn comm(&self, py: Python<'_>) -> Py<PyAny> {
        self.mpi4py_comm.clone_ref(py)
    }

    /// This rank in the communicator.
    #[getter(rank)]
    fn get_rank(&self) -> usize {
        self.rank
    }

    /// Work memory the plan holds besides the caller's arrays, in bytes.
    #[getter]
    fn work_bytes(&self) -> PyResult<usize> {
        Ok(self.live()?.plan.work_bytes())
    }

    /// The complexity model's prediction for the grid in use (seconds per forward+backward
    /// pair and its terms), as a dict; the profile is the one ``grid="auto"`` used.
    #[getter]
    fn prediction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let problem = self.problem();
        let grid = redist::GridShape::new(self.grid_dims.clone())
            .map_err(|e| DfftError::new_err(e.to_string()))?;
        let prediction = model::predict(&problem, &grid, &self.machine).map_err(fft_error)?;
        json_to_py(py, &prediction)
    }

    /// Every candidate grid the model weighed for this problem, chosen one first, as dicts.
    fn candidates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let evaluated = model::evaluate(&self.problem(), &self.machine).map_err(fft_error)?;
        json_to_py(py, &evaluated)
    }

    /// Seconds per stage since the plan was made or ``reset_times``, this rank.
    fn times<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.live()?.plan.times();
        let d = pyo3::types::PyDict::new(py);
        d.set_item("fft", t.fft)?;
        d.set_item("pack", t.pack)?;
        d.set_item("comm", t.comm)?;
        d.set_item("unpack", t.unpack)?;
        Ok(d.into_any())
    }

    /// Zeroes the stage timers.
    fn reset_times(&mut self) -> PyResult<()> {
        self.live_mut()?.plan.reset_times();
        Ok(())
    }

    /// Frees the plan's memory, threads and MPI objects now. Collective: every rank of the
    /// communicator calls it, in the same order as for their other collective calls. Python
    /// drops objects at moments that differ between ranks, or after MPI is finalized, so a plan
    /// it drops without ``destroy`` keeps them (freeing them then could deadlock). Idempotent;
    /// a destroyed plan raises ``ValueError`` when used.
    fn destroy(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.live.is_some() {
            self.agree_on_thread()?;
        }
        if let Some(live) = self.live.take() {
            let Live {
                plan,
                comm,
                pool,
                halos,
            } = live.into_inner();
            drop(pool);
            let state = AssertSend((plan, comm, halos, &self.blocks));
            py.detach(move || {
                let (plan, comm, halos, blocks) = state.into_inner();
                collective(&comm, || {
                    blocks.free(&comm);
                    drop(halos);
                    drop(plan)
                });
            });
        }
        Ok(())
    }

    /// How many halo plans ``exchange_halo`` has made (each with its own duplicated
    /// communicator); calls with widths and a boundary seen before reuse theirs.
    #[getter]
    fn halo_plans_made(&self) -> PyResult<usize> {
        Ok(self.live()?.halos.made)
    }

    /// Whether ``destroy`` has run.
    #[getter]
    fn destroyed(&self) -> bool {
        self.live.is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Destroys the plan at the end of a ``with`` block.
    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.destroy(py)?;
        Ok(false)
    }

    /// A zeroed local array like ``zeros``, in memory the plan allocates: with all ranks on
    /// one node, one shared-memory window holds this array of every rank, and ``forward`` and
    /// ``backward`` between such arrays move the rows that cross ranks straight between the
    /// ranks' arrays, without packing, messages or unpacking (the fastest way to call the
    /// plan; other arrays work too). Collective: every rank calls it, and passes the arrays
    /// of the same calls to each transform (a ``ValueError`` on every rank otherwise). The
    /// memory stays with the plan when an array goes; ``destroy`` frees it if no rank still
    /// uses any of these arrays, else it lasts until the process ends.
    #[pyo3(signature = (spectral=false))]
    fn alloc<'py>(&mut self, py: Python<'py>, spectral: bool) -> PyResult<Bound<'py, PyAny>> {
        let shape = if spectral {
            self.output_shape.clone()
        } else {
            self.input_shape.clone()
        };
        self.agree_on_thread()?;
        let blocks = self.blocks.clone();
        let live = self.live_mut()?;
        fn lend<'py, P: Transform>(
            py: Python<'py>,
            comm: &SimpleCommunicator,
            plan: &mut P,
            blocks: &Blocks,
            spectral: bool,
            shape: &[usize],
        ) -> PyResult<Bound<'py, PyAny>>
        where
            P::In: Send + 'static,
            P::Out: Send + 'static,
        {
            let state = AssertSend((comm, plan));
            let block = py.detach(move || {
                let (comm, plan) = state.into_inner();
                collective(comm, move || {
                    if spectral {
                        plan.alloc_output().map(|b| AssertSend((None, Some(b))))
                    } else {
                        plan.alloc_input().map(|b| AssertSend((Some(b), None)))
                    }
                })
            });
            match block.map_err(fft_error)?.into_inner() {
                (Some(b), _) => blocks.lend(py, b, shape),
                (_, Some(b)) => blocks.lend(py, b, shape),
                (None, None) => unreachable!("one block allocated"),
            }
        }
        let comm = &live.comm;
        with_any_plan!(&mut live.plan, p => lend(py, comm, p, &blocks, spectral, &shape))
    }

    /// A zeroed local array: the forward input, or with ``spectral=True`` the forward output
    /// (mpi4py-fft's ``newDistArray``), starting on a cache line (numpy's large arrays start
    /// 16 bytes past one, so that every row of whole cache lines straddles two, like
    /// pyFFTW's ``empty_aligned``). With ``in_place=True`` (a plan made with
    /// ``in_place``), that array is a view of a new in-place buffer, on a cache line too
    /// (see ``forward_in_place``): for r2c, FFTW's padded real layout, a strided view.
    #[pyo3(signature = (spectral=false, in_place=false))]
    fn zeros<'py>(
        &self,
        py: Python<'py>,
        spectral: bool,
        in_place: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if in_place {
            self.require_in_place("zeros(in_place=True)")?;
            let out_dtype = self.spectral_dtype(py)?;
            let shapes = self.in_place_shapes();
            return with_any_plan!(&self.live()?.plan, p => zeros_of(p, py, &shapes, spectral, &out_dtype));
        }
        let (shape, dtype) = if spectral {
            (&self.output_shape, self.spectral_dtype(py)?)
        } else {
            (&self.input_shape, self.dtype(py)?)
        };
        aligned_zeros(py, shape, &dtype)
    }

    /// The wavenumbers this rank holds along each logical axis (int64 arrays, one per axis, in
    /// logical order): ``numpy.fft.fftfreq(N, 1/N)`` order along FFT axes, ``0 .. N/2`` along
    /// the last axis of an r2c plan, the mode index ``k`` along real-to-real axes.
    fn wavenumbers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let arrays = self
            .waves()
            .into_iter()
            .map(|w| PyArray1::from_vec(py, w.k))
            .collect::<Vec<_>>();
        PyTuple::new(py, arrays)
    }

    /// ``|k|²`` on this rank's spectral block (float64, shape ``local_spectral_shape`` without
    /// the batch axis) for a box of ``lengths`` (default ``2π`` per axis), from fft-core's
    /// spectral grid: ``k = 2π/L · wavenumber`` on FFT axes, ``k = π/L · m`` on real-to-real
    /// axes with ``m`` the frequency of the kind's basis function (``k`` for DCT-I/II,
    /// ``k + 1`` for DST-I/II, ``k + ½`` otherwise), so ``-k2() * u_hat`` is the Laplacian's
    /// spectrum on every kind of axis.
    #[pyo3(signature = (lengths=None))]
    fn k2<'py>(
        &self,
        py: Python<'py>,
        lengths: Option<Vec<f64>>,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let d = self.resolution.len();
        let axes = (0..d)
            .map(|a| {
                let n = self.resolution[a];
                match self.axes[a] {
                    AxisKind::Fft if self.kind == Kind::R2c && a + 1 == d => {
                        SpectralAxis::Half { n }
                    }
                    AxisKind::Fft => SpectralAxis::Fft { n },
                    AxisKind::R2r(kind) => SpectralAxis::R2r { kind, n },
                    AxisKind::Identity => SpectralAxis::Identity { n },
                }
            })
            .collect();
        if self.one_d.is_some() {
            // One FFT axis in order: (2π/L · k)² over the local range.
            let tau = 2.0 * std::f64::consts::PI;
            let length = match lengths.as_deref() {
                None => tau,
                Some(&[l]) => l,
                Some(l) => {
                    return Err(DfftError::new_err(format!(
                        "lengths needs 1 entry for a 1-D plan, got {l:?}"
                    )))
                }
            };
            let scale = tau / length;
            let k = &self.waves()[0].k;
            let k2: Vec<f64> = k.iter().map(|&k| (scale * k as f64).powi(2)).collect();
            let k2 =
                numpy::ndarray::ArrayD::from_shape_vec(IxDyn(&[k2.len()]), k2).expect("one axis");
            return Ok(k2.into_pyarray(py));
        }
        let layout = self.layout(true);
        let mut grid = SpectralGrid::<f64>::new(layout, self.rank, axes).map_err(fft_error)?;
        if let Some(l) = lengths {
            grid = grid.with_lengths(&l).map_err(fft_error)?;
        }
        // The grid's arrays have the block's logical shape, stored in the layout's memory
        // order; the caller's spectral arrays have their axes in memory order.
        let memory = layout.memory_order().axes().to_vec();
        let k2 = grid.k2().permuted_axes(fft_core::ndarray::IxDyn(&memory));
        // fft-core's ndarray is not rust-numpy's: the values go over as a Vec, C order.
        let shape = k2.shape().to_vec();
        let k2 =
            numpy::ndarray::ArrayD::from_shape_vec(IxDyn(&shape), k2.iter().copied().collect())
                .expect("the shape of the values");
        Ok(k2.into_pyarray(py))
    }

    /// The modes that survive dealiasing on this rank's spectral block (bool, shape
    /// ``local_spectral_shape`` without the batch axis): ``|k_a| < fraction · k_max_a`` along
    /// every axis, ``k_max = N/2`` for FFT axes (``N`` the real length along an r2c axis) and
    /// ``N`` for real-to-real axes. ``fraction=2/3`` is Orszag's 2/3 rule.
    #[pyo3(signature = (fraction=2.0 / 3.0))]
    fn dealias_mask<'py>(
        &self,
        py: Python<'py>,
        fraction: f64,
    ) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
        if !(fraction.is_finite() && fraction > 0.0) {
            return Err(DfftError::new_err(format!(
                "fraction must be a positive number, got {fraction}"
            )));
        }
        let memory = self.memory_axes(true);
        let mask = spectral::dealias_mask(&self.waves(), fraction, &memory);
        Ok(mask.into_pyarray(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "PFFT(kind='{}', dtype={}, shape={}, grid={}, normalization='{}', \
             transposed_out={}, batch={}, threads={})",
            self.kind.name(),
            self.dtype_names().0,
            shape_str(&self.resolution),
            shape_str(&self.grid_dims),
            self.normalization.name(),
            if self.transposed_out { "True" } else { "False" },
            self.batch,
            self.threads
        )
    }
}

impl Pfft {
    fn problem(&self) -> Problem {
        let unit = if self.single { 8 } else { 16 };
        Problem {
            shape: self.resolution.clone(),
            ranks: self.size,
            element_bytes: unit,
            transposed_out: self.transposed_out,
            real_to_complex: matches!(self.kind, Kind::R2c),
            windows: false,
        }
    }
}

/// A serde value as the Python object `json.loads` makes of it.
fn json_to_py<'py, S: serde::Serialize>(py: Python<'py>, value: &S) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    py.import("json")?.getattr("loads")?.call1((text,))
}

/// `zeros(in_place=True)` for the plan's element type.
fn zeros_of<'py, P: Transform>(
    _plan: &P,
    py: Python<'py>,
    shapes: &InPlaceShapes<'_>,
    spectral: bool,
    spectral_dtype: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    zeros_in_place::<P::In>(py, shapes, spectral, spectral_dtype)
}
