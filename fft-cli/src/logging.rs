//! `RUST_LOG`-style verbosity: `DFFT_LOG` (or else `RUST_LOG`) holds an env_logger filter
//! such as `info`, `debug` or `fft_cli=debug,redist=trace`; the default prints warnings and
//! errors only. Messages go to stderr, prefixed with the MPI rank the launcher announced.

/// Installs the logger once, before MPI starts.
pub fn init() {
    let env = env_logger::Env::new().filter_or(
        "DFFT_LOG",
        std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
    );
    let rank = cli_common::launcher_rank();
    let mut builder = env_logger::Builder::from_env(env);
    builder.format(move |buf, record| {
        use std::io::Write;
        match rank {
            Some(r) => writeln!(buf, "[dfft {} rank {r}] {}", record.level(), record.args()),
            None => writeln!(buf, "[dfft {}] {}", record.level(), record.args()),
        }
    });
    let _ = builder.try_init();
}

/// How long each phase of a command took, logged by rank 0: each phase at `debug` level as
/// it ends, all of them on one `info` line at the end.
pub struct Phases {
    rank: usize,
    what: &'static str,
    last: std::time::Instant,
    done: Vec<(&'static str, f64)>,
}

impl Phases {
    /// Phases of `what` (e.g. "run") on `rank`, timed from `start`.
    pub fn new(what: &'static str, rank: usize, start: std::time::Instant) -> Self {
        Self {
            rank,
            what,
            last: start,
            done: Vec::new(),
        }
    }

    /// The phase `name` ended now.
    pub fn done(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        let secs = (now - self.last).as_secs_f64();
        self.last = now;
        if self.rank == 0 {
            log::debug!("{}: {name} took {secs:.6} s", self.what);
        }
        self.done.push((name, secs));
    }

    /// Logs every phase on one line.
    pub fn summary(&self) {
        if self.rank == 0 && log::log_enabled!(log::Level::Info) {
            let parts: Vec<String> = self
                .done
                .iter()
                .map(|(name, secs)| format!("{name} {secs:.3} s"))
                .collect();
            log::info!("{} phases (rank 0): {}", self.what, parts.join(", "));
        }
    }
}
