//! `scripts/scaling collect` on reports of two "jobs" (real `dfft run` and `bench-redist`
//! output under mpirun, one file each): one CSV with every report, every plot a PNG listed in
//! manifest.json with its size and sha256, the provenance summary and, when a run had more
//! ranks than cores, the oversubscription warning; a file of the old flat format is refused
//! with a message. (The sweep itself runs through sbatch in srun.rs.)

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum (coreutils)");
    assert!(out.status.success(), "sha256sum {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("a digest")
        .to_string()
}

fn report(ranks: usize, args: &[&str]) -> String {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).args(args);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{args:?}: {stdout}");
    stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a report")
        .to_string()
}

fn collect(out: &Path, files: &[PathBuf]) -> (bool, String) {
    let mut cmd = Command::new("bash");
    cmd.current_dir(std::env::temp_dir())
        .arg(repo_root().join("scripts/scaling"))
        .arg("collect")
        .arg(out)
        .args(files);
    let (o, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(120));
    assert!(!timed_out, "scripts/scaling collect timed out");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[test]
fn collector_merges_jobs_into_csv_and_stamped_plots() {
    let dir = std::env::temp_dir().join(format!("dfft-scaling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut jobs = Vec::new();
    for (job, ranks) in [("job-1", 1usize), ("job-2", 4)] {
        let mut lines = String::new();
        for grid in ["1", "2"] {
            lines.push_str(&report(
                ranks,
                &[
                    "run", "--shape", "16,12,10", "--grid", grid, "--iters", "2", "--warmup", "0",
                    "--json",
                ],
            ));
            lines.push('\n');
        }
        lines.push_str(&report(
            ranks,
            &[
                "bench-redist",
                "--shape",
                "16,12,10",
                "--grid",
                "2",
                "--repeat",
                "2",
                "--json",
            ],
        ));
        lines.push('\n');
        let path = dir.join(format!("{job}.jsonl"));
        std::fs::write(&path, lines).unwrap();
        jobs.push(path);
    }
    let out = dir.join("plots");
    let (ok, text) = collect(&out, &jobs);
    assert!(ok, "{text}");
    let csv_path = out.join("scaling.csv");
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["rows"], 6, "{manifest}");
    assert_eq!(manifest["jobs"], serde_json::json!(["job-1", "job-2"]));
    assert_eq!(manifest["csv_sha256"], sha256(&csv_path));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        manifest["oversubscription_warning"].is_string(),
        cores < 4,
        "4 ranks on {cores} cores: {manifest}"
    );
    let csv_time = std::fs::metadata(&csv_path).unwrap().modified().unwrap();
    for entry in manifest["plots"].as_array().unwrap() {
        let path = out.join(entry["file"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 1000, "{}", path.display());
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(entry["bytes"], bytes.len());
        assert_eq!(entry["sha256"], sha256(&path));
        assert!(std::fs::metadata(&path).unwrap().modified().unwrap() >= csv_time);
    }
    // A report of the old flat format is refused, naming the file.
    let old = dir.join("old.jsonl");
    std::fs::write(&old, "{\"ranks\":2,\"min_s\":0.1}\n").unwrap();
    let (ok, text) = collect(&dir.join("old"), &[old]);
    assert!(!ok && text.contains("schema version 1"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
