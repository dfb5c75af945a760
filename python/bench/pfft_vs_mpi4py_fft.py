"""dfft.PFFT against mpi4py_fft.PFFT on the same real-to-complex problems, interleaved in one
run, and the Python call's cost over the Rust plan's own time.

    mpirun -n 2 target/venv/bin/python -P python/bench/pfft_vs_mpi4py_fft.py 128 256

Per shape: every round times one forward+backward pair of each implementation in turn (in
a new random order, the same on every rank), each pair the slowest rank's time; the table
shows the minimum and median over the rounds and each peer's median over dfft's. Both sides normalize the
forward transform by 1/N (mpi4py-fft's default), run one thread per rank, and keep their
spectrum in their natural layout (dfft with transposed_out as FluidFFT uses it, and without).
dfft's arrays are the plan's own (``PFFT.alloc``), mpi4py-fft's its own (``newDistArray``).
"""

import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

import dfft

comm = MPI.COMM_WORLD


def pair_seconds(forward, backward):
    comm.Barrier()
    start = time.perf_counter()
    forward()
    backward()
    return comm.allreduce(time.perf_counter() - start, op=MPI.MAX)


def contestants(n):
    shape = (n, n, n)
    out = {}
    for transposed in (True, False):
        plan = dfft.PFFT(comm, shape, dtype=np.float64, normalization="forward",
                         transposed_out=transposed, threads=1)
        u = plan.alloc()
        u[...] = np.random.default_rng(comm.rank).random(u.shape)
        u_hat = plan.alloc(spectral=True)
        name = f"dfft grid={'x'.join(map(str, plan.grid))}" + (" T" if transposed else "")
        out[name] = (lambda p=plan, u=u, v=u_hat: p.forward(u, v),
                     lambda p=plan, u=u, v=u_hat: p.backward(v, u))
        if transposed:
            rust = (plan, u, u_hat)
    try:
        from mpi4py_fft import PFFT, newDistArray
    except ImportError as err:
        if comm.rank == 0:
            print(f"mpi4py_fft not importable ({err}): only dfft is timed", flush=True)
        return out, rust
    for slab in (True, False):
        fft = PFFT(comm, shape, axes=(0, 1, 2), dtype=np.float64, slab=slab, backend="fftw")
        u = newDistArray(fft, False)
        u[...] = np.random.default_rng(comm.rank).random(u.shape)
        u_hat = newDistArray(fft, True)
        name = "mpi4py-fft " + ("slab" if slab else "pencil")
        out[name] = (lambda f=fft, u=u, v=u_hat: f.forward(u, v),
                     lambda f=fft, u=u, v=u_hat: f.backward(v, u))
    return out, rust


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sizes", nargs="*", type=int, default=[128, 256])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for n in args.sizes:
        impls, (rust_plan, u, v) = contestants(n)
        names = list(impls)
        for f, b in impls.values():  # warm up: plans, caches, page faults
            pair_seconds(f, b)
        times = {name: [] for name in names}
        overhead = {"python": [], "rust": [], "outside": []}
        rust_plan.forward(u, v)
        rng = np.random.default_rng(2026)  # the same order on every rank
        for r in range(args.rounds):
            order = [names[i] for i in rng.permutation(len(names))]
            for name in order:
                times[name].append(pair_seconds(*impls[name]))
            # The Python call against the Rust plan's own loop, same plan, same round, each on
            # arrays it has used before.
            for _ in range(3):
                rust_plan.reset_times()
                comm.Barrier()
                start = time.perf_counter()
                rust_plan.forward(u, v)
                elapsed = time.perf_counter() - start
                inside = sum(rust_plan.times().values())
                overhead["python"].append(comm.allreduce(elapsed, op=MPI.MAX))
                # This rank's time outside the Rust plan's steps (the Python call, the
                # checks and the ranks' agreement on them), over the time inside.
                overhead["outside"].append(
                    comm.allreduce((elapsed - inside) / inside, op=MPI.MAX))
            comm.Barrier()
            for t in rust_plan.time_rust(3, alloc=True):
                overhead["rust"].append(comm.allreduce(t, op=MPI.MAX))
        if comm.rank == 0:
            ref = np.median(times[names[0]])
            print(f"\nr2c {n}^3 on {comm.size} rank(s), forward+backward pair, "
                  f"{args.rounds} interleaved rounds (seconds, slowest rank):")
            print(f"  {'implementation':28s} {'min':>9s} {'median':>9s} {'x dfft':>7s}")
            for name in names:
                t = np.array(times[name])
                print(f"  {name:28s} {t.min():9.4f} {np.median(t):9.4f} "
                      f"{np.median(t) / ref:7.2f}")
            for stat in (np.min, np.median):
                py, rs = stat(overhead["python"]), stat(overhead["rust"])
                print(f"  forward: Python call vs the Rust plan's loop in one process ({names[0]}; "
                      f"call_vs_rust.py: each in its own), "
                      f"{stat.__name__} of {len(overhead['rust'])}: {py:.5f} s vs {rs:.5f} s: "
                      f"{100 * (py - rs) / rs:+.1f} %")
            print(f"  forward: time outside the plan's steps in the Python call, median over "
                  f"ranks' worst: {100 * np.median(overhead['outside']):+.2f} % of the time "
                  "inside them")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
