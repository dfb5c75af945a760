//! Checkpoints of a [`NavierStokes`] run in parallel HDF5 files, and restarts from them.
//!
//! A checkpoint is one dataset, `/u_hat`, of the global shape `3 × N_0 × N_1 × (N_2/2 + 1)`
//! (complex128, h5py's compound `{r, i}`): the velocity's Fourier coefficients `û` in C order,
//! component first, then the spectrum as numpy's `rfftn` lays it out, whatever the run's memory
//! order or number of ranks. Each rank writes and reads its own hyperslab ([`h5io`]), and the
//! file is all-or-nothing. The attributes hold what a continuation needs (step count, time,
//! the time origin) and what a reader wants to know (modes, ν, dt, dealiasing, layout); floats
//! are written in Rust's shortest round-trip form, so they read back bit for bit.
//!
//! The state of a run is `û` and its step count and time, nothing else (RK4 starts each step
//! from `û` alone), so a run restarted from a checkpoint continues bit-identically to one
//! that never stopped, on the same number of ranks and processor grid.

use crate::error::{Result, SolverError};
use crate::navier_stokes::NavierStokes;
use num_complex::Complex;
use std::path::Path;

/// The dataset that holds `û`.
pub const DATASET: &str = "/u_hat";

/// What a checkpoint says about the state besides `û`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointState {
    /// Steps taken.
    pub steps: u64,
    /// Simulated time.
    pub time: f64,
    /// The time step of the run that wrote it.
    pub dt: f64,
    /// The step and time from which the writer counted its time (`time = origin time +
    /// (steps − origin step)·dt`, so that a continuation with the same `dt` computes the same
    /// times as a run that never stopped).
    pub origin: (u64, f64),
}

/// The global shape of the dataset of a run with `modes`.
fn dataset_shape(modes: [usize; 3]) -> [usize; 4] {
    [3, modes[0], modes[1], modes[2] / 2 + 1]
}

/// This rank's hyperslab of the dataset: (starts, counts).
fn hyperslab(ns: &NavierStokes) -> ([usize; 4], [usize; 4]) {
    let space = ns.space();
    let ranges = space.spectral_layout().global_ranges(space.rank());
    (
        [0, ranges[0].start, ranges[1].start, ranges[2].start],
        [3, ranges[0].len(), ranges[1].len(), ranges[2].len()],
    )
}

fn failed(path: &Path, e: h5io::H5Error) -> SolverError {
    SolverError::Checkpoint {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Writes `ns`'s state to a new HDF5 file at `path` (collective, all-or-nothing: an existing
/// file is replaced only once the new one is complete).
pub fn write(ns: &NavierStokes, path: &Path) -> Result<()> {
    let space = ns.space();
    // The block in C order of the logical axes, component first, whatever its memory order.
    let block: Vec<Complex<f64>> =
        fft_core::view::block_view(space.spectral_layout(), space.rank(), 3, ns.velocity_hat())?
            .iter()
            .copied()
            .collect();
    let (starts, counts) = hyperslab(ns);
    let modes = space.modes();
    let params = ns.parameters();
    let (origin_step, origin_time) = ns.time_origin();
    let attributes = [
        (
            "kind",
            "navier-stokes checkpoint: velocity Fourier coefficients".to_string(),
        ),
        (
            "layout",
            "C order: component (x, y, z), then numpy.fft.rfftn's spectrum of each".to_string(),
        ),
        (
            "normalization",
            "u_hat = rfftn(u) / (N0 N1 N2) on the N0 x N1 x N2 grid".to_string(),
        ),
        ("modes", format!("{},{},{}", modes[0], modes[1], modes[2])),
        ("dealias", space.dealias_rule().name().to_string()),
        ("nu", format!("{}", params.nu)),
        ("dt", format!("{}", params.dt)),
        ("steps", ns.steps().to_string()),
        ("time", format!("{}", ns.time())),
        ("origin_step", origin_step.to_string()),
        ("origin_time", format!("{origin_time}")),
    ];
    let field = h5io::FieldWrite {
        dataset: DATASET,
        global_shape: &dataset_shape(modes),
        starts: &starts,
        counts: &counts,
        data: &block,
        attributes: &attributes,
    };
    h5io::write_fields(space.communicator(), path, &[field])
        .map(drop)
        .map_err(|e| failed(path, e))
}

/// Reads a checkpoint's `û` into `ns` and returns the state it records (collective; every
/// rank returns the same outcome). The file must hold a run of the same modes.
pub fn read(ns: &mut NavierStokes, path: &Path) -> Result<CheckpointState> {
    let modes = ns.space().modes();
    let want = dataset_shape(modes);
    // Every rank reads the header itself; the collective read below agrees on the outcome
    // before any transfer, so check the shape the same way on every rank first.
    let info = h5io::field_info(path, DATASET);
    let attributes = h5io::read_attributes(path, DATASET);
    let state = info
        .and_then(|info| attributes.map(|a| (info, a)))
        .map_err(|e| failed(path, e))
        .and_then(|(info, attributes)| {
            if info.shape != want {
                return Err(SolverError::CheckpointMismatch {
                    path: path.display().to_string(),
                    what: "dataset shape (3 components x the spectrum of --shape)",
                    file: format!("{:?}", info.shape),
                    run: format!("{want:?}"),
                });
            }
            state_from(path, &attributes)
        });
    // A file unreadable on one rank only (a node without it) fails every rank alike.
    let ok = ns
        .space()
        .sum_over_ranks(f64::from(u8::from(state.is_err())))
        == 0.0;
    let state = match (state, ok) {
        (Ok(s), true) => s,
        (Err(e), _) => return Err(e),
        (Ok(_), false) => {
            return Err(SolverError::Checkpoint {
                path: path.display().to_string(),
                message: "another rank cannot read it".to_string(),
            })
        }
    };
    let (starts, counts) = hyperslab(ns);
    let mut block = vec![Complex::default(); counts.iter().product()];
    h5io::read_field(
        ns.space().communicator(),
        path,
        DATASET,
        &starts,
        &counts,
        &mut block,
    )
    .map_err(|e| failed(path, e))?;
    // The same time step continues the writer's time count (bit-identical times); another
    // one counts from the checkpoint.
    let origin = if state.dt.to_bits() == ns.parameters().dt.to_bits() {
        state.origin
    } else {
        (state.steps, state.time)
    };
    ns.restore(&block, state.steps, origin)?;
    Ok(state)
}

/// The state recorded in a checkpoint's attributes.
fn state_from(path: &Path, attributes: &[(String, String)]) -> Result<CheckpointState> {
    let get = |name: &'static str| -> Result<&str> {
        attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| SolverError::Checkpoint {
                path: path.display().to_string(),
                message: format!("dataset {DATASET} has no attribute '{name}'"),
            })
    };
    let bad = |name: &str, value: &str| SolverError::Checkpoint {
        path: path.display().to_string(),
        message: format!("attribute '{name}' = '{value}' is not a number"),
    };
    let int = |name: &'static str| -> Result<u64> {
        let v = get(name)?;
        v.parse().map_err(|_| bad(name, v))
    };
    let float = |name: &'static str| -> Result<f64> {
        let v = get(name)?;
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| bad(name, v))
    };
    Ok(CheckpointState {
        steps: int("steps")?,
        time: float("time")?,
        dt: float("dt")?,
        origin: (int("origin_step")?, float("origin_time")?),
    })
}
