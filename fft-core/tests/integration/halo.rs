//! Halo exchange ([`HaloPlan`]) under real MPI on 1..=8 ranks: the input and (transposed)
//! output layouts of plans on every grid rank, uneven shapes (ranks that own nothing on 8),
//! widths of 0, 1, a few, and larger than a neighbour's block and than the axis, periodic and
//! filled boundaries, complex f64, f64 and f32 elements, a batch of two fields: every rank's
//! extended block equals `numpy.pad(x, w, mode="wrap")` (or `"constant"`) sliced to it,
//! exactly (index-valued data), through the shared window, through messages, and with some
//! ranks' arrays private; a second exchange with a dirty halo gives the same bits; errors
//! name the offending values.
//!
//! Each `#[test] halo_np{P}` re-launches this binary under `mpirun -n P` running
//! `halo_body`; rank 0 prints `halo cases: <count>`.

use crate::common::*;
use fft_core::halo::{Boundary, HaloArray, HaloPlan};
use fft_core::{Complex, FftError, FftOptions, FftPlan, GridChoice, PencilArray, RealFftPlan};
use mpi::topology::Communicator;
use redist::{Element, Layout};

const BODY: &str = "halo::halo_body";

mpi_harness::launches!(BODY, 300;
    halo_np1 => 1, halo_np2 => 2, halo_np3 => 3, halo_np4 => 4,
    halo_np5 => 5, halo_np6 => 6, halo_np7 => 7, halo_np8 => 8);

/// Elements made from a global linear index (exact in every type for these sizes).
trait Indexed: Element + PartialEq + std::fmt::Debug {
    fn of(index: i64) -> Self;
}

impl Indexed for Complex<f64> {
    fn of(index: i64) -> Self {
        Complex::new(index as f64, -(index as f64) / 2.0)
    }
}

impl Indexed for f64 {
    fn of(index: i64) -> Self {
        index as f64
    }
}

impl Indexed for f32 {
    fn of(index: i64) -> Self {
        index as f32
    }
}

/// `numpy.pad(x, widths, mode)` of the index-valued array (field `f` offset by a million),
/// sliced to rank `rank`'s block widened by the widths: the extended block in logical C
/// order, written out element by element.
fn padded_block<S: Indexed>(
    layout: &Layout,
    rank: usize,
    widths: &[usize],
    fill: Option<S>,
    field: usize,
) -> Vec<S> {
    let shape = layout.global_shape();
    let d = shape.len();
    let ranges = layout.global_ranges(rank);
    let ext: Vec<usize> = (0..d).map(|a| ranges[a].len() + 2 * widths[a]).collect();
    let total: usize = ext.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0usize; d];
    for _ in 0..total {
        let mut g = 0i64;
        let mut outside = false;
        for a in 0..d {
            let i = ranges[a].start as i64 - widths[a] as i64 + index[a] as i64;
            let n = shape[a] as i64;
            outside |= !(0..n).contains(&i);
            g = g * n + i.rem_euclid(n);
        }
        out.push(match fill {
            Some(v) if outside => v,
            _ => S::of(g + 1_000_000 * field as i64),
        });
        for a in (0..d).rev() {
            index[a] += 1;
            if index[a] < ext[a] {
                break;
            }
            index[a] = 0;
        }
    }
    out
}

/// Exchanges one layout's halo every way and checks every field against [`padded_block`].
fn check_layout<S: Indexed>(
    comm: &mpi::topology::SimpleCommunicator,
    layout: &Layout,
    widths: &[usize],
    what: &str,
) -> usize {
    let rank = comm.rank() as usize;
    let fields = 2;
    let mut cases = 0;
    for boundary in [Boundary::Periodic, Boundary::Fill(S::of(-7))] {
        let fill = match boundary {
            Boundary::Fill(v) => Some(v),
            Boundary::Periodic => None,
        };
        let what = format!("{what} widths {widths:?} {boundary:?}");
        let mut plan = HaloPlan::new(comm, layout, fields, widths, boundary).expect(&what);
        let mut u = PencilArray::<S>::zeros(layout.clone(), rank, fields);
        let len = layout.local_len(rank);
        {
            let data = u.as_mut_slice();
            for f in 0..fields {
                let mut field = PencilArray::<S>::zeros(layout.clone(), rank, 1);
                field.fill_with(|g| {
                    let lin = g
                        .iter()
                        .zip(layout.global_shape())
                        .fold(0i64, |acc, (i, n)| acc * *n as i64 + *i as i64);
                    S::of(lin + 1_000_000 * f as i64)
                });
                data[f * len..(f + 1) * len].copy_from_slice(field.as_slice());
            }
        }
        // Through the window (where there is one), some ranks private (messages), and all
        // private (messages).
        // Allocating and freeing windows is collective: every rank allocates both and frees
        // them in the same order (`arrays` first, then `second`).
        let shared = plan.alloc().expect(&what);
        let mut second = Some(plan.alloc().expect(&what));
        let mixed = match rank % 2 {
            1 => HaloArray::private(&plan),
            _ => second.take().unwrap(),
        };
        let mut arrays: [(&str, HaloArray<S>); 3] = [
            ("alloc", shared),
            ("mixed", mixed),
            ("private", HaloArray::private(&plan)),
        ];
        for (how, array) in arrays.iter_mut() {
            let what = format!("{what} {how}");
            // A dirty halo first: every cell must be written.
            array.as_mut_slice().fill(S::of(-99));
            plan.exchange_from(&u, array).expect(&what);
            let first = array.as_slice().to_vec();
            for f in 0..fields {
                let want = padded_block(layout, rank, widths, fill, f);
                let view = array.view();
                let got: Vec<S> = if fields > 1 {
                    view.index_axis(fft_core::ndarray::Axis(0), f)
                        .iter()
                        .copied()
                        .collect()
                } else {
                    view.iter().copied().collect()
                };
                if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                    panic!(
                        "{what} field {f}: rank {rank} element {i} (logical C order of the extended block {:?}) is {:?}, want {:?}",
                        array.extended_shape(),
                        got[i],
                        want[i]
                    );
                }
            }
            // Again in place with the halo dirty: the same bits.
            let interior: Vec<S> = array.interior().iter().copied().collect();
            array.as_mut_slice().fill(S::of(-5));
            array
                .interior_mut()
                .iter_mut()
                .zip(&interior)
                .for_each(|(a, b)| *a = *b);
            plan.exchange(array).expect(&what);
            assert!(
                array.as_slice() == &first[..],
                "{what}: second exchange differs"
            );
            // The in-place form on the caller's memory: the same bits, halo cells only.
            array.as_mut_slice().fill(S::of(-3));
            array
                .interior_mut()
                .iter_mut()
                .zip(&interior)
                .for_each(|(a, b)| *a = *b);
            let mut mine = array.as_slice().to_vec();
            plan.exchange_slice(&mut mine).expect(&what);
            assert!(mine == first, "{what}: exchange_slice differs");
            cases += 1;
        }
        drop(arrays);
        drop(second);
    }
    cases
}

#[test]
#[ignore = "MPI body: run by the halo_np* launchers under mpirun"]
fn halo_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    let mut cases = 0;
    let shapes: [(&[usize], &[&[usize]]); 3] = [
        (&[11, 7, 13], &[&[1, 1, 1], &[2, 0, 3], &[7, 9, 14]]),
        (&[5, 3], &[&[1, 2], &[6, 4]]),
        (&[6, 5, 4, 3], &[&[1, 2, 1, 1]]),
    ];
    for (shape, width_list) in shapes {
        let d = shape.len();
        for dims in grids(size, d) {
            for transposed in [false, true] {
                let opts = FftOptions::default()
                    .grid(GridChoice::Dims(dims.clone()))
                    .transposed_out(transposed);
                let plan = FftPlan::<f64>::new(&world, shape, opts.clone()).unwrap();
                let comm = plan.grid().communicator();
                for widths in width_list {
                    let what = format!("shape {shape:?} grid {dims:?}");
                    let input = plan.input_layout();
                    cases += check_layout::<Complex<f64>>(
                        comm,
                        input,
                        widths,
                        &format!("{what} c2c input"),
                    );
                    if transposed {
                        let output = plan.output_layout();
                        cases += check_layout::<Complex<f64>>(
                            comm,
                            output,
                            widths,
                            &format!("{what} transposed output"),
                        );
                    }
                }
                if !transposed {
                    let real = RealFftPlan::<f32>::new(&world, shape, opts).unwrap();
                    let widths = width_list[0];
                    let comm = real.grid().communicator();
                    cases += check_layout::<f32>(
                        comm,
                        real.input_layout(),
                        widths,
                        &format!("shape {shape:?} grid {dims:?} r2c f32 input"),
                    );
                    cases += check_layout::<f64>(
                        comm,
                        real.input_layout(),
                        widths,
                        &format!("shape {shape:?} grid {dims:?} f64"),
                    );
                }
            }
        }
    }
    errors(&world, rank);
    if rank == 0 {
        println!("halo cases: {cases}");
    }
    mpi.pass();
}

/// Errors name the offending values, the same on every rank.
fn errors(world: &impl Communicator, rank: usize) {
    let plan = FftPlan::<f64>::new(world, &[6, 5, 4], FftOptions::default()).unwrap();
    let e = HaloPlan::for_input(&plan, &[1, 1], Boundary::Periodic).unwrap_err();
    assert!(
        e.to_string()
            .contains("one width per axis: 2 widths [1, 1] for 3 axes"),
        "{e}"
    );
    let e = HaloPlan::for_input(&plan, &[usize::MAX / 2, 1, 1], Boundary::Periodic).unwrap_err();
    assert!(e.to_string().contains("overflow"), "{e}");
    let mut one = HaloPlan::for_input(&plan, &[1, 1, 1], Boundary::Periodic).unwrap();
    let two = HaloPlan::for_input(&plan, &[2, 1, 1], Boundary::Periodic).unwrap();
    let mut other = HaloArray::private(&two);
    match one.exchange(&mut other) {
        Err(FftError::ArrayMismatch { reason, .. }) => {
            assert!(
                reason.contains("by widths [1, 1, 1]") && reason.contains("by [2, 1, 1]"),
                "{reason}"
            )
        }
        e => panic!("rank {rank}: expected ArrayMismatch, got {e:?}"),
    }
    let mut short = vec![Complex::<f64>::default(); other.as_slice().len()];
    match one.exchange_slice(&mut short) {
        Err(FftError::ArrayMismatch { reason, .. }) => assert!(
            reason.contains(&format!("the slice holds {}", short.len())),
            "{reason}"
        ),
        e => panic!("rank {rank}: expected ArrayMismatch, got {e:?}"),
    }
    one_rank_wrong(world, &plan, rank);
}

/// Arguments wrong on rank 0 alone: every rank errors (none waits in the exchange), and the
/// plan still works afterwards.
fn one_rank_wrong(world: &impl Communicator, plan: &FftPlan<f64>, rank: usize) {
    if world.size() < 2 {
        return;
    }
    let widths: &[usize] = if rank == 0 { &[2, 1, 1] } else { &[1, 1, 1] };
    match HaloPlan::<Complex<f64>>::for_input(plan, widths, Boundary::Periodic) {
        Err(FftError::BadOptions { reason, .. }) => {
            assert!(reason.contains("different halo widths"), "{reason}")
        }
        e => panic!("rank {rank}: expected BadOptions, got {:?}", e.err()),
    }
    let mut one = HaloPlan::for_input(plan, &[1, 1, 1], Boundary::Periodic).unwrap();
    let two = HaloPlan::for_input(plan, &[2, 1, 1], Boundary::Periodic).unwrap();
    let mut right = HaloArray::private(&one);
    let mut wrong = HaloArray::private(&two);
    let refused = |e: FftError, own: &str| match e {
        FftError::ArrayMismatch { reason, .. } if rank == 0 => {
            assert!(reason.contains(own), "rank 0: {reason}")
        }
        FftError::ArrayMismatch { reason, .. } => assert!(
            reason.contains("rank 0's arguments were refused"),
            "rank {rank}: {reason}"
        ),
        e => panic!("rank {rank}: expected ArrayMismatch, got {e:?}"),
    };
    let array = if rank == 0 { &mut wrong } else { &mut right };
    refused(one.exchange(array).unwrap_err(), "by [2, 1, 1]");
    let len = right.as_slice().len() - usize::from(rank == 0);
    let mut slice = vec![Complex::<f64>::default(); len];
    refused(
        one.exchange_slice(&mut slice).unwrap_err(),
        "the slice holds",
    );
    one.exchange(&mut right).unwrap();
}
