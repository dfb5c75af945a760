"""FluidFFT plugin running FluidFFT's MPI FFT classes on dfft.

Registered in the ``fluidfft.plugins`` entry-point group as ``fft3d.mpi_with_dfft`` and
``fft2d.mpi_with_dfft`` (and, for one process, ``fft3d.with_dfft`` and ``fft2d.with_dfft``)::

    params.oper.type_fft = "fft3d.mpi_with_dfft"   # FluidSim
    fluidfft.create_fft_object("fft3d.mpi_with_dfft", nz, ny, nx)

The classes follow FluidFFT's contract (``fluidfft.fft3d.base.BaseFFTMPI``): real fields of
shape ``(n0, n1, n2)`` split along their first axes, spectra of the real-to-complex transform
normalized on forward (``ifft(fft(a)) == a``), in dfft's transposed output layout described
by ``get_dimX_K()``.

FluidFFT builds its classes from the sizes alone, so the other settings are read here, from
:data:`options` (defaults from the environment, like FluidFFT's own ``FLUID_PROC_MESH``):

* ``threads``: threads per process; ``FLUIDFFT_DFFT_THREADS``, else ``OMP_NUM_THREADS``
  (FluidFFT's FFTW classes use it too), else 1;
* ``grid``: ``"auto"``, a grid rank or dimensions such as ``"2x2"``; ``FLUIDFFT_DFFT_GRID``,
  else ``FLUID_PROC_MESH``, else ``"auto"``;
* ``transposed_out``: keep the spectrum in the last pencil layout (fewer exchanges);
  ``FLUIDFFT_DFFT_TRANSPOSED`` (``0`` or ``1``), default on;
* ``plan_arrays``: the first ``create_arrayX`` and ``create_arrayK`` of a class return arrays
  in the plan's memory (``dfft.PFFT.alloc``: one shared-memory window over the ranks of a
  node), between which the transforms move rows from rank to rank in place, without
  messages; each class then holds one real and one spectral array from its creation on;
  ``FLUIDFFT_DFFT_PLAN_ARRAYS`` (``0`` or ``1``), default off: they are then
  ``dfft.PFFT.zeros`` arrays, nearly as fast (the plan's own work buffers already move the
  backward's rows between the ranks; see docs/python.md) and allocated without a collective.
"""

import os


def _env_threads():
    for name in ("FLUIDFFT_DFFT_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                return max(1, int(value))
            except ValueError:
                raise ValueError(f"{name}={value!r} is not a number of threads") from None
    return 1


def _env_grid():
    for name in ("FLUIDFFT_DFFT_GRID", "FLUID_PROC_MESH"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return "auto"


options = {
    "threads": _env_threads(),
    "grid": _env_grid(),
    "transposed_out": os.environ.get("FLUIDFFT_DFFT_TRANSPOSED", "1").strip() != "0",
    "plan_arrays": os.environ.get("FLUIDFFT_DFFT_PLAN_ARRAYS", "0").strip() == "1",
}
"""Settings of the plans the classes make (read when a class is instantiated)."""

__all__ = ["options"]
