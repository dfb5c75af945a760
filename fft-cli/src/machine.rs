//! Machine profiles for the complexity model, as the command line finds them: `--machine
//! FILE`, else `$DFFT_MACHINE`, else the built-in defaults (`dfft plan`) or this machine's
//! measured profile (`dfft run`, see `profile_cache`). The library takes the profile as a
//! value (`FftOptions::machine`); reading files and the environment happens only here.
//!
//! Files are read strictly: a JSON object whose keys are profile fields (plus the
//! `calibration` and `provenance` blocks `dfft calibrate` writes), each of its field's type.
//! Unknown keys, other types, arrays and empty objects are refused with the offending key;
//! fields the file does not give take the defaults, and the loaded profile lists them.

use fft_core::model::MachineProfile;
use fft_core::FftError;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The environment variable naming a machine profile file.
pub const MACHINE_ENV: &str = "DFFT_MACHINE";

/// Keys a profile file may hold besides the profile's fields: what calibration measured and
/// where, kept for people and ignored by the model.
const METADATA_KEYS: [&str; 3] = ["calibration", "provenance", "machine"];

/// Where a profile came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `--machine FILE`.
    Argument(PathBuf),
    /// `$DFFT_MACHINE`.
    Environment(PathBuf),
    /// This machine's cached profile (`dfft calibrate`, or an earlier `dfft run`, wrote it).
    Cache(PathBuf),
    /// This machine's profile, measured by this run (quick) and cached in the file, if any.
    Measured(Option<PathBuf>),
    /// The built-in defaults (a generic cluster node).
    Defaults,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Argument(p) => write!(f, "--machine {}", p.display()),
            Origin::Environment(p) => write!(f, "${MACHINE_ENV}={}", p.display()),
            Origin::Cache(p) => write!(f, "this machine's profile {}", p.display()),
            Origin::Measured(Some(p)) => {
                write!(
                    f,
                    "this machine's profile, measured now and cached in {}",
                    p.display()
                )
            }
            Origin::Measured(None) => f.write_str("this machine's profile, measured now"),
            Origin::Defaults => f.write_str("built-in defaults (a generic cluster node)"),
        }
    }
}

/// A profile with where it came from and which of its fields took the defaults.
#[derive(Debug, Clone)]
pub struct LoadedProfile {
    /// The profile.
    pub profile: MachineProfile,
    /// Where it came from.
    pub origin: Origin,
    /// Fields the file did not give (every field for the built-in defaults).
    pub defaulted: Vec<String>,
}

impl LoadedProfile {
    /// The node's memory bandwidth in bytes read or written per second, where a measured
    /// profile gives one (`None` for the built-in defaults).
    pub fn copy_bytes_per_s(&self) -> Option<f64> {
        let tw = self.profile.tw_memory_s_per_byte;
        (self.origin != Origin::Defaults && tw > 0.0).then(|| 1.0 / tw)
    }

    /// The built-in defaults.
    pub fn defaults() -> Self {
        Self {
            profile: MachineProfile::default(),
            origin: Origin::Defaults,
            defaulted: Vec::new(),
        }
    }

    /// One line naming the profile: where it came from, its `source` text, and the fields a
    /// file left to the defaults.
    pub fn describe(&self) -> String {
        let mut s = format!("{} [{}]", self.origin, self.profile.source);
        if !self.defaulted.is_empty() {
            s.push_str(&format!(
                "; defaults for {}: {}",
                if self.defaulted.len() == 1 {
                    "1 field"
                } else {
                    "fields"
                },
                self.defaulted.join(", ")
            ));
        }
        s
    }
}

/// What JSON type each field takes, from the defaults' own serialization.
fn field_types() -> Map<String, Value> {
    match serde_json::to_value(MachineProfile::default()) {
        Ok(Value::Object(map)) => map,
        _ => unreachable!("a profile serializes to an object"),
    }
}

pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_u64() => "a non-negative integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses profile JSON strictly; returns the profile and the fields that took the defaults.
pub fn parse(text: &str) -> Result<(MachineProfile, Vec<String>), String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let (profile, defaulted) = overlay(&MachineProfile::default(), &value)?;
    if defaulted.len() == field_types().len() {
        return Err(format!(
            "no profile field given (the keys are {}); leave out --machine and {MACHINE_ENV} \
             to use the built-in defaults",
            field_types()
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok((profile, defaulted))
}

/// `base` with the fields `value` (a JSON object) gives replaced, checked as [`parse`] checks
/// a file; returns the profile and the fields `value` did not give.
pub fn overlay(
    base: &MachineProfile,
    value: &Value,
) -> Result<(MachineProfile, Vec<String>), String> {
    let Value::Object(given) = value else {
        return Err(format!(
            "expected a JSON object of named fields, got {} (fields are never read by position)",
            kind_of(value)
        ));
    };
    let fields = field_types();
    let known: Vec<&str> = fields.keys().map(String::as_str).collect();
    let unknown: Vec<&str> = given
        .keys()
        .map(String::as_str)
        .filter(|k| !fields.contains_key(*k) && !METADATA_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown key(s) {}; a profile's keys are {} (and {})",
            unknown.join(", "),
            known.join(", "),
            METADATA_KEYS.join(", ")
        ));
    }
    let Value::Object(mut merged) = serde_json::to_value(base).map_err(|e| e.to_string())? else {
        unreachable!("a profile serializes to an object");
    };
    let mut defaulted = Vec::new();
    for (key, default) in &fields {
        match given.get(key) {
            None => defaulted.push(key.clone()),
            Some(v) => {
                let fits = match default {
                    Value::Number(n) if n.is_u64() => v.is_u64(),
                    Value::Number(_) => v.is_number(),
                    Value::String(_) => v.is_string(),
                    _ => false,
                };
                if !fits {
                    return Err(format!(
                        "{key} must be {}, got {} ({v})",
                        kind_of(default),
                        kind_of(v)
                    ));
                }
                merged.insert(key.clone(), v.clone());
            }
        }
    }
    let profile: MachineProfile =
        serde_json::from_value(Value::Object(merged)).map_err(|e| e.to_string())?;
    profile
        .validate()
        .map_err(|e| e.to_string().replace("bad machine profile: ", ""))?;
    plausible(&profile)?;
    Ok((profile, defaulted))
}

/// The largest profile file read (a profile is a few kilobytes).
pub const PROFILE_CAP: u64 = 1 << 20;

/// The ranges a profile's values must lie in for the model's predictions to be finite times
/// (every shape dfft can hold: up to 2^64 elements of 16 bytes): (field, least, most, what).
/// Wider than any machine: a message latency up to 10 s, one byte per second at the slowest.
const PLAUSIBLE: [(&str, f64, f64, &str); 13] = [
    ("ts_intra_s", 0.0, 10.0, "seconds"),
    ("ts_window_s", 0.0, 10.0, "seconds"),
    ("tw_window_s_per_byte", 0.0, 1.0, "seconds per byte"),
    ("ts_inter_s", 0.0, 10.0, "seconds"),
    ("exchange_overhead_s", 0.0, 10.0, "seconds"),
    ("tw_intra_s_per_byte", 0.0, 1.0, "seconds per byte"),
    ("tw_inter_s_per_byte", 0.0, 1.0, "seconds per byte"),
    ("tw_node_s_per_byte", 0.0, 1.0, "seconds per byte"),
    (
        "fft_s_per_element_log2",
        0.0,
        1.0,
        "seconds per element·log2(n)",
    ),
    ("copy_bytes_per_s", 1.0, 1e15, "bytes per second"),
    ("stream_bytes_per_s", 1.0, 1e15, "bytes per second"),
    ("uplink_taper", 1.0, 1e6, ""),
    ("intra_inter_overlap", 0.0, 1.0, ""),
];

/// Checks that every value of `profile` lies in its plausible range ([`PLAUSIBLE`]), so no
/// prediction overflows to an infinite or NaN time.
pub fn plausible(profile: &MachineProfile) -> Result<(), String> {
    let Ok(Value::Object(fields)) = serde_json::to_value(profile) else {
        return Ok(());
    };
    for (name, least, most, unit) in PLAUSIBLE {
        let Some(v) = fields.get(name).and_then(Value::as_f64) else {
            continue;
        };
        if !(least..=most).contains(&v) {
            return Err(format!(
                "{name} = {v:e} is outside {least:e}..={most:e}{}{unit}: no machine is that \
                 fast or slow, and the model's times would overflow",
                if unit.is_empty() { "" } else { " " }
            ));
        }
    }
    Ok(())
}

/// A command-line value in `least..=most` (finite): the model flags' parsers.
fn parse_in(text: &str, least: f64, most: f64, unit: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if (least..=most).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected {unit} from {least:e} to {most:e} (a finite number)"
        )),
    }
}

/// `--ts`, `--ts-inter`, `--exchange-overhead`: seconds, 0 to 10.
pub fn parse_latency(text: &str) -> Result<f64, String> {
    parse_in(text, 0.0, 10.0, "seconds")
}

/// `--tw`, `--tw-inter`, `--tw-node`: seconds per byte, 0 to 1.
pub fn parse_inverse_bandwidth(text: &str) -> Result<f64, String> {
    parse_in(text, 0.0, 1.0, "seconds per byte")
}

/// `--fft-rate`: seconds per element·log2(n), 0 to 1.
pub fn parse_fft_rate(text: &str) -> Result<f64, String> {
    parse_in(text, 0.0, 1.0, "seconds per element·log2(n)")
}

/// `--copy-bw`, `--stream-bw`: bytes per second, 1 to 1e15.
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    parse_in(text, 1.0, 1e15, "bytes per second")
}

/// `--uplink-taper`: 1 to 1e6.
pub fn parse_taper(text: &str) -> Result<f64, String> {
    parse_in(text, 1.0, 1e6, "a taper")
}

/// `--overlap`: a fraction, 0 to 1.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    parse_in(text, 0.0, 1.0, "a fraction")
}

/// Reads the profile file at `path` strictly (see [`parse`]): a regular file of at most
/// [`PROFILE_CAP`] bytes (`npyio::read_capped`: a FIFO, a device or a huge file is refused at
/// once), holding UTF-8 JSON.
pub fn read(path: &Path, origin: Origin) -> Result<LoadedProfile, FftError> {
    let bad = |reason: String| FftError::BadMachineProfile {
        reason: format!("{}: {reason}", path.display()),
    };
    let bytes = npyio::read_capped(path, PROFILE_CAP).map_err(|e| FftError::BadMachineProfile {
        reason: e.to_string(),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| bad(format!("not UTF-8 text: {e}")))?;
    let (profile, defaulted) = parse(&text).map_err(bad)?;
    Ok(LoadedProfile {
        profile,
        origin,
        defaulted,
    })
}

/// This machine's name (the kernel's hostname), for file names and provenance.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// What to tell a user running on the built-in profile: it is generic, and how to measure
/// this machine.
pub fn generic_note() -> String {
    "the model's profile is the built-in generic one (a 64-core cluster node), not this \
     machine: `mpirun -n P dfft calibrate` measures it (--machine FILE overrides)"
        .to_string()
}

/// The profile file a user named: `--machine FILE`, else `$DFFT_MACHINE`.
pub fn explicit_path(machine: Option<&Path>) -> Option<(PathBuf, Origin)> {
    if let Some(path) = machine {
        return Some((path.to_path_buf(), Origin::Argument(path.to_path_buf())));
    }
    match std::env::var_os(MACHINE_ENV) {
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            Some((path.clone(), Origin::Environment(path)))
        }
        _ => None,
    }
}

/// The profile `plan` uses (a machine the user may not have): `--machine FILE`, else
/// `$DFFT_MACHINE`, else the built-in defaults. Every rank must see the same file.
pub fn load(machine: Option<&Path>) -> Result<LoadedProfile, FftError> {
    match explicit_path(machine) {
        Some((path, origin)) => read(&path, origin),
        None => Ok(LoadedProfile::defaults()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_round_trip_and_name_their_defaults() {
        let p = MachineProfile::default();
        let (again, defaulted) = parse(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!((again, defaulted.len()), (p.clone(), 0));
        let (q, defaulted) = parse(r#"{"ts_inter_s": 1e-5, "calibration": {"x": 1}}"#).unwrap();
        assert_eq!(q.ts_inter_s, 1e-5);
        assert_eq!(q.cores_per_node, p.cores_per_node);
        assert_eq!(defaulted.len(), field_types().len() - 1);
        assert!(defaulted.contains(&"cores_per_node".to_string()));
        assert!(!defaulted.contains(&"ts_inter_s".to_string()));
    }

    #[test]
    fn profiles_refuse_what_they_cannot_mean() {
        for (bad, says) in [
            ("[1,2,3]", "never read by position"),
            ("{}", "no profile field given"),
            (r#"{"ts_inter": 1e-5}"#, "unknown key(s) ts_inter"),
            (
                r#"{"cores_per_node": 2.5}"#,
                "cores_per_node must be a non-negative integer",
            ),
            (
                r#"{"cores_per_node": -4}"#,
                "cores_per_node must be a non-negative integer",
            ),
            (r#"{"ts_inter_s": "fast"}"#, "ts_inter_s must be a number"),
            (r#"{"source": 3}"#, "source must be a string"),
            (r#"{"ts_inter_s": -1}"#, "ts_inter_s = -1"),
            (r#"{"cores_per_node": 0}"#, "cores_per_node = 0"),
            (r#"{"copy_bytes_per_s": 0}"#, "copy_bytes_per_s = 0"),
            ("[", "not JSON"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
