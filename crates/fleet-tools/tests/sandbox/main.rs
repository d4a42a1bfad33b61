//! The sandbox against real Landlock and real processes: the Bash tool run by agents of each
//! kind, in temporary projects.
#![allow(clippy::unwrap_used)]

mod confine;
mod guardian;
mod kinds;
mod network;
mod private;
mod terminal;

use fleet_tools::builtin::BashTool;
use fleet_tools::permissions::{PermissionMode, Permissions, RuleKind, RuleSet};
use fleet_tools::sandbox::{AgentSandbox, SandboxConfig, SandboxKind};
use fleet_tools::{Tool, ToolContext, ToolOutput, Workspace};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The launcher built beside these tests.
pub fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fleet-sandbox"))
}

/// A project with a `.git` folder, a source folder and a file, plus a folder outside it and a
/// home folder; all resolved.
pub struct Project {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        for dir in ["project/.git/hooks", "project/src", "outside", "home/.ssh"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        std::fs::write(root.join("README"), "readme\n").unwrap();
        std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(base.join("home/.ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
        Self {
            root,
            outside: base.join("outside"),
            home: base.join("home"),
            _tmp: tmp,
        }
    }

    pub fn permissions(&self, deny: &[&str]) -> Arc<Permissions> {
        let mut rules = RuleSet::default();
        for rule in deny {
            rules
                .add(RuleKind::Deny, rule, self.root.clone(), "test")
                .unwrap();
        }
        let mut permissions = Permissions::new(
            PermissionMode::Default,
            rules,
            Arc::new(Workspace::new(&self.root)),
        );
        permissions.home = Some(self.home.clone());
        Arc::new(permissions)
    }

    /// A sandbox of `kind` with `config` (its launcher set to the test launcher).
    pub fn sandbox(
        &self,
        kind: SandboxKind,
        mut config: SandboxConfig,
        deny: &[&str],
    ) -> Arc<AgentSandbox> {
        config.launcher = Some(launcher());
        Arc::new(AgentSandbox::new(
            kind,
            Arc::new(config),
            Some(self.permissions(deny)),
        ))
    }

    /// An ordinary agent with the sandbox enabled.
    pub fn configured(&self, deny: &[&str]) -> Arc<AgentSandbox> {
        let config = SandboxConfig {
            enabled: true,
            ..SandboxConfig::default()
        };
        self.sandbox(SandboxKind::Standard, config, deny)
    }

    pub fn context(&self, sandbox: &Arc<AgentSandbox>) -> ToolContext {
        self.context_in(&self.root, sandbox)
    }

    pub fn context_in(&self, cwd: &Path, sandbox: &Arc<AgentSandbox>) -> ToolContext {
        ToolContext::new(cwd.to_path_buf(), Arc::new(Workspace::new(&self.root)))
            .with_sandbox(sandbox.clone())
    }
}

/// Runs `command` with the Bash tool in `ctx`.
pub async fn bash(ctx: &ToolContext, command: &str) -> ToolOutput {
    BashTool::with_max_output(30_000)
        .call(json!({ "command": command }), ctx)
        .await
        .unwrap()
}
