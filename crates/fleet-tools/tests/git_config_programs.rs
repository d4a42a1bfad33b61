//! Issue 30, item 2: the read-only classifier must not run a repository's code through a
//! committed symlink into an embedded (bare-layout) repository, and every command it accepts
//! runs git with the program-running configuration turned off.
#![allow(clippy::unwrap_used)]

use fleet_tools::builtin::BashTool;
use fleet_tools::sandbox::{AgentSandbox, SandboxKind};
use fleet_tools::{check_command, CommandPolicy, Tool, ToolContext, Workspace};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.email=a@b", "-c", "user.name=a"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A cloned project as an attacker ships it: `vendor/emb` has the layout of a repository
/// whose `config` names an fsmonitor that creates `marker`, and `docs` is a committed symlink
/// to a folder inside it.
struct Attack {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    marker: PathBuf,
}

fn attack() -> Attack {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let project = root.join("project");
    let marker = root.join("pwned");
    let emb = project.join("vendor/emb");
    for dir in ["objects", "refs/heads", "sub"] {
        std::fs::create_dir_all(emb.join(dir)).unwrap();
    }
    std::fs::write(emb.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        emb.join("config"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = sub\n\t\
             fsmonitor = \"touch {}; echo\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(emb.join("sub/readme"), "x\n").unwrap();
    std::os::unix::fs::symlink("vendor/emb/sub", project.join("docs")).unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "clone me"]);
    Attack {
        _tmp: tmp,
        project,
        marker,
    }
}

/// The exact commands from the issue, and the ways a `cd` can hide.
const THROUGH_THE_LINK: &[&str] = &[
    "git -C docs status",
    "cd docs && git status",
    "git -C vendor/emb/sub status",
    "git -C ./docs/. log -1",
    "bash -c 'cd docs && git status'",
    "eval 'cd docs'; git status",
    "builtin cd docs; git status",
    "command cd docs && git status",
    "env -C docs git status",
    "pushd docs >/dev/null && git status",
];

#[test]
fn the_classifier_follows_symlinks_before_the_nested_repository_check() {
    let a = attack();
    // Without fleet, the attack works: git runs the embedded repository's fsmonitor.
    let status = Command::new("git")
        .args(["-C", "docs", "status"])
        .current_dir(&a.project)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(a.marker.exists(), "the attack fixture must be real");
    std::fs::remove_file(&a.marker).unwrap();

    for command in THROUGH_THE_LINK {
        assert!(
            check_command(command, &CommandPolicy::ReadOnly, &a.project).is_err(),
            "{command:?} was accepted as read-only"
        );
    }
    // The project's own repository, and folders of it, stay fine.
    for command in [
        "git status",
        "git -C vendor log -1",
        "cd vendor && git status",
    ] {
        check_command(command, &CommandPolicy::ReadOnly, &a.project)
            .unwrap_or_else(|refusal| panic!("{command:?}: {refusal}"));
    }
}

#[test]
fn commands_that_set_git_configuration_are_never_read_only() {
    let cwd = Path::new("/srv/fleet-git-config-test/project");
    for command in [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
        "GIT_DIR=vendor/emb git status",
        "export GIT_DIR=vendor/emb; git status",
        "env GIT_CONFIG_PARAMETERS=x git status",
        "git -c core.fsmonitor=x status",
        "git --git-dir=vendor/emb status",
        "git --work-tree=docs status",
        "git --exec-path=/tmp status",
        "git --bare log",
        "env -u GIT_CONFIG_COUNT git status",
        "env -i git status",
        "exec -c git status",
        "git --config-env=core.pager=X log",
        "cargo metadata",
        "make -n",
        "go version",
        "npm ls",
        "rg --pre cat x",
        "tar --to-command=sh -xf a.tar",
        "sort --compress-program=sh f",
        "find . -exec sh {} ;",
    ] {
        assert!(
            check_command(command, &CommandPolicy::ReadOnly, cwd).is_err(),
            "{command:?} was accepted as read-only"
        );
    }
}

fn context(dir: &Path, kind: SandboxKind) -> ToolContext {
    let sandbox = AgentSandbox::new(kind, Arc::default(), None);
    ToolContext::new(dir.to_path_buf(), Arc::new(Workspace::new(dir)))
        .with_sandbox(Arc::new(sandbox))
}

/// The project's own `.git/config` names an fsmonitor (a tarball, or a config written
/// earlier): a command the classifier accepts runs with it turned off, any other command as
/// the user's git would.
#[tokio::test]
async fn classifier_accepted_git_runs_without_configured_programs() {
    let a = attack();
    let marker = a.marker.display().to_string();
    git(
        &a.project,
        &["config", "core.fsmonitor", &format!("touch {marker}; echo")],
    );
    let ctx = context(&a.project, SandboxKind::Unconfined);
    let bash = BashTool::default();
    for command in ["git status", "git diff --stat", "git log -1 --oneline"] {
        let out = bash
            .call(json!({ "command": command }), &ctx)
            .await
            .unwrap();
        assert!(!out.is_error, "{command}: {}", out.content);
        assert!(!a.marker.exists(), "{command} ran the fsmonitor");
    }
    let out = bash
        .call(json!({ "command": "git config --get core.fsmonitor; git config --get safe.bareRepository" }), &ctx)
        .await
        .unwrap();
    assert!(
        out.content.contains("false") && out.content.contains("explicit"),
        "{}",
        out.content
    );
    // The control: a command that is not read-only gets the user's configuration.
    let out = bash
        .call(
            json!({ "command": "git status && echo done > /dev/null; touch x" }),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert!(a.marker.exists(), "the control must run the fsmonitor");
}

/// A read-only agent's every command gets the hardened configuration, even one the
/// classifier would refuse (the sandbox-only test switch skips the classifier).
#[tokio::test]
async fn a_read_only_agents_git_never_runs_the_embedded_repositorys_fsmonitor() {
    let a = attack();
    let ctx = context(&a.project, SandboxKind::ReadOnly);
    for command in THROUGH_THE_LINK.iter().take(2) {
        let _ = BashTool::default()
            .call(json!({ "command": command }), &ctx)
            .await
            .unwrap();
        assert!(!a.marker.exists(), "{command} ran the fsmonitor");
    }
}

/// An allow rule such as `Bash(git *)` may let git run in the embedded repository; git that
/// only looks still runs with its programs turned off there.
#[tokio::test]
async fn git_that_only_looks_runs_hardened_even_where_the_classifier_refuses_it() {
    let a = attack();
    let ctx = context(&a.project, SandboxKind::Unconfined);
    for command in ["git -C docs status", "cd docs && git status"] {
        assert!(check_command(command, &CommandPolicy::ReadOnly, &a.project).is_err());
        let _ = BashTool::default()
            .call(json!({ "command": command }), &ctx)
            .await
            .unwrap();
        assert!(!a.marker.exists(), "{command} ran the fsmonitor");
    }
}

/// `Bash(git *)` does not vouch for git led into the embedded repository (the line may hold
/// other programs, so the hardened configuration cannot be relied on); git elsewhere, or in a
/// nested checkout git made itself, stays allowed.
#[test]
fn no_allow_rule_covers_git_led_into_an_embedded_repository() {
    use fleet_tools::permissions::{Behavior, PermissionMode, Permissions, RuleKind};
    use fleet_tools::Access;
    let a = attack();
    std::fs::create_dir_all(a.project.join("nested/checkout/.git")).unwrap();
    let mut builder = Permissions::builder(Workspace::new(&a.project));
    builder.mode(PermissionMode::Default);
    builder
        .rules(
            RuleKind::Allow,
            &["Bash(git *)", "Bash(npm test)", "Bash(cd *)"],
            &a.project,
            "test",
        )
        .unwrap();
    let perms = builder.build();
    let decide = |command: &str| {
        perms
            .check("Bash", false, &Access::Command(command.into()), &a.project)
            .behavior
    };
    for command in [
        "git -C docs status && npm test",
        "cd docs && git log -1 && npm test",
        "git -C vendor/emb/sub fetch",
        "git --git-dir=vendor/emb log",
    ] {
        assert_eq!(decide(command), Behavior::Ask, "{command}");
    }
    for command in [
        "git status && npm test",
        "git -C vendor log -1",
        "cd nested/checkout && git pull",
        "cd /tmp && git log -1",
    ] {
        assert_eq!(decide(command), Behavior::Allow, "{command}");
    }
}
