"""``fft3d.mpi_with_dfft``: FluidFFT's 3-D MPI FFT class on dfft.

.. autoclass:: FFT3DMPIWithDfft
   :members:
"""

from fluidfft.fft3d.base import BaseFFTMPI

from ._common import DfftFFTBase


class FFT3DMPIWithDfft(DfftFFTBase, BaseFFTMPI):
    """Perform Fast Fourier Transform in 3D with dfft.

    Parameters
    ----------

    n0 : int

      Global size over the first dimension in spatial space. This corresponds
      to the z direction.

    n1 : int

      Global size over the second dimension in spatial space. This corresponds
      to the y direction.

    n2 : int

      Global size over the third dimension in spatial space. This corresponds
      to the x direction.

    """

    def __init__(self, n0=2, n1=2, n2=4):
        self._make_plan((n0, n1, n2))
        super().__init__(n0, n1, n2)


FFTclass = FFT3DMPIWithDfft
