//! The program's own serial FFTW (`libfftw3`, `libfftw3f`), reached through the dynamic
//! linker. This library defines FFTW's generic plan calls (`fftw_execute`,
//! `fftw_destroy_plan`, …) so that they run its own plans; a plan it did not make goes to the
//! definition the dynamic linker finds after this library (`dlsym(RTLD_NEXT, …)`), the real
//! FFTW, so the program's serial transforms keep working.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A symbol of the real FFTW, looked up once and cached.
pub struct NextSymbol {
    name: &'static CStr,
    address: AtomicUsize,
}

impl NextSymbol {
    /// The symbol `name` (NUL-terminated).
    pub const fn new(name: &'static CStr) -> Self {
        Self {
            name,
            address: AtomicUsize::new(0),
        }
    }

    /// Its address in the next object that defines it, or `None` when no later object does
    /// (e.g. `fftw_plan_with_nthreads` in a program without FFTW's threads library).
    pub fn get(&self) -> Option<*mut c_void> {
        let cached = self.address.load(Ordering::Relaxed);
        if cached != 0 {
            return Some(cached as *mut c_void);
        }
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name only looks the symbol up,
        // starting after the object that holds this code.
        let found = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr() as *const c_char) };
        if found.is_null() {
            return None;
        }
        self.address.store(found as usize, Ordering::Relaxed);
        Some(found)
    }

    /// Its address; a program whose plan came from the real FFTW has it loaded, so a miss is
    /// a broken installation, reported and fatal.
    pub fn require(&self) -> *mut c_void {
        self.get().unwrap_or_else(|| {
            crate::fatal(&format!(
                "{} is not defined by any library loaded after libdfft_fftw3_mpi: link the \
                 program with FFTW (-lfftw3 -lfftw3f) after -ldfft_fftw3_mpi",
                self.name.to_string_lossy()
            ))
        })
    }

    /// The symbol's name.
    pub fn name(&self) -> &'static CStr {
        self.name
    }
}

/// Defines, for each listed FFTW function, a [`NextSymbol`] and a function of the same
/// signature that calls the real FFTW's definition.
macro_rules! next_functions {
    ($($vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)+) => {
        $(
            #[doc = concat!("Calls the real FFTW's `", stringify!($name), "`.")]
            ///
            /// # Safety
            /// FFTW's contract for this function.
            #[allow(non_snake_case, clippy::missing_safety_doc)]
            $vis unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                static SYMBOL: $crate::serial::NextSymbol = $crate::serial::NextSymbol::new(
                    // SAFETY: the literal ends with the NUL it needs.
                    unsafe { ::std::ffi::CStr::from_bytes_with_nul_unchecked(concat!(stringify!($name), "\0").as_bytes()) }
                );
                type F = unsafe extern "C" fn($($ty),*) $(-> $ret)?;
                // SAFETY: the symbol is FFTW's function of this signature (fftw3.h).
                let f: F = unsafe { ::std::mem::transmute::<*mut ::std::ffi::c_void, F>(SYMBOL.require()) };
                // SAFETY: the caller keeps FFTW's contract.
                unsafe { f($($arg),*) }
            }
        )+
    };
}
pub(crate) use next_functions;

/// `fftw_plan_with_nthreads` or its single-precision twin, when the program links FFTW's
/// threads library; `false` when it does not.
pub fn plan_with_nthreads(symbol: &NextSymbol, n: c_int) -> bool {
    let Some(f) = symbol.get() else {
        return false;
    };
    type F = unsafe extern "C" fn(c_int);
    // SAFETY: the symbol is FFTW's `void fftw_plan_with_nthreads(int)`.
    unsafe { std::mem::transmute::<*mut c_void, F>(f)(n) };
    true
}
