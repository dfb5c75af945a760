//! `scripts/venv` (which `scripts/setup` runs) makes the tests' virtual environment with
//! Debian's own `/usr/bin/python3` and repairs what a failed attempt leaves: a venv without
//! pip (what `python3 -m venv` leaves where `python3-venv` is missing) and a venv another
//! python3 made (a pyenv one first on PATH) are made again. Run on a copy of the script in a
//! scratch tree whose requirements list is empty, so nothing is downloaded. `scripts/setup`
//! installs `python3-venv` for the full set-up, and `scripts/run` sets up no Python at all.
//!
//! Needs `/usr/bin/python3` with `venv`; without it the test prints SKIPPED with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Runs the copied `scripts/venv` in `tree`; its output, failing the test if it fails.
fn venv(tree: &Path) -> String {
    let out = Command::new(tree.join("scripts/venv"))
        .output()
        .expect("scripts/venv runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "scripts/venv failed:\n{text}");
    text
}

/// The interpreter the venv's python resolves to.
fn base_of(tree: &Path) -> PathBuf {
    std::fs::canonicalize(tree.join("target/venv/bin/python")).expect("the venv's python")
}

fn pip_works(tree: &Path) -> bool {
    Command::new(tree.join("target/venv/bin/python"))
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_venv_is_debians_and_a_broken_one_is_made_again() {
    let debian = Path::new("/usr/bin/python3");
    let probe = Command::new(debian)
        .args(["-c", "import venv, ensurepip"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: /usr/bin/python3 with venv and ensurepip (python3-venv) is needed");
        return;
    }
    let tree = std::env::temp_dir().join(format!("dfft-venv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tree);
    std::fs::create_dir_all(tree.join("scripts")).unwrap();
    std::fs::create_dir_all(tree.join("python")).unwrap();
    std::fs::copy(repo().join("scripts/venv"), tree.join("scripts/venv")).unwrap();
    std::fs::write(
        tree.join("python/requirements-test.txt"),
        "# nothing: the test downloads nothing\n",
    )
    .unwrap();

    let venv_dir = tree.join("target/venv");
    let make = |python: &Path, extra: &[&str]| {
        let made = Command::new(python)
            .args(["-m", "venv"])
            .args(extra)
            .arg(&venv_dir)
            .status()
            .unwrap();
        assert!(made.success(), "{} -m venv {extra:?}", python.display());
    };
    // A venv another python3 made (whatever python3 PATH finds first, e.g. pyenv's; its pip
    // from the system site, so that only the interpreter differs), then made again with
    // Debian's; without another python3, Debian's made from nothing.
    let other = Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| std::fs::canonicalize(p).ok() != std::fs::canonicalize(debian).ok());
    match &other {
        Some(other) => {
            make(other, &["--without-pip", "--system-site-packages"]);
            assert!(pip_works(&tree), "the foreign venv's pip");
            let out = venv(&tree);
            assert!(
                out.contains("not /usr/bin/python3: making it again"),
                "{out}"
            );
        }
        None => {
            eprintln!("SKIPPED (part): no python3 other than /usr/bin/python3 on PATH");
            venv(&tree);
        }
    }
    assert!(pip_works(&tree));
    assert_eq!(base_of(&tree), std::fs::canonicalize(debian).unwrap());

    // What a failed `python3 -m venv` leaves: a venv without pip.
    make(debian, &["--without-pip", "--clear"]);
    assert!(!pip_works(&tree));
    let out = venv(&tree);
    assert!(out.contains("has no working pip"), "{out}");
    assert!(pip_works(&tree), "{out}");
    assert_eq!(base_of(&tree), std::fs::canonicalize(debian).unwrap());
    // Idempotent: a good venv is kept.
    let out = venv(&tree);
    assert!(!out.contains("making it again"), "{out}");
    std::fs::remove_dir_all(&tree).ok();

    // The run's set-up needs no Python; the full one installs Debian's venv support.
    let run = std::fs::read_to_string(repo().join("scripts/run")).unwrap();
    assert!(
        run.contains("scripts/setup --run"),
        "scripts/run sets up Python"
    );
    let setup = std::fs::read_to_string(repo().join("scripts/setup")).unwrap();
    assert!(
        setup.contains("python3-venv"),
        "scripts/setup lacks python3-venv"
    );
}
