"""A short FluidSim ns3d Taylor-Green run with a chosen FluidFFT method; records the energy
after every time step, from Fourier space (FluidSim's own compute_energy, through the FFT
class's sum_wavenumbers) and from real space.

    python taylor_green.py fft3d.with_pyfftw --out ref.json     # sequential reference
    mpirun -n 2 python taylor_green.py fft3d.mpi_with_dfft        # prints the series

FLUIDSIM_PATH should point to a scratch directory (FluidSim writes its parameters there).
"""

import argparse
import json

import numpy as np


def run(type_fft, n=32, steps=12, dt=0.05, nu=1e-3):
    """Energies (from K and from X) at t = 0, dt, ..., steps*dt, on rank 0 (None elsewhere)."""
    from fluiddyn.util import mpi
    from fluidsim.solvers.ns3d.solver import Simul

    params = Simul.create_default_params()
    params.short_name_type_run = "tg_" + type_fft.split(".")[-1]
    params.oper.nx = params.oper.ny = params.oper.nz = n
    params.oper.type_fft = type_fft
    params.nu_2 = nu
    params.init_fields.type = "in_script"
    params.time_stepping.USE_CFL = False
    params.time_stepping.USE_T_END = False
    params.time_stepping.it_end = steps
    params.time_stepping.deltat0 = dt
    params.output.HAS_TO_SAVE = False
    params.output.periods_print.print_stdout = 0
    sim = Simul(params)

    X, Y, Z = sim.oper.get_XYZ_loc()
    vx = np.sin(X) * np.cos(Y) * np.cos(Z)
    vy = -np.cos(X) * np.sin(Y) * np.cos(Z)
    sim.state.init_statephys_from(vx=vx, vy=vy, vz=np.zeros_like(vx))
    sim.state.statespect_from_statephys()

    def energy_x():
        local = sum(float((sim.state.get_var(k) ** 2).sum()) for k in ("vx", "vy", "vz"))
        total = mpi.comm.allreduce(local) if mpi.nb_proc > 1 else local
        return total / (n**3) / 2

    stepping = sim.time_stepping
    stepping.prepare_main_loop()
    times, energies_k, energies_x = [], [], []
    while True:
        times.append(float(stepping.t))
        energies_k.append(float(sim.output.compute_energy()))
        energies_x.append(energy_x())
        if stepping.it >= steps:
            break
        stepping.one_time_step()
    stepping.finalize_main_loop()
    if mpi.rank != 0:
        return None
    return {
        "type_fft": type_fft,
        "nb_proc": mpi.nb_proc,
        "fft_class": type(sim.oper.oper_fft).__name__,
        "t": times,
        "E_K": energies_k,
        "E_X": energies_x,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("type_fft")
    parser.add_argument("--out")
    args = parser.parse_args()
    result = run(args.type_fft)
    if result is not None:
        text = json.dumps(result, indent=1)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            print(text)


if __name__ == "__main__":
    main()
