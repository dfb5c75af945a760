//! Thakur, Choudhary and Ramanujam's cyclic(x) → cyclic(y) comparisons (Thakur et al., Figs. 3, 6,
//! 9, 10) on this machine: run under `mpirun -n P` (scripts/bench-thakur sweeps P = 1..8).
//!
//! For cyclic(4)→cyclic(2), cyclic(2)→cyclic(4), cyclic(15)→cyclic(10) and
//! cyclic(11)→cyclic(3) of `--n` 32-bit integers (default 1M, as in the paper) it times every
//! applicable method of `redist::cyclic::thakur` with synchronous and asynchronous receive (each call
//! computes its communication sets, as the paper's timings do), and dfft's general planner
//! (`RedistPlan` + `Redistribution`, async schedule) both planning each call (`planner`) and
//! with the plan made once (`planner-reuse`); then the same per axis on a 2-D array of about
//! `--n` items (`redist::cyclic::thakur::redistribute_axis`, one distributed axis changing, the other
//! local). Each time is the max over ranks of one call; the
//! minimum over `--iters` calls is printed, one JSON line per measurement on rank 0. Every
//! result is checked exactly.
//!
//! Usage: `mpirun -n P bench_thakur [--n 1048576] [--iters 10]`.

use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::cyclic::thakur::{self, Receive, ThakurMethod};
use redist::dist::{AxisDist, AxisMap, DistArray};
use redist::StageTimes;
use std::time::Instant;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a positive integer"))
        .unwrap_or(default)
}

/// Times `iters` calls of `call` after one untimed warm-up call: before each, `dst` is reset
/// and the ranks meet at a barrier; after it, `dst` must equal `want`. Each time is the max
/// over ranks of one call; returns them sorted.
fn timed_calls(
    world: &SimpleCommunicator,
    iters: usize,
    dst: &mut [i32],
    want: &[i32],
    what: &str,
    mut call: impl FnMut(&mut [i32]),
) -> Vec<f64> {
    let mut times = Vec::with_capacity(iters);
    for it in 0..=iters {
        dst.fill(-1);
        world.barrier();
        let t = Instant::now();
        call(dst);
        let mut s = 0.0;
        world.all_reduce_into(&t.elapsed().as_secs_f64(), &mut s, SystemOperation::max());
        assert_eq!(dst, want, "{what}");
        if it > 0 {
            times.push(s);
        }
    }
    times.sort_by(f64::total_cmp);
    times
}

/// [`timed_calls`] of dfft's general planner from `from` to `to` with the plan and its
/// `Redistribution` (async schedule) made once, outside the timing.
#[allow(clippy::too_many_arguments)]
fn planner_reuse(
    world: &SimpleCommunicator,
    iters: usize,
    from: &DistArray,
    to: &DistArray,
    src: &[i32],
    dst: &mut [i32],
    want: &[i32],
    what: &str,
) -> Vec<f64> {
    let plan = RedistPlan::new(from, to, world.size() as usize).unwrap();
    let mut r = Redistribution::new(world, &plan, Schedule::Async).unwrap();
    let (mut send, mut recv) = (vec![0; r.send_len()], vec![0; r.recv_len()]);
    timed_calls(world, iters, dst, want, what, |dst| {
        r.execute(src, dst, &mut send, &mut recv, &mut StageTimes::default())
            .unwrap()
    })
}

fn main() {
    let n = arg("--n", 1 << 20);
    let iters = arg("--iters", 10).max(1);
    let universe = mpi::initialize().expect("MPI initializes");
    redist::comm::abort_on_panic();
    let world = universe.world();
    let (p, me) = (world.size() as usize, world.rank() as usize);
    let report = |case: &str, method: &str, receive: Receive, times: &[f64]| {
        if me == 0 {
            println!(
                "{{\"case\":\"{case}\",\"ranks\":{p},\"n\":{n},\"method\":\"{method}\",\"receive\":\"{receive}\",\"min_s\":{:.9},\"median_s\":{:.9}}}",
                times[0],
                times[times.len() / 2]
            );
        }
    };
    for (x, y) in [(4, 2), (2, 4), (15, 10), (11, 3)] {
        let case = format!("cyclic({x})->cyclic({y})");
        let from = AxisMap::new(AxisDist::BlockCyclic(x), n, p).unwrap();
        let to = AxisMap::new(AxisDist::BlockCyclic(y), n, p).unwrap();
        let src: Vec<i32> = (0..from.local_len(me))
            .map(|l| from.global_index(me, l) as i32)
            .collect();
        let want: Vec<i32> = (0..to.local_len(me))
            .map(|l| to.global_index(me, l) as i32)
            .collect();
        let mut dst = vec![0i32; want.len()];
        for method in ThakurMethod::ALL {
            if !method.applies(x, y) {
                continue;
            }
            for receive in [Receive::Sync, Receive::Async] {
                let what = format!("{case} {method} {receive}");
                let times = timed_calls(&world, iters, &mut dst, &want, &what, |dst| {
                    thakur::redistribute(&world, method, receive, n, x, y, &src, dst).unwrap()
                });
                report(&case, method.name(), receive, &times);
            }
        }
        // dfft's general planner: per call (plan + execute) and with the plan reused.
        let spec = |b: usize| DistArray::parse_spec(&format!("grid={p},dist=cyclic({b})"), &[n]);
        let (fa, ta) = (spec(x).unwrap(), spec(y).unwrap());
        let (mut send, mut recv) = (Vec::new(), Vec::new());
        let what = format!("{case} planner");
        let per_call = timed_calls(&world, iters, &mut dst, &want, &what, |dst| {
            let plan = RedistPlan::new(&fa, &ta, p).unwrap();
            let mut r = Redistribution::new(&world, &plan, Schedule::Async).unwrap();
            send.resize(r.send_len(), 0);
            recv.resize(r.recv_len(), 0);
            r.execute(&src, dst, &mut send, &mut recv, &mut StageTimes::default())
                .unwrap();
        });
        report(&case, "planner", Receive::Async, &per_call);
        let reuse = planner_reuse(&world, iters, &fa, &ta, &src, &mut dst, &want, &case);
        report(&case, "planner-reuse", Receive::Async, &reuse);
    }

    // Per axis: a 2-D array of about `n` items whose one distributed axis changes from
    // cyclic(x) to cyclic(y) (the other axis local): Thakur's general methods along it,
    // asynchronous receive, against the general planner with its plan reused.
    let side = (n as f64).sqrt() as usize;
    for (axis, x, y) in [(0usize, 15usize, 10usize), (1, 11, 3)] {
        let case = format!("2-D axis {axis} c({x})->c({y})");
        let spec = |b: usize| {
            let dist = if axis == 0 {
                format!("cyclic({b}),*")
            } else {
                format!("*,cyclic({b})")
            };
            DistArray::parse_spec(&format!("grid={p},dist={dist}"), &[side, side]).unwrap()
        };
        let (fa, ta) = (spec(x), spec(y));
        let mut src = vec![0i32; fa.local_len(me)];
        fa.fill_index_valued(me, &mut src, |g| g as i32);
        let mut want = vec![0i32; ta.local_len(me)];
        ta.fill_index_valued(me, &mut want, |g| g as i32);
        let mut dst = vec![0i32; want.len()];
        for method in [ThakurMethod::Gcd, ThakurMethod::Lcm, ThakurMethod::General] {
            let plan = thakur::AxisMethod::new(&fa, &ta, method).unwrap();
            let what = format!("{case} {method}");
            let times = timed_calls(&world, iters, &mut dst, &want, &what, |dst| {
                thakur::redistribute_axis(&world, &plan, Receive::Async, &src, dst).unwrap()
            });
            report(&case, method.name(), Receive::Async, &times);
        }
        let reuse = planner_reuse(&world, iters, &fa, &ta, &src, &mut dst, &want, &case);
        report(&case, "planner-reuse", Receive::Async, &reuse);
    }
}
