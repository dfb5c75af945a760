//! The processor grid over MPI: a communicator of the whole grid and one sub-communicator per
//! grid dimension (Birkeland & Sørøvik's groups `G^j`), split by coordinates as `MPI_Cart_sub` would
//! (without a topology: `MPI_Cart_create` loads OpenMPI's topo components, 136 KiB of code
//! per process, for a numbering the grid computes itself).

use crate::error::{RedistError, Result};
use crate::grid::GridShape;
use mpi::collective::SystemOperation;
use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;

/// An r-dimensional processor grid over an MPI communicator.
///
/// Ranks keep their numbering (no reordering), so rank `p` of the parent communicator has the
/// row-major coordinates [`GridShape::coords_of`]`(p)`, and its index in the group of grid
/// dimension `j` is its coordinate `j`.
///
/// ```no_run
/// use redist::{comm::ProcessGrid, grid::GridShape};
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let p = mpi::topology::Communicator::size(&world) as usize;
/// let grid = ProcessGrid::new(&world, GridShape::balanced(p, 2).unwrap()).unwrap();
/// println!("rank {} at {:?}", grid.rank(), grid.coords());
/// ```
pub struct ProcessGrid {
    shape: GridShape,
    cart: SimpleCommunicator,
    groups: Vec<SimpleCommunicator>,
    rank: usize,
}

impl std::fmt::Debug for ProcessGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessGrid")
            .field("shape", &self.shape)
            .field("rank", &self.rank)
            .finish()
    }
}

impl ProcessGrid {
    /// Builds the grid; collective over `comm`. Fails (on every rank alike) when the grid's
    /// size is not the communicator's.
    pub fn new<C: Communicator>(comm: &C, shape: GridShape) -> Result<Self> {
        let size = comm.size() as usize;
        if shape.ranks() != size {
            return Err(RedistError::GridSizeMismatch {
                dims: shape.dims().to_vec(),
                product: shape.ranks(),
                ranks: size,
            });
        }
        // The parent's numbering, as `MPI_Cart_create` without reordering keeps it.
        let cart = comm.duplicate();
        let rank = cart.rank() as usize;
        let coords = shape.coords_of(rank);
        // Group `j`: the ranks whose other coordinates are this rank's, numbered by
        // coordinate `j` (`MPI_Cart_sub`'s order); the color is the rank with coordinate
        // `j` zeroed, the same on every member.
        let groups = (0..shape.dims().len())
            .map(|j| {
                let mut base = coords.clone();
                base[j] = 0;
                let color = Color::with_value(shape.rank_of(&base) as i32);
                cart.split_by_color_with_key(color, coords[j] as i32)
                    .ok_or(RedistError::Mpi {
                        call: "MPI_Comm_split",
                        code: -1,
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            shape,
            cart,
            groups,
            rank,
        })
    }

    /// The grid's shape.
    pub fn shape(&self) -> &GridShape {
        &self.shape
    }

    /// This process's rank in the grid (equal to its rank in the parent communicator).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// This process's grid coordinates.
    pub fn coords(&self) -> Vec<usize> {
        self.shape.coords_of(self.rank)
    }

    /// The communicator of the whole grid (the parent's ranks, duplicated).
    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.cart
    }

    /// The communicator of this process's group along grid dimension `dim`.
    pub fn group(&self, dim: usize) -> &SimpleCommunicator {
        &self.groups[dim]
    }

    /// A duplicate of the group communicator along `dim`, for an object that must own one.
    pub fn duplicate_group(&self, dim: usize) -> SimpleCommunicator {
        self.groups[dim].duplicate()
    }
}

/// One buffer of a collective call: its name, the length the call needs on this rank and the
/// length the caller gave.
pub type BufferCheck = (&'static str, usize, usize);

/// Checks `checks` on this rank alone (each buffer at least its expected length): the first
/// short one is a [`RedistError::BufferLength`]. For calls whose buffers are sized from the
/// plan on every rank; any other collective call agrees with [`agree_buffers`].
pub(crate) fn check_buffers(checks: &[BufferCheck]) -> Result<()> {
    match checks
        .iter()
        .find(|&&(_, expected, actual)| actual < expected)
    {
        Some(&(buffer, expected, actual)) => Err(RedistError::BufferLength {
            buffer,
            expected,
            actual,
        }),
        None => Ok(()),
    }
}

/// Agrees over `comm` whether every rank's buffers have the lengths the call needs (at least
/// the expected length, or exactly it when `exact`): one `MPI_Allreduce` of one integer when
/// they do, and a second one carrying the values when some rank's do not. Then every rank
/// returns the same [`RedistError::CallBufferLength`], naming the lowest rank with a wrong
/// buffer and its first wrong buffer, so no rank returns early while the others wait in the
/// call's messages. Collective; every rank passes the same buffer names in the same order
/// (its own lengths). Allocates nothing.
///
/// ```no_run
/// use redist::comm::agree_buffers;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let (src, need) = (vec![0.0f64; 10], 10);
/// agree_buffers(&world, &[("source", need, src.len())], true).unwrap();
/// ```
pub fn agree_buffers<C: Communicator>(comm: &C, checks: &[BufferCheck], exact: bool) -> Result<()> {
    let fits = |&(_, expected, actual): &BufferCheck| {
        if exact {
            actual == expected
        } else {
            actual >= expected
        }
    };
    let wrong = checks.iter().position(|c| !fits(c));
    let rank = comm.rank() as u64;
    let mine = if wrong.is_some() { rank } else { u64::MAX };
    let mut first = u64::MAX;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == u64::MAX {
        return Ok(());
    }
    // [which buffer, expected, actual] of the lowest wrong rank; zeros from every other.
    let theirs = match wrong {
        Some(i) if first == rank => [i as u64, checks[i].1 as u64, checks[i].2 as u64],
        _ => [0; 3],
    };
    let mut numbers = [0u64; 3];
    comm.all_reduce_into(&theirs[..], &mut numbers[..], SystemOperation::max());
    let [which, expected, actual] = numbers;
    Err(RedistError::CallBufferLength {
        rank: first as usize,
        buffer: checks.get(which as usize).map_or("?", |c| c.0),
        expected: expected as usize,
        actual: actual as usize,
    })
}

/// A collective data movement on the caller's four buffers (a source and a destination
/// block, send and receive buffers): [`crate::Exchange`] and
/// [`crate::cyclic::run::Redistribution`]. Their `execute` and `execute_sized` check the
/// buffers here, alike.
pub(crate) trait FourBuffers {
    /// The least lengths of the source, destination, send and receive buffers on this rank.
    fn needs(&self) -> [usize; 4];
    /// The communicator over which `execute` agrees on the buffers (every rank of the call).
    fn agreement(&self) -> &mpi::topology::SimpleCommunicator;
    /// The movement itself, on buffers already checked.
    fn run<T: crate::Element>(
        &mut self,
        src: &[T],
        dst: &mut [T],
        send: &mut [T],
        recv: &mut [T],
        times: &mut crate::StageTimes,
    ) -> Result<()>;

    /// Checks the buffers, over the agreement communicator (`agree`: the same error on every
    /// rank, one small `MPI_Allreduce`) or on this rank alone, then runs.
    fn checked<T: crate::Element>(
        &mut self,
        agree: bool,
        (src, dst, send, recv): (&[T], &mut [T], &mut [T], &mut [T]),
        times: &mut crate::StageTimes,
    ) -> Result<()> {
        let [s, d, se, r] = self.needs();
        let checks = [
            ("source", s, src.len()),
            ("destination", d, dst.len()),
            ("send", se, send.len()),
            ("receive", r, recv.len()),
        ];
        if agree {
            agree_buffers(self.agreement(), &checks, false)?;
        } else {
            check_buffers(&checks)?;
        }
        self.run(src, dst, send, recv, times)
    }
}

/// Installs a panic hook that prints the rank and the panic message and then calls
/// `MPI_Abort` on `MPI_COMM_WORLD`, so a bug (or an out-of-memory) on one rank ends the whole
/// job instead of leaving the other ranks waiting in a collective forever. Call it right after
/// `mpi::initialize()`; the previous hook still runs first (it prints the backtrace).
///
/// ```no_run
/// let universe = mpi::initialize().unwrap();
/// redist::comm::abort_on_panic();
/// ```
pub fn abort_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        let mut initialized = 0;
        let mut finalized = 0;
        // SAFETY: plain queries, legal at any time.
        unsafe {
            mpi::ffi::MPI_Initialized(&mut initialized);
            mpi::ffi::MPI_Finalized(&mut finalized);
        }
        if initialized != 0 && finalized == 0 {
            let mut rank = -1;
            // SAFETY: MPI is initialized and not finalized.
            unsafe {
                mpi::ffi::MPI_Comm_rank(mpi::ffi::RSMPI_COMM_WORLD, &mut rank);
            }
            eprintln!("dfft: rank {rank} panicked; calling MPI_Abort to end the job");
            // SAFETY: as above; MPI_Abort does not return.
            unsafe {
                mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101);
            }
        }
    }));
}
