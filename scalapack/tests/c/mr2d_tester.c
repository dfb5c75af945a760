/* dfft's p?gemr2d / p?trmr2d against ScaLAPACK's own, bit for bit, on random problems drawn
 * like ScaLAPACK's REDIST tester draws them.
 *
 *   mpirun -n P mr2d_tester NAME SEED CASES
 *
 * Each case draws (the same on every rank): an element type (s, d, c, z, i), the grids of A
 * and B (1-8 processes each, any shape, on random processes of the job: disjoint or
 * overlapping sets, in random order), global sizes, block sizes 1-40, first processes
 * RSRC/CSRC, leading dimensions up to 3 above the local rows, the submatrix M x N (sometimes
 * empty) and its starts IA, JA, IB, JB, the union context (the whole job as 1 x P, P x 1 or a
 * 2-D grid, or just the processes of A and B), and the routine (gemr2d or trmr2d with random
 * UPLO/DIAG, C or Fortran entry point). A is filled with distinct values; B, padding included,
 * with other values; ScaLAPACK's routine runs on one copy of B and dfft's on another, and the
 * two are compared element by element (memcmp) on every rank. dfft's routine then runs three
 * more times, each compared the same way, to check its kept plans: the same call again (the
 * plan of the last call), a variant whose B has a leading dimension one larger on one random
 * process (compared with ScaLAPACK's run of the variant: on that process the record differs
 * from the kept plan's and on the others it matches), and the first call once more (a kept
 * plan that is not the last).
 *
 * Prints the mpi-harness markers of NAME, one line per differing case, and a summary; exits
 * non-zero when any element differs or the routines do not come from the libraries they
 * should (ScaLAPACK's from libscalapack, dfft's from libdfft_scalapack).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void Cblacs_pinfo(int *mypnum, int *nprocs);
extern void Cblacs_get(int icontxt, int what, int *val);
extern void Cblacs_gridmap(int *icontxt, int *usermap, int ldumap, int nprow, int npcol);
extern void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int icontxt);
extern void Cblacs_exit(int notdone);
extern int numroc_(int *n, int *nb, int *iproc, int *isrcproc, int *nprocs);

typedef void (*cge_t)(int, int, void *, int, int, int *, void *, int, int, int *, int);
typedef void (*fge_t)(int *, int *, void *, int *, int *, int *, void *, int *, int *, int *,
                      int *);
typedef void (*ctr_t)(char *, char *, int, int, void *, int, int, int *, void *, int, int,
                      int *, int);
typedef void (*ftr_t)(char *, char *, int *, int *, void *, int *, int *, int *, void *, int *,
                      int *, int *, int *);

#define DECLARE(x)                                                                              \
  extern void Cp##x##gemr2d(int, int, void *, int, int, int *, void *, int, int, int *, int);  \
  extern void Cp##x##trmr2d(char *, char *, int, int, void *, int, int, int *, void *, int,     \
                            int, int *, int);                                                  \
  extern void dfft_Cp##x##gemr2d(int, int, void *, int, int, int *, void *, int, int, int *,   \
                                 int);                                                         \
  extern void dfft_p##x##gemr2d_(int *, int *, void *, int *, int *, int *, void *, int *,     \
                                 int *, int *, int *);                                         \
  extern void dfft_Cp##x##trmr2d(char *, char *, int, int, void *, int, int, int *, void *,    \
                                 int, int, int *, int);                                        \
  extern void dfft_p##x##trmr2d_(char *, char *, int *, int *, void *, int *, int *, int *,    \
                                 void *, int *, int *, int *, int *);
DECLARE(s)
DECLARE(d)
DECLARE(c)
DECLARE(z)
DECLARE(i)

typedef struct {
  char name;
  size_t size;
  cge_t real_ge;
  ctr_t real_tr;
  cge_t ours_cge;
  fge_t ours_fge;
  ctr_t ours_ctr;
  ftr_t ours_ftr;
} Type;

#define TYPE(x, t)                                                                              \
  {#x[0], sizeof(t), Cp##x##gemr2d, Cp##x##trmr2d, dfft_Cp##x##gemr2d, dfft_p##x##gemr2d_,      \
   dfft_Cp##x##trmr2d, dfft_p##x##trmr2d_}
static Type types[5] = {TYPE(s, float), TYPE(d, double), TYPE(c, float[2]), TYPE(z, double[2]),
                        TYPE(i, int)};

static uint64_t state;
static int draw(int lo, int hi) { /* uniform in [lo, hi] */
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return lo + (int)(state % (uint64_t)(hi - lo + 1));
}

static void shuffle(int *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = draw(0, i), t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

/* A grid of `count` processes `procs` (a random shape) over the system context; sets *ctxt
 * (−1 where this process is not in it) and the shape. Collective over all processes. */
static void grid(int count, const int *procs, int *ctxt, int *nprow, int *npcol) {
  int divisors[8], nd = 0;
  for (int r = 1; r <= count; r++)
    if (count % r == 0) divisors[nd++] = r;
  *nprow = divisors[draw(0, nd - 1)];
  *npcol = count / *nprow;
  int map[8];
  for (int i = 0; i < *nprow; i++)
    for (int j = 0; j < *npcol; j++) map[i + j * *nprow] = procs[i * *npcol + j];
  Cblacs_get(-1, 0, ctxt);
  Cblacs_gridmap(ctxt, map, *nprow, *nprow, *npcol);
}

typedef struct {
  int ctxt, nprow, npcol, myr, myc, lr, lc, desc[9];
  size_t len; /* elements of the local array, LLD x LOCc */
} Mat;

static void describe(Mat *x, int m, int n, int mb, int nb, int rsrc, int csrc, int pad) {
  x->myr = x->myc = -1;
  x->lr = x->lc = 0;
  x->len = 0;
  memset(x->desc, 0, sizeof x->desc);
  x->desc[1] = -1;
  if (x->ctxt < 0) return;
  int pr, pc;
  Cblacs_gridinfo(x->ctxt, &pr, &pc, &x->myr, &x->myc);
  x->lr = numroc_(&m, &mb, &x->myr, &rsrc, &pr);
  x->lc = numroc_(&n, &nb, &x->myc, &csrc, &pc);
  int lld = (x->lr > 1 ? x->lr : 1) + pad;
  int d[9] = {1, x->ctxt, m, n, mb, nb, rsrc, csrc, lld};
  memcpy(x->desc, d, sizeof d);
  x->len = (size_t)lld * (x->lc > 0 ? x->lc : 1);
}

/* Global index of local index l (0-based) on process p: ScaLAPACK's INDXL2G. */
static long g_of(int l, int nb, int p, int src, int np) {
  return (long)(l / nb) * nb * np + (long)((p - src + np) % np) * nb + l % nb;
}

static void put(char type, void *base, size_t k, double v) {
  switch (type) {
  case 's': ((float *)base)[k] = (float)v; break;
  case 'd': ((double *)base)[k] = v; break;
  case 'c': ((float *)base)[2 * k] = (float)v; ((float *)base)[2 * k + 1] = (float)(-v - 0.5); break;
  case 'z': ((double *)base)[2 * k] = v; ((double *)base)[2 * k + 1] = -v - 0.5; break;
  default: ((int *)base)[k] = (int)v;
  }
}

/* A: each element holds 1 + its global index; B: −(1 + its local offset), padding too. */
static void fill(Mat *x, char type, void *data, int is_a, int nb_r, int nb_c) {
  int lld = x->desc[8];
  for (int lc = 0; lc < (x->lc > 0 ? x->lc : 1); lc++)
    for (int lr = 0; lr < lld; lr++) {
      size_t k = (size_t)lc * lld + lr;
      if (k >= x->len) continue;
      double v = -(double)(k + 1);
      if (is_a && lr < x->lr && lc < x->lc) {
        long gi = g_of(lr, nb_r, x->myr, x->desc[6], x->nprow);
        long gj = g_of(lc, nb_c, x->myc, x->desc[7], x->npcol);
        v = 1.0 + (double)(gi + gj * (long)x->desc[2]);
      }
      put(type, data, k, v);
    }
}

/* One call of the case's routine: ScaLAPACK's (real) or dfft's (C or Fortran entry point). */
static void call(Type *t, int real, int routine, int fortran, char *uplo, char *diag, int m,
                 int n, void *a, int ia, int ja, int *da, void *b, int ib, int jb, int *db,
                 int g) {
  if (real && routine < 2)
    t->real_ge(m, n, a, ia, ja, da, b, ib, jb, db, g);
  else if (real)
    t->real_tr(uplo, diag, m, n, a, ia, ja, da, b, ib, jb, db, g);
  else if (routine < 2 && fortran)
    t->ours_fge(&m, &n, a, &ia, &ja, da, b, &ib, &jb, db, &g);
  else if (routine < 2)
    t->ours_cge(m, n, a, ia, ja, da, b, ib, jb, db, g);
  else if (fortran)
    t->ours_ftr(uplo, diag, &m, &n, a, &ia, &ja, da, b, &ib, &jb, db, &g);
  else
    t->ours_ctr(uplo, diag, m, n, a, ia, ja, da, b, ib, jb, db, g);
}

/* Elements of `x` (len elements of es bytes) that differ from `ref`. */
static long differing(const char *x, const char *ref, size_t len, size_t es) {
  long d = 0;
  for (size_t k = 0; k < len; k++) d += memcmp(x + k * es, ref + k * es, es) != 0;
  return d;
}

static int from_library(void *f, const char *part) {
  Dl_info info;
  return dladdr(f, &info) && info.dli_fname && strstr(info.dli_fname, part);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 4) {
    if (me == 0) fprintf(stderr, "usage: mr2d_tester NAME SEED CASES\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *name = argv[1];
  long seed = atol(argv[2]);
  int cases = atoi(argv[3]);
  printf("\nMPI-HARNESS REACHED %s %d/%d\n", name, me, np);
  fflush(stdout);
  int wrong_origin = !from_library((void *)Cpdgemr2d, "scalapack") ||
                     from_library((void *)Cpdgemr2d, "dfft") ||
                     !from_library((void *)dfft_Cpdgemr2d, "dfft_scalapack");
  if (wrong_origin) {
    fprintf(stderr, "rank %d: Cpdgemr2d must come from libscalapack and dfft_Cpdgemr2d from "
                    "libdfft_scalapack (check the link order)\n", me);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  int dummy, nprocs;
  Cblacs_pinfo(&dummy, &nprocs);
  long total_diff = 0, elements = 0, changed = 0;
  int bad_cases = 0, kinds[4] = {0, 0, 0, 0};
  for (int cs = 0; cs < cases; cs++) {
    state = 0x9E3779B97F4A7C15ull ^ (uint64_t)(seed * 1000003 + cs);
    for (int w = 0; w < 4; w++) draw(0, 1);
    Type *t = &types[draw(0, 4)];
    int procs[8], pa[8], pb[8];
    for (int i = 0; i < np; i++) procs[i] = i;
    shuffle(procs, np);
    int na = draw(1, np);
    memcpy(pa, procs, sizeof(int) * na);
    int nb_;
    int disjoint = na < np && draw(0, 3) == 0;
    if (disjoint) { /* B on processes outside A */
      nb_ = draw(1, np - na);
      memcpy(pb, procs + na, sizeof(int) * nb_);
    } else {
      shuffle(procs, np);
      nb_ = draw(1, np);
      memcpy(pb, procs, sizeof(int) * nb_);
    }
    kinds[disjoint]++;
    Mat A, B;
    grid(na, pa, &A.ctxt, &A.nprow, &A.npcol);
    grid(nb_, pb, &B.ctxt, &B.nprow, &B.npcol);
    /* The union context: all processes (1 x P, P x 1 or 2-D), or those of A and B only. */
    int gkind = draw(0, 3), gctxt, gr, gc, members[8], nm = 0;
    if (gkind == 3) {
      int in[8] = {0};
      for (int i = 0; i < na; i++) in[pa[i]] = 1;
      for (int i = 0; i < nb_; i++) in[pb[i]] = 1;
      for (int i = 0; i < np; i++)
        if (in[i]) members[nm++] = i;
    } else {
      for (int i = 0; i < np; i++) members[nm++] = i;
    }
    shuffle(members, nm);
    kinds[2 + (gkind == 3)]++;
    grid(nm, members, &gctxt, &gr, &gc);
    /* Sizes, drawn like the REDIST tester's: the submatrix, then matrices around it. */
    int m = draw(0, 9) == 0 ? 0 : draw(1, 70), n = draw(0, 9) == 0 ? 0 : draw(1, 70);
    int ma = m + draw(0, 25), nna = n + draw(0, 25), mbm = m + draw(0, 25), nbm = n + draw(0, 25);
    if (ma == 0) ma = 1;
    if (nna == 0) nna = 1;
    if (mbm == 0) mbm = 1;
    if (nbm == 0) nbm = 1;
    int ia = draw(1, ma - m + 1), ja = draw(1, nna - n + 1);
    int ib = draw(1, mbm - m + 1), jb = draw(1, nbm - n + 1);
    int mba = draw(1, 40), nba = draw(1, 40), mbb = draw(1, 40), nbb = draw(1, 40);
    int ra = draw(0, A.nprow - 1), ca = draw(0, A.npcol - 1);
    int rb = draw(0, B.nprow - 1), cb = draw(0, B.npcol - 1);
    int pada = draw(0, 3), padb = draw(0, 3), wider = draw(0, np - 1);
    describe(&A, ma, nna, mba, nba, ra, ca, pada);
    describe(&B, mbm, nbm, mbb, nbb, rb, cb, padb);
    Mat V = B; /* the variant: B with a leading dimension one larger on process `wider` */
    describe(&V, mbm, nbm, mbb, nbb, rb, cb, padb + (me == wider));
    int routine = draw(0, 2); /* 0, 1: gemr2d; 2: trmr2d */
    int fortran = draw(0, 1);
    char uplo[2] = {"UuLl"[draw(0, 3)], 0}, diag[2] = {"UuNn"[draw(0, 3)], 0};
    size_t es = t->size;
    char *a = calloc(A.len + 1, es), *b0 = calloc(B.len + 1, es);
    char *b[4], *v0 = calloc(V.len + 1, es), *v[2];
    for (int k = 0; k < 4; k++) b[k] = calloc(B.len + 1, es);
    for (int k = 0; k < 2; k++) v[k] = calloc(V.len + 1, es);
    fill(&A, t->name, a, 1, mba, nba);
    fill(&B, t->name, b0, 0, mbb, nbb);
    fill(&V, t->name, v0, 0, mbb, nbb);
    for (int k = 0; k < 4; k++) memcpy(b[k], b0, B.len * es);
    for (int k = 0; k < 2; k++) memcpy(v[k], v0, V.len * es);
    if (gctxt >= 0) {
      /* ScaLAPACK, dfft, dfft again, the variant (ScaLAPACK, dfft), dfft's first call again. */
      call(t, 1, routine, fortran, uplo, diag, m, n, a, ia, ja, A.desc, b[0], ib, jb, B.desc, gctxt);
      call(t, 0, routine, fortran, uplo, diag, m, n, a, ia, ja, A.desc, b[1], ib, jb, B.desc, gctxt);
      call(t, 0, routine, fortran, uplo, diag, m, n, a, ia, ja, A.desc, b[2], ib, jb, B.desc, gctxt);
      call(t, 1, routine, fortran, uplo, diag, m, n, a, ia, ja, A.desc, v[0], ib, jb, V.desc, gctxt);
      call(t, 0, routine, fortran, uplo, diag, m, n, a, ia, ja, A.desc, v[1], ib, jb, V.desc, gctxt);
      call(t, 0, routine, fortran, uplo, diag, m, n, a, ia, ja, A.desc, b[3], ib, jb, B.desc, gctxt);
    }
    long diff = differing(v[1], v[0], V.len, es), moved = differing(b[0], b0, B.len, es);
    for (int k = 1; k < 4; k++) diff += differing(b[k], b[0], B.len, es);
    long local[3] = {diff, (long)(3 * B.len + V.len), moved}, sum[3];
    MPI_Allreduce(local, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_diff += sum[0];
    elements += sum[1];
    changed += sum[2];
    if (sum[0] != 0) {
      bad_cases++;
      if (me == 0)
        printf("case %d: %ld of %ld elements differ: %cp%c%smr2d %s%s m=%d n=%d A %dx%d in %dx%d "
               "on %dx%d from (%d,%d) at (%d,%d) B %dx%d in %dx%d on %dx%d from (%d,%d) at "
               "(%d,%d) %s union %dx%d\n",
               cs, sum[0], sum[1], fortran ? ' ' : 'C', t->name, routine < 2 ? "ge" : "tr",
               routine < 2 ? "" : uplo, routine < 2 ? "" : diag, m, n, ma, nna, mba, nba, A.nprow, A.npcol, ra, ca, ia,
               ja, mbm, nbm, mbb, nbb, B.nprow, B.npcol, rb, cb, ib, jb,
               disjoint ? "disjoint" : "overlapping", gr, gc);
    }
    free(a);
    free(b0);
    free(v0);
    for (int k = 0; k < 4; k++) free(b[k]);
    for (int k = 0; k < 2; k++) free(v[k]);
    if (A.ctxt >= 0) Cblacs_gridexit(A.ctxt);
    if (B.ctxt >= 0) Cblacs_gridexit(B.ctxt);
    if (gctxt >= 0) Cblacs_gridexit(gctxt);
  }
  if (me == 0)
    printf("%d cases on %d ranks (%d overlapping and %d disjoint process sets, %d on the whole "
           "job's context and %d on the union's): %ld of %ld elements differ (%ld elements "
           "written by ScaLAPACK)\n",
           cases, np, kinds[0], kinds[1], kinds[2], kinds[3], total_diff, elements, changed);
  int ok = total_diff == 0 && bad_cases == 0 && changed > 0;
  if (ok) printf("\nMPI-HARNESS PASSED %s %d/%d\n", name, me, np);
  fflush(stdout);
  Cblacs_exit(1);
  MPI_Finalize();
  return ok ? 0 : 1;
}
