//! Read: numbering, windows, limits, refusals and the errors that point to the right file.

use crate::files::{failure, numbered_lines, Fixture};
use fleet_tools::builtin::{EditTool, ReadTool, WriteTool};
use fleet_tools::{Access, Tool, ToolError};
use serde_json::json;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn read_numbers_lines_like_cat_n() {
    let fx = Fixture::new();
    fx.put("a.txt", "hello world\n\n  indented\nlast without newline");
    let out = fx.read_file("a.txt").await;
    assert!(!out.is_error);
    assert_eq!(
        out.content,
        "1\thello world\n2\t\n3\t  indented\n4\tlast without newline"
    );
}

#[tokio::test]
async fn read_offset_and_limit_pick_a_window() {
    let fx = Fixture::new();
    fx.put("a.txt", numbered_lines(1..=10));
    let input = json!({ "file_path": fx.arg("a.txt"), "offset": 4, "limit": 3 });
    let out = fx.read(input).await.unwrap();
    let (body, note) = out.content.split_once("\n\n").unwrap();
    assert_eq!(body, "4\tline 4\n5\tline 5\n6\tline 6");
    assert!(note.contains("offset=7"), "{note}");
    assert!(note.contains("of 10"), "{note}");
}

#[tokio::test]
async fn read_stops_at_2000_lines_and_says_how_to_go_on() {
    let fx = Fixture::new();
    fx.put("long.txt", numbered_lines(1..=2500));
    let out = fx.read_file("long.txt").await;
    let (body, note) = out.content.split_once("\n\n").unwrap();
    assert_eq!(body.lines().count(), 2000);
    assert_eq!(body.lines().last().unwrap(), "2000\tline 2000");
    assert!(note.contains("offset=2001"), "{note}");
    let structured = out.structured.unwrap();
    assert_eq!(structured["file"]["numLines"], 2000);
    assert_eq!(structured["file"]["totalLines"], 2500);

    let rest = fx
        .read(json!({ "file_path": fx.arg("long.txt"), "offset": 2001 }))
        .await
        .unwrap();
    assert_eq!(rest.content.lines().count(), 500);
    assert!(rest.content.ends_with("2500\tline 2500"));
}

#[tokio::test]
async fn read_cuts_long_lines_and_keeps_the_rest() {
    let fx = Fixture::new();
    let long = "x".repeat(10_000_000);
    fx.put("min.js", format!("{long}\nsecond\n"));
    let out = fx.read_file("min.js").await;
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with(&format!("1\t{}", "x".repeat(2000))));
    assert!(!lines[0].contains(&"x".repeat(2001)));
    assert!(
        lines[0].contains("10000000"),
        "marker: {}",
        &lines[0][2000..]
    );
    assert_eq!(lines[1], "2\tsecond");
    assert!(out.content.len() < 3000);
}

#[tokio::test]
async fn read_keeps_output_under_its_byte_budget() {
    let fx = Fixture::new();
    let line = "y".repeat(1000);
    let text: String = (0..2000).map(|_| format!("{line}\n")).collect();
    fx.put("wide.txt", text);
    let out = fx.read_file("wide.txt").await;
    let (body, note) = out.content.split_once("\n\n").unwrap();
    let shown = body.lines().count();
    assert!(shown > 100 && shown < 2000, "{shown} lines shown");
    assert!(out.content.len() <= 256 * 1024 + 1024);
    assert!(note.contains(&format!("offset={}", shown + 1)), "{note}");
}

#[tokio::test]
async fn read_refuses_binary_files() {
    let fx = Fixture::new();
    fx.put("blob.dat", b"\x7fELF\x02\x01\x01\x00\x00\x00rest");
    let message = failure(fx.read(json!({ "file_path": fx.arg("blob.dat") })).await);
    assert!(message.contains("binary"), "{message}");
    assert!(message.contains("NUL"), "{message}");

    fx.put("logo.png", "not really a png");
    let message = failure(fx.read(json!({ "file_path": fx.arg("logo.png") })).await);
    assert!(message.contains("image"), "{message}");

    fx.put("bundle.zip", "PK");
    let message = failure(fx.read(json!({ "file_path": fx.arg("bundle.zip") })).await);
    assert!(message.contains("binary"), "{message}");
}

#[tokio::test]
async fn read_of_missing_file_suggests_similar_names() {
    let fx = Fixture::new();
    fx.put("src/config.toml", "a");
    fx.put("src/main.rs", "b");
    fx.put("src/unrelated.txt", "c");
    let message = failure(
        fx.read(json!({ "file_path": fx.arg("src/config.yaml") }))
            .await,
    );
    assert!(message.contains("does not exist"), "{message}");
    assert!(message.contains(&fx.arg("src/config.toml")), "{message}");
    assert!(!message.contains("unrelated"), "{message}");

    let message = failure(fx.read(json!({ "file_path": fx.arg("src/mian.rs") })).await);
    assert!(message.contains(&fx.arg("src/main.rs")), "{message}");

    let message = failure(
        fx.read(json!({ "file_path": fx.arg("nowhere/x.rs") }))
            .await,
    );
    assert!(message.contains("does not exist either"), "{message}");
}

#[tokio::test]
async fn read_of_missing_absolute_path_suggests_the_cwd_relative_one() {
    let fx = Fixture::new();
    fx.put("fleet-files-test-sub/lib.rs", "pub fn x() {}\n");
    let message = failure(
        fx.read(json!({ "file_path": "/fleet-files-test-sub/lib.rs" }))
            .await,
    );
    let expected = format!("Did you mean {}?", fx.arg("fleet-files-test-sub/lib.rs"));
    assert!(message.contains(&expected), "{message}");
}

#[tokio::test]
async fn read_refuses_relative_paths_and_gives_the_absolute_one() {
    let fx = Fixture::new();
    fx.put("notes.txt", "hi\n");
    let message = failure(fx.read(json!({ "file_path": "notes.txt" })).await);
    assert!(message.contains("absolute"), "{message}");
    assert!(message.contains(&fx.arg("notes.txt")), "{message}");
}

#[tokio::test]
async fn read_refuses_directories() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path("sub")).unwrap();
    let message = failure(fx.read(json!({ "file_path": fx.arg("sub") })).await);
    assert!(message.contains("directory"), "{message}");
    assert!(message.contains("Glob"), "{message}");
}

#[tokio::test]
async fn read_of_empty_file_and_past_the_end() {
    let fx = Fixture::new();
    fx.put("empty.txt", "");
    let out = fx.read_file("empty.txt").await;
    assert!(!out.is_error);
    assert!(out.content.contains("empty"), "{}", out.content);

    fx.put("three.txt", "a\nb\nc\n");
    let out = fx
        .read(json!({ "file_path": fx.arg("three.txt"), "offset": 9 }))
        .await
        .unwrap();
    assert!(out.content.contains("has 3 lines"), "{}", out.content);
}

#[tokio::test]
async fn read_shows_invalid_utf8_lossily_and_crlf_without_cr() {
    let fx = Fixture::new();
    fx.put("latin1.txt", b"caf\xe9\r\nok\r\n");
    let out = fx.read_file("latin1.txt").await;
    assert_eq!(out.content, "1\tcaf\u{FFFD}\n2\tok");
}

#[tokio::test]
async fn read_reports_structured_output() {
    let fx = Fixture::new();
    fx.put("s.txt", "one\ntwo\nthree\n");
    let input = json!({ "file_path": fx.arg("s.txt"), "offset": 2, "limit": 1 });
    let out = fx.read(input).await.unwrap();
    assert_eq!(
        out.structured.unwrap(),
        json!({
            "type": "text",
            "file": {
                "filePath": fx.arg("s.txt"),
                "content": "two",
                "numLines": 1,
                "startLine": 2,
                "totalLines": 3,
            }
        })
    );
}

#[tokio::test]
async fn read_stops_when_cancelled() {
    let fx = Fixture::new();
    fx.put("a.txt", "a\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = fx.ctx.with_cancel(cancel);
    let result = ReadTool
        .call(json!({ "file_path": fx.arg("a.txt") }), &ctx)
        .await;
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
}

#[tokio::test]
async fn bad_input_names_the_field() {
    let fx = Fixture::new();
    let result = fx
        .read(json!({ "file_path": fx.arg("a.txt"), "offset": "ten" }))
        .await;
    match result {
        Err(ToolError::InvalidInput { tool, message }) => {
            assert_eq!(tool, "Read");
            assert!(message.starts_with("offset"), "{message}");
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    let result = fx
        .edit(json!({ "file_path": fx.arg("a.txt"), "old_string": "x" }))
        .await;
    match result {
        Err(ToolError::InvalidInput { tool, message }) => {
            assert_eq!(tool, "Edit");
            assert!(message.contains("new_string"), "{message}");
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[tokio::test]
async fn numeric_strings_are_taken_as_line_numbers() {
    let fx = Fixture::new();
    fx.put("a.txt", "a\nb\nc\n");
    let input = json!({ "file_path": fx.arg("a.txt"), "offset": "2", "limit": 1.0 });
    let out = fx.read(input).await.unwrap();
    assert!(out.content.starts_with("2\tb\n\n"), "{}", out.content);
    let result = fx
        .read(json!({ "file_path": fx.arg("a.txt"), "limit": -1 }))
        .await;
    assert!(
        matches!(&result, Err(ToolError::InvalidInput { message, .. }) if message.starts_with("limit")),
        "{result:?}"
    );
}

#[tokio::test]
async fn extra_fields_are_tolerated() {
    let fx = Fixture::new();
    fx.put("a.txt", "a\n");
    let out = fx
        .read(json!({ "file_path": fx.arg("a.txt"), "pages": "1-2" }))
        .await
        .unwrap();
    assert_eq!(out.content, "1\ta");
}

#[test]
fn schemas_describe_fields_and_access_names_the_path() {
    let fx = Fixture::new();
    let schema = ReadTool.input_schema();
    assert_eq!(schema["required"], json!(["file_path"]));
    let description = schema["properties"]["file_path"]["description"]
        .as_str()
        .unwrap();
    assert!(description.contains("Absolute"), "{description}");
    let edit = EditTool.input_schema();
    assert!(edit["properties"]["replace_all"]["description"].is_string());
    assert!(ReadTool.is_read_only() && !WriteTool.is_read_only() && !EditTool.is_read_only());

    let input = json!({ "file_path": "/x/y.rs", "content": "" });
    assert_eq!(
        WriteTool.access(&input, &fx.ctx),
        Access::Write(PathBuf::from("/x/y.rs"))
    );
    assert_eq!(
        ReadTool.access(&json!({ "file_path": "rel.rs" }), &fx.ctx),
        Access::Read(fx.path("rel.rs"))
    );
}
