//! Helpers shared by the `dfft` integration tests.

// Each test file compiles this module and uses only some of it.
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;

/// The fields of a report's `problem` and `result` objects, flat (the common JSON schema,
/// docs/schema/dfft-report.schema.json, nests them; these tests read fields by name).
pub fn flat(v: Value) -> Value {
    let mut out = serde_json::Map::new();
    for part in ["problem", "result"] {
        if let Some(Value::Object(fields)) = v.get(part) {
            out.extend(fields.clone());
        }
    }
    Value::Object(out)
}

/// The names of the entries of `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The processes whose parent is `pid` (from /proc).
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after.split_whitespace().nth(1).and_then(|s| s.parse().ok()) == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Every process below `pid`: children, their children, and so on.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children(p) {
            all.push(c);
            todo.push(c);
        }
    }
    all
}
