//! `scripts/scaling` end to end on a tiny sweep (scripts/scaling.d/smoke.conf): the JSON lines
//! become one CSV, every plot is a non-empty PNG, and manifest.json ties the plots to that CSV
//! (its sha256 and row count as written, each PNG's size and sha256).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");
const PLOTS: [&str; 5] = [
    "time_vs_p.png",
    "ratio_2d_vs_1d.png",
    "speedup_efficiency.png",
    "stages.png",
    "model_vs_measured.png",
];

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

#[test]
fn scaling_script_writes_csv_plots_and_manifest() {
    let out_dir = std::env::temp_dir().join(format!("dfft-scaling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let mut cmd = Command::new("bash");
    cmd.current_dir(repo_root())
        .arg("scripts/scaling")
        .arg("scripts/scaling.d/smoke.conf")
        .env("OUT", &out_dir)
        .env("DFFT", DFFT)
        .env("LAUNCH", "mpirun");
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!timed_out, "scripts/scaling timed out\n{stdout}\n{stderr}");
    assert!(
        out.status.success(),
        "scripts/scaling failed\n{stdout}\n{stderr}"
    );

    // smoke.conf: 2 commands x 1 shape x P in {1, 2} x grid ranks {1, 2} x 1 method.
    let jsonl = std::fs::read_to_string(out_dir.join("results.jsonl")).expect("results.jsonl");
    assert_eq!(jsonl.lines().count(), 8, "{jsonl}");
    let csv_path = out_dir.join("scaling.csv");
    let csv = std::fs::read_to_string(&csv_path).expect("scaling.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("CSV header").split(',').collect();
    for col in [
        "command",
        "shape",
        "ranks",
        "grid",
        "min_s",
        "comm_s",
        "predicted_s",
    ] {
        assert!(header.contains(&col), "column {col} missing: {header:?}");
    }
    let rows = lines.count();
    assert_eq!(rows, 8, "{csv}");

    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("manifest.json")).expect("manifest.json"),
    )
    .expect("manifest is JSON");
    assert_eq!(manifest["rows"], rows, "{manifest}");
    assert_eq!(manifest["csv_sha256"], sha256(&csv_path), "{manifest}");
    let csv_time = std::fs::metadata(&csv_path).unwrap().modified().unwrap();
    let listed = manifest["plots"].as_array().expect("plots");
    assert_eq!(listed.len(), PLOTS.len(), "{manifest}");
    for (name, entry) in PLOTS.iter().zip(listed) {
        let path = out_dir.join(name);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(bytes.len() > 1000, "{name} is only {} bytes", bytes.len());
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name} is not a PNG");
        assert_eq!(entry["file"], *name);
        assert_eq!(entry["bytes"], bytes.len(), "{name}");
        assert_eq!(entry["sha256"], sha256(&path), "{name}");
        let t = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert!(t >= csv_time, "{name} is older than the CSV");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}
