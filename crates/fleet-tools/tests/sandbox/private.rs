//! The read-only sandbox keeps to itself: no network unless the user allows it, none of the
//! home folder's private dot-files, while toolchains and git keep working. The Read, Grep and
//! Glob tools ask about (or leave out) the same files.

use super::*;
use fleet_tools::builtin::{CommandPolicy, GlobTool, GrepTool};
use fleet_tools::permissions::Behavior;
use fleet_tools::sandbox::SandboxSettings;
use fleet_tools::Access;
use std::net::TcpListener;

/// A home folder with private dot-entries, credential stores, toolchains and git's
/// configuration.
fn furnish(home: &Path) {
    for (file, text) in [
        (".npmrc", "//registry.npmjs.org/:_authToken=NPM-SECRET\n"),
        (".somedotfile", "DOT-SECRET\n"),
        (".config/gh/hosts.yml", "oauth_token: GH-SECRET\n"),
        (".config/other/token", "OTHER-SECRET\n"),
        (".config/git/ignore", "*.swp\n"),
        (
            ".gitconfig",
            "[user]\n\tname = Test\n\temail = t@example.com\n",
        ),
        (".cargo/bin/tool", "TOOLCHAIN\n"),
        (".cargo/credentials.toml", "token = \"CARGO-SECRET\"\n"),
        (".fleet/keys/remote-jobs.ed25519", "KEY-SECRET\n"),
        ("notes.txt", "PUBLIC\n"),
    ] {
        let path = home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn read_only(p: &Project, config: SandboxConfig) -> Arc<AgentSandbox> {
    p.sandbox(SandboxKind::ReadOnly, config, &[])
}

/// `allowRead` of `paths`, as the user's settings would give it.
fn allow_read(paths: &[&Path]) -> SandboxConfig {
    let settings: SandboxSettings = serde_json::from_value(json!({
        "filesystem": {"allowRead": paths.iter().map(|p| format!("/{}", p.display())).collect::<Vec<_>>()}
    }))
    .unwrap();
    let mut config = SandboxConfig::default();
    config
        .add_settings(&settings, Path::new("/"), "user settings")
        .unwrap();
    config
}

#[tokio::test]
async fn the_read_only_sandbox_has_no_network_unless_the_user_allows_it() {
    let p = Project::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let off = read_only(&p, SandboxConfig::default());
    let out = bash(&p.context(&off), &connect).await;
    assert!(
        out.is_error && !out.content.contains("connected"),
        "{}",
        out.content
    );
    let scratch = p.sandbox(
        SandboxKind::Scratch(p.outside.clone()),
        SandboxConfig::default(),
        &[],
    );
    let out = bash(&p.context(&scratch), &connect).await;
    assert!(
        out.is_error && !out.content.contains("connected"),
        "{}",
        out.content
    );

    // A command the classifier accepts, run by an ordinary agent, is in the read-only sandbox.
    let fetch = format!("curl -s -o /dev/null http://127.0.0.1:{port}/ && echo fetched");
    let accepted =
        fleet_tools::builtin::bash::check_command(&fetch, &CommandPolicy::ReadOnly, &p.root);
    if accepted.is_ok() {
        let out = bash(&p.context(&p.configured(&[])), &fetch).await;
        assert!(!out.content.contains("fetched"), "{}", out.content);
    }

    let on = read_only(
        &p,
        SandboxConfig {
            read_only_network: true,
            ..SandboxConfig::default()
        },
    );
    let out = bash(&p.context(&on), &connect).await;
    assert!(
        !out.is_error && out.content.contains("connected"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn the_read_only_sandbox_denies_the_home_folders_dot_files_but_not_toolchains_or_git() {
    let p = Project::new();
    furnish(&p.home);
    let home = p.home.display().to_string();
    let ctx = p.context(&read_only(&p, SandboxConfig::default()));
    for secret in [
        ".somedotfile",
        ".npmrc",
        ".config/gh/hosts.yml",
        ".config/other/token",
    ] {
        let out = bash(&ctx, &format!("cat {home}/{secret}")).await;
        assert!(out.is_error, "{secret}: {}", out.content);
        assert!(!out.content.contains("SECRET"), "{secret}: {}", out.content);
    }
    let out = bash(
        &ctx,
        &format!("cat {home}/notes.txt {home}/.cargo/bin/tool {home}/.gitconfig && ls -a {home}"),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    for seen in ["PUBLIC", "TOOLCHAIN", "name = Test", ".somedotfile"] {
        assert!(out.content.contains(seen), "{seen}: {}", out.content);
    }

    // git works, reading the home folder's git configuration.
    let repo = p.root.join("src");
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(init.success());
    let out = bash(
        &p.context_in(&repo, &read_only(&p, SandboxConfig::default())),
        &format!("HOME={home} git status --short && HOME={home} git config user.name"),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("Test"), "{}", out.content);
}

#[tokio::test]
async fn allow_read_lifts_the_denial_of_a_dot_file_and_a_credential_store() {
    let p = Project::new();
    furnish(&p.home);
    let home = p.home.display().to_string();
    let config = allow_read(&[&p.home.join(".somedotfile"), &p.home.join(".npmrc")]);
    let ctx = p.context(&read_only(&p, config));
    let out = bash(&ctx, &format!("cat {home}/.somedotfile {home}/.npmrc")).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("DOT-SECRET") && out.content.contains("NPM-SECRET"));
    let out = bash(&ctx, &format!("cat {home}/.config/gh/hosts.yml")).await;
    assert!(out.is_error, "{}", out.content);
}

#[tokio::test]
async fn every_sandbox_denies_the_new_credential_stores() {
    let p = Project::new();
    furnish(&p.home);
    let home = p.home.display().to_string();
    let ctx = p.context(&p.configured(&[]));
    for store in [
        ".npmrc",
        ".config/gh/hosts.yml",
        ".cargo/credentials.toml",
        ".fleet/keys/remote-jobs.ed25519",
    ] {
        let out = bash(&ctx, &format!("cat {home}/{store}")).await;
        assert!(out.is_error, "{store}: {}", out.content);
        assert!(!out.content.contains("SECRET"), "{store}: {}", out.content);
    }
    // A command of an ordinary sandboxed agent that is not read-only (so it ran with the
    // user's approval) may still read other dot-files; one that only reads may not.
    let copy = p.root.join("src/copy");
    let out = bash(&ctx, &format!("cp {home}/.somedotfile {}", copy.display())).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "DOT-SECRET\n");
    let out = bash(&ctx, &format!("cat {home}/.somedotfile")).await;
    assert!(
        out.is_error && !out.content.contains("DOT-SECRET"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn grep_and_glob_over_the_home_folder_leave_private_entries_out() {
    let p = Project::new();
    furnish(&p.home);
    let sandbox = p.configured(&[]);
    let guard = Arc::new(sandbox.read_guard(&p.root));
    let ctx = p.context(&sandbox).with_read_guard(guard);
    let home = p.home.display().to_string();
    let grep = GrepTool
        .call(
            json!({"pattern": "SECRET|PUBLIC|TOOLCHAIN", "path": home, "output_mode": "content"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(grep.content.contains("PUBLIC"), "{}", grep.content);
    assert!(grep.content.contains("TOOLCHAIN"), "{}", grep.content);
    assert!(!grep.content.contains("SECRET"), "{}", grep.content);
    let glob = GlobTool
        .call(json!({"pattern": "**/*", "path": home}), &ctx)
        .await
        .unwrap();
    assert!(glob.content.contains("notes.txt"), "{}", glob.content);
    for hidden in [".config/gh", ".somedotfile", ".npmrc", "credentials.toml"] {
        assert!(!glob.content.contains(hidden), "{hidden}: {}", glob.content);
    }
    // A search rooted in a credential store is refused outright.
    let gh = GrepTool
        .call(
            json!({"pattern": "oauth", "path": format!("{home}/.config/gh")}),
            &ctx,
        )
        .await;
    let text = match gh {
        Ok(out) => out.content,
        Err(err) => err.to_string(),
    };
    assert!(!text.contains("GH-SECRET"), "{text}");
}

#[test]
fn reading_a_home_dot_file_outside_the_workspace_asks() {
    let p = Project::new();
    furnish(&p.home);
    let permissions = p.permissions(&[]);
    let read = |path: PathBuf| permissions.check("Read", true, &Access::Read(path), &p.root);
    for private in [
        ".somedotfile",
        ".npmrc",
        ".config/other/token",
        ".gitconfig",
    ] {
        let decision = read(p.home.join(private));
        assert_eq!(decision.behavior, Behavior::Ask, "{private}: {decision:?}");
        assert!(
            decision.message().contains("private files"),
            "{}",
            decision.message()
        );
    }
    for open in ["notes.txt", ".cargo/bin/tool"] {
        assert!(read(p.home.join(open)).is_allowed(), "{open}");
    }
    assert!(read(p.root.join("README")).is_allowed());
    // fleet's own session data (task output files, transcripts) is read unasked; its
    // settings are not.
    if std::env::var_os("FLEET_HOME").is_none() {
        let output = p.home.join(".fleet/projects/p/s/tasks/b1.output");
        assert!(read(output).is_allowed());
        let settings = read(p.home.join(".fleet/settings.json"));
        assert_eq!(settings.behavior, Behavior::Ask);
    }
    // Through a symlink in the workspace too.
    std::os::unix::fs::symlink(p.home.join(".somedotfile"), p.root.join("innocent")).unwrap();
    assert_eq!(read(p.root.join("innocent")).behavior, Behavior::Ask);

    // An allow rule naming the entry lifts it; bypassPermissions does not ask.
    let mut rules = RuleSet::default();
    rules
        .add(
            RuleKind::Allow,
            "Read(~/.somedotfile)",
            p.root.clone(),
            "user",
        )
        .unwrap();
    let mut named = Permissions::new(
        PermissionMode::Default,
        rules,
        Arc::new(Workspace::new(&p.root)),
    );
    named.home = Some(p.home.clone());
    let decision = named.check(
        "Read",
        true,
        &Access::Read(p.home.join(".somedotfile")),
        &p.root,
    );
    assert!(decision.is_allowed(), "{decision:?}");
    // So do the user's `allowRead` entries, given to the permission rules as allow rules.
    let lifted = RuleSet {
        allow: allow_read(&[&p.home.join(".npmrc")])
            .allow_read_rules()
            .unwrap(),
        ..RuleSet::default()
    };
    let mut lifted = Permissions::new(
        PermissionMode::Default,
        lifted,
        Arc::new(Workspace::new(&p.root)),
    );
    lifted.home = Some(p.home.clone());
    let decision = lifted.check("Read", true, &Access::Read(p.home.join(".npmrc")), &p.root);
    assert!(decision.is_allowed(), "{decision:?}");
    let decision = lifted.check(
        "Read",
        true,
        &Access::Read(p.home.join(".somedotfile")),
        &p.root,
    );
    assert_eq!(decision.behavior, Behavior::Ask, "{decision:?}");

    let mut bypass = Permissions::new(
        PermissionMode::BypassPermissions,
        RuleSet::default(),
        Arc::new(Workspace::new(&p.root)),
    );
    bypass.home = Some(p.home.clone());
    let decision = bypass.check("Read", true, &Access::Read(p.home.join(".npmrc")), &p.root);
    assert!(decision.is_allowed(), "{decision:?}");
}
