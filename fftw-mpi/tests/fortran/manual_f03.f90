! The FFTW manual's Fortran 2003 MPI example ("Fortran-interface MPI example" of "FFTW MPI
! Fortran Interface"): a distributed L x M complex DFT in place, the dimensions reversed for
! FFTW's C view (L and M from the command line, default 10 x 12). The harness checks every
! local element against a naive DFT and prints the same report line as the C examples.
program manual_f03
  use, intrinsic :: iso_c_binding
  use mpi
  implicit none
  include 'fftw3-mpi.f03'
  integer(C_INTPTR_T) :: L = 10
  integer(C_INTPTR_T) :: M = 12
  type(C_PTR) :: plan, cdata
  complex(C_DOUBLE_COMPLEX), pointer :: data(:,:)
  integer(C_INTPTR_T) :: i, j, alloc_local, local_M, local_j_offset
  integer :: ierr, rank, nproc
  character(len=32) :: arg
  real(C_DOUBLE) :: err, scale, sums(2), total(2), e, s
  complex(C_DOUBLE_COMPLEX) :: want, checksum

  call MPI_Init(ierr)
  call fftw_mpi_init()
  if (command_argument_count() >= 2) then
    call get_command_argument(1, arg); read (arg, *) L
    call get_command_argument(2, arg); read (arg, *) M
  end if

!   get local data size and allocate (note dimension reversal)
  alloc_local = fftw_mpi_local_size_2d(M, L, MPI_COMM_WORLD, &
                                       local_M, local_j_offset)
  cdata = fftw_alloc_complex(alloc_local)
  call c_f_pointer(cdata, data, [L,local_M])

!   create MPI plan for in-place forward DFT (note dimension reversal)
  plan = fftw_mpi_plan_dft_2d(M, L, data, data, MPI_COMM_WORLD, &
                              FFTW_FORWARD, FFTW_MEASURE)

! initialize data to some function my_function(i,j)
  do j = 1, local_M
    do i = 1, L
      data(i, j) = my_function(i, j + local_j_offset)
    end do
  end do

! compute transform (as many times as desired)
  call fftw_mpi_execute_dft(plan, data, data)

! harness: element (i, j) is the DFT at (i-1, j-1+offset), sign -1
  err = 0; scale = 0; checksum = 0
  do j = 1, local_M
    do i = 1, L
      want = naive(i - 1, j - 1 + local_j_offset)
      err = max(err, abs(data(i, j) - want))
      scale = max(scale, abs(want))
      checksum = checksum + data(i, j) * cmplx(cos(0.37d0 * g(i - 1, j - 1 + local_j_offset)), &
                                               sin(0.11d0 * g(i - 1, j - 1 + local_j_offset)), C_DOUBLE)
    end do
  end do
  call MPI_Allreduce(err, e, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(scale, s, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  sums = [real(checksum), aimag(checksum)]
  call MPI_Allreduce(sums, total, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  if (rank == 0) write (*, '(a,i0,a,es10.3,a,es10.3,a,es22.15,1x,es22.15)') 'manual_f03 np=', nproc, &
      ': max error ', e, ' (relative ', e / s, '), checksum ', total(1), total(2)

  call fftw_destroy_plan(plan)
  call fftw_free(cdata)
  call MPI_Finalize(ierr)
  if (e / s > 1d-12) stop 1

contains

  ! The input at 1-based (i, j): a fixed pseudo-random complex value per element.
  complex(C_DOUBLE_COMPLEX) function my_function(i, j)
    integer(C_INTPTR_T), intent(in) :: i, j
    my_function = value_at(i - 1, j - 1)
  end function

  complex(C_DOUBLE_COMPLEX) function value_at(i0, j0)
    integer(C_INTPTR_T), intent(in) :: i0, j0
    real(C_DOUBLE) :: x
    x = real(mod(7 * i0 + 13 * j0 + 3 * i0 * j0, 101), C_DOUBLE)
    value_at = cmplx(sin(x) + 0.25d0 * i0, cos(1.7d0 * x) - 0.1d0 * j0, C_DOUBLE)
  end function

  real(C_DOUBLE) function g(i0, j0)
    integer(C_INTPTR_T), intent(in) :: i0, j0
    g = real(j0 * L + i0, C_DOUBLE)
  end function

  ! sum over (a, b) of value_at(a, b) exp(-2 pi i (a k / L + b q / M))
  complex(C_DOUBLE_COMPLEX) function naive(k, q)
    integer(C_INTPTR_T), intent(in) :: k, q
    integer(C_INTPTR_T) :: a, b
    real(C_DOUBLE), parameter :: pi = 3.14159265358979323846d0
    naive = 0
    do b = 0, M - 1
      do a = 0, L - 1
        naive = naive + value_at(a, b) * exp(cmplx(0d0, -2 * pi * (real(mod(a * k, L), C_DOUBLE) / L &
                                                  + real(mod(b * q, M), C_DOUBLE) / M), C_DOUBLE))
      end do
    end do
  end function
end program manual_f03
