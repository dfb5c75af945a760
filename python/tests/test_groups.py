"""Batches split into groups of ranks, ``dfft.PFFT(..., batch=K, groups=G or "auto")``,
against numpy on every group count G dividing the ranks (K a multiple of G and not), c2c and
r2c, slabs and pencils; the arrays are the plain batch's; refusals are the same on every
rank."""

import numpy as np
import pytest
from mpi4py import MPI

import dfft
from helpers import check_close, field, same_everywhere, spectral_block

comm = MPI.COMM_WORLD

DIVISORS = [g for g in range(1, comm.size + 1) if comm.size % g == 0]


@pytest.mark.parametrize("groups", DIVISORS)
@pytest.mark.parametrize("extra", [0, 1])
@pytest.mark.parametrize("dtype", [np.complex128, np.float64])
def test_groups_match_numpy(groups, extra, dtype):
    shape = (9, 6, 8)
    k = 2 * groups + extra
    grid = 2 if comm.size >= 4 and extra else 1
    plan = dfft.PFFT(comm, shape, dtype=dtype, batch=k, groups=groups, grid=grid)
    assert plan.groups == groups and plan.batch == k
    fields = [field(shape, dtype, seed=20 + s) for s in range(k)]
    a = np.stack([f[plan.local_slice()] for f in fields])
    b = plan.forward(a)
    fft = np.fft.fftn if np.issubdtype(dtype, np.complexfloating) else np.fft.rfftn
    for i, f in enumerate(fields):
        check_close(b[i], spectral_block(plan, fft(f)), 1e-12)
    check_close(plan.backward(b), a, 1e-12)
    plan.destroy()


def test_auto_groups_transform_right():
    shape = (8, 6, 5)
    plan = dfft.PFFT(comm, shape, dtype=np.complex128, batch=6, groups="auto")
    assert comm.size % plan.groups == 0 and plan.groups <= 6
    fields = [field(shape, np.complex128, seed=s) for s in range(6)]
    a = np.stack([f[plan.local_slice()] for f in fields])
    b = plan.forward(a)
    for i, f in enumerate(fields):
        check_close(b[i], spectral_block(plan, np.fft.fftn(f)), 1e-12)
    plan.destroy()


@pytest.mark.skipif(comm.size < 2, reason="needs 2 ranks or more")
def test_groups_refused_alike_on_every_rank():
    with pytest.raises(ValueError) as e:
        dfft.PFFT(comm, (8, 6, 5), batch=comm.size - 1 or 1, groups=comm.size)
    assert "groups need at least" in same_everywhere(e)
    with pytest.raises(ValueError) as e:
        dfft.PFFT(comm, (8, 6, 5), batch=4, groups=comm.size + 1)
    assert "equal groups" in same_everywhere(e) or "at least" in same_everywhere(e)
    with pytest.raises(ValueError) as e:
        dfft.PFFT(comm, (8, 6, 5), batch=4, groups="many")
    assert "groups" in same_everywhere(e)
