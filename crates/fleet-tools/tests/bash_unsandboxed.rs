//! Issue 30, item 11 (first half): without Landlock (`FLEET_SANDBOX_UNAVAILABLE=1`), the
//! permission layer checks the files a Bash line names against `Read(...)` deny rules and the
//! credential stores, since no sandbox keeps a classifier-accepted `cat` out of them. Its own
//! test binary, as it sets the switch for the whole process.
#![allow(clippy::unwrap_used)]

use fleet_tools::permissions::{Behavior, PermissionMode, Permissions, RuleKind};
use fleet_tools::{Access, Workspace};
use std::path::{Path, PathBuf};

struct Fixture {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

fn fixture() -> Fixture {
    std::env::set_var("FLEET_SANDBOX_UNAVAILABLE", "1");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("project");
    let home = root.join("home");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::write(project.join(".env"), "SECRET=1").unwrap();
    std::fs::write(project.join("README"), "hi").unwrap();
    Fixture {
        _tmp: tmp,
        project,
        home,
    }
}

fn perms(fx: &Fixture, mode: PermissionMode, allow: &[&str], deny: &[&str]) -> Permissions {
    let mut builder = Permissions::builder(Workspace::new(&fx.project));
    builder.home(Some(fx.home.clone())).mode(mode);
    builder
        .rules(RuleKind::Allow, allow, &fx.project, "test settings")
        .unwrap();
    builder
        .rules(RuleKind::Deny, deny, &fx.project, "test settings")
        .unwrap();
    builder.build()
}

fn decide(fx: &Fixture, perms: &Permissions, command: &str) -> fleet_tools::permissions::Decision {
    // Read-only as the classifier would say for these: the mode alone would allow them.
    perms.check("Bash", true, &Access::Command(command.into()), &fx.project)
}

#[test]
fn without_the_sandbox_named_secrets_are_denied_even_to_read_only_commands() {
    let fx = fixture();
    let home = fx.home.display().to_string();
    let commands = [
        "cat ~/.ssh/id_rsa .env".to_string(),
        "cat ~/.ssh/id_rsa".to_string(),
        "head -n 1 < ~/.ssh/id_rsa".to_string(),
        "cat $HOME/.ssh/id_rsa".to_string(),
        "cat \"${HOME}/.ssh/id_rsa\"".to_string(),
        format!("grep -r KEY {home}/.ssh"),
        "cat ~/.ssh/*".to_string(),
        "tail ~/.ss?/id_rsa".to_string(),
        "less --file=~/.ssh/id_rsa".to_string(),
        "cat ~/.s''sh/id_rsa".to_string(),
        "for f in ~/.ssh/*; do cat \"$f\"; done".to_string(),
        "bash -c 'cat ~/.ssh/id_rsa'".to_string(),
        "cd ~/.ssh && cat id_rsa".to_string(),
    ];
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        let perms = perms(&fx, mode, &["Bash(cat *)"], &[]);
        for command in &commands {
            let decision = decide(&fx, &perms, command);
            assert_eq!(
                decision.behavior,
                Behavior::Deny,
                "{mode} {command:?}: {decision:?}"
            );
            assert!(
                decision.message().contains(".ssh"),
                "{}",
                decision.message()
            );
        }
    }
}

#[test]
fn without_the_sandbox_read_deny_rules_bind_bash_arguments() {
    let fx = fixture();
    let perms = perms(&fx, PermissionMode::Default, &[], &["Read(./.env)"]);
    for command in [
        "cat .env",
        "grep SECRET ./.env",
        "sort < .env",
        "cat src/../.env",
        "cat .en?",
    ] {
        let decision = decide(&fx, &perms, command);
        assert_eq!(
            decision.behavior,
            Behavior::Deny,
            "{command:?}: {decision:?}"
        );
        assert!(
            decision.message().contains("Read(./.env)"),
            "{}",
            decision.message()
        );
    }
    let decision = decide(&fx, &perms, "cat README src");
    assert_eq!(decision.behavior, Behavior::Allow, "{decision:?}");
}

#[test]
fn without_the_sandbox_a_folder_holding_a_store_asks() {
    let fx = fixture();
    let perms = perms(&fx, PermissionMode::Default, &[], &[]);
    let home = fx.home.display().to_string();
    for command in [
        "grep -r KEY ~".to_string(),
        format!("find {home} -name id_rsa"),
        "h=~; cat $h/.ssh/id_rsa".to_string(),
        "cat ~/.somedotfile".to_string(),
        "grep token ~/.someapp/token".to_string(),
    ] {
        let decision = decide(&fx, &perms, &command);
        assert_eq!(
            decision.behavior,
            Behavior::Ask,
            "{command:?}: {decision:?}"
        );
    }
    assert!(Path::new(&home).is_dir());
}

/// Item 2 where only the classifier protects: a read-only agent allowed to run Bash without a
/// sandbox runs its git with the program-running configuration off, so even a command that
/// reached the Bash tool past the classifier cannot run an embedded repository's fsmonitor.
#[tokio::test]
async fn without_the_sandbox_a_read_only_agents_git_runs_hardened() {
    use fleet_tools::builtin::BashTool;
    use fleet_tools::sandbox::{AgentSandbox, SandboxConfig, SandboxKind};
    use fleet_tools::{Tool, ToolContext};
    use std::sync::Arc;

    let fx = fixture();
    let marker = fx.home.join("pwned");
    let emb = fx.project.join("vendor/emb");
    for dir in ["objects", "refs/heads", "sub"] {
        std::fs::create_dir_all(emb.join(dir)).unwrap();
    }
    std::fs::write(emb.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        emb.join("config"),
        format!(
            "[core]\n\tbare = false\n\tworktree = sub\n\tfsmonitor = \"touch {}; echo\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::os::unix::fs::symlink("vendor/emb/sub", fx.project.join("docs")).unwrap();
    let config = SandboxConfig {
        allow_unsandboxed_read_only: true,
        ..SandboxConfig::default()
    };
    let sandbox = AgentSandbox::new(SandboxKind::ReadOnly, Arc::new(config), None);
    let ctx = ToolContext::new(fx.project.clone(), Arc::new(Workspace::new(&fx.project)))
        .with_sandbox(Arc::new(sandbox));
    for command in ["git -C docs status", "cd docs && git status"] {
        let out = BashTool::default()
            .call(serde_json::json!({ "command": command }), &ctx)
            .await
            .unwrap();
        assert!(
            out.content.contains("safe.bareRepository"),
            "{}",
            out.content
        );
        assert!(!marker.exists(), "{command} ran the fsmonitor");
    }
}
