//! Custom slash commands: loading from the project and the user, and expanding a prompt.

use crate::input_support;

use fleet_tui::input::commands::{builtin, expand, load_custom, CommandSource};
use input_support::*;
use std::path::Path;

fn write(root: &Path, path: &str, content: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

#[test]
fn project_and_user_commands_load_with_subfolders_and_project_wins() {
    let project = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    write(
        project.path(),
        ".claude/commands/review.md",
        "---\ndescription: \"Review the diff\"\nargument-hint: [focus]\n---\nReview $ARGUMENTS\n",
    );
    write(
        project.path(),
        ".claude/commands/frontend/test.md",
        "\n# Run the frontend tests\nnpm test $1\n",
    );
    write(
        home.path(),
        ".claude/commands/review.md",
        "the user's review\n",
    );
    write(home.path(), ".claude/commands/help.md", "not allowed\n");
    write(
        home.path(),
        ".claude/commands/standup.md",
        "Write my standup\n",
    );
    write(home.path(), ".claude/commands/notes.txt", "not markdown\n");

    let found = load_custom(project.path(), Some(home.path()));
    let names: Vec<&str> = found.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["frontend:test", "review", "standup"]);
    let review = &found[1];
    assert_eq!(review.description, "Review the diff");
    assert_eq!(review.argument_hint, "[focus]");
    assert_eq!(
        review.source,
        CommandSource::Custom(project.path().join(".claude/commands/review.md"))
    );
    assert_eq!(found[0].description, "Run the frontend tests");
    assert_eq!(found[2].description, "Write my standup");
}

#[test]
fn no_command_folders_means_no_custom_commands() {
    let empty = tempfile::tempdir().expect("tempdir");
    assert!(load_custom(empty.path(), None).is_empty());
}

#[test]
fn expand_fills_arguments_and_positions_without_the_frontmatter() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        ".claude/commands/git/fix.md",
        "---\ndescription: Fix an issue\n---\nFix issue #$1 in $2 ($ARGUMENTS). Cost: $5, $0.\n",
    );
    let path = dir.path().join(".claude/commands/git/fix.md");
    let found = load_custom(dir.path(), None);
    assert_eq!(found[0].name, "git:fix");
    assert_eq!(
        expand(&path, "42 parser").expect("expand"),
        "Fix issue #42 in parser (42 parser). Cost: , $0.\n"
    );
    // Arguments are not expanded a second time.
    assert_eq!(
        expand(&path, "$2 x").expect("expand"),
        "Fix issue #$2 in x ($2 x). Cost: , $0.\n"
    );
}

#[test]
fn expanding_a_missing_file_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gone.md");
    let error = expand(&path, "").expect_err("missing");
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    assert!(error.to_string().contains("gone.md"), "{error}");
}

#[test]
fn custom_commands_join_the_popup() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        ".claude/commands/frontend/test.md",
        "Run tests\n",
    );
    let mut c = composer();
    let mut commands = builtin();
    commands.extend(load_custom(dir.path(), None));
    c.set_commands(commands);
    type_text(&mut c, "/fro");
    let rows = lines(&c, 80);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert!(rows[1].starts_with("› /frontend:test"), "{rows:#?}");
    assert!(rows[1].ends_with("Run tests"), "{rows:#?}");
}
