"""``python -m dfft --version``: the versions of dfft, numpy, mpi4py and the MPI library."""

import argparse
import sys


def versions():
    """Lines naming each component's version."""
    import mpi4py
    import numpy
    from mpi4py import MPI

    import dfft
    from dfft import _dfft

    library = MPI.Get_library_version().strip().rstrip("\x00").splitlines()
    return [
        f"dfft {dfft.__version__}",
        f"numpy {numpy.__version__}",
        f"mpi4py {mpi4py.__version__}",
        f"MPI {'.'.join(map(str, MPI.Get_version()))}: {library[0].strip() if library else '?'}",
        f"Python {sys.version.split()[0]}",
        f"extension {_dfft.__file__}",
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dfft", description=__doc__)
    parser.add_argument("--version", action="store_true", help="print the versions and exit")
    args = parser.parse_args(argv)
    if args.version:
        print("\n".join(versions()))
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
