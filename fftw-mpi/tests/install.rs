//! The drop-in as a cluster user installs it: `scripts/install --no-build --components
//! fftw-mpi --prefix DIR` with the libraries this `cargo test` built, then the FFTW manual's
//! 2-d example (`tests/c/manual_2d.c`) compiled with `mpicc` and FFTW's header, linked
//! through `pkg-config --libs dfft-fftw3-mpi` (flags before the source, as --as-needed
//! toolchains break otherwise) and `dfft-fftw3-mpi-static`, and run on 2 ranks without
//! LD_LIBRARY_PATH.

mod common;

use common::{library_dir, mpirun, repo, show};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what}: {}", show(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn installed_drop_in_links_by_pkg_config() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install");
    let _ = std::fs::remove_dir_all(&tmp);
    let release = tmp.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    for lib in ["libdfft_fftw3_mpi.so", "libdfft_fftw3_mpi.a"] {
        std::fs::copy(library_dir().join(lib), release.join(lib)).unwrap();
    }
    let prefix = tmp.join("prefix");
    let log = run(
        Command::new(repo().join("scripts/install"))
            .args(["--no-build", "--components", "fftw-mpi", "--prefix"])
            .arg(&prefix)
            .arg("--target-dir")
            .arg(tmp.join("target")),
        "scripts/install",
    );
    println!("{log}");
    let pkg = prefix.join("lib/pkgconfig");
    let source = repo().join("fftw-mpi/tests/c/manual_2d.c");
    for (name, flags_first) in [("dfft-fftw3-mpi", true), ("dfft-fftw3-mpi-static", false)] {
        let libs = run(
            Command::new("pkg-config")
                .env("PKG_CONFIG_PATH", &pkg)
                .args(["--libs", name]),
            "pkg-config",
        );
        let program = tmp.join(name);
        let line = if flags_first {
            format!(
                "mpicc {} {} -o {} -lfftw3 -lm",
                libs.trim(),
                source.display(),
                program.display()
            )
        } else {
            format!(
                "mpicc {} -o {} {} -lm",
                source.display(),
                program.display(),
                libs.trim()
            )
        };
        run(Command::new("sh").args(["-c", &line]), &line);
        let ldd = run(Command::new("ldd").arg(&program), "ldd");
        assert!(!ldd.contains("libfftw3_mpi"), "{ldd}");
        let out = mpirun(&program, &[], 2, &[], Duration::from_secs(60));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("manual_2d np=2"),
            "{}",
            show(&out)
        );
        println!("{name}: {}", stdout.trim());
    }
}
