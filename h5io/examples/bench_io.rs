//! Write and read throughput of one distributed complex128 field: parallel HDF5 (`h5io`)
//! against the `.npy` path (`npyio`), measured in the same run, interleaved.
//!
//! ```text
//! scripts/bench-io [N] [ROUNDS] [RANKS...]      # builds this and runs it under mpirun
//! mpirun -n P target/release/examples/bench_io [N] [ROUNDS] [DIR]
//! ```
//!
//! Each rank holds its rows of axis 0 of an `N × N × N` field (index-valued: element `i` is
//! `i - i·1j`). Every round writes the field once through each path and reads it back once
//! through each, the order of the two paths alternating from round to round; a time is from a
//! barrier before the call to a barrier after it (the slowest rank), and includes what makes
//! the file all-or-nothing (space reservation, sync, vote, rename). The read data are checked
//! against the index values. Prints one JSON line per operation with the best and median
//! seconds, and the ratios HDF5 / `.npy` of the best and of the median times.

use std::path::PathBuf;
use std::time::Instant;

use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(256, |a| a.parse().expect("N: a length"));
    let rounds: usize = args
        .next()
        .map_or(3, |a| a.parse().expect("ROUNDS: a count"));
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "target/bench/io".to_string()));
    if rank == 0 {
        std::fs::create_dir_all(&dir).expect("the scratch directory");
    }
    world.barrier();

    let shape = [n, n, n];
    let plane = n * n;
    let (start, count) = {
        let (q, m) = (n / size, n % size);
        (rank * q + rank.min(m), q + usize::from(rank < m))
    };
    let starts = [start, 0, 0];
    let counts = [count, n, n];
    let value = |i: usize| Complex::new(i as f64, -(i as f64));
    let data: Vec<Complex<f64>> = (start * plane..(start + count) * plane)
        .map(value)
        .collect();
    let mut back = vec![Complex::<f64>::default(); data.len()];
    let npy = dir.join("field.npy");
    let h5 = dir.join("field.h5");

    // The slowest rank's seconds for `f`.
    let timed = |f: &mut dyn FnMut()| {
        world.barrier();
        let t = Instant::now();
        f();
        world.barrier();
        t.elapsed().as_secs_f64()
    };
    let check = |back: &mut Vec<Complex<f64>>, what: &str| {
        let ok = back
            .iter()
            .zip(start * plane..)
            .all(|(v, i)| *v == value(i));
        assert!(ok, "rank {rank}: {what} read back wrong values");
        back.fill(Complex::default());
    };
    // Seconds per operation: write npy, write h5, read npy, read h5.
    let mut times = [(); 4].map(|_| Vec::with_capacity(rounds));
    for round in 0..rounds {
        for path in [round % 2, 1 - round % 2] {
            if path == 0 {
                times[0].push(timed(&mut || {
                    npyio::write_block(&world, &npy, &shape, &starts, &counts, &data)
                        .expect("npy write")
                }));
            } else {
                let field = h5io::FieldWrite {
                    dataset: "/u",
                    global_shape: &shape,
                    starts: &starts,
                    counts: &counts,
                    data: &data,
                    attributes: &[],
                };
                times[1].push(timed(&mut || {
                    h5io::write_fields(&world, &h5, std::slice::from_ref(&field))
                        .map(drop)
                        .expect("h5 write")
                }));
            }
        }
        for path in [round % 2, 1 - round % 2] {
            if path == 0 {
                let header = npyio::read_header(&npy).expect("npy header");
                times[2].push(timed(&mut || {
                    npyio::read_block(&world, &npy, &header, &starts, &counts, &mut back)
                        .expect("npy read")
                }));
                check(&mut back, ".npy");
            } else {
                times[3].push(timed(&mut || {
                    h5io::read_field(&world, &h5, "/u", &starts, &counts, &mut back)
                        .expect("h5 read")
                }));
                check(&mut back, "HDF5");
            }
        }
    }
    if rank == 0 {
        let bytes = (n * n * n * std::mem::size_of::<Complex<f64>>()) as f64;
        let stats = |t: &[f64]| {
            let mut s = t.to_vec();
            s.sort_by(f64::total_cmp);
            (s[0], s[s.len() / 2])
        };
        let names = ["write npy", "write h5", "read npy", "read h5"];
        let best: Vec<f64> = times.iter().map(|t| stats(t).0).collect();
        let median: Vec<f64> = times.iter().map(|t| stats(t).1).collect();
        for (name, t) in names.iter().zip(&times) {
            let (min, median) = stats(t);
            println!(
                "{{\"op\":\"{name}\",\"ranks\":{size},\"n\":{n},\"rounds\":{rounds},\"min_s\":{min},\"median_s\":{median},\"mib_per_s\":{}}}",
                bytes / min / (1 << 20) as f64
            );
        }
        println!(
            "{{\"ranks\":{size},\"n\":{n},\"write_ratio_h5_over_npy\":{},\"read_ratio_h5_over_npy\":{},\"write_median_ratio\":{},\"read_median_ratio\":{}}}",
            best[1] / best[0],
            best[3] / best[2],
            median[1] / median[0],
            median[3] / median[2]
        );
        std::fs::remove_file(&npy).ok();
        std::fs::remove_file(&h5).ok();
    }
}
