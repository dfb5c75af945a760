//! Long double (`fftwl_mpi_*`): refused. Each entry point of `fftw3-mpi.h`'s long-double
//! API exists, so a program linked against this library finds its symbols, and ends the job
//! with a message saying so when it calls one.

macro_rules! refuse {
    ($($name:ident),+ $(,)?) => { $(
        #[doc = concat!("`", stringify!($name), "`: refused (long double is not supported).")]
        #[no_mangle]
        pub extern "C" fn $name() {
            crate::fatal(concat!(
                stringify!($name),
                ": long double (fftwl_mpi_*) is not supported by dfft; use double or single \
                 precision, or link the program with FFTW's -lfftw3l_mpi instead"
            ))
        }
    )+ };
}

refuse!(
    fftwl_mpi_init,
    fftwl_mpi_cleanup,
    fftwl_mpi_local_size_many_transposed,
    fftwl_mpi_local_size_many,
    fftwl_mpi_local_size_transposed,
    fftwl_mpi_local_size,
    fftwl_mpi_local_size_many_1d,
    fftwl_mpi_local_size_1d,
    fftwl_mpi_local_size_2d,
    fftwl_mpi_local_size_2d_transposed,
    fftwl_mpi_local_size_3d,
    fftwl_mpi_local_size_3d_transposed,
    fftwl_mpi_plan_many_transpose,
    fftwl_mpi_plan_transpose,
    fftwl_mpi_plan_many_dft,
    fftwl_mpi_plan_dft,
    fftwl_mpi_plan_dft_1d,
    fftwl_mpi_plan_dft_2d,
    fftwl_mpi_plan_dft_3d,
    fftwl_mpi_plan_many_r2r,
    fftwl_mpi_plan_r2r,
    fftwl_mpi_plan_r2r_2d,
    fftwl_mpi_plan_r2r_3d,
    fftwl_mpi_plan_many_dft_r2c,
    fftwl_mpi_plan_dft_r2c,
    fftwl_mpi_plan_dft_r2c_2d,
    fftwl_mpi_plan_dft_r2c_3d,
    fftwl_mpi_plan_many_dft_c2r,
    fftwl_mpi_plan_dft_c2r,
    fftwl_mpi_plan_dft_c2r_2d,
    fftwl_mpi_plan_dft_c2r_3d,
    fftwl_mpi_gather_wisdom,
    fftwl_mpi_broadcast_wisdom,
    fftwl_mpi_execute_dft,
    fftwl_mpi_execute_dft_r2c,
    fftwl_mpi_execute_dft_c2r,
    fftwl_mpi_execute_r2r,
);
