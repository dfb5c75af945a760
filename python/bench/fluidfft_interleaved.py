"""FluidFFT's MPI classes timed interleaved through FluidFFT's own interface
(create_fft_object, fft_as_arg, ifft_as_arg): fft3d.mpi_with_dfft beside every other
installed 3-D method of the same kind (MPI methods on several ranks, sequential ones on one).

    mpirun -n 2 target/venv/bin/python -P python/bench/fluidfft_interleaved.py 256

Every round times one fft_as_arg+ifft_as_arg pair of each class in turn (rotating which goes
first); a pair's time is the slowest rank's. fluidfft-bench runs the classes one after the
other instead; this is the same work with the machine's load shared fairly.
"""

import argparse
import time

import numpy as np
from mpi4py import MPI

import fluidfft

comm = MPI.COMM_WORLD


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    n = args.n
    methods = sorted(fluidfft.get_methods(ndim=3, sequential=comm.size == 1))
    objects = {}
    for method in methods:
        try:
            obj = fluidfft.create_fft_object(method, n, n, n)
        except (ImportError, ValueError) as err:
            if comm.rank == 0:
                print(f"{method}: not usable ({err})")
            continue
        fieldX = obj.create_arrayX(1.0)
        fieldK = obj.create_arrayK(1.0)
        objects[method] = (obj, fieldX, fieldK)
    names = list(objects)
    ours = [m for m in names if m.endswith("_dfft")]
    times = {m: [] for m in names}
    for r in range(-1, args.rounds):  # round -1 warms up
        order = names[r % len(names):] + names[: r % len(names)]
        for m in order:
            obj, fieldX, fieldK = objects[m]
            comm.Barrier()
            start = time.perf_counter()
            obj.fft_as_arg(fieldX, fieldK)
            obj.ifft_as_arg(fieldK, fieldX)
            elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
            if r >= 0:
                times[m].append(elapsed)
    if comm.rank == 0:
        ref = np.median(times[ours[0]]) if ours else None
        print(f"\nFluidFFT 3-D classes, {n}^3 on {comm.size} rank(s), fft_as_arg+ifft_as_arg, "
              f"{args.rounds} interleaved rounds (seconds, slowest rank):")
        print(f"  {'method':28s} {'min':>9s} {'median':>9s} {'/ dfft':>7s}")
        for m in names:
            t = np.array(times[m])
            ratio = f"{np.median(t) / ref:7.2f}" if ref else ""
            print(f"  {m:28s} {t.min():9.4f} {np.median(t):9.4f} {ratio}")


if __name__ == "__main__":
    main()
