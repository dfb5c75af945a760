/* FFTW-MPI peer of `dfft run`: forward+backward 3-D transforms (c2c, or r2c then c2r) timed the
 * same way (barrier, one forward and one backward, max over ranks; min and median over the timed
 * pairs). After timing, one untimed pair from the original data checks the setup: the forward
 * output's energy against the input's (Parseval, counting each half-spectrum r2c mode twice
 * except k2 = 0 and n2/2; relative error, layout-independent, so it covers TRANSPOSED_OUT) and
 * the backward output against the input (max abs error after the 1/N scaling). While that
 * pair runs, a thread samples the proportional set size every millisecond (`pss_peak_bytes`):
 * FFTW-MPI's transposes allocate a buffer per execution, which a reading at rest (`pss_bytes`)
 * misses. `dfft run` samples one untimed pair the same way.
 *
 * r2c uses FFTW-MPI's padded real layout: local_n0 x n1 x 2(n2/2+1) doubles, sized by
 * fftw_mpi_local_size_3d[_transposed](n0, n1, n2/2+1); both transforms are out of place.
 *
 * Wisdom: with a WISDOM file argument (not "-"), rank 0 imports it if it exists and broadcasts
 * it (fftw_mpi_broadcast_wisdom); each plan is first asked of the wisdom alone
 * (FFTW_WISDOM_ONLY) and planned with FFTW_MEASURE only where the wisdom has none. After each
 * plan made anew, the wisdom of all ranks is gathered (fftw_mpi_gather_wisdom) and rank 0
 * writes it back (to a temporary file, then renamed). A plan from wisdom is the FFTW_MEASURE
 * plan an earlier run chose, so only the planning time changes: `plan_s` is the time of
 * planning (and of saving new wisdom), `plan_from_wisdom` says whether both plans came from
 * the wisdom alone.
 *
 * usage: fftw_mpi_bench N0 N1 N2 ITERS WARMUP normal|transposed [THREADS [c2c|r2c [WISDOM]]]
 * prints one JSON line on rank 0. Built by scripts/bench-fft with mpicc. */
#include <fftw3-mpi.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* This process's proportional set size now, bytes (`Pss` of /proc/self/smaps_rollup; 0 where
 * unavailable), as `dfft run` reads it. */
static double pss_now(void) {
  double pss = 0.0;
  FILE *smaps = fopen("/proc/self/smaps_rollup", "r");
  if (smaps) {
    char line[256];
    while (fgets(line, sizeof line, smaps))
      if (sscanf(line, "Pss: %lf kB", &pss) == 1) {
        pss *= 1024.0;
        break;
      }
    fclose(smaps);
  }
  return pss;
}

/* A thread that samples pss_now() every millisecond until `stop`, keeping the largest value. */
struct sampler {
  pthread_t thread;
  atomic_int stop;
  double peak;
};

static void *sample(void *arg) {
  struct sampler *s = arg;
  struct timespec ms = {0, 1000000};
  while (!atomic_load(&s->stop)) {
    double p = pss_now();
    if (p > s->peak) s->peak = p;
    nanosleep(&ms, NULL);
  }
  return NULL;
}

static void sampler_start(struct sampler *s) {
  atomic_store(&s->stop, 0);
  s->peak = pss_now();
  if (pthread_create(&s->thread, NULL, sample, s) != 0) s->thread = 0;
}

/* Stops the sampling; the largest value seen, and at least the value now. */
static double sampler_finish(struct sampler *s) {
  atomic_store(&s->stop, 1);
  if (s->thread) pthread_join(s->thread, NULL);
  double now = pss_now();
  return s->peak > now ? s->peak : now;
}

/* The transform being planned: one of the two 3-D MPI plans of this driver. */
struct problem {
  ptrdiff_t n0, n1, n2;
  int real;
  fftw_complex *in, *out;
  double *rin;
};

/* The forward (sign < 0) or backward plan of `p`. */
static fftw_plan plan(const struct problem *p, int sign, unsigned flags) {
  if (p->real)
    return sign < 0 ? fftw_mpi_plan_dft_r2c_3d(p->n0, p->n1, p->n2, p->rin, p->out,
                                               MPI_COMM_WORLD, flags)
                    : fftw_mpi_plan_dft_c2r_3d(p->n0, p->n1, p->n2, p->out, p->rin,
                                               MPI_COMM_WORLD, flags);
  return sign < 0 ? fftw_mpi_plan_dft_3d(p->n0, p->n1, p->n2, p->in, p->out, MPI_COMM_WORLD,
                                         FFTW_FORWARD, flags)
                  : fftw_mpi_plan_dft_3d(p->n0, p->n1, p->n2, p->out, p->in, MPI_COMM_WORLD,
                                         FFTW_BACKWARD, flags);
}

/* Gathers the wisdom of every rank; rank 0 writes it to `path` whole, then renames it, so a
 * run beside this one never reads half a file. Collective. */
static void save_wisdom(const char *path, int rank) {
  fftw_mpi_gather_wisdom(MPI_COMM_WORLD);
  if (rank != 0) return;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  if (!fftw_export_wisdom_to_filename(tmp) || rename(tmp, path) != 0)
    fprintf(stderr, "fftw_mpi_bench: could not write the wisdom to %s\n", path);
}

/* The plan from the wisdom alone if it has one; else planned with `flags` (`*hit` cleared),
 * and the new wisdom saved at once (a run cut short keeps what it has planned). Collective. */
static fftw_plan plan_wise(const struct problem *p, int sign, unsigned flags, const char *wisdom,
                           int rank, int *hit) {
  fftw_plan q = wisdom ? plan(p, sign, flags | FFTW_WISDOM_ONLY) : NULL;
  if (q) return q;
  *hit = 0;
  q = plan(p, sign, flags);
  if (q && wisdom) save_wisdom(wisdom, rank);
  return q;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int real = argc > 8 && strcmp(argv[8], "r2c") == 0;
  if (argc < 7 || (argc > 8 && !real && strcmp(argv[8], "c2c") != 0)) {
    if (rank == 0)
      fprintf(stderr,
              "usage: %s N0 N1 N2 ITERS WARMUP normal|transposed [THREADS [c2c|r2c [WISDOM]]]\n",
              argv[0]);
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
  const char *wisdom = argc > 9 && strcmp(argv[9], "-") != 0 ? argv[9] : NULL;
  if (wisdom) {
    if (rank == 0) fftw_import_wisdom_from_filename(wisdom); /* none yet: starts empty */
    fftw_mpi_broadcast_wisdom(MPI_COMM_WORLD);
  }

  /* Complex elements per row of the output: n2 (c2c) or n2/2+1 (r2c). Real input rows are
   * padded to 2*nc doubles (r2c); c2c input rows hold n2 complex values. */
  ptrdiff_t nc = real ? n2 / 2 + 1 : n2;
  ptrdiff_t row = real ? 2 * nc : n2; /* input elements (doubles or complex) per row */
  ptrdiff_t local_n0, local_0_start, local_n1, local_1_start, alloc;
  if (transposed)
    alloc = fftw_mpi_local_size_3d_transposed(n0, n1, nc, MPI_COMM_WORLD, &local_n0,
                                              &local_0_start, &local_n1, &local_1_start);
  else
    alloc = fftw_mpi_local_size_3d(n0, n1, nc, MPI_COMM_WORLD, &local_n0, &local_0_start);
  /* c2c: in and out complex; r2c: rin real (2*alloc doubles), out complex. */
  fftw_complex *in = real ? NULL : fftw_alloc_complex(alloc), *out = fftw_alloc_complex(alloc);
  double *rin = real ? fftw_alloc_real(2 * alloc) : NULL;
  unsigned flags = FFTW_MEASURE;
  unsigned fflags = flags | (transposed ? FFTW_MPI_TRANSPOSED_OUT : 0);
  unsigned bflags = flags | (transposed ? FFTW_MPI_TRANSPOSED_IN : 0);
  struct problem prob = {n0, n1, n2, real, in, out, rin};
  int hit = wisdom != NULL;
  double t_plan = MPI_Wtime();
  fftw_plan fwd = plan_wise(&prob, -1, fflags, wisdom, rank, &hit);
  fftw_plan bwd = plan_wise(&prob, 1, bflags, wisdom, rank, &hit);
  t_plan = MPI_Wtime() - t_plan;
  if (!fwd || !bwd) {
    if (rank == 0) fprintf(stderr, "fftw_mpi_bench: FFTW returned no plan\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Logical input: local_n0 x n1 x n2 values (real, or complex as re/im pairs). */
  ptrdiff_t local = local_n0 * n1 * n2, comps = real ? 1 : 2;
  double *orig = malloc(sizeof(double) * comps * (local > 0 ? local : 1));
  for (ptrdiff_t i = 0; i < local; i++) {
    double g = (double)(local_0_start * n1 * n2 + i);
    orig[comps * i] = sin(0.37 * g);
    if (!real) orig[2 * i + 1] = cos(0.11 * g);
  }
  /* Element (r, k) of the input (r = local row, k < n2, c = component) lives at
   * (r*row + k)*comps + c in the input array viewed as doubles. */
  double *inp = real ? rin : (double *)in;
  ptrdiff_t rows = local_n0 * n1;
#define FOR_INPUT(body)                                                     \
  for (ptrdiff_t r = 0; r < rows; r++)                                      \
    for (ptrdiff_t k = 0; k < n2; k++)                                      \
      for (ptrdiff_t c = 0; c < comps; c++) {                               \
        double *x = &inp[(r * row + k) * comps + c];                        \
        const double *o = &orig[(r * n2 + k) * comps + c];                  \
        (void)o;                                                            \
        body;                                                               \
      }
  FOR_INPUT(*x = *o);
  for (int w = 0; w < warmup; w++) {
    fftw_execute(fwd);
    fftw_execute(bwd);
  }
  double *times = malloc(sizeof(double) * iters);
  double scale = 1.0 / ((double)n0 * n1 * n2);
  for (int k = 0; k < iters; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    fftw_execute(fwd);
    fftw_execute(bwd);
    t = MPI_Wtime() - t;
    MPI_Allreduce(&t, &times[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* Normalize outside the timed region (dfft's backward scaling is fused in its last FFT). */
    FOR_INPUT(*x *= scale);
  }

  /* The check: one pair from the original data, with the proportional set sampled. */
  FOR_INPUT(*x = *o);
  MPI_Barrier(MPI_COMM_WORLD);
  struct sampler sampler;
  sampler_start(&sampler);
  fftw_execute(fwd);
  /* Local output elements: local rows (normal: local_n0*n1, transposed: local_n1*n0) of nc. */
  ptrdiff_t out_rows = transposed ? local_n1 * n0 : local_n0 * n1;
  double e[2] = {0.0, 0.0}, ge[2]; /* input energy * N, output energy */
  for (ptrdiff_t i = 0; i < local * comps; i++) e[0] += orig[i] * orig[i];
  e[0] *= (double)n0 * n1 * n2;
  for (ptrdiff_t r = 0; r < out_rows; r++)
    for (ptrdiff_t k = 0; k < nc; k++) {
      double w = (!real || k == 0 || 2 * k == n2) ? 1.0 : 2.0;
      double *z = out[r * nc + k];
      e[1] += w * (z[0] * z[0] + z[1] * z[1]);
    }
  MPI_Allreduce(e, ge, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double parseval = fabs(ge[1] - ge[0]) / ge[0];
  fftw_execute(bwd);
  double pss_peak = sampler_finish(&sampler), gpss_peak;
  MPI_Allreduce(&pss_peak, &gpss_peak, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double err = 0.0, gerr;
  FOR_INPUT(err = fmax(err, fabs(*x * scale - *o)));
  MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double rss = (double)ru.ru_maxrss * 1024.0, grss;
  MPI_Allreduce(&rss, &grss, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  /* Proportional set size now (all arrays alive), as dfft run reports it. */
  double pss = pss_now(), gpss;
  MPI_Allreduce(&pss, &gpss, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(times, iters, sizeof(double), cmp);
  if (rank == 0)
    printf("{\"peer\":\"fftw-mpi\",\"kind\":\"%s\",\"ranks\":%d,\"threads_per_rank\":%d,"
           "\"shape\":[%td,%td,%td],\"transposed\":%s,\"iters\":%d,\"min_s\":%.9g,"
           "\"median_s\":%.9g,\"plan_s\":%.6g,\"wisdom\":%s,\"plan_from_wisdom\":%s,"
           "\"roundtrip_error\":%.3g,\"parseval_error\":%.3g,\"peak_rss_bytes\":%.0f,\"pss_bytes\":%.0f,"
           "\"pss_peak_bytes\":%.0f}\n",
           real ? "r2c" : "c2c", size, threads, n0, n1, n2, transposed ? "true" : "false", iters,
           times[0], times[iters / 2], t_plan, wisdom ? "true" : "false", hit ? "true" : "false",
           gerr, parseval, grss, gpss, gpss_peak);
  fftw_destroy_plan(fwd);
  fftw_destroy_plan(bwd);
  if (in) fftw_free(in);
  if (rin) fftw_free(rin);
  fftw_free(out);
  free(orig);
  free(times);
  fftw_mpi_cleanup();
  MPI_Finalize();
  return 0;
}
