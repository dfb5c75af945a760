//! The crates as a user outside this repository gets them: complete metadata and versioned
//! path dependencies (what `cargo publish` needs), `cargo package --list` with the sources,
//! README and both licenses, and a new crate outside the repository that depends on fft-core
//! alone and builds and runs the README's library example under `mpirun -n 4`.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The workspace root.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fft-core sits in the workspace root")
        .to_path_buf()
}

/// The profile directory this test executable was built into (`target/<profile>`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable");
    // target/<profile>/deps/<test>-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("a test executable in target/<profile>/deps")
        .to_path_buf()
}

/// The cargo that runs the tests, offline: what it needs was fetched for the tests' build.
fn cargo(subcommand: &str) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.arg(subcommand).arg("--offline");
    cmd
}

/// Runs `cmd` (at most 10 minutes), panicking with its output if it fails.
fn run(cmd: Command, what: &str) -> Output {
    let out = mpi_harness::run_command(cmd, Duration::from_secs(600));
    assert!(
        out.status.success(),
        "{what}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The crates meant for crates.io, in publishing order.
const PUBLISHED: [&str; 8] = [
    "mpi-harness",
    "cli-common",
    "redist",
    "npyio",
    "h5io",
    "fft-core",
    "solvers",
    "fft-cli",
];

fn metadata() -> Value {
    let mut cmd = cargo("metadata");
    cmd.args(["--format-version", "1", "--no-deps"])
        .current_dir(workspace_root());
    serde_json::from_slice(&run(cmd, "cargo metadata").stdout).expect("cargo metadata's JSON")
}

#[test]
fn every_published_crate_has_complete_metadata_and_versioned_path_dependencies() {
    let meta = metadata();
    let packages = meta["packages"].as_array().unwrap();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for p in packages {
        let name = p["name"].as_str().unwrap();
        // `publish = false` is an empty list; absent means crates.io.
        let publishable = p["publish"].is_null();
        if publishable != PUBLISHED.contains(&name) {
            problems.push(format!(
                "{name}: publishable {publishable}, but PUBLISHED says otherwise"
            ));
            continue;
        }
        if !publishable {
            continue;
        }
        seen.insert(name);
        for field in [
            "description",
            "license",
            "repository",
            "documentation",
            "readme",
            "rust_version",
        ] {
            if p[field].as_str().is_none_or(str::is_empty) {
                problems.push(format!("{name}: no {field}"));
            }
        }
        for (field, max) in [("keywords", 5), ("categories", 5)] {
            let n = p[field].as_array().map_or(0, Vec::len);
            if n == 0 || n > max {
                problems.push(format!("{name}: {n} {field} (crates.io takes 1 to {max})"));
            }
        }
        for dep in p["dependencies"].as_array().unwrap() {
            // cargo package drops path-only dev-dependencies (fft-cli's on itself, for a
            // test feature); the others need a version on crates.io.
            let dev = dep["kind"] == "dev";
            if dep["path"].is_string() && dep["req"] == "*" && !dev {
                problems.push(format!(
                    "{name}: path dependency {} has no version",
                    dep["name"]
                ));
            }
        }
        let readme = Path::new(p["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .join(p["readme"].as_str().unwrap_or("-"));
        if !readme.is_file() {
            problems.push(format!("{name}: readme {} missing", readme.display()));
        }
    }
    assert_eq!(
        seen.len(),
        PUBLISHED.len(),
        "published crates found: {seen:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Files of `dir` (relative to `root`) under version control, or on disk without git.
fn tracked_sources(root: &Path, dir: &str) -> Vec<String> {
    let git = Command::new("git")
        .args(["ls-files", "--", dir])
        .current_dir(root)
        .output();
    match git {
        Ok(out) if out.status.success() && !out.stdout.is_empty() => {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect()
        }
        _ => {
            let mut files = Vec::new();
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else {
                        let rel = path.strip_prefix(root).unwrap();
                        files.push(rel.to_string_lossy().into_owned());
                    }
                }
            }
            files
        }
    }
}

#[test]
fn cargo_package_lists_sources_readme_and_licenses_of_each_crate() {
    let root = workspace_root();
    for name in PUBLISHED {
        let mut cmd = cargo("package");
        cmd.args(["--list", "--allow-dirty", "-p", name])
            .current_dir(&root);
        let out = run(cmd, &format!("cargo package --list -p {name}"));
        let listed: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        for file in [
            "Cargo.toml",
            "Cargo.toml.orig",
            "README.md",
            "LICENSE-MIT",
            "LICENSE-APACHE",
        ] {
            assert!(
                listed.contains(file),
                "{name}: {file} not packaged: {listed:?}"
            );
        }
        for source in tracked_sources(&root, &format!("{name}/src")) {
            let inside = source.strip_prefix(&format!("{name}/")).unwrap();
            assert!(listed.contains(inside), "{name}: {inside} not packaged");
        }
        assert!(
            listed.iter().all(|f| !f.starts_with("target/")),
            "{name}: build output packaged"
        );
    }
}

/// The first ```rust block of README.md that uses fft-core, as the body of a program.
fn readme_example(readme: &str) -> String {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in readme.lines() {
        match &mut current {
            None if line.trim_start().starts_with("```rust") => current = Some(Vec::new()),
            None => {}
            Some(block) if line.trim_start().starts_with("```") => {
                blocks.push(block.join("\n"));
                current = None;
            }
            Some(block) => block.push(line),
        }
    }
    let block = blocks
        .into_iter()
        .find(|b| b.contains("fft_core"))
        .expect("README.md has a ```rust block using fft_core");
    // Lines hidden from the rendered docs (`# line`) are part of the program.
    let code: Vec<&str> = block
        .lines()
        .map(|l| match l.trim_start().strip_prefix("# ") {
            Some(hidden) => hidden,
            None if l.trim() == "#" => "",
            None => l,
        })
        .collect();
    let code = code.join("\n");
    if code.contains("fn main") {
        code
    } else {
        format!("fn main() {{\n{code}\n}}\n")
    }
}

/// The `[profile.*]` sections of the workspace manifest: the same settings make the new
/// crate reuse the dependencies the tests already built in this target directory.
fn profile_sections(manifest: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The crates that the new crate compiles itself, unoptimized: fft-core and redist are path
/// dependencies of another workspace (built again, not reused) and the example is new;
/// optimizing them was most of this test's time, and what it checks (the crate builds
/// outside the repository against fft-core alone, and runs) does not depend on it.
const UNOPTIMIZED: &str = "\n[profile.release.package.fft-core]\nopt-level = 0\n\n\
                           [profile.release.package.redist]\nopt-level = 0\n\n\
                           [profile.release.package.dfft-readme-example]\nopt-level = 0\n";

/// Writes `text` to `path` unless it holds it already (cargo rebuilds what was rewritten).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn a_new_crate_outside_the_repository_runs_the_readme_example_np4() {
    let root = workspace_root();
    let example = readme_example(&std::fs::read_to_string(root.join("README.md")).unwrap());
    // The same directory on every run from this checkout, so that a rerun rebuilds nothing.
    let key = root.to_string_lossy().bytes().fold(0u64, |h, b| {
        h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b))
    });
    let dir = std::env::temp_dir().join(format!("dfft-readme-example-{key:016x}"));
    assert!(
        !dir.starts_with(&root),
        "{} is inside the repository",
        dir.display()
    );
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let workspace_manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    // One dependency line, as from crates.io (`fft-core = "0.1"`), but by path.
    let manifest = format!(
        "[package]\nname = \"dfft-readme-example\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\nfft-core = {{ path = {:?}, version = \"0.1.0\" }}\n\n\
         [workspace]\n\n{}{UNOPTIMIZED}",
        root.join("fft-core"),
        profile_sections(&workspace_manifest)
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(&dir.join("src/main.rs"), &example);
    // The workspace's lock file pins the same versions (offline, and the artifacts match).
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    // The target directory and profile of this test: the dependencies from crates.io are
    // built already (fft-core and redist are built again, see UNOPTIMIZED; the directory
    // above stays the same, so a rerun rebuilds nothing).
    let profile = profile_dir();
    let mut build = cargo("build");
    build
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", profile.parent().unwrap());
    match profile.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some(name) => {
            build.args(["--profile", name]);
        }
    }
    run(build, "cargo build of the README example crate");
    let binary = profile.join("dfft-readme-example");
    let mut cmd = mpi_harness::mpirun_command(4);
    cmd.arg(&binary);
    let out = mpi_harness::run_command(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the README example on 4 ranks: {}\n{example}\n--- stdout ---\n{stdout}\n--- stderr \
         ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn readme_blocks_become_programs() {
    let readme = "text\n```rust,no_run\nuse fft_core::FftPlan;\n# let hidden = 1;\nlet x = 2;\n\
                  ```\n```rust\nfn main() {}\n```\n";
    assert_eq!(
        readme_example(readme),
        "fn main() {\nuse fft_core::FftPlan;\nlet hidden = 1;\nlet x = 2;\n}\n"
    );
    let manifest = "[workspace]\nx = 1\n[profile.release]\ndebug = 1\n\n[profile.dist]\nlto = \
                    true\n[other]\ny = 2\n";
    assert_eq!(
        profile_sections(manifest),
        "[profile.release]\ndebug = 1\n\n[profile.dist]\nlto = true\n"
    );
}
