/* One process's bad descriptor in dfft's pdgemr2d: the job must end (as ScaLAPACK's
 * parameter check ends it), with the same error found on every process and printed once.
 *
 *   mpirun -n P bad_descriptor MODE
 *
 * A (4P x 3) on a 1 x P grid goes to B on a P x 1 grid in 2 x 2 blocks, over the whole job
 * as a 1 x P union context. A first, correct call keeps its plan; then the last process
 * passes a bad B descriptor (MODE "lda": LLD_B = 1 below its 4 local rows; MODE "mb": MB_B
 * = 3 where the others pass 2), so the repeated call's allreduce finds no kept plan on every
 * process. Prints "first call done" after the correct call and "returned" if the bad call
 * returns (it must not).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void Cblacs_get(int icontxt, int what, int *val);
extern void Cblacs_gridinit(int *icontxt, char *order, int nprow, int npcol);
extern void dfft_Cpdgemr2d(int, int, double *, int, int, int *, double *, int, int, int *,
                           int);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char *mode = argc > 1 ? argv[1] : "lda";
  int actxt, bctxt, gctxt;
  Cblacs_get(0, 0, &actxt);
  Cblacs_gridinit(&actxt, "R", 1, np);
  Cblacs_get(0, 0, &bctxt);
  Cblacs_gridinit(&bctxt, "R", np, 1);
  Cblacs_get(0, 0, &gctxt);
  Cblacs_gridinit(&gctxt, "R", 1, np);
  int m = 4 * np, n = 3;
  /* A: all rows on every process, its columns in blocks of 2; B: 4 rows per process. */
  int desca[9] = {1, actxt, m, n, 2, 2, 0, 0, m};
  int descb[9] = {1, bctxt, m, n, 2, 2, 0, 0, 4};
  double *a = calloc((size_t)m * n, sizeof(double)), *b = calloc((size_t)4 * n, sizeof(double));
  dfft_Cpdgemr2d(m, n, a, 1, 1, desca, b, 1, 1, descb, gctxt);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) printf("first call done\n");
  fflush(stdout);
  if (me == np - 1) {
    if (strcmp(mode, "mb") == 0)
      descb[4] = 3;
    else
      descb[8] = 1;
  }
  dfft_Cpdgemr2d(m, n, a, 1, 1, desca, b, 1, 1, descb, gctxt);
  printf("rank %d returned\n", me);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
