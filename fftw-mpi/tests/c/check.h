/* The harness around the FFTW manual's MPI examples (the examples themselves are FFTW code,
   unchanged): deterministic inputs by global index, a naive DFT of any element of the
   global array, and one report line per program with the largest error against it and a
   checksum of the output over all processes (which the tests compare between FFTW-MPI and
   the drop-in). Include after <complex.h> and <fftw3-mpi.h>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A smooth-free pseudo-random value in [-1, 1) for global index g. */
static inline double value_at(long g, int salt) {
  unsigned long x = (unsigned long)g * 2654435761ul + (unsigned long)salt * 40503ul + 12345ul;
  x ^= x >> 13; x *= 0x5bd1e995ul; x ^= x >> 15;
  return (double)(x % 20011ul) / 10005.5 - 1.0;
}

static inline double complex cvalue_at(long g) { return value_at(g, 1) + I * value_at(g, 2); }

/* sum over x of f(x) exp(sign 2 pi i k.x / n), x over the whole d-dimensional array. */
static inline double complex naive_dft(int d, const long *n, const long *k, int sign, double complex (*f)(long)) {
  long total = 1, x[8] = {0};
  for (int a = 0; a < d; ++a) total *= n[a];
  double complex sum = 0;
  for (long g = 0; g < total; ++g) {
    long rest = g;
    double phase = 0;
    for (int a = d - 1; a >= 0; --a) {
      x[a] = rest % n[a];
      rest /= n[a];
      phase += (double)((x[a] * k[a]) % n[a]) / (double)n[a];
    }
    sum += f(g) * cexp(sign * 2 * M_PI * I * phase);
  }
  return sum;
}

static double max_error, scale;
static double complex checksum;

/* One output element, global index g, against its reference. */
static inline void check(long g, double complex got, double complex want) {
  double e = cabs(got - want);
  if (e > max_error) max_error = e;
  if (cabs(want) > scale) scale = cabs(want);
  checksum += got * (cos(0.37 * (double)g) + I * sin(0.11 * (double)g));
}

/* The report: "NAME: max error E (relative R), checksum RE IM" on process 0; the exit code
   is 1 when the relative error passes `tolerance` on any process. */
static inline int report(const char *name, double tolerance) {
  double e = max_error, s = scale, sums[2] = {creal(checksum), cimag(checksum)}, total[2];
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double relative = s > 0 ? e / s : e;
  if (rank == 0)
    printf("%s np=%d: max error %.3e (relative %.3e), checksum %.15e %.15e\n", name, size, e,
           relative, total[0], total[1]);
  return relative > tolerance;
}
