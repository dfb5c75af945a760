//! The checked-in `include/dfft.h` is what cbindgen generates from the source now (build.rs
//! writes it to OUT_DIR), and the Fortran module agrees with it: the same constants with the
//! same values, and every `bind(c)` name a function that libdfft.so, built from the sources
//! as they are now, exports.
//!
//! After changing the API, refresh the header with
//! `DFFT_BLESS=1 cargo test --release -p dfft-capi --test header`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn checked_in_header_is_current() {
    let generated = read(&Path::new(env!("OUT_DIR")).join("dfft.h"));
    let path = manifest().join("include/dfft.h");
    let checked_in = read(&path);
    if generated == checked_in {
        return;
    }
    if std::env::var_os("DFFT_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writing include/dfft.h");
        eprintln!("wrote {}", path.display());
        return;
    }
    let (line, (want, got)) = generated
        .lines()
        .chain(std::iter::repeat(""))
        .zip(checked_in.lines().chain(std::iter::repeat("")))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .expect("the texts differ, so some line does");
    panic!(
        "capi/include/dfft.h is stale: line {} is {got:?}, cbindgen now generates {want:?}; \
         refresh it with DFFT_BLESS=1 cargo test --release -p dfft-capi --test header",
        line + 1
    );
}

/// `#define NAME VALUE` lines of the header.
fn header_constants() -> BTreeMap<String, i64> {
    read(&manifest().join("include/dfft.h"))
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix("#define ")?.split_whitespace();
            let (name, value) = (words.next()?, words.next()?);
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

fn fortran_source() -> String {
    read(&manifest().join("fortran/dfft.f90"))
}

#[test]
fn fortran_constants_match_the_header() {
    let fortran: BTreeMap<String, i64> = fortran_source()
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once("parameter ::")?;
            let (name, value) = rest.split_once('=')?;
            Some((name.trim().to_string(), value.trim().parse().ok()?))
        })
        .filter(|(name, _)| name.starts_with("DFFT_"))
        .collect();
    let header = header_constants();
    assert!(header.len() >= 20, "header constants: {header:?}");
    assert_eq!(
        fortran, header,
        "Fortran parameters (left) vs the header's #defines (right)"
    );
}

#[test]
fn fortran_interfaces_name_exported_functions() {
    let source = fortran_source();
    let mut names = Vec::new();
    for line in source.lines().map(str::trim) {
        if line.starts_with('!') {
            continue;
        }
        // `bind(c, name='x')`, or `function x(...) bind(c)` / `subroutine x(...) bind(c)`.
        if let Some((_, rest)) = line.split_once("name='") {
            names.push(rest.split('\'').next().unwrap().to_string());
        } else if line.contains("bind(c)") {
            let (_, after) = line
                .split_once("function ")
                .or_else(|| line.split_once("subroutine "))
                .unwrap_or_else(|| panic!("a bind(c) line without a procedure: {line}"));
            names.push(after.split('(').next().unwrap().trim().to_string());
        }
    }
    assert!(names.len() >= 17, "interfaces found: {names:?}");
    let library = common::tested_library("libdfft.so");
    let nm = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&library)
        .output()
        .unwrap_or_else(|e| panic!("nm {}: {e}", library.display()));
    assert!(
        nm.status.success(),
        "nm {}: {}",
        library.display(),
        String::from_utf8_lossy(&nm.stderr)
    );
    let symbols = String::from_utf8_lossy(&nm.stdout);
    let exported: std::collections::BTreeSet<&str> = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    for name in &names {
        assert!(
            exported.contains(name.as_str()),
            "the Fortran module binds {name}, which {} does not export",
            library.display()
        );
    }
}
