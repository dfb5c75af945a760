//! The per-rank memory limit `dfft` checks its plans and buffers against. It is read here,
//! in the program (the libraries take it as `FftOptions::memory_limit` and never read the
//! environment or `/proc`), and agreed over all ranks so every rank takes the same decision.
//!
//! The limit per rank is `DFFT_MEMORY_LIMIT` if set (bytes, with an optional `K`, `M`, `G` or
//! `T` suffix, powers of 1024; `none`, `off` or `0` turn the check off), else the smallest of
//!
//! * `MemAvailable` of `/proc/meminfo`, divided by the ranks on the node,
//! * the cgroup's free memory (v2 `memory.max − memory.current`, v1 `limit − usage`),
//!   divided by the ranks on the node,
//! * the address-space limit's headroom (`RLIMIT_AS` minus this process's virtual size), and
//!   the data limit's (`RLIMIT_DATA` minus its data size): both are per process, as `ulimit
//!   -v` and `ulimit -d` set them, so they are not divided;
//!
//! and the smallest over all ranks. Where none can be read there is no limit.

use fft_core::memory::format_bytes;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use thiserror::Error;

/// The environment variable that replaces the automatic limit.
pub const MEMORY_LIMIT_ENV: &str = "DFFT_MEMORY_LIMIT";

/// A limit and where it comes from (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// Bytes per rank.
    pub bytes: u64,
    /// Where the number comes from, e.g. `DFFT_MEMORY_LIMIT=8G` or
    /// `MemAvailable 22.80 GiB / 2 rank(s) on the node`.
    pub source: String,
}

/// A `DFFT_MEMORY_LIMIT` that is not a byte count.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("malformed {MEMORY_LIMIT_ENV} '{value}': {reason}")]
pub struct MalformedLimit {
    /// The text given (rank 0's, or "(on another rank)").
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

/// What a limit looks like, for messages.
const LIMIT_FORMS: &str = "expected bytes such as 8000000000, 512M, 1.5G or 8G (K, M, G, T, P, E: \
                           powers of 1024), or 'none'";

/// Parses a `DFFT_MEMORY_LIMIT` value: `Ok(None)` turns the check off (`none`, `off`, `0`).
/// Refused: anything but a decimal number with an optional binary suffix, a value that
/// rounds to 0 bytes (`0.5`), and one above `u64::MAX` bytes (16 EiB).
pub fn parse_override(value: &str) -> Result<Option<Limit>, MalformedLimit> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("none") || v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let bad = |reason: String| MalformedLimit {
        value: value.to_string(),
        reason,
    };
    let bytes = exact_bytes(v).ok_or_else(|| bad(LIMIT_FORMS.to_string()))?;
    if bytes == 0 {
        return if v.bytes().all(|b| b == b'0') {
            Ok(None)
        } else {
            Err(bad(
                "it rounds to 0 bytes: give at least 1 byte, or 'none' (or 0) to turn the \
                 check off"
                    .to_string(),
            ))
        };
    }
    let bytes = u64::try_from(bytes).map_err(|_| {
        bad(format!(
            "it is above the largest limit, {} bytes (16 EiB)",
            u64::MAX
        ))
    })?;
    Ok(Some(Limit {
        bytes,
        source: format!("{MEMORY_LIMIT_ENV}={v}"),
    }))
}

/// `123`, `1.5G`, `512MiB`, `8gb` as bytes (rounded down), exactly in 128 bits; `None` for
/// any other text (signs, exponents, several points, unknown suffixes).
fn exact_bytes(text: &str) -> Option<u128> {
    let t = text.to_ascii_uppercase();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(&t);
    let (number, power) = match t.char_indices().last()? {
        (i, c @ ('K' | 'M' | 'G' | 'T' | 'P' | 'E')) => (&t[..i], 1 + "KMGTPE".find(c)? as u32),
        _ => (t, 0),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    // Digits beyond 40 cannot matter below 2^128 / 2^60 and would overflow the parse.
    if whole.len() > 30 {
        return Some(u128::MAX);
    }
    let scale = 1u128 << (10 * power);
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction = &fraction[..fraction.len().min(30)];
    let fraction_value: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let denominator = 10u128.checked_pow(fraction.len() as u32)?;
    whole
        .checked_mul(scale)?
        .checked_add(fraction_value.checked_mul(scale)? / denominator)
}

/// Reads `MemAvailable` (bytes) from the text of `/proc/meminfo`.
fn mem_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib.saturating_mul(1024))
    })
}

/// Memory left under this process's cgroup limit, if there is one.
fn cgroup_available() -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    // cgroup v2: the process's own group ("max" for no limit does not parse).
    let group = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_string))
        })
        .unwrap_or_default();
    for dir in [
        format!("/sys/fs/cgroup{group}"),
        "/sys/fs/cgroup".to_string(),
    ] {
        if let Some(max) = read(&format!("{dir}/memory.max")) {
            let current = read(&format!("{dir}/memory.current")).unwrap_or(0);
            return Some(max.saturating_sub(current));
        }
    }
    // cgroup v1 (an unlimited group reports a huge number).
    let max = read("/sys/fs/cgroup/memory/memory.limit_in_bytes")?;
    if max >= 1 << 60 {
        return None;
    }
    let used = read("/sys/fs/cgroup/memory/memory.usage_in_bytes").unwrap_or(0);
    Some(max.saturating_sub(used))
}

/// The soft limit `resource` sets, if any.
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    // SAFETY: getrlimit fills the struct we own.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(resource, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(limit.rlim_cur)
}

/// (virtual size, data size) of this process in bytes, from `/proc/self/statm`.
fn process_sizes() -> Option<(u64, u64)> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: Vec<u64> = statm
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some((pages.first()? * page, pages.get(5)? * page))
}

/// The limit on this node, without agreeing with the other ranks. `Ok(None)`: no limit.
pub fn local_limit(ranks_on_node: usize) -> Result<Option<Limit>, MalformedLimit> {
    if let Ok(value) = std::env::var(MEMORY_LIMIT_ENV) {
        return parse_override(&value);
    }
    let ranks = ranks_on_node.max(1) as u64;
    let mut candidates: Vec<Limit> = Vec::new();
    let per_rank = |available: u64, what: &str| Limit {
        bytes: available / ranks,
        source: format!(
            "{what} {} / {ranks} rank(s) on the node",
            format_bytes(available)
        ),
    };
    if let Some(m) = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| mem_available(&s))
    {
        candidates.push(per_rank(m, "MemAvailable"));
    }
    if let Some(c) = cgroup_available() {
        candidates.push(per_rank(c, "cgroup memory limit"));
    }
    let sizes = process_sizes();
    for (resource, name, used) in [
        (libc::RLIMIT_AS, "RLIMIT_AS (ulimit -v)", sizes.map(|s| s.0)),
        (
            libc::RLIMIT_DATA,
            "RLIMIT_DATA (ulimit -d)",
            sizes.map(|s| s.1),
        ),
    ] {
        if let Some(max) = rlimit(resource) {
            let used = used.unwrap_or(0);
            candidates.push(Limit {
                bytes: max.saturating_sub(used),
                source: format!(
                    "{name} {} minus {} in use",
                    format_bytes(max),
                    format_bytes(used)
                ),
            });
        }
    }
    Ok(candidates.into_iter().min_by_key(|l| l.bytes))
}

/// The limit agreed over all ranks of `world` (collective): the smallest, with the source of
/// the lowest rank that has it. A malformed override on any rank is an error on every rank.
pub fn agreed(world: &SimpleCommunicator) -> Result<Option<Limit>, MalformedLimit> {
    let node = world.split_shared(world.rank());
    let local = local_limit(node.size() as usize);
    let mine = match &local {
        Ok(Some(l)) => l.bytes,
        Ok(None) | Err(_) => u64::MAX,
    };
    let mut malformed = 0u64;
    world.all_reduce_into(
        &u64::from(local.is_err()),
        &mut malformed,
        SystemOperation::max(),
    );
    if malformed != 0 {
        return Err(local.err().unwrap_or_else(|| MalformedLimit {
            value: "(on another rank)".to_string(),
            reason: LIMIT_FORMS.to_string(),
        }));
    }
    let mut smallest = 0u64;
    world.all_reduce_into(&mine, &mut smallest, SystemOperation::min());
    if smallest == u64::MAX {
        return Ok(None);
    }
    // The lowest rank holding the smallest limit tells where it comes from.
    let holder = if mine == smallest {
        world.rank()
    } else {
        i32::MAX
    };
    let mut owner = 0i32;
    world.all_reduce_into(&holder, &mut owner, SystemOperation::min());
    let mut source = match local {
        Ok(Some(l)) if world.rank() == owner => l.source.into_bytes(),
        _ => Vec::new(),
    };
    let root = world.process_at_rank(owner);
    let mut len = source.len() as u64;
    root.broadcast_into(&mut len);
    source.resize(len as usize, 0);
    if !source.is_empty() {
        root.broadcast_into(&mut source[..]);
    }
    let mut source = String::from_utf8_lossy(&source).into_owned();
    if owner != 0 {
        source.push_str(&format!(" on rank {owner}"));
    }
    Ok(Some(Limit {
        bytes: smallest,
        source,
    }))
}

/// Checks an estimate of the bytes one rank needs against `limit`: the message of the error
/// names `what`, the parts of the estimate, the limit and its source. Pure (every rank
/// computes the same from global arguments and the agreed limit).
pub fn check(what: &str, need: u64, parts: &str, limit: Option<&Limit>) -> Result<(), String> {
    match limit {
        Some(l) if need > l.bytes => Err(format!(
            "not enough memory for {what}: needs {} per rank ({parts}), limit {} per rank ({}); \
             use more ranks or nodes, a smaller shape, or set {MEMORY_LIMIT_ENV}",
            format_bytes(need),
            format_bytes(l.bytes),
            l.source
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse() {
        assert_eq!(parse_override("none"), Ok(None));
        assert_eq!(parse_override("0"), Ok(None));
        assert_eq!(parse_override("1M").unwrap().unwrap().bytes, 1 << 20);
        // The largest byte count is a limit, not a malformed value.
        let max = parse_override("18446744073709551615").unwrap().unwrap();
        assert_eq!(max.bytes, u64::MAX);
        assert_eq!(parse_override("1.5G").unwrap().unwrap().bytes, 3 << 29);
        assert_eq!(parse_override("512MiB").unwrap().unwrap().bytes, 512 << 20);
        // Not limits: a fraction of a byte, more than 16 EiB, other forms.
        for bad in [
            "0.5",
            "18446744073709551616",
            "99999999T",
            "1e30",
            "-1",
            "8Q",
            "lots",
            ".",
        ] {
            let e = parse_override(bad).unwrap_err();
            assert!(e
                .to_string()
                .starts_with(&format!("malformed DFFT_MEMORY_LIMIT '{bad}': ")));
        }
        assert!(parse_override("0.5")
            .unwrap_err()
            .reason
            .contains("rounds to 0 bytes"));
        assert!(parse_override("99999999T")
            .unwrap_err()
            .reason
            .contains("above the largest"));
        assert_eq!(parse_override("000"), Ok(None));
    }

    #[test]
    fn meminfo_is_read() {
        let text = "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(mem_available(text), Some(8_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn the_check_names_the_parts_and_the_source() {
        let limit = Limit {
            bytes: 1 << 20,
            source: "DFFT_MEMORY_LIMIT=1M".to_string(),
        };
        assert_eq!(check("x", 1 << 20, "p", Some(&limit)), Ok(()));
        assert_eq!(check("x", 1 << 40, "p", None), Ok(()));
        assert_eq!(
            check("dfft redist", 3 << 20, "blocks 3.00 MiB", Some(&limit)).unwrap_err(),
            "not enough memory for dfft redist: needs 3.00 MiB per rank (blocks 3.00 MiB), \
             limit 1.00 MiB per rank (DFFT_MEMORY_LIMIT=1M); use more ranks or nodes, a \
             smaller shape, or set DFFT_MEMORY_LIMIT"
        );
    }
}
