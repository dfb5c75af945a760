//! `scripts/netns-cluster`: two emulated hosts (network namespaces, OpenMPI over TCP, no ssh)
//! run a verified `dfft bench-redist` with and without a bandwidth limit, and `down` leaves no
//! namespace behind. Needs root and iproute2 (scripts/setup); fails, never skips, without them.

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

fn netns(prefix: &str, args: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new("bash");
    cmd.current_dir(repo_root())
        .arg("scripts/netns-cluster")
        .args(args)
        .env("DFFT_NETNS_PREFIX", prefix)
        .env("TIMEOUT", "60");
    let (out, timed_out) = mpi_harness::run_command_timed(cmd, Duration::from_secs(90));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !timed_out,
        "netns-cluster {args:?} timed out\n{stdout}\n{stderr}"
    );
    (out.status.success(), stdout, stderr)
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

/// Tears the namespaces down even when an assertion fails.
struct Guard(String);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = netns(&self.0, &["down"]);
    }
}

fn bench(prefix: &str) -> Value {
    let (ok, stdout, stderr) = netns(
        prefix,
        &[
            "mpirun",
            DFFT,
            "bench-redist",
            "--shape",
            "16,12,10",
            "--grid",
            "1",
            "--repeat",
            "2",
            "--json",
        ],
    );
    assert!(
        ok,
        "bench-redist across namespaces failed\n{stdout}\n{stderr}"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line\n{stdout}\n{stderr}"));
    serde_json::from_str(line).expect("JSON")
}

#[test]
fn two_hosts_in_namespaces_run_dfft_over_tcp_and_leave_nothing() {
    let prefix = format!("dfftt{}", std::process::id());
    let guard = Guard(prefix.clone());
    let (ok, stdout, stderr) = netns(&prefix, &["up", "2"]);
    assert!(
        ok,
        "netns-cluster up failed (needs root and iproute2):\n{stdout}\n{stderr}"
    );
    assert_eq!(namespaces_with(&prefix).len(), 3, "2 hosts + 1 switch");

    // Each rank sits in its own namespace with its own address.
    let (ok, stdout, _) = netns(
        &prefix,
        &[
            "mpirun",
            "sh",
            "-c",
            "ip -4 -o addr show eth0 | awk '{print \"ADDR\", $4}'",
        ],
    );
    assert!(ok, "{stdout}");
    let mut addrs: Vec<&str> = stdout.lines().filter(|l| l.starts_with("ADDR")).collect();
    addrs.sort();
    assert_eq!(
        addrs,
        ["ADDR 10.213.0.10/24", "ADDR 10.213.0.11/24"],
        "{stdout}"
    );

    let v = bench(&prefix);
    assert_eq!(v["ranks"], 2);
    assert_eq!(v["verified"], true);
    let (ok, stdout, stderr) = netns(&prefix, &["rate", "200mbit"]);
    assert!(ok, "tbf shaping failed\n{stdout}\n{stderr}");
    let v = bench(&prefix);
    assert_eq!(v["verified"], true);

    drop(guard);
    assert!(
        namespaces_with(&prefix).is_empty(),
        "namespaces left: {:?}",
        namespaces_with(&prefix)
    );
}
