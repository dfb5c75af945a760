//! Exchanges and chains of exchanges under real MPI on 1..=8 ranks, checked exactly with
//! index-valued data (each element holds its global linear index), for both methods.
use mpi::topology::Communicator;
use redist::chain::plan_chain;
use redist::grid::factorizations;
use redist::{Exchange, GridShape, Layout, MemoryOrder, Method, ProcessGrid, StageTimes};

const BODY: &str = "exchange_body";

mpi_harness::launches!(BODY, 300;
    exchange_np1 => 1, exchange_np2 => 2, exchange_np3 => 3, exchange_np4 => 4,
    exchange_np5 => 5, exchange_np6 => 6, exchange_np7 => 7, exchange_np8 => 8);

/// This rank's block of `layout` filled with global linear indices.
fn index_block(layout: &Layout, rank: usize) -> Vec<u64> {
    let mut out = vec![u64::MAX; layout.local_len(rank)];
    layout.fill_index_valued(rank, &mut out, |g| g);
    out
}

/// Decompositions to reach from the starting pencil: every ordered choice of r distinct
/// axes for r ≤ 2 (so swaps needing a parking step are included), a few for r = 3.
fn targets(d: usize, r: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    match r {
        1 => (0..d).for_each(|a| out.push(vec![a])),
        2 => {
            for a in 0..d {
                for b in 0..d {
                    if a != b {
                        out.push(vec![a, b]);
                    }
                }
            }
        }
        _ => {
            out.push((d - r..d).collect());
            out.push((0..r).rev().collect());
        }
    }
    out
}

#[test]
#[ignore = "MPI body: run by the exchange_np* launchers under mpirun"]
fn exchange_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());

    let shapes: [&[usize]; 5] = [
        &[11, 7, 13],
        &[16, 21, 41],
        &[9, 7, 5, 12],
        &[3, 20, 6],
        &[12, 10],
    ];
    let mut checked = 0usize;
    for shape in shapes {
        let d = shape.len();
        let mut grids: Vec<Vec<usize>> = Vec::new();
        for r in 1..d {
            if r <= 2 {
                grids.extend(factorizations(size, r));
            } else {
                grids.push(GridShape::balanced(size, r).unwrap().dims().to_vec());
            }
        }
        for dims in grids {
            let shape_g = GridShape::new(dims.clone()).unwrap();
            let grid = ProcessGrid::new(&world, shape_g.clone()).unwrap();
            let from = Layout::pencil(shape, shape_g.clone()).unwrap();
            for (t, target) in targets(d, dims.len()).into_iter().enumerate() {
                let order = MemoryOrder::natural(d).with_contiguous(t % d);
                let to = Layout::new(shape, shape_g.clone(), target, order).unwrap();
                let Ok(chain) = plan_chain(&from, &to) else {
                    continue; // same decomposition, different memory order only
                };
                for method in Method::ALL {
                    let mut data = index_block(&from, rank);
                    for step in &chain {
                        let mut exchange = Exchange::new(&grid, step, method).unwrap();
                        let mut dst = vec![u64::MAX; exchange.dst_len()];
                        let mut send = vec![u64::MAX; exchange.send_len()];
                        let mut recv = vec![u64::MAX; exchange.recv_len()];
                        let mut times = StageTimes::default();
                        exchange
                            .execute(&data, &mut dst, &mut send, &mut recv, &mut times)
                            .unwrap();
                        // Each intermediate layout is checked exactly, not just the last.
                        assert_eq!(
                            dst,
                            index_block(step.to(), rank),
                            "shape {shape:?} grid {dims:?} {method} step to {:?}",
                            step.to().decomposed()
                        );
                        // Applied again with dirty buffers: same answer.
                        dst.fill(7);
                        send.fill(9);
                        exchange
                            .execute(&data, &mut dst, &mut send, &mut recv, &mut times)
                            .unwrap();
                        assert_eq!(dst, index_block(step.to(), rank));
                        data = dst;
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 0, "no exchange was checked");
    mpi.pass();
}

/// A rank that panics while the others wait in a collective must end the job through the
/// panic hook's MPI_Abort, promptly, not hang it.
#[test]
fn a_panicking_rank_aborts_the_job() {
    let start = std::time::Instant::now();
    let result = std::panic::catch_unwind(|| {
        mpi_harness::Launch::new("panic_body", 3)
            .timeout_secs(60)
            .run();
    });
    let message = match result {
        Ok(()) => panic!("a launch with a panicking rank passed"),
        Err(e) => e.downcast_ref::<String>().cloned().unwrap_or_default(),
    };
    assert!(message.contains("mpirun exited with"), "{message}");
    assert!(message.contains("calling MPI_Abort"), "{message}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
#[ignore = "MPI body: run by a_panicking_rank_aborts_the_job"]
fn panic_body() {
    if !mpi_harness::is_child() {
        return;
    }
    let universe = mpi::initialize().expect("MPI initializes");
    redist::comm::abort_on_panic();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    mpi_harness::mark_reached("panic_body", rank, size);
    if rank == 1 {
        panic!("deliberate panic on rank 1");
    }
    mpi::traits::CommunicatorCollectives::barrier(&world); // would wait forever without the abort
    mpi_harness::mark_passed("panic_body", rank, size);
}

const CHUNKED: &str = "chunked_body";

/// Messages split into chunks far smaller than the blocks (the path that carries messages of
/// more than `i32::MAX` elements), for both methods, checked exactly.
#[test]
fn chunked_messages_np2() {
    mpi_harness::Launch::new(CHUNKED, 2).timeout_secs(120).run();
}
#[test]
fn chunked_messages_np4() {
    mpi_harness::Launch::new(CHUNKED, 4).timeout_secs(120).run();
}

#[test]
#[ignore = "MPI body: run by the chunked_messages_np* launchers under mpirun"]
fn chunked_body() {
    let Some(mpi) = mpi_harness::start(CHUNKED) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let mut checked = 0;
    for shape in [&[11usize, 7, 13][..], &[16, 21, 41], &[12, 10]] {
        let d = shape.len();
        let grid_shape = GridShape::balanced(size, 1).unwrap();
        let grid = ProcessGrid::new(&world, grid_shape.clone()).unwrap();
        let from = Layout::pencil(shape, grid_shape.clone()).unwrap();
        let to = Layout::new(
            shape,
            grid_shape,
            vec![d - 1],
            MemoryOrder::natural(d).with_contiguous(0),
        )
        .unwrap();
        let chain = plan_chain(&from, &to).unwrap();
        for max_count in [1usize, 7, 100] {
            for method in Method::ALL {
                let mut data = index_block(&from, rank);
                for step in &chain {
                    let mut exchange =
                        Exchange::with_max_count(&grid, step, method, max_count).unwrap();
                    let biggest = (0..size)
                        .map(|r| step.from().local_len(r).max(step.to().local_len(r)))
                        .max()
                        .unwrap();
                    let chunked = size > 1 && biggest > max_count;
                    assert_eq!(exchange.is_chunked(), chunked, "{shape:?} {max_count}");
                    let mut dst = vec![u64::MAX; exchange.dst_len()];
                    let mut send = vec![u64::MAX; exchange.send_len()];
                    let mut recv = vec![u64::MAX; exchange.recv_len()];
                    exchange
                        .execute(
                            &data,
                            &mut dst,
                            &mut send,
                            &mut recv,
                            &mut StageTimes::default(),
                        )
                        .unwrap();
                    assert_eq!(
                        dst,
                        index_block(step.to(), rank),
                        "shape {shape:?} {method} max_count {max_count}"
                    );
                    data = dst;
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0);
    mpi.pass();
}
