//! Grep: output modes, options, filters, limits and bad input.

use super::*;
use fleet_tools::builtin::grep::{MAX_LINE_CHARS, MAX_OUTPUT_CHARS};

#[tokio::test]
async fn grep_lists_matching_files_newest_first() {
    let dir = project();
    let root = dir.path();
    age(&root.join("src/main.rs"), 100);
    age(&root.join("src/net/tcp.rs"), 10);
    let out = run(&GrepTool, root, json!({"pattern": "fn \\w+"})).await;
    assert_eq!(
        out.content,
        format!(
            "Found 2 files\n{}\n{}",
            abs(root, "src/net/tcp.rs"),
            abs(root, "src/main.rs")
        )
    );
    let structured = out.structured.unwrap();
    assert_eq!(structured["mode"], "files_with_matches");
    assert_eq!(structured["numFiles"], 2);
}

#[tokio::test]
async fn grep_content_shows_paths_and_line_numbers() {
    let dir = project();
    let root = dir.path();
    let input = json!({"pattern": "println|connect", "output_mode": "content"});
    let out = run(&GrepTool, root, input).await;
    assert_eq!(
        lines(&out),
        vec![
            format!("{}:2:    println!(\"hello\");", abs(root, "src/main.rs")),
            format!("{}:1:pub fn connect() {{}}", abs(root, "src/net/tcp.rs")),
        ]
    );
    let structured = out.structured.unwrap();
    assert_eq!(structured["numLines"], 2);
    assert_eq!(structured["numMatches"], 2);

    let input = json!({"pattern": "println", "output_mode": "content", "-n": false});
    let out = run(&GrepTool, root, input).await;
    assert_eq!(
        out.content,
        format!("{}:    println!(\"hello\");", abs(root, "src/main.rs"))
    );
}

#[tokio::test]
async fn grep_count_gives_lines_per_file_and_a_total() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.txt", "x\nx x\ny\n");
    write(root, "b.txt", "x\n");
    let out = run(
        &GrepTool,
        root,
        json!({"pattern": "x", "output_mode": "count"}),
    )
    .await;
    assert_eq!(
        out.content,
        format!(
            "{}:2\n{}:1\n\nFound 3 matching lines across 2 files.",
            abs(root, "a.txt"),
            abs(root, "b.txt")
        )
    );
    assert_eq!(out.structured.unwrap()["numMatches"], 3);
}

#[tokio::test]
async fn grep_case_insensitive() {
    let dir = project();
    let root = dir.path();
    let sensitive = run(&GrepTool, root, json!({"pattern": "HELLO"})).await;
    assert_eq!(sensitive.content, "No files found");
    let insensitive = run(&GrepTool, root, json!({"pattern": "HELLO", "-i": true})).await;
    assert!(
        insensitive.content.starts_with("Found 2 files"),
        "{}",
        insensitive.content
    );
}

#[tokio::test]
async fn grep_context_lines_follow_rg_layout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = "one\ntwo\nHIT a\nfour\nfive\nsix\nseven\nHIT b\nnine\n";
    let file = abs(root, "f.txt");
    write(root, "f.txt", text);
    let after = json!({"pattern": "HIT", "output_mode": "content", "-A": 1});
    assert_eq!(
        lines(&run(&GrepTool, root, after).await),
        vec![
            format!("{file}:3:HIT a"),
            format!("{file}-4-four"),
            "--".to_string(),
            format!("{file}:8:HIT b"),
            format!("{file}-9-nine"),
        ]
    );
    let before = json!({"pattern": "HIT b", "output_mode": "content", "-B": 2});
    assert_eq!(
        lines(&run(&GrepTool, root, before).await),
        vec![
            format!("{file}-6-six"),
            format!("{file}-7-seven"),
            format!("{file}:8:HIT b"),
        ]
    );
    // With -C 2 the two groups touch (lines 1-5 and 6-9), so no separator appears.
    let around = json!({"pattern": "HIT", "output_mode": "content", "-C": 2});
    let out = run(&GrepTool, root, around).await;
    assert_eq!(out.content.lines().count(), 9);
    assert!(!out.content.contains("--"));
    // Context is ignored outside content mode.
    let files = json!({"pattern": "HIT", "-C": 2});
    assert!(run(&GrepTool, root, files)
        .await
        .content
        .starts_with("Found 1 file\n"));
}

#[tokio::test]
async fn grep_separates_files_when_showing_context() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.txt", "x\nhit\n");
    write(root, "b.txt", "hit\ny\n");
    let input = json!({"pattern": "hit", "output_mode": "content", "-C": 1});
    assert_eq!(
        lines(&run(&GrepTool, root, input).await),
        vec![
            format!("{}-1-x", abs(root, "a.txt")),
            format!("{}:2:hit", abs(root, "a.txt")),
            "--".to_string(),
            format!("{}:1:hit", abs(root, "b.txt")),
            format!("{}-2-y", abs(root, "b.txt")),
        ]
    );
}

#[tokio::test]
async fn grep_glob_filter_selects_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.ts", "needle");
    write(root, "web/b.tsx", "needle");
    write(root, "c.js", "needle");
    let out = run(
        &GrepTool,
        root,
        json!({"pattern": "needle", "glob": "*.{ts,tsx}"}),
    )
    .await;
    let mut found = lines(&out)[1..].to_vec();
    found.sort_unstable();
    assert_eq!(found, vec![abs(root, "a.ts"), abs(root, "web/b.tsx")]);
    let out = run(
        &GrepTool,
        root,
        json!({"pattern": "needle", "glob": "!*.ts"}),
    )
    .await;
    assert!(!out.content.contains("a.ts"), "{}", out.content);
    assert!(out.content.contains("c.js"), "{}", out.content);
}

#[tokio::test]
async fn grep_type_filter_uses_ripgrep_types() {
    let dir = project();
    let root = dir.path();
    write(root, "tool.py", "def main(): pass\n");
    let out = run(&GrepTool, root, json!({"pattern": "main", "type": "py"})).await;
    assert_eq!(
        out.content,
        format!("Found 1 file\n{}", abs(root, "tool.py"))
    );
    let out = run(&GrepTool, root, json!({"pattern": "main", "type": "rust"})).await;
    assert_eq!(
        out.content,
        format!("Found 1 file\n{}", abs(root, "src/main.rs"))
    );
    let err = fail(&GrepTool, root, json!({"pattern": "main", "type": "rs"})).await;
    assert!(err.contains("Unknown file type \"rs\""), "{err}");
    assert!(err.contains("Did you mean \"rust\""), "{err}");
    assert!(err.contains("py, js"), "{err}");
}

#[tokio::test]
async fn grep_multiline_spans_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let file = abs(root, "s.rs");
    write(root, "s.rs", "struct A {\n    x: u8,\n}\nstruct B;\n");
    let input =
        json!({"pattern": "struct A \\{.*?\\}", "multiline": true, "output_mode": "content"});
    assert_eq!(
        lines(&run(&GrepTool, root, input).await),
        vec![
            format!("{file}:1:struct A {{"),
            format!("{file}:2:    x: u8,"),
            format!("{file}:3:}}"),
        ]
    );
    let single = json!({"pattern": "struct A \\{.*?\\}", "output_mode": "content"});
    assert_eq!(
        run(&GrepTool, root, single).await.content,
        "No matches found"
    );
    let newline = fail(&GrepTool, root, json!({"pattern": "A \\{\\n"})).await;
    assert!(newline.contains("multiline: true"), "{newline}");
}

#[tokio::test]
async fn grep_head_limit_keeps_the_first_entries() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let file = abs(root, "many.txt");
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    write(root, "many.txt", text);
    let input = json!({"pattern": "line", "output_mode": "content", "head_limit": 3});
    let out = run(&GrepTool, root, input).await;
    let shown = lines(&out);
    assert_eq!(
        &shown[..3],
        &[
            format!("{file}:1:line 1"),
            format!("{file}:2:line 2"),
            format!("{file}:3:line 3"),
        ]
    );
    assert!(
        shown[4].contains("Showing the first 3 of 10 lines"),
        "{}",
        out.content
    );
    let structured = out.structured.unwrap();
    assert_eq!(structured["appliedLimit"], 3);
    assert_eq!(structured["numLines"], 3);

    for name in ["a", "b", "c"] {
        write(root, &format!("{name}.txt"), "line\n");
    }
    let input = json!({"pattern": "line", "head_limit": 2});
    let out = run(&GrepTool, root, input).await;
    assert!(
        out.content.starts_with("Found 4 files\n"),
        "{}",
        out.content
    );
    assert_eq!(
        out.content.lines().filter(|l| l.starts_with('/')).count(),
        2
    );
    assert!(out.content.contains("Showing the first 2 of 4 files"));
}

#[tokio::test]
async fn grep_caps_output_size_and_long_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let long = format!("needle {}\n", "x".repeat(2000));
    write(root, "long.txt", long.repeat(200));
    let out = run(
        &GrepTool,
        root,
        json!({"pattern": "needle", "output_mode": "content"}),
    )
    .await;
    assert!(
        out.content.len() < MAX_OUTPUT_CHARS + 500,
        "{}",
        out.content.len()
    );
    let first = lines(&out)[0];
    assert!(first.ends_with("more characters]"), "{first}");
    assert!(first.chars().count() < MAX_LINE_CHARS + 200);
    assert!(
        out.content.contains("Output truncated at"),
        "{}",
        out.content
    );
    assert!(out.content.contains("of 200 lines"), "{}", out.content);
}

#[tokio::test]
async fn grep_rejects_an_invalid_regex() {
    let dir = project();
    let err = fail(&GrepTool, dir.path(), json!({"pattern": "fn main("})).await;
    assert!(err.contains("Invalid regex \"fn main(\""), "{err}");
    assert!(err.contains("unclosed group"), "{err}");
    assert!(err.contains("backslash"), "{err}");
}

#[tokio::test]
async fn grep_searches_a_single_file() {
    let dir = project();
    let root = dir.path();
    let input = json!({"pattern": "Hello", "path": "README.md", "output_mode": "content"});
    let out = run(&GrepTool, root, input).await;
    assert_eq!(
        out.content,
        format!("{}:2:Hello world", abs(root, "README.md"))
    );
    // A file named explicitly is searched even when the filters would skip it.
    let input = json!({"pattern": "Hello", "path": "README.md", "type": "rust"});
    assert!(run(&GrepTool, root, input)
        .await
        .content
        .starts_with("Found 1 file"));
}

#[tokio::test]
async fn grep_reports_no_matches_per_mode() {
    let dir = project();
    let root = dir.path();
    let nothing = "zzz_not_there";
    let files = run(&GrepTool, root, json!({"pattern": nothing})).await;
    assert_eq!(files.content, "No files found");
    let content = json!({"pattern": nothing, "output_mode": "content"});
    assert_eq!(
        run(&GrepTool, root, content).await.content,
        "No matches found"
    );
    let count = json!({"pattern": nothing, "output_mode": "count"});
    assert_eq!(
        run(&GrepTool, root, count).await.content,
        "No matches found"
    );
}

#[tokio::test]
async fn grep_skips_binary_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "blob.bin", b"needle\x00\x01\x02needle\n");
    write(root, "text.txt", "needle\n");
    let out = run(&GrepTool, root, json!({"pattern": "needle"})).await;
    assert_eq!(
        out.content,
        format!("Found 1 file\n{}", abs(root, "text.txt"))
    );
}

#[tokio::test]
async fn grep_drops_lines_already_found_when_a_file_turns_out_binary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The NUL byte lies past the searcher's first buffer, after a match was already seen.
    let mut data = b"needle\n".to_vec();
    data.extend(std::iter::repeat_n(b'a', 300_000));
    data.extend(b"\x00needle\n");
    write(root, "late.bin", data);
    write(root, "text.txt", "needle\n");
    let input = json!({"pattern": "needle", "output_mode": "content"});
    let out = run(&GrepTool, root, input).await;
    assert_eq!(out.content, format!("{}:1:needle", abs(root, "text.txt")));
}

#[tokio::test]
async fn grep_respects_gitignore_and_searches_hidden_files() {
    let dir = project();
    let root = dir.path();
    git_init(root);
    write(root, ".gitignore", "target/\n");
    write(root, "target/gen.rs", "SECRET\n");
    write(root, ".env.example", "SECRET=1\n");
    let out = run(&GrepTool, root, json!({"pattern": "SECRET"})).await;
    assert_eq!(
        out.content,
        format!("Found 1 file\n{}", abs(root, ".env.example"))
    );
}

#[tokio::test]
async fn grep_rejects_a_missing_path() {
    let dir = project();
    let err = fail(
        &GrepTool,
        dir.path(),
        json!({"pattern": "x", "path": "nope/x.rs"}),
    )
    .await;
    assert!(err.contains("Path does not exist"), "{err}");
    assert!(err.contains(&abs(dir.path(), "nope/x.rs")), "{err}");
}
