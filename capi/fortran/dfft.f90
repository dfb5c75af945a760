! dfft: distributed multidimensional FFTs over MPI, the Fortran interface (module dfft).
!
! Interfaces only (iso_c_binding, no module procedures): a program needs this module's .mod
! file and libdfft, nothing else. Guide: docs/c-fortran.md.
!
! Conventions:
! * Every function returns an integer(c_int) code, DFFT_SUCCESS (0) or an error;
!   call dfft_error_message(code, message, len(message)) says what was wrong.
! * The communicator is a Fortran handle: MPI_COMM_WORLD from `use mpi`, or comm%MPI_VAL from
!   `use mpi_f08` (dfft converts it with MPI_Comm_f2c).
! * Every per-axis array (n, kinds, local_n, local_start, strides, grid_dims) is in Fortran's
!   order, fastest axis first: a Fortran array u(n(1), n(2), ..., n(d)) is the global array,
!   exactly the C-order array n(d) x ... x n(1) seen column-major. The grid splits the last
!   (slowest) axes; r2c halves the first axis (n(1)/2 + 1 complex values).
! * local_start is 0-based (global index of the block's first element along each axis);
!   strides are in elements.
! * Arrays passed to dfft_forward/dfft_backward are contiguous (any type, any rank): this
!   rank's blocks, of at least the counts dfft_local_size gives.
module dfft
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_ptrdiff_t, c_ptr, c_char
  implicit none
  public

  ! Flags (combine with ior).
  integer(c_int), parameter :: DFFT_TRANSPOSED_OUT = 1
  integer(c_int), parameter :: DFFT_DESTROY_INPUT = 2
  integer(c_int), parameter :: DFFT_NORMALIZE_BACKWARD = 4
  integer(c_int), parameter :: DFFT_NORMALIZE_ORTHO = 8
  integer(c_int), parameter :: DFFT_NO_SHARED_MEMORY = 16
  integer(c_int), parameter :: DFFT_IN_PLACE = 32
  integer(c_int), parameter :: DFFT_DETERMINISTIC = 64
  integer(c_int), parameter :: DFFT_SCRAMBLED_IN = 128
  integer(c_int), parameter :: DFFT_SCRAMBLED_OUT = 256

  ! Return codes.
  integer(c_int), parameter :: DFFT_SUCCESS = 0
  integer(c_int), parameter :: DFFT_ERROR_NULL_POINTER = 1
  integer(c_int), parameter :: DFFT_ERROR_BAD_ARGUMENT = 2
  integer(c_int), parameter :: DFFT_ERROR_BAD_GRID = 3
  integer(c_int), parameter :: DFFT_ERROR_BAD_BUFFER = 4
  integer(c_int), parameter :: DFFT_ERROR_IN_PLACE = 5
  integer(c_int), parameter :: DFFT_ERROR_MEMORY = 6
  integer(c_int), parameter :: DFFT_ERROR_MPI = 7
  integer(c_int), parameter :: DFFT_ERROR_UNKNOWN_BLOCK = 8
  integer(c_int), parameter :: DFFT_ERROR_OTHER_RANK = 9
  integer(c_int), parameter :: DFFT_ERROR_INTERNAL = 10

  ! Real-to-real kinds (FFTW's numbers).
  integer(c_int), parameter :: DFFT_R2HC = 0
  integer(c_int), parameter :: DFFT_HC2R = 1
  integer(c_int), parameter :: DFFT_DHT = 2
  integer(c_int), parameter :: DFFT_REDFT00 = 3
  integer(c_int), parameter :: DFFT_REDFT01 = 4
  integer(c_int), parameter :: DFFT_REDFT10 = 5
  integer(c_int), parameter :: DFFT_REDFT11 = 6
  integer(c_int), parameter :: DFFT_RODFT00 = 7
  integer(c_int), parameter :: DFFT_RODFT01 = 8
  integer(c_int), parameter :: DFFT_RODFT10 = 9
  integer(c_int), parameter :: DFFT_RODFT11 = 10
  ! No transform along the axis (a partial transform).
  integer(c_int), parameter :: DFFT_IDENTITY = 11

  interface
    ! Plans (collective). grid_rank 0 and no grid_dims: the model's choice; grid_rank r: a
    ! balanced grid of rank r; grid_dims(1:grid_rank): explicit dimensions in Fortran's order
    ! (grid_dims(grid_rank) splits the slowest axis n(d)).
    integer(c_int) function dfft_plan_dft(d, n, howmany, comm, grid_rank, flags, plan, &
        grid_dims) bind(c, name='dfft_f_plan_dft')
      import :: c_int, c_ptrdiff_t, c_ptr
      integer(c_int), value :: d
      integer(c_ptrdiff_t), intent(in) :: n(*)
      integer(c_ptrdiff_t), value :: howmany
      integer(c_int), value :: comm, grid_rank, flags
      type(c_ptr), intent(out) :: plan
      integer(c_int), intent(in), optional :: grid_dims(*)
    end function

    integer(c_int) function dfftf_plan_dft(d, n, howmany, comm, grid_rank, flags, plan, &
        grid_dims) bind(c, name='dfftf_f_plan_dft')
      import :: c_int, c_ptrdiff_t, c_ptr
      integer(c_int), value :: d
      integer(c_ptrdiff_t), intent(in) :: n(*)
      integer(c_ptrdiff_t), value :: howmany
      integer(c_int), value :: comm, grid_rank, flags
      type(c_ptr), intent(out) :: plan
      integer(c_int), intent(in), optional :: grid_dims(*)
    end function

    integer(c_int) function dfft_plan_dft_r2c(d, n, howmany, comm, grid_rank, flags, plan, &
        grid_dims) bind(c, name='dfft_f_plan_dft_r2c')
      import :: c_int, c_ptrdiff_t, c_ptr
      integer(c_int), value :: d
      integer(c_ptrdiff_t), intent(in) :: n(*)
      integer(c_ptrdiff_t), value :: howmany
      integer(c_int), value :: comm, grid_rank, flags
      type(c_ptr), intent(out) :: plan
      integer(c_int), intent(in), optional :: grid_dims(*)
    end function

    integer(c_int) function dfftf_plan_dft_r2c(d, n, howmany, comm, grid_rank, flags, plan, &
        grid_dims) bind(c, name='dfftf_f_plan_dft_r2c')
      import :: c_int, c_ptrdiff_t, c_ptr
      integer(c_int), value :: d
      integer(c_ptrdiff_t), intent(in) :: n(*)
      integer(c_ptrdiff_t), value :: howmany
      integer(c_int), value :: comm, grid_rank, flags
      type(c_ptr), intent(out) :: plan
      integer(c_int), intent(in), optional :: grid_dims(*)
    end function

    integer(c_int) function dfft_plan_r2r(d, n, howmany, kinds, comm, grid_rank, flags, plan, &
        grid_dims) bind(c, name='dfft_f_plan_r2r')
      import :: c_int, c_ptrdiff_t, c_ptr
      integer(c_int), value :: d
      integer(c_ptrdiff_t), intent(in) :: n(*)
      integer(c_ptrdiff_t), value :: howmany
      integer(c_int), intent(in) :: kinds(*)
      integer(c_int), value :: comm, grid_rank, flags
      type(c_ptr), intent(out) :: plan
      integer(c_int), intent(in), optional :: grid_dims(*)
    end function

    integer(c_int) function dfftf_plan_r2r(d, n, howmany, kinds, comm, grid_rank, flags, plan, &
        grid_dims) bind(c, name='dfftf_f_plan_r2r')
      import :: c_int, c_ptrdiff_t, c_ptr
      integer(c_int), value :: d
      integer(c_ptrdiff_t), intent(in) :: n(*)
      integer(c_ptrdiff_t), value :: howmany
      integer(c_int), intent(in) :: kinds(*)
      integer(c_int), value :: comm, grid_rank, flags
      type(c_ptr), intent(out) :: plan
      integer(c_int), intent(in), optional :: grid_dims(*)
    end function

    ! This rank's element counts (all howmany fields) of the forward input and output.
    integer(c_int) function dfft_local_size(plan, in_count, out_count) bind(c)
      import :: c_int, c_ptrdiff_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_ptrdiff_t), intent(out) :: in_count, out_count
    end function

    ! Elements of this rank's one buffer of an in-place call (a plan made with
    ! DFFT_IN_PLACE; dfft_forward(plan, buf, buf)): complex for c2c, real for r2c and r2r. For
    ! r2c the first (contiguous) axis of n reals is padded to 2*(n/2+1) scalars per column,
    ! FFTW's in-place layout; the spectrum starts at the buffer's start afterwards.
    integer(c_int) function dfft_local_in_place(plan, count) bind(c)
      import :: c_int, c_ptrdiff_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_ptrdiff_t), intent(out) :: count
    end function

    ! This rank's block of the forward input: local_n(1:d), local_start(1:d) (0-based) and
    ! strides(1:d), Fortran's order. Element (i_1, ..., i_d), 1-based within the block, is at
    ! 1 + sum((i_k - 1) * strides(k)) in the block; the input layout is plain column-major
    ! (strides 1, local_n(1), ...).
    integer(c_int) function dfft_local_input(plan, local_n, local_start, strides) &
        bind(c, name='dfft_f_local_input')
      import :: c_int, c_ptrdiff_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_ptrdiff_t), intent(out) :: local_n(*), local_start(*), strides(*)
    end function

    ! This rank's block of the forward output (with DFFT_TRANSPOSED_OUT not column-major:
    ! index with the strides).
    integer(c_int) function dfft_local_output(plan, local_n, local_start, strides) &
        bind(c, name='dfft_f_local_output')
      import :: c_int, c_ptrdiff_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_ptrdiff_t), intent(out) :: local_n(*), local_start(*), strides(*)
    end function

    ! The grid: grid_rank and grid_dims(1:grid_rank) in Fortran's order (room for d - 1).
    integer(c_int) function dfft_grid(plan, grid_rank, grid_dims) bind(c, name='dfft_f_grid')
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), intent(out) :: grid_rank
      integer(c_int), intent(out) :: grid_dims(*)
    end function

    ! Transforms (collective): input and output are this rank's blocks, never the same array
    ! except on a plan made with DFFT_IN_PLACE (dfft_forward(plan, buf, buf), in place).
    integer(c_int) function dfft_forward(plan, input, output) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(*), dimension(*) :: input
      type(*), dimension(*) :: output
    end function

    integer(c_int) function dfft_backward(plan, input, output) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(*), dimension(*) :: input
      type(*), dimension(*) :: output
    end function

    ! The memory per rank in bytes that plans made afterwards may use (0, the default: no
    ! check; above it a constructor returns DFFT_ERROR_MEMORY). Local: call it on every rank.
    integer(c_int) function dfft_set_memory_limit(bytes) bind(c)
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: bytes
    end function

    ! How plans made afterwards split a batch over the ranks: G >= 1 groups of P/G ranks
    ! (1, the default: none), 0 the model's choice. Local: call it on every rank.
    integer(c_int) function dfft_plan_with_groups(groups) bind(c)
      import :: c_int
      integer(c_int), value :: groups
    end function

    ! Destroys a plan (collective; before MPI_Finalize).
    integer(c_int) function dfft_destroy(plan) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function

    ! The plan's blocks (collective; in one shared-memory window on one node): map them with
    ! c_f_pointer(block, array, [count]) and release with dfft_free.
    integer(c_int) function dfft_alloc_input(plan, block) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(c_ptr), intent(out) :: block
    end function

    integer(c_int) function dfft_alloc_output(plan, block) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(c_ptr), intent(out) :: block
    end function

    integer(c_int) function dfft_free(block) bind(c)
      import :: c_int, c_ptr
      type(c_ptr), value :: block
    end function

    ! The message of code (see the C function dfft_error_message), blank-padded into
    ! message(1:length): call dfft_error_message(code, message, len(message)).
    subroutine dfft_error_message(code, message, length) bind(c, name='dfft_f_error_message')
      import :: c_int, c_char
      integer(c_int), value :: code
      character(kind=c_char), intent(out) :: message(*)
      integer(c_int), value :: length
    end subroutine
  end interface
end module dfft
