//! General redistribution (block-cyclic, different grids, row/column order, scatter/gather)
//! and Thakur's cyclic(x) → cyclic(y) methods under real MPI on 1..=8 ranks, for every
//! schedule, checked exactly with index-valued data on every rank.
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::cyclic::thakur::{self, Receive, ThakurMethod};
use redist::dist::{AxisDist, AxisMap, DistArray};
use redist::StageTimes;

const BODY: &str = "redistribution_body";

mpi_harness::launches!(BODY, 240;
    redistribution_np1 => 1, redistribution_np2 => 2, redistribution_np3 => 3,
          redistribution_np4 => 4, redistribution_np5 => 5, redistribution_np6 => 6,
          redistribution_np7 => 7, redistribution_np8 => 8);

/// Pairs of (shape, source spec, destination spec) for `p` ranks: grids of different shapes
/// and sizes, both orders, scatter from and gather to one rank, grids using only some ranks.
fn cases(p: usize) -> Vec<(Vec<usize>, String, String)> {
    let a = (1..=p)
        .filter(|&d| p.is_multiple_of(d) && d * d <= p)
        .max()
        .unwrap();
    let b = p / a;
    let sub = p.saturating_sub(1).max(1);
    let reversed: Vec<String> = (0..p).rev().map(|r| r.to_string()).collect();
    let reversed = reversed.join(":");
    vec![
        (
            // First processes, column-major padded storage, a grid on reversed ranks.
            vec![37, 23],
            format!(
                "grid={a}x{b},first={}x0,storage=col,lead=40,dist=cyclic(3),cyclic(2)",
                a - 1
            ),
            format!(
                "grid={b}x{a},ranks={reversed},first=0x{},dist=cyclic(5),cyclic(4)",
                a - 1
            ),
        ),
        (
            vec![37, 23],
            format!("grid={a}x{b},dist=cyclic(3),cyclic(2)"),
            format!("grid={b}x{a},order=col,dist=cyclic(5),block"),
        ),
        (
            vec![37, 23],
            format!("grid={p}x1,dist=balanced,cyclic(4)"),
            format!("grid=1x{p},dist=cyclic(7),cyclic"),
        ),
        (
            vec![37, 23],
            "grid=1x1,dist=block,block".into(),
            format!("grid={a}x{b},order=col,dist=cyclic(2),cyclic(3)"),
        ),
        (
            vec![37, 23],
            format!("grid={b}x{a},dist=cyclic(4),balanced"),
            "grid=1x1,dist=block,block".into(),
        ),
        (
            vec![37, 23],
            format!("grid={sub},dist=cyclic(3),*"),
            format!("grid={p},dist=*,cyclic(2)"),
        ),
        (
            vec![9, 7, 5],
            format!("grid={p},dist=cyclic(2),*,*"),
            format!("grid=1x{p},dist=*,block,cyclic"),
        ),
        (
            vec![1000],
            format!("grid={p},dist=cyclic(4)"),
            format!("grid={p},dist=cyclic(2)"),
        ),
        (
            vec![1000],
            format!("grid={p},dist=cyclic(11)"),
            format!("grid={sub},dist=cyclic(3)"),
        ),
    ]
}

fn index_block(a: &DistArray, rank: usize) -> Vec<u64> {
    let mut v = vec![u64::MAX; a.local_len(rank)];
    a.fill_index_valued(rank, &mut v, |g| g);
    v
}

/// The double-buffered shared schedule: whole calls in a row (the two receive buffers in
/// turn), calls in halves around the caller's barrier, and halves abandoned after packing.
fn double_buffered<C: Communicator>(world: &C, plan: &RedistPlan, src: &[u64], want: &[u64]) {
    let mut plain = Redistribution::new(world, plan, Schedule::Shared).unwrap();
    let mut dst = vec![3u64; plain.dst_len()];
    plain
        .execute(src, &mut dst, &mut [], &mut [], &mut StageTimes::default())
        .unwrap();
    // SAFETY: nothing is packed: the call is refused first.
    let refused = unsafe { plain.pack_shared(src) };
    assert_eq!(
        refused.unwrap_err(),
        redist::RedistError::NotSplitReady { elem_bytes: 8 }
    );
    let mut r = Redistribution::new(world, plan, Schedule::Shared)
        .unwrap()
        .with_double_buffering();
    assert!(!r.split_ready::<u64>());
    r.prepare_shared::<u64>().unwrap();
    assert!(
        r.split_ready::<u64>()
            && r.split_ready::<u8>()
            && !r.split_ready::<num_complex::Complex<f64>>()
    );
    // Each call reads the buffer the one before last wrote: stale data there would show.
    for (k, shift) in [0u64, 1 << 40, 0, 1 << 41, 0].into_iter().enumerate() {
        let input: Vec<u64> = src.iter().map(|&v| v ^ shift).collect();
        let mut dst = vec![k as u64; r.dst_len()];
        if k % 2 == 0 {
            r.execute(
                &input,
                &mut dst,
                &mut [],
                &mut [],
                &mut StageTimes::default(),
            )
            .unwrap();
        } else {
            // An abandoned half first: packed junk that the next call must overwrite.
            let junk: Vec<u64> = src.iter().map(|&v| !v).collect();
            // SAFETY: every rank packs, then synchronizes, then abandons, then packs again;
            // every rank unpacks the second pack only after the barrier that follows it.
            unsafe {
                r.pack_shared(&junk).unwrap();
                r.shared_fence().unwrap();
                world.barrier();
                r.pack_shared(&input).unwrap();
                r.shared_fence().unwrap();
                world.barrier();
                r.shared_fence().unwrap();
                r.unpack_shared(&input, &mut dst).unwrap();
            }
        }
        let expect: Vec<u64> = want
            .iter()
            .map(|&w| if w == u64::MAX { k as u64 } else { w ^ shift })
            .collect();
        assert_eq!(dst, expect, "double-buffered call {k}");
    }
}

#[test]
#[ignore = "MPI body: run by the redistribution_np* launchers under mpirun"]
fn redistribution_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());

    let mut checked = 0;
    for (shape, f, t) in cases(size) {
        let from = DistArray::parse_spec(&f, &shape).unwrap();
        let to = DistArray::parse_spec(&t, &shape).unwrap();
        for (src_d, dst_d) in [(&from, &to), (&to, &from)] {
            let plan = RedistPlan::new(src_d, dst_d, size).unwrap();
            let src = index_block(src_d, rank);
            let want = index_block(dst_d, rank);
            for schedule in Schedule::ALL {
                for packet in [redist::cyclic::run::DEFAULT_PACKET, 5] {
                    if packet != redist::cyclic::run::DEFAULT_PACKET
                        && schedule != Schedule::Pipelined
                    {
                        continue;
                    }
                    let mut r = Redistribution::new(&world, &plan, schedule)
                        .unwrap()
                        .with_packet_len(packet);
                    let mut dst = vec![u64::MAX; r.dst_len()];
                    let mut send = vec![u64::MAX; r.send_len()];
                    let mut recv = vec![u64::MAX; r.recv_len()];
                    let mut times = StageTimes::default();
                    r.execute(&src, &mut dst, &mut send, &mut recv, &mut times)
                        .unwrap();
                    assert_eq!(
                        dst,
                        want,
                        "{} -> {} {schedule} packet {packet}",
                        src_d.spec(),
                        dst_d.spec()
                    );
                    // Again with dirty buffers: no hidden state.
                    // (Padding of the local arrays keeps what it holds.)
                    dst.fill(7);
                    send.fill(9);
                    recv.fill(11);
                    r.execute(&src, &mut dst, &mut send, &mut recv, &mut times)
                        .unwrap();
                    let dirty: Vec<u64> = want
                        .iter()
                        .map(|&w| if w == u64::MAX { 7 } else { w })
                        .collect();
                    assert_eq!(dst, dirty);
                    if schedule == Schedule::Shared {
                        // One node under the harness: the window is used. A smaller element
                        // type reuses it, a larger one than the first call reallocates it.
                        assert!(r.uses_shared_memory());
                        assert_eq!(
                            (r.send_len(), r.recv_len()),
                            (0, 0),
                            "the window holds them"
                        );
                        let small: Vec<u8> = src.iter().map(|&v| v as u8).collect();
                        let mut out = vec![0u8; r.dst_len()];
                        let (mut s8, mut r8) = (vec![0u8; r.send_len()], vec![0u8; r.recv_len()]);
                        r.execute(&small, &mut out, &mut s8, &mut r8, &mut times)
                            .unwrap();
                        assert!(out
                            .iter()
                            .zip(&want)
                            .all(|(&a, &b)| b == u64::MAX || a == b as u8));
                        let mut r2 = Redistribution::new(&world, &plan, schedule).unwrap();
                        r2.execute(&small, &mut out, &mut s8, &mut r8, &mut times)
                            .unwrap();
                        r2.execute(&src, &mut dst, &mut send, &mut recv, &mut times)
                            .unwrap();
                        assert_eq!(dst, dirty);
                        double_buffered(&world, &plan, &src, &want);
                    }
                    checked += 1;
                }
            }
        }
    }

    // Sections (ScaLAPACK's submatrices) between general distributions: what lies outside
    // the destination section keeps its values.
    let (a, b) = (
        DistArray::parse_spec(
            &format!(
                "grid={size},first={},storage=col,dist=cyclic(4),*",
                size - 1
            ),
            &[37, 23],
        )
        .unwrap(),
        DistArray::parse_spec(
            &format!(
                "grid={size},ranks={},storage=col,lead=45,dist=*,cyclic(3)",
                (0..size)
                    .rev()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            ),
            &[41, 29],
        )
        .unwrap(),
    );
    for (fs, ts, extent) in [
        ([3, 2], [5, 1], [30, 20]),
        ([0, 0], [0, 0], [37, 23]),
        ([9, 4], [40, 28], [1, 1]),
        ([2, 2], [3, 3], [0, 5]),
    ] {
        let plan = RedistPlan::section(&a, &fs, &b, &ts, &extent, size).unwrap();
        let src = index_block(&a, rank);
        let old: Vec<u64> = index_block(&b, rank)
            .iter()
            .map(|x| x ^ (1 << 60))
            .collect();
        let mut want = old.clone();
        for i in 0..extent[0] {
            for j in 0..extent[1] {
                let (owner, off) = b.owner(&[ts[0] + i, ts[1] + j]);
                if owner == rank {
                    want[off] = ((fs[0] + i) * 23 + fs[1] + j) as u64;
                }
            }
        }
        for schedule in Schedule::ALL {
            let mut r = Redistribution::new(&world, &plan, schedule).unwrap();
            let mut dst = old.clone();
            let mut send = vec![u64::MAX; r.send_len()];
            let mut recv = vec![u64::MAX; r.recv_len()];
            r.execute(
                &src,
                &mut dst,
                &mut send,
                &mut recv,
                &mut StageTimes::default(),
            )
            .unwrap();
            assert_eq!(
                dst, want,
                "section {fs:?} -> {ts:?} of {extent:?} {schedule}"
            );
            checked += 1;
        }
    }

    // Messages in chunks (as MPI's int counts force above i32::MAX elements), with tiny
    // limits: every schedule, against the index-valued answer.
    for (shape, f, t) in cases(size).into_iter().take(3) {
        let from = DistArray::parse_spec(&f, &shape).unwrap();
        let to = DistArray::parse_spec(&t, &shape).unwrap();
        let plan = RedistPlan::new(&from, &to, size).unwrap();
        let src = index_block(&from, rank);
        let want = index_block(&to, rank);
        let biggest = (0..size)
            .map(|r| from.local_len(r).max(to.local_len(r)))
            .max()
            .unwrap();
        for max_count in [1usize, 7, 100] {
            for schedule in Schedule::ALL {
                let mut r = Redistribution::new(&world, &plan, schedule)
                    .unwrap()
                    .with_packet_len(60)
                    .with_max_count(max_count);
                assert_eq!(r.is_chunked(), size > 1 && biggest > max_count);
                assert!(r.packet_len() <= max_count);
                let mut dst = vec![u64::MAX; r.dst_len()];
                let mut send = vec![u64::MAX; r.send_len()];
                let mut recv = vec![u64::MAX; r.recv_len()];
                r.execute(
                    &src,
                    &mut dst,
                    &mut send,
                    &mut recv,
                    &mut StageTimes::default(),
                )
                .unwrap();
                assert_eq!(dst, want, "{f} -> {t} {schedule} max_count {max_count}");
                checked += 1;
            }
        }
    }

    // Thakur's methods, both receive modes, against the definition of cyclic(y).
    let n = 10_007;
    for (x, y) in [(4, 2), (2, 4), (15, 10), (11, 3)] {
        let from = AxisMap::new(AxisDist::BlockCyclic(x), n, size).unwrap();
        let to = AxisMap::new(AxisDist::BlockCyclic(y), n, size).unwrap();
        let src: Vec<u64> = (0..from.local_len(rank))
            .map(|l| from.global_index(rank, l) as u64)
            .collect();
        let want: Vec<u64> = (0..to.local_len(rank))
            .map(|l| to.global_index(rank, l) as u64)
            .collect();
        for method in ThakurMethod::ALL {
            if !method.applies(x, y) {
                continue;
            }
            for receive in [Receive::Sync, Receive::Async] {
                let mut dst = vec![u64::MAX; want.len()];
                thakur::redistribute(&world, method, receive, n, x, y, &src, &mut dst).unwrap();
                assert_eq!(dst, want, "{method} {receive:?} cyclic({x})->cyclic({y})");
                checked += 1;
            }
        }
    }
    // Thakur's methods per axis: one axis of a 2-D or 3-D array changes, the others stay;
    // equal to the general planner's result (and to the index-valued answer).
    let a = (1..=size)
        .filter(|&d| size.is_multiple_of(d) && d * d <= size)
        .max()
        .unwrap();
    let (b, sub) = (size / a, size.saturating_sub(1).max(1));
    let axis_cases: Vec<(Vec<usize>, String, String)> = vec![
        (
            vec![37, 23],
            format!("grid={a}x{b},dist=cyclic(4),cyclic(3)"),
            format!("grid={a}x{b},dist=cyclic(2),cyclic(3)"),
        ),
        (
            vec![37, 23],
            format!("grid={b}x{a},order=col,dist=block,cyclic(15)"),
            format!("grid={b}x{a},order=col,dist=block,cyclic(10)"),
        ),
        (
            vec![9, 7, 50],
            format!("grid={size},dist=*,*,cyclic(11)"),
            format!("grid={size},dist=*,*,cyclic(3)"),
        ),
        (
            vec![40, 6, 5],
            format!("grid={size}x1,dist=cyclic(2),*,cyclic"),
            format!("grid={size}x1,dist=cyclic(4),*,cyclic"),
        ),
        (
            vec![37, 23],
            format!("grid={sub},dist=cyclic(3),*"),
            format!("grid={sub},dist=cyclic,*"),
        ),
    ];
    let mut per_axis = 0;
    for (shape, f, t) in axis_cases {
        let from = DistArray::parse_spec(&f, &shape).unwrap();
        let to = DistArray::parse_spec(&t, &shape).unwrap();
        let src = index_block(&from, rank);
        let mut general = Redistribution::new(
            &world,
            &RedistPlan::new(&from, &to, size).unwrap(),
            Schedule::Alltoallv,
        )
        .unwrap();
        let mut want = vec![u64::MAX; general.dst_len()];
        let (mut send, mut recv) = (vec![0; general.send_len()], vec![0; general.recv_len()]);
        general
            .execute(
                &src,
                &mut want,
                &mut send,
                &mut recv,
                &mut StageTimes::default(),
            )
            .unwrap();
        assert_eq!(want, index_block(&to, rank));
        for method in ThakurMethod::ALL {
            let Ok(plan) = thakur::AxisMethod::new(&from, &to, method) else {
                continue;
            };
            for receive in [Receive::Sync, Receive::Async] {
                let mut dst = vec![u64::MAX; want.len()];
                thakur::redistribute_axis(&world, &plan, receive, &src, &mut dst).unwrap();
                assert_eq!(dst, want, "{method} {receive:?} per axis: {f} -> {t}");
                per_axis += 1;
            }
        }
    }

    // Per case: gcd, lcm and general always apply, and one of KY_TO_Y / X_TO_KX except for
    // 15 -> 10 and 11 -> 3; both receive modes.
    assert_eq!(per_axis, 2 * (4 + 3 + 3 + 4 + 4));
    assert!(checked > 0);
    mpi.pass();
}
