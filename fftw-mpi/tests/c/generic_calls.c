/* FFTW's generic plan calls in a program that mixes serial FFTW plans with MPI plans, in
   both precisions: the serial plans (planned, executed, printed, costed, destroyed through
   the same symbols the drop-in defines) must still compute FFTW's results, the MPI plans
   the drop-in's, new-array execution included; wisdom made by the serial planner survives
   fftw_mpi_gather_wisdom and fftw_mpi_broadcast_wisdom; fftw_plan_with_nthreads reaches
   FFTW's threads library. Prints "generic_calls: ok" on process 0, exits 1 on a mismatch. */
#include <complex.h>
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "generic_calls: FAILED %s\n", what);
    ++failures;
  }
}

/* Naive DFT of x (length n) at k. */
static double complex dft(const double complex *x, int n, int k, int sign) {
  double complex s = 0;
  for (int j = 0; j < n; ++j) s += x[j] * cexp(sign * 2 * M_PI * I * (double)((long)j * k % n) / n);
  return s;
}

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fftw_init_threads();
  fftw_mpi_init();
  fftwf_mpi_init();

  /* A serial plan, through the generic calls the drop-in intercepts. */
  enum { N = 24 };
  fftw_plan_with_nthreads(2);
  expect(fftw_planner_nthreads() == 2, "fftw_plan_with_nthreads reaches FFTW's threads library");
  fftw_complex *a = fftw_alloc_complex(N), *b = fftw_alloc_complex(N);
  fftw_plan serial = fftw_plan_dft_1d(N, a, b, FFTW_FORWARD, FFTW_MEASURE);
  fftw_plan_with_nthreads(1);
  for (int j = 0; j < N; ++j) a[j] = j + 0.5 * I * (j % 5);
  fftw_execute(serial);
  double err = 0;
  for (int k = 0; k < N; ++k) err = fmax(err, cabs(b[k] - dft(a, N, k, -1)));
  expect(err < 1e-12, "serial fftw_execute");
  fftw_complex *c = fftw_alloc_complex(N);
  fftw_execute_dft(serial, b, c); /* new arrays: the DFT of the spectrum */
  err = 0;
  for (int k = 0; k < N; ++k) err = fmax(err, cabs(c[k] - dft(b, N, k, -1)));
  expect(err < 1e-10, "serial fftw_execute_dft");
  double add = -1, mul = -1, fma = -1;
  fftw_flops(serial, &add, &mul, &fma);
  expect(add > 0 && mul >= 0 && fma >= 0, "serial fftw_flops");
  expect(fftw_estimate_cost(serial) > 0, "serial fftw_estimate_cost");
  char *text = fftw_sprint_plan(serial);
  expect(text && strstr(text, "dft") != NULL && strstr(text, "dfft-mpi") == NULL, "serial fftw_sprint_plan is FFTW's");
  free(text);

  /* An MPI plan (2-D, out of place) among them, run twice: planning arrays, then new ones. */
  ptrdiff_t local_n0, local_0_start, n0 = 8, n1 = 5;
  ptrdiff_t alloc = fftw_mpi_local_size_2d(n0, n1, MPI_COMM_WORLD, &local_n0, &local_0_start);
  fftw_complex *in = fftw_alloc_complex(alloc), *out = fftw_alloc_complex(alloc);
  fftw_complex *in2 = fftw_alloc_complex(alloc), *out2 = fftw_alloc_complex(alloc);
  fftw_plan mpi = fftw_mpi_plan_dft_2d(n0, n1, in, out, MPI_COMM_WORLD, FFTW_BACKWARD, FFTW_ESTIMATE);
  expect(mpi != NULL, "an MPI plan");
  text = fftw_sprint_plan(mpi);
  expect(text && strstr(text, "dfft-mpi") != NULL, "the MPI plan's fftw_sprint_plan is the drop-in's");
  free(text);
  fftw_flops(mpi, &add, &mul, &fma);
  expect(add > 0 && fftw_cost(mpi) > 0, "the MPI plan's fftw_flops and fftw_cost");
  double complex whole[8 * 5];
  for (int g = 0; g < n0 * n1; ++g) whole[g] = cos(g) + I * sin(2.0 * g);
  for (ptrdiff_t i = 0; i < local_n0; ++i)
    for (ptrdiff_t j = 0; j < n1; ++j) {
      in[i * n1 + j] = whole[(local_0_start + i) * n1 + j];
      in2[i * n1 + j] = 2 * whole[(local_0_start + i) * n1 + j];
    }
  fftw_execute(mpi);
  fftw_mpi_execute_dft(mpi, in2, out2);
  err = 0;
  for (ptrdiff_t i = 0; i < local_n0; ++i)
    for (ptrdiff_t j = 0; j < n1; ++j) {
      long k0 = local_0_start + i, k1 = j;
      double complex want = 0;
      for (int x = 0; x < n0; ++x)
        for (int y = 0; y < n1; ++y)
          want += whole[x * n1 + y] * cexp(2 * M_PI * I * ((double)(x * k0 % n0) / n0 + (double)(y * k1 % n1) / n1));
      err = fmax(err, cabs(out[i * n1 + j] - want));
      err = fmax(err, cabs(out2[i * n1 + j] - 2 * want));
    }
  expect(err < 1e-12, "the MPI plan, on its arrays and on new ones (sign +1)");
  fftw_destroy_plan(mpi);

  /* Single precision beside it: an r2r MPI plan and a serial float plan. */
  float *r = fftwf_alloc_real(alloc), *s = fftwf_alloc_real(alloc);
  fftwf_plan fmpi = fftwf_mpi_plan_r2r_2d(n0, n1, r, s, MPI_COMM_WORLD, FFTW_REDFT10, FFTW_DHT, FFTW_ESTIMATE);
  expect(fmpi != NULL, "a single-precision MPI r2r plan");
  fftwf_plan fserial = fftwf_plan_r2r_1d(N, (float *)a, (float *)b, FFTW_R2HC, FFTW_ESTIMATE);
  expect(fserial != NULL, "a single-precision serial plan");
  fftwf_execute(fserial);
  fftwf_destroy_plan(fserial);
  fftwf_destroy_plan(fmpi);

  /* Wisdom of the serial planner: process r (r < 2) measures a transform of 30 + r alone;
     gathered to process 0 and broadcast back, every process can plan both from wisdom. */
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  fftw_complex *wa = fftw_alloc_complex(32), *wb = fftw_alloc_complex(32);
  if (rank < 2) fftw_destroy_plan(fftw_plan_dft_1d(30 + rank, wa, wb, FFTW_FORWARD, FFTW_MEASURE));
  fftw_mpi_gather_wisdom(MPI_COMM_WORLD);
  fftw_mpi_broadcast_wisdom(MPI_COMM_WORLD);
  for (int m = 30; m < 30 + (size < 2 ? size : 2); ++m) {
    fftw_plan again = fftw_plan_dft_1d(m, wa, wb, FFTW_FORWARD, FFTW_WISDOM_ONLY);
    expect(again != NULL, "wisdom measured on one process plans on every process");
    fftw_destroy_plan(again);
  }
  fftw_free(wa); fftw_free(wb);

  fftw_destroy_plan(serial);
  fftw_free(a); fftw_free(b); fftw_free(c);
  fftw_free(in); fftw_free(out); fftw_free(in2); fftw_free(out2);
  fftwf_free(r); fftwf_free(s);
  int all;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("generic_calls: %s\n", all ? "FAILED" : "ok");
  fftw_mpi_cleanup();
  MPI_Finalize();
  return all != 0;
}
