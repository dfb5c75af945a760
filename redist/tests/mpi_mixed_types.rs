//! One double-buffered shared-memory redistribution called with a different element type
//! from one call to the next (a plan kept for doubles reused for floats, as the ScaLAPACK
//! drop-in does: its plans are keyed by descriptors, not types). Each call writes the receive
//! slot the one before last read, and no rank waits for the others before writing it: the
//! slots of different element sizes must not overlap, or a fast rank's next call overwrites
//! what a slow rank is still unpacking. Checked exactly, call by call, with values that
//! change every call.
use mpi::topology::Communicator;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::dist::DistArray;
use redist::StageTimes;

const BODY: &str = "mixed_types_body";

mpi_harness::launches!(BODY, 120; mixed_types_np2 => 2, mixed_types_np4 => 4,
    mixed_types_np8 => 8);

/// Calls in all; the types go 8, 4, 8, 1, 8, 4, ... bytes.
const CALLS: usize = 120;

/// Runs call `k` with elements of `T` (values `index ^ k`, cut to `T`) and checks it.
fn call<T: redist::Element + TryFrom<u64> + PartialEq + std::fmt::Debug>(
    r: &mut Redistribution,
    src: &[u64],
    want: &[u64],
    k: usize,
) {
    let cut = |v: u64| T::try_from(v & 0x7f).ok().expect("fits");
    let input: Vec<T> = src.iter().map(|&v| cut(v ^ k as u64)).collect();
    let mut dst = vec![cut(0x7f); r.dst_len()];
    r.execute(
        &input,
        &mut dst,
        &mut [],
        &mut [],
        &mut StageTimes::default(),
    )
    .unwrap();
    for (i, (&got, &w)) in dst.iter().zip(want).enumerate() {
        let expect = if w == u64::MAX { 0x7f } else { w ^ k as u64 };
        assert_eq!(
            got,
            cut(expect),
            "call {k} ({} bytes), element {i}",
            std::mem::size_of::<T>()
        );
    }
}

/// Values of call `k`: `index ^ k`, cut to 7 bits so that every type holds them.
fn values<T: TryFrom<u64>>(v: &[u64], k: usize) -> Vec<T> {
    v.iter()
        .map(|&x| T::try_from((x ^ k as u64) & 0x7f).ok().expect("fits"))
        .collect()
}

/// `want`'s values of call `k` where a destination element exists, `fill` in the padding.
fn expected<T: TryFrom<u64>>(want: &[u64], k: usize, fill: u64) -> Vec<T> {
    want.iter()
        .map(|&w| {
            let v = if w == u64::MAX {
                fill
            } else {
                (w ^ k as u64) & 0x7f
            };
            T::try_from(v).ok().expect("fits")
        })
        .collect()
}

/// The drop-in's order, made deterministic with the split halves: call 0 (8-byte elements)
/// is packed and synchronized everywhere, but rank `slow` unpacks it only after every other
/// rank has unpacked it and packed call 1 (4-byte elements), which the protocol allows (no
/// rank packs while another still unpacks the call before the previous one).
fn slow_unpacker<C: mpi::traits::CommunicatorCollectives>(
    world: &C,
    r: &mut Redistribution,
    rank: usize,
    slow: usize,
    (src, want): (&[u64], &[u64]),
) {
    let (in0, in1) = (values::<u64>(src, 0), values::<u32>(src, 1));
    let mut out0 = vec![0x7fu64; r.dst_len()];
    let mut out1 = vec![0x7fu32; r.dst_len()];
    // SAFETY: every rank packs call 0, fences, synchronizes and fences before unpacking it;
    // each packs call 1 only after unpacking call 0 itself, and every rank unpacks call 1
    // only after the barrier that follows everyone's pack of it.
    unsafe {
        r.pack_shared(&in0).unwrap();
        r.shared_fence().unwrap();
        world.barrier();
        r.shared_fence().unwrap();
        if rank != slow {
            r.unpack_shared(&in0, &mut out0).unwrap();
            r.pack_shared(&in1).unwrap();
            r.shared_fence().unwrap();
        }
        world.barrier();
        if rank == slow {
            r.shared_fence().unwrap();
            r.unpack_shared(&in0, &mut out0).unwrap();
            r.pack_shared(&in1).unwrap();
            r.shared_fence().unwrap();
        }
        world.barrier();
        r.shared_fence().unwrap();
        r.unpack_shared(&in1, &mut out1).unwrap();
    }
    same(&out0, &expected::<u64>(want, 0, 0x7f), rank, slow, 0);
    same(&out1, &expected::<u32>(want, 1, 0x7f), rank, slow, 1);
}

/// Panics with the first differing element and the count of differing ones.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], rank: usize, slow: usize, k: usize) {
    let wrong: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = wrong.first() {
        panic!(
            "rank {rank} (slow rank {slow}): call {k}: {} of {} elements wrong, first {i}: {:?} \
             instead of {:?}",
            wrong.len(),
            got.len(),
            got[i],
            want[i]
        );
    }
}

#[test]
#[ignore = "MPI body: run by the mixed_types_np* launchers under mpirun"]
fn mixed_types_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let checked = {
        let world = mpi.world();
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        let shape = [96, 80];
        let a = DistArray::parse_spec(&format!("grid={size},dist=cyclic(2),*"), &shape).unwrap();
        let b = DistArray::parse_spec(&format!("grid={size},dist=*,cyclic(3)"), &shape).unwrap();
        let plan = RedistPlan::new(&a, &b, size).unwrap();
        let index = |d: &DistArray| {
            let mut v = vec![u64::MAX; d.local_len(rank)];
            d.fill_index_valued(rank, &mut v, |g| g);
            v
        };
        let (src, want) = (index(&a), index(&b));
        let mut r = Redistribution::new(&world, &plan, Schedule::Shared)
            .unwrap()
            .with_double_buffering();
        assert!(r.uses_shared_memory(), "one node under the harness");
        r.prepare_shared::<u64>().unwrap();
        for slow in [0, size - 1] {
            slow_unpacker(&world, &mut r, rank, slow, (&src, &want));
        }
        for k in 0..CALLS {
            match k % 4 {
                1 => call::<u32>(&mut r, &src, &want, k),
                3 => call::<u8>(&mut r, &src, &want, k),
                _ => call::<u64>(&mut r, &src, &want, k),
            }
        }
        CALLS
    };
    println!("rank {}: {checked} calls checked", mpi.rank());
    mpi.pass();
}
