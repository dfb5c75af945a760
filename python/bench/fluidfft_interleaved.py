"""FluidFFT's MPI classes timed interleaved through FluidFFT's own interface
(create_fft_object, fft_as_arg, ifft_as_arg): fft3d.mpi_with_dfft beside every other
installed 3-D method of the same kind (MPI methods on several ranks, sequential ones on one),
dfft's class also on numpy.empty arrays (``(numpy arrays)``: the caller's own fields, where
create_arrayX gives PFFT.zeros arrays), and mpi4py-fft's PFFT (slab and pencil) called the
same way.

    mpirun -n 2 target/venv/bin/python -P python/bench/fluidfft_interleaved.py 256

Every round times one fft_as_arg+ifft_as_arg pair of each class in turn, in a new random
order (the same on every rank); a pair's time is the slowest rank's, and its page faults the
most any rank took (minor and major, from getrusage). fluidfft-bench runs the classes one
after the other instead; this is the same work with the machine's load shared fairly.
"""

import argparse
import os
import resource
import sys
import time

import numpy as np
from mpi4py import MPI

import fluidfft

comm = MPI.COMM_WORLD


class Mpi4pyFft:
    """mpi4py-fft's PFFT behind FluidFFT's two calls, for the same work in the same run (FluidFFT
    0.4 has no mpi4py-fft class): r2c, 1/N on forward as FluidFFT normalizes, FFTW backend."""

    def __init__(self, n, slab):
        from mpi4py_fft import PFFT

        self.fft = PFFT(comm, (n, n, n), axes=(0, 1, 2), dtype=np.float64, slab=slab,
                        backend="fftw")

    def fft_as_arg(self, fieldX, fieldK):
        self.fft.forward(fieldX, fieldK)

    def ifft_as_arg(self, fieldK, fieldX):
        self.fft.backward(fieldK, fieldX)


def mpi4py_fft_objects(n):
    try:
        from mpi4py_fft import newDistArray
    except ImportError as err:
        if comm.rank == 0:
            print(f"mpi4py-fft: not usable ({err})")
        return {}
    out = {}
    for slab in (True, False):
        obj = Mpi4pyFft(n, slab)
        fieldX = newDistArray(obj.fft, False)
        fieldX[...] = 1.0
        out["mpi4py-fft " + ("slab" if slab else "pencil")] = (
            obj, fieldX, newDistArray(obj.fft, True))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--plan-arrays", action="store_true",
                        help="also time dfft's class with fluidfft_dfft's plan_arrays option "
                        "the other way round (its arrays from PFFT.alloc or PFFT.zeros)")
    parser.add_argument("--no-mpi4py-fft", action="store_true", help="leave mpi4py-fft out")
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
    if args.plan_arrays and any(m.endswith("_dfft") for m in objects):
        import fluidfft_dfft

        default = fluidfft_dfft.options["plan_arrays"]
        fluidfft_dfft.options["plan_arrays"] = not default
        method = next(m for m in methods if m.endswith("_dfft"))
        obj = fluidfft.create_fft_object(method, n, n, n)
        fluidfft_dfft.options["plan_arrays"] = default
        label = "zeros arrays" if default else "plan arrays"
        objects[f"{method} ({label})"] = (obj, obj.create_arrayX(1.0), obj.create_arrayK(1.0))
    ours_first = next((m for m in methods if m.endswith("_dfft") and m in objects), None)
    if ours_first is not None:
        # dfft's class on arrays the caller allocates with numpy (16 bytes past a cache
        # line, where create_arrayX gives PFFT.zeros arrays on one): what a program gets
        # that makes its own fields.
        obj = fluidfft.create_fft_object(ours_first, n, n, n)
        fieldX = np.empty(obj.get_shapeX_loc())
        fieldX.fill(1.0)
        fieldK = np.empty(obj.get_shapeK_loc(), complex)
        fieldK.fill(1.0)
        objects[f"{ours_first} (numpy arrays)"] = (obj, fieldX, fieldK)
    if not args.no_mpi4py_fft:
        objects.update(mpi4py_fft_objects(n))
    names = list(objects)
    ours = [m for m in names if m.endswith("_dfft")]
    times = {m: [] for m in names}
    faults = {m: [] for m in names}
    # A new random order every round (the same on every rank: the calls are collective), so
    # that no class always follows the same one and inherits the state its memory traffic
    # leaves (a fixed cyclic order rotates only which goes first).
    rng = np.random.default_rng(2026)
    for r in range(-1, args.rounds):  # round -1 warms up
        order = [names[i] for i in rng.permutation(len(names))]
        for m in order:
            obj, fieldX, fieldK = objects[m]
            comm.Barrier()
            usage = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            obj.fft_as_arg(fieldX, fieldK)
            obj.ifft_as_arg(fieldK, fieldX)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_SELF)
            took = (after.ru_minflt - usage.ru_minflt) + (after.ru_majflt - usage.ru_majflt)
            elapsed = comm.allreduce(elapsed, op=MPI.MAX)
            took = comm.allreduce(took, op=MPI.MAX)
            if r >= 0:
                times[m].append(elapsed)
                faults[m].append(took)
    if comm.rank == 0:
        ref = np.median(times[ours[0]]) if ours else None
        print(f"\nFluidFFT 3-D classes, {n}^3 on {comm.size} rank(s), fft_as_arg+ifft_as_arg, "
              f"{args.rounds} interleaved rounds (seconds, slowest rank):")
        print(f"  {'method':36s} {'min':>9s} {'median':>9s} {'/ dfft':>7s} {'faults':>7s}")
        for m in names:
            t = np.array(times[m])
            ratio = f"{np.median(t) / ref:7.2f}" if ref else ""
            print(f"  {m:36s} {t.min():9.4f} {np.median(t):9.4f} {ratio} "
                  f"{np.median(faults[m]):7.0f}")
    # FluidFFT's FFTW-MPI class and mpi4py-fft's FFTW plans in one process crash when Python
    # frees them: end the process once MPI is finalized, without running destructors.
    if any(isinstance(obj, Mpi4pyFft) for obj, *_ in objects.values()):
        sys.stdout.flush()
        MPI.Finalize()
        os._exit(0)

if __name__ == "__main__":
    main()
