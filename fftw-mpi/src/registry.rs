//! The plans this library made. `fftw_plan` handles from FFTW's generic calls are looked up
//! here: a hit is run by this library, a miss belongs to the program's serial FFTW.

use crate::plan::MpiPlan;
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{OnceLock, RwLock};

fn plans() -> &'static RwLock<HashSet<usize>> {
    static PLANS: OnceLock<RwLock<HashSet<usize>>> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

/// Keeps `plan` and returns its handle.
pub fn register(plan: MpiPlan) -> *mut c_void {
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
pub fn with_plan<R>(handle: *mut c_void, f: impl FnOnce(&mut MpiPlan) -> R) -> Option<R> {
    if !is_ours(handle) {
        return None;
    }
    // SAFETY: the handle came from `register` and has not been removed; FFTW's contract (a
    // plan is used by one thread at a time) keeps this the only reference while `f` runs.
    Some(f(unsafe { &mut *(handle as *mut MpiPlan) }))
}

/// Forgets the plan behind `handle` and returns it, or `None` when it is not one of ours.
pub fn unregister(handle: *mut c_void) -> Option<Box<MpiPlan>> {
    let removed = plans()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(handle as usize));
    // SAFETY: a handle `register` made from a box, now removed, so owned here alone.
    removed.then(|| unsafe { Box::from_raw(handle as *mut MpiPlan) })
}
