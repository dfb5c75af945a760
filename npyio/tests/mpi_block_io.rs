//! The `block_io` example's checks (index-valued arrays in every dtype written and read back
//! under different splits and compared with numpy, empty blocks, agreed failures that leave
//! no file behind) under real mpirun on 1..=4 and 6 ranks.

#[path = "../examples/block_io.rs"]
#[allow(dead_code)]
mod block_io;

const BODY: &str = "block_io_body";

mpi_harness::launches!(BODY, 240;
    block_io_np1 => 1, block_io_np2 => 2, block_io_np3 => 3, block_io_np4 => 4,
          block_io_np6 => 6);

#[test]
#[ignore = "MPI body: run by the block_io_np* launchers under mpirun"]
fn block_io_body() {
    // Panics (and aborts the job) on any failed check.
    mpi_harness::program_body(BODY, || block_io::run(None));
}
