# Sourced by the scripts: how to launch MPI jobs on this machine. Root needs OpenMPI's explicit
# permission; more ranks than cores need oversubscription; containers lack CMA single-copy.
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
