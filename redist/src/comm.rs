//! The processor grid over MPI: a communicator of the whole grid and one sub-communicator per
//! grid dimension (Birkeland & Sørøvik's groups `G^j`), split by coordinates as `MPI_Cart_sub` would
//! (without a topology: `MPI_Cart_create` loads OpenMPI's topo components, 136 KiB of code
//! per process, for a numbering the grid computes itself).

use crate::error::{RedistError, Result};
use crate::grid::GridShape;
use mpi::topology::{Color, Communicator, SimpleCommunicator};

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
