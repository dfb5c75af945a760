"""In-place transforms (PFFT(in_place=True), forward_in_place, backward_in_place) against
numpy's and scipy's transforms, and their errors raised alike on every rank."""

import numpy as np
import pytest
import scipy.fft
from mpi4py import MPI

import dfft
from helpers import check_close, field, grids, same_everywhere, spectral_block, tolerance

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size


def buffer_of(view):
    """The in-place buffer a view lies in (numpy collapses base chains to the owner)."""
    return view if view.base is None else view.base



@pytest.mark.parametrize("shape", [(11, 7, 13), (8, 6), (9, 6, 5, 4)])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("transposed", [False, True])
def test_c2c_in_place_matches_numpy(shape, dtype, transposed):
    x = field(shape, dtype)
    want = np.fft.fftn(x.astype(np.complex128))
    for grid in grids(len(shape)):
        plan = dfft.PFFT(comm, shape, dtype=dtype, grid=grid, transposed_out=transposed,
                         in_place=True)
        assert plan.in_place and plan.in_place_len >= max(
            np.prod(plan.local_shape), np.prod(plan.local_spectral_shape))
        a = plan.zeros(in_place=True)
        assert a.shape == plan.local_shape and a.dtype == dtype
        assert buffer_of(a).size == plan.in_place_len
        a[...] = x[plan.local_slice()]
        b = plan.forward_in_place(a)
        assert b.shape == plan.local_spectral_shape and b.dtype == plan.spectral_dtype
        assert np.shares_memory(a, b) and buffer_of(b) is buffer_of(a)
        check_close(b, spectral_block(plan, want), tolerance(dtype, shape))
        back = plan.backward_in_place(b)
        assert back.shape == plan.local_shape and np.shares_memory(back, b)
        check_close(back, x[plan.local_slice()], tolerance(dtype, shape))


def test_c2c_in_place_batch_and_plain_arrays():
    shape = (8, 6, 10)
    x = field((2,) + shape, np.complex128)
    plan = dfft.PFFT(comm, shape, dtype=np.complex128, batch=2, normalization="forward",
                     in_place=True)
    a = plan.zeros(in_place=True)
    a[...] = x[(slice(None),) + plan.local_slice()]
    b = plan.forward_in_place(a)
    want = np.fft.fftn(x, axes=(1, 2, 3), norm="forward")
    check_close(b, want.transpose((0,) + tuple(1 + ax for ax in plan.spectral_axes))[
        (slice(None),) + plan.local_slice(True)], 1e-12 * 9)
    # A plain array of the block's shape is its own buffer where the blocks have the
    # in-place length (the even slab split: 8 rows on 1, 2 or 4 ranks).
    if size in (1, 2, 4):
        plain = np.ascontiguousarray(x[(slice(None),) + plan.local_slice()])
        assert plain.size == plan.in_place_len
        out = plan.forward_in_place(plain)
        assert np.shares_memory(out, plain)
        check_close(out, b, 1e-12 * 9)


def test_r2r_in_place_matches_scipy():
    shape = (9, 8, 7)
    kinds = ["dct2", "dst2", "dct1"]
    scipy_type = {"dct1": ("dct", 1), "dct2": ("dct", 2), "dst2": ("dst", 2)}
    x = field(shape, np.float64)
    want = x
    for axis, kind in enumerate(kinds):
        fn, t = scipy_type[kind]
        want = getattr(scipy.fft, fn)(want, type=t, axis=axis)
    for grid in grids(3):
        plan = dfft.PFFT(comm, shape, kind="r2r", axes_kinds=kinds, grid=grid,
                         in_place=True)
        a = plan.zeros(in_place=True)
        a[...] = x[plan.local_slice()]
        b = plan.forward_in_place(a)
        check_close(b, spectral_block(plan, want), tolerance(np.float64, shape))
        check_close(plan.backward_in_place(b), x[plan.local_slice()],
                    tolerance(np.float64, shape))


@pytest.mark.parametrize("shape", [(11, 7, 13), (12, 10), (8, 6, 9)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transposed", [False, True])
def test_r2c_in_place_matches_numpy(shape, dtype, transposed):
    """Real-to-complex in place in FFTW's padded layout: rows of the last axis padded to
    2*(n//2+1) scalars, the spectrum the buffer's scalars read as complex."""
    x = field(shape, dtype)
    want = np.fft.rfftn(x.astype(np.float64))
    for grid in grids(len(shape)):
        plan = dfft.PFFT(comm, shape, dtype=dtype, grid=grid, transposed_out=transposed,
                         in_place=True)
        a = plan.zeros(in_place=True)
        n = shape[-1]
        item = np.dtype(dtype).itemsize
        assert a.shape == plan.local_shape and a.dtype == dtype
        assert a.strides[-2] == item * 2 * (n // 2 + 1) and a.strides[-1] == item
        assert buffer_of(a).size == plan.in_place_len
        a[...] = x[plan.local_slice()]
        b = plan.forward_in_place(a)
        assert b.shape == plan.local_spectral_shape and b.dtype == plan.spectral_dtype
        assert np.shares_memory(a, b)
        check_close(b, spectral_block(plan, want), tolerance(dtype, shape))
        back = plan.backward_in_place(b)
        assert back.shape == plan.local_shape and back.strides == a.strides
        check_close(back, x[plan.local_slice()], tolerance(dtype, shape))


@pytest.mark.parametrize("kind, dtype", [("c2c", np.complex128), ("r2c", np.float64),
                                         ("r2c", np.float32), ("r2r", np.float64)])
def test_in_place_zeros_start_on_a_cache_line(kind, dtype):
    """zeros(in_place=True) buffers start on a 64-byte line, as the out-of-place zeros()
    arrays do (numpy's large arrays start 16 bytes past one), and are zeroed, writable and
    accepted by the transforms through either view."""
    shape = (64, 32, 48)
    axes = ["dct2"] * 3 if kind == "r2r" else None
    plan = dfft.PFFT(comm, shape, kind=kind, dtype=dtype, axes_kinds=axes, in_place=True)
    for spectral in (False, True):
        a = plan.zeros(spectral, in_place=True)
        buffer = buffer_of(a)
        assert buffer.ctypes.data % 64 == 0 and a.ctypes.data == buffer.ctypes.data
        assert buffer.size == plan.in_place_len and buffer.flags.c_contiguous
        assert buffer.flags.writeable and not buffer.any()
    x = field(shape, dtype)
    a = plan.zeros(in_place=True)
    a[...] = x[plan.local_slice()]
    back = plan.backward_in_place(plan.forward_in_place(a))
    check_close(back, x[plan.local_slice()], tolerance(dtype, shape))


def test_r2c_in_place_refuses_an_unpadded_array():
    plan = dfft.PFFT(comm, (8, 6, 10), dtype=np.float64, in_place=True)
    last = size - 1
    a = np.zeros(plan.local_shape) if rank == last else plan.zeros(in_place=True)
    with pytest.raises(ValueError) as e:
        plan.forward_in_place(a)
    assert f"rank {last}: forward_in_place input must be a view" in same_everywhere(e)


def test_in_place_needs_an_in_place_plan():
    plan = dfft.PFFT(comm, (8, 6, 10), dtype=np.complex128)
    assert not plan.in_place and plan.in_place_len == 0
    for call in (plan.forward_in_place, plan.backward_in_place):
        with pytest.raises(ValueError) as e:
            call(plan.zeros())
        assert "needs a plan made with in_place=True" in same_everywhere(e)
    with pytest.raises(ValueError):
        plan.zeros(in_place=True)


def test_in_place_refuses_other_arrays_on_every_rank():
    shape = (8, 6, 10)
    plan = dfft.PFFT(comm, shape, dtype=np.complex128, in_place=True, normalization="none")
    last = size - 1
    # A view into a larger array: the transform would overwrite the rest as scratch.
    bigger = np.zeros((2,) + plan.local_shape, np.complex128)
    a = bigger[0] if rank == last else plan.zeros(in_place=True)
    with pytest.raises(ValueError) as e:
        plan.forward_in_place(a)
    message = same_everywhere(e)
    assert f"rank {last}: forward_in_place input must be a view" in message
    assert "not such a buffer" in message
    # The wrong dtype, a read-only buffer, the spectral view passed as the input.
    good = plan.zeros(in_place=True)
    cases = {
        "dtype": good.view(np.float64),
        "read-only": np.frombuffer(bytes(good.nbytes), np.complex128).reshape(good.shape),
        "shape": plan.forward_in_place(good).reshape(-1),
    }
    for name, wrong in cases.items():
        a = wrong if rank == last else plan.zeros(in_place=True)
        with pytest.raises(ValueError) as e:
            plan.forward_in_place(a)
        message = same_everywhere(e)
        assert f"rank {last}: forward_in_place input" in message, (name, message)
    # The plan stays usable.
    a = plan.zeros(in_place=True)
    a[...] = 1
    b = plan.forward_in_place(a)
    total = comm.allreduce(float(np.abs(b).sum()), op=MPI.SUM)
    assert total == pytest.approx(np.prod(shape))
