//! Element types that can be redistributed, with their MPI datatypes.

use mpi::ffi;
use num_complex::Complex;

/// A plain-old-data element with an equivalent predefined MPI datatype.
///
/// # Safety
/// `mpi_datatype` must describe exactly the memory of `Self`.
pub unsafe trait Element: bytemuck::Pod + Default + Send + Sync + 'static {
    /// The predefined MPI datatype of one element.
    fn mpi_datatype() -> ffi::MPI_Datatype;
}

macro_rules! element {
    ($t:ty, $dt:ident) => {
        // SAFETY: the predefined datatype has the same size and layout as the Rust type.
        unsafe impl Element for $t {
            fn mpi_datatype() -> ffi::MPI_Datatype {
                unsafe { ffi::$dt }
            }
        }
    };
}

element!(f32, RSMPI_FLOAT);
element!(f64, RSMPI_DOUBLE);
element!(Complex<f32>, RSMPI_FLOAT_COMPLEX);
element!(Complex<f64>, RSMPI_DOUBLE_COMPLEX);
element!(u8, RSMPI_UINT8_T);
element!(u32, RSMPI_UINT32_T);
element!(u64, RSMPI_UINT64_T);
element!(i32, RSMPI_INT32_T);
element!(i64, RSMPI_INT64_T);
