//! This machine's profile for `dfft run`, measured on first use and cached per machine, as
//! FFTW keeps its wisdom: `--machine FILE`, else `$DFFT_MACHINE`, else the cached profile of
//! this machine, else a quick calibration (collective, one to two seconds, ending with one real
//! transform on these ranks: `calibrate_anchor`) whose result is cached for the next runs. Rank 0 reads or measures and every rank gets its profile, so
//! all ranks model the same machine.
//!
//! The cache lives in `$DFFT_CACHE_DIR`, else `$XDG_CACHE_HOME/dfft`, else `~/.cache/dfft`,
//! one file per machine, named and stamped with what identifies it (host name, CPU model,
//! core count): a file written on another machine (a shared home directory) or one that is
//! not a usable profile is measured again and replaced, never trusted. Files are written
//! atomically (a temporary file renamed into place).

use crate::machine::{LoadedProfile, Origin};
use fft_core::FftError;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The environment variable naming the directory of cached profiles.
pub const CACHE_ENV: &str = "DFFT_CACHE_DIR";

/// Profiles larger than this are refused: a calibration with all its samples is a few tens
/// of KiB.
pub const MAX_PROFILE_BYTES: u64 = crate::machine::PROFILE_CAP;

/// What identifies a machine in its cache file's name and contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineKey {
    /// The host name.
    pub hostname: String,
    /// `model name` of /proc/cpuinfo.
    pub cpu_model: String,
    /// Online cores.
    pub cores: usize,
}

impl MachineKey {
    /// This machine's key (reads the host name and /proc/cpuinfo).
    pub fn this_machine() -> Self {
        Self {
            hostname: crate::machine::hostname(),
            cpu_model: crate::provenance::cpu_model(),
            cores: crate::provenance::cores(),
        }
    }

    /// `machine-<host>-<hash of the key>.json`; the host part keeps file-name characters only.
    pub fn file_name(&self) -> String {
        let host: String = self
            .hostname
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        // FNV-1a: stable across builds and platforms, unlike std's hasher.
        let text = format!("{}\n{}\n{}", self.hostname, self.cpu_model, self.cores);
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        format!("machine-{host}-{hash:016x}.json")
    }
}

/// The cache directory: `$DFFT_CACHE_DIR`, else `$XDG_CACHE_HOME/dfft`, else
/// `~/.cache/dfft`; `None` without any of them.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(CACHE_ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("dfft")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("dfft")))
}

/// This machine's cache file, `None` without a cache directory.
pub fn cache_path() -> Option<PathBuf> {
    cache_dir().map(|d| d.join(MachineKey::this_machine().file_name()))
}

/// Reads a file dfft was pointed at as UTF-8 text, through `npyio::read_capped` (the one
/// reader for files read whole: a regular file, after symbolic links, of at most `cap`
/// bytes).
pub fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    let bytes = npyio::read_capped(path, cap).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))
}

/// What the cache holds for this machine.
enum Cached {
    /// A usable profile: its text.
    Found(String),
    /// No file.
    Missing,
    /// A file that cannot be used, and why.
    Unusable(String),
}

/// Reads this machine's cache file: a profile stamped with this machine's key.
fn read_cache(path: &Path, key: &MachineKey) -> Cached {
    if !path.exists() && path.symlink_metadata().is_err() {
        return Cached::Missing;
    }
    let text = match read_capped(path, MAX_PROFILE_BYTES) {
        Ok(t) => t,
        Err(e) => return Cached::Unusable(e),
    };
    let stamped: Option<MachineKey> = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| serde_json::from_value(v.get("machine")?.clone()).ok());
    match stamped {
        Some(k) if &k == key => {}
        Some(k) => {
            return Cached::Unusable(format!(
                "written on another machine ({} / {} / {} cores)",
                k.hostname, k.cpu_model, k.cores
            ))
        }
        None => return Cached::Unusable("no `machine` stamp".into()),
    }
    match crate::machine::parse(&text) {
        Ok(_) => Cached::Found(text),
        Err(e) => Cached::Unusable(e),
    }
}

/// Broadcasts rank 0's text to every rank.
fn broadcast_text(world: &SimpleCommunicator, text: &mut String) {
    let root = world.process_at_rank(0);
    let mut len = text.len() as u64;
    root.broadcast_into(&mut len);
    if len == 0 {
        // An empty buffer is refused by some MPI libraries (MPI_ERR_ARG).
        text.clear();
        return;
    }
    let mut bytes = std::mem::take(text).into_bytes();
    bytes.resize(len as usize, 0);
    root.broadcast_into(&mut bytes[..]);
    *text = String::from_utf8(bytes).unwrap_or_default();
}

/// A profile every rank agrees on, for `dfft run` (collective): `--machine FILE`, else
/// `$DFFT_MACHINE`, else this machine's cached profile, else a quick calibration that is
/// cached. Rank 0 reads the file; the others get its text, so a file seen differently by
/// different ranks cannot make them model different machines. A measurement is announced on
/// stderr in one line (rank 0); the run's report names the profile in every case.
pub fn load_for_run(
    world: &SimpleCommunicator,
    machine: Option<&Path>,
) -> Result<LoadedProfile, FftError> {
    let explicit = crate::machine::explicit_path(machine);
    let key = MachineKey::this_machine();
    let path = match &explicit {
        Some((path, _)) => Some(path.clone()),
        None => cache_path(),
    };
    // Rank 0's verdict: 0 use the text, 1 measure, 2 an error (the text says which).
    let mut verdict = 0u8;
    let mut text = String::new();
    let mut note = String::new();
    if world.rank() == 0 {
        match (&explicit, &path) {
            (Some((p, _)), _) => match read_capped(p, MAX_PROFILE_BYTES) {
                Ok(t) => text = t,
                Err(e) => {
                    verdict = 2;
                    text = format!("{}: {e}", p.display());
                }
            },
            (None, Some(p)) => match read_cache(p, &key) {
                Cached::Found(t) => text = t,
                Cached::Missing => verdict = 1,
                Cached::Unusable(why) => {
                    verdict = 1;
                    note = format!("{} is not a usable profile ({why}); ", p.display());
                }
            },
            (None, None) => verdict = 1,
        }
    }
    world.process_at_rank(0).broadcast_into(&mut verdict);
    broadcast_text(world, &mut text);
    match verdict {
        2 => Err(FftError::BadMachineProfile { reason: text }),
        1 => measure_and_cache(world, path.as_deref(), &key, &note),
        _ => {
            let origin = match explicit {
                Some((_, origin)) => origin,
                None => Origin::Cache(path.clone().unwrap_or_default()),
            };
            let described = path.clone().unwrap_or_default();
            let (profile, defaulted) =
                crate::machine::parse(&text).map_err(|reason| FftError::BadMachineProfile {
                    reason: format!("{}: {reason}", described.display()),
                })?;
            Ok(LoadedProfile {
                profile,
                origin,
                defaulted,
            })
        }
    }
}

/// Measures a quick profile (collective) and, with a cache file, writes it there.
fn measure_and_cache(
    world: &SimpleCommunicator,
    path: Option<&Path>,
    key: &MachineKey,
    note: &str,
) -> Result<LoadedProfile, FftError> {
    let started = std::time::Instant::now();
    let measured = crate::calibrate_cmd::measure(world, true)?;
    let seconds = started.elapsed().as_secs_f64();
    let provenance = crate::provenance::Provenance::collect(world);
    let written = match path {
        Some(p) => {
            crate::calibrate_cmd::write_profile(world, p, &measured, Some(key), &provenance).is_ok()
        }
        None => false,
    };
    if world.rank() == 0 {
        let place = match (path, written) {
            (Some(p), true) => format!("cached in {}", p.display()),
            (Some(p), false) => format!("not cached: cannot write {}", p.display()),
            (None, _) => "not cached: no cache directory ($HOME unset)".into(),
        };
        eprintln!(
            "dfft run: {note}measured this machine's profile for the model in {seconds:.1} s \
             ({place}; `dfft calibrate` measures it more thoroughly)"
        );
    }
    Ok(LoadedProfile {
        profile: measured.profile,
        origin: Origin::Measured(path.filter(|_| written).map(Path::to_path_buf)),
        defaulted: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_files_and_differ_by_machine() {
        let a = MachineKey {
            hostname: "node 1/x".into(),
            cpu_model: "Some CPU".into(),
            cores: 8,
        };
        let name = a.file_name();
        assert!(
            name.starts_with("machine-node_1_x-") && name.ends_with(".json"),
            "{name}"
        );
        let b = MachineKey {
            cores: 16,
            ..a.clone()
        };
        assert_ne!(a.file_name(), b.file_name());
        assert_eq!(a.file_name(), a.clone().file_name());
    }

    #[test]
    fn reads_only_small_regular_files() {
        let dir = std::env::temp_dir().join(format!("dfft-cache-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read_capped(&dir, 100)
            .unwrap_err()
            .contains("not a regular file"));
        let big = dir.join("big.json");
        std::fs::write(&big, vec![b' '; 101]).unwrap();
        assert!(read_capped(&big, 100).unwrap_err().contains("101 bytes"));
        assert_eq!(read_capped(&big, 101).unwrap().len(), 101);
        let key = MachineKey::this_machine();
        assert!(matches!(
            read_cache(&dir.join("none.json"), &key),
            Cached::Missing
        ));
        std::fs::write(&big, "{\"ts_inter_s\": 1e-6}").unwrap();
        assert!(matches!(read_cache(&big, &key), Cached::Unusable(w) if w.contains("stamp")));
        let other = MachineKey {
            cores: key.cores + 1,
            ..key.clone()
        };
        let stamped = serde_json::json!({"machine": other, "ts_inter_s": 1e-6});
        std::fs::write(&big, stamped.to_string()).unwrap();
        assert!(matches!(read_cache(&big, &key), Cached::Unusable(w) if w.contains("another")));
        let stamped = serde_json::json!({"machine": key, "ts_inter_s": 1e-6});
        std::fs::write(&big, stamped.to_string()).unwrap();
        assert!(matches!(read_cache(&big, &key), Cached::Found(t) if t.contains("1e-6")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
