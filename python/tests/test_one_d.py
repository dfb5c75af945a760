"""The distributed 1-D transform, ``dfft.PFFT(comm, (n,))``, against numpy on prime, odd and
power-of-two lengths, in order and in FFTW-MPI's scrambled orders, on whatever number of
ranks pytest runs under (the suite: 1 to 8).

The scrambled orders are computed here from FFTW 3.3's definition (mpi/choose-radix.c and
mpi/dft-rank1.c): the n points are an m × r C-order matrix, r chosen as FFTW chooses it for P
processes; the scrambled input is that matrix transposed, the scrambled output the spectrum
left as the m × r matrix whose columns hold it in order.
"""

import math

import numpy as np
import pytest
from mpi4py import MPI

import dfft
from helpers import check_close, field, same_everywhere, tolerance

comm = MPI.COMM_WORLD


def fftw_radix(n, p):
    """FFTW-MPI's r for n points on p processes (choose_radix, forward); n when it does not
    distribute (a prime: the transform on one process)."""
    if n % p == 0 and n // p >= p:
        r = n // p
    else:
        r = math.isqrt(n)
        while n % r:
            r += 1
    return n if r in (1, n) else r


def scrambled_orders(n, p):
    """The index each position holds: of x in the scrambled input, of X in the scrambled
    output."""
    r = fftw_radix(n, p)
    m = n // r
    pos = np.arange(n)
    return (pos % m) * r + pos // m, pos // r + m * (pos % r)


@pytest.mark.parametrize("n", [97, 45, 64])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_1d_matches_numpy(n, dtype):
    """Each rank's ordered ranges: the input's, then numpy's spectrum on the output's."""
    plan = dfft.PFFT(comm, (n,), dtype=dtype, normalization="none")
    assert plan.kind == "c2c" and plan.global_shape == (n,)
    x = field((n,), dtype)
    (s,) = plan.local_slice()
    a = np.ascontiguousarray(x[s])
    assert a.shape == plan.local_shape
    b = plan.forward(a)
    want = np.fft.fft(x.astype(np.complex128))
    assert b.shape == plan.local_spectral_shape
    check_close(b, want[plan.local_slice(True)], tolerance(dtype, (n,)))
    (k,) = plan.wavenumbers()
    assert (k == np.fft.fftfreq(n, 1.0 / n)[plan.local_slice(True)]).all()
    # The ranges tile the axis across the ranks.
    starts = comm.allgather((s.start, s.stop))
    assert sorted(starts)[0][0] == 0 and sum(e - b for b, e in starts) == n
    out = plan.zeros()
    plan.backward(b, out)
    check_close(out, n * a, tolerance(dtype, (n,)))


@pytest.mark.parametrize("n", [97, 45, 64, 60])
@pytest.mark.parametrize("ends", [(True, False), (False, True), (True, True)])
def test_1d_scrambled_orders_match_numpy(n, ends):
    """Scrambled input, output or both: the positions each rank holds (local_slice), the
    spectrum's values and wavenumbers there, and the round trip."""
    scrambled_in, scrambled_out = ends
    dtype = np.complex64 if n == 60 else np.complex128
    plan = dfft.PFFT(comm, (n,), dtype=dtype, normalization="backward",
                     scrambled_in=scrambled_in, scrambled_out=scrambled_out)
    order_in, order_out = scrambled_orders(n, comm.size)
    x = field((n,), dtype, seed=n)
    x_held = x[order_in] if scrambled_in else x
    (s,) = plan.local_slice()
    a = np.ascontiguousarray(x_held[s])
    b = plan.forward(a)
    spectrum = np.fft.fft(x.astype(np.complex128))
    held = spectrum[order_out] if scrambled_out else spectrum
    (so,) = plan.local_slice(True)
    check_close(b, held[so], tolerance(dtype, (n,)))
    (k,) = plan.wavenumbers()
    freq = np.fft.fftfreq(n, 1.0 / n).astype(np.int64)
    assert (k == (freq[order_out] if scrambled_out else freq)[so]).all()
    # Both sides' positions tile the axis.
    for sl in (s, so):
        ranges = sorted(r for r in comm.allgather((sl.start, sl.stop)) if r[0] < r[1])
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(p[1] == q[0] for p, q in zip(ranges, ranges[1:]))
    check_close(plan.backward(b), a, tolerance(dtype, (n,)))


def test_scrambled_needs_a_1d_shape():
    with pytest.raises(dfft.DfftError) as e:
        dfft.PFFT(comm, (8, 6), dtype=np.complex128, scrambled_out=True)
    assert "scrambled_in and scrambled_out apply to 1-D shapes (n,), got shape [8, 6]" in (
        same_everywhere(e))
