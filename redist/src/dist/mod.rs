//! Block, cyclic and block-cyclic distributions (Parallel ESSL, Parallel ESSL; Thakur et al., Table 1),
//! per axis and as tensor products over a process grid.
//!
//! All indices are 0-based. For one axis of `M` items over `P` processes:
//!
//! | distribution | global `m` → (process, block, offset) | local index |
//! |---|---|---|
//! | [`AxisDist::Block`] (ESSL, `L = ⌈M/P⌉`) | `(⌊m/L⌋, 0, m mod L)` | `m mod L` |
//! | [`AxisDist::Balanced`] | `(p, 0, m − start(p))` | `m − start(p)` |
//! | [`AxisDist::Cyclic`] | `(m mod P, ⌊m/P⌋, 0)` | `⌊m/P⌋` |
//! | [`AxisDist::BlockCyclic`]`(r)`, `T = rP` | `(⌊(m mod T)/r⌋, ⌊m/T⌋, m mod r)` | `b·r + i` |
//! | [`AxisDist::Local`] (not distributed) | `(0, 0, m)` | `m` |
//!
//! and the inverse `(p, b, i) → p·r + b·T + i`. Block and cyclic are block-cyclic with
//! `r = L` and `r = 1`; the balanced block split (parts `0..M mod P` one item longer) is the
//! one irregular member.
//!
//! With the first block on process `f` (ScaLAPACK's `RSRC`/`CSRC`), process `p` plays the part
//! of process `(p − f) mod P` above.
//!
//! **Local storage** (the ScaLAPACK local layout): along each axis a process stores its blocks
//! one after the other in increasing global order, so its local index along the axis is
//! `b·r + i`; by default the local array is stored in **C order over local indices** (axis 0
//! slowest, the last axis contiguous), like every other array in dfft, and
//! [`Storage::ColumnMajor`] with a leading dimension stores it as ScaLAPACK does.
//!
//! ```
//! use redist::dist::{AxisDist, AxisMap, Loc};
//! // Parallel ESSL Guide and Reference, "Distributing Your Data", Figure 3:
//! // M = 23 over P = 3 in blocks of 2.
//! let map = AxisMap::new(AxisDist::BlockCyclic(2), 23, 3).unwrap();
//! assert_eq!(map.locate(9), Loc { process: 1, block: 1, offset: 1 });
//! assert_eq!(map.global_index(2, 6), 22); // the last of process 2's 7 items
//! assert_eq!(map.local_len(0), 8);
//! assert_eq!(map.local_len(2), 7);
//! ```

mod array;
mod axis;
mod spec;

pub use array::{DistArray, GridOrder, Storage};
pub use axis::{AxisDist, AxisMap, Loc};
