"""dfft.PFFT against numpy/scipy references, on whatever number of ranks pytest runs under.

Every rank computes the serial reference from the same seed and compares its own block
(``local_slice``); each test runs the same collective calls on every rank.
"""

import threading
import time

import numpy as np
import pytest
import scipy.fft
from mpi4py import MPI

import dfft
from helpers import check_close, field, grids, spectral_block, tolerance

comm = MPI.COMM_WORLD
size = comm.size


@pytest.mark.parametrize("shape", [(11, 7, 13), (12, 10), (9, 7, 5, 6)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transposed", [False, True])
def test_r2c_matches_numpy(shape, dtype, transposed):
    for grid in grids(len(shape)):
        plan = dfft.PFFT(comm, shape, dtype=dtype, grid=grid, transposed_out=transposed)
        assert plan.kind == "r2c" and plan.dtype == dtype
        x = field(shape, dtype)
        a = np.ascontiguousarray(x[plan.local_slice()])
        assert a.shape == plan.local_shape
        b = plan.forward(a)
        assert b.shape == plan.local_spectral_shape and b.dtype == plan.spectral_dtype
        want = np.fft.rfftn(x.astype(np.float64))
        check_close(b, spectral_block(plan, want), tolerance(dtype, shape))
        back = plan.backward(b)
        check_close(back, a, tolerance(dtype, shape))


@pytest.mark.parametrize("shape", [(11, 7, 13), (8, 6)])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_c2c_matches_numpy(shape, dtype):
    for grid in grids(len(shape)):
        for transposed in (False, True):
            plan = dfft.PFFT(comm, shape, dtype=dtype, grid=grid, transposed_out=transposed,
                             normalization="none")
            assert plan.kind == "c2c"
            x = field(shape, dtype)
            a = np.ascontiguousarray(x[plan.local_slice()])
            b = plan.forward(a)
            want = np.fft.fftn(x.astype(np.complex128))
            check_close(b, spectral_block(plan, want), tolerance(dtype, shape))
            out = plan.zeros()
            assert plan.backward(b, out) is out
            n = int(np.prod(shape))
            check_close(out, n * a, tolerance(dtype, shape))


def test_r2r_matches_scipy():
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
                         normalization="backward")
        a = np.ascontiguousarray(x[plan.local_slice()])
        b = plan.forward(a)
        check_close(b, spectral_block(plan, want), tolerance(np.float64, shape))
        check_close(plan.backward(b), a, tolerance(np.float64, shape))


def halfcomplex(x, axis):
    """FFTW's R2HC along `axis` from numpy's rfft: Re X_0..Re X_{n/2}, then Im X_{(n-1)/2}..Im X_1."""
    n = x.shape[axis]
    h = np.moveaxis(np.fft.rfft(x, axis=axis), axis, 0)
    out = np.concatenate([h.real, h.imag[1:(n + 1) // 2][::-1]])
    return np.moveaxis(out, 0, axis)


def test_halfcomplex_and_hartley_match_numpy():
    shape = (9, 8, 7)
    x = field(shape, np.float64)
    want = halfcomplex(x, 0)  # R2HC along axis 0
    want = np.fft.fft(want, axis=1)
    want = want.real - want.imag  # DHT along axis 1: Re - Im of the DFT
    # HC2R along axis 2: n times the inverse real DFT of the halfcomplex rows.
    n = shape[2]
    h = want[..., : n // 2 + 1].astype(np.complex128)
    h[..., 1:(n + 1) // 2] += 1j * want[..., n - 1 : n // 2 : -1]
    want = n * np.fft.irfft(h, n=n, axis=2)
    for grid in grids(3):
        plan = dfft.PFFT(comm, shape, kind="r2r", axes_kinds=["r2hc", "dht", "hc2r"], grid=grid)
        a = np.ascontiguousarray(x[plan.local_slice()])
        b = plan.forward(a)
        check_close(b, spectral_block(plan, want), tolerance(np.float64, shape))
        check_close(plan.backward(b), a, tolerance(np.float64, shape))


@pytest.mark.parametrize("normalization,scales", [
    ("none", lambda n: (1.0, 1.0)),
    ("backward", lambda n: (1.0, 1.0 / n)),
    ("forward", lambda n: (1.0 / n, 1.0)),
    ("ortho", lambda n: (n**-0.5, n**-0.5)),
])
def test_normalizations(normalization, scales):
    shape = (6, 5, 8)
    n = int(np.prod(shape))
    fwd, bwd = scales(n)
    plan = dfft.PFFT(comm, shape, normalization=normalization)
    assert plan.normalization == normalization
    x = field(shape, np.float64)
    a = np.ascontiguousarray(x[plan.local_slice()])
    b = plan.forward(a)
    check_close(b, fwd * spectral_block(plan, np.fft.rfftn(x)), 1e-12)
    check_close(plan.backward(b), fwd * bwd * n * a, 1e-12)


def test_batch():
    shape = (8, 6, 10)
    plan = dfft.PFFT(comm, shape, batch=3, transposed_out=True)
    assert plan.local_shape[0] == 3 and plan.local_spectral_shape[0] == 3
    fields = [field(shape, np.float64, seed=s) for s in range(3)]
    a = np.stack([f[plan.local_slice()] for f in fields])
    b = plan.forward(a)
    for i, f in enumerate(fields):
        check_close(b[i], spectral_block(plan, np.fft.rfftn(f)), 1e-12)


def test_padding_is_the_three_halves_rule():
    """Padded forward of a band-limited field sampled on the padded grid equals the
    unpadded forward of the same field (docs/spectral.md)."""
    shape = (8, 8, 8)
    padded = dfft.PFFT(comm, shape, padding=1.5, normalization="backward")
    plain = dfft.PFFT(comm, shape, normalization="backward", grid=padded.grid)
    assert padded.global_shape == (12, 12, 12) and padded.spectral_shape == (8, 8, 5)

    def sample(n):
        z, y, x = np.meshgrid(*(2 * np.pi * np.arange(n) / n,) * 3, indexing="ij")
        return np.cos(x + 2 * y) + np.sin(3 * z - y) + 0.5

    a = np.ascontiguousarray(sample(12)[padded.local_slice()])
    u = np.ascontiguousarray(sample(8)[plain.local_slice()])
    check_close(padded.forward(a), plain.forward(u), 1e-12)


def test_wavenumbers_k2_and_masks():
    shape = (8, 6, 10)
    for transposed in (False, True):
        plan = dfft.PFFT(comm, shape, transposed_out=transposed)
        k = plan.wavenumbers()
        full = [np.fft.fftfreq(8, 1 / 8), np.fft.fftfreq(6, 1 / 6), np.arange(6)]
        ranges = dict(zip(plan.spectral_axes, plan.local_slice(True)))
        for axis in range(3):
            np.testing.assert_array_equal(k[axis], full[axis][ranges[axis]].astype(np.int64))
        kz, ky, kx = np.meshgrid(*full, indexing="ij")
        want = (kz**2 + (2 * ky) ** 2 + (0.5 * kx) ** 2)
        k2 = plan.k2(lengths=(2 * np.pi, np.pi, 4 * np.pi))
        assert k2.shape == plan.local_spectral_shape
        np.testing.assert_allclose(k2, spectral_block(plan, want), rtol=1e-14)
        keep = (np.abs(kz) < 8 / 3) & (np.abs(ky) < 2) & (np.abs(kx) < 10 / 3)
        np.testing.assert_array_equal(plan.dealias_mask(), spectral_block(plan, keep))


@pytest.mark.parametrize("transposed", [False, True])
def test_minus_k2_is_the_laplacian_on_every_axis_kind(transposed):
    """backward(-k2 * forward(u)) against the analytic Laplacian of a field made of each
    axis' basis functions, on a box of lengths L: FFT axes (r2c and c2c), DCT-I, DCT-II and
    DST-II axes (cosines and sines on [0, L] at the kinds' sample points)."""
    L = (2.0, 3.0, 5.0)
    shape = (8, 6, 10)
    cases = [
        ("r2c", None, [np.arange(n) * l / n for n, l in zip(shape, L)],
         [(np.cos, 2 * np.pi * 3), (np.sin, 2 * np.pi * 2), (np.cos, 2 * np.pi * 4)]),
        ("r2r", ["dct2", "dst2", "dct1"],
         [(np.arange(shape[0]) + 0.5) * L[0] / shape[0],
          (np.arange(shape[1]) + 0.5) * L[1] / shape[1],
          np.arange(shape[2]) * L[2] / (shape[2] - 1)],
         [(np.cos, np.pi * 3), (np.sin, np.pi * 2), (np.cos, np.pi * 4)]),
    ]
    for kind, kinds, coords, basis in cases:
        plan = dfft.PFFT(comm, shape, kind=kind, axes_kinds=kinds, transposed_out=transposed)
        x, y, z = np.meshgrid(*coords, indexing="ij")
        (fx, kx), (fy, ky), (fz, kz) = [(f, k / l) for (f, k), l in zip(basis, L)]
        u = fx(kx * x) * fy(ky * y) * fz(kz * z)
        want = -(kx**2 + ky**2 + kz**2) * u
        a = np.ascontiguousarray(u[plan.local_slice()])
        got = plan.backward(-plan.k2(lengths=L) * plan.forward(a))
        check_close(got, np.ascontiguousarray(want[plan.local_slice()]), 1e-11)


def test_prediction_and_grid():
    plan = dfft.PFFT(comm, (16, 12, 10), grid="auto")
    pred = plan.prediction
    assert pred["grid"] == list(plan.grid) and pred["predicted_s"] > 0
    cands = plan.candidates()
    assert cands[0]["chosen"] and list(plan.grid) == cands[0]["grid"]
    if size > 1:
        explicit = dfft.PFFT(comm, (16, 12, 10), grid=(1, size))
        assert explicit.grid == (1, size)
    fast = dfft.PFFT(comm, (16, 12, 10), grid=plan.grid, machine={"ts_intra_s": 1e-9})
    assert fast.prediction["latency_s"] <= pred["latency_s"]
    with pytest.raises(dfft.DfftError, match="unknown field 'bogus'"):
        dfft.PFFT(comm, (16, 12, 10), machine={"bogus": 1.0})


def test_local_slices_tile_the_array():
    shape = (7, 9, 11)
    plan = dfft.PFFT(comm, shape, grid=2 if size > 1 else 1, transposed_out=True)
    for spectral in (False, True):
        glob = plan.spectral_shape if spectral else plan.global_shape
        axes = plan.spectral_axes if spectral else (0, 1, 2)
        count = np.zeros(tuple(glob[a] for a in axes), dtype=np.int64)
        count[plan.local_slice(spectral)] += 1
        total = np.zeros_like(count)
        comm.Allreduce(count, total)
        assert (total == 1).all()


@pytest.mark.parametrize("kind, dtype, transposed", [
    ("r2c", np.float64, True), ("r2c", np.float32, False), ("c2c", np.complex128, True),
])
def test_alloc_arrays_transform_like_numpy_arrays(kind, dtype, transposed):
    """Arrays of the plan's memory (alloc: one shared-memory window over the ranks, whose
    rows the transforms move between the ranks in place) give numpy's result, alone or mixed
    with ordinary arrays, and outlive destroy() while used."""
    shape = (12, 10, 9)
    plan = dfft.PFFT(comm, shape, kind=kind, dtype=dtype, transposed_out=transposed)
    a, b = plan.alloc(), plan.alloc(spectral=True)
    assert a.shape == plan.local_shape and a.dtype == plan.dtype and not a.any()
    assert b.shape == plan.local_spectral_shape and b.dtype == plan.spectral_dtype
    assert a.flags.c_contiguous and a.flags.writeable and not b.any()
    x = field(shape, dtype)
    want = (np.fft.rfftn if kind == "r2c" else np.fft.fftn)(x.astype(np.complex128).real
                                                            if kind == "r2c" else x)
    want = spectral_block(plan, want)
    tol = tolerance(dtype, shape)
    a[...] = x[plan.local_slice()]
    plain_a, plain_b = plan.zeros(), plan.zeros(True)
    for src, dst in [(a, b), (a, plain_b), (np.ascontiguousarray(a), b)]:
        dst[...] = 0
        plan.forward(src, dst)
        check_close(dst, want, tol)
    for src, dst in [(b, a), (b, plain_a), (plain_b, a)]:
        plain_b[...] = b
        dst[...] = 0
        plan.backward(src, dst)
        check_close(dst, x[plan.local_slice()], tol)
    plan.destroy()
    # The memory outlives the plan while arrays use it (destroy gives it up then).
    check_close(a, x[plan.local_slice()], tol)


def test_alloc_arrays_of_different_calls_on_different_ranks_raise():
    """Each rank passing another alloc() array (of this plan) would make the plan write into
    the peers' parts of arrays they do not pass: a ValueError on every rank, and the plan
    still works."""
    plan = dfft.PFFT(comm, (8, 6, 4), dtype=np.float64)
    firsts = [plan.alloc(), plan.alloc()]
    out = plan.alloc(True)
    mine = firsts[comm.rank % 2]
    if size > 1:
        with pytest.raises(ValueError, match="different arrays of the plan's alloc"):
            plan.forward(mine, out)
    plan.forward(firsts[0], out)
    del firsts, mine, out
    plan.destroy()


def test_gil_is_released_while_transforming():
    """A Python thread runs while a transform does: ticks stamped inside the middle half of
    a call's span could not happen if the call held the GIL throughout."""
    plan = dfft.PFFT(comm, (64, 64, 64), dtype=np.complex128, threads=1)
    a = plan.zeros()
    out = plan.zeros(spectral=True)
    stamps = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(1e-4)

    spinner = threading.Thread(target=spin)
    spinner.start()
    spans = []

    def inside():
        return sum(start + (end - start) / 4 < t < end - (end - start) / 4
                   for start, end in spans for t in list(stamps))

    # Up to 50 calls: on a loaded machine the spinner may get no processor during a few.
    try:
        for _ in range(50):
            start = time.perf_counter()
            plan.forward(a, out)
            spans.append((start, time.perf_counter()))
            if comm.allreduce(int(inside() > 0 and len(spans) >= 5), op=MPI.MIN):
                break
    finally:
        stop.set()
        spinner.join()
    assert inside() > 0, spans


def test_versions():
    from dfft.__main__ import versions

    lines = versions()
    assert lines[0] == f"dfft {dfft.__version__}"
    assert lines[1].startswith("numpy ") and lines[2].startswith("mpi4py ")
    assert "Open MPI" in lines[3] or "MPICH" in lines[3]


def test_stubs_cover_the_extension():
    """dfft/_dfft.pyi declares exactly the extension's public names."""
    import ast
    import pathlib

    from dfft import _dfft

    tree = ast.parse((pathlib.Path(dfft.__file__).parent / "_dfft.pyi").read_text())
    declared = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            declared[node.name] = {
                n.name for n in node.body
                if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            }
        elif isinstance(node, ast.FunctionDef):
            declared[node.name] = None
    public = {n for n in dir(_dfft) if not n.startswith("_")}
    assert set(declared) == public
    for name, members in declared.items():
        if members is not None and name != "DfftError":
            actual = {n for n in dir(getattr(_dfft, name)) if not n.startswith("_")}
            assert members == actual, (name, members ^ actual)


def test_zeros_start_on_a_cache_line():
    """zeros() arrays start on a 64-byte line (numpy's large arrays start 16 bytes past one)
    and are ordinary zeroed C-contiguous arrays of the plan's shapes and dtypes."""
    plan = dfft.PFFT(comm, (64, 32, 48), dtype=np.float64)
    for spectral in (False, True):
        a = plan.zeros(spectral)
        assert a.ctypes.data % 64 == 0
        assert a.flags.c_contiguous and a.flags.writeable and not a.any()
        assert a.shape == plan.shape(spectral)
        assert a.dtype == (plan.spectral_dtype if spectral else plan.dtype)
    u = plan.zeros()
    u[...] = field(plan.local_shape, np.float64)
    check_close(plan.backward(plan.forward(u)), u, tolerance(np.float64, (64, 32, 48)))
