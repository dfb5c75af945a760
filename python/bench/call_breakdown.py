"""Where a FluidFFT-style call's time goes: one r2c plan as fluidfft_dfft makes it
(normalization "forward", transposed_out, one thread per rank), its forward+backward pair
called from Python on different arrays, against the Rust plan's own loop, with the plan's
stage timers and page faults per pair; and a second plan alike, to see whether the plan
made first is slower.

    mpirun -n 2 target/venv/bin/python -P python/bench/call_breakdown.py 256

Every round runs each case once, in a new random order (the same on every rank); a pair's
time is the slowest rank's. Cases:

- numpy:  numpy.empty arrays (16 bytes past a cache line, huge pages where numpy advises
          them), the exchanges' rows through messages or the group's window;
- zeros:  PFFT.zeros arrays (on a cache line);
- alloc:  PFFT.alloc arrays (the plan's shared-memory windows: rows straight between the
          ranks' arrays);
- fresh:  forward(u) and backward(v) without out: a new output array per call;
- second: a second plan made after the first, on its own zeros arrays (and holding alloc
          arrays too, as the first does);
- rust / rust alloc: PFFT.time_rust, the Rust loop on private aligned blocks or on blocks
          like alloc's (a pair: one forward and one backward after one untimed run each).
"""

import argparse
import resource
import time

import numpy as np
from mpi4py import MPI

import dfft

comm = MPI.COMM_WORLD


def plan_of(n):
    return dfft.PFFT(comm, (n, n, n), kind="r2c", dtype=np.float64, normalization="forward",
                     transposed_out=True, threads=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int, nargs="?", default=256)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    first, second = plan_of(args.n), plan_of(args.n)
    rng = np.random.default_rng(comm.rank)
    field = rng.random(first.local_shape)

    def arrays(u, v):
        u[...] = field
        v[...] = 0
        return u, v

    cases = {
        "numpy": (first, *arrays(np.empty(first.local_shape),
                                 np.empty(first.local_spectral_shape, complex))),
        "zeros": (first, *arrays(first.zeros(), first.zeros(True))),
        "alloc": (first, *arrays(first.alloc(), first.alloc(True))),
        "second": (second, *arrays(second.zeros(), second.zeros(True))),
    }
    # The second plan's own blocks too, untimed: a plan's first alloc moves its work buffers
    # into shared-memory windows, so without them the two plans would differ.
    kept = (second.alloc(), second.alloc(True))
    fresh_u = np.array(field)

    def run(name):
        if name == "fresh":
            v = first.forward(fresh_u)
            first.backward(v)
            return first
        plan, u, v = cases[name]
        plan.forward(u, v)
        plan.backward(v, u)
        return plan

    def timed(name):
        if name.startswith("rust"):
            alloc = name == "rust alloc"
            t = first.time_rust(1, False, alloc)[0] + first.time_rust(1, True, alloc)[0]
            return comm.allreduce(t, op=MPI.MAX), None, 0
        for plan in (first, second):
            plan.reset_times()
        comm.Barrier()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        plan = run(name)
        elapsed = time.perf_counter() - start
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        stages = {k: comm.allreduce(v, op=MPI.MAX) for k, v in plan.times().items()}
        return comm.allreduce(elapsed, op=MPI.MAX), stages, comm.allreduce(faults, op=MPI.MAX)

    names = list(cases) + ["fresh", "rust", "rust alloc"]
    for name in names:  # warm up: pages, caches
        timed(name)
    results = {name: [] for name in names}
    order_rng = np.random.default_rng(2026)  # the same order on every rank
    for _ in range(args.rounds):
        for i in order_rng.permutation(len(names)):
            results[names[i]].append(timed(names[i]))
    del kept
    if comm.rank != 0:
        return
    ref = np.array([r[0] for r in results["zeros"]])
    print(f"r2c {args.n}^3 on {comm.size} rank(s), grid {first.grid}, forward+backward pair, "
          f"{args.rounds} rounds in random order (s, slowest rank; stages: median of the "
          "slowest rank's seconds per stage):")
    print(f"  {'case':11s} {'min':>8s} {'median':>8s} {'/zeros':>7s} {'faults':>7s}  stages")
    for name in names:
        t = np.array([r[0] for r in results[name]])
        faults = np.median([r[2] for r in results[name]])
        stages = ""
        if results[name][0][1] is not None:
            stages = " ".join(
                f"{k}={np.median([r[1][k] for r in results[name]]):.4f}"
                for k in ("fft", "pack", "comm", "unpack"))
        print(f"  {name:11s} {t.min():8.4f} {np.median(t):8.4f} {np.median(t / ref):7.3f} "
              f"{faults:7.0f}  {stages}")


if __name__ == "__main__":
    main()
