//! The launcher against real mpirun, with children that need no MPI library: each prints its
//! markers from the launcher's rank variables.

const BODY: &str = "marker_body";

#[test]
#[ignore = "child body"]
fn marker_body() {
    if !mpi_harness::is_child() {
        return;
    }
    let (rank, size) = mpi_harness::launcher_rank().expect("launched by mpirun");
    mpi_harness::mark_reached(BODY, rank, size);
    // A rank told to skip its PASSED marker simulates a rank that never finished.
    if std::env::var("SKIP_RANK").ok() != Some(rank.to_string()) {
        mpi_harness::mark_passed(BODY, rank, size);
    }
}

#[test]
fn three_ranks_all_prove_they_ran() {
    let out = mpi_harness::Launch::new(BODY, 3).run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("MPI-HARNESS PASSED").count(), 3);
}

#[test]
#[should_panic(expected = "ranks [1] did not prove")]
fn a_rank_without_markers_fails_the_launch() {
    mpi_harness::Launch::new(BODY, 3)
        .env("SKIP_RANK", "1")
        .run();
}

#[test]
#[should_panic(expected = "timed out")]
fn a_hanging_launch_is_killed() {
    mpi_harness::Launch::new(BODY, 2)
        .program("sleep")
        .arg("60")
        .timeout_secs(3)
        .run();
}

#[test]
#[should_panic(expected = "mpirun exited with")]
fn a_failing_rank_fails_the_launch() {
    mpi_harness::Launch::new(BODY, 2).program("false").run();
}
