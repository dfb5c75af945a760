//! The plans this library made. `fftw_plan` handles from FFTW's generic calls are looked up
//! here: a hit is run by this library, a miss belongs to the program's serial FFTW.

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{OnceLock, RwLock};

/// What FFTW's generic calls do with one of this library's plans: a distributed transform
/// ([`crate::plan::MpiPlan`]) or a distributed transpose ([`crate::transpose::TransposePlan`]).
pub trait Plan {
    /// The plan on other arrays (FFTW's new-array execute functions); collective.
    fn execute_on(&mut self, input: *mut c_void, output: *mut c_void);
    /// The arrays given at planning (what `fftw_execute` transforms).
    fn arrays(&self) -> (*mut c_void, *mut c_void);
    /// A one-line description (`fftw_print_plan`).
    fn describe(&self) -> String;
    /// Additions, multiplications and fused multiply-adds of the whole transform
    /// (`fftw_flops`).
    fn flops(&self) -> (f64, f64, f64);
}

/// A registered plan, boxed once more so that the handle is a thin pointer.
type Entry = Box<dyn Plan>;

fn plans() -> &'static RwLock<HashSet<usize>> {
    static PLANS: OnceLock<RwLock<HashSet<usize>>> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

/// Keeps `plan` and returns its handle.
pub fn register(plan: Entry) -> *mut c_void {
    let handle = Box::into_raw(Box::new(plan)) as *mut c_void;
    plans()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(handle as usize);
    handle
}

/// Whether `handle` is one of this library's plans.
pub fn is_ours(handle: *const c_void) -> bool {
    !handle.is_null()
        && plans()
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(handle as usize))
}

/// Runs `f` on this library's plan behind `handle`, or returns `None` when it is not one.
pub fn with_plan<R>(handle: *mut c_void, f: impl FnOnce(&mut dyn Plan) -> R) -> Option<R> {
    if !is_ours(handle) {
        return None;
    }
    // SAFETY: the handle came from `register` and has not been removed; FFTW's contract (a
    // plan is used by one thread at a time) keeps this the only reference while `f` runs.
    let entry = unsafe { &mut *(handle as *mut Entry) };
    Some(f(entry.as_mut()))
}

/// Forgets the plan behind `handle` and returns it, or `None` when it is not one of ours.
pub fn unregister(handle: *mut c_void) -> Option<Entry> {
    let removed = plans()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(handle as usize));
    // SAFETY: a handle `register` made from a box, now removed, so owned here alone.
    removed.then(|| *unsafe { Box::from_raw(handle as *mut Entry) })
}
