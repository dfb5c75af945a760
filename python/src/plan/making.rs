//! Making a `dfft.PFFT`: its arguments checked on one rank, the thread pool its transforms
//! run in, the plan made in that pool, and the `Pfft` fields that follow from the plan.

use super::{Live, Pfft};
use crate::args::{
    axis_kinds, default_threads, dtype_name_of, grid_choice, groups_choice, kind_and_precision,
    machine_profile, padding_factors, partial_kinds, Kind,
};
use crate::blocks::Blocks;
use crate::comm::{agree, collective, serialized_level, thread_level, MpiOwned};
use crate::errors::{fft_error, DfftError};
use crate::one_d::{self, OneDBlocks};
use crate::transform::AssertSend;
use fft_core::model::MachineProfile;
use fft_core::{AnyPlan, AxisKind, FftOptions, Normalization, Precision};
use mpi::topology::{Communicator, SimpleCommunicator};
use pyo3::prelude::*;
use std::str::FromStr;

/// `PFFT(...)`'s arguments as Python passed them (`threads` and `comm` aside).
pub(super) struct Request<'a, 'py> {
    pub shape: &'a [usize],
    pub kind: Option<&'a str>,
    pub dtype: Option<&'a Bound<'py, PyAny>>,
    pub grid: Option<&'a Bound<'py, PyAny>>,
    pub axes_kinds: Option<Vec<String>>,
    pub normalization: &'a str,
    pub transposed_out: bool,
    pub padding: Option<&'a Bound<'py, PyAny>>,
    pub batch: usize,
    pub threads: Option<usize>,
    pub machine: Option<&'a Bound<'py, PyAny>>,
    pub in_place: bool,
    pub axes: Option<Vec<isize>>,
    pub deterministic: bool,
    /// A 1-D transform's `scrambled_in` and `scrambled_out`.
    pub scrambled: (bool, bool),
    pub groups: Option<&'a Bound<'py, PyAny>>,
}

/// A [`Request`] checked: what the plan and its fields are made of.
pub(super) struct Checked {
    pub kind: Kind,
    pub single: bool,
    pub normalization: Normalization,
    /// The axes' kinds (`None`: every axis `Fft`).
    pub axes: Option<Vec<AxisKind>>,
    pub options: FftOptions,
    pub machine: MachineProfile,
}

impl Request<'_, '_> {
    /// The request checked on this rank alone (every rank then agrees on the outcome).
    pub(super) fn checked(&self) -> PyResult<Checked> {
        let machine = machine_profile(self.machine)?;
        let dtype = self.dtype.map(dtype_name_of).transpose()?;
        let (kind, single) = kind_and_precision(self.kind, dtype)?;
        let normalization = Normalization::from_str(self.normalization).map_err(fft_error)?;
        let d = self.shape.len();
        let axes = partial_kinds(
            kind,
            d,
            self.axes.clone(),
            axis_kinds(self.axes_kinds.clone())?,
        )?;
        if kind == Kind::R2r && axes.is_none() {
            return Err(DfftError::new_err(
                "kind 'r2r' needs axes_kinds, one real-to-real kind per axis (e.g. ['dct2'] * 3)",
            ));
        }
        if self.batch == 0 {
            return Err(DfftError::new_err("batch must be at least 1, got 0"));
        }
        if let Some(t) = self
            .threads
            .filter(|t| !(1..=fft_core::MAX_THREADS).contains(t))
        {
            return Err(DfftError::new_err(format!(
                "threads must be 1 to {}, got {t}",
                fft_core::MAX_THREADS
            )));
        }
        let mut options = FftOptions::default()
            .groups(groups_choice(self.groups)?)
            .grid(grid_choice(self.grid)?)
            .normalization(normalization)
            .transposed_out(self.transposed_out)
            .batch(self.batch)
            .in_place(self.in_place)
            .deterministic(self.deterministic)
            .machine(machine.clone());
        if let Some(a) = &axes {
            options = options.axes(a.clone());
        }
        if let Some(p) = padding_factors(self.padding, d)? {
            options = options.padding(p);
        }
        let (scrambled_in, scrambled_out) = self.scrambled;
        if let Some(o) = one_d::option(self.shape, scrambled_in, scrambled_out)? {
            options = options.one_d(o);
        }
        Ok(Checked {
            kind,
            single,
            normalization,
            axes,
            options,
            machine,
        })
    }
}

/// The pool a plan of `threads` threads (`None`: the default) runs its transforms in, and
/// its threads. rayon's global pool serves when it has the requested size: the transforms
/// then run on the calling thread. Otherwise a pool of the plan's own runs them on one of
/// its workers, MPI calls included: allowed from MPI_THREAD_SERIALIZED on (mpi4py's default
/// is MPI_THREAD_MULTIPLE); below that the global pool serves whatever its size.
/// Collective: a pool that cannot start on one rank must not leave the others planning.
pub(super) fn thread_pool(
    py: Python<'_>,
    comm: &SimpleCommunicator,
    threads: Option<usize>,
) -> PyResult<(Option<rayon::ThreadPool>, usize)> {
    let threads = match threads {
        Some(t) => t,
        None => default_threads(py, comm)?,
    };
    let global = rayon::current_num_threads();
    let pool = if threads != global && thread_level() >= serialized_level() {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dfft-{i}"))
            .spawn_handler(fft_core::threads::spawn_in_turn)
            .build()
            .map(Some)
            .map_err(|e| format!("rank {}: cannot start {threads} threads: {e}", comm.rank()))
    } else {
        Ok(None)
    };
    let pool = match agree(comm, pool.as_ref().map(drop).map_err(Clone::clone)) {
        Ok(()) => pool.expect("agreed"),
        Err(m) => return Err(pyo3::exceptions::PyRuntimeError::new_err(m)),
    };
    let threads = if pool.is_some() { threads } else { global };
    Ok((pool, threads))
}

/// The plan of `shape`, made in `pool` (planning sizes per-thread scratch from the pool it
/// runs in). Collective.
pub(super) fn make_plan(
    comm: &SimpleCommunicator,
    pool: Option<&rayon::ThreadPool>,
    checked: &Checked,
    shape: &[usize],
) -> PyResult<AnyPlan> {
    let precision = if checked.single {
        Precision::F32
    } else {
        Precision::F64
    };
    let build = || -> fft_core::Result<AnyPlan> {
        let options = checked.options.clone();
        let make = || AnyPlan::new(comm, checked.kind, precision, shape, options);
        match pool {
            Some(pool) => {
                let make = AssertSend(make);
                pool.install(move || AssertSend((make.into_inner())()))
                    .into_inner()
            }
            None => make(),
        }
    };
    collective(comm, build).map_err(fft_error)
}

impl Pfft {
    /// The plan's fields: its layouts, grid and local shapes read from `live.plan`, the rest
    /// from the request (`mpi4py_comm` the caller's communicator).
    pub(super) fn from_plan(
        mpi4py_comm: &Bound<'_, PyAny>,
        live: Live,
        threads: usize,
        request: &Request<'_, '_>,
        checked: Checked,
    ) -> Self {
        let plan = &live.plan;
        let rank = plan.rank();
        let (input_layout, output_layout) =
            (plan.input_layout().clone(), plan.output_layout().clone());
        let grid_dims = plan.grid().shape().dims().to_vec();
        let groups = plan.groups();
        let in_place_len = plan.in_place_len();
        let shape = request.shape.to_vec();
        // A 1-D transform's blocks are ranges of its axis; other plans' are their layouts'.
        let one_d = (shape.len() == 1)
            .then(|| OneDBlocks::new(&input_layout, &output_layout, rank, request.scrambled.1));
        let (input_local, output_local) = match &one_d {
            Some(b) => (vec![b.ranges[0].len()], vec![b.ranges[1].len()]),
            None => (
                input_layout.local_shape_in_memory(rank),
                output_layout.local_shape_in_memory(rank),
            ),
        };
        let axes = checked
            .axes
            .unwrap_or_else(|| vec![AxisKind::Fft; shape.len()]);
        let size = live.comm.size() as usize;
        let mut me = Self {
            blocks: Blocks::default(),
            live: Some(MpiOwned::new(live)),
            mpi4py_comm: mpi4py_comm.clone().unbind(),
            single: checked.single,
            rank,
            size,
            grid_dims,
            input_layout,
            output_layout,
            kind: checked.kind,
            axes,
            resolution: shape,
            normalization: checked.normalization,
            transposed_out: request.transposed_out,
            batch: request.batch,
            groups,
            threads,
            machine: checked.machine,
            in_place: request.in_place,
            in_place_len,
            input_shape: Vec::new(),
            output_shape: Vec::new(),
            one_d,
        };
        me.input_shape = me.with_batch(input_local);
        me.output_shape = me.with_batch(output_local);
        me
    }
}
