"""The Python `forward` call against the Rust plan's own loop, one of them per process.

    mpirun -n 2 target/venv/bin/python -P python/bench/call_vs_rust.py 128 python
    mpirun -n 2 target/venv/bin/python -P python/bench/call_vs_rust.py 128 rust

Each run makes the same r2c plan (f64, forward normalized, transposed output) and the plan's own
arrays (`PFFT.alloc`), then times CALLS forward calls in one stretch: `plan.forward(u, v)` from
Python, or `plan.time_rust(CALLS, alloc=True)` (the same calls from Rust, each after a barrier).
Prints `call_vs_rust N MODE SECONDS_PER_CALL` on rank 0 (the slowest rank's wall time over the
stretch). Timing the two in one process instead (pfft_vs_mpi4py_fft.py) compares arrays in
different cache and TLB states: whichever loop's arrays ran last is ahead. scripts/bench-python
runs both modes several times, alternating, and prints the ratio of the medians.
"""

import argparse
import time

import numpy as np
from mpi4py import MPI

import dfft

comm = MPI.COMM_WORLD


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int)
    parser.add_argument("mode", choices=("python", "rust"))
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    n = args.n
    plan = dfft.PFFT(comm, (n, n, n), kind="r2c", dtype=np.float64, normalization="forward",
                     transposed_out=True)
    u = plan.alloc()
    v = plan.alloc(spectral=True)
    u[...] = 1.0
    plan.forward(u, v)  # pages touched, as time_rust's untimed first call does
    comm.Barrier()
    start = time.perf_counter()
    if args.mode == "python":
        for _ in range(args.calls):
            plan.forward(u, v)
    else:
        plan.time_rust(args.calls, alloc=True)
    elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    if comm.rank == 0:
        print(f"call_vs_rust {n} {args.mode} {elapsed / args.calls:.6e}")


if __name__ == "__main__":
    main()
