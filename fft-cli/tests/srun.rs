//! `dfft` under a real Slurm: `scripts/slurm-local up` brings up a one-node cluster (or the
//! running one is reused), then `srun -n 4 --mpi=pmix dfft run|bench-redist` and
//! `sbatch --wait scripts/slurm/dfft-job.sbatch` must produce verified JSON reports. A machine
//! where Slurm cannot start fails this test with the reason: it never passes without running.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn slurm_dir() -> String {
    std::env::var("DFFT_SLURM_DIR").unwrap_or_else(|_| "/tmp/dfft-slurm-local".to_string())
}

/// A command with the environment a Slurm client needs here: our cluster's config, no
/// variables of an enclosing allocation, OpenMPI's root permission, one thread per rank.
fn slurm_command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars() {
        if k.starts_with("SLURM_") {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(repo_root())
        .env("SLURM_CONF", format!("{}/slurm.conf", slurm_dir()))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("RAYON_NUM_THREADS", "1");
    cmd
}

fn run(cmd: Command, secs: u64) -> (bool, String, String) {
    let what = format!("{cmd:?}");
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(secs));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !timed_out,
        "{what} timed out after {secs} s\n{stdout}\n{stderr}"
    );
    (out.status.success(), stdout, stderr)
}

fn slurm_local(action: &str) -> (bool, String, String) {
    let mut cmd = slurm_command("bash");
    cmd.arg(repo_root().join("scripts/slurm-local")).arg(action);
    run(cmd, 90)
}

/// Stops the cluster at the end (also when the test panics) if this test started it. Holds an
/// exclusive lock meanwhile, so that concurrent runs of the suite on one machine take turns
/// instead of tearing the cluster down under each other.
struct Cluster {
    started_here: bool,
    _lock: std::fs::File,
}

/// Blocks until this process holds an exclusive `flock` on `path`.
fn lock(path: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open lock file {}: {e}", path.display()));
    // SAFETY: flock on a descriptor we own; released when the file is closed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock {}", path.display());
    file
}

impl Cluster {
    fn up() -> Self {
        let lock = lock(Path::new(&format!("{}.lock", slurm_dir())));
        let (was_up, _, _) = slurm_local("status");
        if !was_up {
            let (ok, stdout, stderr) = slurm_local("up");
            assert!(
                ok,
                "could not start the local Slurm cluster (scripts/slurm-local up; needs root \
                 and the packages scripts/setup installs: slurmctld slurmd munge libpmix-dev):\n\
                 {stdout}\n{stderr}"
            );
        }
        Cluster {
            started_here: !was_up,
            _lock: lock,
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started_here {
            let _ = slurm_local("down");
        }
    }
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON {l}: {e}")))
        .collect()
}

fn check_run(v: &Value, ranks: usize, grid_rank: usize) {
    assert_eq!(v["ranks"], ranks, "{v}");
    let grid: Vec<u64> = v["grid"]
        .as_array()
        .expect("grid")
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(grid.len(), grid_rank, "{v}");
    assert_eq!(grid.iter().product::<u64>(), ranks as u64, "{v}");
    for key in ["roundtrip_error", "reference_error"] {
        let e = v[key].as_f64().expect(key);
        assert!(e < 1e-12, "{key} = {e:e}: {v}");
    }
    assert!(v["min_s"].as_f64().unwrap() > 0.0, "{v}");
}

fn check_bench(v: &Value, ranks: usize, grid_rank: usize) {
    assert_eq!(v["kind"], "bench-redist", "{v}");
    assert_eq!(v["ranks"], ranks, "{v}");
    assert_eq!(v["grid_rank"], grid_rank, "{v}");
    assert_eq!(v["exchanges"], 2 * grid_rank + 1, "{v}");
    assert_eq!(v["verified"], true, "{v}");
    assert!(v["min_s"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn srun_and_sbatch_on_a_local_slurm_cluster() {
    let start = Instant::now();
    let _cluster = Cluster::up();

    // srun: a pencil transform and the seed's redistribution benchmark on 4 ranks.
    let mut cmd = slurm_command("srun");
    cmd.args(["-n", "4", "--mpi=pmix", "--time=2", DFFT]).args([
        "run", "--shape", "16,21,41", "--grid", "2", "--iters", "2", "--warmup", "1", "--json",
    ]);
    let (ok, stdout, stderr) = run(cmd, 90);
    assert!(ok, "srun dfft run failed:\n{stdout}\n{stderr}");
    let lines = json_lines(&stdout);
    assert_eq!(lines.len(), 1, "one JSON line from rank 0:\n{stdout}");
    check_run(&lines[0], 4, 2);

    let mut cmd = slurm_command("srun");
    cmd.args(["-n", "4", "--mpi=pmix", "--time=2", DFFT]).args([
        "bench-redist",
        "--shape",
        "12,10,14",
        "--grid",
        "2x2",
        "--repeat",
        "3",
        "--json",
    ]);
    let (ok, stdout, stderr) = run(cmd, 90);
    assert!(ok, "srun dfft bench-redist failed:\n{stdout}\n{stderr}");
    let lines = json_lines(&stdout);
    assert_eq!(lines.len(), 1, "one JSON line from rank 0:\n{stdout}");
    check_bench(&lines[0], 4, 2);

    // sbatch --wait with the provided job script.
    let log = std::env::temp_dir().join(format!("dfft-sbatch-{}.out", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut cmd = slurm_command("sbatch");
    cmd.arg("--wait")
        .arg(format!("--output={}", log.display()))
        .arg("scripts/slurm/dfft-job.sbatch")
        .env("DFFT", DFFT)
        .env("DFFT_SHAPE", "12,10,14")
        // An explicit slab: the test checks the job, not the model's pick for this shape.
        .env("DFFT_GRID", "1")
        .env("DFFT_ITERS", "2");
    let (ok, stdout, stderr) = run(cmd, 150);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(
        ok,
        "sbatch --wait failed:\n{stdout}\n{stderr}\n--- job log ---\n{text}"
    );
    let lines = json_lines(&text);
    assert_eq!(
        lines.len(),
        2,
        "job log should hold two JSON lines:\n{text}"
    );
    check_run(&lines[0], 4, 1);
    check_bench(&lines[1], 4, 1);
    eprintln!(
        "srun/sbatch test took {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
