//! `dfft_alloc_input`, `dfft_alloc_output` and `dfft_free`: blocks the plan allocates (in one
//! shared-memory window with the other ranks' when all are on one node), kept alive by a
//! registry keyed by the address handed to the caller.

use crate::exec::plan_mut;
use crate::plan::DfftPlan;
use crate::status::{guard, Failure, Outcome, DFFT_ERROR_UNKNOWN_BLOCK};
use fft_core::with_any_plan;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// A live block and, for an empty one, the byte whose address stands for it (an empty block
/// has no address of its own, and two must never share one: freeing a shared block is
/// collective, so `dfft_free` must find exactly the block the caller means).
struct Entry {
    /// The `SharedBlock` of whatever element type, kept alive until `dfft_free`.
    _block: Box<dyn Send>,
    _placeholder: Option<Box<u8>>,
}

static BLOCKS: Mutex<Option<HashMap<usize, Entry>>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<HashMap<usize, Entry>>> {
    // A panic while holding the lock left the map consistent (inserts and removes are single
    // calls), so a poisoned lock is still usable.
    BLOCKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers `block` and returns the address the caller gets.
fn register(block: Box<dyn Send>, len: usize, data: *mut c_void) -> *mut c_void {
    let placeholder = (len == 0).then(|| Box::new(0u8));
    let address = placeholder
        .as_deref()
        .map_or(data, |p| p as *const u8 as *mut c_void);
    registry().get_or_insert_with(HashMap::new).insert(
        address as usize,
        Entry {
            _block: block,
            _placeholder: placeholder,
        },
    );
    address
}

impl DfftPlan {
    /// Allocates this rank's forward-input (`input`) or forward-output block; collective.
    fn alloc(&mut self, input: bool) -> Outcome<*mut c_void> {
        macro_rules! block {
            ($plan:expr) => {{
                if input {
                    let mut b = $plan.alloc_input()?;
                    let (len, ptr) = (b.len(), b.as_mut_ptr().cast());
                    register(Box::new(b), len, ptr)
                } else {
                    let mut b = $plan.alloc_output()?;
                    let (len, ptr) = (b.len(), b.as_mut_ptr().cast());
                    register(Box::new(b), len, ptr)
                }
            }};
        }
        Ok(with_any_plan!(&mut self.transform, p => block!(p)))
    }
}

/// Shared by both allocators.
///
/// # Safety
/// As `dfft_alloc_input`.
unsafe fn alloc(plan: *mut DfftPlan, block: *mut *mut c_void, input: bool) -> c_int {
    if !block.is_null() {
        // SAFETY: writable by the caller's contract.
        unsafe { block.write(std::ptr::null_mut()) };
    }
    guard(|| {
        if block.is_null() {
            return Err(Failure::null("block (the output argument)"));
        }
        // SAFETY: the caller's contract.
        let address = unsafe { plan_mut(plan) }?.alloc(input)?;
        // SAFETY: as above.
        unsafe { block.write(address) };
        Ok(())
    })
}

/// Allocates this rank's forward-input block (`dfft_local_size`'s `in_count` elements,
/// zeroed, aligned to a cache line) and writes its address to `*block`. When all of the
/// plan's ranks are on one node the blocks of every rank lie in one shared-memory window, and
/// transforms between such blocks move the rows that cross ranks in place (no pack or
/// unpack): the fastest way to run a plan. Collective over the plan's communicator. Release
/// with `dfft_free` (collective too when shared), before `MPI_Finalize`; the block may
/// outlive its plan. A rank whose block is empty gets a unique non-NULL address all the same.
///
/// # Safety
/// `plan` is NULL or a live plan; `block` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dfft_alloc_input(plan: *mut DfftPlan, block: *mut *mut c_void) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { alloc(plan, block, true) }
}

/// Allocates this rank's forward-output block (`out_count` elements), as `dfft_alloc_input`.
///
/// # Safety
/// As `dfft_alloc_input`.
#[no_mangle]
pub unsafe extern "C" fn dfft_alloc_output(plan: *mut DfftPlan, block: *mut *mut c_void) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe { alloc(plan, block, false) }
}

/// Releases a block from `dfft_alloc_input`/`dfft_alloc_output` (NULL: nothing to do).
/// Collective over the plan's communicator when the block is shared: free the blocks on every
/// rank in the same order. Any other pointer returns `DFFT_ERROR_UNKNOWN_BLOCK` and is left
/// alone.
///
/// # Safety
/// No dfft call may be using the block.
#[no_mangle]
pub unsafe extern "C" fn dfft_free(block: *mut c_void) -> c_int {
    guard(|| {
        if block.is_null() {
            return Ok(());
        }
        let entry = registry()
            .as_mut()
            .and_then(|blocks| blocks.remove(&(block as usize)));
        match entry {
            // Dropped outside the lock: freeing a shared window waits for the other ranks.
            Some(entry) => {
                drop(entry);
                Ok(())
            }
            None => Err(Failure::new(
                DFFT_ERROR_UNKNOWN_BLOCK,
                format!("dfft_free({block:p}): not a block from dfft_alloc_input/dfft_alloc_output, or freed already"),
            )),
        }
    })
}
