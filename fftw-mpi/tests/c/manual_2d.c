/* The FFTW manual's "2d MPI example": an N0 x N1 complex DFT, in place, distributed by
   rows (N0 and N1 from the command line, default 12 x 10). */
#include <complex.h>
#include <fftw3-mpi.h>
#include "check.h"

static ptrdiff_t N0 = 12, N1 = 10;
static double complex my_function(ptrdiff_t x, ptrdiff_t y) { return cvalue_at(x * N1 + y); }

int main(int argc, char **argv)
{
    if (argc > 2) N0 = atol(argv[1]), N1 = atol(argv[2]);
    fftw_plan plan;
    fftw_complex *data;
    ptrdiff_t alloc_local, local_n0, local_0_start, i, j;

    MPI_Init(&argc, &argv);
    fftw_mpi_init();

    /* get local data size and allocate */
    alloc_local = fftw_mpi_local_size_2d(N0, N1, MPI_COMM_WORLD,
                                         &local_n0, &local_0_start);
    data = fftw_alloc_complex(alloc_local);

    /* create plan for in-place forward DFT */
    plan = fftw_mpi_plan_dft_2d(N0, N1, data, data, MPI_COMM_WORLD,
                                FFTW_FORWARD, FFTW_ESTIMATE);

    /* initialize data to some function my_function(x,y) */
    for (i = 0; i < local_n0; ++i) for (j = 0; j < N1; ++j)
       data[i*N1 + j] = my_function(local_0_start + i, j);

    /* compute transforms, in-place, as many times as desired */
    fftw_execute(plan);

    /* harness: every local output element against a naive DFT */
    long n[2] = {N0, N1};
    for (i = 0; i < local_n0; ++i) for (j = 0; j < N1; ++j) {
       long k[2] = {local_0_start + i, j};
       check(k[0] * N1 + k[1], data[i*N1 + j], naive_dft(2, n, k, -1, cvalue_at));
    }
    int failed = report("manual_2d", 1e-12);

    fftw_destroy_plan(plan);
    fftw_free(data);
    MPI_Finalize();
    return failed;
}
