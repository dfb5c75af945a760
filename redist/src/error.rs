//! The error type of the `redist` crate.

use thiserror::Error;

/// Everything a user of `redist` can get wrong, with the offending values.
///
/// Every check that produces one of these depends only on global arguments (shapes, grid
/// dimensions, layouts), or is agreed over the communicator before anything moves (the
/// caller's buffers: [`RedistError::CallBufferLength`]), so all ranks of a job return the same
/// error and none of them waits for another in a collective call.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RedistError {
    /// A global shape with no axes.
    #[error("the global shape must have at least one axis, got []")]
    EmptyShape,
    /// A global shape with a zero extent.
    #[error("every axis of the global shape must be at least 1, got {shape:?}")]
    ZeroExtent {
        /// The offending shape.
        shape: Vec<usize>,
    },
    /// The number of elements does not fit in `usize`.
    #[error("the global shape {shape:?} has more elements than fit in a usize")]
    ShapeOverflow {
        /// The offending shape.
        shape: Vec<usize>,
    },
    /// A grid dimension of zero, or a grid with no dimensions.
    #[error("grid dimensions must be at least 1 and there must be at least one, got {dims:?}")]
    BadGridDims {
        /// The offending grid dimensions.
        dims: Vec<usize>,
    },
    /// The product of the grid dimensions is not the number of processes.
    #[error("the grid {dims:?} has {product} positions but there are {ranks} processes")]
    GridSizeMismatch {
        /// Grid dimensions.
        dims: Vec<usize>,
        /// Their product.
        product: usize,
        /// Number of processes in the communicator.
        ranks: usize,
    },
    /// The grid rank r must satisfy 1 <= r < d.
    #[error("a grid of rank {grid_rank} cannot distribute a {array_rank}-dimensional array (need 1 <= r < d)")]
    GridRankTooLarge {
        /// Grid rank r.
        grid_rank: usize,
        /// Array rank d.
        array_rank: usize,
    },
    /// A requested grid rank of zero.
    #[error("the grid rank must be at least 1, got 0")]
    ZeroGridRank,
    /// `decomposed` names an axis that does not exist or names one twice.
    #[error("decomposed axes {decomposed:?} are invalid for a {array_rank}-dimensional array (each must be < {array_rank} and distinct, one per grid dimension)")]
    BadDecomposition {
        /// The offending list of axes.
        decomposed: Vec<usize>,
        /// Array rank d.
        array_rank: usize,
    },
    /// `memory_order` is not a permutation of the axes.
    #[error("memory order {memory_order:?} is not a permutation of 0..{array_rank}")]
    BadMemoryOrder {
        /// The offending order.
        memory_order: Vec<usize>,
        /// Array rank d.
        array_rank: usize,
    },
    /// Two layouts of an exchange do not describe the same array on the same grid.
    #[error("layouts do not match: {what}")]
    LayoutMismatch {
        /// What differs, with the values.
        what: String,
    },
    /// A block size that is zero or leaves indices of its axis to no part.
    #[error("grid dimension {grid_dim} splits axis {axis} of {extent} into {parts} parts: a block size of {block} must be at least 1 and cover the axis (at least {})", extent.div_ceil((*parts).max(1)).max(1))]
    BadBlock {
        /// The grid dimension.
        grid_dim: usize,
        /// The axis it splits.
        axis: usize,
        /// The axis's global extent.
        extent: usize,
        /// The grid dimension's size.
        parts: usize,
        /// The block size given.
        block: usize,
    },
    /// Two layouts must differ in exactly one grid dimension for a single exchange.
    #[error("a single exchange needs layouts that differ in exactly one grid dimension, got decomposed axes {from:?} and {to:?}")]
    NotASingleExchange {
        /// Decomposed axes of the source layout.
        from: Vec<usize>,
        /// Decomposed axes of the destination layout.
        to: Vec<usize>,
    },
    /// A caller's buffer has the wrong length.
    #[error("{buffer} buffer has length {actual}, expected {expected}")]
    BufferLength {
        /// Which buffer.
        buffer: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
    /// A caller's buffer of a collective call has the wrong length on some rank, agreed over
    /// the call's communicator: every rank returns this same error, naming the lowest rank
    /// whose buffer is wrong and its values (see [`crate::comm::agree_buffers`]).
    #[error(
        "the {buffer} buffer of rank {rank} has length {actual}, but the call needs {expected}"
    )]
    CallBufferLength {
        /// The lowest rank with a wrong buffer.
        rank: usize,
        /// Which buffer.
        buffer: &'static str,
        /// The length that rank needs (at least, for the buffers that may be longer).
        expected: usize,
        /// The length it gave.
        actual: usize,
    },
    /// A message is longer than MPI's 32-bit element counts allow. [`crate::Exchange`] and
    /// [`crate::cyclic::run::Redistribution`] split such messages into chunks and never
    /// return it; [`crate::cyclic::thakur::redistribute`] (the paper's methods, one message per peer)
    /// returns it for arrays of more than `i32::MAX` items.
    #[error("a message of {elements} elements exceeds MPI's count limit of {limit}")]
    CountOverflow {
        /// Elements in the message.
        elements: usize,
        /// The limit.
        limit: usize,
    },
    /// A malformed grid specification such as `4x0` or `2xb`.
    #[error("malformed grid '{spec}': {reason}")]
    BadGridSpec {
        /// The text given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A distribution that cannot exist: a block size of 0, a grid that does not match the
    /// distributed axes, a grid larger than the communicator, ...
    #[error("invalid distribution: {reason}")]
    BadDistribution {
        /// What is wrong, with the values.
        reason: String,
    },
    /// Two distributions of one redistribution do not describe the same array.
    #[error("distributions do not match: {what}")]
    DistMismatch {
        /// What differs, with the values.
        what: String,
    },
    /// A malformed distribution specification (see `redist::dist::DistArray::parse_spec`).
    #[error("malformed distribution spec '{spec}': {reason} (at '{near}')")]
    BadDistSpec {
        /// The text given.
        spec: String,
        /// The part of it that is wrong.
        near: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An unknown name of an option (exchange method, schedule, Thakur method, ...).
    #[error("unknown {what} '{name}' (expected one of: {expected})")]
    UnknownName {
        /// What kind of name (schedule, method).
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names.
        expected: String,
    },
    /// An MPI call returned an error code.
    #[error("MPI call {call} failed with error code {code}")]
    Mpi {
        /// The MPI function.
        call: &'static str,
        /// Its return code.
        code: i32,
    },
    /// A split shared-memory call without a double-buffered window ready for its elements.
    #[error(
        "a split shared-memory redistribution needs the shared schedule on one node, double \
         buffering and a window prepared for {elem_bytes}-byte elements"
    )]
    NotSplitReady {
        /// Bytes of the element type of the call.
        elem_bytes: usize,
    },
}

/// Result alias of this crate.
pub type Result<T, E = RedistError> = std::result::Result<T, E>;
