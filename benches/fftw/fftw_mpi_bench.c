/* FFTW-MPI peer of `dfft run`: forward+backward c2c 3-D transforms timed the same way
 * (barrier, one forward and one backward, max over ranks; min and median over the timed pairs).
 *
 * usage: fftw_mpi_bench N0 N1 N2 ITERS WARMUP normal|transposed [THREADS]
 * prints one JSON line on rank 0. Built by scripts/bench-fft with mpicc. */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 7) {
    if (rank == 0) fprintf(stderr, "usage: %s N0 N1 N2 ITERS WARMUP normal|transposed [THREADS]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  ptrdiff_t n0 = atol(argv[1]), n1 = atol(argv[2]), n2 = atol(argv[3]);
  int iters = atoi(argv[4]), warmup = atoi(argv[5]);
  int transposed = strcmp(argv[6], "transposed") == 0;
  int threads = argc > 7 ? atoi(argv[7]) : 1;
  if (threads > 1) fftw_init_threads();
  fftw_mpi_init();
  if (threads > 1) fftw_plan_with_nthreads(threads);

  ptrdiff_t local_n0, local_0_start, local_n1, local_1_start, alloc;
  if (transposed)
    alloc = fftw_mpi_local_size_3d_transposed(n0, n1, n2, MPI_COMM_WORLD, &local_n0, &local_0_start,
                                              &local_n1, &local_1_start);
  else
    alloc = fftw_mpi_local_size_3d(n0, n1, n2, MPI_COMM_WORLD, &local_n0, &local_0_start);
  fftw_complex *in = fftw_alloc_complex(alloc), *out = fftw_alloc_complex(alloc);
  unsigned flags = FFTW_MEASURE;
  double t_plan = MPI_Wtime();
  fftw_plan fwd = fftw_mpi_plan_dft_3d(n0, n1, n2, in, out, MPI_COMM_WORLD, FFTW_FORWARD,
                                       flags | (transposed ? FFTW_MPI_TRANSPOSED_OUT : 0));
  fftw_plan bwd = fftw_mpi_plan_dft_3d(n0, n1, n2, out, in, MPI_COMM_WORLD, FFTW_BACKWARD,
                                       flags | (transposed ? FFTW_MPI_TRANSPOSED_IN : 0));
  t_plan = MPI_Wtime() - t_plan;

  ptrdiff_t local = local_n0 * n1 * n2;
  double *orig = malloc(sizeof(double) * 2 * (local > 0 ? local : 1));
  for (ptrdiff_t i = 0; i < local; i++) {
    double g = (double)(local_0_start * n1 * n2 + i);
    orig[2 * i] = sin(0.37 * g);
    orig[2 * i + 1] = cos(0.11 * g);
  }
  for (ptrdiff_t i = 0; i < local; i++) {
    in[i][0] = orig[2 * i];
    in[i][1] = orig[2 * i + 1];
  }
  for (int w = 0; w < warmup; w++) {
    fftw_execute(fwd);
    fftw_execute(bwd);
  }
  /* Restart from the original data so the round trip is checkable. */
  for (ptrdiff_t i = 0; i < local; i++) {
    in[i][0] = orig[2 * i];
    in[i][1] = orig[2 * i + 1];
  }
  double *times = malloc(sizeof(double) * iters);
  double scale = 1.0 / ((double)n0 * n1 * n2), err = 0.0;
  for (int k = 0; k < iters; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    fftw_execute(fwd);
    fftw_execute(bwd);
    t = MPI_Wtime() - t;
    MPI_Allreduce(&t, &times[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* Normalize outside the timed region (dfft's backward scaling is fused in its last FFT). */
    for (ptrdiff_t i = 0; i < local; i++) {
      in[i][0] *= scale;
      in[i][1] *= scale;
    }
  }
  for (ptrdiff_t i = 0; i < local; i++) {
    double dr = in[i][0] - orig[2 * i], di = in[i][1] - orig[2 * i + 1];
    double e = sqrt(dr * dr + di * di);
    if (e > err) err = e;
  }
  double gerr;
  MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double rss = (double)ru.ru_maxrss * 1024.0, grss;
  MPI_Allreduce(&rss, &grss, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(times, iters, sizeof(double), cmp);
  if (rank == 0)
    printf("{\"peer\":\"fftw-mpi\",\"ranks\":%d,\"threads_per_rank\":%d,\"shape\":[%td,%td,%td],"
           "\"transposed\":%s,\"iters\":%d,\"min_s\":%.9g,\"median_s\":%.9g,\"plan_s\":%.6g,"
           "\"roundtrip_error\":%.3g,\"peak_rss_bytes\":%.0f}\n",
           size, threads, n0, n1, n2, transposed ? "true" : "false", iters, times[0],
           times[iters / 2], t_plan, gerr, grss);
  fftw_destroy_plan(fwd);
  fftw_destroy_plan(bwd);
  fftw_free(in);
  fftw_free(out);
  free(orig);
  free(times);
  fftw_mpi_cleanup();
  MPI_Finalize();
  return 0;
}
