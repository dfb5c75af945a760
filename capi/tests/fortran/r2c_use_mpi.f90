! The Fortran module from a `use mpi` code (integer communicator handles): a 3-D r2c forward
! transform of a sum of real cosines, checked against its exact spectrum in the halved
! (first) axis, on a grid requested explicitly in Fortran's order; a single-precision c2r
! round trip; and the error path of a bad grid (code and message, no abort).
! Prints "r2c_use_mpi: ... PASSED" on rank 0 and exits 0 only when every check holds.
program r2c_use_mpi
  use, intrinsic :: iso_c_binding
  use mpi
  use dfft
  use cosines
  implicit none

  type(c_ptr) :: plan
  integer(c_int) :: ierr, grid_rank, grid_dims(2), request(1)
  integer(c_ptrdiff_t) :: in_count, out_count, in_n(3), in_start(3), in_stride(3)
  integer(c_ptrdiff_t) :: out_n(3), out_start(3), out_stride(3)
  real(c_double), allocatable :: u(:, :, :)
  complex(c_double_complex), allocatable :: spectrum(:)
  real(c_float), allocatable :: v(:), v_back(:)
  complex(c_float_complex), allocatable :: v_hat(:)
  character(len=200) :: message
  real(c_double) :: local_error(2), error(2)
  integer :: rank, nranks, mpierr, i, j, k, g(3), failures, total_failures

  call MPI_Init(mpierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, mpierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, mpierr)
  failures = 0

  ! A bad grid: one dimension whose product is not the number of ranks.
  request(1) = nranks + 1
  ierr = dfft_plan_dft_r2c(3, n, 1_c_ptrdiff_t, MPI_COMM_WORLD, 1, 0, plan, request)
  call dfft_error_message(ierr, message, len(message))
  if (ierr /= DFFT_ERROR_BAD_GRID .or. index(message, 'positions') == 0 .or. c_associated(plan)) then
    print '(a, i0, 2a)', 'bad grid: code ', ierr, ', message: ', trim(message)
    failures = failures + 1
  end if

  ! An unknown Fortran communicator handle.
  ierr = dfft_plan_dft_r2c(3, n, 1_c_ptrdiff_t, -5, 0, 0, plan)
  call dfft_error_message(ierr, message, len(message))
  if (ierr /= DFFT_ERROR_MPI .or. index(message, 'communicator') == 0) then
    print '(a, i0, 2a)', 'unknown handle: code ', ierr, ', message: ', trim(message)
    failures = failures + 1
  end if

  ! The grid split over the slowest axis, n(3), requested in Fortran's order.
  request(1) = nranks
  ierr = dfft_plan_dft_r2c(3, n, 1_c_ptrdiff_t, MPI_COMM_WORLD, 1, 0, plan, request)
  if (ierr /= DFFT_SUCCESS) then
    call dfft_error_message(ierr, message, len(message))
    print '(a)', trim(message)
    call MPI_Abort(MPI_COMM_WORLD, 2, mpierr)
  end if
  ierr = dfft_grid(plan, grid_rank, grid_dims)
  if (grid_rank /= 1 .or. grid_dims(1) /= nranks) failures = failures + 1
  ierr = dfft_local_size(plan, in_count, out_count)
  ierr = dfft_local_input(plan, in_n, in_start, in_stride)
  ierr = dfft_local_output(plan, out_n, out_start, out_stride)
  ! The input is split along n(3) only, and column-major.
  if (in_n(1) /= n(1) .or. in_n(2) /= n(2) .or. in_stride(1) /= 1 .or. &
      in_stride(2) /= n(1)) failures = failures + 1

  allocate (u(in_n(1), in_n(2), in_n(3)), spectrum(max(out_count, 1_c_ptrdiff_t)))
  do k = 1, int(in_n(3))
    do j = 1, int(in_n(2))
      do i = 1, int(in_n(1))
        g = [i, j, k] - 1 + int(in_start)
        u(i, j, k) = cosines_at(g)
      end do
    end do
  end do
  ierr = dfft_forward(plan, u, spectrum)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1

  if (out_n(1) /= n(1) / 2 + 1) failures = failures + 1
  local_error = 0
  local_error(1) = half_spectrum_error(spectrum, out_n, out_start, out_stride)
  ierr = dfft_destroy(plan)

  ! Single precision with the model's grid: the c2r round trip, normalized.
  ierr = dfftf_plan_dft_r2c(3, n, 1_c_ptrdiff_t, MPI_COMM_WORLD, 0, DFFT_NORMALIZE_BACKWARD, plan)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  ierr = dfft_local_size(plan, in_count, out_count)
  allocate (v(max(in_count, 1_c_ptrdiff_t)), v_back(max(in_count, 1_c_ptrdiff_t)))
  allocate (v_hat(max(out_count, 1_c_ptrdiff_t)))
  v = [(sin(0.3 * i), i = 1, size(v))]
  ierr = dfft_forward(plan, v, v_hat)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  ierr = dfft_backward(plan, v_hat, v_back)
  if (ierr /= DFFT_SUCCESS) failures = failures + 1
  if (in_count > 0) local_error(2) = maxval(abs(v_back(1:in_count) - v(1:in_count)))
  ierr = dfft_destroy(plan)

  call MPI_Allreduce(local_error, error, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, mpierr)
  call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, mpierr)
  if (error(1) >= 1d-10 .or. error(2) >= 1d-5) total_failures = total_failures + 1
  if (rank == 0) print '(a, i0, a, es10.3, a, es10.3, a, i0, a)', 'r2c_use_mpi: ranks=', nranks, &
    ' spectrum_error=', error(1), ' f32_roundtrip_error=', error(2), ' failures=', &
    total_failures, merge(' PASSED', ' FAILED', total_failures == 0)
  call MPI_Finalize(mpierr)
  if (total_failures /= 0) stop 1
end program r2c_use_mpi
