//! FFTW's distributions on hand-checked cases (the suite also compares every `local_size`
//! function with the real FFTW-MPI's, `tests/local_size.rs`).

use super::*;

fn blocks(dist: &Dist, side: Side, procs: usize, dim: usize) -> Vec<(usize, usize)> {
    (0..procs)
        .map(|pe| {
            let b = dist.local(side, pe);
            (b.n[dim], b.start[dim])
        })
        .collect()
}

#[test]
fn default_blocks_leave_trailing_processes_idle() {
    let dist = resolve(&md_requests(&[10, 6], None, None, false, false), 4);
    assert_eq!(dist.dims[0].block, [3, 3]);
    assert_eq!(
        blocks(&dist, Side::In, 4, 0),
        vec![(3, 0), (3, 3), (3, 6), (1, 9)]
    );
    // n0 = 3 on 4 processes: blocks of 1, process 3 idle with zero start in every dimension.
    let dist = resolve(&md_requests(&[3, 6], None, None, false, false), 4);
    assert_eq!(
        dist.local(Side::In, 3),
        Block {
            n: vec![0, 0],
            start: vec![0, 0]
        }
    );
    assert_eq!(
        dist.local(Side::In, 2),
        Block {
            n: vec![1, 6],
            start: vec![2, 0]
        }
    );
}

#[test]
fn transposed_output_splits_the_second_dimension() {
    let dist = resolve(&md_requests(&[10, 7, 3], None, None, false, true), 3);
    assert_eq!(dist.dims[0].block, [4, 10]);
    assert_eq!(dist.dims[1].block, [7, 3]);
    assert_eq!(blocks(&dist, Side::Out, 3, 1), vec![(3, 0), (3, 3), (1, 6)]);
    assert_eq!(dist.block1d_dim(Side::Out), Some(1));
}

#[test]
fn user_blocks_are_honoured() {
    let dist = resolve(&md_requests(&[10, 6], Some(2), Some(5), false, false), 5);
    assert_eq!(dist.dims[0].block, [2, 5]);
    assert_eq!(dist.blocks(Side::In), 5);
    assert_eq!(dist.blocks(Side::Out), 2);
}

#[test]
fn one_process_owns_everything() {
    let size = local_size(
        &md_requests(&[5, 4], None, None, false, true),
        2,
        1,
        0,
        0,
        0,
    );
    assert_eq!(
        size.input,
        Block {
            n: vec![5, 4],
            start: vec![0, 0]
        }
    );
    assert_eq!(size.output, size.input);
    assert_eq!(size.alloc, 40);
}

#[test]
fn allocation_covers_the_intermediate_transpose() {
    // 2 × 9 on 2 processes: input rows 1 and 1 (18 / 2 = 9 each), but the transposed
    // intermediate 2 × 5 needs 10 on process 0.
    let size = local_size(
        &md_requests(&[2, 9], None, None, false, false),
        1,
        2,
        0,
        0,
        0,
    );
    assert_eq!(size.input.len(), 9);
    assert_eq!(size.alloc, 10);
}

#[test]
fn radix_of_1d_sizes() {
    // P divides n and n/P ≥ P: r = n/P.
    assert_eq!(radix(16, 2, FORWARD).map(|r| (r.r, r.m)), Some((8, 2)));
    // Otherwise the first divisor from the square root up; backward swaps r and m.
    assert_eq!(radix(30, 4, FORWARD).map(|r| (r.r, r.m)), Some((5, 6)));
    assert_eq!(radix(30, 4, -FORWARD).map(|r| (r.r, r.m)), Some((6, 5)));
    // Primes and one process: no factorization.
    assert_eq!(radix(13, 2, FORWARD), None);
    assert_eq!(radix(12, 1, FORWARD), None);
}

#[test]
fn prime_1d_sizes_stay_on_process_0() {
    let (dist, _) = dist_1d(13, 1, 3, 0, FORWARD, 0);
    assert_eq!(dist.dims[0].block, [13, 13]);
    assert_eq!(dist.local(Side::In, 1).n, vec![0]);
}

#[test]
fn block_arithmetic() {
    assert_eq!(default_block(10, 4), 3);
    assert_eq!(num_blocks(10, 3), 4);
    assert_eq!(
        (0..5).map(|i| block_len(10, 3, i)).collect::<Vec<_>>(),
        vec![3, 3, 3, 1, 0]
    );
}
