! A 3-D complex-to-complex FFT with transposed output from Fortran (use mpi_f08), checked
! against the exact spectrum: the input is a sum of three Fourier modes, so the forward
! transform is N times their amplitudes at their wavevectors and zero elsewhere, at every
! element of every rank's (transposed) output block; the backward transform must give the
! input back. Exits with status 0 only when both errors are below 1e-10.
!
!   mpif90 c2c_transposed.f90 $(pkg-config --cflags --libs dfft) -o c2c_transposed
!   mpirun -n 4 ./c2c_transposed
!
! The global array is u(nx, ny, nz) in Fortran's (column-major) order: dfft's C-order array
! nz x ny x nx. The grid splits the slowest axes (nz, then ny).
program c2c_transposed
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use dfft
  implicit none

  integer(c_ptrdiff_t), parameter :: n(3) = [12_c_ptrdiff_t, 10_c_ptrdiff_t, 9_c_ptrdiff_t]
  ! The modes: wavevectors (Fortran's axis order; negative ones wrap) and amplitudes.
  integer, parameter :: modes(3, 3) = reshape([1, 2, 3, -4, 0, 1, 5, -3, -4], [3, 3])
  complex(c_double_complex), parameter :: amplitude(3) = &
    [(1.0d0, 0.5d0), (-0.25d0, 2.0d0), (0.75d0, -1.0d0)]
  real(c_double), parameter :: two_pi = 8 * atan(1.0d0)

  type(c_ptr) :: plan
  integer(c_int) :: ierr, grid_rank, grid_dims(2)
  integer(c_ptrdiff_t) :: in_count, out_count
  integer(c_ptrdiff_t) :: in_n(3), in_start(3), in_stride(3)
  integer(c_ptrdiff_t) :: out_n(3), out_start(3), out_stride(3)
  complex(c_double_complex), allocatable :: u(:, :, :), back(:, :, :), spectrum(:)
  complex(c_double_complex) :: want
  real(c_double) :: phase, local_error(2), error(2)
  integer :: rank, nranks, i, j, k, m, g(3)
  integer(c_ptrdiff_t) :: at
  character(len=256) :: message
  character(len=32) :: grid

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  ierr = dfft_plan_dft(3, n, 1_c_ptrdiff_t, MPI_COMM_WORLD%MPI_VAL, 0, &
                       ior(DFFT_TRANSPOSED_OUT, DFFT_NORMALIZE_BACKWARD), plan)
  if (ierr /= DFFT_SUCCESS) then
    call dfft_error_message(ierr, message, len(message))
    print '(a)', trim(message)
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if
  ierr = dfft_local_size(plan, in_count, out_count)
  ierr = dfft_local_input(plan, in_n, in_start, in_stride)
  ierr = dfft_local_output(plan, out_n, out_start, out_stride)
  ierr = dfft_grid(plan, grid_rank, grid_dims)

  ! The input block is an ordinary column-major array of this rank's extents.
  allocate (u(in_n(1), in_n(2), in_n(3)), back(in_n(1), in_n(2), in_n(3)))
  allocate (spectrum(max(out_count, 1_c_ptrdiff_t)))
  do k = 1, int(in_n(3))
    do j = 1, int(in_n(2))
      do i = 1, int(in_n(1))
        g = [i, j, k] - 1 + int(in_start)
        u(i, j, k) = 0
        do m = 1, 3
          phase = two_pi * sum(real(modes(:, m) * g, c_double) / real(n, c_double))
          u(i, j, k) = u(i, j, k) + amplitude(m) * cmplx(cos(phase), sin(phase), c_double_complex)
        end do
      end do
    end do
  end do

  ierr = dfft_forward(plan, u, spectrum)
  if (ierr /= DFFT_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 3)

  ! The transposed output block: element (i, j, k) at 1 + sum((index - 1) * stride).
  local_error = 0
  do k = 1, int(out_n(3))
    do j = 1, int(out_n(2))
      do i = 1, int(out_n(1))
        g = [i, j, k] - 1 + int(out_start)
        want = 0
        do m = 1, 3
          if (all(modulo(modes(:, m), int(n)) == g)) want = want + product(n) * amplitude(m)
        end do
        at = 1 + (i - 1) * out_stride(1) + (j - 1) * out_stride(2) + (k - 1) * out_stride(3)
        local_error(1) = max(local_error(1), abs(spectrum(at) - want) / product(n))
      end do
    end do
  end do

  ierr = dfft_backward(plan, spectrum, back)
  if (ierr /= DFFT_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 4)
  if (size(u) > 0) local_error(2) = maxval(abs(back - u))

  call MPI_Allreduce(local_error, error, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  if (rank == 0) then
    write (grid, '(i0)') grid_dims(1)
    if (grid_rank == 2) write (grid, '(i0, "x", i0)') grid_dims(1:2)
    print '(a, i0, "x", i0, "x", i0, a, i0, 3a, es10.3, a, es10.3, a)', &
      'c2c_transposed: n=', n, ' ranks=', nranks, ' grid=', trim(grid), &
      ' transposed spectrum_error=', error(1), ' roundtrip_error=', error(2), &
      merge(' PASSED', ' FAILED', all(error < 1d-10))
  end if

  ierr = dfft_destroy(plan)
  call MPI_Finalize()
  if (any(error >= 1d-10)) stop 1
end program c2c_transposed
