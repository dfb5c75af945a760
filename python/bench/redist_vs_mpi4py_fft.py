"""dfft.Redistribution against mpi4py-fft's pencil transfer (MPI_Alltoallw with subarray
datatypes) on the same global transposition, interleaved in one run, and the Python call's
cost over the Rust runner's own time.

    mpirun -n 2 target/venv/bin/python -P python/bench/redist_vs_mpi4py_fft.py 128 256

The problem is the exchange inside a slab FFT: an n^3 complex128 array split along axis 0
(mpi4py-fft's Pencil aligned along axis 1 on a 1-D subcommunicator) becomes split along
axis 1 (its pencil(0)). dfft moves it between the SPECs "grid=P,dist=balanced,*,*" and
"grid=P,dist=*,balanced,*", which are mpi4py-fft's block distribution (the first n % P ranks
hold one more plane). Both outputs are checked equal on index-valued data first. Every round
times one move of each implementation in turn (rotating which goes first), the slowest
rank's time; the table shows the minimum and median over the rounds and each one's median
over dfft's (alltoallv schedule).
"""

import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

import dfft

comm = MPI.COMM_WORLD
P = comm.size


def contestants(n):
    shape = (n, n, n)
    dtype = np.complex128
    out = {}
    check = {}
    src_spec = f"grid={P},dist=balanced,*,*"
    dst_spec = f"grid={P},dist=*,balanced,*"
    for schedule in ("alltoallv", "shared"):
        r = dfft.Redistribution(comm, shape, src_spec, dst_spec, dtype=dtype,
                                schedule=schedule)
        a = np.zeros(r.src_shape, dtype=dtype)
        b = np.zeros(r.dst_shape, dtype=dtype)
        out[f"dfft {schedule}"] = (lambda r=r, a=a, b=b: r.execute(a, b), a, b, r)
    try:
        from mpi4py_fft.pencil import Pencil, Subcomm
    except ImportError as err:
        if comm.rank == 0:
            print(f"mpi4py_fft not importable ({err}): only dfft is timed", flush=True)
        return out
    p0 = Pencil(Subcomm(comm, [0, 1, 1]), shape, axis=1)
    p1 = p0.pencil(0)
    transfer = p0.transfer(p1, dtype)
    a = np.zeros(p0.subshape, dtype=dtype)
    b = np.zeros(p1.subshape, dtype=dtype)
    out["mpi4py-fft Alltoallw"] = (lambda t=transfer, a=a, b=b: t.forward(a, b), a, b, None)
    # Index-valued data: every element holds its global linear index.
    index = np.arange(n**3, dtype=np.float64).reshape(shape)
    s0 = tuple(slice(s, s + k) for s, k in zip(p0.substart, p0.subshape))
    s1 = tuple(slice(s, s + k) for s, k in zip(p1.substart, p1.subshape))
    for name, (move, a, b, _) in out.items():
        assert a.shape == index[s0].shape, (name, a.shape, index[s0].shape)
        a[...] = index[s0]
        move()
        check[name] = np.array_equal(b, index[s1])
    ok = comm.allreduce(all(check.values()), op=MPI.LAND)
    if not ok:
        raise SystemExit(f"rank {comm.rank}: outputs differ from the index-valued reference: "
                         f"{check}")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sizes", nargs="*", type=int, default=[128, 256])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for n in args.sizes:
        impls = contestants(n)
        names = list(impls)
        times = {name: [] for name in names}
        overhead = {"python": [], "rust": []}
        first = impls[names[0]]
        for move, *_ in impls.values():  # warm up
            move()
        for r in range(args.rounds):
            order = names[r % len(names):] + names[: r % len(names)]
            for name in order:
                comm.Barrier()
                start = time.perf_counter()
                impls[name][0]()
                times[name].append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
            # The Python call against the Rust runner's own loop, same plan, same round.
            for _ in range(3):
                comm.Barrier()
                start = time.perf_counter()
                first[0]()
                overhead["python"].append(
                    comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
            comm.Barrier()
            for t in first[3].time_rust(3):
                overhead["rust"].append(comm.allreduce(t, op=MPI.MAX))
        if comm.rank == 0:
            ref = np.median(times[names[0]])
            print(f"\ncomplex128 {n}^3 split along axis 0 -> axis 1 on {P} rank(s), "
                  f"{args.rounds} interleaved rounds (seconds, slowest rank; outputs checked "
                  f"equal on index-valued data):")
            print(f"  {'implementation':28s} {'min':>9s} {'median':>9s} {'x dfft':>7s}")
            for name in names:
                t = np.array(times[name])
                print(f"  {name:28s} {t.min():9.4f} {np.median(t):9.4f} "
                      f"{np.median(t) / ref:7.2f}")
            for stat in (np.min, np.median):
                py, rs = stat(overhead["python"]), stat(overhead["rust"])
                print(f"  execute: Python call vs the Rust runner's loop ({names[0]}), "
                      f"{stat.__name__} of {len(overhead['rust'])}: {py:.5f} s vs {rs:.5f} s: "
                      f"{100 * (py - rs) / rs:+.1f} %")
            sys.stdout.flush()
        for _, _, _, r in impls.values():
            if r is not None:
                r.destroy()


if __name__ == "__main__":
    main()
