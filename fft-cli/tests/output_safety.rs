//! `--output` is all-or-nothing: a full disk, a device or FIFO as the
//! target, a signal or a killed launcher in the middle of a run, and a 250-character name
//! never leave a wrong, partial or foreign file behind, and a failed run reports no output.
//! Every launch runs under a timeout; a test that needs root (mount, mknod) and does not have
//! it prints SKIPPED with the reason.

mod common;

use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

use common::{descendants, files_in, flat};
const TIMEOUT: Duration = Duration::from_secs(60);

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `dfft args` on `ranks` ranks (0: alone, without mpirun) under the timeout.
fn dfft(ranks: usize, args: &[&str]) -> Outcome {
    let mut cmd = if ranks == 0 {
        Command::new(DFFT)
    } else {
        let mut c = mpi_harness::mpirun_command(ranks);
        c.arg(DFFT);
        c
    };
    cmd.args(args);
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, TIMEOUT);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !timed_out,
        "dfft {args:?} on {ranks} rank(s) hung\n{stderr}"
    );
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-out-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Temporary files (this version's and the older `.NAME.tmp-HEX` ones).
fn temporaries(dir: &Path) -> Vec<String> {
    files_in(dir)
        .into_iter()
        .filter(|n| n.contains("tmp"))
        .collect()
}

/// The JSON line of a `--json` run.
fn json(out: &Outcome) -> serde_json::Value {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line\n{}\n{}", out.stdout, out.stderr));
    flat(serde_json::from_str(line).unwrap())
}

/// A tmpfs of `size` mounted at `dir` for the guard's lifetime.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        Self::mount_with(dir, &format!("size={size}"))
    }

    /// A tmpfs mounted with `options` (`size=1m`, `ro`, ...).
    fn mount_with(dir: &Path, options: &str) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if out.status.success() {
            Ok(Tmpfs(dir.to_path_buf()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A read-only directory is refused before any transform (a run that would take minutes
/// fails in seconds), for `.npy` and HDF5 outputs alike.
#[test]
fn a_read_only_output_directory_is_refused_before_the_work() {
    let dir = scratch_dir("ro");
    let ro = dir.join("ro");
    let _fs = match Tmpfs::mount_with(&ro, "ro,size=1m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIPPED: cannot mount a read-only tmpfs (needs root): {why}");
            return;
        }
    };
    let npy = ro.join("x.npy").display().to_string();
    let h5 = format!("{}:/u", ro.join("x.h5").display());
    for output in [npy, h5] {
        let start = Instant::now();
        let out = dfft(
            2,
            &[
                "run", "--shape", "64,64,64", "--iters", "100000", "--output", &output,
            ],
        );
        assert_eq!(out.code, 1, "{output}: {}", out.stderr);
        assert_eq!(
            out.stderr.matches("Read-only file system").count(),
            1,
            "{output}: {}",
            out.stderr
        );
        let secs = start.elapsed().as_secs_f64();
        assert!(secs < 20.0, "{output}: refused after {secs:.1} s");
    }
    drop(_fs);
    std::fs::remove_dir_all(&dir).ok();
}

/// A full disk: the run fails with the file system's message, exits 1, leaves no file, and
/// its report names no output (`.npy` and HDF5 outputs alike); an output that fits the same file system is written whole.
#[test]
fn a_full_disk_fails_the_run_and_leaves_no_file() {
    let dir = scratch_dir("full");
    let small = dir.join("small");
    let _fs = match Tmpfs::mount(&small, "1m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIPPED: cannot mount a 1 MiB tmpfs (needs root): {why}");
            return;
        }
    };
    let target = small.join("x.npy");
    let h5 = format!("{}:/f", small.join("x.h5").display());
    for (ranks, output) in [0, 2]
        .into_iter()
        .flat_map(|r| [(r, target.to_str().unwrap()), (r, h5.as_str())])
    {
        let out = dfft(
            ranks,
            &[
                "run", "--shape", "64,64,64", "--iters", "1", "--warmup", "0", "--json",
                "--output", output,
            ],
        );
        let what = format!("4 MiB output {output} on a 1 MiB tmpfs, {ranks} rank(s)");
        assert_eq!(out.code, 1, "{what}: exit status\n{}", out.stderr);
        assert_eq!(
            out.stderr.matches("No space left on device").count(),
            1,
            "{what}: one message\n{}",
            out.stderr
        );
        assert!(
            files_in(&small).is_empty(),
            "{what}: {:?}",
            files_in(&small)
        );
        assert_eq!(json(&out)["output"], serde_json::Value::Null, "{what}");
    }
    // 16³ complex128: 64 KiB, fits.
    let out = dfft(
        2,
        &[
            "run",
            "--shape",
            "16,16,16",
            "--iters",
            "1",
            "--json",
            "--output",
            target.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out)["output"], target.to_str().unwrap());
    let header = npyio::read_header(&target).unwrap();
    assert_eq!(header.shape, vec![16, 16, 16]);
    // A 16 KiB HDF5 output fits too, and keeps no reservation past its end.
    let small_h5 = small.join("y.h5");
    let out = dfft(
        2,
        &[
            "run",
            "--shape",
            "16,8,8",
            "--iters",
            "1",
            "--json",
            "--output",
            &format!("{}:/f", small_h5.display()),
        ],
    );
    assert_eq!(
        out.code, 0,
        "a 16 KiB HDF5 output on the tmpfs\n{}",
        out.stderr
    );
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&small_h5).unwrap();
    assert!(
        meta.blocks() * 512 <= meta.len() + 16 * 1024,
        "{} bytes allocated for a file of {}",
        meta.blocks() * 512,
        meta.len()
    );
    assert_eq!(
        files_in(&small),
        vec!["x.npy".to_string(), "y.h5".to_string()]
    );
    drop(_fs);
    std::fs::remove_dir_all(&dir).ok();
}

/// mkfifo(3) / mknod(2) at `path`.
fn make_node(path: &Path, mode: libc::mode_t, dev: libc::dev_t) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mknod(c.as_ptr(), mode, dev) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Devices, FIFOs and directories are never replaced by an output, and a FIFO is never read
/// as an input (with no writer, it would block forever).
#[test]
fn devices_and_fifos_are_refused_as_outputs_and_inputs() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch_dir("special");
    let fifo = dir.join("fifo.npy");
    make_node(&fifo, libc::S_IFIFO | 0o600, 0).unwrap();
    let mut targets = vec![(fifo.clone(), "FIFO")];
    // A device node of our own (the null device's numbers), never the system's /dev/null.
    let device = dir.join("null.npy");
    match make_node(&device, libc::S_IFCHR | 0o600, libc::makedev(1, 3)) {
        Ok(()) => targets.push((device.clone(), "character device")),
        Err(e) => eprintln!("SKIPPED (character device case only): mknod needs root: {e}"),
    }
    targets.push((dir.join("subdir"), "directory"));
    std::fs::create_dir(dir.join("subdir")).unwrap();
    for (target, kind) in &targets {
        for ranks in [0, 2] {
            let out = dfft(
                ranks,
                &[
                    "run",
                    "--shape",
                    "8,6",
                    "--iters",
                    "1",
                    "--output",
                    target.to_str().unwrap(),
                ],
            );
            let needle = format!(
                "{}: is a {kind}, not a regular file: only regular files are read or replaced",
                target.display()
            );
            assert_eq!(out.code, 1, "{needle}\n{}", out.stderr);
            assert_eq!(out.stderr.matches(&needle).count(), 1, "{}", out.stderr);
            assert!(
                !out.stderr.contains("dfft run: shape"),
                "refused before the run"
            );
        }
    }
    let meta = std::fs::metadata(&fifo).unwrap();
    assert!(meta.file_type().is_fifo(), "the FIFO is still a FIFO");
    if targets.iter().any(|(_, k)| *k == "character device") {
        assert!(std::fs::metadata(&device)
            .unwrap()
            .file_type()
            .is_char_device());
    }
    let start = Instant::now();
    let out = dfft(
        2,
        &["run", "--iters", "1", "--input", fifo.to_str().unwrap()],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("is a FIFO, not a regular file"),
        "{}",
        out.stderr
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "no wait on the FIFO"
    );
    std::fs::remove_dir_all(&dir).ok();
}

fn dfft_ranks(mpirun: u32) -> Vec<u32> {
    descendants(mpirun)
        .into_iter()
        .filter(|c| {
            let exe = std::fs::read_link(format!("/proc/{c}/exe")).unwrap_or_default();
            exe.file_name() == Path::new(DFFT).file_name()
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a process this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Starts `dfft run` writing a 32 MiB `target`, alone (`ranks` 0) or under mpirun.
fn start_writer(ranks: usize, target: &Path, iters: &str) -> Child {
    let mut cmd = if ranks == 0 {
        Command::new(DFFT)
    } else {
        let mut c = mpi_harness::mpirun_command(ranks);
        c.arg(DFFT);
        c
    };
    cmd.args([
        "run",
        "--shape",
        "128,128,128",
        "--iters",
        iters,
        "--warmup",
        "0",
        "--output",
        target.to_str().unwrap(),
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .process_group(0);
    cmd.spawn().expect("dfft starts")
}

/// Waits for `child` up to `limit`; kills its group and fails if it does not end.
fn wait_or_kill(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the process group this test started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a writer and sends `sig` to it (`ranks` 0) or to its last rank as soon as the
/// temporary output file appears. Returns the exit status, or `None` if the write finished
/// before the signal could be sent.
fn signal_during_write(ranks: usize, dir: &Path, sig: i32) -> Option<std::process::ExitStatus> {
    let target = dir.join("out.npy");
    let mut child = start_writer(ranks, &target, "1");
    let start = Instant::now();
    let victim = loop {
        if !temporaries(dir).is_empty() {
            break if ranks == 0 {
                child.id()
            } else {
                *dfft_ranks(child.id()).last().expect("ranks running")
            };
        }
        if child.try_wait().unwrap().is_some() || start.elapsed() > TIMEOUT {
            break 0;
        }
        std::thread::sleep(Duration::from_micros(500));
    };
    if victim == 0 {
        let _ = wait_or_kill(&mut child, TIMEOUT, "writer");
        let _ = std::fs::remove_file(&target);
        return None;
    }
    signal(victim, sig);
    let status = wait_or_kill(&mut child, TIMEOUT, "signalled writer");
    if status.success() {
        // The rename won the race: the output is complete; try again.
        let _ = std::fs::remove_file(&target);
        return None;
    }
    Some(status)
}

/// SIGINT or SIGTERM while the output is being written (to a singleton run, or to one rank
/// of two): the run exits non-zero and leaves neither the output nor its temporary file.
#[test]
fn a_signal_during_the_write_removes_the_temporary_file() {
    let dir = scratch_dir("signal");
    for (ranks, sig) in [(0, libc::SIGTERM), (0, libc::SIGINT), (2, libc::SIGTERM)] {
        let what = format!("signal {sig} during the write, {ranks} rank(s)");
        let status = (0..5)
            .find_map(|_| signal_during_write(ranks, &dir, sig))
            .unwrap_or_else(|| panic!("{what}: the write always finished first"));
        assert!(!status.success(), "{what}: {status}");
        std::thread::sleep(Duration::from_millis(300));
        assert!(files_in(&dir).is_empty(), "{what}: {:?}", files_in(&dir));
        eprintln!("{what}: exit {status}, nothing left");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// SIGINT or SIGTERM to `mpirun` while the output is being written: OpenMPI sends the ranks
/// SIGCONT at once and SIGTERM only a second later, time enough to publish; the ranks hold
/// the rename back after a SIGCONT until that SIGTERM would have come. Nothing is published:
/// no `.npy` file, and an existing HDF5 file keeps its bytes; no temporary is left.
#[test]
fn a_signal_to_mpirun_during_the_write_publishes_nothing() {
    let dir = scratch_dir("mpirun-signal");
    let h5 = dir.join("kept.h5");
    let fixture = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sys, h5py, numpy as np; h5py.File(sys.argv[1], 'w')['a'] = np.arange(5.0)",
        ])
        .arg(&h5)
        .status()
        .expect("python3 with h5py (scripts/setup)");
    assert!(fixture.success());
    let kept = std::fs::read(&h5).unwrap();
    let npy = dir.join("out.npy");
    let h5_target = PathBuf::from(format!("{}:/w", h5.display()));
    for (sig, target) in [(libc::SIGINT, &npy), (libc::SIGTERM, &h5_target)] {
        let what = format!(
            "signal {sig} to mpirun during the write of {}",
            target.display()
        );
        let mut signalled = None;
        for _ in 0..5 {
            let mut child = start_writer(2, target, "1");
            let start = Instant::now();
            while temporaries(&dir).is_empty() && start.elapsed() < TIMEOUT {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            if temporaries(&dir).is_empty() {
                let _ = wait_or_kill(&mut child, TIMEOUT, &what);
                let _ = std::fs::remove_file(&npy);
                continue;
            }
            signal(child.id(), sig);
            signalled = Some(wait_or_kill(&mut child, TIMEOUT, &what));
            break;
        }
        let status = signalled.unwrap_or_else(|| panic!("{what}: never caught the write"));
        assert!(!status.success(), "{what}: {status}");
        std::thread::sleep(Duration::from_millis(500));
        assert!(!npy.exists(), "{what}: the output was published");
        assert!(
            std::fs::read(&h5).unwrap() == kept,
            "{what}: kept.h5 changed"
        );
        assert!(temporaries(&dir).is_empty(), "{what}: {:?}", files_in(&dir));
        eprintln!("{what}: exit {status}, nothing published");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A writer killed with SIGKILL (no handler can run) leaves its temporary file; the next run
/// writing the same target removes it, since its owner no longer runs.
#[test]
fn a_stale_temporary_of_a_killed_writer_is_removed_by_the_next_run() {
    let dir = scratch_dir("stale");
    let left = (0..5).find_map(|_| {
        signal_during_write(0, &dir, libc::SIGKILL)?;
        let t = temporaries(&dir);
        (!t.is_empty()).then_some(t)
    });
    let left = left.expect("SIGKILL during the write leaves a temporary file");
    assert_eq!(left.len(), 1, "{left:?}");
    let target = dir.join("out.npy");
    let out = dfft(
        0,
        &[
            "run",
            "--shape",
            "8,6",
            "--iters",
            "1",
            "--output",
            target.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        files_in(&dir),
        vec!["out.npy".to_string()],
        "stale {left:?} removed"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// SIGKILL to mpirun while the ranks write the output (the moment a killed job used to
/// publish it anyway): the ranks notice that their launcher is gone, stop within seconds and
/// leave neither the output nor its temporary file. Three tries, for the race's sake.
#[test]
fn a_killed_mpirun_never_publishes() {
    let dir = scratch_dir("mpirun");
    let target = dir.join("out.npy");
    for attempt in 0..3 {
        let mut child = start_writer(2, &target, "1");
        let start = Instant::now();
        let mut ranks = Vec::new();
        while temporaries(&dir).is_empty() && start.elapsed() < TIMEOUT {
            if ranks.len() < 2 {
                ranks = dfft_ranks(child.id());
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        signal(child.id(), libc::SIGKILL);
        let _ = child.wait();
        let killed = Instant::now();
        assert_eq!(ranks.len(), 2, "both ranks seen");
        while ranks.iter().any(|&p| alive(p)) && killed.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left: Vec<u32> = ranks.iter().copied().filter(|&p| alive(p)).collect();
        for &p in &left {
            signal(p, libc::SIGKILL);
        }
        assert!(
            left.is_empty(),
            "ranks still running 10 s after mpirun died: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            files_in(&dir).is_empty(),
            "try {attempt}: {:?} after mpirun was killed during the write",
            files_in(&dir)
        );
        eprintln!(
            "try {attempt}: ranks ended {:?} after mpirun was killed",
            killed.elapsed()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A 250-character file name (legal: NAME_MAX is 255) is written and read back on 2 ranks;
/// OpenMPI's shared-file-pointer components used to abort on it.
#[test]
fn a_250_character_output_name_works() {
    let dir = scratch_dir("long");
    let name = format!("{}.npy", "n".repeat(246));
    assert_eq!(name.len(), 250);
    let target = dir.join(&name);
    let out = dfft(
        2,
        &[
            "run",
            "--shape",
            "8,6",
            "--iters",
            "1",
            "--json",
            "--output",
            target.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out)["output"], target.to_str().unwrap());
    assert_eq!(npyio::read_header(&target).unwrap().shape, vec![8, 6]);
    let out = dfft(
        2,
        &["run", "--iters", "1", "--input", target.to_str().unwrap()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        files_in(&dir),
        vec![name],
        "no temporary or lock files left"
    );
    std::fs::remove_dir_all(&dir).ok();
}
