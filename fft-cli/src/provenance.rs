//! Where a result comes from, in every JSON report's `provenance` object: what was built
//! (dfft version, git commit, cargo profile, rustc), with which MPI library, where it ran
//! (host names, nodes, ranks per node, threads per rank, cores, CPU model) and when (UTC).
//! The command line reads `/proc` here; the libraries never do.

use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use serde::Serialize;

/// The `provenance` object.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// `CARGO_PKG_VERSION` of dfft.
    pub dfft_version: &'static str,
    /// Git commit of the source tree the binary was built from (`-dirty`: tracked files
    /// differed from it), or "unknown".
    pub git_commit: &'static str,
    /// Cargo profile (`release`, `debug`, ...).
    pub build_profile: &'static str,
    /// `rustc -V` of the compiler.
    pub rustc: &'static str,
    /// The MPI library's own description (first line of `MPI_Get_library_version`).
    pub mpi_library: Option<String>,
    /// The MPI standard version the library implements (`MPI_Get_version`).
    pub mpi_version: String,
    /// How the processes were started: `mpirun`, `srun`, `singleton`, or `none` (no MPI).
    pub launcher: &'static str,
    /// Distinct host names of the ranks, sorted.
    pub hostnames: Vec<String>,
    /// Number of distinct hosts.
    pub node_count: usize,
    /// MPI processes (null without MPI: `dfft plan`).
    pub ranks: Option<usize>,
    /// Most ranks on one host.
    pub ranks_per_node: Option<usize>,
    /// Most rayon threads of one rank.
    pub threads_per_rank: Option<usize>,
    /// Cores of a host (online processors, the largest over the ranks' hosts).
    pub cores_per_node: usize,
    /// Whether a host ran more threads (ranks × threads) than it has cores: timings are then
    /// shared-core timings.
    pub oversubscribed: bool,
    /// The CPU (`model name` of /proc/cpuinfo).
    pub cpu_model: String,
    /// The CPU's largest cache as sysfs describes cpu0's, e.g. "L3 480 MiB", or "unknown":
    /// virtual machines of one model name differ in it, and the timings of cache-sized
    /// problems with them.
    pub cpu_cache: String,
    /// When the report was made, UTC, RFC 3339.
    pub timestamp_utc: String,
}

/// This machine's CPU model name.
pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// cpu0's largest cache level and its size ("L3 480 MiB"), from sysfs.
fn cpu_cache() -> String {
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).ok();
    let largest = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let level: u32 = read(entry.path().join("level"))?.trim().parse().ok()?;
            let size = read(entry.path().join("size"))?;
            let kib: u64 = size.trim().strip_suffix('K')?.parse().ok()?;
            Some((level, kib))
        })
        .max();
    match largest {
        Some((level, kib)) if kib >= 1024 => format!("L{level} {} MiB", kib / 1024),
        Some((level, kib)) => format!("L{level} {kib} KiB"),
        None => "unknown".to_string(),
    }
}

/// Cores of this host (online processors; not the cores a launcher bound this process to,
/// so that ranks bound to one core each do not count as oversubscribed).
pub(crate) fn cores() -> usize {
    // SAFETY: sysconf only reads a system value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(online)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `seconds` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian calendar).
pub fn rfc3339(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    // Days to civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

fn mpi_library() -> Option<String> {
    mpi::environment::library_version()
        .ok()
        .and_then(|v| {
            // The C string's terminator (and padding) may come along.
            v.trim_matches(char::from(0))
                .lines()
                .next()
                .map(|l| l.trim().trim_end_matches(',').to_string())
        })
        .filter(|v| !v.is_empty())
}

fn mpi_version() -> String {
    let (major, minor) = mpi::environment::version();
    format!("{major}.{minor}")
}

/// How this process was started, from the launchers' environment variables.
fn launcher() -> &'static str {
    let has = |k: &str| std::env::var_os(k).is_some();
    if has("SLURM_STEP_ID") && has("SLURM_PROCID") && !has("OMPI_COMM_WORLD_SIZE") {
        "srun"
    } else if has("OMPI_COMM_WORLD_SIZE") || has("PMIX_RANK") || has("PMI_RANK") {
        "mpirun"
    } else {
        "singleton"
    }
}

const NAME_BYTES: usize = 128;

impl Provenance {
    fn build(mpi_library: Option<String>) -> Self {
        Self {
            dfft_version: env!("CARGO_PKG_VERSION"),
            git_commit: env!("DFFT_GIT_COMMIT"),
            build_profile: env!("DFFT_BUILD_PROFILE"),
            rustc: env!("DFFT_RUSTC_VERSION"),
            mpi_library,
            mpi_version: mpi_version(),
            launcher: "none",
            hostnames: vec![crate::machine::hostname()],
            node_count: 1,
            ranks: None,
            ranks_per_node: None,
            threads_per_rank: None,
            cores_per_node: cores(),
            oversubscribed: false,
            cpu_model: cpu_model(),
            cpu_cache: cpu_cache(),
            timestamp_utc: now_utc(),
        }
    }

    /// For a command that runs without MPI (`dfft plan`): this host, no ranks.
    pub fn without_mpi() -> Self {
        Self::build(mpi_library())
    }

    /// For a command under MPI; collective over `world` (every rank must call it), the
    /// answer is the same on every rank.
    pub fn collect(world: &SimpleCommunicator) -> Self {
        use mpi::collective::SystemOperation;
        let mut p = Self::build(mpi_library());
        p.launcher = launcher();
        let size = world.size() as usize;
        let mut name = [0u8; NAME_BYTES];
        let host =
            mpi::environment::processor_name().unwrap_or_else(|_| crate::machine::hostname());
        for (b, c) in name.iter_mut().zip(host.bytes()) {
            *b = c;
        }
        let mut names = vec![0u8; NAME_BYTES * size];
        world.all_gather_into(&name[..], &mut names[..]);
        let mut per_rank: Vec<String> = names
            .chunks(NAME_BYTES)
            .map(|c| {
                let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
                String::from_utf8_lossy(&c[..end]).into_owned()
            })
            .collect();
        let mut hosts = per_rank.clone();
        hosts.sort();
        hosts.dedup();
        per_rank.sort();
        let per_node = hosts
            .iter()
            .map(|h| per_rank.iter().filter(|r| *r == h).count())
            .max()
            .unwrap_or(1);
        let local = [rayon::current_num_threads() as u64, cores() as u64];
        let mut most = [0u64; 2];
        world.all_reduce_into(&local[..], &mut most[..], SystemOperation::max());
        p.node_count = hosts.len();
        p.hostnames = hosts;
        p.ranks = Some(size);
        p.ranks_per_node = Some(per_node);
        p.threads_per_rank = Some(most[0] as usize);
        p.cores_per_node = most[1] as usize;
        p.oversubscribed = per_node * most[0] as usize > most[1] as usize;
        p
    }
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
