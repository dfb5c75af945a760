//! The BLACS of the ScaLAPACK the program links, reached through the dynamic linker: the
//! drop-in needs no BLACS of its own, so one library serves whatever ScaLAPACK build the
//! program uses, loaded first (`LD_PRELOAD`) or linked before it.

use mpi::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

type GridInfo = unsafe extern "C" fn(c_int, *mut c_int, *mut c_int, *mut c_int, *mut c_int);
type Get = unsafe extern "C" fn(c_int, c_int, *mut c_int);
type ToSys = unsafe extern "C" fn(c_int) -> ffi::MPI_Comm;

/// The BLACS calls the drop-in makes.
struct Blacs {
    gridinfo: GridInfo,
    get: Get,
    to_sys: ToSys,
}

/// `what` of `Cblacs_get` for the system handle of a context's own communicator
/// (`SGET_BLACSCONTXT`).
const BLACS_CONTEXT_HANDLE: c_int = 10;

fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr() as *const c_char) };
    (!p.is_null()).then_some(p)
}

fn blacs() -> Result<&'static Blacs, String> {
    static BLACS: OnceLock<Option<Blacs>> = OnceLock::new();
    BLACS
        .get_or_init(|| {
            let (g, t, s) = (
                symbol(c"Cblacs_gridinfo")?,
                symbol(c"Cblacs_get")?,
                symbol(c"Cblacs2sys_handle")?,
            );
            // SAFETY: the symbols are ScaLAPACK's C BLACS functions, whose signatures these
            // types spell (BLACS `Int` is C `int` in the builds this supports).
            unsafe {
                Some(Blacs {
                    gridinfo: std::mem::transmute::<*mut c_void, GridInfo>(g),
                    get: std::mem::transmute::<*mut c_void, Get>(t),
                    to_sys: std::mem::transmute::<*mut c_void, ToSys>(s),
                })
            }
        })
        .as_ref()
        .ok_or_else(|| {
            "the program has no BLACS (Cblacs_gridinfo, Cblacs_get, Cblacs2sys_handle): link \
             it with ScaLAPACK"
                .to_string()
        })
}

/// `(nprow, npcol, myrow, mycol)` of this process in context `ctxt`, or `None` when it is not
/// in the grid (`ctxt` −1, or coordinates out of the grid, as ScaLAPACK checks them).
pub fn grid_position(ctxt: c_int) -> Result<Option<(i32, i32, i32, i32)>, String> {
    if ctxt < 0 {
        return Ok(None);
    }
    let b = blacs()?;
    let (mut pr, mut pc, mut r, mut c) = (0, 0, -1, -1);
    // SAFETY: a query on a context handle; BLACS writes the four integers.
    unsafe { (b.gridinfo)(ctxt, &mut pr, &mut pc, &mut r, &mut c) };
    let inside = r >= 0 && c >= 0 && r < pr && c < pc;
    Ok(inside.then_some((pr, pc, r, c)))
}

/// The MPI communicator of the processes of context `ctxt` (BLACS's own; do not free it).
pub fn communicator(ctxt: c_int) -> Result<ffi::MPI_Comm, String> {
    let b = blacs()?;
    let mut handle = -1;
    // SAFETY: BLACS writes the system handle of the context's communicator.
    unsafe { (b.get)(ctxt, BLACS_CONTEXT_HANDLE, &mut handle) };
    if handle < 0 {
        return Err(format!("BLACS has no communicator for context {ctxt}"));
    }
    // SAFETY: the handle came from BLACS itself.
    Ok(unsafe { (b.to_sys)(handle) })
}
