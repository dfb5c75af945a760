//! One rank's wrong buffer is the same error on every rank, never a hang: each collective call
//! (`Exchange::execute`, `Redistribution::execute` with every schedule, and Thakur's
//! `redistribute` and `redistribute_axis`) with one rank's buffer one element off must return
//! `RedistError::CallBufferLength` naming that rank and its values on every rank, and the
//! objects must still give exact results afterwards. (When only the offending rank noticed,
//! the others waited for its messages until the harness's timeout.)
use mpi::topology::Communicator;
use mpi::traits::Root;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::cyclic::thakur::{self, AxisMethod, Receive, ThakurMethod};
use redist::dist::DistArray;
use redist::{Exchange, ExchangePlan, GridShape, Layout, MemoryOrder, Method, ProcessGrid};
use redist::{RedistError, StageTimes};

const BODY: &str = "bad_buffers_body";

mpi_harness::launches!(BODY, 60;
    bad_buffers_np1 => 1, bad_buffers_np2 => 2, bad_buffers_np3 => 3, bad_buffers_np4 => 4,
    bad_buffers_np8 => 8);

/// `value` as rank `bad` has it, on every rank.
fn from_rank<C: Communicator>(world: &C, bad: usize, value: usize) -> usize {
    let mut v = value as u64;
    world.process_at_rank(bad as i32).broadcast_into(&mut v);
    v as usize
}

/// The length rank `bad` passes for a buffer that needs `need` there (one short; one long
/// where the length must be exact and the buffer is empty), or `None` for an empty buffer that
/// may be longer (nothing can be wrong with it). The same answer on every rank.
fn wrong_len(need: usize, exact: bool) -> Option<usize> {
    match need {
        0 if exact => Some(1),
        0 => None,
        n => Some(n - 1),
    }
}

/// Checks that every rank got the same agreed error about rank `bad`'s `buffer`.
fn expect_agreed(
    result: redist::Result<()>,
    rank: usize,
    bad: usize,
    buffer: &str,
    need: usize,
    given: usize,
    what: &str,
) {
    match result {
        Err(RedistError::CallBufferLength {
            rank: r,
            buffer: b,
            expected,
            actual,
        }) => assert_eq!(
            (r, b, expected, actual),
            (bad, buffer, need, given),
            "rank {rank}: {what}"
        ),
        other => panic!("rank {rank}: {what}: expected CallBufferLength, got {other:?}"),
    }
}

/// A vector of `len` copies of `fill`, `len` being `wrong` on rank `bad` for buffer `k` of
/// the call and `right` otherwise.
fn buffer(k: usize, which: usize, rank: usize, bad: usize, right: usize, wrong: usize) -> Vec<u64> {
    let len = if k == which && rank == bad {
        wrong
    } else {
        right
    };
    vec![u64::MAX; len]
}

fn index_block(layout: &Layout, rank: usize) -> Vec<u64> {
    let mut out = vec![0; layout.local_len(rank)];
    layout.fill_index_valued(rank, &mut out, |g| g);
    out
}

fn dist_block(a: &DistArray, rank: usize) -> Vec<u64> {
    let mut out = vec![u64::MAX; a.local_len(rank)];
    a.fill_index_valued(rank, &mut out, |g| g);
    out
}

const NAMES: [&str; 4] = ["source", "destination", "send", "receive"];

#[test]
#[ignore = "MPI body: run by the bad_buffers_np* launchers under mpirun"]
fn bad_buffers_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let checked = refused_calls(mpi.world());
    println!("rank {}: {checked} refused calls agreed", mpi.rank());
    assert!(
        checked >= 10,
        "rank {}: only {checked} cases ran",
        mpi.rank()
    );
    mpi.pass();
}

/// Runs every refused call and the exact calls after them (every communicator and window
/// freed before MPI finalizes); the number of refused calls.
fn refused_calls(world: mpi::topology::SimpleCommunicator) -> usize {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mut bads = vec![0, size - 1];
    bads.dedup();
    let mut checked = 0;

    // Exchange on a 2-D grid: z-pencils to y-pencils.
    let dims = GridShape::balanced(size, 2).unwrap();
    let grid = ProcessGrid::new(&world, dims.clone()).unwrap();
    let shape = [6, 7, 9];
    let from = Layout::pencil(&shape, dims.clone()).unwrap();
    let order = MemoryOrder::natural(3).with_contiguous(1);
    let to = Layout::new(&shape, dims, vec![0, 2], order).unwrap();
    let plan = ExchangePlan::new(&from, &to).unwrap();
    let mut ex = Exchange::new(&grid, &plan, Method::Alltoallv).unwrap();
    let src = index_block(&from, rank);
    let want = index_block(&to, rank);
    let lens = [ex.src_len(), ex.dst_len(), ex.send_len(), ex.recv_len()];
    for &bad in &bads {
        for (k, name) in NAMES.iter().enumerate() {
            let need = from_rank(&world, bad, lens[k]);
            let Some(given) = wrong_len(need, false) else {
                continue;
            };
            let mut b: Vec<Vec<u64>> = (0..4)
                .map(|i| buffer(k, i, rank, bad, lens[i], given))
                .collect();
            let (s, rest) = b.split_at_mut(1);
            let (d, rest) = rest.split_at_mut(1);
            let (sd, rv) = rest.split_at_mut(1);
            let s = &mut s[0];
            s.iter_mut().zip(&src).for_each(|(x, &v)| *x = v);
            let r = ex.execute(
                s,
                &mut d[0],
                &mut sd[0],
                &mut rv[0],
                &mut StageTimes::default(),
            );
            expect_agreed(r, rank, bad, name, need, given, "Exchange::execute");
            checked += 1;
        }
    }
    // Still exact after the refused calls.
    let mut dst = vec![0; ex.dst_len()];
    let (mut send, mut recv) = (vec![0; ex.send_len()], vec![0; ex.recv_len()]);
    ex.execute(
        &src,
        &mut dst,
        &mut send,
        &mut recv,
        &mut StageTimes::default(),
    )
    .unwrap();
    assert_eq!(dst, want, "rank {rank}: exchange after the errors");

    // Block-cyclic redistribution with every schedule.
    let shape = [13, 9];
    let a = DistArray::parse_spec(&format!("grid={size},dist=cyclic(2),*"), &shape).unwrap();
    let b = DistArray::parse_spec(&format!("grid={size},dist=*,cyclic(3)"), &shape).unwrap();
    let plan = RedistPlan::new(&a, &b, size).unwrap();
    let src = dist_block(&a, rank);
    let want = dist_block(&b, rank);
    for schedule in Schedule::ALL {
        let mut r = Redistribution::new(&world, &plan, schedule).unwrap();
        let lens = [r.src_len(), r.dst_len(), r.send_len(), r.recv_len()];
        let bad = size - 1;
        for (k, name) in NAMES.iter().enumerate() {
            let need = from_rank(&world, bad, lens[k]);
            let Some(given) = wrong_len(need, false) else {
                continue;
            };
            let mut v: Vec<Vec<u64>> = (0..4)
                .map(|i| buffer(k, i, rank, bad, lens[i], given))
                .collect();
            let n = v[0].len().min(src.len());
            v[0][..n].copy_from_slice(&src[..n]);
            let [s, d, sd, rv] = &mut v[..] else {
                unreachable!()
            };
            let res = r.execute(s, d, sd, rv, &mut StageTimes::default());
            expect_agreed(res, rank, bad, name, need, given, &format!("{schedule}"));
            checked += 1;
        }
        let mut dst = vec![u64::MAX; r.dst_len()];
        let (mut send, mut recv) = (vec![0; r.send_len()], vec![0; r.recv_len()]);
        r.execute(
            &src,
            &mut dst,
            &mut send,
            &mut recv,
            &mut StageTimes::default(),
        )
        .unwrap();
        assert_eq!(dst, want, "rank {rank}: {schedule} after the errors");
    }

    // Thakur's methods, 1-D and along one axis: lengths must be exact.
    let (n, x, y) = (37, 3, 6);
    let phases = thakur::plan_phases(ThakurMethod::Lcm, n, size, x, y, rank).unwrap();
    let lens = [phases[0].src_len, phases[phases.len() - 1].dst_len];
    for &bad in &bads {
        for (k, name) in NAMES[..2].iter().enumerate() {
            let need = from_rank(&world, bad, lens[k]);
            let given = wrong_len(need, true).unwrap();
            let s = buffer(k, 0, rank, bad, lens[0], given);
            let mut d = buffer(k, 1, rank, bad, lens[1], given);
            let res = thakur::redistribute(
                &world,
                ThakurMethod::Lcm,
                Receive::Async,
                n,
                x,
                y,
                &s,
                &mut d,
            );
            expect_agreed(res, rank, bad, name, need, given, "thakur::redistribute");
            checked += 1;
        }
    }
    // Along an axis: from cyclic(2) rows to cyclic(3) rows.
    let rows_a = DistArray::parse_spec(&format!("grid={size},dist=*,cyclic(2)"), &shape).unwrap();
    let axis_plan = AxisMethod::new(&rows_a, &b, ThakurMethod::Lcm).unwrap();
    let lens = [rows_a.local_len(rank), b.local_len(rank)];
    for (k, name) in NAMES[..2].iter().enumerate() {
        let bad = size - 1;
        let need = from_rank(&world, bad, lens[k]);
        let given = wrong_len(need, true).unwrap();
        let s = buffer(k, 0, rank, bad, lens[0], given);
        let mut d = buffer(k, 1, rank, bad, lens[1], given);
        let res = thakur::redistribute_axis(&world, &axis_plan, Receive::Async, &s, &mut d);
        expect_agreed(
            res,
            rank,
            bad,
            name,
            need,
            given,
            "thakur::redistribute_axis",
        );
        checked += 1;
    }
    let src = dist_block(&rows_a, rank);
    let mut dst = vec![u64::MAX; b.local_len(rank)];
    thakur::redistribute_axis(&world, &axis_plan, Receive::Async, &src, &mut dst).unwrap();
    assert_eq!(dst, want, "rank {rank}: redistribute_axis after the errors");

    checked
}
