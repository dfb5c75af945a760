//! [`SharedBlock`]: a rank's input or output block allocated by its plan, in a shared-memory
//! window over the plan's ranks when they are all on one node.
//!
//! A transform between blocks the caller allocated itself must move the rows that cross ranks
//! through messages: pack, move (or write into a shared window), unpack. When the caller's
//! blocks are themselves in one shared-memory window, a fused sweep reads the rows it needs
//! straight from the peers' blocks and writes its results straight into them
//! ([`redist::piecewise::window_runs`]): no pack, no unpack and two synchronizations per exchange
//! pair instead of two per piece. The plans recognize such blocks by address, agree over all
//! ranks on each call, and otherwise run exactly as with private blocks. A plan also moves its
//! own work buffers into windows, so that the steps that read or write those (a c2r backward
//! that keeps its input runs its first FFTs into one) move rows straight between the ranks
//! too: with its first such block, or already when it is made where some fused step reads
//! and writes only work buffers across the ranks (the transposed r2c slab's c2r backward):
//! that step then runs so between private blocks as well.

use redist::alloc::AlignedBuf;
use redist::transport::window::GroupWindow;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A shared-memory window holding one kind of block of every rank of a plan (its forward
/// input, or its forward output), region `q` for rank `q`.
pub(crate) struct BlockWindow {
    pub(crate) window: GroupWindow,
}

// SAFETY: the window's MPI calls (`sync`) are made only by the plan that allocated it, from
// the thread running one of its transforms (`&mut self`); a `SharedBlock` only hands out its
// own region's memory, under Rust's borrow rules.
unsafe impl Sync for BlockWindow {}

enum Storage<E> {
    /// This rank's region of a window, `len` elements from `ptr`.
    Window {
        /// Keeps the window (and with it the region) alive.
        window: Arc<BlockWindow>,
        ptr: *mut E,
        len: usize,
    },
    /// Private memory the plan allocated (one rank, or ranks on several nodes), on a cache
    /// line.
    Aligned(AlignedBuf<E>),
    /// Private memory from the caller's vector.
    Private(Vec<E>),
}

/// This rank's forward input or output block, allocated by the plan with
/// `alloc_input`/`alloc_output` (e.g. [`crate::FftPlan::alloc_input`]); dereferences to a
/// slice of the block's length (`input_len` or `output_len`), zeroed.
///
/// When all of the plan's ranks are on one node, the blocks of every rank lie in one
/// shared-memory window ([`SharedBlock::is_shared`]; an MPI-3 window, or for blocks of 2 MiB
/// and more a mapping on huge pages, see [`redist::transport::window`]), and transforms between such
/// blocks read and write the peers' rows in place: no pack, no unpack, no per-piece
/// synchronization. Pass them to `forward`/`backward` like any slice; a block of another
/// plan, or a call where some rank passes private memory, simply runs the message path
/// (except in the steps that read and write only the plan's work buffers, which move their
/// rows in place whatever blocks the caller passes).
///
/// Freeing a window is collective: drop the blocks on every rank alike (as the plans
/// themselves). Memory touched in a peer's block counts in this process's resident set size
/// (shared pages), not in what the node holds: the proportional set size (`Pss` in the
/// kernel's `smaps_rollup` of the process) says what each rank holds.
///
/// ```no_run
/// use fft_core::{FftOptions, FftPlan};
/// use num_complex::Complex;
/// let universe = mpi::initialize().unwrap();
/// let mut plan = FftPlan::<f64>::new(&universe.world(), &[64, 64, 64], FftOptions::default())
///     .unwrap();
/// let mut field = plan.alloc_input().unwrap();
/// let mut spectrum = plan.alloc_output().unwrap();
/// field.fill(Complex::new(1.0, 0.0));
/// plan.forward(&field, &mut spectrum).unwrap(); // rows move in place between the ranks
/// plan.backward(&spectrum, &mut field).unwrap();
/// ```
pub struct SharedBlock<E> {
    storage: Storage<E>,
}

// SAFETY: the block owns its region (no other process writes it outside the transforms of
// the plan, which borrow the block); the window handle is `Sync` as argued above.
unsafe impl<E: Send> Send for SharedBlock<E> {}
unsafe impl<E: Sync> Sync for SharedBlock<E> {}

impl<E> SharedBlock<E> {
    /// `len` default elements of private memory on a cache line.
    pub(crate) fn aligned(len: usize) -> Self
    where
        E: Default,
    {
        Self {
            storage: Storage::Aligned(AlignedBuf::new(len)),
        }
    }

    /// `len` elements of this rank's region of `window` (zeroed memory, large enough).
    pub(crate) fn in_window(window: Arc<BlockWindow>, len: usize) -> Self {
        assert!(len * std::mem::size_of::<E>() <= window.window.region_bytes());
        let ptr = window.window.own::<E>();
        Self {
            storage: Storage::Window { window, ptr, len },
        }
    }

    /// The window the block lies in, if any, shared (a count, not a copy).
    pub(crate) fn window_arc(&self) -> Option<Arc<BlockWindow>> {
        match &self.storage {
            Storage::Window { window, .. } => Some(Arc::clone(window)),
            Storage::Aligned(_) | Storage::Private(_) => None,
        }
    }

    /// Whether the block lies in a shared-memory window with its peers' (all of the plan's
    /// ranks on one node, more than one of them).
    pub fn is_shared(&self) -> bool {
        matches!(self.storage, Storage::Window { .. })
    }
}

/// A private block (what [`SharedBlock::is_shared`] calls not shared), e.g. for code that
/// takes plan-allocated blocks where the caller has a vector already.
impl<E> From<Vec<E>> for SharedBlock<E> {
    fn from(block: Vec<E>) -> Self {
        Self {
            storage: Storage::Private(block),
        }
    }
}

/// A private block in a buffer the caller allocated on a cache line.
impl<E> From<AlignedBuf<E>> for SharedBlock<E> {
    fn from(block: AlignedBuf<E>) -> Self {
        Self {
            storage: Storage::Aligned(block),
        }
    }
}

impl<E> Deref for SharedBlock<E> {
    type Target = [E];

    fn deref(&self) -> &[E] {
        match &self.storage {
            // SAFETY: `len` elements of this rank's region, alive as long as `window`.
            Storage::Window { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
            Storage::Aligned(b) => b,
            Storage::Private(v) => v,
        }
    }
}

impl<E> DerefMut for SharedBlock<E> {
    fn deref_mut(&mut self) -> &mut [E] {
        match &mut self.storage {
            // SAFETY: as in `deref`; `&mut self` makes this the only view of the region.
            Storage::Window { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(*ptr, *len)
            },
            Storage::Aligned(b) => b,
            Storage::Private(v) => v,
        }
    }
}

impl<E> std::fmt::Debug for SharedBlock<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBlock")
            .field("len", &self.len())
            .field("shared", &self.is_shared())
            .finish()
    }
}
