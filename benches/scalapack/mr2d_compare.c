/* ScaLAPACK's pdgemr2d against dfft's drop-in (libdfft_scalapack), in one run: the benchmark
 * of scripts/bench-redist-scalapack.
 *
 *   mpirun -n P mr2d_compare ITERS CASEFILE [BUDGET_S]
 *
 * CASEFILE has one case per line: NAME M N PR1 PC1 MB1 NB1 PR2 PC2 MB2 NB2 (an M x N double
 * matrix from MB1 x NB1 blocks on a PR1 x PC1 grid to MB2 x NB2 blocks on PR2 x PC2, both
 * row-major BLACS grids on ranks 0.., column-major local arrays, the union context 1 x P).
 * Per case the two routines alternate after one untimed call of each (dfft's first call plans;
 * its time is reported apart): at least ITERS timed pairs, and more until the pairs have taken
 * BUDGET_S seconds together (default 0; at most 100000 pairs). A call's time is the slowest
 * rank's. Reported per case: each routine's minimum, their ratio, and the median over the
 * pairs of the ratio within a pair (calls made moments apart, so a load change between
 * pairs cancels).
 * Both results are checked: every element of B against its global index, and dfft's B equal
 * to ScaLAPACK's bit for bit. Prints one JSON line per case (rank 0).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void Cblacs_pinfo(int *mypnum, int *nprocs);
extern void Cblacs_get(int icontxt, int what, int *val);
extern void Cblacs_gridinit(int *icontxt, char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int icontxt);
extern void Cblacs_exit(int notdone);
extern int numroc_(int *n, int *nb, int *iproc, int *isrcproc, int *nprocs);
extern void Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca, double *b, int ib,
                      int jb, int *descb, int gcontext);
extern void dfft_Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca, double *b,
                           int ib, int jb, int *descb, int gcontext);

typedef struct {
  int ctxt, pr, pc, myr, myc, mb, nb, lr, lc, desc[9];
  double *data;
} Dist;

static void make(Dist *d, int m, int n, int pr, int pc, int mb, int nb) {
  int zero = 0;
  d->pr = pr;
  d->pc = pc;
  d->mb = mb;
  d->nb = nb;
  Cblacs_get(-1, 0, &d->ctxt);
  Cblacs_gridinit(&d->ctxt, "R", pr, pc);
  d->myr = d->myc = -1;
  d->lr = d->lc = 0;
  memset(d->desc, 0, sizeof d->desc);
  d->desc[1] = -1;
  d->data = malloc(sizeof(double));
  if (d->ctxt >= 0) {
    int nr, nc;
    Cblacs_gridinfo(d->ctxt, &nr, &nc, &d->myr, &d->myc);
    d->lr = numroc_(&m, &mb, &d->myr, &zero, &pr);
    d->lc = numroc_(&n, &nb, &d->myc, &zero, &pc);
    int lld = d->lr > 1 ? d->lr : 1;
    int desc[9] = {1, d->ctxt, m, n, mb, nb, 0, 0, lld};
    memcpy(d->desc, desc, sizeof desc);
    free(d->data);
    d->data = malloc(sizeof(double) * ((size_t)lld * d->lc + 1));
  }
}

static void unmake(Dist *d) {
  free(d->data);
  if (d->ctxt >= 0) Cblacs_gridexit(d->ctxt);
}

static long g_of(int l, int b, int p, int np) { return (long)(l / b) * b * np + (long)p * b + l % b; }

/* Fills (check = 0) or checks (check = 1, returns misplaced elements) the index values. */
static long index_values(Dist *d, int m, int check) {
  long wrong = 0;
  int lld = d->desc[8];
  for (int lj = 0; lj < d->lc; lj++)
    for (int li = 0; li < d->lr; li++) {
      double v = (double)(g_of(li, d->mb, d->myr, d->pr) + g_of(lj, d->nb, d->myc, d->pc) * m);
      double *x = &d->data[li + (size_t)lj * lld];
      if (check)
        wrong += *x != v;
      else
        *x = v;
    }
  return wrong;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

typedef void (*mr2d_t)(int, int, double *, int, int, int *, double *, int, int, int *, int);

static double timed(mr2d_t f, int m, int n, Dist *a, Dist *b, int all) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  f(m, n, a->data, 1, 1, a->desc, b->data, 1, 1, b->desc, all);
  double t = MPI_Wtime() - t0, slowest;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np, pnum, nprocs, all;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 3) {
    if (me == 0) fprintf(stderr, "usage: mr2d_compare ITERS CASEFILE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int iters = atoi(argv[1]);
  double budget = argc > 3 ? atof(argv[3]) : 0.0;
  enum { MAX_PAIRS = 100000 };
  double *pair_ratio = malloc(sizeof(double) * MAX_PAIRS);
  FILE *cases = fopen(argv[2], "r");
  if (!cases) {
    fprintf(stderr, "mr2d_compare: cannot open %s\n", argv[2]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Cblacs_pinfo(&pnum, &nprocs);
  Cblacs_get(-1, 0, &all);
  Cblacs_gridinit(&all, "R", 1, nprocs);
  char name[128];
  int m, n, pr1, pc1, mb1, nb1, pr2, pc2, mb2, nb2, failed = 0;
  while (fscanf(cases, "%127s %d %d %d %d %d %d %d %d %d %d", name, &m, &n, &pr1, &pc1, &mb1,
                &nb1, &pr2, &pc2, &mb2, &nb2) == 11) {
    if (pr1 * pc1 > np || pr2 * pc2 > np) {
      if (me == 0) fprintf(stderr, "%s: a grid needs more than %d ranks; skipped\n", name, np);
      continue;
    }
    Dist a, b, c;
    make(&a, m, n, pr1, pc1, mb1, nb1);
    make(&b, m, n, pr2, pc2, mb2, nb2);
    make(&c, m, n, pr2, pc2, mb2, nb2);
    index_values(&a, m, 0);
    timed(Cpdgemr2d, m, n, &a, &b, all);
    double first = timed(dfft_Cpdgemr2d, m, n, &a, &c, all);
    double ref_min = 1e300, ours_min = 1e300, spent = 0;
    int pairs = 0;
    /* Every rank sees the same (reduced) times, so all take the same number of pairs. */
    while (pairs < MAX_PAIRS && (pairs < iters || spent < budget)) {
      double r = timed(Cpdgemr2d, m, n, &a, &b, all);
      double o = timed(dfft_Cpdgemr2d, m, n, &a, &c, all);
      if (r < ref_min) ref_min = r;
      if (o < ours_min) ours_min = o;
      pair_ratio[pairs++] = r / o;
      spent += r + o;
    }
    qsort(pair_ratio, pairs, sizeof(double), by_value);
    double median = pairs % 2 ? pair_ratio[pairs / 2]
                              : (pair_ratio[pairs / 2 - 1] + pair_ratio[pairs / 2]) / 2;
    long local[2] = {index_values(&b, m, 1) + index_values(&c, m, 1), 0}, wrong[2];
    size_t len = (size_t)b.desc[8] * b.lc;
    for (size_t k = 0; k < len && b.lr > 0; k++)
      local[1] += memcmp(&b.data[k], &c.data[k], sizeof(double)) != 0;
    MPI_Allreduce(local, wrong, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    failed |= wrong[0] != 0 || wrong[1] != 0;
    if (me == 0)
      printf("{\"case\":\"%s\",\"ranks\":%d,\"m\":%d,\"n\":%d,\"from\":\"%dx%d b%dx%d\","
             "\"to\":\"%dx%d b%dx%d\",\"iters\":%d,\"pdgemr2d_min_s\":%.6e,\"dfft_min_s\":%.6e,"
             "\"dfft_first_s\":%.6e,\"ratio\":%.4f,\"median_pair_ratio\":%.4f,"
             "\"wrong\":%ld,\"differ\":%ld}\n",
             name, np, m, n, pr1, pc1, mb1, nb1, pr2, pc2, mb2, nb2, pairs, ref_min, ours_min,
             first, ref_min / ours_min, median, wrong[0], wrong[1]);
    fflush(stdout);
    unmake(&a);
    unmake(&b);
    unmake(&c);
  }
  fclose(cases);
  free(pair_ratio);
  Cblacs_gridexit(all);
  Cblacs_exit(1);
  MPI_Finalize();
  return failed;
}
