//! Test-only fault injection, compiled only with the `fault-injection` feature, which the
//! test suite enables (through fft-cli's dev-dependency on itself) and `cargo build` or
//! `cargo install` never does: no variable a production run inherits can change it. This
//! module holds every `DFFT_TEST_*` variable; `tests/faults.rs` checks that none appears
//! elsewhere.

/// `DFFT_TEST_PANIC_RANK=<rank>`: that rank panics in the middle of the timed loop, so tests
/// can check that the job ends through MPI_Abort.
const PANIC_RANK_ENV: &str = "DFFT_TEST_PANIC_RANK";

/// `DFFT_TEST_PERTURB=<delta>`: the forward output's first element is moved by `delta` times
/// the reference's largest value before the checks, a wrong answer of known relative size.
const PERTURB_ENV: &str = "DFFT_TEST_PERTURB";

/// The rank asked to panic, if any.
pub fn panic_rank() -> Option<usize> {
    std::env::var(PANIC_RANK_ENV).ok()?.parse().ok()
}

/// Panics on purpose (the rank [`panic_rank`] named).
pub fn deliberate_panic(rank: usize) -> ! {
    panic!("{PANIC_RANK_ENV}={rank}: deliberate panic on rank {rank} (test-only)")
}

/// The relative perturbation of the forward output asked for, if any.
pub fn perturbation() -> Option<f64> {
    std::env::var(PERTURB_ENV).ok()?.parse().ok()
}
