"""dfft.Redistribution on index-valued arrays: every element holds its global linear index,
so each rank checks its block exactly, against blocks computed here from the definitions of
the distributions (numpy only)."""

import numpy as np
import pytest
from mpi4py import MPI

import dfft

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size


def owned(n, procs, block, coord):
    """Global indices that grid coordinate ``coord`` holds along an axis of ``n`` with
    blocks of ``block`` dealt round robin (HPF CYCLIC(block)), in local order."""
    return np.array([m for m in range(n) if (m // block) % procs == coord], dtype=np.int64)


def local_block(shape, grid, blocks):
    """This rank's block of the index-valued global array (row-major grid)."""
    glob = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if rank >= int(np.prod(grid)):
        return np.zeros((0,) * len(shape), dtype=np.int64)
    coords = np.unravel_index(rank, grid)
    index = [owned(n, p, b, c) for n, p, b, c in zip(shape, grid, blocks, coords)]
    return glob[np.ix_(*index)]


def spec(grid, blocks):
    return "grid={},dist={}".format("x".join(map(str, grid)),
                                    ",".join(f"cyclic({b})" for b in blocks))


def grids():
    two = [(size, 1), (1, size)]
    for p in range(2, size + 1):
        if size % p == 0:
            two.append((p, size // p))
    return two


@pytest.mark.parametrize("schedule", ["alltoallv", "caterpillar", "async", "pipelined", "shared"])
def test_block_cyclic_to_block_cyclic(schedule):
    shape = (23, 17)
    for g_from in grids():
        for g_to in grids():
            b_from, b_to = (3, 2), (4, 5)
            src = local_block(shape, g_from, b_from)
            r = dfft.Redistribution(comm, shape, spec(g_from, b_from), spec(g_to, b_to),
                                    dtype=np.int64, schedule=schedule)
            assert r.src_shape == src.shape
            out = r.execute(np.ascontiguousarray(src))
            np.testing.assert_array_equal(out, local_block(shape, g_to, b_to))
            back = dfft.Redistribution(comm, shape, spec(g_to, b_to), spec(g_from, b_from),
                                       dtype=np.int64, schedule=schedule)
            np.testing.assert_array_equal(back.execute(out), src)


def test_redistribute_function_and_dtypes():
    shape = (10, 9)
    g = (size, 1)
    for dtype in (np.float64, np.complex64, np.int32):
        src = local_block(shape, g, (2, 9)).astype(dtype)
        out = dfft.redistribute(comm, np.ascontiguousarray(src), spec(g, (2, 9)),
                                spec((1, size), (10, 1)), shape)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, local_block(shape, (1, size), (10, 1)).astype(dtype))


def test_wrong_block_on_one_rank():
    shape = (10, 9)
    g = (size, 1)
    r = dfft.Redistribution(comm, shape, spec(g, (2, 9)), spec((1, size), (10, 1)))
    src = np.zeros(r.src_shape)
    if rank == 0:
        src = np.zeros((r.src_shape[0] + 1, r.src_shape[1]))
    with pytest.raises(ValueError) as e:
        r.execute(src)
    messages = comm.allgather(str(e.value))
    assert all(m == messages[0] for m in messages)
    assert "rank 0: source block has shape" in messages[0]


def test_bad_spec():
    with pytest.raises(dfft.DfftError, match="malformed distribution spec"):
        dfft.Redistribution(comm, (10, 9), "grid=2,dist=cyclic(0)", "dist=*")


@pytest.mark.parametrize("from_spec, grid, blocks", [
    ("grid={p}x1,dist=cyclic(3),cyclic(2)", "p1", (3, 2)),
    ("grid=1x{p},dist=cyclic(4),cyclic(5)", "1p", (4, 5)),
    ("grid={p},dist=cyclic(1),*", "p1", (1, 17)),
])
def test_redistribute_finds_the_global_shape(from_spec, grid, blocks):
    shape = (23, 17)
    grid = tuple(size if g == "p" else 1 for g in grid)
    src = local_block(shape, grid, blocks)
    out = dfft.redistribute(comm, src, from_spec.format(p=size), spec((1, size), (23, 1)))
    np.testing.assert_array_equal(out, local_block(shape, (1, size), (23, 1)))


def test_global_shape_from_blocks_on_part_of_the_ranks():
    """A grid on fewer ranks than the communicator: the others hold empty blocks."""
    from dfft import _dfft

    assert _dfft._global_shape("grid=2,dist=block,*", [[5, 7], [4, 7], [0, 0]]) == [9, 7]
    assert _dfft._global_shape("grid=2x2,dist=cyclic(2),block",
                               [[4, 3], [4, 2], [3, 3], [3, 2]]) == [7, 5]
    with pytest.raises(dfft.DfftError, match="not .* of any global shape"):
        _dfft._global_shape("grid=2x2,dist=cyclic(2),block", [[4, 3], [4, 2], [3, 3], [2, 2]])
    with pytest.raises(dfft.DfftError, match="needs 4 ranks"):
        _dfft._global_shape("grid=2x2,dist=block", [[4, 3], [4, 2]])


def test_redistribute_blocks_that_fit_no_shape_raise_everywhere():
    if size == 1:
        pytest.skip("SKIPPED: needs 2 or more ranks")
    g = (size, 1)
    src = local_block((10, 9), g, (2, 9))
    if rank == size - 1:
        src = np.zeros((src.shape[0], src.shape[1] + 1), dtype=src.dtype)
    with pytest.raises(dfft.DfftError) as e:
        dfft.redistribute(comm, src, spec(g, (2, 9)), spec((1, size), (10, 1)))
    messages = comm.allgather(str(e.value))
    assert all(m == messages[0] for m in messages) and "of any global shape" in messages[0]


def test_time_rust():
    with dfft.Redistribution(comm, (64, 64), spec((size, 1), (8, 64)),
                             spec((1, size), (64, 8))) as r:
        times = r.time_rust(4)
        assert len(times) == 4 and all(t > 0 for t in times)
