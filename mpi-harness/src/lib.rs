//! # mpi-harness
//!
//! Runs MPI test bodies on several ranks from ordinary `#[test]`s (the mpi_test pattern): each
//! launcher test re-launches its own test executable under `mpirun -n P`, running only an
//! `#[ignore]`d body test; the body proves that every rank reached it and finished it by
//! printing marker lines. A launch fails when mpirun exits non-zero, when it runs past its
//! timeout (the whole process group is killed), or when any rank's markers are missing. A
//! missing `mpirun` fails the test: nothing passes without running.
//!
//! ```no_run
//! #[test]
//! fn exchange_np4() {
//!     mpi_harness::Launch::new("exchange_body", 4).run();
//! }
//!
//! #[test]
//! #[ignore = "MPI body"]
//! fn exchange_body() {
//!     if !mpi_harness::is_child() {
//!         return;
//!     }
//!     // let universe = mpi::initialize().unwrap(); ...
//!     let (rank, size) = (0, 4);
//!     mpi_harness::mark_reached("exchange_body", rank, size);
//!     // ... the test ...
//!     mpi_harness::mark_passed("exchange_body", rank, size);
//! }
//! ```

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Environment variable that marks a re-launched child.
pub const CHILD_ENV: &str = "MPI_HARNESS_CHILD";

/// Whether this process was launched by [`Launch::run`] (so the body should run).
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Prints the marker proving that `rank` of `size` reached the body of `test`.
pub fn mark_reached(test: &str, rank: usize, size: usize) {
    println!("\nMPI-HARNESS REACHED {test} {rank}/{size}");
}

/// Prints the marker proving that `rank` of `size` finished the body of `test`.
pub fn mark_passed(test: &str, rank: usize, size: usize) {
    println!("\nMPI-HARNESS PASSED {test} {rank}/{size}");
}

/// This process's rank as the launcher announced it (OpenMPI, PMIx or Slurm variables).
pub fn launcher_rank() -> Option<(usize, usize)> {
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok()?.parse::<usize>().ok())
    };
    Some((
        get(&["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"])?,
        get(&["OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"])?,
    ))
}

/// The launcher program: `$MPIEXEC`, else `mpirun`.
pub fn mpiexec() -> String {
    std::env::var("MPIEXEC").unwrap_or_else(|_| "mpirun".to_string())
}

/// Whether this process runs as root (OpenMPI then needs an explicit permission).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// An `mpirun -n ranks` command with the flags and environment this project's tests need:
/// oversubscription (more ranks than cores), root allowed, one rayon thread per rank,
/// yielding when idle, and no CMA single-copy (unavailable in many containers). Append the
/// program and its arguments.
pub fn mpirun_command(ranks: usize) -> Command {
    let mut cmd = Command::new(mpiexec());
    cmd.arg("--oversubscribe");
    if is_root() {
        cmd.arg("--allow-run-as-root");
    }
    cmd.args(["--bind-to", "none", "-n", &ranks.to_string()]);
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("RAYON_NUM_THREADS", "1");
    cmd
}

/// Runs `cmd` to completion with captured output, in its own process group; past `timeout`
/// the whole group is killed (SIGKILL) and the returned status is that of the killed child.
/// Use [`timed_out`] to tell.
///
/// # Panics
/// If the program cannot be started (e.g. `mpirun` is not installed): a test that cannot
/// launch must fail, not pass.
pub fn run_command(cmd: Command, timeout: Duration) -> Output {
    run_command_timed(cmd, timeout).0
}

/// Like [`run_command`], also saying whether the timeout struck.
pub fn run_command_timed(mut cmd: Command, timeout: Duration) -> (Output, bool) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let program = format!("{:?}", cmd.get_program());
    let mut child = cmd.spawn().unwrap_or_else(|e| {
        panic!("cannot start {program}: {e} (is OpenMPI installed? run scripts/setup)")
    });
    let pgid = child.id() as i32;
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let mut out_pipe = child.stdout.take().expect("piped stdout");
    let mut err_pipe = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            // SAFETY: signalling our own child's process group.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
            break child.wait().expect("wait for killed child");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Grandchildren that escaped the group could keep the pipes open; kill the group again.
    // SAFETY: as above (a no-op if the group is gone).
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    (
        Output {
            status,
            stdout,
            stderr,
        },
        timed_out,
    )
}

/// Whether every rank `0..ranks` printed both markers of `test` with size `ranks`; returns the
/// ranks whose markers are missing.
pub fn missing_ranks(stdout: &str, test: &str, ranks: usize) -> Vec<usize> {
    (0..ranks)
        .filter(|r| {
            let reached = format!("MPI-HARNESS REACHED {test} {r}/{ranks}");
            let passed = format!("MPI-HARNESS PASSED {test} {r}/{ranks}");
            !(has_marker(stdout, &reached) && has_marker(stdout, &passed))
        })
        .collect()
}

/// Whether `marker` occurs in `stdout` followed by whitespace or the end (libtest may print
/// `test name ... ` before it on the same line).
fn has_marker(stdout: &str, marker: &str) -> bool {
    stdout.match_indices(marker).any(|(i, _)| {
        stdout[i + marker.len()..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
    })
}

/// One launch of an MPI test body. See the crate documentation.
#[derive(Debug, Clone)]
pub struct Launch {
    test: String,
    ranks: usize,
    timeout: Duration,
    env: Vec<(String, String)>,
    program: Option<String>,
    args: Vec<String>,
}

impl Launch {
    /// Launches the ignored test `test` of the current test executable on `ranks` processes.
    pub fn new(test: &str, ranks: usize) -> Self {
        Self {
            test: test.to_string(),
            ranks,
            timeout: Duration::from_secs(120),
            env: Vec::new(),
            program: None,
            args: Vec::new(),
        }
    }

    /// Timeout of the whole launch (default 120 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Timeout in seconds.
    pub fn timeout_secs(self, secs: u64) -> Self {
        self.timeout(Duration::from_secs(secs))
    }

    /// An extra environment variable for every rank.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Launch another program instead of the current test executable (its ranks must still
    /// print the markers of `test`).
    pub fn program(mut self, program: &str) -> Self {
        self.program = Some(program.to_string());
        self
    }

    /// Extra arguments for that program.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// Runs the launch; panics with the output if it failed, hung or lost a rank.
    pub fn run(self) -> Output {
        let mut cmd = mpirun_command(self.ranks);
        for (k, v) in &self.env {
            cmd.args(["-x", &format!("{k}={v}")]);
        }
        cmd.args(["-x", &format!("{CHILD_ENV}=1")]);
        match &self.program {
            Some(p) => {
                cmd.arg(p).args(&self.args);
            }
            None => {
                let exe = std::env::current_exe().expect("current test executable");
                cmd.arg(exe)
                    .args([&self.test, "--exact", "--ignored", "--nocapture"])
                    .args(["--test-threads=1"]);
            }
        }
        let (out, timed_out) = run_command_timed(cmd, self.timeout);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let show = || format!("--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
        if timed_out {
            panic!(
                "{} on {} ranks timed out after {:?} (killed)\n{}",
                self.test,
                self.ranks,
                self.timeout,
                show()
            );
        }
        if !out.status.success() {
            panic!(
                "{} on {} ranks failed: mpirun exited with {}\n{}",
                self.test,
                self.ranks,
                out.status,
                show()
            );
        }
        let missing = missing_ranks(&stdout, &self.test, self.ranks);
        if !missing.is_empty() {
            panic!(
                "{} on {} ranks: ranks {missing:?} did not prove they ran the body\n{}",
                self.test,
                self.ranks,
                show()
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_must_come_from_every_rank() {
        let mut out = String::new();
        for r in 0..3 {
            out.push_str(&format!("MPI-HARNESS REACHED t {r}/3\n"));
        }
        out.push_str("MPI-HARNESS PASSED t 0/3\nMPI-HARNESS PASSED t 2/3\n");
        assert_eq!(missing_ranks(&out, "t", 3), vec![1]);
        out.push_str("MPI-HARNESS PASSED t 1/3\n");
        assert!(missing_ranks(&out, "t", 3).is_empty());
        // Markers from a launch of another size do not count.
        assert_eq!(missing_ranks(&out, "t", 4), vec![0, 1, 2, 3]);
        assert_eq!(missing_ranks(&out, "other", 1), vec![0]);
        // Rank 1 of 3 is not rank 1 of 30; libtest's prefix on the line is fine.
        let prefixed = "test x ... MPI-HARNESS REACHED u 1/30\nMPI-HARNESS PASSED u 1/30\n";
        assert_eq!(missing_ranks(prefixed, "u", 3), vec![0, 1, 2]);
    }

    #[test]
    fn run_command_reports_status() {
        let ok = run_command(Command::new("true"), Duration::from_secs(10));
        assert!(ok.status.success());
        let bad = run_command(Command::new("false"), Duration::from_secs(10));
        assert!(!bad.status.success());
    }

    #[test]
    fn timeout_kills_the_process_group() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30"]);
        let start = Instant::now();
        let (out, timed_out) = run_command_timed(cmd, Duration::from_millis(300));
        assert!(timed_out);
        assert!(!out.status.success());
        // The background sleep held the pipes; the group kill must have ended it too.
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    #[should_panic(expected = "cannot start")]
    fn a_missing_launcher_fails() {
        run_command(Command::new("/nonexistent/mpirun"), Duration::from_secs(1));
    }
}
