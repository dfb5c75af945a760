//! The cost of a halo exchange against its floor, measured in the same run: one copy of the
//! halo's bytes plus the latency of the two synchronizations an exchange between shared
//! arrays needs (two barriers). The copy is measured two ways: a `memcpy` of as many
//! contiguous bytes (`copy_s`, which rows along the contiguous axis cannot reach: their halo
//! cells are one or two per row, a cache line each), and the halo cells themselves copied once
//! where they lie, from one private extended array into another (`copy_in_place_s`, written
//! out here for 3-D C-order blocks).
//!
//! Under `mpirun -n P`: a real field of `--shape` (default 256,256,256) in a real-to-complex
//! plan's input layout, a periodic halo of `--width` cells (default 1) on every axis; the
//! exchange between arrays the halo plan allocated (one shared-memory window on one node: each
//! halo cell copied once, straight from the neighbour) and between private arrays (packed,
//! one `MPI_Alltoallv`, unpacked), and on a caller's vector of the extended block
//! (`exchange_slice`, the in-place form C and Python use: messages; `slice_s` on a plain
//! vector, `slice_huge_s` on a `HaloArray`'s memory with transparent huge pages, each against
//! the halo-cell copy on the same kind of memory: `copy_plain_s`, `copy_in_place_s`).
//! Minimum over `--reps` (default 20) after one warm-up, max over ranks; one JSON line from
//! rank 0 with the ratios.

use fft_core::halo::{Boundary, HaloArray, HaloPlan};
use fft_core::ndarray::{ArrayViewD, IxDyn};
use fft_core::{FftOptions, GridChoice, RealFftPlan};
use mpi::collective::SystemOperation;
use mpi::traits::*;
use std::time::Instant;

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// The minimum over `reps` calls of `f` (after one untimed), each started after a barrier,
/// then the largest over the ranks.
fn min_time<C: Communicator>(comm: &C, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        comm.barrier();
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let mut most = 0.0;
    comm.all_reduce_into(&best, &mut most, SystemOperation::max());
    most
}

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    fft_core::abort_on_panic();
    let world = universe.world();
    let shape: Vec<usize> = arg("--shape", "256,256,256")
        .split(',')
        .map(|s| s.parse().expect("a shape such as 256,256,256"))
        .collect();
    let width: usize = arg("--width", "1").parse().expect("a width");
    let reps: usize = arg("--reps", "20").parse().expect("a repetition count");
    let opts = FftOptions::default().grid(GridChoice::Rank(1));
    let plan = RealFftPlan::<f64>::new(&world, &shape, opts).expect("a plan");
    let widths = vec![width; shape.len()];
    let mut halo = HaloPlan::for_input(&plan, &widths, Boundary::Periodic).expect("a halo plan");
    let mut shared = halo.alloc().expect("a halo array");
    let mut private = HaloArray::private(&halo);
    for array in [&mut shared, &mut private] {
        array.interior_mut().fill(1.0);
    }
    let shared_s = min_time(&world, reps, || halo.exchange(&mut shared).unwrap());
    let messages_s = min_time(&world, reps, || halo.exchange(&mut private).unwrap());
    // The in-place form on the caller's memory (as numpy's or C's extended arrays).
    let mut caller = private.as_slice().to_vec();
    let slice_s = min_time(&world, reps, || halo.exchange_slice(&mut caller).unwrap());
    // The same on memory with transparent huge pages (as `HaloArray`s have): the strided
    // halo cells cost a TLB miss per 4 KiB page otherwise.
    let slice_huge_s = min_time(&world, reps, || {
        halo.exchange_slice(private.as_mut_slice()).unwrap()
    });
    // What a new extended array costs (Python's exchange_halo, C's in != out): the block
    // copied into the interior, the exchange, the extended block copied out.
    let rank = world.rank() as usize;
    let local_shape = plan.input_layout().local_shape(rank);
    let block_values = vec![1.0f64; plan.input_layout().local_len(rank)];
    let mut copy_out = vec![0.0f64; caller.len()];
    let new_array_s = min_time(&world, reps, || {
        let block = ArrayViewD::from_shape(IxDyn(&local_shape), &block_values).unwrap();
        private.interior_mut().assign(&block);
        halo.exchange(&mut private).unwrap();
        copy_out.copy_from_slice(private.as_slice());
    });
    // The floor: one copy of this rank's halo bytes, and two barriers.
    let block: usize = plan.input_layout().local_len(rank);
    let halo_len = shared.as_slice().len() - block;
    let from = vec![1.0f64; halo_len];
    let mut to = vec![0.0f64; halo_len];
    let copy_s = min_time(&world, reps, || {
        to.copy_from_slice(&from);
        std::hint::black_box(&mut to);
    });
    let mut a = HaloArray::private(&halo);
    let mut b = HaloArray::private(&halo);
    a.as_mut_slice().fill(2.0);
    let e = a.extended_shape().to_vec();
    let copy_in_place_s = min_time(&world, reps, || {
        copy_halo_cells(a.as_slice(), b.as_mut_slice(), &e, &widths)
    });
    // The floor on the caller's kind of memory (4 KiB pages), the peer of `slice_s`.
    let (plain_a, mut plain_b) = (a.as_slice().to_vec(), b.as_slice().to_vec());
    let copy_plain_s = min_time(&world, reps, || {
        copy_halo_cells(&plain_a, &mut plain_b, &e, &widths)
    });
    let barrier_s = min_time(&world, reps, || {
        world.barrier();
        world.barrier();
    });
    let (received, sent) = halo.message_elements();
    let mut most_halo = 0u64;
    world.all_reduce_into(&(halo_len as u64), &mut most_halo, SystemOperation::max());
    if rank == 0 {
        let floor = copy_s + barrier_s;
        let floor_in_place = copy_in_place_s + barrier_s;
        println!(
            "{{\"ranks\": {}, \"shape\": {:?}, \"width\": {width}, \"shared\": {}, \"halo_bytes\": {}, \"from_peers_bytes\": {}, \"to_peers_bytes\": {}, \"shared_s\": {shared_s:.3e}, \"messages_s\": {messages_s:.3e}, \"slice_s\": {slice_s:.3e}, \"slice_huge_s\": {slice_huge_s:.3e}, \"new_array_s\": {new_array_s:.3e}, \"copy_s\": {copy_s:.3e}, \"copy_in_place_s\": {copy_in_place_s:.3e}, \"copy_plain_s\": {copy_plain_s:.3e}, \"barriers_s\": {barrier_s:.3e}, \"shared_over_floor\": {:.2}, \"messages_over_floor\": {:.2}, \"shared_over_in_place_floor\": {:.2}, \"messages_over_in_place_floor\": {:.2}, \"slice_over_in_place_floor\": {:.2}, \"slice_huge_over_in_place_floor\": {:.2}, \"slice_over_plain_floor\": {:.2}}}",
            world.size(),
            shape,
            shared.is_shared(),
            most_halo * 8,
            received * 8,
            sent * 8,
            shared_s / floor,
            messages_s / floor,
            shared_s / floor_in_place,
            messages_s / floor_in_place,
            slice_s / floor_in_place,
            slice_huge_s / floor_in_place,
            slice_s / (copy_plain_s + barrier_s),
        );
    }
}

/// Copies the halo cells of `src` into `dst` (extended blocks of shape `e`) where they lie
/// (3-D, C order): for each axis, the two slabs of width `w` (the earlier axes cut to the
/// interior, the later ones whole), which together are the halo, each row a
/// `copy_from_slice` of its run along the last axis.
fn copy_halo_cells(src: &[f64], dst: &mut [f64], e: &[usize], widths: &[usize]) {
    assert_eq!(e.len(), 3, "the floor is written for 3-D blocks");
    let at = |i: usize, j: usize| (i * e[1] + j) * e[2];
    let inner = |a: usize| widths[a]..e[a] - widths[a];
    let sides = |a: usize| [0..widths[a], e[a] - widths[a]..e[a]];
    // Axis 0 slabs: whole rows.
    for r in sides(0) {
        for i in r {
            let rows = at(i, 0)..at(i + 1, 0);
            dst[rows.clone()].copy_from_slice(&src[rows]);
        }
    }
    // Axis 1 slabs: rows of the interior planes.
    for i in inner(0) {
        for r in sides(1) {
            for j in r {
                let row = at(i, j)..at(i, j) + e[2];
                dst[row.clone()].copy_from_slice(&src[row]);
            }
        }
    }
    // Axis 2 slabs: both ends of every interior row.
    for i in inner(0) {
        for j in inner(1) {
            for r in sides(2) {
                let cells = at(i, j) + r.start..at(i, j) + r.end;
                dst[cells.clone()].copy_from_slice(&src[cells]);
            }
        }
    }
}
