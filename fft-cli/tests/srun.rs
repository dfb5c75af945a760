//! `dfft` under a real Slurm: `scripts/slurm-local up` brings up a one-node cluster (or the
//! running one is reused); from a directory outside the repository, `sbatch --wait` of
//! scripts/slurm/dfft-job.sbatch and of the scaling study's template (the smoke config: run and
//! bench-redist through srun) must produce verified reports, and `scripts/scaling collect` a
//! CSV and plots whose provenance names this build's commit and this machine. A machine where
//! Slurm cannot start fails this test with the reason: it never passes without running.

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

/// A verified `run` report of `ranks` ranks on a grid of rank `grid_rank`.
fn check_run(v: &Value, ranks: usize, grid_rank: usize) {
    assert_eq!(v["command"], "run", "{v}");
    let (p, r) = (&v["problem"], &v["result"]);
    assert_eq!(p["ranks"], ranks, "{v}");
    let grid: Vec<u64> = r["grid"]
        .as_array()
        .expect("grid")
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(grid.len(), grid_rank, "{v}");
    assert_eq!(grid.iter().product::<u64>(), ranks as u64, "{v}");
    for key in ["roundtrip_error", "reference_error"] {
        let e = r[key].as_f64().expect(key);
        assert!(e < 1e-12, "{key} = {e:e}: {v}");
    }
    assert!(r["min_s"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["provenance"]["launcher"], "srun", "{v}");
}

/// A verified `bench-redist` report.
fn check_bench(v: &Value, ranks: usize, grid_rank: usize) {
    assert_eq!(v["command"], "bench-redist", "{v}");
    let r = &v["result"];
    assert_eq!(v["problem"]["ranks"], ranks, "{v}");
    assert_eq!(r["grid_rank"], grid_rank, "{v}");
    assert_eq!(r["exchanges"], 2 * grid_rank + 1, "{v}");
    assert_eq!(r["verified"], true, "{v}");
    assert!(r["min_s"].as_f64().unwrap() > 0.0, "{v}");
}

/// `sbatch --wait ARGS SCRIPT` from `dir` (outside the repository), with `env`; the job log.
fn sbatch(dir: &Path, args: &[&str], script: &str, env: &[(&str, &str)], secs: u64) -> String {
    let log = dir.join("job.out");
    let _ = std::fs::remove_file(&log);
    let mut cmd = slurm_command("sbatch");
    cmd.current_dir(dir)
        .arg("--wait")
        .arg(format!("--output={}", log.display()))
        .args(args)
        .arg(repo_root().join(script))
        .env("DFFT", DFFT);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (ok, stdout, stderr) = run(cmd, secs);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        ok,
        "sbatch --wait {script} failed:\n{stdout}\n{stderr}\n--- job log ---\n{text}"
    );
    text
}

#[test]
fn srun_and_sbatch_on_a_local_slurm_cluster() {
    let start = Instant::now();
    let _cluster = Cluster::up();
    // Jobs are submitted from a directory outside the repository.
    let dir = std::env::temp_dir().join(format!("dfft-srun-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // The plain job script: one transform and one redistribution benchmark on 4 ranks.
    let text = sbatch(
        &dir,
        &[],
        "scripts/slurm/dfft-job.sbatch",
        &[
            ("DFFT_SHAPE", "12,10,14"),
            // An explicit slab: the test checks the job, not the model's pick for this shape.
            ("DFFT_GRID", "1"),
            ("DFFT_ITERS", "2"),
        ],
        150,
    );
    let lines = json_lines(&text);
    assert_eq!(
        lines.len(),
        2,
        "job log should hold two JSON lines:\n{text}"
    );
    check_run(&lines[0], 4, 1);
    check_bench(&lines[1], 4, 1);

    // The scaling study's sbatch template with the smoke config: run c2c and r2c on every grid
    // rank and auto, and bench-redist, on 2 and 4 ranks through srun; one JSONL per job. The
    // template finds the repository from the path it was submitted with (no DFFT_ROOT).
    let out = dir.join("study");
    let text = sbatch(
        &dir,
        &["--ntasks=4", "--time=5"],
        "scripts/slurm/dfft-scaling.sbatch",
        &[
            (
                "DFFT_CONFIG",
                repo_root()
                    .join("scripts/scaling.d/smoke.conf")
                    .to_str()
                    .unwrap(),
            ),
            ("DFFT_OUT", out.to_str().unwrap()),
        ],
        240,
    );
    let jsonl: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(
        jsonl.len(),
        1,
        "one JSONL per job in {}:\n{text}",
        out.display()
    );
    let reports = json_lines(&std::fs::read_to_string(&jsonl[0]).unwrap());
    // 2 kinds x P in {2, 4} x grids {1, 2, auto} runs, P x grids bench-redist.
    assert_eq!(reports.len(), 12 + 6, "{text}");
    for v in &reports {
        let ranks = v["problem"]["ranks"].as_u64().unwrap() as usize;
        let grid_rank = v["result"]["grid"].as_array().unwrap().len();
        match v["command"].as_str().unwrap() {
            "run" => check_run(v, ranks, grid_rank),
            "bench-redist" => check_bench(v, ranks, grid_rank),
            other => panic!("unexpected command {other}"),
        }
    }

    // The collector, run from the job directory: CSV, plots and their provenance.
    let plots = dir.join("plots");
    let mut cmd = Command::new("bash");
    cmd.current_dir(&dir)
        .arg(repo_root().join("scripts/scaling"))
        .arg("collect")
        .arg(&plots)
        .args(&jsonl);
    let (ok, stdout, stderr) = run(cmd, 120);
    assert!(ok, "scripts/scaling collect failed:\n{stdout}\n{stderr}");
    let csv = std::fs::read_to_string(plots.join("scaling.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "command",
        "kind",
        "ranks",
        "grid",
        "min_s",
        "comm_s",
        "predicted_s",
        "git_commit",
        "hostnames",
        "oversubscribed",
    ] {
        assert!(header.contains(&col), "column {col} missing: {header:?}");
    }
    assert_eq!(lines.count(), 18, "{csv}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(plots.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["rows"], 18, "{manifest}");
    // The provenance names the commit of this binary and this machine.
    let commit = reports[0]["provenance"]["git_commit"].as_str().unwrap();
    assert!(commit.len() >= 12 && commit != "unknown", "{commit}");
    assert_eq!(
        manifest["git_commits"],
        serde_json::json!([commit]),
        "{manifest}"
    );
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(
        manifest["provenance"]
            .as_str()
            .unwrap()
            .contains(host.trim()),
        "{manifest}"
    );
    // 4 ranks on this machine's cores: the plots carry the warning when ranks exceed cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 4 {
        assert!(
            manifest["oversubscription_warning"].is_string(),
            "{manifest}"
        );
    }
    for entry in manifest["plots"].as_array().unwrap() {
        let path = plots.join(entry["file"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
        assert_eq!(entry["bytes"], bytes.len());
    }
    assert!(plots.join("table.md").exists());
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "srun/sbatch test took {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
