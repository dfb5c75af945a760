//! `dfft plan` (no MPI) and `dfft calibrate` under mpirun on 2 and 4 ranks: the profile that
//! calibrate writes is read back by plan, and `dfft run --grid auto` names the model's grid.

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const DFFT: &str = env!("CARGO_BIN_EXE_dfft");

use common::flat;

fn plan_json(args: &[&str]) -> Vec<Value> {
    let out = Command::new(DFFT)
        .arg("plan")
        .args(args)
        .arg("--json")
        .env_remove("DFFT_MACHINE")
        .output()
        .expect("dfft runs");
    assert!(
        out.status.success(),
        "dfft plan {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| flat(serde_json::from_str(l).expect("one JSON object per line")))
        .collect()
}

fn tmp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dfft-model-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `dfft plan` runs without MPI or a launcher, lists every candidate once, the chosen first.
#[test]
fn plan_lists_every_candidate_chosen_first() {
    let lines = plan_json(&["--shape", "512,512,512", "--ranks", "4096"]);
    // r = 1: [4096]; r = 2: the 13 ordered factorizations of 2^12.
    assert_eq!(lines.len(), 14);
    assert_eq!(lines[0]["chosen"], true);
    assert!(lines[1..].iter().all(|l| l["chosen"] == false));
    assert_eq!(lines[0]["grid"], serde_json::json!([64, 64]));
    assert!(lines[0]["why"].as_str().unwrap().contains("64x64"));
    for l in &lines {
        assert!(l["predicted_s"].as_f64().unwrap() > 0.0);
    }
    // The slab of 4096 ranks over 512 planes leaves 3584 ranks idle: listed, excluded.
    let slab = lines
        .iter()
        .find(|l| l["grid"] == serde_json::json!([4096]))
        .unwrap();
    assert_eq!(slab["idle_ranks"], 3584);
    assert!(slab["excluded"].is_string());

    // Latency-dominated network, few ranks: Birkeland & Sørøvik's slab; the table form works too.
    let lines = plan_json(&[
        "--shape",
        "256,256,256",
        "--ranks",
        "4",
        "--ts",
        "1e-4",
        "--tw",
        "1e-10",
    ]);
    assert_eq!(lines[0]["grid"], serde_json::json!([4]));
    let out = Command::new(DFFT)
        .args(["plan", "--shape", "9,7,5,12", "--ranks", "6"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("chose") && text.contains("latency_s") && text.contains("memory_s"));
}

#[test]
fn plan_rejects_a_bad_profile() {
    let bad = tmp_path("bad.json");
    std::fs::write(&bad, r#"{"cores_per_node": 0}"#).unwrap();
    let out = Command::new(DFFT)
        .args(["plan", "--shape", "8,8,8", "--ranks", "2", "--machine"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cores_per_node"));
}

/// Runs `dfft plan ARGS` and returns (status, stdout, stderr, CPU seconds, peak RSS in bytes)
/// from the child's own resource usage (wait4), so a loaded machine does not change them.
fn plan_measured(args: &[&str]) -> (std::process::ExitStatus, String, String, f64, u64) {
    use std::os::unix::process::ExitStatusExt;
    let child = Command::new(DFFT)
        .arg("plan")
        .args(args)
        .env_remove("DFFT_MACHINE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dfft runs");
    let pid = child.id() as libc::pid_t;
    let out = std::thread::spawn(move || {
        use std::io::Read;
        let (mut o, mut e) = (String::new(), String::new());
        let mut child = child;
        child.stdout.take().unwrap().read_to_string(&mut o).unwrap();
        child.stderr.take().unwrap().read_to_string(&mut e).unwrap();
        (o, e)
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, with pointers to live locals.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4");
    let (stdout, stderr) = out.join().unwrap();
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
    let rss = usage.ru_maxrss as u64 * 1024; // kilobytes on Linux
    (
        std::process::ExitStatus::from_raw(status),
        stdout,
        stderr,
        cpu,
        rss,
    )
}

/// Planning never walks the ranks: every P up to 2^40 (a prime, a power of ten, 2^40 itself
/// and a count with 6720 divisors) answers in under 1 s of CPU time and 100 MB; beyond 2^40,
/// and with too many candidate grids, a clear error.
#[test]
fn plan_answers_any_rank_count_up_to_2_40_quickly() {
    for ranks in [
        "1000000",
        "100000000",
        "1000000007",
        "1000000000000",
        "1099511627776",
        "963761198400",
    ] {
        let (status, stdout, stderr, cpu, rss) =
            plan_measured(&["--shape", "1024,1024,1024", "--ranks", ranks, "--json"]);
        assert!(status.success(), "P = {ranks}: {stderr}");
        let first = flat(serde_json::from_str(stdout.lines().next().unwrap()).unwrap());
        assert_eq!(first["chosen"], true, "{first}");
        assert!(cpu < 1.0, "P = {ranks}: {cpu:.2} s of CPU time");
        assert!(rss < 100 << 20, "P = {ranks}: peak RSS {} MB", rss >> 20);
    }
    let (status, _, stderr, _, _) =
        plan_measured(&["--shape", "64,64,64", "--ranks", "1099511627777"]);
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("at most 1099511627776 ranks") && stderr.contains("1099511627777"),
        "{stderr}"
    );
    let (status, _, stderr, cpu, _) =
        plan_measured(&["--shape", "64,64,64,64", "--ranks", "963761198400"]);
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains("1843801 candidate grids"), "{stderr}");
    assert!(cpu < 1.0, "refusing took {cpu:.2} s");
    // One grid rank of the same problem is within bounds.
    let (status, stdout, stderr, _, _) = plan_measured(&[
        "--shape",
        "64,64,64,64",
        "--ranks",
        "963761198400",
        "--grid",
        "2",
        "--json",
    ]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.lines().count(), 6720);
}

/// `--machine` files are read strictly: named fields only, each of its type; the fields a
/// file leaves out are named.
#[test]
fn machine_files_are_read_strictly() {
    for (text, says) in [
        ("[1,2,3]", "never read by position"),
        ("{}", "no profile field given"),
        (
            r#"{"ts_inter_s": 1e-5, "tw_inter": 1e-10}"#,
            "unknown key(s) tw_inter",
        ),
        (
            r#"{"cores_per_node": "40"}"#,
            "cores_per_node must be a non-negative integer",
        ),
        (
            r#"{"ranks_per_node": 2.5}"#,
            "ranks_per_node must be a non-negative integer",
        ),
    ] {
        let path = tmp_path("strict.json");
        std::fs::write(&path, text).unwrap();
        let out = Command::new(DFFT)
            .args(["plan", "--shape", "8,8,8", "--ranks", "2", "--machine"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}: {stderr}");
        assert!(stderr.contains(says), "{text}: {stderr}");
    }
    let path = tmp_path("partial.json");
    std::fs::write(&path, r#"{"ts_inter_s": 1e-5, "cores_per_node": 40}"#).unwrap();
    let out = Command::new(DFFT)
        .args(["plan", "--shape", "8,8,8", "--ranks", "2", "--machine"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("profile:"))
        .unwrap_or_else(|| panic!("no profile line:\n{stdout}"));
    assert!(
        line.contains("defaults for fields") && line.contains("ts_intra_s"),
        "{line}"
    );
    assert!(
        !line.contains("ts_inter_s") && !line.contains("cores_per_node"),
        "{line}"
    );
}

/// Calibrate on `ranks` ranks, then read the profile back with `plan` and use it in `run`.
fn calibrate_then_plan(ranks: usize) {
    let profile = tmp_path(&format!("machine-{ranks}.json"));
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT)
        .args(["calibrate", "--quick", "--out"])
        .arg(&profile);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "calibrate on {ranks}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    // ts and the call overhead may fit to 0 on a noisy machine; the rates may not.
    for key in ["ts_intra_s", "exchange_overhead_s"] {
        let x = v[key].as_f64().unwrap();
        assert!(
            x.is_finite() && x >= 0.0,
            "{key} = {x} on {ranks} ranks: {v}"
        );
    }
    for key in [
        "tw_intra_s_per_byte",
        "fft_s_per_element_log2",
        "copy_bytes_per_s",
        "stream_bytes_per_s",
    ] {
        let x = v[key].as_f64().unwrap();
        assert!(
            x.is_finite() && x > 0.0,
            "{key} = {x} on {ranks} ranks: {v}"
        );
    }
    assert_eq!(v["calibration"]["ranks"], ranks);
    assert!(!v["calibration"]["samples"].as_array().unwrap().is_empty());

    let p = profile.to_str().unwrap();
    let lines = plan_json(&["--shape", "64,64,64", "--ranks", "8", "--machine", p]);
    assert_eq!(lines.iter().filter(|l| l["chosen"] == true).count(), 1);
    // The same profile through the environment gives the same answer.
    let out = Command::new(DFFT)
        .args(["plan", "--shape", "64,64,64", "--ranks", "8", "--json"])
        .env("DFFT_MACHINE", &profile)
        .output()
        .unwrap();
    let mut first = flat(
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap(),
    );
    // The same numbers; the profile's name says where it came from.
    let named = first["machine_profile"].take();
    assert!(
        named.as_str().unwrap().starts_with("$DFFT_MACHINE="),
        "{named}"
    );
    let mut by_flag = lines[0].clone();
    assert!(by_flag["machine_profile"]
        .take()
        .as_str()
        .unwrap()
        .starts_with("--machine "));
    assert_eq!(first, by_flag);

    // dfft run --grid auto names the model's grid and its predicted time.
    let mut cmd = mpi_harness::mpirun_command(ranks);
    cmd.arg(DFFT).args([
        "run",
        "--shape",
        "12,10,9",
        "--iters",
        "1",
        "--warmup",
        "0",
        "--json",
        "--machine",
        p,
    ]);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report =
        flat(serde_json::from_str(stdout.lines().find(|l| l.starts_with('{')).unwrap()).unwrap());
    assert_eq!(report["grid_choice"], "auto");
    assert!(report["predicted_s"].as_f64().unwrap() > 0.0);
    let grid = report["grid"].as_array().unwrap();
    assert_eq!(
        grid.iter().map(|x| x.as_u64().unwrap()).product::<u64>(),
        ranks as u64
    );
}

#[test]
fn calibrate_on_2_ranks_writes_a_profile_plan_reads() {
    calibrate_then_plan(2);
}

#[test]
fn calibrate_on_4_ranks_writes_a_profile_plan_reads() {
    calibrate_then_plan(4);
}

/// A reader that stops after the first line (`dfft plan --json | head -1`) is not an error:
/// the plan ends quietly, without a panic on the closed pipe. The output (560 candidates of a
/// 5-D shape on 4096 ranks) is larger than a pipe buffer, so the write does hit the closed end.
#[test]
fn plan_ends_quietly_when_the_reader_stops() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(DFFT)
        .args([
            "plan",
            "--shape",
            "64,64,64,64,64",
            "--ranks",
            "4096",
            "--json",
        ])
        .env_remove("DFFT_MACHINE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dfft runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let v = flat(serde_json::from_str(&first).expect("a JSON line"));
    assert_eq!(v["chosen"], true);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Several P: the chosen grid of each with its time split (compute, intra-node, inter-node,
/// latency) and the efficiency against the smallest P; the JSON carries the same.
#[test]
fn plan_shows_the_split_and_the_efficiency() {
    let out = Command::new(DFFT)
        .args([
            "plan",
            "--shape",
            "1024,1024,1024",
            "--kind",
            "r2c",
            "--ranks",
            "256,1024,4096",
            "--ranks-per-node",
            "40",
            "--cores-per-node",
            "40",
        ])
        .env_remove("DFFT_MACHINE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "strong scaling",
        "efficiency",
        "compute",
        "intra-node",
        "inter-node",
        "latency",
        "profile: built-in defaults",
    ] {
        assert!(text.contains(needle), "no '{needle}' in\n{text}");
    }
    let lines = plan_json(&["--shape", "64,64,64", "--ranks", "4,16", "--kind", "r2c"]);
    let chosen: Vec<&Value> = lines.iter().filter(|l| l["chosen"] == true).collect();
    assert_eq!(chosen.len(), 2);
    assert_eq!(chosen[0]["efficiency"], 1.0);
    for c in &chosen {
        let split = [
            "fft_s",
            "memory_s",
            "intra_node_s",
            "inter_node_s",
            "latency_s",
        ]
        .map(|k| c[k].as_f64().unwrap())
        .iter()
        .sum::<f64>();
        let total = c["predicted_s"].as_f64().unwrap();
        assert!((split - total).abs() <= 1e-9 * total, "{c}");
    }
    // --batch: one answer per request line, profile fields replaced per request.
    let mut child = Command::new(DFFT)
        .args(["plan", "--batch"])
        .env_remove("DFFT_MACHINE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        // 4 ranks per node: the exchanges cross nodes, so a slower node link costs time.
        writeln!(
            stdin,
            r#"{{"shape":[64,64,64],"ranks":16,"grid":"4x4","machine":{{"ranks_per_node":4}}}}"#
        )
        .unwrap();
        writeln!(
            stdin,
            r#"{{"shape":[64,64,64],"ranks":16,"grid":"4x4","machine":{{"ranks_per_node":4,"tw_node_s_per_byte":1e-8}}}}"#
        )
        .unwrap();
        writeln!(
            stdin,
            r#"{{"shape":[64,64,64],"ranks":16,"machine":{{"tw_nod":1}}}}"#
        )
        .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0]["grid"], serde_json::json!([4, 4]));
    assert!(answers[1]["predicted_s"].as_f64() > answers[0]["predicted_s"].as_f64());
    assert!(answers[2]["error"].as_str().unwrap().contains("tw_nod"));
}

/// One `dfft run` under mpirun on 2 ranks with the cache directory `cache`, the arguments
/// `extra` and the environment `env`; `rank1_env`: rank 1 runs with this variable set
/// differently (a second program context). Returns the JSON report (flat) and stderr.
fn run_with_cache(
    cache: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
    rank1_env: Option<&str>,
) -> (Value, String) {
    let args = [
        "run", "--shape", "12,10,9", "--iters", "1", "--warmup", "0", "--json",
    ];
    let mut cmd = mpi_harness::mpirun_command(if rank1_env.is_some() { 1 } else { 2 });
    cmd.arg(DFFT)
        .args(args)
        .args(extra)
        .env_remove("DFFT_MACHINE")
        .env("DFFT_CACHE_DIR", cache)
        .envs(env.iter().copied());
    if let Some(var) = rank1_env {
        cmd.args([":", "-n", "1", "env", var, DFFT])
            .args(args)
            .args(extra);
    }
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report = stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a report");
    (flat(serde_json::from_str(report).unwrap()), stderr)
}

/// `dfft run` without a profile measures this machine on first use, caches it (one file per
/// machine, stamped with what identifies it) and says so in one line; later runs read it and
/// say which file; a corrupt or foreign file is measured again and replaced; `--machine` and
/// `$DFFT_MACHINE` override the cache without touching it; every rank uses rank 0's profile
/// (rank 1 pointed at an empty cache neither measures nor disagrees). `dfft calibrate`
/// without --out writes the same file.
#[test]
fn first_run_measures_and_caches_this_machines_profile() {
    let cache = tmp_path("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let measured = "measured this machine's profile";
    // First use: measured once (rank 0 announces), cached, named in the report.
    let (first, err) = run_with_cache(&cache, &[], &[], None);
    assert_eq!(err.matches(measured).count(), 1, "{err}");
    let files = common::files_in(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(
        files[0].starts_with(&format!("machine-{}-", host.trim())),
        "{files:?}"
    );
    let file = cache.join(&files[0]);
    let path = file.to_str().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(saved["machine"]["hostname"], host.trim(), "{saved}");
    assert!(
        saved["tw_memory_s_per_byte"].as_f64().unwrap() > 0.0,
        "{saved}"
    );
    let named = first["machine_profile"].as_str().unwrap();
    assert!(
        named.contains("measured now and cached in") && named.contains(path),
        "{named}"
    );
    assert_eq!(first["generic_profile"], false);
    // Second use: read, and named; nothing measured, the file unchanged.
    let (second, err) = run_with_cache(&cache, &[], &[], None);
    assert!(!err.contains(measured), "{err}");
    let named = second["machine_profile"].as_str().unwrap();
    assert!(
        named.starts_with(&format!("this machine's profile {path}")),
        "{named}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // A corrupt file, then one stamped for another machine: measured again and replaced.
    std::fs::write(&file, "{\"ts_inter_s\": ").unwrap();
    let (_, err) = run_with_cache(&cache, &[], &[], None);
    assert!(
        err.contains("is not a usable profile") && err.contains(measured),
        "{err}"
    );
    let mut foreign: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    foreign["machine"]["cores"] = serde_json::json!(100_000);
    std::fs::write(&file, foreign.to_string()).unwrap();
    let (_, err) = run_with_cache(&cache, &[], &[], None);
    assert!(
        err.contains("another machine") && err.contains(measured),
        "{err}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
    // --machine and $DFFT_MACHINE: that file, the cache untouched.
    let own = tmp_path("own-machine.json");
    std::fs::write(&own, r#"{"ts_inter_s": 3e-6, "source": "a test machine"}"#).unwrap();
    let own_path = own.to_str().unwrap();
    let (by_flag, err) = run_with_cache(&cache, &["--machine", own_path], &[], None);
    assert!(
        !err.contains(measured) && !err.contains("of this machine"),
        "{err}"
    );
    assert!(by_flag["machine_profile"]
        .as_str()
        .unwrap()
        .starts_with("--machine "));
    let (by_env, err) = run_with_cache(&cache, &[], &[("DFFT_MACHINE", own_path)], None);
    assert!(!err.contains(measured), "{err}");
    assert!(
        by_env["machine_profile"]
            .as_str()
            .unwrap()
            .starts_with("$DFFT_MACHINE="),
        "{by_env}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // Rank 1 sees an empty cache: it follows rank 0's file instead of measuring alone.
    let empty = tmp_path("empty-cache");
    let _ = std::fs::remove_dir_all(&empty);
    let elsewhere = format!("DFFT_CACHE_DIR={}", empty.display());
    let (agreed, err) = run_with_cache(&cache, &[], &[], Some(&elsewhere));
    assert!(!err.contains(measured), "{err}");
    assert!(agreed["machine_profile"].as_str().unwrap().contains(path));
    assert!(!empty.exists());
    // `dfft calibrate` writes the same machine's file.
    let mut cmd = mpi_harness::mpirun_command(2);
    cmd.arg(DFFT)
        .args(["calibrate", "--quick"])
        .env("DFFT_CACHE_DIR", &cache);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains(path), "{stdout}");
    assert_eq!(common::files_in(&cache), files);
    let _ = std::fs::remove_dir_all(&cache);
}

/// `scripts/model-validate --published --holdout` (the pure part: `dfft plan --batch` only):
/// one profile fitted to two points of each published Jean-Zay table predicts every other
/// point within 25 % (the one measured anomaly excused); so does each table left out of a
/// fit to the other three; PencilFFTs with MPI_Alltoallv on Jean-Zay and 2DECOMP&FFT on
/// ARCHER2 from two points each; no fitted parameter leaves its plausible range; and
/// docs/model.md holds exactly the current output.
#[test]
fn published_runs_are_predicted_and_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let out_file = tmp_path("published.md");
    let out = Command::new("python3")
        .arg(root.join("scripts/model-validate"))
        .args(["--published", "--holdout", "--out"])
        .arg(&out_file)
        .env("DFFT_BIN", DFFT)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&out_file).unwrap();
    // Rows of predicted points: the table's name, then P.
    let rows = |prefix: &str| {
        text.lines()
            .filter(|l| {
                l.starts_with(prefix)
                    && l.split('|')
                        .nth(2)
                        .is_some_and(|p| p.trim().parse::<u64>().is_ok())
            })
            .count()
    };
    // The usual fit and the cross-validation: 25 points each; Alltoallv 19, ARCHER2 7.
    assert_eq!(
        rows("| PencilFFTs 5") + rows("| PencilFFTs 1") + rows("| PencilFFTs 2") + rows("| P3DFFT"),
        50,
        "{text}"
    );
    assert_eq!(rows("| PencilFFTs Alltoallv"), 19, "{text}");
    assert_eq!(rows("| 2DECOMP"), 7, "{text}");
    assert!(!text.contains("**MISS**"), "{text}");
    let docs = std::fs::read_to_string(root.join("docs/model.md")).unwrap();
    let section = docs
        .split("<!-- published:begin -->")
        .nth(1)
        .and_then(|s| s.split("<!-- published:end -->").next())
        .expect("docs/model.md has the published section");
    assert_eq!(
        section.trim(),
        text.trim(),
        "docs/model.md is stale: run scripts/model-validate --published --update-docs"
    );
}

/// The measured/predicted ratio `dfft run` prints ("measured/predicted 0.97").
fn printed_ratio(stdout: &str) -> Option<f64> {
    let at = stdout.find("measured/predicted ")? + "measured/predicted ".len();
    stdout[at..].split_whitespace().next()?.parse().ok()
}

/// A new user's first command (`scripts/run`: `dfft run --shape 128,128,128 --iters 10` on 4
/// ranks of one thread, the machine's profile measured on first use into a fresh cache)
/// predicts its own time within a factor of 2. A second run of a 96x80x72 field on the 2x2
/// pencil grid with the profile now cached, whose exchanges go through MPI messages where the
/// first run's (and the profile's anchor's) go through shared-memory windows, is predicted
/// within a factor of 3: the anchor scales only the window terms, and on 4 ranks sharing 2
/// cores the message terms of the `MPI_Alltoall` probe fall short (docs/model.md, "A first
/// run"). The profile is measured and the runs timed within seconds of each other, so a
/// steady load (the suite's other tests) slows them alike; a load that comes or goes between
/// them can still move a ratio, so a ratio outside its band is measured once more, from a
/// fresh cache, before the test fails. Two attempts at most.
#[test]
fn first_run_predicts_its_own_time() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = std::fs::read_to_string(root.join("scripts/run")).unwrap();
    for default in [
        "DFFT_RUN_RANKS:-4",
        "DFFT_RUN_SHAPE:-128,128,128",
        "DFFT_RUN_ITERS:-10",
        "-x RAYON_NUM_THREADS=1",
        "dfft run --shape \"$shape\" --iters \"$iters\" \"$@\"",
    ] {
        assert!(
            script.contains(default),
            "scripts/run no longer has {default}"
        );
    }
    let mut ratios = Vec::new();
    for attempt in 0..2 {
        let cache = tmp_path(&format!("first-run-cache-{attempt}"));
        let _ = std::fs::remove_dir_all(&cache);
        let mut attempt_ratios = Vec::new();
        for extra in [&[][..], &["--grid", "2x2"][..]] {
            let shape = if extra.is_empty() {
                "128,128,128"
            } else {
                "96,80,72"
            };
            let mut cmd = mpi_harness::mpirun_command(4);
            cmd.args(["-x", "RAYON_NUM_THREADS=1", DFFT])
                .args(["run", "--shape", shape, "--iters", "10"])
                .args(extra)
                .env_remove("DFFT_MACHINE")
                .env("DFFT_CACHE_DIR", &cache);
            let out = mpi_harness::run_command(cmd, Duration::from_secs(180));
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{stdout}\n{stderr}");
            // The first run measures the profile, the second reads it from the cache.
            assert_eq!(
                stderr.contains("measured this machine's profile"),
                extra.is_empty(),
                "{stderr}"
            );
            let ratio = printed_ratio(&stdout).unwrap_or_else(|| panic!("no ratio in {stdout}"));
            println!("first run {extra:?}, attempt {attempt}: measured/predicted {ratio}");
            attempt_ratios.push(ratio);
        }
        let _ = std::fs::remove_dir_all(&cache);
        let ok =
            (0.5..=2.0).contains(&attempt_ratios[0]) && (0.5..=3.0).contains(&attempt_ratios[1]);
        ratios.push(attempt_ratios);
        if ok {
            return;
        }
    }
    panic!(
        "measured/predicted (default grid, 2x2) {ratios:?}: not within 0.5..2 and 0.5..3 twice in a row"
    );
}

/// `dfft plan --axes 1,2`: a 3-D field transformed along axes 1 and 2 on a slab needs no
/// exchange; the model chooses that slab and its JSON says 0 exchanges, where the full
/// transform needs some; axes the shape lacks are a usage error (status 2).
#[test]
fn plan_knows_partial_transforms() {
    let args = ["--shape", "64,64,64", "--ranks", "4"];
    let full = plan_json(&args);
    let part = plan_json(&[&args[..], &["--axes", "1,2"]].concat());
    assert_eq!(full[0]["grid"], serde_json::json!([4]), "{}", full[0]);
    assert!(full[0]["exchanges"].as_u64().unwrap() > 0, "{}", full[0]);
    assert_eq!(part[0]["grid"], serde_json::json!([4]), "{}", part[0]);
    assert_eq!(part[0]["exchanges"], 0, "{}", part[0]);
    assert_eq!(part[0]["bytes"], 0, "{}", part[0]);
    // On a 2x2 grid: half the full transform's exchanges.
    let pencil = ["--shape", "64,64,64", "--ranks", "4", "--grid", "2x2"];
    let full = plan_json(&pencil);
    let part = plan_json(&[&pencil[..], &["--axes", "1,2"]].concat());
    assert_eq!(full[0]["exchanges"], 8, "{}", full[0]);
    assert_eq!(part[0]["exchanges"], 4, "{}", part[0]);
    let text = Command::new(DFFT)
        .args([
            "plan", "--shape", "64,64,64", "--ranks", "4", "--axes", "1,2",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("partial transform: axes [1, 2] only"),
        "{stdout}"
    );
    let bad = Command::new(DFFT)
        .args([
            "plan", "--shape", "64,64,64", "--ranks", "4", "--axes", "0,3",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("[0, 3]") && stderr.contains("out of range"),
        "{stderr}"
    );
}
