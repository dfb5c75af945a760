"""``fft2d.mpi_with_dfft``: FluidFFT's 2-D MPI FFT class on dfft.

.. autoclass:: FFT2DMPIWithDfft
   :members:
"""

import numpy as np

from ._common import DfftFFTBase


class FFT2DMPIWithDfft(DfftFFTBase):
    """Perform Fast Fourier Transform in 2D with dfft.

    Parameters
    ----------

    n0 : int

      Global size over the first dimension in spatial space (y).

    n1 : int

      Global size over the second dimension in spatial space (x).

    With several processes the spectrum is transposed (``get_is_transposed()``): its first
    axis is kx (split between the processes), its second ky.
    """

    def __init__(self, n0=2, n1=2):
        self._make_plan((n0, n1))
        self.nb_proc = self._mpi_comm.size
        self.rank = self._mpi_comm.rank
        if self.nb_proc > 1:
            self.comm = self._mpi_comm
        self._is_mpi_lib = self._shapeX_seq != self._shapeX_loc

    def get_is_transposed(self):
        """Whether the spectrum's first axis is kx."""
        return self._axesK == (1, 0)

    def get_dim_first_fft(self):
        """The real-space dimension of the first (real-to-complex) transform."""
        return 1

    def get_k_adim_loc(self):
        """The non-dimensional wavenumbers stored locally, one array per spectral axis
        (FluidFFT's convention: ``n // 2`` counts as positive along ky)."""
        ny, nx = self._shapeX_seq
        ky = np.r_[0 : ny // 2 + 1, -((ny - 1) // 2) : 0]
        kx = np.arange(nx // 2 + 1)
        seq = (kx, ky) if self.get_is_transposed() else (ky, kx)
        return tuple(k[s] for k, s in zip(seq, self._slicesK))

    def get_x_adim_loc(self):
        """The indices of the points stored locally, one array per real-space axis."""
        return tuple(np.arange(s.start, s.stop) for s in self._slicesX)


FFTclass = FFT2DMPIWithDfft
