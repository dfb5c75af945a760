"""What the 2-D and 3-D classes share: the dfft plan, shapes and index offsets, FluidFFT's
sums over the Hermitian half spectrum, gather/scatter, tests and the internal benchmark."""

import numpy as np
from mpi4py import MPI

import dfft

from . import options

# FluidFFT's OperatorsPseudoSpectral3D knows these spectral axis orders (get_dimX_K).
_KNOWN_ORDERS_3D = {(0, 1, 2), (1, 0, 2), (2, 1, 0), (1, 2, 0)}
_KNOWN_ORDERS_2D = {(0, 1), (1, 0)}


def _grid(value):
    """``options["grid"]`` as dfft.PFFT takes it ("2x2" -> (2, 2), "2" -> 2)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "auto":
            return "auto"
        if "x" in text:
            return tuple(int(part) for part in text.split("x"))
        return int(text)
    return value


class DfftFFTBase:
    """FluidFFT's MPI class contract on a dfft real-to-complex plan over MPI.COMM_WORLD (the
    communicator FluidFFT and FluidSim use), forward normalized by 1/N."""

    _dtype_spatial = np.float64
    _dtype_spectral = np.complex128

    def _make_plan(self, shape):
        known = _KNOWN_ORDERS_3D if len(shape) == 3 else _KNOWN_ORDERS_2D
        transposed = bool(options["transposed_out"])
        while True:
            plan = dfft.PFFT(
                MPI.COMM_WORLD,
                shape,
                kind="r2c",
                dtype=np.float64,
                grid=_grid(options["grid"]),
                normalization="forward",
                transposed_out=transposed,
                threads=options["threads"],
            )
            if not transposed or tuple(plan.spectral_axes) in known:
                break
            transposed = False
        self._plan = plan
        self._mpi_comm = MPI.COMM_WORLD
        self._axesK = tuple(plan.spectral_axes)
        self._slicesX = tuple(plan.local_slice())
        self._slicesK = tuple(plan.local_slice(True))
        spectral = plan.spectral_shape
        self._shapeX_loc = tuple(plan.local_shape)
        self._shapeK_loc = tuple(plan.local_spectral_shape)
        self._shapeX_seq = tuple(plan.global_shape)
        self._shapeK_seq = tuple(spectral[a] for a in self._axesK)
        self.shapeX = self._shapeX_loc
        self.shapeK = self._shapeK_loc
        # The spectral array axis holding the half-spectrum (last real-space) axis.
        self._axis_half = self._axesK.index(len(shape) - 1)
        self._n_half = shape[-1]
        # One array of each space in the plan's memory (collective, so made here), handed out
        # by the first create_arrayX / create_arrayK: transforms between them move rows
        # between the ranks in place (see dfft.PFFT.alloc).
        self._plan_arrays = {}
        self._alloc = bool(options["plan_arrays"])
        if self._alloc:
            self._plan_arrays = {False: plan.alloc(), True: plan.alloc(True)}

    # shapes and offsets -------------------------------------------------------------------

    def get_shapeX_loc(self):
        """Get the shape of the array in real space for this mpi process."""
        return self._shapeX_loc

    def get_shapeK_loc(self):
        """Get the shape of the array in Fourier space for this mpi process."""
        return self._shapeK_loc

    def get_shapeX_seq(self):
        """Get the shape of an array in real space for a sequential run."""
        return self._shapeX_seq

    def get_shapeK_seq(self):
        """Get the shape of an array in Fourier space for a sequential run (its axes in the
        order of ``get_dimX_K``)."""
        return self._shapeK_seq

    def get_dimX_K(self):
        """Get the indices of the real space dimension in Fourier space."""
        return self._axesK

    def get_seq_indices_first_X(self):
        """Get the "sequential" indices of the first number in real space."""
        return tuple(s.start for s in self._slicesX)

    def get_seq_indices_first_K(self):
        """Get the "sequential" indices of the first number in Fourier space."""
        return tuple(s.start for s in self._slicesK)

    def get_local_size_X(self):
        """Get the local size in real space."""
        return int(np.prod(self._shapeX_loc))

    def get_short_name(self):
        """Get a short name of the class."""
        return self.__class__.__name__.lower()

    @property
    def _numpy_api(self):
        """The NumPy-like array backend (numpy)."""
        return np

    @property
    def plan(self):
        """The underlying ``dfft.PFFT``."""
        return self._plan

    # arrays and transforms ----------------------------------------------------------------

    def _create_array(self, spectral, value, shape):
        field = None
        if shape is None:
            field = self._plan_arrays.pop(spectral, None)
            shape = self._shapeK_loc if spectral else self._shapeX_loc
        if field is None and tuple(shape) == (self._shapeK_loc if spectral else self._shapeX_loc):
            # On a cache line (PFFT.zeros), unlike numpy's own large arrays.
            field = self._plan.zeros(spectral)
        if field is None:
            field = np.empty(shape, self._dtype_spectral if spectral else self._dtype_spatial)
        if value is not None:
            field.fill(value)
        return field

    def create_arrayX(self, value=None, shape=None):
        """Return a constant array in real space (the first one in the plan's memory, see
        ``fluidfft_dfft.options``)."""
        return self._create_array(False, value, shape)

    def create_arrayK(self, value=None, shape=None):
        """Return a constant array in Fourier space (the first one in the plan's memory)."""
        return self._create_array(True, value, shape)

    def fft_as_arg(self, fieldX, fieldK):
        """Perform FFT and put result in second argument."""
        self._plan.forward(fieldX, fieldK)

    def ifft_as_arg(self, fieldK, fieldX):
        """Perform iFFT and put result in second argument (``fieldK`` is left unchanged)."""
        self._plan.backward(fieldK, fieldX)

    def ifft_as_arg_destroy(self, fieldK, fieldX):
        """Perform iFFT and put result in second argument (may destroy ``fieldK``; dfft's
        backward leaves it unchanged anyway)."""
        self._plan.backward(fieldK, fieldX)

    def fft(self, fieldX):
        """Perform FFT and return the result."""
        return self._plan.forward(fieldX)

    def ifft(self, fieldK):
        """Perform iFFT and return the result."""
        return self._plan.backward(fieldK)

    # sums and energies ---------------------------------------------------------------------

    def _allsum(self, value):
        if self._mpi_comm.size > 1:
            return self._mpi_comm.allreduce(value, op=MPI.SUM)
        return value

    def _sum_half(self, field):
        """This rank's share of the sum over the whole (Hermitian) spectrum of a field given
        on the half spectrum: modes 0 and n/2 (n even) of the half axis once, the others
        twice."""
        axis = self._axis_half
        start = self._slicesK[axis].start
        stop = self._slicesK[axis].stop
        total = 2 * field.sum()
        if stop > start:
            if start == 0:
                total -= np.take(field, 0, axis=axis).sum()
            last = self._n_half // 2
            if self._n_half % 2 == 0 and start <= last < stop:
                total -= np.take(field, last - start, axis=axis).sum()
        return total

    def sum_wavenumbers(self, fieldK):
        """Compute the sum over all wavenumbers (of the whole Hermitian spectrum)."""
        return self._allsum(self._sum_half(fieldK))

    def compute_energy_from_X(self, fieldX):
        """Compute the mean energy from a real space array."""
        local = float(np.vdot(fieldX, fieldX).real)
        return self._allsum(local) / np.prod(self._shapeX_seq) / 2

    def compute_energy_from_K(self, fieldK):
        """Compute the mean energy from a Fourier space array."""
        return float(self._allsum(self._sum_half(np.abs(fieldK) ** 2))) / 2

    compute_energy_from_spatial = compute_energy_from_X
    compute_energy_from_Fourier = compute_energy_from_K

    def compute_mean_from_X(self, fieldX):
        """Mean of a real space array."""
        return float(self._allsum(float(fieldX.sum()))) / np.prod(self._shapeX_seq)

    def compute_mean_from_K(self, fieldK):
        """Mean from a Fourier space array (its mode 0)."""
        first = all(s.start == 0 and s.stop > 0 for s in self._slicesK)
        return float(self._allsum(float(fieldK.flat[0].real) if first else 0.0))

    # gather and scatter --------------------------------------------------------------------

    def gather_Xspace(self, ff_loc, root=0):
        """Gather an array in real space for a parallel run: on ``root``, or on every rank
        with ``root=None``."""
        comm = self._mpi_comm
        if comm.size == 1:
            return ff_loc
        if root is not None and not isinstance(root, int):
            raise ValueError("root should be an int")
        pieces = (self._slicesX, np.ascontiguousarray(ff_loc))
        if root is None:
            everyone = comm.allgather(pieces)
        else:
            everyone = comm.gather(pieces, root=root)
            if comm.rank != root:
                return None
        ff_seq = np.empty(self._shapeX_seq, self._dtype_spatial)
        for slices, block in everyone:
            ff_seq[slices] = block
        return ff_seq

    def scatter_Xspace(self, ff_seq, root=0):
        """Scatter an array in real space from ``root`` (0 when ``None``); every rank gets
        its C-contiguous block."""
        comm = self._mpi_comm
        if comm.size == 1:
            return ff_seq
        root = 0 if root is None else root
        if not isinstance(root, int):
            raise ValueError("root should be an int")
        slices = comm.gather(self._slicesX, root=root)
        blocks = None
        if comm.rank == root:
            ff_seq = np.asarray(ff_seq, dtype=self._dtype_spatial)
            if ff_seq.shape != self._shapeX_seq:
                raise ValueError(
                    f"the sequential array has shape {ff_seq.shape}, expected {self._shapeX_seq}"
                )
            blocks = [np.ascontiguousarray(ff_seq[s]) for s in slices]
        return comm.scatter(blocks, root=root)

    # tests and benchmarks ------------------------------------------------------------------

    def run_tests(self):
        """FluidFFT's consistency checks (its C++ ``test``): energies and means from real and
        Fourier space agree, and a backward transform leaves its input alone. Raises
        AssertionError on failure; returns True."""
        rng = np.random.default_rng(12345 + self._mpi_comm.rank)
        fieldX = rng.random(self._shapeX_loc)
        fieldK = self.fft(fieldX)
        fieldX = self.ifft(fieldK)  # drops the modes a real field cannot hold
        checks = {
            "energy": (self.compute_energy_from_X(fieldX), self.compute_energy_from_K(fieldK)),
            "mean": (self.compute_mean_from_X(fieldX), self.compute_mean_from_K(fieldK)),
        }
        before = fieldK.copy()
        self.ifft_as_arg(fieldK, fieldX)
        checks["backward input unchanged"] = (0.0, float(np.abs(fieldK - before).max(initial=0)))
        failed = [
            f"{name}: {a!r} vs {b!r}"
            for name, (a, b) in checks.items()
            if not np.isclose(a, b, rtol=5e-13, atol=1e-300)
        ]
        if failed:
            raise AssertionError(f"{self.get_short_name()}: " + "; ".join(failed))
        return True

    def run_benchs(self, nb_time_execute=10):
        """The Rust plan's own time per fft and ifft, without the Python call (FluidFFT's
        C++ benchmark), on arrays like those of create_arrayX/K; returned on rank 0 as an array [t_fft, t_ifft] (mean over the runs,
        rank 0's clock), None elsewhere."""
        alloc = self._alloc
        t_fft = float(np.mean(self._plan.time_rust(nb_time_execute, alloc=alloc)))
        t_ifft = float(np.mean(self._plan.time_rust(nb_time_execute, True, alloc)))
        if self._mpi_comm.rank != 0:
            return None
        name = self.__class__.__name__
        print(f"time fft ({name}):  {t_fft:f} s\ntime ifft ({name}): {t_ifft:f} s", flush=True)
        return np.array([t_fft, t_ifft])
