//! `Tool::propose`: the change a Write or Edit would make, worked out with the checks the call
//! itself makes and nothing written, so a permission question can show the diff — and a call
//! that would fail is answered before anyone is asked.

use crate::files::Fixture;
use fleet_protocol::{ChangeKind, DiffRow, DiffTag, ProposedChange, Unshown};
use fleet_tools::builtin::{EditTool, WriteTool};
use fleet_tools::{Tool, ToolError};
use serde_json::{json, Value};

async fn propose_edit(fx: &Fixture, input: Value) -> Result<Option<ProposedChange>, ToolError> {
    EditTool.propose(&input, &fx.ctx).await
}

async fn propose_write(fx: &Fixture, relative: &str, content: &str) -> ProposedChange {
    let input = json!({ "file_path": fx.arg(relative), "content": content });
    WriteTool.propose(&input, &fx.ctx).await.unwrap().unwrap()
}

/// The changed rows: sign, line number in the file, text.
fn changed(change: &ProposedChange) -> Vec<(char, usize, String)> {
    change
        .all_rows()
        .into_iter()
        .filter_map(|row| match row {
            DiffRow::Line { tag, number, text } if tag != DiffTag::Context => {
                let sign = if tag == DiffTag::Delete { '-' } else { '+' };
                Some((sign, number, text.to_string()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_edit_is_proposed_with_the_files_line_numbers_and_nothing_written() {
    let fx = Fixture::new();
    let text = crate::files::numbered_lines(1..=60);
    fx.put("f.txt", &text);
    fx.read_file("f.txt").await;
    let input = json!({"file_path": fx.arg("f.txt"), "old_string": "line 42\n",
                       "new_string": "forty-two\nand more\n"});
    let change = propose_edit(&fx, input).await.unwrap().unwrap();
    assert_eq!(change.kind, ChangeKind::Update);
    assert_eq!(change.path, fx.path("f.txt"));
    assert_eq!(
        changed(&change),
        [
            ('-', 42, "line 42".to_string()),
            ('+', 42, "forty-two".to_string()),
            ('+', 43, "and more".to_string()),
        ]
    );
    assert_eq!(fx.text("f.txt"), text, "proposing changed the file");
}

#[tokio::test]
async fn an_edit_that_would_fail_is_refused_when_proposed() {
    let fx = Fixture::new();
    fx.put("f.txt", "one\ntwo\none\n");
    let edit =
        |old: &str| json!({"file_path": fx.arg("f.txt"), "old_string": old, "new_string": "x"});
    let unread = propose_edit(&fx, edit("two")).await.unwrap_err();
    assert!(matches!(unread, ToolError::Stale { .. }), "{unread}");
    assert!(unread.to_string().contains("not read"), "{unread}");

    fx.read_file("f.txt").await;
    let missing = propose_edit(&fx, edit("three")).await.unwrap_err();
    assert!(matches!(missing, ToolError::NoMatch { .. }), "{missing}");
    let twice = propose_edit(&fx, edit("one")).await.unwrap_err();
    assert!(
        matches!(twice, ToolError::Ambiguous { count: 2, .. }),
        "{twice}"
    );

    fx.put("f.txt", "one\nTWO\none\n");
    let changed = propose_edit(&fx, edit("TWO")).await.unwrap_err();
    assert!(changed.to_string().contains("changed on disk"), "{changed}");
}

#[tokio::test]
async fn a_write_is_proposed_as_a_new_file_or_as_the_diff_against_the_old_one() {
    let fx = Fixture::new();
    let created = propose_write(&fx, "sub/new.txt", "a\nb\nc\n").await;
    assert_eq!(created.kind, ChangeKind::Create);
    assert_eq!(
        changed(&created),
        [
            ('+', 1, "a".to_string()),
            ('+', 2, "b".to_string()),
            ('+', 3, "c".to_string())
        ]
    );
    assert!(!fx.path("sub").exists(), "proposing made the folder");

    fx.put("old.txt", "keep\nold\nkeep\n");
    let input = json!({ "file_path": fx.arg("old.txt"), "content": "keep\nnew\nkeep\n" });
    let unread = WriteTool.propose(&input, &fx.ctx).await.unwrap_err();
    assert!(unread.to_string().contains("not read"), "{unread}");
    fx.read_file("old.txt").await;
    let replaced = propose_write(&fx, "old.txt", "keep\nnew\nkeep\n").await;
    assert_eq!(replaced.kind, ChangeKind::Update);
    assert_eq!(
        changed(&replaced),
        [('-', 2, "old".to_string()), ('+', 2, "new".to_string())]
    );
    assert_eq!(fx.text("old.txt"), "keep\nold\nkeep\n");

    // Read refuses binary files, so the agent's view of it is recorded directly.
    let bytes = [0xffu8, 0xfe, 0x00];
    let binary_path = fx.put("bin.dat", bytes);
    fx.ctx.files.record(
        &binary_path,
        fleet_tools::file_state::Seen::of_bytes(None, &bytes),
    );
    let binary = propose_write(&fx, "bin.dat", "text\n").await;
    assert_eq!(binary.unshown, Some(Unshown::NotText));
}

#[tokio::test]
async fn tools_that_change_no_file_propose_nothing() {
    let fx = Fixture::new();
    fx.put("r.txt", "x\n");
    let read = fleet_tools::builtin::ReadTool
        .propose(&json!({"file_path": fx.arg("r.txt")}), &fx.ctx)
        .await
        .unwrap();
    assert_eq!(read, None);
}
