! What the Fortran test programs share: the global shape, and a sum of two real cosines on
! it with its exact half spectrum (the spectrum of a real-to-complex transform, the first
! axis halved). Compiled with each program (mpif90 cosines.f90 program.f90).
module cosines
  use, intrinsic :: iso_c_binding
  implicit none

  integer(c_ptrdiff_t), parameter :: n(3) = [10_c_ptrdiff_t, 6_c_ptrdiff_t, 7_c_ptrdiff_t]
  integer, parameter :: modes(3, 2) = reshape([2, 1, -3, 4, 0, 2], [3, 2])
  real(c_double), parameter :: amplitude(2) = [1.5d0, -0.5d0]
  real(c_double), parameter :: two_pi = 8 * atan(1.0d0)

contains

  ! The sum of amplitude(m) * cos(2 pi modes(:, m) . g / n) at the zero-based global index g.
  real(c_double) function cosines_at(g)
    integer, intent(in) :: g(3)
    integer :: m
    cosines_at = 0
    do m = 1, 2
      cosines_at = cosines_at + amplitude(m) * &
        cos(two_pi * sum(real(modes(:, m) * g, c_double) / real(n, c_double)))
    end do
  end function

  ! The largest error, relative to the number of points, of this rank's block of the
  ! forward spectrum of cosines_at (out_n, out_start, out_stride: dfft_local_output).
  real(c_double) function half_spectrum_error(spectrum, out_n, out_start, out_stride)
    complex(c_double_complex), intent(in) :: spectrum(*)
    integer(c_ptrdiff_t), intent(in) :: out_n(3), out_start(3), out_stride(3)
    complex(c_double_complex) :: want
    integer(c_ptrdiff_t) :: at
    integer :: i, j, k, m, g(3)
    half_spectrum_error = 0
    ! cos(m.x) has N/2 at k = m and at k = -m; only k = m lies in the halved first axis.
    do k = 1, int(out_n(3))
      do j = 1, int(out_n(2))
        do i = 1, int(out_n(1))
          g = [i, j, k] - 1 + int(out_start)
          want = 0
          do m = 1, 2
            if (all(modulo(modes(:, m), int(n)) == g)) want = want + product(n) / 2 * amplitude(m)
          end do
          at = 1 + (i - 1) * out_stride(1) + (j - 1) * out_stride(2) + (k - 1) * out_stride(3)
          half_spectrum_error = max(half_spectrum_error, abs(spectrum(at) - want) / product(n))
        end do
      end do
    end do
  end function

end module cosines
