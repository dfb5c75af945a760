//! The error type of `fft-core`.

use redist::RedistError;
use thiserror::Error;

/// Everything a user of `fft-core` can get wrong, with the offending values. Checks depend on
/// global arguments only, so every rank returns the same error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FftError {
    /// An error from the layout and exchange layer.
    #[error(transparent)]
    Redist(#[from] RedistError),
    /// A transform needs at least two dimensions to be distributed (a complex one of one
    /// dimension is a distributed 1-D transform).
    #[error("a distributed real-to-complex or real-to-real transform needs an array of at least 2 dimensions (1-D is complex only), got shape {shape:?}")]
    TooFewDimensions {
        /// The shape given.
        shape: Vec<usize>,
    },
    /// A caller's buffer has the wrong length.
    #[error(
        "{buffer} buffer has length {actual}, expected {expected} (the local block of this rank)"
    )]
    BufferLength {
        /// Which buffer.
        buffer: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
    /// A malformed `--grid` value.
    #[error("malformed grid choice '{spec}': expected 'auto', a grid rank such as '2', or dimensions such as '4x2'")]
    BadGridChoice {
        /// The text given.
        spec: String,
    },
    /// A machine profile for the complexity model that cannot be read or used.
    #[error("bad machine profile: {reason}")]
    BadMachineProfile {
        /// What is wrong, with the offending value or file.
        reason: String,
    },
    /// More processes than the complexity model plans for ([`crate::model::MAX_RANKS`]).
    #[error("the model plans for at most {limit} ranks (2^40), got {ranks}")]
    TooManyRanks {
        /// The process count given.
        ranks: u64,
        /// [`crate::model::MAX_RANKS`].
        limit: u64,
    },
    /// More candidate grids than one evaluation takes on ([`crate::model::MAX_CANDIDATES`]).
    #[error("shape {shape:?} on {ranks} ranks has {candidates} candidate grids, more than the {limit} the model evaluates at once: restrict the grid rank (dfft plan --grid R) or give the grid (--grid AxB...)")]
    TooManyCandidates {
        /// The shape given.
        shape: Vec<usize>,
        /// The process count given.
        ranks: u64,
        /// How many candidates that is (saturating).
        candidates: u128,
        /// [`crate::model::MAX_CANDIDATES`].
        limit: usize,
    },
    /// The plan would need more memory per rank than [`crate::FftOptions::memory_limit`]
    /// (see [`crate::memory`]).
    #[error(
        "not enough memory for the plan: {detail}; use more ranks or nodes, or a smaller shape"
    )]
    InsufficientMemory {
        /// Bytes needed per rank (the largest over all ranks).
        need: u64,
        /// The per-rank limit in bytes (the smallest over all ranks).
        limit: u64,
        /// Both numbers and the estimate's parts.
        detail: String,
    },
    /// A malformed normalization name.
    #[error("unknown normalization '{name}' (expected one of: none, backward, ortho, forward)")]
    UnknownNormalization {
        /// The text given.
        name: String,
    },
    /// A malformed real-to-real kind name.
    #[error("unknown real-to-real kind '{name}' (expected one of: dct1, dct2, dct3, dct4, dst1, dst2, dst3, dst4, r2hc, hc2r, dht)")]
    UnknownR2rKind {
        /// The text given.
        name: String,
    },
    /// `forward` or `backward` (which leave the input alone) called on a plan made with
    /// [`crate::FftOptions::destroy_input`], whose steps write into the input.
    #[error("the plan was made with destroy_input, so its {direction} transform writes into its input: call {direction}_destroying with a mutable input (or plan without destroy_input)")]
    InputNotWritable {
        /// `"forward"` or `"backward"`.
        direction: &'static str,
    },
    /// An in-place call on a plan made without [`crate::FftOptions::in_place`] (the same on
    /// every rank: the option is global).
    #[error("the plan was made without in_place, so it has no in-place schedule: plan with FftOptions::in_place(true) (C: DFFT_IN_PLACE; dfft run --in-place), or pass two buffers")]
    InPlaceNotPlanned,
    /// An in-place buffer of the wrong length on some rank: every rank returns this same
    /// error (the ranks agree on it before any exchange), naming the first such rank.
    #[error("rank {rank}'s in-place buffer has length {actual}, expected {expected} (the larger of its input and output blocks)")]
    InPlaceLength {
        /// The lowest rank whose buffer is wrong.
        rank: usize,
        /// That rank's required length.
        expected: usize,
        /// That rank's given length.
        actual: usize,
    },
    /// A transform's input or output buffer of the wrong length on some rank: every rank
    /// returns this same error (the ranks agree on it before any exchange), naming the first
    /// such rank and its buffer.
    #[error("rank {rank}'s {buffer} buffer has length {actual}, expected {expected} (that rank's local block)")]
    CallBufferLength {
        /// The lowest rank with a wrong buffer.
        rank: usize,
        /// Which of its buffers: "input" or "output".
        buffer: &'static str,
        /// That rank's required length.
        expected: usize,
        /// That rank's given length.
        actual: usize,
    },
    /// A distributed array or ndarray that does not fit the plan (see [`crate::view`]).
    #[error("the {array} array does not fit the plan: {reason}")]
    ArrayMismatch {
        /// Which argument.
        array: &'static str,
        /// What differs, with both values.
        reason: String,
    },
    /// The ranks lowered different plans, reported instead of a hang: a caller that passed
    /// different arguments on different ranks, or a bug in dfft (decisions that should depend
    /// on global data only did not).
    #[error("the ranks made different plans (fingerprints {least:#x} to {most:#x}): the plan's arguments (shape, options, batch) differ between ranks; every rank must pass the same (if they did, this is a bug in dfft: please report it)")]
    DivergentPlan {
        /// The smallest fingerprint of any rank.
        least: u64,
        /// The largest.
        most: u64,
    },
    /// A list of axes to transform (a partial transform) that does not fit the array.
    #[error("bad axes {axes:?} for an array of {d} dimensions: {reason}")]
    BadAxes {
        /// The axes given.
        axes: Vec<usize>,
        /// Dimensions of the array.
        d: usize,
        /// What is wrong.
        reason: String,
    },
    /// A group count ([`crate::FftOptions::groups`]) that does not fit the ranks, the fields
    /// or the other options.
    #[error(
        "cannot split a batch of {fields} fields on {ranks} ranks into {groups} groups: {reason}"
    )]
    BadGroups {
        /// The group count asked for.
        groups: usize,
        /// Ranks of the plan's communicator.
        ranks: usize,
        /// Fields of the batch.
        fields: usize,
        /// What is wrong.
        reason: String,
    },
    /// Options that do not fit the plan or the shape.
    #[error("bad transform options for shape {shape:?}: {reason}")]
    BadOptions {
        /// The (spectral) shape given to the plan.
        shape: Vec<usize>,
        /// What is wrong, with the offending values.
        reason: String,
    },
}

/// Result alias of this crate.
pub type Result<T, E = FftError> = std::result::Result<T, E>;
