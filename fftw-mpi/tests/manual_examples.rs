//! The FFTW manual's MPI examples, compiled unchanged against FFTW's headers
//! (`tests/c/manual_*.c`, `tests/fortran/manual_f03.f90`; the code around them checks every
//! local output element against a naive transform and prints a checksum of the output):
//!
//! - linked with `-ldfft_fftw3_mpi` in place of `-lfftw3_mpi`, on 1–4 processes: no
//!   libfftw3_mpi is loaded, and every example passes;
//! - linked with Debian's FFTW-MPI and run with `LD_PRELOAD=libdfft_fftw3_mpi.so`: every
//!   `fftw_mpi_*` symbol the program uses binds to the drop-in (the dynamic linker's
//!   `LD_DEBUG=bindings` report), and the results equal FFTW-MPI's own run of the same binary
//!   (checksums within 1e-12, relative).

mod common;

use common::{compile_or_skip, library_dir, mpirun, show, Link};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The examples and their sizes (FFTW's default blocks of `⌈n/P⌉` leave the last process
/// fewer rows, or none: 10 rows on 4 processes are 3, 3, 3, 1; 7 columns are 2, 2, 2, 1).
const EXAMPLES: &[(&str, &[&str])] = &[
    ("c/manual_2d.c", &["10", "12"]),
    ("c/manual_3d_r2c.c", &["10", "6", "10"]),
    ("c/manual_transposed.c", &["10", "7", "5"]),
    ("c/manual_r2r.c", &["12", "7"]),
    ("fortran/manual_f03.f90", &["10", "12"]),
];

/// The report lines of a run: (name, relative error, checksum).
fn reports(stdout: &str) -> Vec<(String, f64, [f64; 2])> {
    stdout
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(" np=")?;
            let relative = rest.split("(relative ").nth(1)?.split(')').next()?.trim();
            let sums: Vec<f64> = rest
                .split("checksum ")
                .nth(1)?
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            Some((
                name.trim().to_string(),
                relative.parse().unwrap(),
                [sums[0], sums[1]],
            ))
        })
        .collect()
}

fn run(program: &Path, args: &[&str], ranks: usize, env: &[(&str, String)]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = mpirun(program, &args, ranks, env, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{} on {ranks} ranks: {}",
        program.display(),
        show(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn manual_examples_run_on_the_drop_in() {
    for (source, args) in EXAMPLES {
        let Some(program) = compile_or_skip(source, Link::Dfft) else {
            return;
        };
        let ldd = Command::new("ldd")
            .arg(&program)
            .output()
            .expect("ldd runs");
        let libs = String::from_utf8_lossy(&ldd.stdout);
        assert!(libs.contains("libdfft_fftw3_mpi.so"), "{libs}");
        assert!(!libs.contains("libfftw3_mpi"), "FFTW-MPI is linked: {libs}");
        for ranks in 1..=4 {
            let stdout = run(&program, args, ranks, &[]);
            let found = reports(&stdout);
            assert!(!found.is_empty(), "{stdout}");
            for (name, relative, _) in found {
                assert!(relative < 1e-12, "{name} on {ranks} ranks: {stdout}");
                println!("{name} on {ranks} ranks: relative error {relative:.1e}");
            }
        }
    }
}

#[test]
fn preloaded_over_fftw_mpi_the_same_results() {
    let lib = library_dir().join("libdfft_fftw3_mpi.so");
    let ranks = 3;
    for (source, args) in EXAMPLES {
        let Some(program) = compile_or_skip(source, Link::Fftw) else {
            return;
        };
        let theirs = reports(&run(&program, args, ranks, &[]));
        let trace = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "bindings-{}",
            program.file_name().unwrap().to_str().unwrap()
        ));
        let _ = std::fs::remove_dir_all(&trace);
        std::fs::create_dir_all(&trace).unwrap();
        let env = [
            ("LD_PRELOAD", lib.display().to_string()),
            ("LD_DEBUG", "bindings".to_string()),
            ("LD_DEBUG_OUTPUT", trace.join("ld").display().to_string()),
        ];
        let ours = reports(&run(&program, args, ranks, &env));
        assert_eq!(ours.len(), theirs.len(), "{ours:?} {theirs:?}");
        for ((name, relative, sum), (_, _, fftw_sum)) in ours.iter().zip(&theirs) {
            let scale = fftw_sum[0].hypot(fftw_sum[1]).max(1.0);
            let diff = (sum[0] - fftw_sum[0]).hypot(sum[1] - fftw_sum[1]) / scale;
            assert!(
                *relative < 1e-12 && diff < 1e-12,
                "{name}: {ours:?} vs FFTW-MPI {theirs:?}"
            );
            println!(
                "{name}, preloaded on {ranks} ranks: checksum within {diff:.1e} of FFTW-MPI's"
            );
        }
        check_bindings(&trace, &program);
    }
}

/// Every `fftw_mpi_*` symbol (and `fftw_execute`, `fftw_destroy_plan`) the program binds on
/// every rank binds to the drop-in.
fn check_bindings(trace: &Path, program: &Path) {
    let name = program.file_name().unwrap().to_str().unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(trace).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines().filter(|l| l.contains("binding file")) {
            let Some(from) = line.split("binding file ").nth(1) else {
                continue;
            };
            let symbol = line.rsplit('`').next().unwrap_or("").trim_end_matches('\'');
            let mpi_api = symbol.starts_with("fftw_mpi_") || symbol.starts_with("fftwf_mpi_");
            let generic = symbol == "fftw_execute" || symbol == "fftw_destroy_plan";
            if from.contains(name) && (mpi_api || generic) {
                seen += 1;
                assert!(
                    line.contains("libdfft_fftw3_mpi.so"),
                    "{symbol} does not bind to the drop-in: {line}"
                );
            }
        }
    }
    assert!(
        seen > 0,
        "no bindings of {name} traced in {}",
        trace.display()
    );
}
