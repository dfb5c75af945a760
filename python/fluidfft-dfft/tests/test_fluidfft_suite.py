"""FluidFFT's own generic test suites, run on this plugin's classes: the test bodies are
fluidfft.fft3d.testing's and fluidfft.fft2d.testing's, as in FluidFFT's own plugins."""

from unittest import TestCase

from fluidfft.fft2d.testing import complete_test_class_2d
from fluidfft.fft3d.testing import complete_test_class_3d


class Tests3D(TestCase):
    pass


complete_test_class_3d("fft3d.mpi_with_dfft", Tests3D, skip_if_import_error=False)


class Tests2D(TestCase):
    pass


complete_test_class_2d("fft2d.mpi_with_dfft", Tests2D)


def test_methods_registered():
    import fluidfft

    assert "fft3d.mpi_with_dfft" in fluidfft.get_methods(3)
    assert "fft2d.mpi_with_dfft" in fluidfft.get_methods(2)
