//! Write: creating files, and replacing only what the agent has read.

use crate::files::{failure, Fixture};
use fleet_tools::builtin::WriteTool;
use fleet_tools::Tool;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[tokio::test]
async fn write_creates_a_new_file_and_its_folders() {
    let fx = Fixture::new();
    let out = fx.write("deep/er/new.txt", "fresh\n").await.unwrap();
    assert_eq!(
        out.content,
        format!(
            "File created successfully at: {}",
            fx.arg("deep/er/new.txt")
        )
    );
    assert_eq!(fx.text("deep/er/new.txt"), "fresh\n");
    let structured = out.structured.unwrap();
    assert_eq!(structured["type"], "create");
    assert_eq!(structured["content"], "fresh\n");
    let names: Vec<_> = std::fs::read_dir(fx.path("deep/er"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "temporary files left behind: {names:?}");
}

#[tokio::test]
async fn write_refuses_to_replace_a_file_it_has_not_read() {
    let fx = Fixture::new();
    fx.put("keep.txt", "precious\n");
    let message = failure(fx.write("keep.txt", "gone\n").await);
    assert!(message.contains("not read"), "{message}");
    assert!(message.contains("Read it first"), "{message}");
    assert_eq!(fx.text("keep.txt"), "precious\n");
}

#[tokio::test]
async fn write_replaces_a_file_after_reading_it_and_again_without_rereading() {
    let fx = Fixture::new();
    fx.put("f.txt", "a\nb\nc\n");
    fx.read_file("f.txt").await;
    let out = fx.write("f.txt", "a\nB\nc\n").await.unwrap();
    assert!(out.content.contains("has been updated"), "{}", out.content);
    assert!(out.content.contains("2\tB"), "{}", out.content);
    let structured = out.structured.unwrap();
    assert_eq!(structured["type"], "update");
    assert_eq!(structured["originalFile"], "a\nb\nc\n");
    assert_eq!(fx.text("f.txt"), "a\nB\nc\n");

    fx.write("f.txt", "second\n").await.unwrap();
    assert_eq!(fx.text("f.txt"), "second\n");
}

#[tokio::test]
async fn write_refuses_after_the_file_changed_on_disk() {
    let fx = Fixture::new();
    fx.put("f.txt", "alpha\n");
    fx.read_file("f.txt").await;
    // Same length: only the content tells the versions apart.
    fx.put("f.txt", "omega\n");
    let message = failure(fx.write("f.txt", "mine\n").await);
    assert!(message.contains("changed on disk"), "{message}");
    assert!(message.contains("Read it again"), "{message}");
    assert_eq!(fx.text("f.txt"), "omega\n");

    fx.read_file("f.txt").await;
    fx.write("f.txt", "mine\n").await.unwrap();
    assert_eq!(fx.text("f.txt"), "mine\n");
}

#[tokio::test]
async fn write_keeps_permissions_and_follows_symlinks() {
    let fx = Fixture::new();
    let real = fx.put("real.sh", "#!/bin/sh\n");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink(&real, fx.path("link.sh")).unwrap();
    fx.read_file("link.sh").await;
    fx.write("link.sh", "#!/bin/sh\necho hi\n").await.unwrap();
    assert_eq!(fx.text("real.sh"), "#!/bin/sh\necho hi\n");
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    let link = std::fs::symlink_metadata(fx.path("link.sh")).unwrap();
    assert!(link.file_type().is_symlink());
}

#[tokio::test]
async fn write_refuses_directories_and_relative_paths() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path("d")).unwrap();
    let message = failure(fx.write("d", "x").await);
    assert!(message.contains("directory"), "{message}");
    let input = json!({ "file_path": "rel.txt", "content": "x" });
    let message = failure(WriteTool.call(input, &fx.ctx).await);
    assert!(message.contains("absolute"), "{message}");
    assert!(!fx.path("rel.txt").exists());
}
