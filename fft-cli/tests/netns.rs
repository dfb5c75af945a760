//! `scripts/netns-cluster`: four emulated hosts (network namespaces, OpenMPI over TCP, no
//! ssh), two ranks each sharing the host's 100 Mbit/s link (tbf). `dfft calibrate` measures the
//! cluster, and a measured 64³ transform must match the model's prediction within 25 % with the
//! node's shared link, and miss it without: the per-node injection term is what explains the
//! time. `down` leaves no namespace behind. Needs root and iproute2 (scripts/setup); without
//! them the test says SKIPPED and why.

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

fn namespaces_with(prefix: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip (iproute2; run scripts/setup)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

/// Why namespaces cannot be made here, if they cannot.
fn cannot_make_namespaces() -> Option<String> {
    // SAFETY: geteuid only reads the process's user id.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (ip netns needs it)".into());
    }
    let name = format!("dfftprobe{}", std::process::id());
    match Command::new("ip").args(["netns", "add", &name]).output() {
        Err(e) => Some(format!("no ip command (iproute2): {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "ip netns add fails: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => {
            let _ = Command::new("ip").args(["netns", "del", &name]).output();
            None
        }
    }
}

fn body(v: &Value) -> Value {
    let mut out = v.clone();
    for part in ["problem", "result"] {
        if let Some(Value::Object(fields)) = v.get(part) {
            for (k, x) in fields {
                out[k] = x.clone();
            }
        }
    }
    out
}

#[test]
fn node_link_explains_times_across_emulated_hosts() {
    if let Some(why) = cannot_make_namespaces() {
        eprintln!("SKIPPED: netns-cluster test: {why}");
        return;
    }
    let prefix = format!("dfftt{}", std::process::id());
    let out_dir = std::env::temp_dir().join(format!("dfft-netns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let mut cmd = Command::new("bash");
    cmd.current_dir(repo_root())
        .arg("scripts/netns-cluster")
        .arg("experiment")
        .arg(&out_dir)
        .env("DFFT_NETNS_PREFIX", &prefix)
        .env("DFFT", DFFT)
        .env("TIMEOUT", "120")
        .env("RATES", "100mbit")
        .env("SHAPES", "64,64,64")
        .env("GRIDS", "1")
        .env("ITERS", "2")
        .env("CALIBRATE_ARGS", "");
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(240));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // The experiment always tears down, also when it fails.
    let left = namespaces_with(&prefix);
    if !left.is_empty() {
        let mut cmd = Command::new("bash");
        cmd.current_dir(repo_root())
            .args(["scripts/netns-cluster", "down"])
            .env("DFFT_NETNS_PREFIX", &prefix);
        let _ = cmd.output();
    }
    assert!(!timed_out, "experiment timed out\n{stdout}\n{stderr}");
    assert!(
        out.status.success(),
        "experiment failed\n{stdout}\n{stderr}"
    );
    assert!(left.is_empty(), "namespaces left: {left:?}");

    let rows: Vec<Value> = std::fs::read_to_string(out_dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| body(&serde_json::from_str(l).unwrap()))
        .collect();
    let profile = &rows
        .iter()
        .find(|r| r["command"] == "calibrate")
        .expect("a calibration")["profile"];
    assert!(
        profile["tw_node_s_per_byte"].as_f64().unwrap() > 0.0,
        "{profile}"
    );
    let run = rows.iter().find(|r| r["min_s"].is_number()).expect("a run");
    assert_eq!(run["ranks"], 8, "{run}");
    let predicted = |variant: &str| {
        rows.iter()
            .find(|r| r["variant"] == variant)
            .and_then(|r| r["predicted_s"].as_f64())
            .unwrap_or_else(|| panic!("no {variant} prediction\n{stdout}"))
    };
    let measured = run["min_s"].as_f64().unwrap();
    let with_link = measured / predicted("full");
    let without = measured / predicted("no-node-link");
    assert!(
        (0.75..=1.0 / 0.75).contains(&with_link),
        "measured/predicted {with_link:.2} with the node link\n{stdout}"
    );
    assert!(
        without > 1.4,
        "without the node link the model should miss: measured/predicted {without:.2}\n{stdout}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}
