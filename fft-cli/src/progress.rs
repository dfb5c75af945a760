//! Progress bars for long loops: shown on rank 0 only, only when stdout is a terminal, and
//! never with `--json` (the caller passes `show = rank == 0 && !json`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Loops shorter than this many steps get no bar.
const MIN_STEPS: u64 = 20;

/// A progress bar over `len` steps drawn on stderr, or `None` when `show` is false, stdout or
/// stderr is not a terminal, or the loop is short.
pub fn bar(len: u64, show: bool, what: &str) -> Option<ProgressBar> {
    if !show || len < MIN_STEPS || !std::io::stdout().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if bar.is_hidden() {
        return None;
    }
    let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({elapsed} < {eta})")
        .expect("a valid template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_string());
    Some(bar)
}
