"""dfft: distributed multidimensional FFTs and block-cyclic redistribution over MPI.

The interface follows mpi4py-fft: a :class:`PFFT` plan over an mpi4py communicator,
``forward``/``backward`` on numpy arrays in the plan's local shapes (no copies; the GIL is
released while a transform runs), ``local_slice``, the global, local and spectral shapes, and
the local spectral grids (``wavenumbers``, ``k2``, ``dealias_mask``). :class:`Redistribution`
and :func:`redistribute` move block-cyclic (ScaLAPACK-style) arrays between distributions.

Every error from user input is a ``ValueError`` (:class:`DfftError` for the library's own
checks) raised on every rank alike, also when only one rank passed a wrong array.
"""

from mpi4py import MPI as _MPI  # initializes MPI before the extension makes any MPI call

from . import _dfft
from ._dfft import PFFT, DfftError, Redistribution

__all__ = ["PFFT", "DfftError", "Redistribution", "redistribute", "__version__"]

__version__ = _dfft.version()


def _check_same_mpi():
    """The extension and mpi4py must run on one MPI library (a communicator handle from
    one is meaningless to another)."""
    ours = _dfft.mpi_library_version().strip()
    theirs = _MPI.Get_library_version().strip().rstrip("\x00").strip()
    if ours != theirs:
        raise ImportError(
            "dfft and mpi4py use different MPI libraries:\n"
            f"  dfft:   {ours.splitlines()[0] if ours else '?'}\n"
            f"  mpi4py: {theirs.splitlines()[0] if theirs else '?'}\n"
            "build mpi4py against the system MPI (pip install --no-binary mpi4py mpi4py) or "
            "choose mpi4py's matching MPI with MPI4PY_LIBMPI"
        )


_check_same_mpi()


def redistribute(comm, array, from_spec, to_spec, shape=None, out=None, schedule="alltoallv"):
    """Moves this rank's block ``array`` of a global array from distribution ``from_spec`` to
    ``to_spec`` (see :class:`Redistribution`) and returns the new block. Collective.

    ``shape``, the global shape, is found from the blocks of all ranks when not given (one
    ``allgather`` of their shapes and dtypes). For repeated moves, make a
    :class:`Redistribution` once."""
    import numpy as np

    dtype = array.dtype if isinstance(array, np.ndarray) else np.asarray(array).dtype
    if shape is None:
        local = np.shape(array)
        blocks = comm.allgather((tuple(local), dtype.str))
        dtypes = sorted({d for _, d in blocks})
        if len(dtypes) > 1:
            raise ValueError(f"the ranks' blocks have different dtypes {dtypes}")
        shape = _dfft._global_shape(from_spec, [list(b) for b, _ in blocks])
    with Redistribution(comm, tuple(shape), from_spec, to_spec, dtype=dtype,
                        schedule=schedule) as plan:
        return plan.execute(array, out)
