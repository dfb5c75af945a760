/* The FFTW manual's "Other Multi-dimensional Real-data MPI Transforms": an L x M transform,
   REDFT10 (DCT-II) along the first dimension and RODFT10 (DST-II) along the second, in
   place (L and M from the command line, default 12 x 7). */
#include <complex.h>
#include <fftw3-mpi.h>
#include "check.h"

static ptrdiff_t width;
static double my_function(ptrdiff_t x, ptrdiff_t y) { return value_at(x * width + y, 4); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fftw_mpi_init();

    const ptrdiff_t L = argc > 2 ? atol(argv[1]) : 12, M = argc > 2 ? atol(argv[2]) : 7;
    fftw_plan plan;
    double *data;
    ptrdiff_t alloc_local, local_n0, local_0_start, i, j;
    width = M;

    /* get local data size and allocate */
    alloc_local = fftw_mpi_local_size_2d(L, M, MPI_COMM_WORLD,
                                         &local_n0, &local_0_start);
    data = fftw_alloc_real(alloc_local);

    /* create plan for in-place REDFT10 x RODFT10 */
    plan = fftw_mpi_plan_r2r_2d(L, M, data, data, MPI_COMM_WORLD,
                                FFTW_REDFT10, FFTW_RODFT10, FFTW_MEASURE);

    /* initialize data to some function my_function(x,y) */
    for (i = 0; i < local_n0; ++i) for (j = 0; j < M; ++j)
       data[i*M + j] = my_function(local_0_start + i, j);

    /* compute transforms, in-place, as many times as desired */
    fftw_execute(plan);

    /* harness: Y[k0][k1] = 4 sum x[a][b] cos(pi (a+1/2) k0 / L) sin(pi (b+1/2)(k1+1) / M) */
    for (i = 0; i < local_n0; ++i) for (j = 0; j < M; ++j) {
       long k0 = local_0_start + i, k1 = j;
       double want = 0;
       for (long a = 0; a < L; ++a) for (long b = 0; b < M; ++b)
          want += 4 * my_function(a, b) * cos(M_PI * (a + 0.5) * k0 / L) * sin(M_PI * (b + 0.5) * (k1 + 1) / M);
       check(k0 * M + k1, data[i*M + j], want);
    }
    int failed = report("manual_r2r", 1e-12);

    fftw_destroy_plan(plan);
    fftw_free(data);
    MPI_Finalize();
    return failed;
}
