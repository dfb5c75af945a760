//! `cargo fuzz run dist_specs`: see `fuzz/checks.rs` for the property.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::dist_specs(data);
});
