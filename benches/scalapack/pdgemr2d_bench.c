/* ScaLAPACK pdgemr2d timing driver: the peer of `dfft redist` (scripts/bench-redist-scalapack).
 *
 *   mpirun -n P pdgemr2d_bench M N PR1 PC1 MB1 NB1 PR2 PC2 MB2 NB2 ITERS
 *
 * Redistributes an M x N double matrix from block-cyclic MB1 x NB1 on a PR1 x PC1 grid to
 * MB2 x NB2 on a PR2 x PC2 grid (both row-major BLACS grids over ranks 0.., the union context a
 * 1 x P grid), ITERS timed calls after one warm-up. Each element holds its global index
 * i + j*M, the destination is checked exactly on every rank. Prints one JSON line (rank 0):
 * min_s and median_s (max over ranks per call) and wrong (misplaced elements).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

extern void Cblacs_pinfo(int *mypnum, int *nprocs);
extern void Cblacs_get(int icontxt, int what, int *val);
extern void Cblacs_gridinit(int *icontxt, char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int icontxt);
extern void Cblacs_exit(int notdone);
extern int numroc_(int *n, int *nb, int *iproc, int *isrcproc, int *nprocs);
extern void descinit_(int *desc, int *m, int *n, int *mb, int *nb, int *irsrc, int *icsrc,
                      int *ictxt, int *lld, int *info);
extern void pdgemr2d_(int *m, int *n, double *a, int *ia, int *ja, int *desca, double *b,
                      int *ib, int *jb, int *descb, int *ictxt);

typedef struct {
  int ctxt, pr, pc, myr, myc, mb, nb, lr, lc, desc[9];
  double *data;
} Dist;

static void make(Dist *d, int m, int n, int pr, int pc, int mb, int nb) {
  int zero = 0, info = 0;
  d->pr = pr;
  d->pc = pc;
  d->mb = mb;
  d->nb = nb;
  Cblacs_get(-1, 0, &d->ctxt);
  Cblacs_gridinit(&d->ctxt, "R", pr, pc);
  d->myr = d->myc = -1;
  d->lr = d->lc = 0;
  d->data = NULL;
  for (int i = 0; i < 9; i++) d->desc[i] = 0;
  d->desc[1] = -1; /* not in this grid */
  if (d->ctxt >= 0) {
    int nr, nc;
    Cblacs_gridinfo(d->ctxt, &nr, &nc, &d->myr, &d->myc);
    d->lr = numroc_(&m, &mb, &d->myr, &zero, &pr);
    d->lc = numroc_(&n, &nb, &d->myc, &zero, &pc);
    int lld = d->lr > 1 ? d->lr : 1;
    descinit_(d->desc, &m, &n, &mb, &nb, &zero, &zero, &d->ctxt, &lld, &info);
    d->data = malloc(sizeof(double) * ((size_t)d->lr * d->lc + 1));
  }
}

/* Global index of local (li, lj): ScaLAPACK's INDXL2G, 0-based. */
static long g_of(int l, int b, int p, int np) { return (long)(l / b) * b * np + (long)p * b + l % b; }

static void fill(Dist *d, int m, double *x, int check, long *wrong) {
  for (int lj = 0; lj < d->lc; lj++) {
    long j = g_of(lj, d->nb, d->myc, d->pc);
    for (int li = 0; li < d->lr; li++) {
      long i = g_of(li, d->mb, d->myr, d->pr);
      double v = (double)(i + j * (long)m);
      size_t k = (size_t)lj * d->lr + li;
      if (check) {
        if (x[k] != v) (*wrong)++;
      } else {
        x[k] = v;
      }
    }
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc != 12) {
    fprintf(stderr, "usage: %s M N PR1 PC1 MB1 NB1 PR2 PC2 MB2 NB2 ITERS\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int a[11];
  for (int i = 0; i < 11; i++) a[i] = atoi(argv[i + 1]);
  int m = a[0], n = a[1], iters = a[10];
  int me, np;
  Cblacs_pinfo(&me, &np);
  Dist src, dst;
  make(&src, m, n, a[2], a[3], a[4], a[5]);
  make(&dst, m, n, a[6], a[7], a[8], a[9]);
  int all;
  Cblacs_get(-1, 0, &all);
  Cblacs_gridinit(&all, "R", 1, np);
  if (src.data) fill(&src, m, src.data, 0, NULL);
  double dummy = 0;
  double *A = src.data ? src.data : &dummy, *B = dst.data ? dst.data : &dummy;
  int one = 1;
  double *times = malloc(sizeof(double) * iters);
  for (int it = -1; it < iters; it++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pdgemr2d_(&m, &n, A, &one, &one, src.desc, B, &one, &one, dst.desc, &all);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= 0) times[it] = tmax;
  }
  long wrong = 0, wrong_all = 0;
  if (dst.data) fill(&dst, m, dst.data, 1, &wrong);
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  qsort(times, iters, sizeof(double), cmp);
  if (me == 0)
    printf("{\"peer\":\"pdgemr2d\",\"ranks\":%d,\"shape\":[%d,%d],\"from\":\"%dx%d blocks %dx%d\","
           "\"to\":\"%dx%d blocks %dx%d\",\"iters\":%d,\"min_s\":%.9f,\"median_s\":%.9f,"
           "\"wrong\":%ld}\n",
           np, m, n, a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], iters, times[0],
           times[iters / 2], wrong_all);
  free(times);
  free(src.data);
  free(dst.data);
  Cblacs_exit(1);
  MPI_Finalize();
  return wrong_all ? 1 : 0;
}
