//! The crate's module layering, checked on its source: `teams/` builds on `subagent/` (its
//! members are subagents the spawner builds), and `subagent/` sees the team service only
//! through its own `TeamPort`. A path into `teams` from `subagent/` would bring back the
//! cycle the two were split out of. The services the spawner holds (`tasks/`, `isolation/`,
//! `remote.rs`) sit below both.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Lines of the Rust files of `src/<module>/` (or `src/<module>.rs`) that name the module
/// `forbidden`: a path through it (`teams::…`), or a `use` of it inside braces
/// (`use crate::layering::{teams, …}`).
fn naming(module: &str, forbidden: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(module);
    let mut files = Vec::new();
    if root.is_dir() {
        rust_files(&root, &mut files);
    } else {
        files.push(root.with_extension("rs"));
    }
    assert!(!files.is_empty(), "no sources under {}", root.display());
    let path = format!("{forbidden}::");
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        // Inside a `use` item, which may run over several lines (`use crate::layering::{\n teams, …};`).
        let mut in_use = false;
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("use ") || (code.starts_with("pub") && code.contains(" use ")) {
                in_use = true;
            }
            let named = code
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .any(|word| {
                    word.starts_with(&path)
                        || word.contains(&format!("::{path}"))
                        || (in_use && word == forbidden)
                });
            if named {
                hits.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
            if in_use && code.contains(';') {
                in_use = false;
            }
        }
    }
    hits
}

#[test]
fn subagent_does_not_import_teams() {
    let hits = naming("subagent", "teams");
    assert!(
        hits.is_empty(),
        "subagent/ reaches into teams/ (use the TeamPort instead):\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_spawners_services_import_neither() {
    let mut hits = Vec::new();
    for service in ["tasks", "isolation", "remote"] {
        for above in ["subagent", "teams"] {
            hits.extend(naming(service, above));
        }
    }
    assert!(
        hits.is_empty(),
        "a service the spawner holds reaches up into it:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_check_sees_a_path_into_teams() {
    // The check itself: teams/ does name subagent/, so the same scan finds it there.
    assert!(!naming("teams", "subagent").is_empty());
}
