# Sourced by the scripts (`. scripts/env.sh`): how to launch MPI jobs on this machine. Root
# needs OpenMPI's explicit permission; more ranks than cores need oversubscription; containers
# lack CMA single-copy. Checked with OpenMPI 4.1.4: as root, mpirun refuses to start without
# --allow-run-as-root or both OMPI_ALLOW_RUN_AS_ROOT* variables, and -n 3 on 2 cores fails
# without --oversubscribe (or the rmaps variable).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
DFFT_MPIRUN="mpirun --oversubscribe --bind-to none"
if [ "$(id -u)" -eq 0 ]; then
  DFFT_MPIRUN="$DFFT_MPIRUN --allow-run-as-root"
fi
export DFFT_MPIRUN
