//! `dfft run --batch K --groups auto|G` and `dfft plan --fields K`: a batch split into groups
//! of ranks gives the caller the same files as the plain batch (with `--deterministic`, the
//! same bytes, compared with `cmp`, for c2c and r2c on 1 to 8 ranks and every group count
//! tried, K a multiple of G and not); `--groups` that cannot apply is a usage error (exit 2,
//! printed once); `dfft plan --fields K` carries the model's group count as `groups`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

/// (ranks, --groups): the plain batch on 1 rank first, then splits of 5 fields ("": no
/// `--groups`, the default, the model's choice).
const CONFIGS: [(usize, &str); 9] = [
    (1, "1"),
    (2, "2"),
    (3, "3"),
    (4, "1"),
    (4, "2"),
    (6, "auto"),
    (2, ""),
    (6, "3"),
    (8, "4"),
];

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-groups-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cmp -s a b`.
fn same_bytes(a: &Path, b: &Path) -> bool {
    let status = Command::new("cmp").arg("-s").arg(a).arg(b).status();
    let status = status.expect("cmp (diffutils) runs");
    assert!(
        status.code().is_some_and(|c| c <= 1),
        "cmp {a:?} {b:?}: {status}"
    );
    status.success()
}

/// Runs `dfft run` of `kind` with `extra` on `ranks` ranks; returns (status, stdout, stderr).
fn run(ranks: usize, args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).arg("run").args(args);
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(90));
    assert!(!timed_out, "dfft run {args:?} on {ranks} ranks hung");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn check_kind(kind: &str, shape: &str) {
    let dir = scratch_dir(kind);
    let mut reference: Option<(PathBuf, PathBuf)> = None;
    let mut differ = Vec::new();
    for (i, &(ranks, groups)) in CONFIGS.iter().enumerate() {
        let forward = dir.join(format!("forward-{i}.npy"));
        let round_trip = dir.join(format!("roundtrip-{i}.npy"));
        let (fwd, rt) = (forward.to_str().unwrap(), round_trip.to_str().unwrap());
        let mut args = vec![
            "--deterministic",
            "--kind",
            kind,
            "--shape",
            shape,
            "--batch",
            "5",
            "--groups",
            groups,
            "--iters",
            "1",
            "--warmup",
            "0",
            "--json",
            "--output",
            fwd,
            "--roundtrip-output",
            rt,
        ];
        if groups.is_empty() {
            args.retain(|a| !a.is_empty() && *a != "--groups");
        }
        let (code, stdout, stderr) = run(ranks, &args);
        let config = format!("{ranks} ranks, --groups {groups}");
        assert_eq!(code, Some(0), "{kind}: {config}: {stdout}\n{stderr}");
        let report: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap())
            .unwrap_or_else(|e| panic!("{kind}: {config}: {e}: {stdout}"));
        let got = report["result"]["groups"]
            .as_u64()
            .expect("groups in the report");
        if groups.is_empty() {
            let choice = &report["problem"]["groups_choice"];
            assert_eq!(choice, "auto", "{kind}: without --groups: {choice}");
        }
        if let Ok(forced) = groups.parse::<u64>() {
            assert_eq!(got, forced, "{kind}: {config}: report says {got} groups");
        }
        match &reference {
            None => reference = Some((forward, round_trip)),
            Some((f0, b0)) => {
                if !same_bytes(&forward, f0) {
                    differ.push(format!("forward: {config}"));
                }
                if !same_bytes(&round_trip, b0) {
                    differ.push(format!("backward: {config}"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        differ.is_empty(),
        "{kind}: files differ from the plain batch's:\n{}",
        differ.join("\n")
    );
    println!(
        "{kind} {shape}: {} configurations byte-identical",
        CONFIGS.len()
    );
}

#[test]
fn c2c_groups_give_the_plain_batch_bytes() {
    check_kind("c2c", "12,10,9");
}

#[test]
fn r2c_groups_give_the_plain_batch_bytes() {
    check_kind("r2c", "9,10,8");
}

#[test]
fn groups_that_cannot_apply_are_usage_errors() {
    let cases: [(usize, &[&str], &str); 3] = [
        (
            3,
            &["--groups", "2", "--batch", "4"],
            "do not split into 2 equal groups",
        ),
        (
            2,
            &["--groups", "2", "--batch", "1"],
            "needs at least 2 fields",
        ),
        (
            2,
            &["--groups", "2", "--batch", "2", "--transposed-out"],
            "--transposed-out",
        ),
    ];
    for (ranks, extra, needle) in cases {
        let mut args = vec!["--shape", "8,8,8", "--iters", "1"];
        args.extend_from_slice(extra);
        let (code, _, stderr) = run(ranks, &args);
        assert_eq!(code, Some(2), "{extra:?}: {stderr}");
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("dfft: error"))
            .collect();
        assert_eq!(lines.len(), 1, "{extra:?}: printed once: {stderr}");
        assert!(lines[0].contains(needle), "{extra:?}: {}", lines[0]);
    }
}

#[test]
fn plan_fields_reports_the_group_count() {
    let out = Command::new(DFFT)
        .args([
            "plan",
            "--shape",
            "64,64,64",
            "--ranks",
            "4096",
            "--ranks-per-node",
            "64",
        ])
        .args(["--fields", "16", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = String::from_utf8_lossy(&out.stdout);
    let line: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let result = &line["result"];
    let groups = result["groups"].as_u64().unwrap();
    let cands = result["group_candidates"].as_array().unwrap();
    assert_eq!(line["problem"]["fields"], 16);
    assert_eq!(cands.len(), 5, "G = 1, 2, 4, 8, 16");
    assert_eq!(cands[0]["groups"].as_u64(), Some(groups));
    let best = cands.iter().map(|c| c["predicted_s"].as_f64().unwrap());
    let best = best.fold(f64::INFINITY, f64::min);
    assert_eq!(
        cands[0]["predicted_s"].as_f64(),
        Some(best),
        "the chosen is the fastest"
    );
    assert!(result["groups_why"].as_str().unwrap().contains("groups"));
    // Text: the table and the reason.
    let out = Command::new(DFFT)
        .args([
            "plan", "--shape", "64,64,64", "--ranks", "4", "--fields", "6",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("6 fields on 4 ranks") && text.contains("groups: "),
        "{text}"
    );
    println!("plan --fields 16 on 4096 ranks: groups {groups}");
}
