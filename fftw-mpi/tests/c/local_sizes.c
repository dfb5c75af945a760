/* Every local_size function of fftw3-mpi.h, double and single precision, on many shapes,
   howmany counts, block sizes, signs and flags: process 0 prints one line per call and process
   (what it returned and wrote), in rank order. Built against FFTW-MPI and against
   libdfft_fftw3_mpi, the two outputs must be identical. */
#include <fftw3-mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *text;
static size_t used, cap;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(text + used, cap - used, fmt, ap);
    va_end(ap);
    if (n >= 0 && used + (size_t)n < cap) {
      used += (size_t)n;
      return;
    }
    cap = cap ? 2 * cap : 1 << 16;
    text = realloc(text, cap);
  }
}

#define TD(x) (long)(x)

static void multi(int rnk, const ptrdiff_t *n, ptrdiff_t howmany, ptrdiff_t b0, ptrdiff_t b1) {
  ptrdiff_t a, l0 = -7, s0 = -7, l1 = -7, s1 = -7;
  char dims[64] = "";
  for (int i = 0; i < rnk; ++i) sprintf(dims + strlen(dims), "%s%ld", i ? "x" : "", TD(n[i]));
  a = fftw_mpi_local_size_many_transposed(rnk, n, howmany, b0, b1, MPI_COMM_WORLD, &l0, &s0, &l1, &s1);
  say("many_transposed %s h%ld b%ld,%ld: %ld | %ld %ld %ld %ld\n", dims, TD(howmany), TD(b0), TD(b1), TD(a), TD(l0), TD(s0), TD(l1), TD(s1));
  a = fftwf_mpi_local_size_many_transposed(rnk, n, howmany, b0, b1, MPI_COMM_WORLD, &l0, &s0, &l1, &s1);
  say("f many_transposed %s h%ld b%ld,%ld: %ld | %ld %ld %ld %ld\n", dims, TD(howmany), TD(b0), TD(b1), TD(a), TD(l0), TD(s0), TD(l1), TD(s1));
  a = fftw_mpi_local_size_many(rnk, n, howmany, b0, MPI_COMM_WORLD, &l0, &s0);
  say("many %s h%ld b%ld: %ld | %ld %ld\n", dims, TD(howmany), TD(b0), TD(a), TD(l0), TD(s0));
  if (howmany == 1 && b0 == 0 && b1 == 0) {
    a = fftw_mpi_local_size_transposed(rnk, n, MPI_COMM_WORLD, &l0, &s0, &l1, &s1);
    say("transposed %s: %ld | %ld %ld %ld %ld\n", dims, TD(a), TD(l0), TD(s0), TD(l1), TD(s1));
    a = fftwf_mpi_local_size(rnk, n, MPI_COMM_WORLD, &l0, &s0);
    say("f plain %s: %ld | %ld %ld\n", dims, TD(a), TD(l0), TD(s0));
    if (rnk == 2) {
      a = fftw_mpi_local_size_2d(n[0], n[1], MPI_COMM_WORLD, &l0, &s0);
      say("2d %s: %ld | %ld %ld\n", dims, TD(a), TD(l0), TD(s0));
      a = fftwf_mpi_local_size_2d_transposed(n[0], n[1], MPI_COMM_WORLD, &l0, &s0, &l1, &s1);
      say("f 2d_transposed %s: %ld | %ld %ld %ld %ld\n", dims, TD(a), TD(l0), TD(s0), TD(l1), TD(s1));
    }
    if (rnk == 3) {
      a = fftwf_mpi_local_size_3d(n[0], n[1], n[2], MPI_COMM_WORLD, &l0, &s0);
      say("f 3d %s: %ld | %ld %ld\n", dims, TD(a), TD(l0), TD(s0));
      a = fftw_mpi_local_size_3d_transposed(n[0], n[1], n[2], MPI_COMM_WORLD, &l0, &s0, &l1, &s1);
      say("3d_transposed %s: %ld | %ld %ld %ld %ld\n", dims, TD(a), TD(l0), TD(s0), TD(l1), TD(s1));
    }
  }
}

static void one_d(ptrdiff_t n, ptrdiff_t howmany, int sign, unsigned flags) {
  ptrdiff_t a, li = -7, si = -7, lo = -7, so = -7;
  a = fftw_mpi_local_size_many_1d(n, howmany, MPI_COMM_WORLD, sign, flags, &li, &si, &lo, &so);
  say("many_1d %ld h%ld s%d f%u: %ld | %ld %ld %ld %ld\n", TD(n), TD(howmany), sign, flags >> 27, TD(a), TD(li), TD(si), TD(lo), TD(so));
  if (howmany == 1) {
    a = fftwf_mpi_local_size_1d(n, MPI_COMM_WORLD, sign, flags, &li, &si, &lo, &so);
    say("f 1d %ld s%d f%u: %ld | %ld %ld %ld %ld\n", TD(n), sign, flags >> 27, TD(a), TD(li), TD(si), TD(lo), TD(so));
  }
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  fftw_mpi_init();
  fftwf_mpi_init();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  static const ptrdiff_t shapes[][4] = {
      {2, 9, 0, 0}, {10, 6, 0, 0}, {3, 6, 0, 0}, {1, 7, 0, 0}, {7, 1, 0, 0}, {5, 5, 0, 0},
      {16, 16, 0, 0}, {11, 7, 13, 0}, {8, 3, 5, 0}, {2, 2, 2, 0}, {9, 7, 5, 12}, {4, 13, 1, 3},
      {6, 4, 4, 0}, {100, 3, 0, 0}, {3, 100, 0, 0}, {12, 10, 9, 0}};
  static const ptrdiff_t howmanys[] = {1, 2, 3, 7};
  static const ptrdiff_t blocks[][2] = {{0, 0}, {1, 0}, {2, 3}, {5, 1}, {0, 4}, {3, 0}, {100, 100}, {0, 1000}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    int rnk = shapes[s][2] == 0 ? 2 : shapes[s][3] == 0 ? 3 : 4;
    for (size_t h = 0; h < sizeof howmanys / sizeof howmanys[0]; ++h)
      for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; ++b)
        multi(rnk, shapes[s], howmanys[h], blocks[b][0], blocks[b][1]);
  }
  static const ptrdiff_t sizes[] = {1, 2, 3, 4, 6, 8, 9, 12, 13, 16, 30, 36, 49, 60, 64, 97, 100, 120, 128, 210, 1000};
  static const unsigned flags[] = {0, FFTW_MPI_SCRAMBLED_IN, FFTW_MPI_SCRAMBLED_OUT,
                                   FFTW_MPI_SCRAMBLED_IN | FFTW_MPI_SCRAMBLED_OUT};
  static const ptrdiff_t howmany_1d[] = {1, 2, 3, 5, 8};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    for (size_t h = 0; h < sizeof howmany_1d / sizeof howmany_1d[0]; ++h)
      for (int sign = -1; sign <= 1; sign += 2)
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f)
          one_d(sizes[i], howmany_1d[h], sign, flags[f]);

  /* Process 0 prints everyone's lines, in rank order. */
  int mine = (int)used, *lens = NULL, *offs = NULL, total = 0;
  if (rank == 0) lens = malloc(sizeof(int) * size), offs = malloc(sizeof(int) * size);
  MPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char *all = NULL;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) offs[r] = total, total += lens[r];
    all = malloc(total + 1);
  }
  MPI_Gatherv(text, mine, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      char *line = all + offs[r], *end = line + lens[r];
      while (line < end) {
        char *nl = memchr(line, '\n', end - line);
        printf("p%d/%d %.*s\n", r, size, (int)(nl - line), line);
        line = nl + 1;
      }
    }
    int lines = 0;
    for (int i = 0; i < lens[0]; ++i) lines += all[i] == '\n';
    printf("local_sizes: %d calls on each of %d processes\n", lines, size);
  }
  fftw_mpi_cleanup();
  MPI_Finalize();
  return 0;
}
