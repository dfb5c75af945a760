/* The FFTW manual's L x M x N real-data example ("Multi-dimensional MPI DFTs of Real Data"),
   here in place: the real array padded to L x M x 2(N/2+1), its spectrum L x M x (N/2+1) in
   the same allocation, then the c2r transform back (L, M, N from the command line, default
   12 x 6 x 10). */
#include <complex.h>
#include <fftw3-mpi.h>
#include "check.h"

static ptrdiff_t L = 12, M = 6, N = 10;
static double my_func(ptrdiff_t x, ptrdiff_t y, ptrdiff_t z) { return value_at((x * M + y) * N + z, 3); }
static double complex real_at(long g) { return value_at(g, 3); }

int main(int argc, char **argv)
{
    if (argc > 3) L = atol(argv[1]), M = atol(argv[2]), N = atol(argv[3]);
    fftw_plan plan, back;
    double *rin;
    fftw_complex *cout;
    ptrdiff_t alloc_local, local_n0, local_0_start, i, j, k;

    MPI_Init(&argc, &argv);
    fftw_mpi_init();

    /* get local data size and allocate */
    alloc_local = fftw_mpi_local_size_3d(L, M, N/2+1, MPI_COMM_WORLD,
                                         &local_n0, &local_0_start);
    rin = fftw_alloc_real(2 * alloc_local);
    cout = (fftw_complex *) rin;              /* in place */

    /* create plans for in-place r2c and c2r DFTs */
    plan = fftw_mpi_plan_dft_r2c_3d(L, M, N, rin, cout, MPI_COMM_WORLD,
                                    FFTW_MEASURE);
    back = fftw_mpi_plan_dft_c2r_3d(L, M, N, cout, rin, MPI_COMM_WORLD,
                                    FFTW_MEASURE);

    /* initialize rin to some function my_func(x,y,z) */
    for (i = 0; i < local_n0; ++i)
       for (j = 0; j < M; ++j)
         for (k = 0; k < N; ++k)
       rin[(i*M + j) * (2*(N/2+1)) + k] = my_func(local_0_start+i, j, k);

    /* compute transforms as many times as desired */
    fftw_execute(plan);

    /* harness: the half spectrum against a naive DFT, then the round trip */
    long n[3] = {L, M, N}, nc = N / 2 + 1;
    for (i = 0; i < local_n0; ++i) for (j = 0; j < M; ++j) for (k = 0; k < nc; ++k) {
       long kk[3] = {local_0_start + i, j, k};
       check((kk[0] * M + j) * nc + k, cout[(i*M + j) * nc + k], naive_dft(3, n, kk, -1, real_at));
    }
    int failed = report("manual_3d_r2c", 1e-12);
    fftw_execute(back);
    max_error = scale = 0; checksum = 0;
    for (i = 0; i < local_n0; ++i) for (j = 0; j < M; ++j) for (k = 0; k < N; ++k)
       check(((local_0_start + i) * M + j) * N + k, rin[(i*M + j) * (2*(N/2+1)) + k] / (double)(L*M*N),
             my_func(local_0_start + i, j, k));
    failed |= report("manual_3d_r2c round trip", 1e-12);

    fftw_destroy_plan(plan);
    fftw_destroy_plan(back);
    fftw_free(rin);
    MPI_Finalize();
    return failed;
}
