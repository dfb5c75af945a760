//! The shared prologue of MPI test bodies ([`mpi_harness::start`], [`mpi_harness::MpiBody`],
//! [`mpi_harness::abort_on_panic`]) under real mpirun.

use mpi::collective::SystemOperation;
use mpi::traits::*;
use std::time::{Duration, Instant};

const BODY: &str = "prologue_body";

mpi_harness::launches!(BODY, 60; prologue_np1 => 1, prologue_np3 => 3);

#[test]
#[ignore = "MPI body: run by the prologue_np* launchers under mpirun"]
fn prologue_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    assert_eq!(
        (world.rank() as usize, world.size() as usize),
        (mpi.rank(), mpi.size())
    );
    // Every rank is in the same world: the sum of the ranks is n(n−1)/2.
    let mut sum = 0u64;
    world.all_reduce_into(&(mpi.rank() as u64), &mut sum, SystemOperation::sum());
    let n = mpi.size() as u64;
    assert_eq!(sum, n * (n - 1) / 2);
    mpi.pass();
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
fn a_panic_on_one_rank_ends_the_launch_at_once() {
    let start = Instant::now();
    let message = panic_message(|| {
        mpi_harness::Launch::new("panicking_body", 3)
            .timeout_secs(60)
            .run();
    });
    // Without the hook the other ranks would wait in the barrier until the timeout.
    assert!(message.contains("mpirun exited with"), "{message}");
    assert!(message.contains("deliberate panic on rank 1"), "{message}");
    assert!(message.contains("calling MPI_Abort"), "{message}");
    assert!(start.elapsed() < Duration::from_secs(40), "{message}");
}

#[test]
#[ignore = "MPI body: run by a_panic_on_one_rank_ends_the_launch_at_once"]
fn panicking_body() {
    let Some(mpi) = mpi_harness::start("panicking_body") else {
        return;
    };
    if mpi.rank() == 1 {
        panic!("deliberate panic on rank 1");
    }
    mpi.world().barrier();
    mpi.pass();
}

#[test]
#[should_panic(expected = "did not prove")]
fn a_body_that_does_not_pass_fails_its_launch() {
    mpi_harness::Launch::new("unfinished_body", 2)
        .timeout_secs(60)
        .run();
}

#[test]
#[ignore = "MPI body: run by a_body_that_does_not_pass_fails_its_launch"]
fn unfinished_body() {
    let Some(_mpi) = mpi_harness::start("unfinished_body") else {
        return;
    };
    // Returns without `pass()`: MPI is finalized, but the PASSED markers are missing.
}
