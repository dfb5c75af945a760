"""The plugin's FluidFFT contract checked against numpy directly, piece by piece (FluidFFT's
generic suites check consistency between the methods, not every index against a reference:
a wrong get_seq_indices_first_K passes them on 2 ranks)."""

import numpy as np
import pytest
from mpi4py import MPI

from fluidfft import create_fft_object
from fluidfft.fft3d.operators import OperatorsPseudoSpectral3D

comm = MPI.COMM_WORLD


class Checks:
    """Records failed checks instead of raising, so every rank goes through the same
    collective calls; ``verify`` raises on every rank if any rank had a failure."""

    def __init__(self):
        self.failed = []

    def __call__(self, name, ok):
        if not ok:
            self.failed.append(name)

    def verify(self):
        everyone = comm.allgather(self.failed)
        bad = {r: f for r, f in enumerate(everyone) if f}
        assert not bad, f"failed checks by rank: {bad}"


def same(got, want, exact=False):
    """Equal shapes and values (False, not an exception, when the shapes differ)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    return np.array_equal(got, want) if exact else np.allclose(got, want, atol=1e-15)


def global_field(shape, seed=3):
    return np.random.default_rng(seed).standard_normal(shape)


def k_block(obj, full):
    """This rank's block of a global spectrum given in real-space axis order."""
    start = obj.get_seq_indices_first_K()
    sizes = obj.get_shapeK_loc()
    return full.transpose(obj.get_dimX_K())[
        tuple(slice(s, s + n) for s, n in zip(start, sizes))
    ]


def x_block(obj, full):
    start = obj.get_seq_indices_first_X()
    return full[tuple(slice(s, s + n) for s, n in zip(start, obj.get_shapeX_loc()))]


def fluidfft_k(n, half):
    """FluidFFT's wavenumbers: 0..n//2 then negative, or 0..n//2 on the half axis."""
    return np.arange(n // 2 + 1) if half else np.r_[0 : n // 2 + 1, -((n - 1) // 2) : 0]


@pytest.mark.parametrize("shape", [(6, 8, 10), (5, 7, 9)])
def test_3d_against_numpy(shape):
    check = Checks()
    obj = create_fft_object("fft3d.mpi_with_dfft", *shape)
    x = global_field(shape)
    a = np.ascontiguousarray(x_block(obj, x))
    check("local X shape", a.shape == obj.get_shapeX_loc())
    want = np.fft.rfftn(x) / x.size
    got = obj.fft(a)
    check("fft against numpy's rfftn / N", same(got, k_block(obj, want)))
    check("shapeK_seq", obj.get_shapeK_seq() == tuple(want.shape[d] for d in obj.get_dimX_K()))
    check("ifft(fft(a)) == a", same(obj.ifft(got), a))

    for axis, k in enumerate(obj.get_k_adim_loc()):
        dim = obj.get_dimX_K()[axis]
        full = fluidfft_k(shape[dim], half=dim == 2)
        start = obj.get_seq_indices_first_K()[axis]
        check(f"k_adim axis {axis}", same(k, full[start : start + obj.get_shapeK_loc()[axis]]))

    # sums over the whole Hermitian spectrum against numpy's full fftn
    energy = 0.5 * np.sum(np.abs(np.fft.fftn(x) / x.size) ** 2)
    check("energy from K", np.isclose(obj.compute_energy_from_K(got), energy, rtol=1e-13))
    check("energy from X", np.isclose(obj.compute_energy_from_X(a), 0.5 * np.mean(x**2)))
    check("sum_wavenumbers", np.isclose(obj.sum_wavenumbers(np.abs(got) ** 2), 2 * energy))

    # gather to one rank and to all, scatter back
    seq = obj.gather_Xspace(a, root=0)
    check("gather to 0", comm.rank != 0 or same(seq, x, exact=True))
    check("gather to all", same(obj.gather_Xspace(a, root=None), x, exact=True))
    back = obj.scatter_Xspace(x if comm.rank == 0 else None, root=0)
    check("scatter", back.flags.c_contiguous and same(back, a, exact=True))
    check.verify()


def test_3d_operators_wavenumber_arrays():
    """FluidFFT's operators build Kx, Ky, Kz from get_dimX_K and get_k_adim_loc: they must be
    the physical wavenumbers of this rank's spectral block."""
    check = Checks()
    nz, ny, nx = 6, 8, 10
    op = OperatorsPseudoSpectral3D(nx, ny, nz, 2 * np.pi, 4 * np.pi, np.pi,
                                   fft="fft3d.mpi_with_dfft")
    obj = op._op_fft
    kz, ky, kx = np.meshgrid(fluidfft_k(nz, False) * 2.0, fluidfft_k(ny, False) * 0.5,
                             fluidfft_k(nx, True) * 1.0, indexing="ij")
    for name, got, want in (("Kx", op.Kx, kx), ("Ky", op.Ky, ky), ("Kz", op.Kz, kz)):
        check(name, same(got, k_block(obj, want)))
    check.verify()


def test_2d_against_numpy():
    check = Checks()
    shape = (12, 10)
    obj = create_fft_object("fft2d.mpi_with_dfft", *shape)
    x = global_field(shape)
    a = np.ascontiguousarray(x_block(obj, x))
    got = obj.fft(a)
    check("fft against numpy", same(got, k_block(obj, np.fft.rfftn(x) / x.size)))
    check("is_transposed", obj.get_is_transposed() == (obj.get_dimX_K() == (1, 0)))
    for axis, k in enumerate(obj.get_k_adim_loc()):
        dim = obj.get_dimX_K()[axis]
        full = fluidfft_k(shape[dim], half=dim == 1)
        start = obj.get_seq_indices_first_K()[axis]
        check(f"k_adim axis {axis}", same(k, full[start : start + obj.get_shapeK_loc()[axis]]))
    energy = 0.5 * np.sum(np.abs(np.fft.fft2(x) / x.size) ** 2)
    check("energy from K", np.isclose(obj.compute_energy_from_K(got), energy, rtol=1e-13))
    check("gather to all", same(obj.gather_Xspace(a, root=None), x, exact=True))
    check.verify()
