//! A launcher that cannot be started fails the launch: nothing passes without running. In a
//! file of its own because it changes the process environment.

#[test]
#[should_panic(expected = "cannot start `/nonexistent/mpirun`")]
fn a_missing_mpirun_fails_the_launch() {
    std::env::set_var("MPIEXEC", "/nonexistent/mpirun");
    mpi_harness::Launch::new("any_body", 2).run();
}
