//! # mpi-harness
//!
//! Runs MPI test bodies on several ranks from ordinary `#[test]`s (the mpi_test pattern): each
//! launcher test re-launches its own test executable under `mpirun -n P`, running only an
//! `#[ignore]`d body test; the body proves that every rank reached it and finished it by
//! printing marker lines. A launch fails when mpirun exits non-zero, when it runs past its
//! timeout (mpirun and every rank it started are killed), or when any rank's markers are
//! missing. A missing `mpirun` fails the test: nothing passes without running.
//!
//! ```no_run
//! use mpi::traits::*;
//!
//! // One launcher #[test] per rank count (or `Launch::new("exchange_body", 4).run()`).
//! mpi_harness::launches!("exchange_body", 120; exchange_np1 => 1, exchange_np4 => 4);
//!
//! #[test]
//! #[ignore = "MPI body: run by the exchange_np* launchers under mpirun"]
//! fn exchange_body() {
//!     // Not launched by the harness (a plain `cargo test -- --ignored`): nothing to do.
//!     let Some(mpi) = mpi_harness::start("exchange_body") else {
//!         return;
//!     };
//!     let world = mpi.world();
//!     let (rank, size) = (mpi.rank(), mpi.size());
//!     // ... the test: panic on any failure (the panic ends the whole job) ...
//!     world.barrier();
//!     mpi.pass();
//! }
//! ```
//!
//! [`start`] is the shared prologue of every MPI body: it returns `None` outside a launch,
//! and otherwise initializes MPI, installs [`abort_on_panic`] and prints this rank's
//! REACHED marker; [`MpiBody::pass`] prints the PASSED marker (call it last). Bodies that do
//! not initialize MPI themselves print the markers with [`mark_reached`] and [`mark_passed`]
//! and [`launcher_rank`].
//!
//! The child command is
//! `mpirun --oversubscribe [--allow-run-as-root] --bind-to none -n P -x RAYON_NUM_THREADS=1
//! -x MPI_HARNESS_CHILD=1 <this test executable> <body> --exact --ignored --nocapture
//! --test-threads=1`. The launcher is `$MPIEXEC` (default `mpirun`; it must accept OpenMPI's
//! flags) and `$MPIEXEC_PREFLAGS` (split on whitespace) is inserted before `-n`.
//!
//! `cargo test` runs tests on as many threads as there are cores, so several launches may run
//! at once, each with P processes; on a small machine that oversubscribes the cores many times
//! over. The ranks yield when idle (`OMPI_MCA_mpi_yield_when_idle=1`), which keeps this
//! correct but slow: pass `-- --test-threads=2` (as `scripts/test` does) or fewer, and give
//! large launches a longer [`Launch::timeout`].

#![warn(missing_docs)]

use mpi::traits::Communicator;
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Environment variable that marks a re-launched child.
pub const CHILD_ENV: &str = "MPI_HARNESS_CHILD";

/// Default timeout of a [`Launch`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a command gets to end after SIGTERM, and its output pipes to close after it
/// exited, before the harness kills it or cuts the output.
const GRACE: Duration = Duration::from_secs(5);

/// Whether this process was launched by [`Launch::run`] (so the body should run).
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// The marker line proving that `rank` of `size` reached the body of `test`.
pub fn reached_marker(test: &str, rank: usize, size: usize) -> String {
    format!("MPI-HARNESS REACHED {test} {rank}/{size}")
}

/// The marker line proving that `rank` of `size` finished the body of `test`.
pub fn passed_marker(test: &str, rank: usize, size: usize) -> String {
    format!("MPI-HARNESS PASSED {test} {rank}/{size}")
}

/// Prints the marker proving that `rank` of `size` reached the body of `test`. Call it right
/// after MPI is initialized.
pub fn mark_reached(test: &str, rank: usize, size: usize) {
    // The leading newline ends libtest's `test name ... ` prefix, so the marker starts a line.
    println!("\n{}", reached_marker(test, rank, size));
}

/// Prints the marker proving that `rank` of `size` finished the body of `test`. Call it last.
pub fn mark_passed(test: &str, rank: usize, size: usize) {
    println!("\n{}", passed_marker(test, rank, size));
}

/// An MPI test body that has started: MPI initialized (finalized when this is dropped), a
/// panic on any rank aborts the whole job, and this rank's REACHED marker printed. Made by
/// [`start`]; [`MpiBody::pass`] ends the body.
pub struct MpiBody {
    test: String,
    universe: mpi::environment::Universe,
    rank: usize,
    size: usize,
}

impl std::fmt::Debug for MpiBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiBody")
            .field("test", &self.test)
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

impl MpiBody {
    /// `MPI_COMM_WORLD`.
    pub fn world(&self) -> mpi::topology::SimpleCommunicator {
        self.universe.world()
    }

    /// The MPI universe (finalized when the body is dropped).
    pub fn universe(&self) -> &mpi::environment::Universe {
        &self.universe
    }

    /// This process's rank in `MPI_COMM_WORLD`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes in `MPI_COMM_WORLD`.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Prints this rank's PASSED marker and finalizes MPI: the last line of a body. A body
    /// that returns without it fails its launch.
    pub fn pass(self) {
        mark_passed(&self.test, self.rank, self.size);
    }
}

/// The prologue of an MPI test body named `test` (the name its launcher runs): `None` when
/// this process was not launched by [`Launch::run`] (the body should return at once);
/// otherwise MPI initialized, [`abort_on_panic`] installed and this rank's REACHED marker
/// printed. See the crate documentation for a whole body.
///
/// # Panics
/// If MPI was already initialized in this process.
pub fn start(test: &str) -> Option<MpiBody> {
    if !is_child() {
        return None;
    }
    let universe = mpi::initialize().expect("MPI initializes (once per process)");
    abort_on_panic();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    mark_reached(test, rank, size);
    Some(MpiBody {
        test: test.to_string(),
        universe,
        rank,
        size,
    })
}

/// The body of a launch whose code initializes MPI itself (an example's or a program's
/// `main`): nothing outside a launch; otherwise this rank's REACHED marker (the rank as the
/// launcher announced it, [`launcher_rank`]), `main`, and the PASSED marker. A panic in `main`
/// fails the launch (the program's own hook should end the job with `MPI_Abort`).
///
/// # Panics
/// If the launcher announced no rank (not OpenMPI, PMIx or Slurm).
pub fn program_body(test: &str, main: impl FnOnce()) {
    if !is_child() {
        return;
    }
    let (rank, size) = launcher_rank().expect("launched by mpirun, which announces the rank");
    mark_reached(test, rank, size);
    main();
    mark_passed(test, rank, size);
}

/// Installs a panic hook that, after the previous hook has printed the message, calls
/// `MPI_Abort` on `MPI_COMM_WORLD` if MPI is initialized and not finalized: a failed assertion
/// on one rank then ends the launch at once instead of leaving the other ranks waiting in a
/// collective until the timeout. [`start`] installs it. (The libraries' own hook,
/// `redist::comm::abort_on_panic`, does the same for the binaries; the harness cannot depend
/// on the crates it tests.)
pub fn abort_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            let world = mpi::topology::SimpleCommunicator::world();
            eprintln!(
                "mpi-harness: rank {} panicked; calling MPI_Abort to end the launch",
                world.rank()
            );
            world.abort(101);
        }
    }));
}

/// This process's `(rank, size)` as the launcher announced it in the environment (OpenMPI,
/// PMIx or Slurm variables), for children that do not initialize MPI.
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
    std::env::var("MPIEXEC")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "mpirun".to_string())
}

/// Whether this process runs as root (OpenMPI then needs an explicit permission).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// An `mpirun -n ranks` command with the flags and environment this project's tests need:
/// oversubscription (more ranks than cores), no core binding, root allowed, one rayon thread
/// per rank, yielding when idle, and no CMA single-copy (unavailable in many containers).
/// Append the program and its arguments, then run it with [`run_command`].
///
/// The environment is set on the `mpirun` process, whose local ranks inherit it; add
/// `-x NAME=value` arguments (before the program) for anything that must reach remote hosts.
pub fn mpirun_command(ranks: usize) -> Command {
    let mut cmd = Command::new(mpiexec());
    cmd.arg("--oversubscribe");
    if is_root() {
        cmd.arg("--allow-run-as-root");
    }
    cmd.args(["--bind-to", "none"]);
    if let Ok(flags) = std::env::var("MPIEXEC_PREFLAGS") {
        cmd.args(flags.split_whitespace());
    }
    cmd.args(["-n", &ranks.to_string()]);
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("RAYON_NUM_THREADS", "1");
    cmd
}

/// Runs `cmd` to completion with captured output, in its own process group, and returns its
/// output. Past `timeout` it is killed together with every process it started (see
/// [`run_command_timed`]); the returned status is then that of the killed child.
///
/// # Panics
/// If the program cannot be started (e.g. `mpirun` is not installed): a test that cannot
/// launch must fail, not pass.
pub fn run_command(cmd: Command, timeout: Duration) -> Output {
    run_command_timed(cmd, timeout).0
}

/// Like [`run_command`], also saying whether the timeout struck.
///
/// The child runs in a new process group with stdin closed; it receives SIGTERM if the
/// calling thread dies first. OpenMPI puts every rank in a process group of its own, so a
/// group kill alone would leave ranks running: the descendants of the child are tracked
/// while it runs. On timeout the group gets SIGTERM (mpirun then ends its job), and after a
/// grace of 5 s the group and every tracked descendant still alive get SIGKILL. After a
/// normal exit only the child's process group is killed: daemons that a script started in
/// a session of their own (a local Slurm, say) keep running. Output still arriving through
/// pipes held open by such processes 5 s after the exit is cut, with a note on stderr.
///
/// # Panics
/// If the program cannot be started.
pub fn run_command_timed(cmd: Command, timeout: Duration) -> (Output, bool) {
    run_tracked(cmd, timeout, false, GRACE)
}

/// [`run_command_timed`] with a `grace` period; with `kill_leftovers`, descendants still
/// running after a normal exit are killed too (for launches of test bodies, whose ranks must
/// all be gone).
fn run_tracked(
    mut cmd: Command,
    timeout: Duration,
    kill_leftovers: bool,
    grace: Duration,
) -> (Output, bool) {
    let parent = std::process::id() as libc::pid_t;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: only async-signal-safe system calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // SIGTERM when the spawning thread dies (e.g. the test process is killed).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // The parent died before the prctl took effect.
                libc::raise(libc::SIGTERM);
            }
            Ok(())
        });
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd.spawn().unwrap_or_else(|e| {
        panic!("cannot start `{program}`: {e} (is OpenMPI installed? run scripts/setup)")
    });
    let pid = child.id() as libc::pid_t;
    let stdout = Pipe::drain(child.stdout.take().expect("piped stdout"));
    let stderr = Pipe::drain(child.stderr.take().expect("piped stderr"));

    let mut tracked = Tracked::default();
    let start = Instant::now();
    let mut last_scan: Option<Instant> = None;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if last_scan.is_none_or(|t| t.elapsed() >= Duration::from_millis(200)) {
            tracked.scan(pid);
            last_scan = Some(Instant::now());
        }
        if start.elapsed() > timeout {
            timed_out = true;
            break kill_after_timeout(&mut child, pid, &mut tracked, grace);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What is left in the child's group goes now; so do the tracked ranks if asked.
    signal_group(pid, libc::SIGKILL);
    let leftovers = if kill_leftovers {
        tracked.kill_alive(libc::SIGKILL)
    } else {
        0
    };
    // One grace period for both pipes (a daemon holding both open costs it once).
    let deadline = Instant::now() + grace;
    let (stdout, stdout_closed) = stdout.collect(deadline);
    let (mut stderr, stderr_closed) = stderr.collect(deadline);
    if !(stdout_closed && stderr_closed) {
        stderr.extend_from_slice(
            format!("\n[mpi-harness: output pipes still open {grace:?} after exit; cut]\n")
                .as_bytes(),
        );
    }
    if leftovers > 0 && !timed_out {
        stderr.extend_from_slice(
            format!("\n[mpi-harness: killed {leftovers} process(es) left running after exit]\n")
                .as_bytes(),
        );
    }
    (
        Output {
            status,
            stdout,
            stderr,
        },
        timed_out,
    )
}

/// SIGTERM to the group (mpirun ends its job), a grace period, then SIGKILL to everything.
fn kill_after_timeout(
    child: &mut Child,
    pid: libc::pid_t,
    tracked: &mut Tracked,
    grace: Duration,
) -> ExitStatus {
    tracked.scan(pid);
    signal_group(pid, libc::SIGTERM);
    let start = Instant::now();
    while start.elapsed() < grace {
        if let Some(status) = child.try_wait().expect("wait for child") {
            return status;
        }
        tracked.scan(pid);
        std::thread::sleep(Duration::from_millis(50));
    }
    tracked.scan(pid);
    // The group first: its leader must not see its children die and exit normally.
    signal_group(pid, libc::SIGKILL);
    tracked.kill_alive(libc::SIGKILL);
    child.wait().expect("wait for killed child")
}

fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: signals the process group that our own child leads; a no-op if it is gone.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// A pipe drained on a thread so that a chatty child never blocks on a full pipe.
struct Pipe {
    buf: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Pipe {
    fn drain(mut pipe: impl Read + Send + 'static) -> Self {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let sink = Arc::clone(&buf);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .lock()
                        .expect("pipe buffer")
                        .extend_from_slice(&chunk[..n]),
                }
            }
            let _ = tx.send(());
        });
        Pipe { buf, done }
    }

    /// What was read, waiting until `deadline` at most for the writers to close the pipe,
    /// and whether they did.
    fn collect(self, deadline: Instant) -> (Vec<u8>, bool) {
        let wait = deadline.saturating_duration_since(Instant::now());
        let closed = self.done.recv_timeout(wait).is_ok();
        let out = std::mem::take(&mut *self.buf.lock().expect("pipe buffer"));
        (out, closed)
    }
}

/// Descendants of a child seen while it ran, by pid with their start time (so a reused pid is
/// never signalled).
#[derive(Default)]
struct Tracked {
    seen: HashMap<libc::pid_t, u64>,
}

impl Tracked {
    /// Adds the current descendants of `root`.
    fn scan(&mut self, root: libc::pid_t) {
        let procs = processes();
        let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
        for (&pid, info) in &procs {
            children.entry(info.ppid).or_default().push(pid);
        }
        let mut stack = vec![root];
        while let Some(p) = stack.pop() {
            for &c in children.get(&p).into_iter().flatten() {
                if let Some(info) = procs.get(&c) {
                    self.seen.insert(c, info.start);
                    stack.push(c);
                }
            }
        }
    }

    /// Signals every tracked process that still runs (not a zombie); returns how many.
    fn kill_alive(&self, signal: libc::c_int) -> usize {
        let mut count = 0;
        for (&pid, &start) in &self.seen {
            if proc_stat(pid).is_some_and(|s| s.start == start && s.state != 'Z') {
                // SAFETY: pid is a descendant of our child with the start time we recorded.
                unsafe {
                    libc::kill(pid, signal);
                }
                count += 1;
            }
        }
        count
    }
}

struct ProcStat {
    state: char,
    ppid: libc::pid_t,
    start: u64,
}

/// `/proc/<pid>/stat`: state, parent and start time.
fn proc_stat(pid: libc::pid_t) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything; fields follow the last ')'.
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    Some(ProcStat {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every process visible in `/proc`.
fn processes() -> HashMap<libc::pid_t, ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.filter_map(|e| {
        let pid = e.ok()?.file_name().to_str()?.parse().ok()?;
        Some((pid, proc_stat(pid)?))
    })
    .collect()
}

/// The ranks `0..ranks` that did not print both markers of `test` with size `ranks`.
pub fn missing_ranks(stdout: &str, test: &str, ranks: usize) -> Vec<usize> {
    (0..ranks)
        .filter(|&r| {
            !(has_marker(stdout, &reached_marker(test, r, ranks))
                && has_marker(stdout, &passed_marker(test, r, ranks)))
        })
        .collect()
}

/// Whether `marker` occurs in `stdout` not followed by a digit (`1/3` is not `1/30`). Ranks
/// share one stdout, so other output may run into a marker on either side: libtest's
/// `test name ... ` before it, another rank's unterminated progress dots after it.
fn has_marker(stdout: &str, marker: &str) -> bool {
    stdout.match_indices(marker).any(|(i, _)| {
        !stdout[i + marker.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// Shorthand for [`Launch::new`].
pub fn launch(test: &str, ranks: usize) -> Launch {
    Launch::new(test, ranks)
}

/// One launch of an MPI test body on a number of ranks. See the crate documentation.
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
    /// `test` is the name libtest knows it by: the function name for an integration test, or
    /// its module path (`tests::body`) inside a crate's unit tests.
    pub fn new(test: &str, ranks: usize) -> Self {
        Self {
            test: test.to_string(),
            ranks,
            timeout: DEFAULT_TIMEOUT,
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

    /// An extra environment variable for every rank (passed with `-x`; overrides the
    /// defaults, e.g. `RAYON_NUM_THREADS`).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Launches another program instead of the current test executable (its ranks must still
    /// print the markers of `test`).
    pub fn program(mut self, program: &str) -> Self {
        self.program = Some(program.to_string());
        self
    }

    /// An extra argument: for [`Launch::program`], or after libtest's arguments for the test
    /// executable.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// Several extra arguments, as [`Launch::arg`].
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// The mpirun command this launch runs.
    pub fn command(&self) -> Command {
        let mut cmd = mpirun_command(self.ranks);
        if !self.env.iter().any(|(k, _)| k == "RAYON_NUM_THREADS") {
            cmd.args(["-x", "RAYON_NUM_THREADS=1"]);
        }
        for (k, v) in &self.env {
            cmd.args(["-x", &format!("{k}={v}")]);
        }
        cmd.args(["-x", &format!("{CHILD_ENV}=1")]);
        match &self.program {
            Some(p) => {
                cmd.arg(p);
            }
            None => {
                let exe = std::env::current_exe().expect("current test executable");
                cmd.arg(exe)
                    .args([&self.test, "--exact", "--ignored", "--nocapture"])
                    .arg("--test-threads=1");
            }
        }
        cmd.args(&self.args);
        cmd
    }

    /// Runs the launch and returns its output; panics, showing stdout and stderr, if mpirun
    /// could not start, exited non-zero or ran past the timeout, or if any rank of
    /// `0..ranks` did not print both markers with size `ranks`.
    pub fn run(self) -> Output {
        assert!(
            self.ranks > 0,
            "{}: a launch needs at least one rank",
            self.test
        );
        let (out, timed_out) = run_tracked(self.command(), self.timeout, true, GRACE);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let show = || format!("--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
        let what = format!("{} on {} ranks", self.test, self.ranks);
        if timed_out {
            let missing = missing_ranks(&stdout, &self.test, self.ranks);
            panic!(
                "{what} timed out after {:?} (killed); ranks without both markers: \
                 {missing:?}\n{}",
                self.timeout,
                show()
            );
        }
        if !out.status.success() {
            panic!(
                "{what} failed: mpirun exited with {}\n{}",
                out.status,
                show()
            );
        }
        let missing = missing_ranks(&stdout, &self.test, self.ranks);
        if !missing.is_empty() {
            panic!(
                "{what}: ranks {missing:?} did not prove they ran the body (is `{}` an \
                 #[ignore]d test of this executable whose body calls mark_reached and \
                 mark_passed?)\n{}",
                self.test,
                show()
            );
        }
        out
    }
}

/// Defines one `#[test]` per rank count that launches the MPI body `body` under mpirun with a
/// timeout in seconds: `launches!("x_body", 300; x_np1 => 1, x_np4 => 4);`.
#[macro_export]
macro_rules! launches {
    ($body:expr, $timeout_secs:expr; $($name:ident => $ranks:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            $crate::Launch::new($body, $ranks).timeout_secs($timeout_secs).run();
        }
    )*};
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
        // A test whose name extends another's does not count for it.
        assert_eq!(
            missing_ranks("MPI-HARNESS PASSED tt 0/1\n", "t", 1),
            vec![0]
        );
        // Rank 1 of 3 is not rank 1 of 30; libtest's prefix on the line is fine.
        let prefixed = "test x ... MPI-HARNESS REACHED u 1/30\nMPI-HARNESS PASSED u 1/30\n";
        assert_eq!(missing_ranks(prefixed, "u", 3), vec![0, 1, 2]);
        assert_eq!(missing_ranks(prefixed, "u", 30).len(), 29);
        // PASSED without REACHED is not enough.
        assert_eq!(missing_ranks("MPI-HARNESS PASSED v 0/1", "v", 1), vec![0]);
        // Another rank's unterminated output (pytest's dots) runs into a marker.
        let joined = "MPI-HARNESS REACHED w 0/1\nMPI-HARNESS PASSED w 0/1..\n";
        assert!(missing_ranks(joined, "w", 1).is_empty());
    }

    #[test]
    fn run_command_reports_status_and_output() {
        let (ok, timed_out) = run_command_timed(Command::new("true"), Duration::from_secs(10));
        assert!(ok.status.success());
        assert!(!timed_out);
        let bad = run_command(Command::new("false"), Duration::from_secs(10));
        assert!(!bad.status.success());
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run_command(cmd, Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn a_large_output_does_not_block() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "head -c 3000000 /dev/zero; head -c 200000 /dev/zero >&2",
        ]);
        let (out, timed_out) = run_command_timed(cmd, Duration::from_secs(20));
        assert!(!timed_out && out.status.success());
        assert_eq!((out.stdout.len(), out.stderr.len()), (3_000_000, 200_000));
    }

    /// Whether `pid` still runs (a zombie does not count).
    fn alive(pid: libc::pid_t) -> bool {
        proc_stat(pid).is_some_and(|s| s.state != 'Z')
    }

    #[test]
    fn timeout_kills_the_group_and_escaped_descendants() {
        // One sleeper stays in the group; the other escapes into a group of its own, as
        // OpenMPI's ranks do, and must be killed all the same.
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "sleep 30 & echo $!; setsid sleep 30 & echo $!; trap '' TERM; wait",
        ]);
        let start = Instant::now();
        let grace = Duration::from_secs(1);
        let (out, timed_out) = run_tracked(cmd, Duration::from_millis(500), false, grace);
        let elapsed = start.elapsed();
        assert!(timed_out);
        assert!(!out.status.success());
        // 0.5 s, the grace (the shell ignores SIGTERM), then SIGKILL.
        assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
        let pids: Vec<libc::pid_t> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2, "{out:?}");
        std::thread::sleep(Duration::from_millis(100));
        for pid in pids {
            assert!(!alive(pid), "process {pid} survived the timeout");
        }
    }

    #[test]
    fn leftovers_after_a_normal_exit_are_killed() {
        // The escaped sleeper keeps stdout open; without the kill this would wait 30 s.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "setsid sleep 30 & echo $!; sleep 1"]);
        let start = Instant::now();
        let (out, timed_out) = run_tracked(cmd, Duration::from_secs(20), true, GRACE);
        assert!(!timed_out && out.status.success());
        assert!(start.elapsed() < Duration::from_secs(8));
        let pid: libc::pid_t = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!alive(pid), "process {pid} survived its parent's exit");
        assert!(String::from_utf8_lossy(&out.stderr).contains("left running"));
    }

    #[test]
    fn a_daemon_started_by_a_command_survives_it() {
        // Like `scripts/slurm-local up`: a daemon in its own session, stdio closed.
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!; sleep 0.5",
        ]);
        let (out, timed_out) = run_command_timed(cmd, Duration::from_secs(20));
        assert!(!timed_out && out.status.success(), "{out:?}");
        let pid: libc::pid_t = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let survived = alive(pid);
        // SAFETY: the daemon this test started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        assert!(survived, "the daemon {pid} was killed");
    }

    #[test]
    fn output_held_open_by_a_daemon_is_cut() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "setsid sleep 30 & echo $!"]);
        let start = Instant::now();
        let grace = Duration::from_secs(3);
        let (out, timed_out) = run_tracked(cmd, Duration::from_secs(20), false, grace);
        assert!(!timed_out && out.status.success());
        let elapsed = start.elapsed();
        let pid: libc::pid_t = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        // SAFETY: the process this test started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        // One grace for both pipes, not one each (6 s): 2.5 s of room for a loaded machine.
        assert!(elapsed < Duration::from_millis(5500), "{elapsed:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("still open"));
    }

    #[test]
    #[should_panic(expected = "cannot start")]
    fn a_missing_launcher_fails() {
        run_command(Command::new("/nonexistent/mpirun"), Duration::from_secs(1));
    }

    #[test]
    fn the_child_command_line() {
        let cmd = Launch::new("body", 3)
            .env("K", "v")
            .arg("--extra")
            .command();
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        assert!(line.starts_with("--oversubscribe "), "{line}");
        assert!(
            line.contains(" -n 3 -x RAYON_NUM_THREADS=1 -x K=v -x MPI_HARNESS_CHILD=1 "),
            "{line}"
        );
        assert!(
            line.ends_with(" body --exact --ignored --nocapture --test-threads=1 --extra"),
            "{line}"
        );
        let cmd = Launch::new("body", 2)
            .env("RAYON_NUM_THREADS", "2")
            .program("prog")
            .args(["a", "b"])
            .command();
        let line: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
        let line = line.join(" ");
        assert!(!line.contains("RAYON_NUM_THREADS=1"), "{line}");
        assert!(line.ends_with(" -x RAYON_NUM_THREADS=2 -x MPI_HARNESS_CHILD=1 prog a b"));
    }

    #[test]
    #[should_panic(expected = "at least one rank")]
    fn zero_ranks_is_refused() {
        Launch::new("body", 0).run();
    }
}
