! In-place transforms from Fortran (plans made with DFFT_IN_PLACE, dfft_forward(plan, buf,
! buf)): a 3-D c2c transform of a sum of complex exponentials and a 3-D r2c transform of a
! sum of real cosines in FFTW's padded in-place layout (the first, contiguous axis of n(1)
! reals padded to 2*(n(1)/2+1) per column), each checked against its exact spectrum and
! brought back by the normalized backward transform in the same buffer.
! Prints "in_place: ... PASSED" on rank 0 and exits 0 only when every check holds.
program in_place
  use, intrinsic :: iso_c_binding
  use mpi
  use dfft
  use cosines
  implicit none

  type(c_ptr) :: plan
  integer(c_int) :: ierr
  integer(c_ptrdiff_t) :: count, in_count, out_count, in_n(3), in_start(3), in_stride(3)
  integer(c_ptrdiff_t) :: out_n(3), out_start(3), out_stride(3), at, padded
  complex(c_double_complex), allocatable :: z(:), z0(:)
  real(c_double), allocatable, target :: buf(:)
  real(c_double), allocatable :: u0(:)
  complex(c_double_complex), pointer :: spectrum(:)
  complex(c_double_complex) :: want
  real(c_double) :: phase, local_error(4), error(4)
  integer :: rank, nranks, mpierr, i, j, k, m, g(3), failures, total_failures

  call MPI_Init(mpierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, mpierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, mpierr)
  failures = 0
  local_error = 0

  ! c2c: the input block, then the spectrum, then the input again in one buffer.
  ierr = dfft_plan_dft(3, n, 1_c_ptrdiff_t, MPI_COMM_WORLD, 0, &
    ior(DFFT_IN_PLACE, DFFT_NORMALIZE_BACKWARD), plan)
  if (ierr /= DFFT_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 2, mpierr)
  ierr = dfft_local_size(plan, in_count, out_count)
  ierr = dfft_local_in_place(plan, count)
  if (count /= max(in_count, out_count)) failures = failures + 1
  ierr = dfft_local_input(plan, in_n, in_start, in_stride)
  ierr = dfft_local_output(plan, out_n, out_start, out_stride)
  allocate (z(max(count, 1_c_ptrdiff_t)), z0(max(in_count, 1_c_ptrdiff_t)))
  z = (1d300, 0d0)
  do k = 1, int(in_n(3))
    do j = 1, int(in_n(2))
      do i = 1, int(in_n(1))
        g = [i, j, k] - 1 + int(in_start)
        at = 1 + (i - 1) * in_stride(1) + (j - 1) * in_stride(2) + (k - 1) * in_stride(3)
        z(at) = 0
        do m = 1, 2
          phase = two_pi * sum(real(modes(:, m) * g, c_double) / real(n, c_double))
          z(at) = z(at) + amplitude(m) * cmplx(cos(phase), sin(phase), c_double_complex)
        end do
      end do
    end do
  end do
  if (in_count > 0) z0 = z(1:in_count)
  ierr = dfft_forward(plan, z, z)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  ! exp(+i m.x) has N at k = m (forward sign -1).
  do k = 1, int(out_n(3))
    do j = 1, int(out_n(2))
      do i = 1, int(out_n(1))
        g = [i, j, k] - 1 + int(out_start)
        want = 0
        do m = 1, 2
          if (all(modulo(modes(:, m), int(n)) == g)) want = want + product(n) * amplitude(m)
        end do
        at = 1 + (i - 1) * out_stride(1) + (j - 1) * out_stride(2) + (k - 1) * out_stride(3)
        local_error(1) = max(local_error(1), abs(z(at) - want) / product(n))
      end do
    end do
  end do
  ierr = dfft_backward(plan, z, z)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  if (in_count > 0) local_error(2) = maxval(abs(z(1:in_count) - z0))
  ierr = dfft_destroy(plan)

  ! r2c: real cosines in the padded layout; the half spectrum at the buffer's start.
  ierr = dfft_plan_dft_r2c(3, n, 1_c_ptrdiff_t, MPI_COMM_WORLD, 0, &
    ior(DFFT_IN_PLACE, DFFT_NORMALIZE_BACKWARD), plan)
  if (ierr /= DFFT_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 3, mpierr)
  ierr = dfft_local_size(plan, in_count, out_count)
  ierr = dfft_local_in_place(plan, count)
  ierr = dfft_local_input(plan, in_n, in_start, in_stride)
  ierr = dfft_local_output(plan, out_n, out_start, out_stride)
  padded = 2 * (n(1) / 2 + 1)
  if (count /= max(padded * in_n(2) * in_n(3), 2 * out_count)) failures = failures + 1
  if (in_n(1) /= n(1) .or. in_stride(1) /= 1) failures = failures + 1
  allocate (buf(max(count, 2_c_ptrdiff_t)), u0(max(in_count, 1_c_ptrdiff_t)))
  buf = -7d300
  do k = 1, int(in_n(3))
    do j = 1, int(in_n(2))
      do i = 1, int(in_n(1))
        g = [i, j, k] - 1 + int(in_start)
        at = 1 + (i - 1) + (j - 1) * padded + (k - 1) * padded * in_n(2)
        buf(at) = cosines_at(g)
        u0(1 + (i - 1) + (j - 1) * in_n(1) + (k - 1) * in_n(1) * in_n(2)) = buf(at)
      end do
    end do
  end do
  ierr = dfft_forward(plan, buf, buf)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  call c_f_pointer(c_loc(buf), spectrum, [max(count / 2, 1_c_ptrdiff_t)])
  local_error(3) = half_spectrum_error(spectrum, out_n, out_start, out_stride)
  ierr = dfft_backward(plan, buf, buf)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  do k = 1, int(in_n(3))
    do j = 1, int(in_n(2))
      do i = 1, int(in_n(1))
        at = 1 + (i - 1) + (j - 1) * padded + (k - 1) * padded * in_n(2)
        local_error(4) = max(local_error(4), &
          abs(buf(at) - u0(1 + (i - 1) + (j - 1) * in_n(1) + (k - 1) * in_n(1) * in_n(2))))
      end do
    end do
  end do
  ierr = dfft_destroy(plan)

  call MPI_Allreduce(local_error, error, 4, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, mpierr)
  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, mpierr)
  if (maxval(error) >= 1d-10) total_failures = total_failures + 1
  if (rank == 0) print '(a, i0, 4(a, es10.3), a, i0, a)', 'in_place: ranks=', nranks, &
    ' c2c_spectrum_error=', error(1), ' c2c_roundtrip_error=', error(2), &
    ' r2c_spectrum_error=', error(3), ' r2c_roundtrip_error=', error(4), &
    ' failures=', total_failures, merge(' PASSED', ' FAILED', total_failures == 0)
  call MPI_Finalize(mpierr)
  if (total_failures /= 0) stop 1
end program in_place
