//! Permission modes, rules and the workspace boundary, decided on real folders with real
//! symlinks.

#![allow(clippy::unwrap_used)]

mod bash;
mod deny_wrappers;
mod git_history;
mod live;
mod modes;
mod paths;
mod protected;
mod rules;
mod wrapper_writes;

use fleet_tools::permissions::{Decision, DecisionReason, PermissionMode, Permissions, RuleKind};
use fleet_tools::workspace::{self, Workspace};
use fleet_tools::Access;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// A temp folder holding a project, a folder beside it, and a home folder:
///
/// ```text
/// project/ src/main.rs src/sub/a.rs src/sub/test_b.rs .env secrets/key docs/
///          link -> ../outside        alias -> src        docs/escape -> ../../outside
/// outside/ secret.txt
/// home/    .ssh/id_rsa
/// shared/  (for --add-dir)
/// ```
pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub project: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
}

pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = workspace::resolve(tmp.path(), Path::new("/"));
    let project = root.join("project");
    let outside = root.join("outside");
    let home = root.join("home");
    for dir in [
        project.join("src/sub"),
        project.join("secrets"),
        project.join("docs"),
        outside.clone(),
        home.join(".ssh"),
        root.join("shared"),
    ] {
        fs::create_dir_all(dir).unwrap();
    }
    for file in [
        project.join("src/main.rs"),
        project.join("src/sub/a.rs"),
        project.join("src/sub/test_b.rs"),
        project.join(".env"),
        project.join("secrets/key"),
        outside.join("secret.txt"),
        home.join(".ssh/id_rsa"),
    ] {
        fs::write(file, "x").unwrap();
    }
    symlink("../outside", project.join("link")).unwrap();
    symlink("src", project.join("alias")).unwrap();
    symlink("../../outside", project.join("docs/escape")).unwrap();
    Fixture {
        _tmp: tmp,
        root,
        project,
        outside,
        home,
    }
}

impl Fixture {
    /// Permissions for the project with rules written in its `.claude/settings.json`.
    pub fn perms(
        &self,
        mode: PermissionMode,
        allow: &[&str],
        ask: &[&str],
        deny: &[&str],
    ) -> Permissions {
        let mut builder = Permissions::builder(Workspace::new(&self.project));
        builder.home(Some(self.home.clone())).mode(mode);
        let source = self.settings_name();
        for (kind, rules) in [
            (RuleKind::Allow, allow),
            (RuleKind::Ask, ask),
            (RuleKind::Deny, deny),
        ] {
            builder.rules(kind, rules, &self.project, &source).unwrap();
        }
        builder.build()
    }

    pub fn settings_name(&self) -> String {
        self.project
            .join(".claude/settings.json")
            .display()
            .to_string()
    }

    /// A path in the project.
    pub fn p(&self, relative: &str) -> PathBuf {
        self.project.join(relative)
    }
}

/// One call: tool, whether read-only, what it touches.
#[derive(Debug, Clone)]
pub struct Call(pub &'static str, pub bool, pub Access);

pub fn read(path: impl Into<PathBuf>) -> Call {
    Call("Read", true, Access::Read(path.into()))
}
pub fn glob(path: impl Into<PathBuf>) -> Call {
    Call("Glob", true, Access::Read(path.into()))
}
pub fn grep(path: impl Into<PathBuf>) -> Call {
    Call("Grep", true, Access::Read(path.into()))
}
pub fn write(path: impl Into<PathBuf>) -> Call {
    Call("Write", false, Access::Write(path.into()))
}
pub fn edit(path: impl Into<PathBuf>) -> Call {
    Call("Edit", false, Access::Write(path.into()))
}
pub fn bash(command: &str) -> Call {
    Call("Bash", false, Access::Command(command.to_string()))
}
pub fn other(tool: &'static str) -> Call {
    Call(tool, false, Access::Other)
}

pub fn check_in(perms: &Permissions, call: &Call, cwd: &Path) -> Decision {
    perms.check(call.0, call.1, &call.2, cwd)
}

/// Checks `call` with the project as cwd.
pub fn check(fx: &Fixture, perms: &Permissions, call: &Call) -> Decision {
    check_in(perms, call, &fx.project)
}

/// The rule behind a decision, as printed.
pub fn rule_text(decision: &Decision) -> Option<String> {
    match &decision.reason {
        DecisionReason::Rule(rule) => Some(rule.to_string()),
        _ => None,
    }
}
