//! Pack and unpack kernels of a general redistribution in one process, no MPI: for one rank of
//! a plan, the whole-message copies message by message (`by-message`) against one pass over
//! the local array in memory order (`row-order`, what the alltoallv schedule uses). Minimum
//! over `--reps` of each; useful on a loaded machine, where MPI timings are noise.
//!
//! Usage: `bench_redist_copy [--case 3] [--rank 0] [--reps 30]` (cases as in
//! scripts/bench-redist-scalapack: 1, 2, 3).

use redist::cyclic::plan::RedistPlan;
use redist::dist::DistArray;
use std::time::Instant;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a positive integer"))
        .unwrap_or(default)
}

fn min_time(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let (case, rank, reps) = (arg("--case", 3), arg("--rank", 0), arg("--reps", 30));
    let (shape, ranks, from, to) = match case {
        1 => (
            8192,
            2,
            "grid=2x1,dist=cyclic(36)",
            "grid=1x2,dist=cyclic(128)",
        ),
        2 => (
            8192,
            2,
            "grid=1x2,dist=cyclic(64)",
            "grid=2x1,dist=cyclic(64)",
        ),
        _ => (
            4096,
            4,
            "grid=2x2,dist=cyclic(11)",
            "grid=4x1,dist=cyclic(3)",
        ),
    };
    let shape = [shape, shape];
    let from = DistArray::parse_spec(from, &shape).unwrap();
    let to = DistArray::parse_spec(to, &shape).unwrap();
    let plan = RedistPlan::new(&from, &to, ranks).unwrap();
    let part = plan.for_rank(rank);
    let mut src = vec![0.0f64; part.src_len];
    from.fill_index_valued(rank, &mut src, |g| g as f64);
    let mut dst = vec![0.0f64; part.dst_len];
    let mut send = vec![0.0f64; part.send_len];
    let recv = vec![1.0f64; part.recv_len];
    let by_message_pack = min_time(reps, || {
        for t in &part.sends {
            let n = t.map.len();
            t.map
                .pack_range(0..n, &src, &mut send[t.offset..t.offset + n]);
        }
    });
    let row_pack = min_time(reps, || part.pack_all(&src, &mut send));
    let by_message_unpack = min_time(reps, || {
        part.copy_own(&src, &mut dst);
        for t in &part.recvs {
            let n = t.map.len();
            t.map
                .unpack_range(0..n, &recv[t.offset..t.offset + n], &mut dst);
        }
    });
    let row_unpack = min_time(reps, || part.unpack_all_and_own(&src, &recv, &mut dst));
    // The floor: one contiguous copy of the destination array.
    let mut flat = vec![0.0f64; part.dst_len];
    let memcpy = min_time(reps, || {
        flat.copy_from_slice(&src[..part.dst_len.min(src.len())])
    });
    let runs: Vec<usize> = part.recvs.iter().map(|t| t.map.runs_per_row()).collect();
    println!(
        "{{\"case\":{case},\"rank\":{rank},\"src_mib\":{:.1},\"dst_mib\":{:.1},\"recv_runs_per_row\":{runs:?},\
\"pack_by_message_ms\":{:.3},\"pack_row_order_ms\":{:.3},\"unpack_by_message_ms\":{:.3},\"unpack_row_order_ms\":{:.3},\"memcpy_dst_ms\":{:.3}}}",
        part.src_len as f64 * 8.0 / 1048576.0,
        part.dst_len as f64 * 8.0 / 1048576.0,
        by_message_pack * 1e3,
        row_pack * 1e3,
        by_message_unpack * 1e3,
        row_unpack * 1e3,
        memcpy * 1e3
    );
    std::hint::black_box((&dst, &send));
}
