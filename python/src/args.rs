//! `dfft.PFFT`'s constructor arguments as Python passes them, checked and turned into
//! `fft_core`'s options: each error a `DfftError` naming the offending value.

use crate::comm::ranks_on_node;
use crate::errors::{fft_error, DfftError};
use fft_core::model::MachineProfile;
use fft_core::{AxisKind, GridChoice, Groups, R2rKind};
use mpi::topology::SimpleCommunicator;
use pyo3::prelude::*;
use std::str::FromStr;

/// What the plan does, as the `kind` argument spells it (`name()`).
pub(crate) use fft_core::PlanKind as Kind;

/// `(kind, single precision)` from the `kind` and `dtype` arguments.
pub(crate) fn kind_and_precision(
    kind: Option<&str>,
    dtype: Option<String>,
) -> PyResult<(Kind, bool)> {
    let kind = match kind.map(|k| k.trim().to_ascii_lowercase()) {
        None => None,
        Some(k) => Some(match k.as_str() {
            "c2c" => Kind::C2c,
            "r2c" => Kind::R2c,
            "r2r" => Kind::R2r,
            _ => {
                return Err(DfftError::new_err(format!(
                    "unknown kind '{k}' (expected 'c2c', 'r2c' or 'r2r')"
                )))
            }
        }),
    };
    let Some(dtype) = dtype else {
        return Ok((kind.unwrap_or(Kind::R2c), false));
    };
    let (complex, single) = match dtype.as_str() {
        "float64" => (false, false),
        "float32" => (false, true),
        "complex128" => (true, false),
        "complex64" => (true, true),
        other => {
            return Err(DfftError::new_err(format!(
                "unsupported dtype {other} (expected float64, float32, complex128 or complex64)"
            )))
        }
    };
    let kind = kind.unwrap_or(if complex { Kind::C2c } else { Kind::R2c });
    match (kind, complex) {
        (Kind::C2c, false) => Err(DfftError::new_err(format!(
            "kind 'c2c' transforms complex input: dtype must be complex128 or complex64, got \
             {dtype}"
        ))),
        (Kind::R2c | Kind::R2r, true) => Err(DfftError::new_err(format!(
            "kind '{}' transforms real input: dtype must be float64 or float32, got {dtype}",
            kind.name()
        ))),
        _ => Ok((kind, single)),
    }
}

pub(crate) fn grid_choice(grid: Option<&Bound<'_, PyAny>>) -> PyResult<GridChoice> {
    let Some(g) = grid else {
        return Ok(GridChoice::Auto);
    };
    if g.is_none() {
        return Ok(GridChoice::Auto);
    }
    if let Ok(s) = g.extract::<String>() {
        return GridChoice::from_str(&s).map_err(fft_error);
    }
    if let Ok(r) = g.extract::<usize>() {
        if r == 0 {
            return Err(DfftError::new_err("grid rank must be at least 1, got 0"));
        }
        return Ok(GridChoice::Rank(r));
    }
    if let Ok(dims) = g.extract::<Vec<usize>>() {
        return Ok(GridChoice::Dims(dims));
    }
    Err(DfftError::new_err(format!(
        "grid must be 'auto', a grid rank (int) or a tuple of grid dimensions, got {}",
        g.repr()?
    )))
}

/// `groups=`: `None` or 1 (no split), a group count, or `"auto"` (the model's choice).
pub(crate) fn groups_choice(groups: Option<&Bound<'_, PyAny>>) -> PyResult<Groups> {
    let Some(g) = groups.filter(|g| !g.is_none()) else {
        return Ok(Groups::Fixed(1));
    };
    if let Ok(s) = g.extract::<String>() {
        return s.parse().map_err(DfftError::new_err);
    }
    match g.extract::<usize>() {
        Ok(n) if n >= 1 => Ok(Groups::Fixed(n)),
        _ => Err(DfftError::new_err(format!(
            "groups must be 'auto' or a number of groups >= 1, got {}",
            g.repr()?
        ))),
    }
}

pub(crate) fn padding_factors(
    padding: Option<&Bound<'_, PyAny>>,
    d: usize,
) -> PyResult<Option<Vec<f64>>> {
    let Some(p) = padding else { return Ok(None) };
    if p.is_none() {
        return Ok(None);
    }
    if let Ok(flag) = p.extract::<bool>() {
        if !flag {
            return Ok(None);
        }
        return Err(DfftError::new_err(
            "padding=True is ambiguous: give the factor, e.g. padding=1.5 (the 3/2 rule)",
        ));
    }
    if let Ok(f) = p.extract::<f64>() {
        return Ok(Some(vec![f; d]));
    }
    if let Ok(fs) = p.extract::<Vec<f64>>() {
        return Ok(Some(fs));
    }
    Err(DfftError::new_err(format!(
        "padding must be None, a factor or one factor per axis, got {}",
        p.repr()?
    )))
}

pub(crate) fn axis_kinds(names: Option<Vec<String>>) -> PyResult<Option<Vec<AxisKind>>> {
    names
        .map(|names| {
            names
                .iter()
                .map(|n| {
                    let t = n.trim().to_ascii_lowercase();
                    if t == "fft" {
                        Ok(AxisKind::Fft)
                    } else if t == "identity" {
                        Ok(AxisKind::Identity)
                    } else {
                        R2rKind::from_str(&t).map(AxisKind::R2r).map_err(|_| {
                            DfftError::new_err(format!(
                                "unknown axis kind '{n}' (expected 'fft', 'identity' or one of dct1, dct2, \
                                 dct3, dct4, dst1, dst2, dst3, dst4, r2hc, hc2r, dht)"
                            ))
                        })
                    }
                })
                .collect()
        })
        .transpose()
}

/// The kinds per axis with `axes` (numpy's `axes=`, negative from the end) transformed and
/// the others [`AxisKind::Identity`]: FFT axes, or `kinds`' along the listed axes.
pub(crate) fn partial_kinds(
    kind: Kind,
    d: usize,
    axes: Option<Vec<isize>>,
    kinds: Option<Vec<AxisKind>>,
) -> PyResult<Option<Vec<AxisKind>>> {
    let Some(axes) = axes else {
        return Ok(kinds);
    };
    let listed: Vec<usize> = axes
        .iter()
        .map(|&a| {
            let b = if a < 0 { a + d as isize } else { a };
            usize::try_from(b).map_err(|_| {
                DfftError::new_err(format!(
                    "axes {axes:?}: axis {a} is out of range for {d} axes"
                ))
            })
        })
        .collect::<PyResult<_>>()?;
    let mask = AxisKind::partial(d, &listed, AxisKind::Fft).map_err(fft_error)?;
    match kinds {
        None if kind == Kind::R2r => Err(DfftError::new_err(
            "kind 'r2r' with axes needs axes_kinds too (the real-to-real kind of each axis)",
        )),
        None => Ok(Some(mask)),
        Some(k) if k.len() != d => Err(DfftError::new_err(format!(
            "axes_kinds has {} entries for {d} axes",
            k.len()
        ))),
        Some(k) => Ok(Some(
            (k.into_iter().zip(mask))
                .map(|(k, m)| {
                    if m.is_transformed() {
                        k
                    } else {
                        AxisKind::Identity
                    }
                })
                .collect(),
        )),
    }
}

/// Python's `numpy.dtype(x).name`.
pub(crate) fn dtype_name_of(dtype: &Bound<'_, PyAny>) -> PyResult<String> {
    let np = dtype.py().import("numpy")?;
    np.getattr("dtype")?
        .call1((dtype,))
        .map_err(|e| DfftError::new_err(format!("dtype {} is not a numpy dtype: {e}", dtype)))?
        .getattr("name")?
        .extract()
}

/// The `machine` argument: `None` (the default profile), a dict of profile fields, or the
/// path of a JSON profile file. Fields left out keep their defaults; unknown ones are refused.
pub(crate) fn machine_profile(machine: Option<&Bound<'_, PyAny>>) -> PyResult<MachineProfile> {
    let Some(m) = machine.filter(|m| !m.is_none()) else {
        return Ok(MachineProfile::default());
    };
    let (text, origin) = if let Ok(path) = m.extract::<std::path::PathBuf>() {
        // The command line's rule for every file read whole: a regular file under a cap (a
        // FIFO or a link to /dev/zero is refused at once).
        let bytes = npyio::read_capped(&path, 1 << 20)
            .map_err(|e| DfftError::new_err(format!("cannot read machine profile: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            DfftError::new_err(format!(
                "cannot read machine profile {}: not UTF-8 text: {e}",
                path.display()
            ))
        })?;
        (text, path.display().to_string())
    } else {
        let dumps = m.py().import("json")?.getattr("dumps")?;
        let text: String = dumps.call1((m,))?.extract()?;
        (text, "the machine dict".to_string())
    };
    let bad = |why: String| DfftError::new_err(format!("bad machine profile ({origin}): {why}"));
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let known = serde_json::to_value(MachineProfile::default()).map_err(|e| bad(e.to_string()))?;
    let (Some(fields), Some(known)) = (value.as_object(), known.as_object()) else {
        return Err(bad("expected an object of named fields".to_string()));
    };
    if let Some(key) = fields.keys().find(|k| !known.contains_key(*k)) {
        let names: Vec<&String> = known.keys().collect();
        return Err(bad(format!("unknown field '{key}' (known: {names:?})")));
    }
    let mut merged = known.clone();
    merged.extend(fields.clone());
    let profile: MachineProfile = serde_json::from_value(serde_json::Value::Object(merged))
        .map_err(|e| bad(e.to_string()))?;
    profile.validate().map_err(|e| bad(e.to_string()))?;
    Ok(profile)
}

/// CPUs this process may run on, divided among the ranks of its node.
pub(crate) fn default_threads(py: Python<'_>, comm: &SimpleCommunicator) -> PyResult<usize> {
    let os = py.import("os")?;
    let cpus: usize = match os.getattr("sched_getaffinity") {
        Ok(f) => f.call1((0,))?.len()?,
        Err(_) => os.getattr("cpu_count")?.call0()?.extract().unwrap_or(1),
    };
    Ok((cpus / ranks_on_node(comm)).max(1))
}
