//! `RUST_LOG`-style verbosity: `DFFT_LOG` (or else `RUST_LOG`) holds an env_logger filter
//! such as `info`, `debug` or `fft_cli=debug,redist=trace`; the default prints warnings and
//! errors only. Messages go to stderr, prefixed with the MPI rank the launcher announced.

/// Installs the logger once, before MPI starts.
pub fn init() {
    let env = env_logger::Env::new().filter_or(
        "DFFT_LOG",
        std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
    );
    let rank = crate::args::launcher_rank();
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
