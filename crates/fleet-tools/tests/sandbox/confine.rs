//! What a configured sandbox lets a command write and read.

use super::*;

#[tokio::test]
async fn writes_inside_the_workspace_succeed_and_outside_are_denied_by_the_sandbox() {
    let p = Project::new();
    let ctx = p.context(&p.configured(&[]));
    let ok = bash(
        &ctx,
        "echo new > src/new.rs && echo more >> README && echo done",
    )
    .await;
    assert!(!ok.is_error, "{}", ok.content);
    assert_eq!(
        std::fs::read_to_string(p.root.join("src/new.rs")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.root.join("README")).unwrap(),
        "readme\nmore\n"
    );

    let target = p.outside.join("x");
    let out = bash(&ctx, &format!("echo hi > {}", target.display())).await;
    assert!(out.is_error);
    assert!(!target.exists());
    assert!(out.content.contains("Permission denied"), "{}", out.content);
    let note = format!("denied by the sandbox: {}", target.display());
    assert!(out.content.contains(&note), "{}", out.content);
    assert!(
        out.content.contains(&p.root.display().to_string()),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn protected_paths_hold_against_every_way_of_writing() {
    let p = Project::new();
    std::fs::write(p.root.join("src/payload"), "evil\n").unwrap();
    let ctx = p.context(&p.configured(&["Edit(./src/locked)", "Write(/deploy/**)"]));
    std::fs::create_dir_all(p.root.join("src/locked")).unwrap();
    std::fs::write(p.root.join("src/locked/keep"), "keep\n").unwrap();
    let hook = p.root.join(".git/hooks/pre-commit");
    let attempts = [
        format!("cp src/payload {}", hook.display()),
        format!("echo evil | tee {}", hook.display()),
        "cd .git/hooks && echo evil > pre-commit".to_string(),
        format!("mv src/payload {}", hook.display()),
        format!(
            "ln -s {} {}",
            p.root.join("src/payload").display(),
            hook.display()
        ),
        "echo '[core] fsmonitor = evil' >> .git/config".to_string(),
        "mkdir .claude && echo '{}' > .claude/settings.json".to_string(),
        "echo '{}' > .mcp.json".to_string(),
        "echo x > src/locked/keep".to_string(),
        "rm src/locked/keep".to_string(),
        "mkdir -p deploy && echo x > deploy/run.sh".to_string(),
    ];
    for attempt in &attempts {
        let out = bash(&ctx, attempt).await;
        assert!(out.is_error, "{attempt} succeeded: {}", out.content);
        assert!(
            out.content.contains("sandbox"),
            "{attempt}: {}",
            out.content
        );
    }
    assert!(!hook.exists());
    assert_eq!(
        std::fs::read_to_string(p.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!p.root.join(".claude").exists());
    assert!(!p.root.join(".mcp.json").exists());
    assert!(!p.root.join("deploy").exists());
    assert_eq!(
        std::fs::read_to_string(p.root.join("src/locked/keep")).unwrap(),
        "keep\n"
    );
    // The payload was not moved away either, and ordinary files next to it stay writable.
    assert!(p.root.join("src/payload").exists());
    // `src` leads to a protected path, so it gets no new entries; its other folders do.
    let out = bash(&ctx, "echo fine > src/other").await;
    assert!(out.is_error, "{}", out.content);
    let note = format!(
        "denied by the sandbox: {}",
        p.root.join("src/other").display()
    );
    assert!(out.content.contains(&note), "{}", out.content);
    std::fs::create_dir_all(p.root.join("src/free")).unwrap();
    let ok = bash(
        &ctx,
        "cd src/free && echo fine > a && mkdir d && mv a d/ && ln -s d/a b",
    )
    .await;
    assert!(!ok.is_error, "{}", ok.content);
}

#[tokio::test]
async fn denied_reads_fail_and_their_siblings_stay_readable() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join("conf")).unwrap();
    std::fs::write(p.root.join("conf/.env"), "SECRET=1\n").unwrap();
    std::fs::write(p.root.join("conf/app.toml"), "name = 1\n").unwrap();
    let ctx = p.context(&p.configured(&["Read(.env)"]));
    for attempt in [
        "cat conf/.env",
        "head -1 conf/.env",
        "cp conf/.env src/stolen",
        &format!("cat {}/.ssh/id_ed25519", p.home.display()),
    ] {
        let out = bash(&ctx, attempt).await;
        assert!(out.is_error, "{attempt}: {}", out.content);
        assert!(
            !out.content.contains("SECRET=1"),
            "{attempt}: {}",
            out.content
        );
        assert!(
            !out.content.contains("PRIVATE KEY"),
            "{attempt}: {}",
            out.content
        );
        assert!(
            out.content.contains("denied by the sandbox"),
            "{attempt}: {}",
            out.content
        );
    }
    assert!(!p.root.join("src/stolen").exists());
    let ok = bash(&ctx, "cat conf/app.toml && ls -a conf && ls ~ >/dev/null").await;
    assert!(!ok.is_error, "{}", ok.content);
    assert!(
        ok.content.contains("name = 1") && ok.content.contains(".env"),
        "{}",
        ok.content
    );
}

#[tokio::test]
async fn the_project_root_gets_no_new_entries_but_subfolders_do() {
    let p = Project::new();
    let ctx = p.context(&p.configured(&[]));
    let out = bash(&ctx, "touch top-level-file").await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content.contains("denied by the sandbox"),
        "{}",
        out.content
    );
    let ok = bash(
        &ctx,
        "touch src/fine && mkdir -p src/a/b && echo x > src/a/b/c",
    )
    .await;
    assert!(!ok.is_error, "{}", ok.content);
}

#[tokio::test]
async fn allow_write_and_deny_write_settings_are_paths_too() {
    let p = Project::new();
    let settings: fleet_tools::sandbox::SandboxSettings = serde_json::from_value(json!({
        "enabled": true,
        "filesystem": {
            "allowWrite": [format!("/{}", p.outside.display())],
            "denyWrite": ["./src/generated"],
        }
    }))
    .unwrap();
    let mut config = SandboxConfig::default();
    config
        .add_settings(&settings, &p.root, "settings.json")
        .unwrap();
    let ctx = p.context(&p.sandbox(SandboxKind::Standard, config, &[]));
    let ok = bash(&ctx, &format!("echo x > {}/made", p.outside.display())).await;
    assert!(!ok.is_error, "{}", ok.content);
    let out = bash(&ctx, "mkdir src/generated").await;
    assert!(out.is_error, "{}", out.content);
}

#[tokio::test]
async fn excluded_commands_run_outside_the_sandbox() {
    let p = Project::new();
    let settings: fleet_tools::sandbox::SandboxSettings = serde_json::from_value(json!({
        "enabled": true, "excludedCommands": ["touch *"],
    }))
    .unwrap();
    let mut config = SandboxConfig::default();
    config
        .add_settings(&settings, &p.root, "settings.json")
        .unwrap();
    let sandbox = p.sandbox(SandboxKind::Standard, config, &[]);
    let ctx = p.context(&sandbox);
    let target = p.outside.join("made");
    let ok = bash(&ctx, &format!("touch {}", target.display())).await;
    assert!(!ok.is_error, "{}", ok.content);
    assert!(target.exists());
    let out = bash(
        &ctx,
        &format!("echo x > {}", p.outside.join("other").display()),
    )
    .await;
    assert!(out.is_error, "{}", out.content);
    assert!(!sandbox.auto_allows(&format!("touch {}", target.display()), &p.root));
}

/// An added folder (or the coordinator scratchpad) takes new entries unless it holds a
/// protected entry of its own, which then stays read-only.
#[tokio::test]
async fn an_added_folder_takes_new_entries_and_keeps_its_own_protected_ones() {
    let p = Project::new();
    let added = p.outside.join("added");
    let repo = p.outside.join("other-repo");
    std::fs::create_dir_all(&added).unwrap();
    std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    let mut permissions = (*p.permissions(&[])).clone();
    permissions.workspace = Arc::new(Workspace::new(&p.root).with_dir(&added).with_dir(&repo));
    let config = SandboxConfig {
        enabled: true,
        launcher: Some(launcher()),
        ..SandboxConfig::default()
    };
    let sandbox = Arc::new(AgentSandbox::new(
        SandboxKind::Standard,
        Arc::new(config),
        Some(Arc::new(permissions)),
    ));
    let ctx = p.context(&sandbox);
    let a = added.display();
    let ok = bash(
        &ctx,
        &format!("touch {a}/notes.md && mkdir {a}/d && echo x > {a}/d/f"),
    )
    .await;
    assert!(!ok.is_error, "{}", ok.content);
    let hook = repo.join(".git/hooks/pre-commit");
    let out = bash(&ctx, &format!("echo evil > {}", hook.display())).await;
    assert!(out.is_error && !hook.exists(), "{}", out.content);
}
