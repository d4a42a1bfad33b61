//! Deny-read paths bind the search tools: `Read(...)` deny rules and the credential stores are
//! neither listed by Glob nor searched by Grep, and a search rooted at one is refused as Read
//! refuses the file.

use super::{abs, write};
use fleet_tools::builtin::{GlobTool, GrepTool, ReadTool};
use fleet_tools::permissions::{PermissionMode, Permissions, ReadGuard, RuleKind, RuleSet};
use fleet_tools::{Tool, ToolContext, ToolOutput, Workspace};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A project holding secrets, and a home folder with an SSH key, searched by an agent whose
/// settings deny `.env`, `*.pem` and a folder.
struct Setup {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    ctx: ToolContext,
}

const SECRET: &str = "hunter2-secret";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (project, home) = (root.join("project"), root.join("home"));
    write(&project, "src/main.rs", format!("// not {SECRET} here\n"));
    write(&project, ".env", format!("TOKEN={SECRET}\n"));
    write(&project, "certs/server.pem", format!("{SECRET}\n"));
    write(&project, "private/notes.md", format!("{SECRET}\n"));
    write(&project, ".env.example", "TOKEN=\n");
    write(&home, ".ssh/id_ed25519", format!("{SECRET}\n"));
    write(&home, ".aws/credentials", format!("{SECRET}\n"));
    write(&home, "notes.txt", "plain\n");
    let mut rules = RuleSet::default();
    for rule in ["Read(./.env)", "Read(**/*.pem)", "Read(./private/**)"] {
        rules
            .add(RuleKind::Deny, rule, project.clone(), "settings.json")
            .unwrap();
    }
    let mut permissions = Permissions::new(
        PermissionMode::Default,
        rules,
        Arc::new(Workspace::new(&project)),
    );
    permissions.home = Some(home.clone());
    let guard = ReadGuard::for_agent(&permissions, &project);
    let ctx = ToolContext::new(project.clone(), permissions.workspace.clone())
        .with_read_guard(Arc::new(guard));
    Setup {
        _tmp: tmp,
        project,
        home,
        ctx,
    }
}

async fn ok(s: &Setup, tool: &dyn Tool, input: Value) -> ToolOutput {
    let out = tool.call(input, &s.ctx).await.unwrap();
    assert!(!out.is_error, "{}", out.content);
    out
}

async fn refused(s: &Setup, tool: &dyn Tool, input: Value) -> String {
    let err = tool.call(input, &s.ctx).await.unwrap_err().to_string();
    assert!(err.contains("Permission to read"), "{err}");
    err
}

#[tokio::test]
async fn grep_over_the_project_skips_denied_files_in_every_mode() {
    let s = setup();
    for mode in ["content", "files_with_matches", "count"] {
        let out = ok(
            &s,
            &GrepTool,
            json!({"pattern": SECRET, "output_mode": mode, "path": "."}),
        )
        .await;
        assert!(
            out.content.contains("src/main.rs"),
            "{mode}: {}",
            out.content
        );
        for denied in [".env", "server.pem", "notes.md"] {
            assert!(!out.content.contains(denied), "{mode}: {}", out.content);
        }
        let matched = out.content.matches(SECRET).count();
        assert!(
            matched <= 1,
            "only main.rs's line may show: {}",
            out.content
        );
    }
    let out = ok(&s, &GrepTool, json!({"pattern": "TOKEN"})).await;
    assert_eq!(
        out.content.trim(),
        format!("Found 1 file\n{}", abs(&s.project, ".env.example"))
    );
}

#[tokio::test]
async fn glob_does_not_list_denied_files() {
    let s = setup();
    let out = ok(&s, &GlobTool, json!({"pattern": "**/*"})).await;
    assert!(out.content.contains(".env.example"), "{}", out.content);
    for denied in ["/.env\n", "server.pem", "notes.md"] {
        assert!(
            !format!("{}\n", out.content).contains(denied),
            "{}",
            out.content
        );
    }
    let out = ok(
        &s,
        &GlobTool,
        json!({"pattern": "**/*", "path": s.home.display().to_string()}),
    )
    .await;
    assert!(out.content.contains("notes.txt"), "{}", out.content);
    assert!(
        !out.content.contains(".ssh") && !out.content.contains(".aws"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_search_rooted_at_a_denied_path_is_refused_like_read() {
    let s = setup();
    let env = abs(&s.project, ".env");
    let err = refused(&s, &GrepTool, json!({"pattern": "TOKEN", "path": env})).await;
    assert!(err.contains("`Read(./.env)`"), "{err}");
    // `private/**` denies what the folder holds, not the folder: searching it finds nothing.
    let out = ok(&s, &GrepTool, json!({"pattern": ".", "path": "private"})).await;
    assert_eq!(out.content, "No files found");
    let ssh = s.home.join(".ssh").display().to_string();
    let err = refused(&s, &GrepTool, json!({"pattern": ".", "path": ssh})).await;
    assert!(err.contains("credential store"), "{err}");
    refused(&s, &GlobTool, json!({"pattern": "*", "path": ssh})).await;
    refused(&s, &GlobTool, json!({"pattern": format!("{ssh}/*")})).await;
    let key = s.home.join(".ssh/id_ed25519").display().to_string();
    refused(&s, &ReadTool, json!({"file_path": key})).await;
    refused(&s, &ReadTool, json!({"file_path": env})).await;
}

#[tokio::test]
async fn a_symlink_into_a_credential_store_does_not_get_around_it() {
    let s = setup();
    std::os::unix::fs::symlink(s.home.join(".ssh"), s.project.join("keys")).unwrap();
    let via: &Path = &s.project.join("keys/id_ed25519");
    refused(
        &s,
        &ReadTool,
        json!({"file_path": via.display().to_string()}),
    )
    .await;
    refused(&s, &GrepTool, json!({"pattern": ".", "path": "keys"})).await;
    let out = ok(&s, &GrepTool, json!({"pattern": SECRET, "path": "."})).await;
    assert!(!out.content.contains("keys"), "{}", out.content);
}
