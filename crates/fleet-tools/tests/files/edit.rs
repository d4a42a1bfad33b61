//! Edit: unique matches, line endings, creation, and the reports it returns.

use crate::files::{failure, Fixture};
use fleet_tools::ToolError;
use serde_json::json;
use std::path::Path;

#[tokio::test]
async fn edit_replaces_a_unique_string_and_shows_the_result() {
    let fx = Fixture::new();
    fx.put("lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    fx.read_file("lib.rs").await;
    let out = fx
        .replace("lib.rs", "fn b() {}", "fn b2() {}")
        .await
        .unwrap();
    assert_eq!(fx.text("lib.rs"), "fn a() {}\nfn b2() {}\nfn c() {}\n");
    assert!(out.content.contains("has been updated"), "{}", out.content);
    assert!(out.content.contains("2\tfn b2() {}"), "{}", out.content);
    assert!(out.content.contains("1\tfn a() {}"), "{}", out.content);

    // The edit was recorded: a second one needs no new Read.
    fx.replace("lib.rs", "fn c() {}", "fn c2() {}")
        .await
        .unwrap();
    assert_eq!(fx.text("lib.rs"), "fn a() {}\nfn b2() {}\nfn c2() {}\n");
}

#[tokio::test]
async fn edit_requires_a_read_and_an_unchanged_file() {
    let fx = Fixture::new();
    fx.put("f.txt", "one\n");
    let message = failure(fx.replace("f.txt", "one", "two").await);
    assert!(message.contains("not read"), "{message}");
    fx.read_file("f.txt").await;
    fx.put("f.txt", "uno\n");
    let message = failure(fx.replace("f.txt", "uno", "two").await);
    assert!(message.contains("changed on disk"), "{message}");
    assert_eq!(fx.text("f.txt"), "uno\n");
}

#[tokio::test]
async fn edit_reports_a_string_that_is_not_there() {
    let fx = Fixture::new();
    fx.put("q.rs", "fn main() {\n    let s = “hi”;\n}\n");
    fx.read_file("q.rs").await;
    let message = failure(fx.replace("q.rs", "let s =  \"hi\";", "let s = 1;").await);
    assert!(message.contains("was not found"), "{message}");
    assert!(message.contains("lines 2-2"), "{message}");
    assert!(message.contains("2\t    let s = “hi”;"), "{message}");

    let message = failure(fx.replace("q.rs", "2\t    let x = 5;", "").await);
    assert!(
        message.contains("line-number") || message.contains("prefixes"),
        "{message}"
    );
    assert_eq!(fx.text("q.rs"), "fn main() {\n    let s = “hi”;\n}\n");
}

#[tokio::test]
async fn edit_with_several_matches_asks_for_context_or_replace_all() {
    let fx = Fixture::new();
    fx.put("m.txt", "x = 1\ny = 2\nx = 1\nx = 1\n");
    fx.read_file("m.txt").await;
    let message = failure(fx.replace("m.txt", "x = 1", "x = 9").await);
    assert!(message.contains("Found 3 matches"), "{message}");
    assert!(message.contains("lines 1, 3, 4"), "{message}");
    assert!(message.contains("replace_all"), "{message}");

    let input = json!({
        "file_path": fx.arg("m.txt"), "old_string": "x = 1", "new_string": "x = 9",
        "replace_all": true,
    });
    let out = fx.edit(input).await.unwrap();
    assert_eq!(fx.text("m.txt"), "x = 9\ny = 2\nx = 9\nx = 9\n");
    assert!(
        out.content.contains("3 matches replaced"),
        "{}",
        out.content
    );
    assert_eq!(out.structured.unwrap()["replaceAll"], true);
}

#[tokio::test]
async fn edit_refuses_identical_strings() {
    let fx = Fixture::new();
    fx.put("f.txt", "same\n");
    fx.read_file("f.txt").await;
    let message = failure(fx.replace("f.txt", "same", "same").await);
    assert!(message.contains("the same"), "{message}");
}

#[tokio::test]
async fn edit_keeps_crlf_line_endings() {
    let fx = Fixture::new();
    fx.put("win.txt", "one\r\ntwo\r\nthree\r\n");
    fx.read_file("win.txt").await;
    fx.replace("win.txt", "one\ntwo", "uno\ndos\nmas")
        .await
        .unwrap();
    assert_eq!(fx.text("win.txt"), "uno\r\ndos\r\nmas\r\nthree\r\n");
}

#[tokio::test]
async fn edit_with_empty_old_string_creates_a_file() {
    let fx = Fixture::new();
    let out = fx.replace("new/dir/made.txt", "", "hello\n").await.unwrap();
    assert!(out.content.contains("created"), "{}", out.content);
    assert_eq!(fx.text("new/dir/made.txt"), "hello\n");
    fx.replace("new/dir/made.txt", "hello", "bye")
        .await
        .unwrap();
    assert_eq!(fx.text("new/dir/made.txt"), "bye\n");

    let message = failure(fx.replace("new/dir/made.txt", "", "more").await);
    assert!(message.contains("already has content"), "{message}");

    let message = failure(fx.replace("absent.txt", "x", "y").await);
    assert!(message.contains("does not exist"), "{message}");
}

#[tokio::test]
async fn edit_deleting_a_line_removes_its_line_break() {
    let fx = Fixture::new();
    fx.put("d.txt", "keep\ndrop me\nkeep too\n");
    fx.read_file("d.txt").await;
    fx.replace("d.txt", "drop me", "").await.unwrap();
    assert_eq!(fx.text("d.txt"), "keep\nkeep too\n");
}

#[tokio::test]
async fn edit_reports_a_structured_patch() {
    let fx = Fixture::new();
    let original: String = (1..=10).map(|n| format!("l{n}\n")).collect();
    fx.put("p.txt", &original);
    fx.read_file("p.txt").await;
    let out = fx.replace("p.txt", "l5\n", "L5\n").await.unwrap();
    assert_eq!(
        out.structured.unwrap(),
        json!({
            "filePath": fx.arg("p.txt"),
            "oldString": "l5\n",
            "newString": "L5\n",
            "originalFile": original,
            "structuredPatch": [{
                "oldStart": 2, "oldLines": 7, "newStart": 2, "newLines": 7,
                "lines": [" l2", " l3", " l4", "-l5", "+L5", " l6", " l7", " l8"],
            }],
            "userModified": false,
            "replaceAll": false,
        })
    );
}

#[tokio::test]
async fn edit_refuses_text_that_is_not_utf8() {
    let fx = Fixture::new();
    fx.put("bin.txt", b"ab\xff\xfecd\n");
    fx.read_file("bin.txt").await;
    let message = failure(fx.replace("bin.txt", "ab", "xy").await);
    assert!(message.contains("UTF-8"), "{message}");
    assert_eq!(
        std::fs::read(fx.path("bin.txt")).unwrap(),
        b"ab\xff\xfecd\n"
    );
}

#[tokio::test]
async fn read_then_edit_through_a_path_with_dot_dot() {
    let fx = Fixture::new();
    fx.put("a/b.txt", "before\n");
    std::fs::create_dir(fx.path("c")).unwrap();
    let via = format!("{}/c/../a/b.txt", fx.root.display());
    fx.read(json!({ "file_path": via })).await.unwrap();
    // Same file, named differently: the read counts.
    fx.replace("a/b.txt", "before", "after").await.unwrap();
    assert_eq!(fx.text("a/b.txt"), "after\n");
    assert!(Path::new(&fx.arg("a/b.txt")).exists());
}

/// The failures above keep their kind, so a caller can tell a stale file from a missing string
/// without reading the text.
#[tokio::test]
async fn edit_failures_keep_their_kind() {
    let fx = Fixture::new();
    fx.put("k.txt", "a\na\n");
    let unread = fx.replace("k.txt", "a", "b").await;
    assert!(
        matches!(&unread, Err(ToolError::Stale { path, .. }) if path.ends_with("k.txt")),
        "{unread:?}"
    );
    fx.read_file("k.txt").await;
    let ambiguous = fx.replace("k.txt", "a", "b").await;
    assert!(
        matches!(ambiguous, Err(ToolError::Ambiguous { count: 2, .. })),
        "{ambiguous:?}"
    );
    let missing = fx.replace("k.txt", "zzz", "b").await;
    assert!(
        matches!(missing, Err(ToolError::NoMatch { .. })),
        "{missing:?}"
    );
    let same = fx.replace("k.txt", "a", "a").await;
    assert!(
        matches!(
            same,
            Err(ToolError::BadValue {
                field: "new_string",
                ..
            })
        ),
        "{same:?}"
    );
    let gone = fx.replace("gone.txt", "a", "b").await;
    assert!(matches!(gone, Err(ToolError::NotFound { .. })), "{gone:?}");
    assert!(!unread.unwrap_err().is_refusal());
}
