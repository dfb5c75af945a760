/* A plain ScaLAPACK program, with nothing of dfft in it: redistributes a submatrix with
 * pdgemr2d_ between two grids, checks every element it receives, and says which library its
 * pdgemr2d_ came from. Run with LD_PRELOAD=libdfft_scalapack.so, it runs on dfft unchanged.
 *
 *   mpirun -n P plain_scalapack NAME
 *
 * Prints the mpi-harness markers of NAME; exits non-zero when an element is wrong.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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
extern void pdgemr2d_(int *m, int *n, double *a, int *ia, int *ja, int *desca, double *b,
                      int *ib, int *jb, int *descb, int *ictxt);

static long g_of(int l, int nb, int p, int src, int np) {
  return (long)(l / nb) * nb * np + (long)((p - src + np) % np) * nb + l % nb;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char *name = argc > 1 ? argv[1] : "plain";
  printf("\nMPI-HARNESS REACHED %s %d/%d\n", name, me, np);
  int pnum, nprocs, all, ga, gb;
  Cblacs_pinfo(&pnum, &nprocs);
  Cblacs_get(-1, 0, &all);
  Cblacs_gridinit(&all, "R", 1, nprocs);
  /* A: 300 x 250 in 7 x 5 blocks on a (P/2) x 2 grid (or 1 x 1), first block on (last, 1). */
  int pr = np > 1 ? np / 2 : 1, pc = np > 1 ? 2 : 1;
  int M = 300, N = 250, mba = 7, nba = 5, ra = pr - 1, ca = pc - 1;
  Cblacs_get(-1, 0, &ga);
  Cblacs_gridinit(&ga, "R", pr, pc);
  /* B: 200 x 220 in 13 x 4 blocks on a 1 x P grid. */
  int MB = 200, NB = 220, mbb = 13, nbb = 4, zero = 0, one = 1;
  Cblacs_get(-1, 0, &gb);
  Cblacs_gridinit(&gb, "C", 1, np);
  int desca[9] = {1, -1}, descb[9] = {1, -1};
  double *a = NULL, *b = NULL;
  int myr, myc, lra = 0, lca = 0, lrb = 0, lcb = 0, br = -1, bc = -1, t1, t2;
  if (ga >= 0) {
    Cblacs_gridinfo(ga, &t1, &t2, &myr, &myc);
    if (myr >= 0 && myr < pr) {
      lra = numroc_(&M, &mba, &myr, &ra, &pr);
      lca = numroc_(&N, &nba, &myc, &ca, &pc);
      int lld = lra + 2;
      int d[9] = {1, ga, M, N, mba, nba, ra, ca, lld};
      for (int i = 0; i < 9; i++) desca[i] = d[i];
      a = malloc(sizeof(double) * lld * (lca + 1));
      for (int j = 0; j < lca; j++)
        for (int i = 0; i < lra; i++)
          a[i + (long)j * lld] = g_of(i, mba, myr, ra, pr) + 1000.0 * g_of(j, nba, myc, ca, pc);
    }
  }
  if (gb >= 0) {
    Cblacs_gridinfo(gb, &t1, &t2, &br, &bc);
    lrb = numroc_(&MB, &mbb, &br, &zero, &one);
    lcb = numroc_(&NB, &nbb, &bc, &zero, &np);
    int lld = lrb > 0 ? lrb : 1;
    int d[9] = {1, gb, MB, NB, mbb, nbb, 0, 0, lld};
    for (int i = 0; i < 9; i++) descb[i] = d[i];
    b = calloc((size_t)lld * (lcb + 1), sizeof(double));
    for (long k = 0; k < (long)lld * lcb; k++) b[k] = -1.0;
  }
  /* A(11:190, 21:220) -> B(5:184, 3:202) */
  int m = 180, n = 200, ia = 11, ja = 21, ib = 5, jb = 3;
  pdgemr2d_(&m, &n, a ? a : (double *)&zero, &ia, &ja, desca, b ? b : (double *)&zero, &ib,
            &jb, descb, &all);
  long wrong = 0, checked = 0;
  for (int j = 0; j < lcb; j++)
    for (int i = 0; i < lrb; i++) {
      long gi = g_of(i, mbb, br, 0, 1), gj = g_of(j, nbb, bc, 0, np);
      int inside = gi >= ib - 1 && gi < ib - 1 + m && gj >= jb - 1 && gj < jb - 1 + n;
      double want = inside ? (gi - (ib - 1) + ia - 1) + 1000.0 * (gj - (jb - 1) + ja - 1) : -1.0;
      wrong += b[i + (long)j * lrb] != want;
      checked++;
    }
  long sums[2] = {wrong, checked}, tot[2];
  MPI_Reduce(sums, tot, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  Dl_info info;
  const char *from = dladdr((void *)pdgemr2d_, &info) && info.dli_fname ? info.dli_fname : "?";
  if (me == 0) printf("pdgemr2d_ from %s: %ld of %ld elements wrong\n", from, tot[0], tot[1]);
  int ok = 1;
  MPI_Bcast(&tot[0], 1, MPI_LONG, 0, MPI_COMM_WORLD);
  ok = tot[0] == 0;
  if (ok) printf("\nMPI-HARNESS PASSED %s %d/%d\n", name, me, np);
  fflush(stdout);
  if (ga >= 0) Cblacs_gridexit(ga);
  if (gb >= 0) Cblacs_gridexit(gb);
  Cblacs_gridexit(all);
  Cblacs_exit(1);
  MPI_Finalize();
  return ok ? 0 : 1;
}
