/*
 * capi/examples/poisson.c written with FFTW-MPI instead of dfft: the same problem, checks and
 * output line, so that scripts/bench-capi can compare their times in one run. FFTW's r2c
 * plans need the padded real layout (rows of 2 (n2/2 + 1) doubles) and split along axis 0
 * only; with FFTW_MPI_TRANSPOSED_OUT/IN the spectrum is n1 x n0 x (n2/2 + 1) split along n1.
 *
 *   mpicc poisson_fftw.c -lfftw3_mpi -lfftw3 -lm -o poisson_fftw
 *   mpirun -n 4 ./poisson_fftw [n0 n1 n2 [repetitions [natural]]]
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double exact_u(double x, double y, double z) {
  return sin(x) * cos(2 * y) * sin(3 * z) + 0.5 * cos(2 * x - y) + 0.25 * sin(x + y + z);
}

static double rhs_f(double x, double y, double z) {
  return 14 * sin(x) * cos(2 * y) * sin(3 * z) + 5 * 0.5 * cos(2 * x - y) +
         3 * 0.25 * sin(x + y + z);
}

static double wavenumber(ptrdiff_t i, ptrdiff_t n) { return (double)(i < (n + 1) / 2 ? i : i - n); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  fftw_mpi_init();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  ptrdiff_t n[3] = {32, 24, 20};
  int repetitions = 3, transposed = 1;
  if (argc >= 4)
    for (int i = 0; i < 3; i++) n[i] = atol(argv[1 + i]);
  if (argc >= 5) repetitions = atoi(argv[4]);
  if (argc >= 6 && strcmp(argv[5], "natural") == 0) transposed = 0;
  if (n[0] < 8 || n[1] < 8 || n[2] < 8 || repetitions < 1) {
    if (rank == 0) fprintf(stderr, "usage: poisson_fftw [n0 n1 n2 (each >= 8) [repetitions >= 1 [natural]]]\n");
    MPI_Finalize();
    return 2;
  }
  const ptrdiff_t half = n[2] / 2 + 1, padded = 2 * half;
  ptrdiff_t local_n0, local_0_start, local_n1, local_1_start;
  ptrdiff_t alloc_local = fftw_mpi_local_size_3d_transposed(n[0], n[1], half, MPI_COMM_WORLD, &local_n0,
                                                            &local_0_start, &local_n1, &local_1_start);
  double *f = fftw_alloc_real(2 * alloc_local), *u = fftw_alloc_real(2 * alloc_local);
  fftw_complex *fhat = fftw_alloc_complex(alloc_local);
  /* FFTW_MEASURE overwrites the arrays while planning: plan first, then fill. */
  fftw_plan forward = fftw_mpi_plan_dft_r2c_3d(n[0], n[1], n[2], f, fhat, MPI_COMM_WORLD,
                                               FFTW_MEASURE | (transposed ? FFTW_MPI_TRANSPOSED_OUT : 0));
  fftw_plan backward = fftw_mpi_plan_dft_c2r_3d(n[0], n[1], n[2], fhat, u, MPI_COMM_WORLD,
                                                FFTW_MEASURE | (transposed ? FFTW_MPI_TRANSPOSED_IN : 0));

  const double h[3] = {2 * M_PI / n[0], 2 * M_PI / n[1], 2 * M_PI / n[2]};
  const double scale = 1.0 / ((double)n[0] * n[1] * n[2]);
  for (ptrdiff_t i = 0; i < local_n0; i++)
    for (ptrdiff_t j = 0; j < n[1]; j++)
      for (ptrdiff_t k = 0; k < n[2]; k++)
        f[(i * n[1] + j) * padded + k] = rhs_f(h[0] * (local_0_start + i), h[1] * j, h[2] * k);

  /* The spectrum's rows: transposed (j local, then every i) or natural (i local, every j). */
  const ptrdiff_t rows_a = transposed ? local_n1 : local_n0, rows_b = transposed ? n[0] : n[1];
  double best = INFINITY;
  for (int r = 0; r < repetitions; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    fftw_execute(forward);
    for (ptrdiff_t a = 0; a < rows_a; a++)
      for (ptrdiff_t b = 0; b < rows_b; b++) {
        double k0 = transposed ? wavenumber(b, n[0]) : wavenumber(local_0_start + a, n[0]);
        double k1 = transposed ? wavenumber(local_1_start + a, n[1]) : wavenumber(b, n[1]);
        fftw_complex *row = fhat + (a * rows_b + b) * half;
        for (ptrdiff_t k = 0; k < half; k++) {
          double k_squared = k0 * k0 + k1 * k1 + (double)(k * k);
          double factor = k_squared > 0 ? scale / k_squared : 0;
          row[k][0] *= factor;
          row[k][1] *= factor;
        }
      }
    fftw_execute(backward);
    double elapsed = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (slowest < best) best = slowest;
  }

  double local_error = 0, error;
  for (ptrdiff_t i = 0; i < local_n0; i++)
    for (ptrdiff_t j = 0; j < n[1]; j++)
      for (ptrdiff_t k = 0; k < n[2]; k++) {
        double want = exact_u(h[0] * (local_0_start + i), h[1] * j, h[2] * k);
        double got = u[(i * n[1] + j) * padded + k];
        if (fabs(got - want) > local_error) local_error = fabs(got - want);
      }
  MPI_Allreduce(&local_error, &error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = error < 1e-10;
  if (rank == 0)
    printf("poisson_fftw: n=%tdx%tdx%td ranks=%d grid=%d %s max_error=%.3e seconds_per_solve=%.6f %s\n", n[0], n[1],
           n[2], size, size, transposed ? "transposed" : "natural", error, best, ok ? "PASSED" : "FAILED");

  fftw_destroy_plan(backward);
  fftw_destroy_plan(forward);
  fftw_free(fhat);
  fftw_free(u);
  fftw_free(f);
  fftw_mpi_cleanup();
  MPI_Finalize();
  return ok ? 0 : 1;
}
