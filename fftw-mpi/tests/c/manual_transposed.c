/* The FFTW manual's "Transposed distributions": an n0 x n1 x n2 complex DFT whose output is
   n1 x n0 x n2 distributed along n1 (FFTW_MPI_TRANSPOSED_OUT), and the backward transform
   that takes it back (FFTW_MPI_TRANSPOSED_IN); sizes from the command line, default
   12 x 8 x 5, out of place. */
#include <complex.h>
#include <fftw3-mpi.h>
#include "check.h"

static ptrdiff_t n0 = 12, n1 = 8, n2 = 5;

int main(int argc, char **argv)
{
    if (argc > 3) n0 = atol(argv[1]), n1 = atol(argv[2]), n2 = atol(argv[3]);
    ptrdiff_t alloc_local, local_n0, local_0_start, local_n1, local_1_start, i, j, k;
    fftw_complex *in, *out;
    fftw_plan forward, backward;

    MPI_Init(&argc, &argv);
    fftw_mpi_init();

    alloc_local = fftw_mpi_local_size_3d_transposed(n0, n1, n2, MPI_COMM_WORLD,
                                                    &local_n0, &local_0_start,
                                                    &local_n1, &local_1_start);
    in = fftw_alloc_complex(alloc_local);
    out = fftw_alloc_complex(alloc_local);
    forward = fftw_mpi_plan_dft_3d(n0, n1, n2, in, out, MPI_COMM_WORLD, FFTW_FORWARD,
                                   FFTW_MEASURE | FFTW_MPI_TRANSPOSED_OUT);
    backward = fftw_mpi_plan_dft_3d(n0, n1, n2, out, in, MPI_COMM_WORLD, FFTW_BACKWARD,
                                    FFTW_MEASURE | FFTW_MPI_TRANSPOSED_IN);

    for (i = 0; i < local_n0; ++i) for (j = 0; j < n1; ++j) for (k = 0; k < n2; ++k)
       in[(i*n1 + j)*n2 + k] = cvalue_at(((local_0_start + i)*n1 + j)*n2 + k);
    fftw_execute(forward);

    /* harness: out is local_n1 x n0 x n2, element (j, i, k) = F(i, local_1_start + j, k) */
    long n[3] = {n0, n1, n2};
    for (j = 0; j < local_n1; ++j) for (i = 0; i < n0; ++i) for (k = 0; k < n2; ++k) {
       long kk[3] = {i, local_1_start + j, k};
       check((kk[0]*n1 + kk[1])*n2 + k, out[(j*n0 + i)*n2 + k], naive_dft(3, n, kk, -1, cvalue_at));
    }
    int failed = report("manual_transposed", 1e-12);
    fftw_execute(backward);
    max_error = scale = 0; checksum = 0;
    for (i = 0; i < local_n0; ++i) for (j = 0; j < n1; ++j) for (k = 0; k < n2; ++k) {
       long g = ((local_0_start + i)*n1 + j)*n2 + k;
       check(g, in[(i*n1 + j)*n2 + k] / (double)(n0*n1*n2), cvalue_at(g));
    }
    failed |= report("manual_transposed round trip", 1e-12);

    fftw_destroy_plan(forward);
    fftw_destroy_plan(backward);
    fftw_free(in);
    fftw_free(out);
    MPI_Finalize();
    return failed;
}
