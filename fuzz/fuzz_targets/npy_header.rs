//! `cargo fuzz run npy_header`: see `fuzz/checks.rs` for the property.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::npy_header(data));
