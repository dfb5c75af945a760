/*
 * A 3-D Poisson solve with dfft's C API: -lap(u) = f on the periodic box [0, 2pi)^3, by a
 * real-to-complex FFT, a division by |k|^2 and a complex-to-real FFT back.
 *
 * f comes from a known u (a sum of three Fourier modes), so the answer is checked against
 * that exact solution at every grid point of every rank: the program exits 0 only when the
 * largest error is below 1e-10.
 *
 *   mpicc poisson.c $(pkg-config --cflags --libs dfft) -lm -o poisson
 *   mpirun -n 4 ./poisson [n0 n1 n2 [repetitions [natural]]]
 *
 * Arguments: the grid (default 32 24 20, at least 8 points per axis), how many solves to time
 * (default 3; the minimum is printed) and "natural" to keep the spectrum in the input's
 * layout instead of DFFT_TRANSPOSED_OUT.
 */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfft.h>

/* Prints the failing call's message on this rank and leaves with status 2. */
#define CHECK(call)                                                                        \
  do {                                                                                     \
    int code_ = (call);                                                                    \
    if (code_ != DFFT_SUCCESS) {                                                           \
      fprintf(stderr, "%s failed (%d): %s\n", #call, code_, dfft_error_message(code_));   \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                        \
    }                                                                                      \
  } while (0)

/* The exact solution; f = -lap(u) weighs each mode by its |k|^2 (14, 5 and 3). */
static double exact_u(double x, double y, double z) {
  return sin(x) * cos(2 * y) * sin(3 * z) + 0.5 * cos(2 * x - y) + 0.25 * sin(x + y + z);
}

static double rhs_f(double x, double y, double z) {
  return 14 * sin(x) * cos(2 * y) * sin(3 * z) + 5 * 0.5 * cos(2 * x - y) +
         3 * 0.25 * sin(x + y + z);
}

/* The signed wavenumber of index i along an axis of n points (numpy's fftfreq * n). */
static double wavenumber(ptrdiff_t i, ptrdiff_t n) { return (double)(i < (n + 1) / 2 ? i : i - n); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  ptrdiff_t n[3] = {32, 24, 20};
  int repetitions = 3;
  unsigned flags = DFFT_TRANSPOSED_OUT;
  if (argc >= 4)
    for (int i = 0; i < 3; i++) n[i] = atol(argv[1 + i]);
  if (argc >= 5) repetitions = atoi(argv[4]);
  if (argc >= 6 && strcmp(argv[5], "natural") == 0) flags &= ~DFFT_TRANSPOSED_OUT;
  if (n[0] < 8 || n[1] < 8 || n[2] < 8 || repetitions < 1) {
    if (rank == 0) fprintf(stderr, "usage: poisson [n0 n1 n2 (each >= 8) [repetitions >= 1 [natural]]]\n");
    MPI_Finalize();
    return 2;
  }

  /* One plan, both directions: r2c forward, c2r backward (unnormalized: the 1/N goes into
   * the division by |k|^2). */
  dfft_plan *plan;
  CHECK(dfft_plan_dft_r2c(3, n, 1, MPI_COMM_WORLD, 0, NULL, flags, &plan));

  /* This rank's blocks: the real input (C order) and the spectrum (maybe transposed). */
  ptrdiff_t in_n[3], in_start[3], in_stride[3], out_n[3], out_start[3], out_stride[3];
  CHECK(dfft_local_input(plan, in_n, in_start, in_stride));
  CHECK(dfft_local_output(plan, out_n, out_start, out_stride));
  int grid_rank, grid_dims[2];
  CHECK(dfft_grid(plan, &grid_rank, grid_dims));

  double *f, *u;
  double complex *fhat;
  CHECK(dfft_alloc_input(plan, (void **)&f));
  CHECK(dfft_alloc_input(plan, (void **)&u));
  CHECK(dfft_alloc_output(plan, (void **)&fhat));

  const double h[3] = {2 * M_PI / n[0], 2 * M_PI / n[1], 2 * M_PI / n[2]};
  const double scale = 1.0 / ((double)n[0] * n[1] * n[2]);
  for (ptrdiff_t i = 0; i < in_n[0]; i++)
    for (ptrdiff_t j = 0; j < in_n[1]; j++)
      for (ptrdiff_t k = 0; k < in_n[2]; k++)
        f[i * in_stride[0] + j * in_stride[1] + k * in_stride[2]] =
            rhs_f(h[0] * (in_start[0] + i), h[1] * (in_start[1] + j), h[2] * (in_start[2] + k));

  /* |k|^2 per axis of this rank's spectrum (the last axis is the halved one: k >= 0), and
   * the axes from the slowest in memory to the fastest (transposed outputs differ). */
  double *k2[3];
  for (int a = 0; a < 3; a++) {
    k2[a] = malloc((out_n[a] + 1) * sizeof(double));
    for (ptrdiff_t i = 0; i < out_n[a]; i++) {
      double k = a == 2 ? (double)(out_start[a] + i) : wavenumber(out_start[a] + i, n[a]);
      k2[a][i] = k * k;
    }
  }
  int order[3] = {0, 1, 2};
  for (int a = 0; a < 3; a++)
    for (int b = a + 1; b < 3; b++)
      if (out_stride[order[b]] > out_stride[order[a]]) {
        int t = order[a];
        order[a] = order[b];
        order[b] = t;
      }

  double best = INFINITY;
  for (int r = 0; r < repetitions; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECK(dfft_forward(plan, f, fhat));
    /* u_hat = f_hat / (N |k|^2), the mean (k = 0) set to zero, walked in memory order. */
    ptrdiff_t at[3];
    for (at[order[0]] = 0; at[order[0]] < out_n[order[0]]; at[order[0]]++)
      for (at[order[1]] = 0; at[order[1]] < out_n[order[1]]; at[order[1]]++)
        for (at[order[2]] = 0; at[order[2]] < out_n[order[2]]; at[order[2]]++) {
          double k_squared = k2[0][at[0]] + k2[1][at[1]] + k2[2][at[2]];
          double complex *c = &fhat[at[0] * out_stride[0] + at[1] * out_stride[1] + at[2] * out_stride[2]];
          *c = k_squared > 0 ? *c * (scale / k_squared) : 0;
        }
    CHECK(dfft_backward(plan, fhat, u));
    double elapsed = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (slowest < best) best = slowest;
  }

  double local_error = 0, error;
  for (ptrdiff_t i = 0; i < in_n[0]; i++)
    for (ptrdiff_t j = 0; j < in_n[1]; j++)
      for (ptrdiff_t k = 0; k < in_n[2]; k++) {
        double want = exact_u(h[0] * (in_start[0] + i), h[1] * (in_start[1] + j), h[2] * (in_start[2] + k));
        double got = u[i * in_stride[0] + j * in_stride[1] + k * in_stride[2]];
        if (fabs(got - want) > local_error) local_error = fabs(got - want);
      }
  MPI_Allreduce(&local_error, &error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = error < 1e-10;
  if (rank == 0) {
    printf("poisson: n=%tdx%tdx%td ranks=%d grid=", n[0], n[1], n[2], size);
    for (int g = 0; g < grid_rank; g++) printf(g ? "x%d" : "%d", grid_dims[g]);
    printf(" %s max_error=%.3e seconds_per_solve=%.6f %s\n",
           flags & DFFT_TRANSPOSED_OUT ? "transposed" : "natural", error, best,
           ok ? "PASSED" : "FAILED");
  }

  for (int a = 0; a < 3; a++) free(k2[a]);
  CHECK(dfft_free(fhat));
  CHECK(dfft_free(u));
  CHECK(dfft_free(f));
  CHECK(dfft_destroy(plan));
  MPI_Finalize();
  return ok ? 0 : 1;
}
