/*
 * Every plan kind and precision of the C API against a naive serial reference: c2c, r2c/c2r
 * and r2r (FFTW's kind definitions) in double and single precision, batches (howmany),
 * transposed output, normalizations, destroyed inputs, in-place c2c, r2r and r2c (input == output
 * on a plan made with DFFT_IN_PLACE; r2c in FFTW's padded layout), explicit and model-chosen
 * grids, plan-allocated (shared-memory) blocks and caller-allocated ones, partial transforms
 * (DFFT_IDENTITY axes, dfft_plan_dft_axes, dfft_plan_dft_r2c_axes) and halo exchanges
 * (dfft_halo_*: index-valued data against the wrapped or filled global index, then in place
 * with in == out), and the distributed 1-D c2c transform in order and in FFTW-MPI's
 * scrambled orders.
 *
 * Every rank computes the whole global transform naively (O(N * sum n_i)) from the same
 * deterministic input, then checks its own output block element by element through
 * dfft_local_output's extents, offsets and strides; then the backward transform must give
 * the input back (times the product of the logical sizes when unnormalized). Prints one line
 * per case and exits 1 if any case fails. With the argument "one_d" only the 1-D cases run.
 */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfft.h>

enum kind { C2C, R2C, R2R };
enum type { F64, F32, C64, C32 };

struct test_case {
  const char *name;
  enum kind kind;
  int single;
  int d;
  ptrdiff_t n[4];
  ptrdiff_t howmany;
  int grid_rank;
  int grid_dims[3]; /* used when grid_dims[0] > 0; -1 in grid_dims[0]: {size} */
  unsigned flags;
  dfft_r2r_kind kinds[4];
  int plan_blocks; /* use dfft_alloc_input/output */
  int naxes;       /* > 0: c2c/r2c along axes[0..naxes) only (r2c: axes include d - 1) */
  int axes[4];
  int groups; /* dfft_plan_with_groups before the plan: -1 P (one rank per group), -2 0 (the
                 model's choice), G > 0 G where it divides P; 0: not called (no split) */
};

static double complex get(enum type t, const void *p, ptrdiff_t i) {
  switch (t) {
    case F64: return ((const double *)p)[i];
    case F32: return ((const float *)p)[i];
    case C64: return ((const double complex *)p)[i];
    default: return ((const float complex *)p)[i];
  }
}

static void set(enum type t, void *p, ptrdiff_t i, double complex v) {
  switch (t) {
    case F64: ((double *)p)[i] = creal(v); break;
    case F32: ((float *)p)[i] = (float)creal(v); break;
    case C64: ((double complex *)p)[i] = v; break;
    default: ((float complex *)p)[i] = (float complex)v; break;
  }
}

static size_t type_size(enum type t) {
  return t == F64 ? sizeof(double) : t == F32 ? sizeof(float) : t == C64 ? sizeof(double complex) : sizeof(float complex);
}

/* The input value at global linear index g of field f. */
static double complex input_value(ptrdiff_t g, ptrdiff_t f, int real) {
  double re = sin(0.7 * g + 1.3 * f + 0.1);
  return real ? re : re + I * cos(0.37 * g - 0.5 * f);
}

/* The kind that stands for the forward DFT in naive_1d (FFTW's r2r kinds are 0..10). */
#define DFT (-1)

/* One naive 1-D transform of x (length n) into y: the forward DFT, else FFTW's r2r kind
 * (applied to the real and imaginary parts alike). */
static void naive_1d(int kind, ptrdiff_t n, const double complex *x, double complex *y) {
  if (kind == DFFT_IDENTITY) {
    memcpy(y, x, n * sizeof *y);
    return;
  }
  for (ptrdiff_t k = 0; k < n; k++) {
    double complex s = 0;
    for (ptrdiff_t j = 0; j < n; j++) {
      double a, t = 2 * M_PI * (double)(j * k % n) / n;
      switch (kind) {
        case DFT: s += x[j] * cexp(-I * t); continue;
        /* Halfcomplex: Re X_k at slot k <= n/2, Im X_{n-k} at slot k > n/2. */
        case DFFT_R2HC: s += x[j] * (2 * k > n ? -sin(2 * M_PI * (double)(j * (n - k) % n) / n) : cos(t)); continue;
        case DFFT_DHT: s += x[j] * (cos(t) + sin(t)); continue;
        case DFFT_HC2R: {
          /* Mode j of the Hermitian spectrum x holds in halfcomplex order, times e^{+it}. */
          ptrdiff_t q = j < n - j ? j : n - j;
          double complex im = (q == 0 || 2 * q == n) ? 0 : x[n - q];
          if (q != j) im = -im;
          s += x[q] * cos(t) - im * sin(t);
          continue;
        }
        case DFFT_REDFT00:
          if (j == 0) s += x[0];
          else if (j == n - 1) s += (k % 2 ? -1.0 : 1.0) * x[j];
          else s += 2 * x[j] * cos(M_PI * j * k / (n - 1));
          continue;
        case DFFT_REDFT10: a = cos(M_PI * (j + 0.5) * k / n); break;
        case DFFT_REDFT01:
          if (j == 0) { s += x[0]; continue; }
          a = cos(M_PI * j * (k + 0.5) / n);
          break;
        case DFFT_REDFT11: a = cos(M_PI * (j + 0.5) * (k + 0.5) / n); break;
        case DFFT_RODFT00: a = sin(M_PI * (j + 1) * (k + 1) / (n + 1)); break;
        case DFFT_RODFT10: a = sin(M_PI * (j + 0.5) * (k + 1) / n); break;
        case DFFT_RODFT01:
          if (j == n - 1) { s += (k % 2 ? -1.0 : 1.0) * x[j]; continue; }
          a = sin(M_PI * (j + 1) * (k + 0.5) / n);
          break;
        default: a = sin(M_PI * (j + 0.5) * (k + 0.5) / n); break; /* RODFT11 */
      }
      s += 2 * a * x[j];
    }
    y[k] = s;
  }
}

static double logical_size(int kind, ptrdiff_t n) {
  if (kind == DFFT_IDENTITY) return 1.0;
  if (kind == DFFT_REDFT00) return 2.0 * (n - 1);
  if (kind == DFFT_RODFT00) return 2.0 * (n + 1);
  if (kind == DFT || kind == DFFT_R2HC || kind == DFFT_HC2R || kind == DFFT_DHT) return (double)n;
  return 2.0 * n;
}

/* Applies naive_1d along every axis of the C-order array a (shape n, d axes). */
static void naive_nd(double complex *a, int d, const ptrdiff_t *n, const int *kinds) {
  for (int axis = 0; axis < d; axis++) {
    ptrdiff_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= n[i];
    for (int i = axis + 1; i < d; i++) inner *= n[i];
    double complex *x = malloc(n[axis] * sizeof *x), *y = malloc(n[axis] * sizeof *y);
    for (ptrdiff_t o = 0; o < outer; o++)
      for (ptrdiff_t in = 0; in < inner; in++) {
        double complex *line = a + o * n[axis] * inner + in;
        for (ptrdiff_t j = 0; j < n[axis]; j++) x[j] = line[j * inner];
        naive_1d(kinds[axis], n[axis], x, y);
        for (ptrdiff_t j = 0; j < n[axis]; j++) line[j * inner] = y[j];
      }
    free(x);
    free(y);
  }
}

/* Calls fn(local linear offset, global linear index in shape `global`) for every element of a
 * block (local extents, offsets, strides). */
static void each_element(int d, const ptrdiff_t *local_n, const ptrdiff_t *start, const ptrdiff_t *stride,
                         const ptrdiff_t *global, void (*fn)(ptrdiff_t, ptrdiff_t, void *), void *ctx) {
  ptrdiff_t count = 1;
  for (int i = 0; i < d; i++) count *= local_n[i];
  for (ptrdiff_t e = 0; e < count; e++) {
    ptrdiff_t rest = e, offset = 0, g = 0, scale = 1;
    for (int i = d - 1; i >= 0; i--) {
      ptrdiff_t j = rest % local_n[i];
      rest /= local_n[i];
      offset += j * stride[i];
      g += (start[i] + j) * scale;
      scale *= global[i];
    }
    fn(offset, g, ctx);
  }
}

struct visit {
  enum type type;
  void *buffer;
  ptrdiff_t field_offset, field;
  const double complex *reference; /* the whole field's global array */
  int real;
  double scale, max_error, max_ref;
  const ptrdiff_t *order; /* not NULL: position g of the block's axis holds index order[g] */
};

static ptrdiff_t index_at(const struct visit *v, ptrdiff_t g) { return v->order ? v->order[g] : g; }

static void fill_input(ptrdiff_t offset, ptrdiff_t g, void *ctx) {
  struct visit *v = ctx;
  set(v->type, v->buffer, v->field_offset + offset, input_value(index_at(v, g), v->field, v->real));
}

static void compare(ptrdiff_t offset, ptrdiff_t g, void *ctx) {
  struct visit *v = ctx;
  double complex want = v->scale * v->reference[index_at(v, g)];
  double complex got = get(v->type, v->buffer, v->field_offset + offset);
  if (cabs(got - want) > v->max_error) v->max_error = cabs(got - want);
  if (cabs(want) > v->max_ref) v->max_ref = cabs(want);
}

/* FFTW-MPI's factor r of a 1-D transform of n points on p processes (mpi/choose-radix.c,
 * forward): n/p when p divides n and n/p >= p, else the smallest divisor from floor(sqrt(n))
 * on; n when that is 1 or n (no distributed algorithm: the transform on one process). The
 * points are an m x r C-order matrix (m = n/r rows). */
static ptrdiff_t fftw_radix(ptrdiff_t n, int p) {
  ptrdiff_t r;
  if (n % p == 0 && n / p >= p) {
    r = n / p;
  } else {
    for (r = 1; (r + 1) * (r + 1) <= n; r++)
      ;
    while (n % r) r++;
  }
  return r == 1 || r == n ? n : r;
}

/* FFTW-MPI's scrambled orders of a 1-D transform (n = m x r): the scrambled input is the
 * m x r matrix of the input transposed (position p holds x[(p % m) * r + p / m]); the scrambled
 * output is the spectrum as an m x r matrix whose column c holds X[c*m .. (c+1)*m) (position p
 * holds X[p / r + m * (p % r)]). NULL when `scrambled` is 0. */
static ptrdiff_t *scrambled_order(ptrdiff_t n, int size, int scrambled, int output) {
  if (!scrambled) return NULL;
  ptrdiff_t r = fftw_radix(n, size), m = n / r, *order = malloc(n * sizeof *order);
  for (ptrdiff_t p = 0; p < n; p++) order[p] = output ? p / r + m * (p % r) : (p % m) * r + p / m;
  return order;
}

static int run_case(const struct test_case *c, int rank, int size) {
  const int d = c->d;
  int grid_dims[3];
  const int *dims = NULL;
  if (c->grid_dims[0] == -1) {
    grid_dims[0] = size;
    dims = grid_dims;
  } else if (c->grid_dims[0] > 0) {
    memcpy(grid_dims, c->grid_dims, sizeof grid_dims);
    dims = grid_dims;
  }
  dfft_plan *plan;
  int code;
  if (c->groups) {
    int g = c->groups == -1 ? size : c->groups == -2 ? 0 : (size % c->groups ? 1 : c->groups);
    if (dfft_plan_with_groups(g) != DFFT_SUCCESS) return 0;
  }
  switch (c->kind) {
    case C2C:
      if (c->naxes)
        code = (c->single ? dfftf_plan_dft_axes : dfft_plan_dft_axes)(d, c->n, c->howmany, c->naxes, c->axes, MPI_COMM_WORLD, c->grid_rank, dims, c->flags, &plan);
      else
        code = (c->single ? dfftf_plan_dft : dfft_plan_dft)(d, c->n, c->howmany, MPI_COMM_WORLD, c->grid_rank, dims, c->flags, &plan);
      break;
    case R2C:
      if (c->naxes)
        code = (c->single ? dfftf_plan_dft_r2c_axes : dfft_plan_dft_r2c_axes)(d, c->n, c->howmany, c->naxes, c->axes, MPI_COMM_WORLD, c->grid_rank, dims, c->flags, &plan);
      else
        code = (c->single ? dfftf_plan_dft_r2c : dfft_plan_dft_r2c)(d, c->n, c->howmany, MPI_COMM_WORLD, c->grid_rank, dims, c->flags, &plan);
      break;
    default:
      code = (c->single ? dfftf_plan_r2r : dfft_plan_r2r)(d, c->n, c->howmany, c->kinds, MPI_COMM_WORLD, c->grid_rank, dims, c->flags, &plan);
  }
  if (c->groups) dfft_plan_with_groups(1);
  if (code != DFFT_SUCCESS) {
    fprintf(stderr, "%s: planning failed (%d): %s\n", c->name, code, dfft_error_message(code));
    return 0;
  }
  enum type in_type = c->kind == C2C ? (c->single ? C32 : C64) : (c->single ? F32 : F64);
  enum type out_type = c->kind == R2R ? in_type : (c->single ? C32 : C64);
  ptrdiff_t in_count, out_count, in_n[4], in_start[4], in_stride[4], out_n[4], out_start[4], out_stride[4];
  dfft_local_size(plan, &in_count, &out_count);
  dfft_local_input(plan, in_n, in_start, in_stride);
  dfft_local_output(plan, out_n, out_start, out_stride);
  ptrdiff_t in_field = 1, out_field = 1;
  for (int i = 0; i < d; i++) {
    in_field *= in_n[i];
    out_field *= out_n[i];
  }
  if (in_count != in_field * c->howmany || out_count != out_field * c->howmany) {
    fprintf(stderr, "%s: counts %td/%td do not match the blocks %td/%td x %td\n", c->name, in_count, out_count,
            in_field, out_field, c->howmany);
    return 0;
  }

  void *input, *output, *back;
  const int in_place = (c->flags & DFFT_IN_PLACE) != 0;
  if (in_place) {
    /* One buffer of dfft_local_in_place's count: input, output and backward output alike;
     * what the transforms must not read (r2c row padding, the tail) holds garbage. */
    ptrdiff_t count;
    dfft_local_in_place(plan, &count);
    ptrdiff_t most = in_count > out_count ? in_count : out_count;
    if (c->kind == R2C) {
      /* FFTW's padded rows: the real input's last (contiguous) axis of n takes
       * 2 * (n/2 + 1) scalars, and the spectrum (complex) starts at the buffer's start. */
      ptrdiff_t n_last = c->n[d - 1], padded = 2 * (n_last / 2 + 1);
      if (in_n[d - 1] != n_last || in_stride[d - 1] != 1) {
        fprintf(stderr, "%s: the input block's last axis is not whole and contiguous\n", c->name);
        return 0;
      }
      for (int i = 0; i < d - 1; i++) in_stride[i] = in_stride[i] / n_last * padded;
      in_field = in_field / n_last * padded;
      most = in_field * c->howmany > 2 * out_count ? in_field * c->howmany : 2 * out_count;
    }
    if (count != most) {
      fprintf(stderr, "%s: dfft_local_in_place gives %td, the blocks need %td\n", c->name, count, most);
      return 0;
    }
    input = output = back = malloc(count * type_size(in_type) + 1);
    for (ptrdiff_t i = 0; i < count; i++) set(in_type, input, i, 1e30);
  } else if (c->plan_blocks) {
    dfft_alloc_input(plan, &input);
    dfft_alloc_output(plan, &output);
    dfft_alloc_input(plan, &back);
  } else {
    input = malloc(in_count * type_size(in_type) + 1);
    output = malloc(out_count * type_size(out_type) + 1);
    back = malloc(in_count * type_size(in_type) + 1);
  }

  /* The global reference of each field: the input, and its naive transform. */
  ptrdiff_t total = 1;
  ptrdiff_t spectral[4];
  int kinds[4];
  double roundtrip = 1;
  for (int i = 0; i < d; i++) {
    total *= c->n[i];
    spectral[i] = c->n[i];
    kinds[i] = c->kind == R2R ? c->kinds[i] : DFT;
    if (c->naxes) {
      kinds[i] = DFFT_IDENTITY;
      for (int a = 0; a < c->naxes; a++)
        if (c->axes[a] == i) kinds[i] = DFT;
    }
    roundtrip *= logical_size(kinds[i], c->n[i]);
  }
  if (c->kind == R2C) spectral[d - 1] = c->n[d - 1] / 2 + 1;
  double forward_scale = 1, back_scale = roundtrip;
  if (c->flags & DFFT_NORMALIZE_BACKWARD) back_scale = 1;
  if (c->flags & DFFT_NORMALIZE_ORTHO) {
    forward_scale = 1 / sqrt(roundtrip);
    back_scale = 1;
  }
  double complex *x = malloc(total * sizeof *x), *y = malloc(total * sizeof *y);
  ptrdiff_t *in_order = scrambled_order(c->n[0], size, d == 1 && (c->flags & DFFT_SCRAMBLED_IN), 0);
  ptrdiff_t *out_order = scrambled_order(c->n[0], size, d == 1 && (c->flags & DFFT_SCRAMBLED_OUT), 1);
  double forward_error = 0, back_error = 0;
  const double tolerance = c->single ? 2e-5 : 1e-11;
  int real = c->kind != C2C;

  for (int pass = 0; pass < 2; pass++) {
    /* pass 0 fills every field and transforms; pass 1 refills (DFFT_DESTROY_INPUT) and
     * runs the backward transform of the forward output. */
    /* (In place, pass 1 transforms the forward output where it is.) */
    for (ptrdiff_t f = 0; f < c->howmany && !(in_place && pass == 1); f++) {
      struct visit v = {in_type, input, f * in_field, f, NULL, real, 1, 0, 0, in_order};
      each_element(d, in_n, in_start, in_stride, c->n, fill_input, &v);
    }
    if (pass == 0) {
      code = dfft_forward(plan, input, output);
    } else {
      code = dfft_backward(plan, output, back);
    }
    if (code != DFFT_SUCCESS) {
      fprintf(stderr, "%s: transform failed (%d): %s\n", c->name, code, dfft_error_message(code));
      return 0;
    }
    for (ptrdiff_t f = 0; f < c->howmany; f++) {
      for (ptrdiff_t g = 0; g < total; g++) x[g] = input_value(g, f, real);
      struct visit v;
      if (pass == 0) {
        memcpy(y, x, total * sizeof *x);
        naive_nd(y, d, c->n, kinds);
        /* r2c: the reference's index in the spectral shape (last axis halved). */
        if (c->kind == R2C) {
          ptrdiff_t last = c->n[d - 1], half = spectral[d - 1], rows = total / last;
          for (ptrdiff_t r = 0; r < rows; r++)
            for (ptrdiff_t k = 0; k < half; k++) y[r * half + k] = y[r * last + k];
        }
        v = (struct visit){out_type, output, f * out_field, f, y, real, forward_scale, 0, 0, out_order};
        each_element(d, out_n, out_start, out_stride, spectral, compare, &v);
        double relative = v.max_error / (v.max_ref > 1 ? v.max_ref : 1);
        if (relative > forward_error) forward_error = relative;
      } else {
        v = (struct visit){in_type, back, f * in_field, f, x, real, back_scale, 0, 0, in_order};
        each_element(d, in_n, in_start, in_stride, c->n, compare, &v);
        double relative = v.max_error / (back_scale * (v.max_ref > 1 ? v.max_ref : 1));
        if (relative > back_error) back_error = relative;
      }
    }
  }
  double errors[2] = {forward_error, back_error}, worst[2];
  MPI_Allreduce(errors, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int grid_rank, grid[3];
  dfft_grid(plan, &grid_rank, grid);
  int ok = worst[0] < tolerance && worst[1] < tolerance;
  if (rank == 0) {
    printf("%-34s ranks=%d grid=", c->name, size);
    for (int g = 0; g < grid_rank; g++) printf(g ? "x%d" : "%d", grid[g]);
    printf(" forward_error=%.2e roundtrip_error=%.2e %s\n", worst[0], worst[1], ok ? "ok" : "FAILED");
  }
  if (in_place) {
    free(input);
  } else if (c->plan_blocks) {
    dfft_free(back);
    dfft_free(output);
    dfft_free(input);
  } else {
    free(back);
    free(output);
    free(input);
  }
  free(x);
  free(y);
  free(in_order);
  free(out_order);
  dfft_destroy(plan);
  return ok;
}

struct halo_case {
  const char *name;
  enum kind kind; /* C2C (complex input) or R2C (real input) */
  int d;
  ptrdiff_t n[4];
  ptrdiff_t howmany;
  int grid_rank;
  ptrdiff_t widths[4];
  int periodic;
};

/* dfft_halo_exchange of index-valued input (field f, global index g: g + 1000 f, and i*g in
 * the imaginary part) against the value at the wrapped global index, or the fill value. */
/* dfft_halo_plan on a 1-D plan: refused with DFFT_ERROR_BAD_ARGUMENT and a message naming
 * it, on every rank, and *halo left NULL (its layout has two axes where C's d is 1). */
static int halo_of_one_d_refused(void) {
  const ptrdiff_t n[1] = {60}, widths[2] = {1, 1};
  dfft_plan *plan;
  int code = dfft_plan_dft(1, n, 1, MPI_COMM_WORLD, 0, NULL, 0, &plan);
  if (code != DFFT_SUCCESS) {
    fprintf(stderr, "halo 1-D: planning failed (%d): %s\n", code, dfft_error_message(code));
    return 0;
  }
  dfft_halo *halo = (dfft_halo *)plan;
  code = dfft_halo_plan(plan, widths, 1, NULL, &halo);
  const char *message = dfft_error_message(code);
  int ok = code == DFFT_ERROR_BAD_ARGUMENT && halo == NULL && strstr(message, "1-D") != NULL;
  if (!ok) fprintf(stderr, "halo 1-D: got %d (%s), halo %p\n", code, message, (void *)halo);
  dfft_halo_destroy(halo);
  dfft_destroy(plan);
  return ok;
}

static int run_halo(const struct halo_case *c, int rank, int size) {
  const int d = c->d;
  dfft_plan *plan;
  int code = c->kind == C2C ? dfft_plan_dft(d, c->n, c->howmany, MPI_COMM_WORLD, c->grid_rank, NULL, 0, &plan)
                            : dfft_plan_dft_r2c(d, c->n, c->howmany, MPI_COMM_WORLD, c->grid_rank, NULL, 0, &plan);
  if (code != DFFT_SUCCESS) {
    fprintf(stderr, "%s: planning failed (%d): %s\n", c->name, code, dfft_error_message(code));
    return 0;
  }
  enum type t = c->kind == C2C ? C64 : F64;
  double complex fill_value = -7.5 + 2.0 * I;
  double fill_real = -7.5;
  const void *fill = c->periodic ? NULL : (t == C64 ? (const void *)&fill_value : (const void *)&fill_real);
  dfft_halo *halo;
  code = dfft_halo_plan(plan, c->widths, c->periodic, fill, &halo);
  if (code != DFFT_SUCCESS) {
    fprintf(stderr, "%s: halo planning failed (%d): %s\n", c->name, code, dfft_error_message(code));
    return 0;
  }
  ptrdiff_t in_count, out_count, in_n[4], in_start[4], in_stride[4], count, ext[4];
  dfft_local_size(plan, &in_count, &out_count);
  dfft_local_input(plan, in_n, in_start, in_stride);
  dfft_halo_local(halo, &count, ext);
  ptrdiff_t in_field = 1, ext_field = 1;
  for (int i = 0; i < d; i++) {
    in_field *= in_n[i];
    ext_field *= ext[i];
  }
  int ok = count == ext_field * c->howmany;
  for (int i = 0; i < d; i++) ok &= ext[i] == in_n[i] + 2 * c->widths[i];
  void *input = malloc(in_count * type_size(t) + 1), *out = malloc(count * type_size(t) + 1);
  for (ptrdiff_t f = 0; f < c->howmany; f++) {
    for (ptrdiff_t e = 0; e < in_field; e++) {
      ptrdiff_t rest = e, g = 0, scale = 1;
      for (int i = d - 1; i >= 0; i--) {
        g += (in_start[i] + rest % in_n[i]) * scale;
        rest /= in_n[i];
        scale *= c->n[i];
      }
      set(t, input, f * in_field + e, (double)(g + 1000 * f) + (t == C64 ? I * g : 0));
    }
  }
  code = dfft_halo_exchange(halo, input, out);
  ok &= code == DFFT_SUCCESS;
  ptrdiff_t wrong = 0;
  for (ptrdiff_t f = 0; ok && f < c->howmany; f++)
    for (ptrdiff_t e = 0; e < ext_field; e++) {
      ptrdiff_t rest = e, g = 0, scale = 1;
      int outside = 0;
      for (int i = d - 1; i >= 0; i--) {
        ptrdiff_t x = in_start[i] + rest % ext[i] - c->widths[i];
        rest /= ext[i];
        if (x < 0 || x >= c->n[i]) outside = 1;
        x = ((x % c->n[i]) + c->n[i]) % c->n[i];
        g += x * scale;
        scale *= c->n[i];
      }
      double complex want = (double)(g + 1000 * f) + (t == C64 ? I * g : 0);
      if (outside && !c->periodic) want = t == C64 ? fill_value : fill_real;
      if (get(t, out, f * ext_field + e) != want) wrong++;
    }
  /* In place (in == out): the halo cells of a copy of out made garbage, the interior kept;
   * the exchange must write them back, bit for bit. */
  size_t bytes = count * type_size(t);
  void *again = malloc(bytes + 1);
  memcpy(again, out, bytes);
  for (ptrdiff_t f = 0; f < c->howmany; f++)
    for (ptrdiff_t e = 0; e < ext_field; e++) {
      ptrdiff_t rest = e;
      int interior = 1;
      for (int i = d - 1; i >= 0; i--) {
        ptrdiff_t j = rest % ext[i];
        rest /= ext[i];
        if (j < c->widths[i] || j >= c->widths[i] + in_n[i]) interior = 0;
      }
      if (!interior) set(t, again, f * ext_field + e, 1e30);
    }
  code = dfft_halo_exchange(halo, again, again);
  if (code != DFFT_SUCCESS || memcmp(again, out, bytes) != 0) {
    fprintf(stderr, "%s: in place: code %d (%s), %s\n", c->name, code, dfft_error_message(code),
            memcmp(again, out, bytes) ? "differs" : "same");
    ok = 0;
  }
  free(again);
  int all_ok;
  ok &= wrong == 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("%-34s ranks=%d %s\n", c->name, size, all_ok ? "ok" : "FAILED");
  free(input);
  free(out);
  dfft_halo_destroy(halo);
  dfft_destroy(plan);
  return all_ok;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const struct test_case cases[] = {
      {"c2c f64 6x5x4 auto", C2C, 0, 3, {6, 5, 4}, 1, 0, {0}, 0, {0}, 0},
      {"c2c f64 7x5x6 r2 T B howmany=2", C2C, 0, 3, {7, 5, 6}, 2, 2, {0}, DFFT_TRANSPOSED_OUT | DFFT_NORMALIZE_BACKWARD, {0}, 1},
      {"c2c f32 9x6 dims={P} ortho", C2C, 1, 2, {9, 6}, 1, 1, {-1}, DFFT_NORMALIZE_ORTHO, {0}, 0},
      {"c2c f64 3x4x2x5 r2 nosm", C2C, 0, 4, {3, 4, 2, 5}, 1, 2, {0}, DFFT_NO_SHARED_MEMORY, {0}, 0},
      {"c2c f64 7x5x6 r2 B in place", C2C, 0, 3, {7, 5, 6}, 1, 2, {0}, DFFT_IN_PLACE | DFFT_NORMALIZE_BACKWARD, {0}, 0},
      {"c2c f32 9x6x5 dims={P} T in place x2", C2C, 1, 3, {9, 6, 5}, 2, 1, {-1}, DFFT_IN_PLACE | DFFT_TRANSPOSED_OUT, {0}, 0},
      {"r2c f64 6x5x8 T destroy howmany=2", R2C, 0, 3, {6, 5, 8}, 2, 0, {0}, DFFT_TRANSPOSED_OUT | DFFT_DESTROY_INPUT, {0}, 1},
      {"r2c f32 5x7x9 r1 B", R2C, 1, 3, {5, 7, 9}, 1, 1, {0}, DFFT_NORMALIZE_BACKWARD, {0}, 0},
      {"r2c f64 6x5x8 B padded in place", R2C, 0, 3, {6, 5, 8}, 1, 0, {0}, DFFT_IN_PLACE | DFFT_NORMALIZE_BACKWARD, {0}, 0},
      {"r2c f32 7x6x9 r2 T padded in place x2", R2C, 1, 3, {7, 6, 9}, 2, 2, {0}, DFFT_IN_PLACE | DFFT_TRANSPOSED_OUT, {0}, 0},
      {"r2r f64 7x6x5 dct2,dst1,dct4 T in place", R2R, 0, 3, {7, 6, 5}, 1, 0, {0}, DFFT_IN_PLACE | DFFT_TRANSPOSED_OUT, {DFFT_REDFT10, DFFT_RODFT00, DFFT_REDFT11}, 0},
      {"r2r f64 5x6x4 dct2,dst1,dct4", R2R, 0, 3, {5, 6, 4}, 1, 0, {0}, 0, {DFFT_REDFT10, DFFT_RODFT00, DFFT_REDFT11}, 1},
      {"r2r f32 6x5 dct1,dst2 T", R2R, 1, 2, {6, 5}, 1, 0, {0}, DFFT_TRANSPOSED_OUT, {DFFT_REDFT00, DFFT_RODFT10}, 0},
      {"r2r f64 4x5x6 dct3,dst3,dst4 B", R2R, 0, 3, {4, 5, 6}, 2, 2, {0}, DFFT_NORMALIZE_BACKWARD, {DFFT_REDFT01, DFFT_RODFT01, DFFT_RODFT11}, 0},
      {"r2r f64 7x6x5 r2hc,dht,hc2r", R2R, 0, 3, {7, 6, 5}, 1, 0, {0}, 0, {DFFT_R2HC, DFFT_DHT, DFFT_HC2R}, 0},
      {"c2c f64 1-D 97", C2C, 0, 1, {97}, 1, 0, {0}, 0, {0}, 0},
      {"c2c f64 1-D 64 B", C2C, 0, 1, {64}, 1, 1, {0}, DFFT_NORMALIZE_BACKWARD, {0}, 1},
      {"c2c f32 1-D 60 howmany=2 in place", C2C, 1, 1, {60}, 2, 0, {0}, DFFT_IN_PLACE, {0}, 0},
      {"c2c f64 1-D 60 scrambled out", C2C, 0, 1, {60}, 1, 0, {0}, DFFT_SCRAMBLED_OUT, {0}, 0},
      {"c2c f64 1-D 45 scrambled in B", C2C, 0, 1, {45}, 1, 0, {0}, DFFT_SCRAMBLED_IN | DFFT_NORMALIZE_BACKWARD, {0}, 1},
      {"c2c f32 1-D 64 scrambled in+out x2", C2C, 1, 1, {64}, 2, 0, {0}, DFFT_SCRAMBLED_IN | DFFT_SCRAMBLED_OUT, {0}, 0},
      {"c2c f64 1-D 97 scrambled out in place", C2C, 0, 1, {97}, 1, 0, {0}, DFFT_SCRAMBLED_OUT | DFFT_IN_PLACE, {0}, 0},
      {"c2c f64 1-D 128 scrambled out in place", C2C, 0, 1, {128}, 1, 0, {0}, DFFT_SCRAMBLED_OUT | DFFT_IN_PLACE, {0}, 0},
      {"r2r f32 6x8 hc2r,r2hc T in place", R2R, 1, 2, {6, 8}, 1, 0, {0}, DFFT_IN_PLACE | DFFT_TRANSPOSED_OUT, {DFFT_HC2R, DFFT_R2HC}, 0},
      {"r2r f64 7x6x5 identity,dct2,identity", R2R, 0, 3, {7, 6, 5}, 1, 1, {0}, DFFT_DETERMINISTIC, {DFFT_IDENTITY, DFFT_REDFT10, DFFT_IDENTITY}, 0},
      {"r2r f64 5x7x4 r2 dht,identity,dst2 B", R2R, 0, 3, {5, 7, 4}, 2, 2, {0}, DFFT_NORMALIZE_BACKWARD, {DFFT_DHT, DFFT_IDENTITY, DFFT_RODFT10}, 1},
      {"c2c f64 7x6x5 r1 axes 1,2", C2C, 0, 3, {7, 6, 5}, 1, 1, {0}, 0, {0}, 0, 2, {1, 2}},
      {"c2c f32 5x6x7 r2 axes 0 B", C2C, 1, 3, {5, 6, 7}, 1, 2, {0}, DFFT_NORMALIZE_BACKWARD, {0}, 0, 1, {0}},
      {"c2c f64 6x5x4 auto axes 2,0 T x2", C2C, 0, 3, {6, 5, 4}, 2, 0, {0}, DFFT_TRANSPOSED_OUT, {0}, 1, 2, {2, 0}},
      {"r2c f64 7x5x6 r1 axes 0,2", R2C, 0, 3, {7, 5, 6}, 1, 1, {0}, 0, {0}, 0, 2, {0, 2}},
      {"r2c f32 6x7x8 r2 axes 1,2 ortho", R2C, 1, 3, {6, 7, 8}, 1, 2, {0}, DFFT_NORMALIZE_ORTHO, {0}, 0, 2, {1, 2}},
      {"c2c f64 6x5x7 x9 groups=P B", C2C, 0, 3, {6, 5, 7}, 9, 1, {0}, DFFT_NORMALIZE_BACKWARD, {0}, 0, 0, {0}, -1},
      {"r2c f32 5x6x8 x5 groups=2 r2", R2C, 1, 3, {5, 6, 8}, 5, 2, {0}, 0, {0}, 1, 0, {0}, 2},
      {"r2r f64 6x7x5 dct2,dst1,dct4 x4 groups=auto", R2R, 0, 3, {6, 7, 5}, 4, 0, {0}, 0, {DFFT_REDFT10, DFFT_RODFT00, DFFT_REDFT11}, 0, 0, {0}, -2},
  };
  const int one_d = argc > 1 && strcmp(argv[1], "one_d") == 0;
  int failed = 0, count = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (one_d && cases[i].d != 1) continue;
    failed += !run_case(&cases[i], rank, size);
    count++;
  }
  const struct halo_case halos[] = {
      {"halo c2c 7x5x6 r1 w=1,2,3", C2C, 3, {7, 5, 6}, 1, 1, {1, 2, 3}, 1},
      {"halo r2c 3x9 r1 w=4,11 fill x2", R2C, 2, {3, 9}, 2, 1, {4, 11}, 0},
      {"halo r2c 6x5x4 r2 w=2,2,0 fill", R2C, 3, {6, 5, 4}, 1, 2, {2, 2, 0}, 0},
  };
  int halo_count = one_d ? 0 : sizeof halos / sizeof halos[0];
  for (int i = 0; i < halo_count; i++) failed += !run_halo(&halos[i], rank, size);
  count += halo_count;
  failed += !halo_of_one_d_refused();
  count++;
  if (rank == 0) printf("transforms: %d passed, %d failed\n", count - failed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
