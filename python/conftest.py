"""Shared by the dfft and fluidfft-dfft pytest suites: the markers mpi-harness reads.

Launched by mpi-harness (see python/launch/tests/python.rs), every rank prints
``MPI-HARNESS REACHED <test> r/P`` once MPI is up and ``MPI-HARNESS PASSED <test> r/P`` when
its session ended with every test passed, so a rank that died or failed fails the launch.
The harness names the launch in ``DFFT_HARNESS_TEST``; pytest must run with ``-s`` so the
markers reach mpirun's stdout.
"""

import os
import sys

# The test modules' shared helpers (tests/helpers.py): pytest's importlib mode and python -P
# put no test directory on sys.path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))


def _marker(kind):
    name = os.environ.get("DFFT_HARNESS_TEST")
    if not name:
        return
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    # One write(2) of the whole line: mpirun interleaves the ranks' output between writes,
    # and print() may make two (text, then end), letting another rank's pytest progress
    # dot land between the marker and its newline.
    sys.stdout.flush()
    os.write(1, f"\nMPI-HARNESS {kind} {name} {comm.rank}/{comm.size}\n".encode())


def pytest_sessionstart(session):
    _marker("REACHED")


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0:
        _marker("PASSED")
