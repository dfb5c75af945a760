//! `PFFT.alloc`: numpy arrays over blocks the Rust plan allocates (`fft_core::SharedBlock`),
//! in a shared-memory window over the plan's ranks when they are all on one node, so that
//! transforms between such arrays move rows between the ranks in place (no pack, no unpack).
//!
//! Freeing a window is collective, and Python frees an array whenever its last reference goes,
//! at moments that differ between ranks: an array's memory therefore stays with the plan when
//! the array goes, and is freed by `destroy` only when no array of any rank still uses any
//! block (agreed over the ranks), else left to the end of the process, like the memory of a
//! plan that Python merely drops.

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::SimpleCommunicator;
use numpy::ndarray::{ArrayViewMut, IxDyn};
use numpy::{Element, PyArrayDyn};
use pyo3::prelude::*;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

/// One block: the `SharedBlock` (type-erased), where its elements start, and whether an array
/// still uses it.
struct Held {
    block: Box<dyn Any + Send>,
    start: usize,
    lent: bool,
}

/// Every block a plan allocated, in allocation order (the same on every rank: allocating is
/// collective).
#[derive(Default)]
struct State {
    held: Vec<Held>,
    /// Set once the blocks are freed or given up: arrays that go later change nothing.
    closed: bool,
}

/// The blocks of one plan, shared with the arrays' owners.
#[derive(Default, Clone)]
pub struct Blocks(Arc<Mutex<State>>);

impl Blocks {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock is held cannot leave the state half-updated (every update
        // is one assignment or push), so a poisoned lock is still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the plan allocated any block (the same on every rank).
    pub fn any(&self) -> bool {
        !self.state().held.is_empty()
    }

    /// The allocation index of the block whose elements start at `start`, if any.
    pub fn index_of(&self, start: usize) -> Option<usize> {
        self.state().held.iter().position(|h| h.start == start)
    }

    /// Wraps `block` as a numpy array of `shape` (C order; its length is the block's), whose
    /// base object keeps the block lent until the array goes.
    pub fn lend<'py, E: Element + Send + 'static>(
        &self,
        py: Python<'py>,
        mut block: fft_core::SharedBlock<E>,
        shape: &[usize],
    ) -> PyResult<Bound<'py, PyAny>> {
        let ptr = block.as_mut_ptr();
        // SAFETY: `ptr` starts the block's `len` elements, `shape`'s product (the plan's local
        // array shape); the memory stays valid while the block is held by `State`, which
        // drops it only in `free`, once no array of any rank uses it, or never.
        let view = unsafe { ArrayViewMut::from_shape_ptr(IxDyn(shape), ptr) };
        let index = {
            let mut state = self.state();
            state.held.push(Held {
                block: Box::new(block),
                start: ptr as usize,
                lent: true,
            });
            state.held.len() - 1
        };
        let owner = Bound::new(
            py,
            BlockOwner {
                blocks: self.clone(),
                index,
            },
        )?;
        // SAFETY: the owner becomes the array's base object, so the array goes first; the
        // block's memory outlives the owner (see above) and is never reallocated.
        Ok(unsafe { PyArrayDyn::<E>::borrow_from_array(&view, owner.into_any()) }.into_any())
    }

    /// Frees the blocks if no array of any rank uses one, else gives them up (the process
    /// keeps their memory to its end). Collective: one `MPI_Allreduce` when blocks exist.
    pub fn free(&self, comm: &SimpleCommunicator) {
        let mut state = self.state();
        if state.closed || state.held.is_empty() {
            state.closed = true;
            return;
        }
        let lent = i32::from(state.held.iter().any(|h| h.lent));
        let mut anywhere = 0i32;
        comm.all_reduce_into(&lent, &mut anywhere, SystemOperation::max());
        state.closed = true;
        let held = std::mem::take(&mut state.held);
        drop(state);
        if anywhere == 0 {
            // Every rank drops the same blocks in the same order: the windows' collective frees
            // match.
            drop(held);
        } else {
            held.into_iter().for_each(|h| std::mem::forget(h.block));
        }
    }

    /// Gives the blocks up without freeing them (a plan dropped without `destroy`: freeing
    /// is collective, and other ranks may not be dropping theirs now).
    pub fn give_up(&self) {
        let mut state = self.state();
        state.closed = true;
        std::mem::take(&mut state.held)
            .into_iter()
            .for_each(|h| std::mem::forget(h.block));
    }
}

/// The base object of an array over a plan's block: returns the block to the plan when the
/// array goes.
#[pyclass(module = "dfft", name = "_PlanBlock", frozen)]
pub struct BlockOwner {
    blocks: Blocks,
    index: usize,
}

impl Drop for BlockOwner {
    fn drop(&mut self) {
        let mut state = self.blocks.state();
        if !state.closed {
            if let Some(h) = state.held.get_mut(self.index) {
                h.lent = false;
            }
        }
    }
}
