//! Progress of long loops, on rank 0 only and on stderr (stdout stays clean for `--json`):
//! an indicatif bar where stderr is a terminal; with `--progress` (or `DFFT_PROGRESS=1`)
//! also where it is not, as under `mpirun` or `srun`, whose output is a pipe: then one plain
//! line at most every two seconds. Nothing otherwise, nothing for short loops unless asked.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Loops shorter than this many steps get no bar unless progress is asked for.
const MIN_STEPS: u64 = 20;

/// Seconds between two plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(2);

/// Whether `DFFT_PROGRESS` asks for progress (`1`, `yes`, `true`).
pub fn asked_by_env() -> bool {
    std::env::var("DFFT_PROGRESS")
        .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "yes" | "true"))
        .unwrap_or(false)
}

/// A running progress display.
pub enum Progress {
    /// An indicatif bar on a terminal.
    Bar(ProgressBar),
    /// Plain lines on a pipe.
    Lines {
        /// What is counted.
        what: String,
        /// Steps in all.
        len: u64,
        /// Steps done.
        pos: u64,
        /// When the loop started.
        start: Instant,
        /// When the last line was written.
        last: Instant,
    },
}

/// Progress over `len` steps for `rank`: `None` on other ranks, for short loops (unless
/// `asked`), and where stderr is not a terminal unless `asked` (`--progress`). `quiet`
/// (`--json`) hides the terminal bar unless `asked`.
pub fn start(len: u64, rank: usize, quiet: bool, asked: bool, what: &str) -> Option<Progress> {
    let asked = asked || asked_by_env();
    if rank != 0 || len == 0 || (!asked && (quiet || len < MIN_STEPS)) {
        return None;
    }
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let style =
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({elapsed} < {eta})")
                .expect("a valid template")
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(what.to_string());
        return Some(Progress::Bar(bar));
    }
    if !asked {
        return None;
    }
    let now = Instant::now();
    eprintln!("{what}: 0/{len}");
    Some(Progress::Lines {
        what: what.to_string(),
        len,
        pos: 0,
        start: now,
        last: now,
    })
}

impl Progress {
    /// One more step done.
    pub fn inc(&mut self) {
        match self {
            Progress::Bar(bar) => bar.inc(1),
            Progress::Lines {
                what,
                len,
                pos,
                start,
                last,
            } => {
                *pos += 1;
                if last.elapsed() >= LINE_EVERY || *pos == *len {
                    *last = Instant::now();
                    let elapsed = start.elapsed().as_secs_f64();
                    let eta = elapsed / *pos as f64 * (*len - *pos) as f64;
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(
                        err,
                        "{what}: {pos}/{len} ({:.0} %), {elapsed:.1} s elapsed, about {eta:.1} s left",
                        100.0 * *pos as f64 / *len as f64
                    );
                }
            }
        }
    }

    /// Ends the display (the bar disappears; the lines stay).
    pub fn finish(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
