//! The cluster user's path, end to end: `scripts/install --prefix DIR` run by an unprivileged
//! user (created with useradd when the tests run as root), then the installed C and Fortran
//! examples and the C API's test programs compiled by that user with `mpicc`/`mpif90` and
//! `pkg-config --cflags --libs dfft`, and run under mpirun on 1 to 4 ranks. Each program
//! checks itself against a serial reference (exact solutions, exact spectra, naive
//! transforms) and exits non-zero on any mismatch.
//!
//! The install reuses a build (`--no-build`: the user can neither run the build owner's cargo
//! nor write its target directory): the libraries `cargo test` built for these tests, so
//! those of the code under test (`common::tested_library`), and the `dfft` binary there is.
//! Needs `mpicc`, `mpif90`, `pkg-config` and `mpirun` (scripts/setup installs them): without
//! one the tests fail, they never pass silently.

mod common;

use common::{profile_dir, repo, tested_library};
use mpi_harness::{mpirun_command, run_command};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

/// The unprivileged account the tests install as when they run as root.
const USER: &str = "dfft-install-test";

/// The installed tree and the programs built against it.
struct Installed {
    prefix: PathBuf,
    /// Where the user built the programs.
    bin: PathBuf,
    /// Who installed and built (`None`: this process's own non-root user).
    user: Option<String>,
    install_log: String,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn run(mut cmd: Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// A shell command line run as `user` (or as this process when `None`).
fn as_user(user: Option<&str>, script: &str) -> Command {
    let mut cmd = match user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.args(["-u", u, "--"]);
            c
        }
        None => Command::new("env"),
    };
    // What the user has, not cargo's build directories.
    cmd.env_remove("LD_LIBRARY_PATH").args(["sh", "-c", script]);
    cmd
}

fn require_tools() {
    for tool in ["mpicc", "mpif90", "pkg-config", "mpirun"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(found, "{tool} is not installed (scripts/setup installs it)");
    }
}

/// The unprivileged user to install as: this process's own when not root, else [`USER`]
/// (created if missing).
fn install_user() -> Option<String> {
    if !is_root() {
        return None;
    }
    let exists = Command::new("id")
        .args(["-u", USER])
        .output()
        .is_ok_and(|o| o.status.success());
    if !exists {
        let mut add = Command::new("useradd");
        add.args([
            "--system",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            USER,
        ]);
        run(add, "useradd");
    }
    Some(USER.to_string())
}

/// The source files `scripts/install --no-build` reads, copied into `dir` (owned by the user)
/// when the user cannot read the checkout itself (a clone under root's home, say).
fn stage_checkout(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    for file in [
        "Cargo.toml",
        "scripts/install",
        "capi/include/dfft.h",
        "capi/fortran/dfft.f90",
        "capi/dfft.pc.in",
        "capi/dfft-static.pc.in",
        "capi/examples/poisson.c",
        "capi/examples/c2c_transposed.f90",
    ] {
        let to = src.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(repo().join(file), &to).unwrap_or_else(|e| panic!("staging {file}: {e}"));
    }
    src
}

/// A target directory for `scripts/install --no-build` in `dir`: `release/` with the
/// libraries of the code under test and the `dfft` binary of this build.
fn stage_build(dir: &Path) -> PathBuf {
    let target = dir.join("target");
    let release = target.join("release");
    std::fs::create_dir_all(&release).unwrap();
    let dfft = profile_dir().join("dfft");
    assert!(
        dfft.is_file(),
        "{} is missing: build first (cargo build --release -p fft-cli, as scripts/setup does)",
        dfft.display()
    );
    for (from, name) in [
        (tested_library("libdfft.so"), "libdfft.so"),
        (tested_library("libdfft.a"), "libdfft.a"),
        (dfft, "dfft"),
    ] {
        std::fs::copy(&from, release.join(name))
            .unwrap_or_else(|e| panic!("staging {}: {e}", from.display()));
    }
    target
}

/// The prefix of the temporary trees, followed by the test process's id.
const TREE: &str = "dfft-install-test-";

/// Removes the trees of earlier runs whose process is gone (each run leaves its own: the
/// tests share it until the process exits).
fn remove_stale_trees() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(TREE).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn install() -> Installed {
    require_tools();
    let user = install_user();
    remove_stale_trees();
    let dir = std::env::temp_dir().join(format!("{TREE}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (prefix, bin) = (dir.join("prefix"), dir.join("bin"));
    std::fs::create_dir_all(&bin).unwrap();

    // The checkout the user installs from: this one when the user can read it.
    let readable = |path: &Path| {
        as_user(user.as_deref(), &format!("test -r '{}'", path.display()))
            .status()
            .is_ok_and(|s| s.success())
    };
    let checkout = if readable(&repo().join("scripts/install")) {
        repo()
    } else {
        eprintln!(
            "note: {} cannot read {}; installing from a copy of the files scripts/install reads",
            user.as_deref().unwrap_or("this user"),
            repo().display()
        );
        stage_checkout(&dir)
    };
    let target_for_user = stage_build(&dir);
    if let Some(u) = &user {
        run(
            {
                let mut c = Command::new("chown");
                c.args(["-R", &format!("{u}:"), dir.to_str().unwrap()]);
                c
            },
            "chown",
        );
    }

    let log = run(
        as_user(
            user.as_deref(),
            &format!(
                "'{}/scripts/install' --prefix '{}' --no-build --target-dir '{}'",
                checkout.display(),
                prefix.display(),
                target_for_user.display()
            ),
        ),
        "scripts/install as an unprivileged user",
    );
    let install_log = String::from_utf8_lossy(&log.stdout).into_owned();

    // Everything is built by the user against the installed tree through pkg-config, in the
    // issue's command order (flags before the source).
    let pc = prefix.join("lib/pkgconfig");
    let examples = prefix.join("share/dfft/examples");
    let tests = repo().join("capi/tests");
    for source in [
        "c/transforms.c",
        "c/errors.c",
        "fortran/cosines.f90",
        "fortran/r2c_use_mpi.f90",
        "fortran/in_place.f90",
    ] {
        let to = bin.join(Path::new(source).file_name().unwrap());
        std::fs::copy(tests.join(source), &to).unwrap();
        if let Some(u) = &user {
            let mut c = Command::new("chown");
            c.args([&format!("{u}:"), to.to_str().unwrap()]);
            run(c, "chown");
        }
    }
    let build = format!(
        "set -e; export PKG_CONFIG_PATH='{pc}'; cd '{bin}'
         mpicc $(pkg-config --cflags --libs dfft) '{ex}/poisson.c' -lm -o poisson
         mpif90 $(pkg-config --cflags --libs dfft) '{ex}/c2c_transposed.f90' -o c2c_transposed
         mpicc $(pkg-config --cflags --libs dfft) transforms.c -lm -o transforms
         mpicc $(pkg-config --cflags --libs dfft) errors.c -lm -o errors
         mpif90 $(pkg-config --cflags --libs dfft) cosines.f90 r2c_use_mpi.f90 -o r2c_use_mpi
         mpif90 $(pkg-config --cflags --libs dfft) cosines.f90 in_place.f90 -o in_place
         mpicc '{ex}/poisson.c' $(pkg-config --cflags --libs dfft-static) -lm -o poisson_static",
        pc = pc.display(),
        bin = bin.display(),
        ex = examples.display(),
    );
    run(
        as_user(user.as_deref(), &build),
        "building the programs as the user",
    );
    Installed {
        prefix,
        bin,
        user,
        install_log,
    }
}

fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(install)
}

/// Runs an installed program on `ranks` ranks and returns its standard output; fails the test
/// unless it exits 0 and prints `want`.
fn mpirun(program: &str, args: &[&str], ranks: usize, want: &str) -> String {
    let path = installed().bin.join(program);
    let mut cmd = mpirun_command(ranks);
    // The installed libdfft.so through the programs' rpath, not cargo's build directories.
    cmd.env_remove("LD_LIBRARY_PATH").arg(&path).args(args);
    let out = run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(want),
        "{program} {args:?} on {ranks} ranks: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn install_puts_every_file_under_the_prefix_as_the_user() {
    let i = installed();
    for file in [
        "lib/libdfft.so",
        "lib/libdfft.a",
        "lib/pkgconfig/dfft.pc",
        "lib/pkgconfig/dfft-static.pc",
        "include/dfft.h",
        "include/dfft.mod",
        "include/dfft.f90",
        "bin/dfft",
        "share/dfft/examples/poisson.c",
        "share/dfft/examples/c2c_transposed.f90",
    ] {
        let path = i.prefix.join(file);
        let meta = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), i.install_log));
        if i.user.is_some() {
            use std::os::unix::fs::MetadataExt;
            assert_ne!(
                meta.uid(),
                0,
                "{file} is owned by root: the install did not run unprivileged"
            );
        }
    }
    let out = run(
        {
            let mut c = Command::new(i.prefix.join("bin/dfft"));
            c.arg("--version");
            c
        },
        "dfft --version",
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    // The examples link the installed libdfft.so through the rpath of dfft.pc.
    let ldd = run(
        {
            let mut c = Command::new("ldd");
            c.env_remove("LD_LIBRARY_PATH").arg(i.bin.join("poisson"));
            c
        },
        "ldd poisson",
    );
    let libs = String::from_utf8_lossy(&ldd.stdout).into_owned();
    assert!(
        libs.contains(&format!("{}/lib/libdfft.so", i.prefix.display())),
        "{libs}"
    );
    let ldd = run(
        {
            let mut c = Command::new("ldd");
            c.env_remove("LD_LIBRARY_PATH")
                .arg(i.bin.join("poisson_static"));
            c
        },
        "ldd poisson_static",
    );
    assert!(
        !String::from_utf8_lossy(&ldd.stdout).contains("libdfft"),
        "poisson_static links libdfft.so"
    );
}

#[test]
fn c_poisson_example_matches_the_exact_solution_on_1_to_4_ranks() {
    for ranks in 1..=4 {
        let out = mpirun("poisson", &[], ranks, "PASSED");
        eprint!("{out}");
    }
    mpirun("poisson", &["16", "12", "10", "1", "natural"], 2, "natural");
    mpirun("poisson_static", &["12", "10", "9", "1"], 3, "PASSED");
}

#[test]
fn fortran_c2c_transposed_example_matches_the_exact_spectrum_on_1_to_4_ranks() {
    for ranks in 1..=4 {
        let out = mpirun("c2c_transposed", &[], ranks, "PASSED");
        eprint!("{out}");
    }
}

#[test]
fn c_transforms_match_the_naive_reference() {
    for ranks in [1, 2, 4] {
        mpirun("transforms", &[], ranks, " 0 failed");
    }
}

/// The distributed 1-D cases (ordered and FFTW-MPI's scrambled orders) on the rank counts the
/// whole program above leaves out.
#[test]
fn c_one_d_transforms_match_the_naive_reference_on_3_and_5_to_8_ranks() {
    for ranks in [3, 5, 6, 7, 8] {
        mpirun("transforms", &["one_d"], ranks, " 0 failed");
    }
}

#[test]
fn c_error_paths_return_codes_and_messages_without_aborting() {
    for ranks in [1, 3] {
        mpirun("errors", &[], ranks, " 0 failed");
    }
}

#[test]
fn fortran_module_works_from_use_mpi_codes() {
    for ranks in [2, 3] {
        mpirun("r2c_use_mpi", &[], ranks, "PASSED");
    }
}

#[test]
fn fortran_in_place_c2c_and_padded_r2c_match_the_exact_spectra() {
    for ranks in [1, 2, 3, 4] {
        let out = mpirun("in_place", &[], ranks, "PASSED");
        eprint!("{out}");
    }
}
