"""What the dfft test modules share: references, tolerances, grids and error checks
(importable because python/conftest.py puts this directory on sys.path)."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD


def tolerance(dtype, shape):
    """DESIGN's FFT tolerance: 1e-12·log2(N) (f64), 1e-5·log2(N) (f32), relative to the
    largest reference value."""
    n = np.log2(max(2, int(np.prod(shape))))
    return (1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12) * n


def grids(d):
    """Grid choices to try on this many ranks: a slab, pencils when they fit, and auto."""
    out = ["auto", 1]
    if d >= 3 and comm.size > 1:
        out.append(2)
    return out


def field(shape, dtype, seed=7):
    """A random global field (complex when `dtype` is), the same on every rank."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def check_close(got, want, tol):
    """Largest error on any rank relative to the largest reference value on any rank."""
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = comm.allreduce(float(np.abs(want).max(initial=0.0)), op=MPI.MAX)
    err = comm.allreduce(float(np.abs(got - want).max(initial=0.0)), op=MPI.MAX)
    assert err <= tol * max(scale, 1e-300), f"relative error {err / scale:.3e} > {tol:.1e}"


def spectral_block(plan, full):
    """This rank's block of a global spectrum, in the axis order of its local array."""
    return full.transpose(plan.spectral_axes)[plan.local_slice(True)]


def same_everywhere(excinfo):
    """The exception's message, checked to be the same on every rank."""
    message = str(excinfo.value)
    messages = comm.allgather(message)
    assert all(m == message for m in messages), messages
    return message
