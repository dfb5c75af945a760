//! What this process holds in memory: peak resident set, proportional set now, and the peak
//! proportional set over a stretch of work, sampled from a second thread.
//!
//! The kernel keeps the peak of the resident set (`ru_maxrss`) but not of the proportional
//! set. The resident set counts a shared page in every process that touched it (a peer's rows
//! of a shared-memory window, OpenMPI's transport segments), so on one node the ranks' RSS sum
//! to more than the node holds; the proportional set divides each shared page among the
//! processes that map it. A reading of the proportional set at rest misses what a transform
//! allocates while it runs (FFTW-MPI's transposes take a buffer per execution), so
//! [`PssSampler`] reads it every millisecond while the work runs and keeps the largest value.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The file the proportional set is read from.
const SMAPS_ROLLUP: &str = "/proc/self/smaps_rollup";

/// Time between two samples of [`PssSampler`].
const SAMPLE_INTERVAL: Duration = Duration::from_millis(1);

/// Peak resident set size of this process in bytes (`ru_maxrss`; 0 where unavailable).
pub fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage writes into the struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    if ok {
        usage.ru_maxrss as u64 * 1024 // kilobytes on Linux
    } else {
        0
    }
}

/// This process's proportional set size now (`Pss` of `/proc/self/smaps_rollup`; 0 where
/// unavailable): shared pages count divided by the processes mapping them, so the sum over
/// the ranks of a node is what the node holds.
pub fn pss_bytes() -> u64 {
    std::fs::read_to_string(SMAPS_ROLLUP)
        .ok()
        .and_then(|s| parse_pss(&s))
        .unwrap_or(0)
}

/// The `Pss:` line of a `smaps_rollup` text, in bytes.
fn parse_pss(rollup: &str) -> Option<u64> {
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Samples this process's proportional set size from a thread of its own until
/// [`finish`](Self::finish), which returns the largest value seen (and at least the value at
/// the start and at the end, so work shorter than one interval is still bounded below by
/// them). Start it right before the work and finish it right after; the sampling costs a
/// little CPU, so keep it out of timed work.
///
/// ```ignore
/// let sampler = PssSampler::start();
/// plan.forward(&input, &mut output)?;
/// let peak = sampler.finish();
/// ```
pub struct PssSampler {
    stop: Arc<AtomicBool>,
    /// `None` where no thread could be started (the peak is then taken at the end only).
    thread: Option<JoinHandle<u64>>,
}

impl PssSampler {
    /// Starts sampling. A thread that cannot start (an address space too small for its
    /// stack) leaves the sampling to [`PssSampler::finish`]'s single reading.
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let first = pss_bytes();
        let thread = std::thread::Builder::new()
            .name("pss-sampler".into())
            .spawn(move || {
                let mut peak = first;
                while !flag.load(Ordering::Acquire) {
                    peak = peak.max(pss_bytes());
                    std::thread::sleep(SAMPLE_INTERVAL);
                }
                peak
            })
            .ok();
        PssSampler { stop, thread }
    }

    /// Stops sampling; the largest proportional set size seen, in bytes (0 where
    /// `/proc/self/smaps_rollup` cannot be read).
    pub fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Release);
        let sampled = self.thread.map_or(0, |t| t.join().unwrap_or(0));
        sampled.max(pss_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_pss_line_of_a_rollup() {
        let rollup = "55d0c0000000-7ffd00000000 ---p 00000000 00:00 0  [rollup]\n\
                      Rss:              823604 kB\n\
                      Pss:              818805 kB\n\
                      Pss_Anon:         786432 kB\n";
        assert_eq!(parse_pss(rollup), Some(818_805 * 1024));
        assert_eq!(parse_pss("Rss: 1 kB\n"), None);
    }

    /// A buffer that lives for a while in the middle of the sampling and is freed before its
    /// end shows in the peak, not in the reading at the end.
    #[test]
    fn the_sampler_sees_a_buffer_freed_before_it_finishes() {
        if pss_bytes() == 0 {
            eprintln!("skipped: /proc/self/smaps_rollup is not readable here");
            return;
        }
        const BYTES: usize = 64 << 20;
        let sampler = PssSampler::start();
        std::thread::sleep(Duration::from_millis(20));
        let before = pss_bytes();
        {
            // Touch every page so it is resident; black_box keeps the writes.
            let mut buffer = vec![0u8; BYTES];
            for page in buffer.chunks_mut(4096) {
                page[0] = 1;
            }
            std::hint::black_box(&mut buffer);
            std::thread::sleep(Duration::from_millis(100));
        } // freed here: a buffer this large is its own mapping, unmapped on free
        let after = pss_bytes();
        let peak = sampler.finish();
        assert!(
            after < before + (BYTES as u64) / 2,
            "the buffer was not returned: {before} -> {after} bytes"
        );
        assert!(
            peak >= before + (BYTES as u64) * 9 / 10,
            "peak {peak} bytes misses the 64 MiB buffer (before it {before} bytes)"
        );
    }
}
