//! The launcher against real mpirun, with children that need no MPI library: each prints its
//! markers from the launcher's rank variables.

use std::time::{Duration, Instant};

const BODY: &str = "marker_body";

#[test]
#[ignore = "child body"]
fn marker_body() {
    if !mpi_harness::is_child() {
        return;
    }
    let (rank, size) = mpi_harness::launcher_rank().expect("launched by mpirun");
    mpi_harness::mark_reached(BODY, rank, size);
    assert_eq!(std::env::var("RAYON_NUM_THREADS").as_deref(), Ok("1"));
    // A rank told to skip its PASSED marker simulates a rank that never finished.
    if std::env::var("SKIP_RANK").ok() != Some(rank.to_string()) {
        mpi_harness::mark_passed(BODY, rank, size);
    }
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    match std::panic::catch_unwind(f) {
        Ok(()) => panic!("the launch passed but should have failed"),
        Err(e) => e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    }
}

#[test]
fn three_ranks_all_prove_they_ran() {
    let out = mpi_harness::launch(BODY, 3).run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    for rank in 0..3 {
        assert!(stdout.contains(&mpi_harness::passed_marker(BODY, rank, 3)));
    }
}

#[test]
fn a_rank_without_its_marker_fails_the_launch() {
    let message = panic_message(|| {
        mpi_harness::Launch::new(BODY, 3)
            .env("SKIP_RANK", "1")
            .run();
    });
    assert!(message.contains("ranks [1] did not prove"), "{message}");
    // The output of the launch is shown.
    assert!(
        message.contains("MPI-HARNESS PASSED marker_body 2/3"),
        "{message}"
    );
}

#[test]
#[should_panic(expected = "did not prove")]
fn a_body_that_does_not_exist_fails_the_launch() {
    mpi_harness::Launch::new("no_such_body", 2).run();
}

#[test]
#[should_panic(expected = "mpirun exited with")]
fn a_failing_rank_fails_the_launch() {
    mpi_harness::Launch::new(BODY, 2).program("false").run();
}

/// Processes whose command line is exactly `cmdline`.
fn processes_running(cmdline: &[&str]) -> Vec<String> {
    let want: Vec<u8> = cmdline
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            (cmd == want).then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn a_hanging_launch_is_killed_with_all_its_ranks() {
    // A duration no other process uses, to find the ranks afterwards.
    let sleep = ["sleep", "61.25"];
    let start = Instant::now();
    let message = panic_message(|| {
        mpi_harness::Launch::new(BODY, 2)
            .program(sleep[0])
            .arg(sleep[1])
            .timeout_secs(3)
            .run();
    });
    assert!(message.contains("timed out"), "{message}");
    assert!(start.elapsed() < Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(200));
    let left = processes_running(&sleep);
    assert!(left.is_empty(), "ranks left running: {left:?}");
}
