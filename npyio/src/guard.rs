//! Process-level guards for programs that write files with this crate: on SIGINT, SIGTERM or
//! SIGHUP remove the temporary files being written and exit, stop a rank whose launcher is
//! gone, and hold an output back for a moment after a SIGCONT (the first sign of a launcher
//! ending the job: [`wait_after_continue`]). Opt-in: a library never installs them by itself; a program's `main` calls
//! [`install`] once, after MPI is initialized.
//!
//! Why the watchdog: when `mpirun` (or `orted`, `slurmstepd`) is killed with SIGKILL, it
//! cannot forward anything, and its ranks, talking through shared memory, would finish the
//! job and publish an output the user already saw fail. A rank notices that its parent
//! process changed (it was re-parented) within [`ORPHAN_POLL`] and stops as if it had
//! received SIGTERM. (`PR_SET_PDEATHSIG` is not used: it fires when the *thread* that forked
//! the rank exits, which launchers do not promise to keep.)

use std::io::Write;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

/// How often the watchdog checks the parent process.
pub const ORPHAN_POLL: Duration = Duration::from_millis(100);

/// The signals whose handlers [`install`] sets.
const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// When the last SIGCONT arrived (`CLOCK_MONOTONIC`, nanoseconds; 0: never).
static CONTINUED_AT: AtomicU64 = AtomicU64::new(0);

/// How long after a SIGCONT an output is held back (nanoseconds), [`set_continue_hold`].
static CONTINUE_HOLD: AtomicU64 = AtomicU64::new(DEFAULT_CONTINUE_HOLD.as_nanos() as u64);

/// OpenMPI's default `odls_base_sigkill_timeout` (1 s, the wait between its SIGCONT and its
/// SIGTERM) and a second of margin.
pub const DEFAULT_CONTINUE_HOLD: Duration = Duration::from_secs(2);

/// `CLOCK_MONOTONIC` in nanoseconds (async-signal-safe).
fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own; it is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
}

/// The SIGCONT handler: records when. Async-signal-safe.
extern "C" fn on_continue(_signal: c_int) {
    CONTINUED_AT.store(monotonic_ns().max(1), Ordering::Release);
}

/// How long an output is held back after a SIGCONT ([`DEFAULT_CONTINUE_HOLD`] unless set):
/// the launcher's wait between SIGCONT and SIGTERM when it ends a job, and a margin. A
/// program reads the launcher's setting (OpenMPI's `odls_base_sigkill_timeout`) and sets it.
pub fn set_continue_hold(hold: Duration) {
    CONTINUE_HOLD.store(hold.as_nanos() as u64, Ordering::Release);
}

/// Waits, if a SIGCONT arrived less than the hold ago, until the hold has passed.
///
/// Why: OpenMPI's `mpirun` ends a job on SIGINT or SIGTERM by sending each rank SIGCONT (in
/// case it is stopped), then, `odls_base_sigkill_timeout` later (1 s), SIGTERM. Ranks about to
/// publish their output would publish it in that second, for a job the user interrupted.
/// [`crate::Staged::finish`] calls this before the ranks vote: if SIGTERM comes, the handler
/// removes the temporary file and the process exits; if not (a job resumed after a stop),
/// the output is published a moment later. Without [`install`] no SIGCONT is recorded.
pub fn wait_after_continue() {
    loop {
        let at = CONTINUED_AT.load(Ordering::Acquire);
        if at == 0 {
            return;
        }
        let until = at.saturating_add(CONTINUE_HOLD.load(Ordering::Acquire));
        let now = monotonic_ns();
        if now >= until {
            return;
        }
        std::thread::sleep(Duration::from_nanos(until - now));
    }
}

/// The launcher's pid when the watchdog is on, else 0.
static LAUNCHER: AtomicI32 = AtomicI32::new(0);

/// Whether [`install`] was told this process has a launcher and that launcher is gone (this
/// process was re-parented). [`write_block`](crate::write_block) asks right before it
/// publishes, so an output never appears after its job was killed.
pub fn launcher_gone() -> bool {
    let launcher = LAUNCHER.load(Ordering::Acquire);
    // SAFETY: getppid has no preconditions.
    launcher != 0 && unsafe { libc::getppid() } != launcher
}

/// The handler: remove the staged temporaries, then exit with 128 + the signal number (what
/// a shell reports for a process the signal killed). Async-signal-safe.
extern "C" fn on_signal(signal: c_int) {
    crate::staging::remove_staged_files();
    // SAFETY: _exit is async-signal-safe and ends the process at once.
    unsafe { libc::_exit(128 + signal) };
}

/// Installs the signal handlers and, when `launched` (the process was started by a launcher
/// such as `mpirun` or `srun`, whose death should end it), the orphan watchdog, which prints
/// `<program>: <reason>` before stopping. Idempotent.
pub fn install(program: &'static str, launched: bool) {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    for signal in SIGNALS {
        // SAFETY: a zeroed sigaction with a plain handler and an empty mask is valid;
        // `on_signal` only makes async-signal-safe calls.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    // SAFETY: as above; `on_continue` stores one atomic. SA_RESTART: the calls a SIGCONT
    // interrupts (MPI's polling, file I/O) go on instead of failing with EINTR.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_continue as extern "C" fn(c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGCONT, &action, std::ptr::null_mut());
    }
    if launched {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        LAUNCHER.store(parent, Ordering::Release);
        let spawned = std::thread::Builder::new()
            .name("orphan-watchdog".into())
            .spawn(move || loop {
                std::thread::sleep(ORPHAN_POLL);
                if launcher_gone() {
                    // The launcher held the other end of stderr: the message may not get
                    // anywhere, and a failed write must not stop the stop.
                    let _ = writeln!(
                        std::io::stderr(),
                        "{program}: the launcher (parent process {parent}) is gone; stopping"
                    );
                    // SAFETY: raise runs this process's SIGTERM handler (`on_signal`).
                    unsafe { libc::raise(libc::SIGTERM) };
                }
            });
        if let Err(e) = spawned {
            eprintln!("{program}: warning: cannot watch the launcher: {e}");
        }
    }
}
