/*
 * The C API's error paths under mpirun: wrong sizes, bad grids, bad flags and kinds, bad
 * communicators, NULL pointers, in-place and overlapping or misaligned buffers (on one rank
 * only: every rank must return, none may hang), unknown blocks. Each must return its code and
 * a message naming the offending value, and the process must go on: afterwards a plan must
 * still work. Prints "errors: N passed, M failed" and exits 1 on any failure.
 */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfft.h>

static int passed, failed, rank, size;

/* Checks that `code` is `want` and that its message contains `needle`. */
static void expect(const char *what, int code, int want, const char *needle) {
  const char *message = dfft_error_message(code);
  int ok = code == want && message != NULL && strstr(message, needle) != NULL;
  if (ok) {
    passed++;
  } else {
    failed++;
    fprintf(stderr, "rank %d: %s: got code %d (want %d), message \"%s\" (want \"%s\" in it)\n", rank, what, code,
            want, message ? message : "(null)", needle);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  dfft_plan *plan = (dfft_plan *)&plan; /* must be set to NULL on failure */
  const ptrdiff_t n3[3] = {8, 6, 5};
  char text[64];

  /* Sizes. */
  expect("d = 0", dfft_plan_dft(0, n3, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_BAD_ARGUMENT, "d = 0");
  expect("r2c d = 1", dfft_plan_dft_r2c(1, n3, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_BAD_ARGUMENT,
         "1-D transforms are complex");
  if (plan != NULL) {
    failed++;
    fprintf(stderr, "rank %d: a failed constructor left *plan non-NULL\n", rank);
  }
  const ptrdiff_t zero[3] = {8, 0, 5};
  expect("n[1] = 0", dfft_plan_dft(3, zero, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_BAD_ARGUMENT, "n[1] = 0");
  const ptrdiff_t negative[2] = {-4, 6};
  expect("n[0] = -4", dfft_plan_dft_r2c(2, negative, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_BAD_ARGUMENT,
         "n[0] = -4");
  expect("n NULL", dfft_plan_dft(3, NULL, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_NULL_POINTER, "n is NULL");
  expect("plan NULL", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 0, NULL, 0, NULL), DFFT_ERROR_NULL_POINTER, "plan");
  expect("howmany 0", dfftf_plan_dft(3, n3, 0, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_BAD_ARGUMENT,
         "howmany = 0");
  expect("flags", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 0, NULL, 1u << 20, &plan), DFFT_ERROR_BAD_ARGUMENT,
         "unknown bits 0x100000");
  expect("two normalizations",
         dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 0, NULL, DFFT_NORMALIZE_BACKWARD | DFFT_NORMALIZE_ORTHO, &plan),
         DFFT_ERROR_BAD_ARGUMENT, "exclude each other");
  const dfft_r2r_kind kinds[3] = {DFFT_REDFT10, 12, DFFT_RODFT00};
  expect("r2r kind", dfft_plan_r2r(3, n3, 1, kinds, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_BAD_ARGUMENT,
         "kinds[1] = 12");
  expect("r2r kinds NULL", dfftf_plan_r2r(3, n3, 1, NULL, MPI_COMM_WORLD, 0, NULL, 0, &plan),
         DFFT_ERROR_NULL_POINTER, "kinds is NULL");
  /* Memory is checked only under a limit the program sets (dfft reads no environment). */
  const ptrdiff_t huge[3] = {1 << 16, 1 << 16, 1 << 14};
  expect("memory limit", dfft_set_memory_limit((uint64_t)1 << 30), DFFT_SUCCESS, "success");
  expect("too large", dfft_plan_dft(3, huge, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_MEMORY,
         "limit 1.00 GiB per rank");
  const ptrdiff_t big[3] = {512, 512, 512 * size}; /* 2 GiB per rank of input alone */
  expect("over the limit", dfft_plan_dft_r2c(3, big, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan), DFFT_ERROR_MEMORY,
         "not enough memory");
  expect("no limit", dfft_set_memory_limit(0), DFFT_SUCCESS, "success");
  expect("negative groups", dfft_plan_with_groups(-1), DFFT_ERROR_BAD_ARGUMENT, "groups = -1");
  expect("groups set", dfft_plan_with_groups(size + 1), DFFT_SUCCESS, "success");
  expect("groups not dividing", dfft_plan_dft(3, n3, size + 1, MPI_COMM_WORLD, 0, NULL, 0, &plan),
         DFFT_ERROR_BAD_ARGUMENT, "equal groups");
  expect("groups reset", dfft_plan_with_groups(1), DFFT_SUCCESS, "success");

  /* Grids. */
  expect("grid rank 3 of 3-D", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 3, NULL, 0, &plan), DFFT_ERROR_BAD_GRID, "3");
  expect("grid rank -1", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, -1, NULL, 0, &plan), DFFT_ERROR_BAD_GRID,
         "grid_rank = -1");
  int too_many[1] = {size + 1};
  snprintf(text, sizeof text, "%d", size);
  expect("grid product", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 1, too_many, 0, &plan), DFFT_ERROR_BAD_GRID, text);
  int zero_dim[2] = {size, 0};
  expect("grid dim 0", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 2, zero_dim, 0, &plan), DFFT_ERROR_BAD_GRID,
         "grid_dims[1] = 0");
  int three[3] = {size, 1, 1};
  expect("explicit rank 3", dfft_plan_dft(3, n3, 1, MPI_COMM_WORLD, 3, three, 0, &plan), DFFT_ERROR_BAD_GRID,
         "grid_rank = 3");

  /* Arguments wrong or different on one rank only: every rank returns (none waits in the
   * collective set-up), the others with DFFT_ERROR_OTHER_RANK naming that rank; kinds that
   * differ would otherwise make plans of different transforms. */
  if (size > 1) {
    int last = rank == size - 1;
    snprintf(text, sizeof text, "rank %d", size - 1);
    const ptrdiff_t one_zero[3] = {8, last ? 0 : 6, 5};
    int code1 = dfft_plan_dft(3, one_zero, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan);
    if (last)
      expect("n[1] = 0 on this rank only", code1, DFFT_ERROR_BAD_ARGUMENT, "n[1] = 0");
    else
      expect("n[1] = 0 on another rank", code1, DFFT_ERROR_OTHER_RANK, text);
    const dfft_r2r_kind mine[3] = {DFFT_REDFT10, last ? DFFT_RODFT10 : DFFT_REDFT10, DFFT_REDFT10};
    int code2 = dfft_plan_r2r(3, n3, 1, mine, MPI_COMM_WORLD, 0, NULL, 0, &plan);
    if (last)
      expect("r2r kinds differ here", code2, DFFT_ERROR_BAD_ARGUMENT, "differ from rank 0's");
    else
      expect("r2r kinds differ on another rank", code2, DFFT_ERROR_OTHER_RANK, text);
    if (plan != NULL) {
      failed++;
      fprintf(stderr, "rank %d: a refused constructor left *plan non-NULL\n", rank);
    }
  }

  /* Communicators. */
  expect("MPI_COMM_NULL", dfft_plan_dft(3, n3, 1, MPI_COMM_NULL, 0, NULL, 0, &plan), DFFT_ERROR_MPI,
         "MPI_COMM_NULL");
  expect("zero communicator", dfft_plan_dft(3, n3, 1, (MPI_Comm)0, 0, NULL, 0, &plan), DFFT_ERROR_MPI,
         "not a communicator");

  /* A good plan on a split communicator (the caller keeps and frees its communicator). */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int code = dfft_plan_dft(3, n3, 1, half, 0, NULL, DFFT_NORMALIZE_BACKWARD, &plan);
  expect("plan on a split communicator", code, DFFT_SUCCESS, "success");
  if (code != DFFT_SUCCESS) {
    fprintf(stderr, "rank %d: cannot go on without a plan\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ptrdiff_t in_count, out_count;
  dfft_local_size(plan, &in_count, &out_count);
  double complex *in = malloc((in_count + out_count + 2) * sizeof *in);
  double complex *out = malloc((out_count + 1) * sizeof *out);
  for (ptrdiff_t i = 0; i < in_count; i++) in[i] = i + 1;

  /* Buffers: the same verdict on every rank of the plan, never a hang. */
  /* (Every rank owns part of 8 x 6 x 5 on up to 4 ranks, so every rank's check fails.) */
  expect("in place", dfft_forward(plan, in, in), DFFT_ERROR_IN_PLACE, "DFFT_IN_PLACE");
  expect("overlap", dfft_forward(plan, in, in + 1), DFFT_ERROR_BAD_BUFFER, "overlap");
  expect("NULL plan", dfft_forward(NULL, in, out), DFFT_ERROR_NULL_POINTER, "plan is NULL");
  /* Rank 0 of the group passes a misaligned output; the others good buffers. */
  int group_rank;
  MPI_Comm_rank(half, &group_rank);
  code = dfft_forward(plan, in, group_rank == 0 ? (void *)((char *)out + 1) : (void *)out);
  if (group_rank == 0)
    expect("misaligned", code, DFFT_ERROR_BAD_BUFFER, "not aligned");
  else
    expect("other rank's misaligned buffer", code, DFFT_ERROR_OTHER_RANK, "rank 0: output");
  code = dfft_backward(plan, group_rank == 0 ? NULL : (void *)out, in);
  if (group_rank == 0)
    expect("NULL buffer", code, DFFT_ERROR_NULL_POINTER, "input");
  else
    expect("other rank's NULL buffer", code, DFFT_ERROR_OTHER_RANK, "another rank");

  /* Blocks. */
  int local;
  expect("free unknown", dfft_free(&local), DFFT_ERROR_UNKNOWN_BLOCK, "dfft_free");
  void *block;
  expect("alloc", dfft_alloc_output(plan, &block), DFFT_SUCCESS, "success");
  expect("free", dfft_free(block), DFFT_SUCCESS, "success");
  expect("free twice", dfft_free(block), DFFT_ERROR_UNKNOWN_BLOCK, "freed already");
  expect("free NULL", dfft_free(NULL), DFFT_SUCCESS, "success");
  expect("alloc NULL", dfft_alloc_input(plan, NULL), DFFT_ERROR_NULL_POINTER, "block");

  /* Messages of codes that did not fail on this thread, and of unknown codes. */
  expect("description", DFFT_ERROR_INTERNAL, DFFT_ERROR_INTERNAL, "internal error");
  expect("unknown code", 999, 999, "unknown error code");

  /* After all that the plan still works: the forward and backward round trip. */
  expect("forward", dfft_forward(plan, in, out), DFFT_SUCCESS, "success");
  double complex *back = malloc((in_count + 1) * sizeof *back);
  expect("backward", dfft_backward(plan, out, back), DFFT_SUCCESS, "success");
  double error = 0;
  for (ptrdiff_t i = 0; i < in_count; i++) error = fmax(error, cabs(back[i] - (double)(i + 1)));
  if (error > 1e-10) {
    failed++;
    fprintf(stderr, "rank %d: round trip after the errors is off by %g\n", rank, error);
  } else {
    passed++;
  }
  void *late;
  expect("alloc before destroy", dfft_alloc_input(plan, &late), DFFT_SUCCESS, "success");
  expect("destroy", dfft_destroy(plan), DFFT_SUCCESS, "success");
  expect("free after destroy", dfft_free(late), DFFT_SUCCESS, "success");
  expect("destroy NULL", dfft_destroy(NULL), DFFT_SUCCESS, "success");

  /* In place: an r2c plan made with DFFT_IN_PLACE reports its padded buffer (FFTW's rows of
   * 2*(n/2+1) scalars); on a c2c plan made with it, a rank that passes input == output while
   * the others pass two buffers makes every rank fail alike (nothing transformed, no hang),
   * and partial overlap is still an error. */
  dfft_plan *r2c = NULL;
  expect("r2c in place", dfft_plan_dft_r2c(3, n3, 1, half, 0, NULL, DFFT_IN_PLACE, &r2c), DFFT_SUCCESS, "success");
  if (r2c) {
    ptrdiff_t r2c_in, r2c_out, r2c_one = -1, r2c_n[3];
    dfft_local_size(r2c, &r2c_in, &r2c_out);
    dfft_local_input(r2c, r2c_n, NULL, NULL);
    expect("r2c in-place count", dfft_local_in_place(r2c, &r2c_one), DFFT_SUCCESS, "success");
    ptrdiff_t rows = r2c_n[0] * r2c_n[1], padded = 2 * (n3[2] / 2 + 1);
    ptrdiff_t want = rows * padded > 2 * r2c_out ? rows * padded : 2 * r2c_out;
    if (r2c_one != want) {
      fprintf(stderr, "r2c in-place count %td, want %td\n", r2c_one, want);
      failed++;
    } else {
      passed++;
    }
    expect("destroy r2c in place", dfft_destroy(r2c), DFFT_SUCCESS, "success");
  }
  code = dfft_plan_dft(3, n3, 1, half, 0, NULL, DFFT_IN_PLACE, &plan);
  expect("in-place plan", code, DFFT_SUCCESS, "success");
  if (code == DFFT_SUCCESS) {
    int group_size;
    MPI_Comm_size(half, &group_size);
    if (group_size > 1) {
      code = dfft_forward(plan, in, group_rank == 0 ? (void *)in : (void *)out);
      expect("in place on one rank only", code, DFFT_ERROR_BAD_BUFFER, "every rank must call alike");
    }
    expect("in-place overlap", dfft_forward(plan, in, in + 1), DFFT_ERROR_BAD_BUFFER, "overlap");
    expect("in place", dfft_forward(plan, in, in), DFFT_SUCCESS, "success");
    expect("destroy in-place plan", dfft_destroy(plan), DFFT_SUCCESS, "success");
  }
  MPI_Comm_free(&half);
  free(back);
  free(out);
  free(in);

  int counts[2] = {passed, failed}, totals[2];
  MPI_Allreduce(counts, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("errors: %d passed, %d failed (checks over %d ranks)\n", totals[0], totals[1], size);
  MPI_Finalize();
  return totals[1] ? 1 : 0;
}
