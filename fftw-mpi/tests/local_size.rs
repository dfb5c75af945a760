//! Every `local_size` function against the real FFTW-MPI's: `tests/c/local_sizes.c` makes
//! 2604 calls in both precisions (rank 2–4 shapes with idle processes, `howmany`, user block
//! sizes, transposed or not; 1-D sizes with both signs and every scrambled flag), and its
//! output linked with the drop-in must equal its output linked with FFTW-MPI, byte for byte,
//! on 1, 2, 3, 4, 5 and 7 processes.

mod common;

use common::{compile_or_skip, mpirun, show, Link};
use std::time::Duration;

#[test]
fn local_sizes_are_fftws() {
    let Some(dfft) = compile_or_skip("c/local_sizes.c", Link::Dfft) else {
        return;
    };
    let Some(fftw) = compile_or_skip("c/local_sizes.c", Link::Fftw) else {
        return;
    };
    for ranks in [1, 2, 3, 4, 5, 7] {
        let run = |program| {
            let out = mpirun(program, &[], ranks, &[], Duration::from_secs(120));
            assert!(out.status.success(), "{ranks} ranks: {}", show(&out));
            String::from_utf8(out.stdout).expect("text")
        };
        let (ours, theirs) = (run(&dfft), run(&fftw));
        let summary = theirs.lines().last().unwrap_or_default().to_string();
        assert!(summary.starts_with("local_sizes: "), "{theirs}");
        let differ: Vec<(&str, &str)> = ours
            .lines()
            .zip(theirs.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert!(
            differ.is_empty() && ours.lines().count() == theirs.lines().count(),
            "{ranks} ranks: {} of {} lines differ from FFTW-MPI's, e.g. (dfft, fftw) {:?}",
            differ.len(),
            theirs.lines().count(),
            &differ[..differ.len().min(5)]
        );
        println!("{ranks} ranks: {summary}, all equal to FFTW-MPI's");
    }
}
