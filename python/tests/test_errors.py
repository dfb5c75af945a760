"""Wrong input raises the same ValueError on every rank, even when only one rank got it
wrong, and never crashes or hangs."""

import numpy as np
import pytest
from mpi4py import MPI

import dfft
from helpers import same_everywhere

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size


@pytest.fixture
def plan():
    return dfft.PFFT(comm, (8, 6, 10), transposed_out=True)


def test_wrong_shape_on_the_last_rank_only(plan):
    a = plan.zeros()
    if rank == size - 1:
        a = np.zeros(tuple(n + 1 for n in plan.local_shape))
    with pytest.raises(ValueError) as e:
        plan.forward(a)
    message = same_everywhere(e)
    assert f"rank {size - 1}: forward input has shape" in message and "expected" in message


def test_wrong_dtype(plan):
    with pytest.raises(ValueError) as e:
        plan.forward(plan.zeros().astype(np.float32))
    assert "has dtype float32, expected float64" in same_everywhere(e)


def test_not_contiguous(plan):
    big = np.zeros(tuple(2 * n for n in plan.local_shape))
    view = big[::2, ::2, ::2]
    with pytest.raises(ValueError) as e:
        plan.forward(view)
    assert "not C-contiguous" in same_everywhere(e)


def test_not_an_array(plan):
    with pytest.raises(ValueError) as e:
        plan.forward([[1.0]])
    assert "must be a numpy.ndarray" in same_everywhere(e)


def test_read_only_output(plan):
    out = plan.zeros(spectral=True)
    out.flags.writeable = False
    with pytest.raises(ValueError) as e:
        plan.forward(plan.zeros(), out)
    assert "read-only" in same_everywhere(e)


def test_output_aliasing_input():
    plan = dfft.PFFT(comm, (8, 6, 10), dtype=np.complex128)
    a = plan.zeros()
    if plan.local_shape == plan.local_spectral_shape:
        with pytest.raises(ValueError) as e:
            plan.forward(a, a)
        assert "shares memory" in same_everywhere(e)


def test_backward_wrong_spectral_shape(plan):
    with pytest.raises(ValueError) as e:
        plan.backward(plan.zeros())
    assert "backward input" in same_everywhere(e)


def test_plan_still_works_after_errors(plan):
    x = np.arange(480, dtype=np.float64).reshape(8, 6, 10)
    with pytest.raises(ValueError):
        plan.forward(np.zeros(3))
    b = plan.forward(np.ascontiguousarray(x[plan.local_slice()]))
    want = np.fft.rfftn(x).transpose(plan.spectral_axes)[plan.local_slice(True)]
    assert np.allclose(b, want)


@pytest.mark.parametrize("kwargs,needle", [
    (dict(grid=(size + 1,)), "processes"),
    (dict(grid=5), "grid of rank 5"),
    (dict(kind="c2c", dtype=np.float64), "dtype must be complex128 or complex64"),
    (dict(kind="r2c", dtype=np.complex128), "dtype must be float64 or float32"),
    (dict(kind="r2r"), "needs axes_kinds"),
    (dict(kind="fft"), "unknown kind"),
    (dict(normalization="unitary"), "unknown normalization"),
    (dict(axes_kinds=["fft", "dct9", "fft"]), "unknown axis kind"),
    (dict(padding=0.5), "padding"),
    (dict(batch=0), "batch"),
    (dict(dtype=np.int32), "unsupported dtype int32"),
])
def test_bad_plan_arguments(kwargs, needle):
    with pytest.raises(ValueError) as e:
        dfft.PFFT(comm, (8, 6, 10), **kwargs)
    assert needle in same_everywhere(e)
    assert isinstance(e.value, dfft.DfftError)


def test_bad_shape():
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, (8,))
    assert "at least 2 dimensions" in same_everywhere(e)


def test_not_a_communicator():
    with pytest.raises(TypeError, match="mpi4py intra-communicator"):
        dfft.PFFT("COMM_WORLD", (8, 8))


def test_destroy_and_with():
    with dfft.PFFT(comm, (8, 6, 10)) as plan:
        b = plan.forward(plan.zeros())
        assert not plan.destroyed
    assert plan.destroyed
    with pytest.raises(ValueError, match="destroyed"):
        plan.backward(b)
    plan.destroy()  # idempotent
    assert plan.local_shape and plan.grid  # what the plan was stays readable


def test_dropping_plans_in_cycles_on_one_rank_only_does_not_hang():
    """Python frees objects in reference cycles when each process's collector decides: here
    rank 0 alone collects plans (and redistributions) that sit in cycles, then every rank
    runs collective transforms; a plan that freed its MPI objects when dropped would wait
    for the other ranks there."""
    import gc

    for _ in range(3):
        plan = dfft.PFFT(comm, (8, 6, 10), transposed_out=True)
        plan.forward(plan.zeros())
        r = dfft.Redistribution(comm, (6, 4), f"grid={size},dist=cyclic(1),*",
                                "grid=1,dist=block,*")
        cycle = {"plan": plan, "redistribution": r}
        cycle["self"] = cycle
        del plan, r, cycle
    if rank == 0:
        gc.collect()
    with dfft.PFFT(comm, (8, 6, 10), transposed_out=True) as fresh:
        x = np.arange(480.0).reshape(8, 6, 10)
        got = fresh.forward(np.ascontiguousarray(x[fresh.local_slice()]))
        want = np.fft.rfftn(x).transpose(fresh.spectral_axes)[fresh.local_slice(True)]
        assert np.allclose(got, want)
    comm.Barrier()


def test_a_bad_argument_on_one_rank_only_raises_everywhere():
    """A rank whose arguments fail their checks (or differ from rank 0's) must not leave the
    others in the plan's collective set-up: every rank raises."""
    if size == 1:
        pytest.skip("SKIPPED: needs 2 or more ranks (one rank cannot disagree)")
    last = rank == size - 1
    with pytest.raises(ValueError) as e:
        dfft.PFFT(comm, (8, 6, 10), normalization="bogus" if last else "backward")
    assert f"rank {size - 1}" in same_everywhere_but(e, size - 1) or last
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, (8, 6, 12) if last else (8, 6, 10))
    assert f"rank {size - 1}: the arguments differ from rank 0's: shape=[8, 6, 12]" in \
        same_everywhere(e)
    with pytest.raises(dfft.DfftError) as e:
        dfft.Redistribution(comm, (6, 4), f"grid={size},dist=block,*", "grid=1,dist=block,*",
                            dtype=np.float32 if last else np.float64)
    assert "dtype=float32" in same_everywhere(e)
    # Nothing was left half made: the communicator still works for a plan.
    with dfft.PFFT(comm, (8, 6, 10)) as plan:
        plan.forward(plan.zeros())


def same_everywhere_but(excinfo, failing):
    """The message the ranks other than ``failing`` raised (``failing`` raised its own)."""
    message = str(excinfo.value)
    others = [m for r, m in enumerate(comm.allgather(message)) if r != failing]
    assert all(m == others[0] for m in others), others
    return others[0]


def test_a_panic_on_one_rank_becomes_a_python_exception():
    """On a one-rank communicator a panic in dfft is Python's PanicException (the
    interpreter goes on); tests/python.rs checks the MPI_Abort with several ranks."""
    from dfft import _dfft

    with pytest.raises(BaseException) as e:
        _dfft._panic_in_collective(MPI.COMM_SELF)
    assert type(e.value).__name__ == "PanicException"
    assert "a panic for the tests on rank 0" in str(e.value)
    with dfft.PFFT(comm, (8, 6, 10)) as plan:
        plan.forward(plan.zeros())


@pytest.fixture
def watchdog():
    """Ends this process with a traceback if the test blocks for a minute (a rank waiting
    in a collective call the others never make), instead of holding the whole launch."""
    import faulthandler

    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def misaligned(like):
    """An array of ``like``'s shape and dtype whose data start 4 bytes past an element
    boundary (C-contiguous, writable, but not aligned)."""
    n, itemsize = like.size, like.dtype.itemsize
    raw = np.frombuffer(bytearray(n * itemsize + 4), like.dtype, n, 4)
    return raw.reshape(like.shape)


@pytest.mark.parametrize("call", ["forward", "forward out", "backward", "backward out"])
def test_a_misaligned_array_on_one_rank_raises_everywhere(watchdog, call, plan):
    """A misaligned array on the last rank only: every rank raises the same ValueError
    naming that rank (the others used to wait forever in the transform)."""
    last = rank == size - 1
    a, b = plan.zeros(), plan.zeros(spectral=True)
    if call == "forward":
        run = lambda: plan.forward(misaligned(a) if last else a, b)
    elif call == "forward out":
        run = lambda: plan.forward(a, misaligned(b) if last else b)
    elif call == "backward":
        run = lambda: plan.backward(misaligned(b) if last else b, a)
    else:
        run = lambda: plan.backward(b, misaligned(a) if last else a)
    with pytest.raises(ValueError) as e:
        run()
    message = same_everywhere(e)
    assert f"rank {size - 1}:" in message and "not aligned" in message, message
    plan.forward(a, b)  # the plan still works


def test_a_misaligned_redistribution_block_raises_everywhere(watchdog):
    # Two rows per rank, so the last rank owns some and its block is checked.
    r = dfft.Redistribution(
        comm, (2 * size, 4), f"grid={size},dist=block,*", "grid=1,dist=block,*"
    )
    src = np.zeros(r.src_shape)
    if rank == size - 1:
        src = misaligned(src)
    with pytest.raises(ValueError) as e:
        r.execute(src)
    message = same_everywhere(e)
    assert f"rank {size - 1}: source block" in message and "not aligned" in message, message
    r.destroy()


def test_a_big_endian_array_names_its_byte_order(plan):
    with pytest.raises(ValueError) as e:
        plan.forward(plan.zeros().astype(">f8"))
    message = same_everywhere(e)
    assert "has dtype >f8 (big-endian float64), expected float64" in message, message


@pytest.mark.parametrize("threads", [0, 1025, 100000])
def test_thread_counts_outside_1_to_1024_are_refused(watchdog, threads):
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, (8, 6, 10), threads=threads)
    assert f"threads must be 1 to 1024, got {threads}" in same_everywhere(e)


def test_too_many_threads_on_one_rank_only_raise_everywhere(watchdog):
    if size == 1:
        pytest.skip("SKIPPED: needs 2 or more ranks (one rank cannot disagree)")
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, (8, 6, 10), threads=5000 if rank == size - 1 else 1)
    assert f"rank {size - 1}: threads must be 1 to 1024, got 5000" in same_everywhere(e)


def test_a_bad_dtype_on_one_rank_only_raises_everywhere(watchdog):
    if size == 1:
        pytest.skip("SKIPPED: needs 2 or more ranks (one rank cannot disagree)")
    with pytest.raises(ValueError) as e:
        dfft.Redistribution(comm, (6, 4), f"grid={size},dist=block,*", "grid=1,dist=block,*",
                            dtype="no such dtype" if rank == size - 1 else np.float64)
    assert f"rank {size - 1}" in same_everywhere(e)


def test_plans_work_from_another_thread(watchdog):
    """mpi4py initializes MPI_THREAD_MULTIPLE: a plan made on one thread runs on another
    (one call at a time), and a Redistribution too; the results are the same."""
    import threading

    plan = dfft.PFFT(comm, (8, 6, 10))
    x = np.ascontiguousarray(np.arange(480.0).reshape(8, 6, 10)[plan.local_slice()])
    want = plan.forward(x).copy()
    r = dfft.Redistribution(comm, (6, 4), f"grid={size},dist=block,*", "grid=1,dist=block,*")
    got, errors = {}, []

    def work():
        try:
            got["plan"] = plan.forward(x)
            got["redistribution"] = r.execute(np.ones(r.src_shape))
        except BaseException as e:  # noqa: B036 (a PanicException is a BaseException)
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, repr(errors[0])
    assert np.array_equal(got["plan"], want)
    assert (got["redistribution"] == 1).all()
    plan.destroy()
    r.destroy()
