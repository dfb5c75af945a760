/* A long-double FFTW-MPI call on the drop-in: it must end the job with a message saying
   why, never return. */
#include <fftw3-mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  fftwl_mpi_init();
  printf("fftwl_mpi_init returned\n");
  MPI_Finalize();
  return 0;
}
