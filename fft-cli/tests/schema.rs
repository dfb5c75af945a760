//! Every subcommand's `--json` output against the one schema (docs/schema/
//! dfft-report.schema.json, checked by scripts/check-schema with Python's jsonschema): `run`
//! (c2c and r2c), `redist`, `bench-redist`, `calibrate` under mpirun on 2 ranks, and `plan`
//! without MPI; and what the provenance says about this build and launch.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn mpi(ranks: usize, args: &[&str]) -> String {
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).args(args).env_remove("DFFT_MACHINE");
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "dfft {args:?} on {ranks} ranks:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn plain(args: &[&str]) -> String {
    let out = Command::new(DFFT)
        .args(args)
        .env_remove("DFFT_MACHINE")
        .output()
        .expect("dfft runs");
    assert!(
        out.status.success(),
        "dfft {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs scripts/check-schema on `lines`; returns its "ok COMMAND" lines.
fn check_schema(lines: &str) -> Vec<String> {
    let mut child = Command::new("/usr/bin/python3")
        .arg(repo_root().join("scripts/check-schema"))
        .current_dir(std::env::temp_dir()) // any directory
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/python3 (scripts/setup)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "schema check failed (scripts/setup installs python3-jsonschema):\n{}\n{lines}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn reports(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect()
}

#[test]
fn every_subcommand_prints_the_one_schema() {
    let dir = std::env::temp_dir().join(format!("dfft-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("machine.json");
    let mut all = String::new();
    for (ranks, args) in [
        (
            2,
            vec![
                "run", "--shape", "16,12,10", "--iters", "2", "--warmup", "0", "--json", "--steps",
            ],
        ),
        (
            2,
            vec![
                "run", "--shape", "16,12,10", "--kind", "r2c", "--iters", "1", "--warmup", "0",
                "--json", "--batch", "3", "--groups", "2", "--steps",
            ],
        ),
        (
            2,
            vec![
                "bench-redist",
                "--shape",
                "16,12,10",
                "--grid",
                "2",
                "--repeat",
                "2",
                "--json",
            ],
        ),
        (
            2,
            vec![
                "redist",
                "--shape",
                "40,30",
                "--from",
                "grid=2,dist=cyclic(3),*",
                "--to",
                "grid=1x2,dist=block",
                "--iters",
                "2",
                "--json",
            ],
        ),
        (
            2,
            vec![
                "calibrate",
                "--quick",
                "--json",
                "--out",
                profile.to_str().unwrap(),
            ],
        ),
    ] {
        let out = mpi(ranks, &args);
        let lines = reports(&out);
        assert_eq!(lines.len(), 1, "one report from {args:?}:\n{out}");
        let p = &lines[0]["provenance"];
        assert_eq!(p["ranks"], ranks, "{p}");
        assert_eq!(p["launcher"], "mpirun", "{p}");
        assert_eq!(p["node_count"], 1, "{p}");
        all.push_str(&out);
    }
    for args in [
        vec!["plan", "--shape", "64,64,64", "--ranks", "8", "--json"],
        vec![
            "plan", "--shape", "64,64,64", "--ranks", "4,16", "--kind", "r2c", "--json",
            "--fields", "4",
        ],
    ] {
        let out = plain(&args);
        for v in reports(&out) {
            assert!(v["provenance"]["ranks"].is_null(), "{v}");
            assert_eq!(v["provenance"]["launcher"], "none");
        }
        all.push_str(&out);
    }
    let ok = check_schema(&all);
    for command in ["run", "redist", "bench-redist", "plan", "calibrate"] {
        assert!(
            ok.iter().any(|l| l == &format!("ok {command}")),
            "no {command} report checked: {ok:?}"
        );
    }
    // --steps: both directions' steps of the c2c slab on 2 ranks (a fused exchange each way),
    // their shares adding up to the pair, the bytes of 16 · 12 · 10 complex f64 per block.
    let run = &reports(&all)[0]["result"];
    let steps = run["steps"].as_array().expect("steps with --steps");
    let block = (16 * 12 * 10 * 16) as u64;
    for direction in ["forward", "backward"] {
        let of: Vec<&Value> = steps
            .iter()
            .filter(|s| s["direction"] == direction)
            .collect();
        assert!(
            of.iter().any(|s| s["kind"] == "fused"),
            "{direction}: {of:?}"
        );
        let bytes: Vec<u64> = of.iter().map(|s| s["bytes"].as_u64().unwrap()).collect();
        assert!(
            bytes.iter().all(|&b| b == 2 * block),
            "{direction}: {bytes:?}"
        );
    }
    let share: f64 = steps.iter().map(|s| s["share"].as_f64().unwrap()).sum();
    assert!((share - 1.0).abs() < 1e-6, "shares add up to {share}");
    // The time in exchanges, max and min over the 2 ranks: never min above max, and two
    // ranks' clocks never agree to the nanosecond on every step.
    let comm = |s: &Value, k: &str| s[k].as_f64().unwrap();
    assert!(
        steps
            .iter()
            .all(|s| comm(s, "comm_min_s") <= comm(s, "comm_s")),
        "{steps:?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| comm(s, "comm_min_s") < comm(s, "comm_s")),
        "{steps:?}"
    );
    // What the provenance says about this build: the commit it was built from, the release
    // profile the suite uses, the MPI library it runs on.
    let first = &reports(&all)[0]["provenance"];
    let commit = first["git_commit"].as_str().unwrap();
    assert!(commit.len() >= 12 && commit != "unknown", "commit {commit}");
    assert_eq!(first["build_profile"], "release");
    assert!(first["rustc"].as_str().unwrap().starts_with("rustc "));
    assert!(
        first["mpi_library"].as_str().unwrap().contains("Open MPI"),
        "{first}"
    );
    // A report that drifts from the schema is caught: an unknown result field.
    let mut bad = reports(&all)[0].clone();
    bad["result"]["speed"] = Value::from(1);
    let mut child = Command::new("/usr/bin/python3")
        .arg(repo_root().join("scripts/check-schema"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{bad}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("speed"));
    let _ = std::fs::remove_dir_all(&dir);
}
