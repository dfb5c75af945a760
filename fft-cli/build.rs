//! Records where the binary comes from, for the `provenance` of every JSON report: the git
//! commit of the source tree (with `-dirty` when tracked files differed from it), the rustc
//! that compiled it and the cargo profile. Reruns when the checked-out commit or the index
//! changes.

use std::process::Command;

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn git(args: &[&str]) -> Option<String> {
    output(Command::new("git").args(args))
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let commit = match commit {
        Some(c) if dirty => format!("{c}-dirty"),
        Some(c) => c,
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=DFFT_GIT_COMMIT={commit}");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = output(Command::new(rustc).arg("-V")).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DFFT_RUSTC_VERSION={version}");
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=DFFT_BUILD_PROFILE={profile}");
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        watch(&format!("{dir}/HEAD"));
        watch(&format!("{dir}/index"));
        if let (Some(common), Some(head)) = (
            git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
            git(&["symbolic-ref", "-q", "HEAD"]),
        ) {
            // The branch's commit is in its loose ref file or in packed-refs (or both).
            watch(&format!("{common}/{head}"));
            watch(&format!("{common}/packed-refs"));
        }
    }
}

/// Reruns this script when `path` changes; a path that does not exist is not watched, since
/// cargo would rerun the script (and relink the binary) on every build.
fn watch(path: &str) {
    if std::path::Path::new(path).exists() {
        println!("cargo:rerun-if-changed={path}");
    }
}
