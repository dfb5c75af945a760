//! `cargo fuzz run planners`: see `fuzz/checks.rs` for the property.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::planners(data));
