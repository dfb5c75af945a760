"""Partial transforms (``PFFT(..., axes=...)``), halo exchange (``plan.exchange_halo``) and
deterministic plans against numpy, on whatever number of ranks pytest runs under: every
rank computes the serial reference from the same seed and compares its own block."""

import numpy as np
import pytest
from mpi4py import MPI

import dfft
from helpers import check_close, field, grids, same_everywhere, spectral_block, tolerance

comm = MPI.COMM_WORLD


@pytest.mark.parametrize("axes", [(1, 2), (0,), (0, 2), (2,), (-1, 0)])
def test_partial_c2c_and_r2c_match_numpy(axes):
    shape = (5, 7, 6)
    x = field(shape, np.complex128)
    xr = field(shape, np.float64)
    for grid in grids(len(shape)):
        plan = dfft.PFFT(comm, shape, dtype=np.complex128, grid=grid, axes=axes)
        kinds = plan.axes_kinds
        assert [k != "identity" for k in kinds] == [
            a in [b % 3 for b in axes] for a in range(3)
        ], kinds
        b = plan.forward(np.ascontiguousarray(x[plan.local_slice()]))
        check_close(b, spectral_block(plan, np.fft.fftn(x, axes=axes)), tolerance(x.dtype, shape))
        back = plan.backward(b)
        check_close(back, x[plan.local_slice()], tolerance(x.dtype, shape))
        # r2c halves the last transformed axis (numpy: the last axis of a sorted list).
        ordered = sorted(a % 3 for a in axes)
        plan = dfft.PFFT(comm, shape, dtype=np.float64, grid=grid, axes=axes)
        b = plan.forward(np.ascontiguousarray(xr[plan.local_slice()]))
        want = np.fft.rfftn(xr, axes=ordered)
        check_close(b, spectral_block(plan, want), tolerance(xr.dtype, shape))
        check_close(plan.backward(b), xr[plan.local_slice()], tolerance(xr.dtype, shape))


def test_partial_with_r2r_kinds_and_identity_names():
    shape = (6, 5, 7)
    x = field(shape, np.float64)
    plan = dfft.PFFT(comm, shape, kind="r2r", axes_kinds=["identity", "dht", "identity"],
                     grid=1)
    b = plan.forward(np.ascontiguousarray(x[plan.local_slice()]))
    f = np.fft.fft(x, axis=1)
    check_close(b, spectral_block(plan, f.real - f.imag), tolerance(x.dtype, shape))
    same = dfft.PFFT(comm, shape, kind="r2r", axes_kinds=["dct2", "dht", "dct2"], axes=(1,),
                     grid=1)
    assert same.axes_kinds == ["identity", "dht", "identity"]
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, shape, axes=(1, 3))
    assert "out of range" in same_everywhere(e)
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, shape, kind="r2r", axes=(1,))
    assert "axes_kinds" in same_everywhere(e)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(7, 5, 6), (3, 9), (2, 3, 4, 3)])
def test_halo_matches_numpy_pad(dtype, shape):
    x = field(shape, dtype)
    d = len(shape)
    for grid in grids(d):
        plan = dfft.PFFT(comm, shape, dtype=dtype, grid=grid)
        u = np.ascontiguousarray(x[plan.local_slice()])
        local = plan.local_slice()
        # Widths beyond the neighbours' blocks and beyond the axis (several wraps).
        for width in (1, 2, tuple(range(1, d + 1)), tuple([0] * (d - 1) + [11])):
            w = (width,) * d if isinstance(width, int) else width
            wide = tuple(slice(s.start, s.stop + 2 * k) for s, k in zip(local, w))
            got = plan.exchange_halo(u, width)
            want = np.pad(x, [(k, k) for k in w], mode="wrap")[wide]
            assert got.dtype == u.dtype and got.shape == want.shape, (got.shape, want.shape)
            assert np.array_equal(got, want), (grid, width)
            got = plan.exchange_halo(u, width, periodic=False, fill=-3)
            want = np.pad(x, [(k, k) for k in w], mode="constant", constant_values=-3)[wide]
            assert np.array_equal(got, want), (grid, width, "fill")
            # In place: the block in the interior of an extended array, its halo dirty.
            h = np.full(want.shape, 99, dtype=u.dtype)
            h[tuple(slice(k, k + n) for k, n in zip(w, u.shape))] = u
            assert plan.exchange_halo(h, width, periodic=False, fill=-3, in_place=True) is h
            assert np.array_equal(h, want), (grid, width, "fill in place")


def test_halo_of_a_batch_and_its_errors():
    shape, batch = (6, 5), 2
    plan = dfft.PFFT(comm, shape, dtype=np.complex128, batch=batch, grid=1)
    xs = np.stack([field(shape, np.complex128, seed=s) for s in (1, 2)])
    u = np.ascontiguousarray(xs[(slice(None),) + tuple(plan.local_slice())])
    local = plan.local_slice()
    got = plan.exchange_halo(u, (2, 1))
    wide = (slice(None),) + tuple(slice(s.start, s.stop + 2 * k) for s, k in zip(local, (2, 1)))
    want = np.pad(xs, [(0, 0), (2, 2), (1, 1)], mode="wrap")[wide]
    assert np.array_equal(got, want)
    h = np.zeros_like(want)
    h[:, 2:-2, 1:-1] = u
    assert np.array_equal(plan.exchange_halo(h, (2, 1), in_place=True), want)
    with pytest.raises(ValueError) as e:
        plan.exchange_halo(u, (2, 1), in_place=True)
    assert "exchange_halo in_place array" in same_everywhere(e)
    if comm.size > 1:
        with pytest.raises(dfft.DfftError) as e:
            plan.exchange_halo(h if comm.rank == 0 else u, (2, 1), in_place=comm.rank == 0)
        assert "in_place=True on some ranks and not on others" in same_everywhere(e)
    with pytest.raises(dfft.DfftError) as e:
        plan.exchange_halo(u, (1, 2, 3))
    assert "3 entries for 2 axes" in same_everywhere(e)
    with pytest.raises(ValueError) as e:
        plan.exchange_halo(u[:, :, :1] if comm.rank == 0 else u, 1)
    assert "exchange_halo input" in same_everywhere(e)
    with pytest.raises(dfft.DfftError) as e:
        plan.exchange_halo(u, 1, fill=1.0)
    assert "periodic=False" in same_everywhere(e)
    one_d = dfft.PFFT(comm, (60,), dtype=np.complex128)
    with pytest.raises(dfft.DfftError) as e:
        one_d.exchange_halo(np.zeros(one_d.local_shape, np.complex128), 1)
    assert "this plan is 1-D (shape (60,))" in same_everywhere(e)


def test_halo_plans_are_made_once_and_kept():
    # A solver's loop: 2000 in-place calls stay right and reuse one halo plan (one duplicated
    # communicator); the copying form shares it, a new boundary or widths make one more.
    shape, w = (9, 7), (1, 2)
    x = field(shape, np.float64)
    plan = dfft.PFFT(comm, shape, dtype=np.float64, grid=1)
    local = plan.local_slice()
    u = np.ascontiguousarray(x[local])
    wide = tuple(slice(s.start, s.stop + 2 * k) for s, k in zip(local, w))
    want = np.pad(x, [(k, k) for k in w], mode="wrap")[wide]
    h = np.zeros(want.shape)
    h[1:-1, 2:-2] = u
    times = []
    for step in range(2000):
        h[0], h[:, -1] = step, -step
        start = MPI.Wtime()
        plan.exchange_halo(h, w, in_place=True)
        times.append(MPI.Wtime() - start)
        assert np.array_equal(h, want), step
    assert plan.halo_plans_made == 1
    assert np.array_equal(plan.exchange_halo(u, w), want)
    filled = np.pad(x, [(k, k) for k in w], mode="constant", constant_values=2)[wide]
    for _ in range(3):
        assert np.array_equal(plan.exchange_halo(u, w, periodic=False, fill=2), filled)
        assert np.array_equal(plan.exchange_halo(u, 1), np.pad(x, 1, mode="wrap")[
            tuple(slice(s.start, s.stop + 2) for s in local)])
    assert plan.halo_plans_made == 3
    if comm.rank == 0:
        print(f"exchange_halo in place on {comm.size} ranks: first {times[0] * 1e6:.0f} us, "
              f"median of the next 1999 {np.median(times[1:]) * 1e6:.1f} us")
    plan.destroy()


def test_deterministic_plans_give_the_same_bits_on_every_grid():
    shape = (12, 10, 14)
    x = field(shape, np.complex128)
    full = dfft.PFFT(MPI.COMM_SELF, shape, dtype=np.complex128, deterministic=True)
    want = full.forward(x)
    for grid in grids(len(shape)):
        for threads in (1, 2):
            plan = dfft.PFFT(comm, shape, dtype=np.complex128, grid=grid, threads=threads,
                             deterministic=True)
            b = plan.forward(np.ascontiguousarray(x[plan.local_slice()]))
            assert np.array_equal(b, spectral_block(plan, want)), (grid, threads)
