"""Type stubs of dfft's compiled extension (dfft._dfft)."""

from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

_Kind = Literal["c2c", "r2c", "r2r"]
_Normalization = Literal["none", "backward", "forward", "ortho"]
_AxisKind = Literal[
    "fft", "identity", "dct1", "dct2", "dct3", "dct4", "dst1", "dst2", "dst3", "dst4", "r2hc", "hc2r", "dht"
]
_Schedule = Literal["alltoallv", "caterpillar", "async", "pipelined", "shared"]

class DfftError(ValueError):
    """An error reported by the dfft library (bad shape, grid, options or distribution),
    raised alike on every rank."""

class PFFT:
    """A distributed FFT of a global array over the processes of an mpi4py communicator,
    planned once and run many times on numpy arrays (no copies; the GIL is released while
    it runs). See help(dfft.PFFT) for the arguments."""

    def __init__(
        self,
        comm: MPI.Intracomm,
        shape: Sequence[int],
        kind: Optional[_Kind] = None,
        dtype: npt.DTypeLike = None,
        grid: Union[None, Literal["auto"], str, int, Sequence[int]] = None,
        axes_kinds: Optional[Sequence[_AxisKind]] = None,
        normalization: _Normalization = "backward",
        transposed_out: bool = False,
        padding: Union[None, bool, float, Sequence[float]] = None,
        batch: int = 1,
        threads: Optional[int] = None,
        machine: Union[None, str, dict[str, Any]] = None,
        in_place: bool = False,
        axes: Optional[Sequence[int]] = None,
        deterministic: bool = False,
        scrambled_in: bool = False,
        scrambled_out: bool = False,
        groups: Union[None, Literal["auto"], int] = None,
    ) -> None: ...
    def exchange_halo(
        self,
        u: np.ndarray,
        width: Union[int, Sequence[int]],
        periodic: bool = True,
        fill: Union[None, float, complex] = None,
        in_place: bool = False,
    ) -> np.ndarray:
        """This rank's block of the forward input ``u`` extended by ``width`` cells on both
        sides of every axis from the neighbours' blocks: ``numpy.pad(x, w, mode="wrap")``
        sliced to this rank (``periodic=False``: ``mode="constant"`` with ``fill``). A new
        array; with ``in_place=True``, ``u`` is already the extended block and only its
        halo cells are filled (the same form on every rank). Collective. The halo plan of
        each widths and boundary is made once and kept until ``destroy``; a 1-D plan has
        no halo (``DfftError``)."""
    @property
    def halo_plans_made(self) -> int:
        """How many halo plans ``exchange_halo`` has made (each its own communicator)."""
    def forward(self, a: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Forward transform of ``a`` (``local_shape``, ``dtype``) into ``out``
        (``local_spectral_shape``, ``spectral_dtype``; allocated when None). Collective."""
    def backward(self, b: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Backward transform of ``b`` (``local_spectral_shape``) into ``out``
        (``local_shape``; allocated when None). Collective."""
    def forward_in_place(self, a: np.ndarray) -> np.ndarray:
        """Forward transform in place (a plan made with ``in_place=True``): ``a`` is the
        input view of an in-place buffer (``zeros(in_place=True)``; r2c: FFTW's padded rows);
        returns the spectrum, a view of the same buffer. Collective."""
    def backward_in_place(self, b: np.ndarray) -> np.ndarray:
        """Backward transform in place: ``b`` is the spectral view of an in-place buffer;
        returns the physical view of the same buffer. Collective."""
    @property
    def in_place(self) -> bool: ...
    @property
    def groups(self) -> int:
        """Groups of ranks the batch is split into (1: every rank transforms every field)."""
    @property
    def in_place_len(self) -> int:
        """Elements of ``dtype`` in this rank's in-place buffer (0 without ``in_place``)."""
    def time_rust(
        self, repeat: int = 10, backward: bool = False, alloc: bool = False
    ) -> list[float]:
        """Seconds of each of ``repeat`` transforms run entirely in Rust (on arrays in the
        plan's memory with ``alloc=True``, as ``alloc`` makes them)."""
    def global_shape_of(self, spectral: bool = False) -> tuple[int, ...]: ...
    @property
    def global_shape(self) -> tuple[int, ...]:
        """Global shape of the physical array (padded when padding is given)."""
    @property
    def spectral_shape(self) -> tuple[int, ...]:
        """Global shape of the spectrum, logical axis order."""
    @property
    def local_shape(self) -> tuple[int, ...]:
        """Shape of this rank's forward-input array (batch first when batch > 1)."""
    @property
    def local_spectral_shape(self) -> tuple[int, ...]:
        """Shape of this rank's forward-output array, axes in spectral_axes order."""
    def shape(self, forward_output: bool = False) -> tuple[int, ...]:
        """mpi4py-fft's name: local_spectral_shape or local_shape."""
    @property
    def spectral_axes(self) -> tuple[int, ...]:
        """The logical axis held by each axis of a local spectral array."""
    def local_slice(self, spectral: bool = False) -> tuple[slice, ...]:
        """This rank's block as slices of the global array (spectral: of the global
        spectrum transposed to spectral_axes)."""
    @property
    def grid(self) -> tuple[int, ...]:
        """The processor grid's dimensions."""
    @property
    def kind(self) -> _Kind: ...
    @property
    def dtype(self) -> np.dtype[Any]:
        """The forward input's dtype."""
    @property
    def spectral_dtype(self) -> np.dtype[Any]:
        """The forward output's dtype."""
    @property
    def normalization(self) -> _Normalization: ...
    @property
    def transposed_out(self) -> bool: ...
    @property
    def batch(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def axes_kinds(self) -> list[_AxisKind]: ...
    @property
    def comm(self) -> MPI.Intracomm: ...
    @property
    def rank(self) -> int: ...
    @property
    def work_bytes(self) -> int:
        """Work memory the plan holds besides the caller's arrays."""
    @property
    def prediction(self) -> dict[str, Any]:
        """The complexity model's prediction for the grid in use."""
    def candidates(self) -> list[dict[str, Any]]:
        """Every candidate grid the model weighed, chosen one first."""
    def times(self) -> dict[str, float]:
        """Seconds per stage (fft, pack, comm, unpack) on this rank."""
    def reset_times(self) -> None: ...
    def destroy(self) -> None:
        """Frees the plan's memory, threads and MPI objects now (collective, idempotent); a
        plan Python drops without it keeps them."""
    @property
    def destroyed(self) -> bool: ...
    def __enter__(self) -> "PFFT": ...
    def __exit__(self, *args: object) -> bool: ...
    def zeros(self, spectral: bool = False, in_place: bool = False) -> np.ndarray:
        """A zeroed local input (or, with spectral=True, output) array; with
        ``in_place=True``, that view of a new in-place buffer."""
    def alloc(self, spectral: bool = False) -> np.ndarray:
        """A zeroed local array like ``zeros`` in memory the plan allocates (on one node, a
        shared-memory window over the ranks: transforms between such arrays move rows between
        the ranks in place, without messages). Collective; pass the arrays of the same calls
        on every rank. ``destroy`` frees the memory once no rank uses these arrays."""
    def wavenumbers(self) -> tuple[npt.NDArray[np.int64], ...]:
        """The wavenumbers this rank holds along each logical axis."""
    def k2(self, lengths: Optional[Sequence[float]] = None) -> npt.NDArray[np.float64]:
        """|k|² on this rank's spectral block (domain lengths default to 2π): 2π/L·k on FFT
        axes, π/L·m on real-to-real axes (m the basis function's frequency)."""
    def dealias_mask(self, fraction: float = 2.0 / 3.0) -> npt.NDArray[np.bool_]:
        """The modes kept by dealiasing on this rank's spectral block."""

class Redistribution:
    """A planned redistribution of a global array between two (block-cyclic)
    distributions. See help(dfft.Redistribution) for the SPEC syntax."""

    def __init__(
        self,
        comm: MPI.Intracomm,
        shape: Sequence[int],
        from_spec: str,
        to_spec: str,
        dtype: npt.DTypeLike = None,
        schedule: _Schedule = "alltoallv",
    ) -> None: ...
    @property
    def src_shape(self) -> tuple[int, ...]: ...
    @property
    def dst_shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def from_spec(self) -> str: ...
    @property
    def to_spec(self) -> str: ...
    def global_index(self, offset: int, destination: bool = False) -> list[int]:
        """Global index of this rank's element at local (C-order) offset."""
    def execute(self, src: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Moves this rank's source block into its destination block. Collective."""
    def time_rust(self, repeat: int = 10) -> list[float]:
        """Seconds of each of ``repeat`` runs of ``execute`` entirely in Rust (after one
        untimed run), on this rank's clock. Collective."""
    def destroy(self) -> None:
        """Frees the MPI objects now (collective, idempotent)."""
    @property
    def destroyed(self) -> bool: ...
    def __enter__(self) -> "Redistribution": ...
    def __exit__(self, *args: object) -> bool: ...

def mpi_library_version() -> str:
    """The MPI library's version string (MPI_Get_library_version)."""

def version() -> str:
    """The dfft version the extension was built from."""
