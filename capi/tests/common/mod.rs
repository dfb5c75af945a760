//! Shared by the tests that read the built `libdfft` (the header's exported names, the
//! install): the library of the code under test. `cargo test` builds the crate's library
//! target, all its crate types, for the tests under `<target>/<profile>/deps/` before it runs
//! them, but leaves `<target>/<profile>/libdfft.so` and `libdfft.a` as the last `cargo build`
//! made them, which may be older than the sources.

#![allow(dead_code)] // each test uses part of it

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The directory of this test's executable, `<target>/<profile>/deps`.
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().to_path_buf()
}

/// `<target>/<profile>`, where `cargo build` puts the `dfft` binary.
pub fn profile_dir() -> PathBuf {
    deps_dir().parent().unwrap().to_path_buf()
}

/// `name` (`libdfft.so` or `libdfft.a`) as this `cargo test` built it from the sources now.
pub fn tested_library(name: &str) -> PathBuf {
    let path = deps_dir().join(name);
    assert!(
        path.is_file(),
        "{} is missing: cargo test builds it with the tests (capi/Cargo.toml's crate-type)",
        path.display()
    );
    path
}
