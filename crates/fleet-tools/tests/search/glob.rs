//! Glob: patterns, order, ignore rules, the cap and bad input.

use super::*;
use fleet_tools::Access;

#[tokio::test]
async fn glob_double_star_finds_files_at_any_depth() {
    let dir = project();
    let root = dir.path();
    let out = run(&GlobTool, root, json!({"pattern": "**/*.rs"})).await;
    let mut found = lines(&out);
    found.sort_unstable();
    let mut expected = vec![
        abs(root, "src/main.rs"),
        abs(root, "src/net/mod.rs"),
        abs(root, "src/net/tcp.rs"),
    ];
    expected.sort_unstable();
    assert_eq!(found, expected);
    let structured = out.structured.unwrap();
    assert_eq!(structured["numFiles"], 3);
    assert_eq!(structured["truncated"], false);
}

#[tokio::test]
async fn glob_single_star_matches_the_top_level_only() {
    let dir = project();
    let root = dir.path();
    let out = run(&GlobTool, root, json!({"pattern": "*.toml"})).await;
    assert_eq!(lines(&out), vec![abs(root, "Cargo.toml")]);
}

#[tokio::test]
async fn glob_with_a_folder_prefix_searches_under_it() {
    let dir = project();
    let root = dir.path();
    write(root, "other/net/mod.rs", "");
    let out = run(&GlobTool, root, json!({"pattern": "src/**/mod.rs"})).await;
    assert_eq!(lines(&out), vec![abs(root, "src/net/mod.rs")]);
}

#[tokio::test]
async fn glob_path_may_be_relative_to_the_cwd() {
    let dir = project();
    let root = dir.path();
    let out = run(
        &GlobTool,
        root,
        json!({"pattern": "*.toml", "path": "crates/inner"}),
    )
    .await;
    assert_eq!(lines(&out), vec![abs(root, "crates/inner/Cargo.toml")]);
    let access = GlobTool.access(&json!({"pattern": "*", "path": "crates"}), &ctx(root));
    assert_eq!(access, Access::Read(root.join("crates")));
}

#[tokio::test]
async fn glob_lists_newest_first_then_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let old = write(root, "a_old.txt", "");
    let new = write(root, "z_new.txt", "");
    let tie_b = write(root, "tie_b.txt", "");
    let tie_a = write(root, "tie_a.txt", "");
    age(&old, 3000);
    age(&new, 10);
    age(&tie_a, 500);
    age(&tie_b, 500);
    // Both ties must carry exactly the same time for the path order to decide.
    let tie_time = fs::metadata(&tie_a).unwrap().modified().unwrap();
    File::options()
        .write(true)
        .open(&tie_b)
        .unwrap()
        .set_modified(tie_time)
        .unwrap();
    let out = run(&GlobTool, root, json!({"pattern": "*.txt"})).await;
    assert_eq!(
        lines(&out),
        vec![
            abs(root, "z_new.txt"),
            abs(root, "tie_a.txt"),
            abs(root, "tie_b.txt"),
            abs(root, "a_old.txt"),
        ]
    );
}

#[tokio::test]
async fn glob_respects_gitignore_includes_hidden_files_and_skips_git() {
    let dir = project();
    let root = dir.path();
    git_init(root);
    write(root, ".gitignore", "target/\n*.log\n");
    write(root, "target/debug/build.rs", "");
    write(root, "debug.log", "");
    write(root, ".github/workflows/ci.yml", "");
    let all = run(&GlobTool, root, json!({"pattern": "**/*"})).await;
    let found = lines(&all);
    assert!(found.contains(&abs(root, ".github/workflows/ci.yml").as_str()));
    assert!(found.contains(&abs(root, ".gitignore").as_str()));
    assert!(!found.iter().any(|p| p.contains("/target/")), "{found:?}");
    assert!(!found.iter().any(|p| p.ends_with("debug.log")), "{found:?}");
    assert!(!found.iter().any(|p| p.contains("/.git/")), "{found:?}");
}

#[tokio::test]
async fn glob_respects_dot_ignore_files_outside_git() {
    let dir = project();
    let root = dir.path();
    write(root, ".ignore", "src/net/\n");
    let out = run(&GlobTool, root, json!({"pattern": "**/*.rs"})).await;
    assert_eq!(lines(&out), vec![abs(root, "src/main.rs")]);
}

#[tokio::test]
async fn glob_caps_results_and_says_how_to_narrow() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..130 {
        let path = write(root, &format!("f{i:03}.txt"), "");
        age(&path, 1000 - i);
    }
    let out = run(&GlobTool, root, json!({"pattern": "*.txt"})).await;
    let found = lines(&out);
    assert_eq!(found.len(), 101);
    assert_eq!(found[0], abs(root, "f129.txt"));
    assert_eq!(found[99], abs(root, "f030.txt"));
    assert!(
        found[100].starts_with("(Results are truncated"),
        "{}",
        found[100]
    );
    assert!(found[100].contains("130"));
    assert!(found[100].contains("more specific pattern or path"));
    let structured = out.structured.unwrap();
    assert_eq!(structured["numFiles"], 100);
    assert_eq!(structured["truncated"], true);
}

#[tokio::test]
async fn glob_reports_no_files() {
    let dir = project();
    let out = run(&GlobTool, dir.path(), json!({"pattern": "**/*.py"})).await;
    assert_eq!(out.content, "No files found");
}

#[tokio::test]
async fn glob_rejects_a_missing_or_non_folder_path() {
    let dir = project();
    let root = dir.path();
    let missing = fail(&GlobTool, root, json!({"pattern": "*", "path": "SRC"})).await;
    assert!(missing.contains("Folder does not exist"), "{missing}");
    assert!(
        missing.contains(&format!("Did you mean {}", abs(root, "src"))),
        "{missing}"
    );
    let file = fail(
        &GlobTool,
        root,
        json!({"pattern": "*", "path": "Cargo.toml"}),
    )
    .await;
    assert!(file.contains("not a folder"), "{file}");
    let bad = fail(&GlobTool, root, json!({"pattern": "src/[a"})).await;
    assert!(bad.contains("Invalid glob pattern"), "{bad}");
}
