//! Halo (ghost-cell) exchange on any layout of a plan: each rank's block extended by `w_a`
//! cells on both sides of every axis `a`, the extra cells filled from the neighbours' blocks
//! (periodic) or with a fill value past the global boundary, in one collective call, for
//! finite-difference terms next to spectral ones.
//!
//! A [`HaloPlan`] is made once per layout and widths (collective); [`HaloPlan::alloc`] gives
//! a [`HaloArray`], this rank's extended block, and [`HaloPlan::exchange`] fills its halo from
//! the interiors of every rank's array in place. The result is exactly
//! `numpy.pad(x, w, mode="wrap")` (or `mode="constant"` with the fill value) sliced to the
//! rank's block widened by `w`: widths larger than a neighbour's block, or than the axis,
//! take cells from several ranks, wrapping as often as needed, and ranks that own nothing get
//! a block of halo only.
//!
//! When all ranks are on one node, [`HaloPlan::alloc`] places every rank's array in one
//! shared-memory window, and an exchange between such arrays copies each halo cell once,
//! straight from the neighbour's interior, between two synchronizations; otherwise the halo
//! cells travel through one `MPI_Alltoallv` (packed, moved, unpacked), as they do for arrays
//! the caller allocated. Both give the same bits.
//!
//! ```no_run
//! use fft_core::halo::{Boundary, HaloPlan};
//! use fft_core::{Complex, FftOptions, FftPlan};
//! let universe = fft_core::mpi::initialize().unwrap();
//! let plan = FftPlan::<f64>::new(&universe.world(), &[64, 48, 40], FftOptions::default()).unwrap();
//! let mut halo = HaloPlan::for_input(&plan, &[2, 2, 2], Boundary::Periodic).unwrap();
//! let mut u = halo.alloc().unwrap(); // this rank's block plus 2 cells on each side
//! u.interior_mut().fill(Complex::new(1.0, 0.0));
//! halo.exchange(&mut u).unwrap(); // collective: the halo cells from the neighbours
//! let extended = u.view(); // logical order, shape local + 4 per axis
//! # let _ = extended;
//! ```

mod boxes;

use crate::error::{FftError, Result};
use crate::pencil_array::PencilArray;
use crate::shared::{BlockWindow, SharedBlock};
use crate::Transform;
use boxes::{copy_box, fill_box, strides_in, Edge, Extents, HaloBox};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder, SliceInfoElem};
use redist::alloc::AlignedBuf;
use redist::transport::PeerCounts;
use redist::{Element, Layout};
use std::sync::{Arc, Weak};

/// What the halo holds past the global boundary of an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary<S> {
    /// The array repeats: the cells past one end come from the other (`numpy.pad` `"wrap"`).
    Periodic,
    /// Every cell past the boundary holds this value (`numpy.pad` `"constant"`). Every rank
    /// must pass the same value.
    Fill(S),
}

/// A halo exchange planned for one layout, widths and boundary (see the [module
/// docs](self)).
pub struct HaloPlan<S: Element> {
    comm: SimpleCommunicator,
    extents: Extents,
    rank: usize,
    fields: usize,
    fill: Option<S>,
    /// Boxes filled from this rank's own block, or with the fill value.
    local: Vec<HaloBox>,
    /// The boxes of other ranks' halos that this rank's block fills (their geometry, the
    /// source start in this rank's block), and the boxes of this rank's halo that others
    /// fill, each in peer order, boxes in the order of the receiver's list.
    sends: Vec<HaloBox>,
    recvs: Vec<HaloBox>,
    counts: PeerCounts,
    send: AlignedBuf<S>,
    recv: AlignedBuf<S>,
    /// The windows of the arrays this plan allocated.
    windows: Vec<Weak<BlockWindow>>,
    /// Planned once so that an exchange allocates nothing: the layout's memory order, this
    /// rank's extended strides, each sent and received box's packed strides, and each
    /// received box's source rank's extended strides and length (for the shared path).
    order: Vec<usize>,
    strides: Vec<usize>,
    send_dense: Vec<Vec<usize>>,
    recv_dense: Vec<Vec<usize>>,
    recv_src: Vec<(Vec<usize>, usize)>,
}

/// This rank's block of a distributed array extended by a halo: `fields` extended blocks one
/// after another, each in the layout's memory order over the extended shape (the local shape
/// plus twice the width per axis). Made by [`HaloPlan::alloc`] or
/// [`HaloArray::private`]; indexed in logical axis order by [`HaloArray::view`], whose
/// index `i` along axis `a` is global index `local_slice()[a].start − w_a + i` (modulo the
/// axis length, for a periodic halo).
///
/// An array in a shared-memory window is freed collectively: drop such arrays on every rank
/// alike, in the same order (as [`crate::SharedBlock`]s).
pub struct HaloArray<S> {
    block: SharedBlock<S>,
    layout: Layout,
    rank: usize,
    fields: usize,
    widths: Vec<usize>,
    shape: Vec<usize>,
    strides: Vec<usize>,
}

impl<S: Element> HaloPlan<S> {
    /// Plans the halo exchange of `fields` blocks of `layout` (one after another, as a
    /// plan's batch) with `widths[a]` cells on both sides of axis `a`, over `comm`, whose
    /// rank `q` holds the layout's block `q` (a plan's `grid().communicator()`).
    /// Collective. Errors unless there is one width per axis, `comm` has the layout's
    /// number of ranks, and the extended blocks fit in memory's address range.
    pub fn new<C: Communicator>(
        comm: &C,
        layout: &Layout,
        fields: usize,
        widths: &[usize],
        boundary: Boundary<S>,
    ) -> Result<Self> {
        let checked = check_args(comm, layout, fields, widths);
        agree_args(comm, layout, fields, widths, &boundary, checked)?;
        let ranks = layout.grid().ranks();
        let (edge, fill) = match boundary {
            Boundary::Periodic => (Edge::Periodic, None),
            Boundary::Fill(v) => (Edge::Fill, Some(v)),
        };
        let extents = Extents::new(layout, widths, edge);
        let rank = comm.rank() as usize;
        let mine = extents.boxes(rank, false);
        let from_peer = |b: &HaloBox| b.src.as_ref().is_some_and(|(p, _)| *p != rank);
        let local: Vec<HaloBox> = mine.iter().filter(|b| !from_peer(b)).cloned().collect();
        let mut recvs: Vec<HaloBox> = mine.into_iter().filter(from_peer).collect();
        recvs.sort_by_key(|b| b.src.as_ref().map(|(p, _)| *p));
        let mut sends = Vec::new();
        let (mut send_counts, mut recv_counts) = (vec![0; ranks], vec![0; ranks]);
        for p in (0..ranks).filter(|&p| p != rank) {
            for b in extents.boxes(p, false) {
                if b.src.as_ref().is_some_and(|(s, _)| *s == rank) {
                    send_counts[p] += b.elements() * fields;
                    sends.push(b);
                }
            }
        }
        for b in &recvs {
            let p = b.src.as_ref().expect("received boxes have a source").0;
            recv_counts[p] += b.elements() * fields;
        }
        let displs = |counts: &[usize]| -> Vec<usize> {
            (counts.iter())
                .scan(0, |at, c| {
                    let start = *at;
                    *at += c;
                    Some(start)
                })
                .collect()
        };
        let (send_len, recv_len) = (send_counts.iter().sum(), recv_counts.iter().sum());
        let (send_displs, recv_displs) = (displs(&send_counts), displs(&recv_counts));
        let counts = PeerCounts::new(send_counts, send_displs, recv_counts, recv_displs);
        if !counts.fits_alltoallv() {
            // Every rank's counts come from the one agreed geometry, so all refuse alike.
            return Err(FftError::BadOptions {
                shape: layout.global_shape().to_vec(),
                reason: format!(
                    "a halo of widths {widths:?} sends more than MPI's 2^31 elements to one rank"
                ),
            });
        }
        let order = layout.memory_order().axes().to_vec();
        let dense = |boxes: &[HaloBox]| -> Vec<Vec<usize>> {
            boxes.iter().map(|b| strides_in(&b.len, &order)).collect()
        };
        let (send_dense, recv_dense) = (dense(&sends), dense(&recvs));
        let recv_src = (recvs.iter())
            .map(|b| {
                let p = b.src.as_ref().expect("received boxes have a source").0;
                (extents.strides(p), extents.len(p))
            })
            .collect();
        let strides = extents.strides(rank);
        Ok(Self {
            comm: comm.duplicate(),
            extents,
            rank,
            fields,
            fill,
            local,
            sends,
            recvs,
            counts,
            send: AlignedBuf::new(send_len),
            recv: AlignedBuf::new(recv_len),
            windows: Vec::new(),
            order,
            strides,
            send_dense,
            recv_dense,
            recv_src,
        })
    }

    /// The halo exchange of `plan`'s forward-input layout (its batch of fields).
    /// Collective.
    pub fn for_input<P>(plan: &P, widths: &[usize], boundary: Boundary<S>) -> Result<Self>
    where
        P: Transform<In = S>,
    {
        let comm = plan.grid().communicator();
        Self::new(comm, plan.input_layout(), plan.batch(), widths, boundary)
    }

    /// The halo exchange of `plan`'s forward-output (spectral) layout. Collective.
    pub fn for_output<P>(plan: &P, widths: &[usize], boundary: Boundary<S>) -> Result<Self>
    where
        P: Transform<Out = S>,
    {
        let comm = plan.grid().communicator();
        Self::new(comm, plan.output_layout(), plan.batch(), widths, boundary)
    }

    /// The layout (one field).
    pub fn layout(&self) -> &Layout {
        self.extents.layout()
    }

    /// The width per axis.
    pub fn widths(&self) -> &[usize] {
        self.extents.widths()
    }

    /// This rank's extended shape (one field), logical order.
    pub fn extended_shape(&self) -> Vec<usize> {
        self.extents.shape(self.rank)
    }

    /// Elements of halo cells this rank receives from other ranks per exchange (all fields),
    /// and elements it sends them.
    pub fn message_elements(&self) -> (usize, usize) {
        (self.recv.len(), self.send.len())
    }

    /// A zeroed extended array for this rank: in one shared-memory window with every other
    /// rank's when all are on one node (more than one), else private. Collective.
    pub fn alloc(&mut self) -> Result<HaloArray<S>> {
        let len = self.fields * self.extents.len(self.rank);
        let most = (0..self.layout().grid().ranks())
            .map(|q| self.fields * self.extents.len(q))
            .max()
            .unwrap_or(0);
        let bytes = most * std::mem::size_of::<S>();
        let window = match self.comm.size() {
            1 => None,
            _ => redist::transport::window::GroupWindow::new(&self.comm, bytes)?,
        };
        let block = match window {
            None => SharedBlock::aligned(len),
            Some(window) => {
                self.windows.retain(|w| w.strong_count() > 0);
                let window = Arc::new(BlockWindow { window });
                self.windows.push(Arc::downgrade(&window));
                SharedBlock::in_window(window, len)
            }
        };
        Ok(HaloArray::with_block(self, block))
    }

    /// Fills the halo of `array` (this rank's extended block, its interior holding the
    /// block) from every rank's interior, in place. Collective; allocates nothing. Arrays
    /// that [`HaloPlan::alloc`] placed in one window on every rank move each cell once,
    /// straight from the neighbour; any other array goes through one `MPI_Alltoallv`.
    /// Errors on every rank when any rank's array does not fit the plan.
    pub fn exchange(&mut self, array: &mut HaloArray<S>) -> Result<()> {
        let checked = self.check(array);
        self.exchange_checked(array, checked)
    }

    /// [`HaloPlan::exchange`] once this rank's arguments are `checked`: one all-reduce agrees
    /// both whether every rank's were right and whether every array lies in this plan's
    /// window, so no rank returns early while the others wait in the exchange.
    fn exchange_checked(&mut self, array: &mut HaloArray<S>, checked: Result<()>) -> Result<()> {
        let shared = checked.as_ref().ok().and_then(|_| self.window_of(array));
        let failed = if checked.is_err() {
            self.rank as u64
        } else {
            u64::MAX
        };
        let mine = [failed, u64::from(shared.is_some())];
        let mut all = [0u64; 2];
        (self.comm).all_reduce_into(&mine[..], &mut all[..], SystemOperation::min());
        checked?;
        if all[0] != u64::MAX {
            return Err(refused_elsewhere(all[0]));
        }
        match shared {
            Some(window) if all[1] == 1 => self.exchange_shared(array, &window),
            _ => self.exchange_messages(array),
        }
    }

    /// Fills the halo of `data`, this rank's extended block held by the caller (all fields,
    /// each in the layout's memory order over [`HaloPlan::extended_shape`], as a
    /// [`HaloArray`] holds it; C order for a layout in natural order), whose interior holds
    /// the block: only the halo cells are written, through one `MPI_Alltoallv` (the cells
    /// from other ranks) and copies within `data`. The in-place form for arrays allocated
    /// with their halo by the caller (numpy, C). Collective; allocates nothing. Errors on
    /// every rank unless every rank's `data` has its extended block's length.
    pub fn exchange_slice(&mut self, data: &mut [S]) -> Result<()> {
        let want = self.fields * self.extents.len(self.rank);
        let checked = if data.len() == want {
            Ok(())
        } else {
            Err(FftError::ArrayMismatch {
                array: "halo",
                reason: format!(
                    "the plan extends {} field(s) of local shape {:?} by widths {:?} on rank {}: {want} elements, the slice holds {}",
                    self.fields,
                    self.layout().local_shape(self.rank),
                    self.widths(),
                    self.rank,
                    data.len()
                ),
            })
        };
        let failed = if checked.is_err() {
            self.rank as u64
        } else {
            u64::MAX
        };
        let mut first = u64::MAX;
        (self.comm).all_reduce_into(&failed, &mut first, SystemOperation::min());
        checked?;
        if first != u64::MAX {
            return Err(refused_elsewhere(first));
        }
        self.exchange_messages_in(data.as_mut_ptr())
    }

    /// Copies `u` (this rank's block of the plan's layout, all fields) into the interior of
    /// `array` and fills its halo ([`HaloPlan::exchange`]). Collective.
    pub fn exchange_from(&mut self, u: &PencilArray<S>, array: &mut HaloArray<S>) -> Result<()> {
        let checked = if u.layout() != self.layout()
            || u.fields() != self.fields
            || u.rank() != self.rank
        {
            Err(FftError::ArrayMismatch {
                array: "input",
                reason: format!(
                    "the halo plan is for {} field(s) of global shape {:?} on rank {}, the array holds {} of {:?} on rank {}",
                    self.fields,
                    self.layout().global_shape(),
                    self.rank,
                    u.fields(),
                    u.global_shape(),
                    u.rank()
                ),
            })
        } else {
            self.check(array)
        };
        if checked.is_ok() {
            array.set_interior(u.as_slice());
        }
        self.exchange_checked(array, checked)
    }

    /// Errors unless `array` is this plan's shape on this rank.
    fn check(&self, array: &HaloArray<S>) -> Result<()> {
        let same = array.layout == *self.layout()
            && array.rank == self.rank
            && array.fields == self.fields
            && array.widths == self.widths();
        if same {
            return Ok(());
        }
        Err(FftError::ArrayMismatch {
            array: "halo",
            reason: format!(
                "the plan extends {} field(s) of global shape {:?} by widths {:?} on rank {}, the array {} of {:?} by {:?} on rank {}",
                self.fields,
                self.layout().global_shape(),
                self.widths(),
                self.rank,
                array.fields,
                array.layout.global_shape(),
                array.widths,
                array.rank
            ),
        })
    }

    /// The window `array` lies in, when this plan allocated it there.
    fn window_of(&self, array: &HaloArray<S>) -> Option<Arc<BlockWindow>> {
        let window = array.block.window_arc()?;
        let ours =
            (self.windows.iter()).any(|w| w.upgrade().is_some_and(|w| Arc::ptr_eq(&w, &window)));
        ours.then_some(window)
    }

    /// The offset of a box start `start` (an index in a rank's block, so past the halo) in
    /// that rank's extended block of `strides`.
    fn interior_offset(&self, start: &[usize], strides: &[usize]) -> usize {
        (start.iter().zip(self.widths()).zip(strides))
            .map(|((s, w), st)| (s + w) * st)
            .sum()
    }

    /// The boxes filled from this rank's own block or with the fill value, of every field.
    fn local_boxes(&self, data: *mut S, ext_len: usize) {
        let (order, strides) = (&self.order[..], &self.strides[..]);
        for f in 0..self.fields {
            // SAFETY (both arms): every box lies inside this rank's extended block `f` (the
            // pure planner's boxes tile it), and a box copied from the interior never
            // overlaps the halo box it fills.
            let base = unsafe { data.add(f * ext_len) };
            for b in &self.local {
                let dst = unsafe { base.add(offset(&b.dst, strides)) };
                match (&b.src, self.fill) {
                    (Some((_, start)), _) => unsafe {
                        let src = base.add(self.interior_offset(start, strides));
                        copy_box((src, strides), (dst, strides), &b.len, order);
                    },
                    (None, Some(value)) => unsafe { fill_box((dst, strides), &b.len, value) },
                    (None, None) => unreachable!("a periodic halo has no filled box"),
                }
            }
        }
    }

    /// The exchange through messages: pack, one `MPI_Alltoallv`, unpack.
    fn exchange_messages(&mut self, array: &mut HaloArray<S>) -> Result<()> {
        self.exchange_messages_in(array.block.as_mut_ptr())
    }

    /// [`HaloPlan::exchange_messages`] on this rank's extended blocks at `data` (every field,
    /// at the plan's extended strides).
    fn exchange_messages_in(&mut self, data: *mut S) -> Result<()> {
        let (order, strides) = (&self.order[..], &self.strides[..]);
        let ext_len = self.extents.len(self.rank);
        let mut at = 0;
        for (b, dense) in self.sends.iter().zip(&self.send_dense) {
            let start = &b.src.as_ref().expect("sent boxes have a source").1;
            for f in 0..self.fields {
                // SAFETY: the box lies in this rank's block `f`, the packed box in the send
                // buffer (sized for every box of every field).
                unsafe {
                    let src = data.add(f * ext_len + self.interior_offset(start, strides));
                    let dst = self.send.as_mut_ptr().add(at);
                    copy_box((src, strides), (dst, dense), &b.len, order);
                }
                at += b.elements();
            }
        }
        (self.counts).alltoallv(self.comm.as_raw(), &self.send, &mut self.recv)?;
        let mut at = 0;
        for (b, dense) in self.recvs.iter().zip(&self.recv_dense) {
            for f in 0..self.fields {
                // SAFETY: as for packing, the other way.
                unsafe {
                    let src = self.recv.as_ptr().add(at);
                    let dst = data.add(f * ext_len + offset(&b.dst, strides));
                    copy_box((src, dense), (dst, strides), &b.len, order);
                }
                at += b.elements();
            }
        }
        self.local_boxes(data, ext_len);
        Ok(())
    }

    /// The exchange through the shared window: every rank's interior visible, each halo box
    /// copied straight from its source rank's region, and a second synchronization so that
    /// no rank changes its interior while a peer still reads it.
    fn exchange_shared(&mut self, array: &mut HaloArray<S>, window: &BlockWindow) -> Result<()> {
        let (order, strides) = (&self.order[..], &self.strides[..]);
        let ext_len = self.extents.len(self.rank);
        let data = array.block.as_mut_ptr();
        let region = window.window.region_len::<S>();
        let base = window.window.base::<S>();
        window.window.sync()?;
        for (b, (src_strides, p_len)) in self.recvs.iter().zip(&self.recv_src) {
            let (p, start) = b.src.as_ref().expect("received boxes have a source");
            let (src_strides, p_len) = (&src_strides[..], *p_len);
            for f in 0..self.fields {
                // SAFETY: the source box lies in the interior of rank `p`'s extended block
                // `f`, in its region of the window, which no rank writes until the second
                // synchronization below; the destination box in this rank's halo.
                unsafe {
                    let at = self.interior_offset(start, src_strides);
                    let src = base.add(p * region + f * p_len + at);
                    let dst = data.add(f * ext_len + offset(&b.dst, strides));
                    copy_box((src, src_strides), (dst, strides), &b.len, order);
                }
            }
        }
        self.local_boxes(data, ext_len);
        window.window.sync()?;
        Ok(())
    }
}

/// This rank's own checks of [`HaloPlan::new`]'s arguments, before any agreement.
fn check_args<C: Communicator>(
    comm: &C,
    layout: &Layout,
    fields: usize,
    widths: &[usize],
) -> Result<()> {
    let d = layout.ndim();
    let bad = |reason: String| FftError::BadOptions {
        shape: layout.global_shape().to_vec(),
        reason,
    };
    if widths.len() != d {
        return Err(bad(format!(
            "a halo needs one width per axis: {} widths {widths:?} for {d} axes",
            widths.len()
        )));
    }
    if fields == 0 {
        return Err(bad("a halo needs at least one field, got 0".into()));
    }
    let ranks = layout.grid().ranks();
    if comm.size() as usize != ranks {
        return Err(bad(format!(
            "the communicator has {} ranks, the layout {ranks}",
            comm.size()
        )));
    }
    let widened: Vec<usize> = (layout.global_shape().iter().zip(widths))
        .map(|(n, w)| w.checked_mul(2).and_then(|w2| w2.checked_add(*n)))
        .collect::<Option<_>>()
        .ok_or_else(|| bad(format!("halo widths {widths:?} overflow")))?;
    let total = redist::layout::check_shape(&widened)?;
    total.checked_mul(fields).ok_or_else(|| {
        bad(format!(
            "{fields} fields of extended shape {widened:?} overflow"
        ))
    })?;
    Ok(())
}

/// Agrees over `comm` that every rank's arguments passed its own checks and that all ranks
/// passed the same widths, field count, boundary kind and layout (a mismatch would plan
/// exchanges that do not meet): one `MPI_Allreduce`, then the same refusal on every rank
/// (its own error where it had one).
fn agree_args<C: Communicator, S>(
    comm: &C,
    layout: &Layout,
    fields: usize,
    widths: &[usize],
    boundary: &Boundary<S>,
    checked: Result<()>,
) -> Result<()> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (widths, fields, matches!(boundary, Boundary::Periodic)).hash(&mut h);
    (
        layout.global_shape(),
        layout.grid().dims(),
        layout.memory_order().axes(),
    )
        .hash(&mut h);
    let key = h.finish();
    let failed = if checked.is_err() {
        comm.rank() as u64
    } else {
        u64::MAX
    };
    let mine = [failed, key, !key];
    let mut all = [0u64; 3];
    comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::min());
    checked?;
    if all[0] != u64::MAX {
        return Err(refused_elsewhere(all[0]));
    }
    if all[1] != !all[2] {
        return Err(FftError::BadOptions {
            shape: layout.global_shape().to_vec(),
            reason: format!(
                "the ranks passed different halo widths, field counts, boundaries or layouts (this rank: widths {widths:?}, {fields} field(s)); every rank must pass the same"
            ),
        });
    }
    Ok(())
}

/// The error of a rank whose own arguments were right when rank `first`'s were not.
fn refused_elsewhere(first: u64) -> FftError {
    FftError::ArrayMismatch {
        array: "halo",
        reason: format!("rank {first}'s arguments were refused (see that rank's error)"),
    }
}

/// The offset of index `index` at `strides`.
fn offset(index: &[usize], strides: &[usize]) -> usize {
    index.iter().zip(strides).map(|(i, s)| i * s).sum()
}

impl<S: Element> HaloArray<S> {
    fn with_block(plan: &HaloPlan<S>, block: SharedBlock<S>) -> Self {
        Self {
            block,
            layout: plan.layout().clone(),
            rank: plan.rank,
            fields: plan.fields,
            widths: plan.widths().to_vec(),
            shape: plan.extended_shape(),
            strides: plan.extents.strides(plan.rank),
        }
    }

    /// A zeroed extended array of `plan` in private memory (its exchanges go through
    /// messages).
    pub fn private(plan: &HaloPlan<S>) -> Self {
        let len = plan.fields * plan.extents.len(plan.rank);
        Self::with_block(plan, SharedBlock::aligned(len))
    }

    /// Whether the array lies in a shared-memory window with its peers'.
    pub fn is_shared(&self) -> bool {
        self.block.is_shared()
    }

    /// The extended shape (one field), logical order.
    pub fn extended_shape(&self) -> &[usize] {
        &self.shape
    }

    /// The halo width per axis.
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// The global index range per axis of this rank's block (the interior).
    pub fn local_slice(&self) -> Vec<std::ops::Range<usize>> {
        self.layout.global_ranges(self.rank)
    }

    /// The raw buffer: `fields` extended blocks, each in the layout's memory order.
    pub fn as_slice(&self) -> &[S] {
        &self.block
    }

    /// The raw buffer, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [S] {
        &mut self.block
    }

    /// Shape and strides of the logical view (a leading field axis when there are several).
    fn view_shape(&self) -> (Vec<usize>, Vec<usize>) {
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        if shape.contains(&0) {
            // An empty block (no width along an axis this rank owns nothing of): ndarray
            // wants the strides of an empty array to address nothing.
            strides.fill(0);
        }
        if self.fields > 1 {
            shape.insert(0, self.fields);
            strides.insert(0, self.shape.iter().product());
        }
        (shape, strides)
    }

    /// The extended block(s) in logical axis order (a leading field axis for several).
    pub fn view(&self) -> ArrayViewD<'_, S> {
        let (shape, strides) = self.view_shape();
        ArrayViewD::from_shape(IxDyn(&shape).strides(IxDyn(&strides)), &self.block)
            .expect("the extended block fills the buffer")
    }

    /// The extended block(s), mutable.
    pub fn view_mut(&mut self) -> ArrayViewMutD<'_, S> {
        let (shape, strides) = self.view_shape();
        ArrayViewMutD::from_shape(IxDyn(&shape).strides(IxDyn(&strides)), &mut self.block)
            .expect("the extended block fills the buffer")
    }

    /// The slices of the interior along each axis of the view.
    fn interior_slices(&self) -> Vec<SliceInfoElem> {
        let fields = (self.fields > 1).then_some(SliceInfoElem::from(..));
        let axes = (self.shape.iter().zip(&self.widths)).map(|(&n, &w)| SliceInfoElem::Slice {
            start: w as isize,
            end: Some((n - w) as isize),
            step: 1,
        });
        fields.into_iter().chain(axes).collect()
    }

    /// The interior (this rank's block), logical order.
    pub fn interior(&self) -> ArrayViewD<'_, S> {
        let slices = self.interior_slices();
        self.view().slice_move(slices.as_slice())
    }

    /// The interior, mutable.
    pub fn interior_mut(&mut self) -> ArrayViewMutD<'_, S> {
        let slices = self.interior_slices();
        self.view_mut().slice_move(slices.as_slice())
    }

    /// Copies `block` (every field's block in the layout's memory order, as a
    /// [`PencilArray`] holds them) into the interior.
    fn set_interior(&mut self, block: &[S]) {
        let strides_block = self.layout.local_strides(self.rank);
        let local = self.layout.local_shape(self.rank);
        let (ext_len, block_len): (usize, usize) =
            (self.shape.iter().product(), local.iter().product());
        let order = self.layout.memory_order().axes().to_vec();
        let at = offset(&self.widths, &self.strides);
        let strides = self.strides.clone();
        for f in 0..self.fields {
            // SAFETY: the block is `block_len` elements of field `f`, the interior lies in
            // the extended block `f`.
            unsafe {
                let src = block.as_ptr().add(f * block_len);
                let dst = self.block.as_mut_ptr().add(f * ext_len + at);
                copy_box((src, &strides_block), (dst, &strides), &local, &order);
            }
        }
    }
}

impl<S> std::fmt::Debug for HaloArray<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaloArray")
            .field("extended_shape", &self.shape)
            .field("widths", &self.widths)
            .field("fields", &self.fields)
            .field("shared", &self.block.is_shared())
            .finish()
    }
}

impl<S: Element> std::fmt::Debug for HaloPlan<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaloPlan")
            .field("global_shape", &self.layout().global_shape())
            .field("widths", &self.widths())
            .field("fields", &self.fields)
            .field("rank", &self.rank)
            .finish()
    }
}
