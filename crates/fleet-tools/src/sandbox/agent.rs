//! How one agent's Bash commands run: which policy each command gets, and the agent's private
//! temp folder.

use super::availability;
use super::paths::{self, agent_paths, AgentPaths, Sources};
use super::policy::SandboxPolicy;
use super::settings::SandboxConfig;
use super::unavailable::SandboxUnavailable;
use crate::builtin::bash::{check_command, CommandPolicy};
use crate::permissions::{PermissionMode, Permissions, ReadGuard};
use crate::tool::Access;
use crate::workspace::{self, Workspace};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use thiserror::Error;

/// What kind of confinement an agent has. The always-on kinds (read-only, scratch) hold
/// whatever the settings say, wherever the kernel has Landlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxKind {
    /// No sandbox at all, not even for read-only commands: benchmarks' baseline and tests of
    /// the unsandboxed behaviour. Never chosen from settings.
    Unconfined,
    /// An ordinary agent: sandboxed when the settings enable it; commands the read-only
    /// classifier accepts run read-only either way.
    Standard,
    /// Read-only agents (Explore, Plan, anything in plan mode): nothing writable but a private
    /// temp folder.
    ReadOnly,
    /// The verification agent: its scratch folder and a private temp folder.
    Scratch(PathBuf),
}

/// The policy a command will run under, or none.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// `None`: the command runs unconfined.
    pub policy: Option<SandboxPolicy>,
    /// The launcher to confine it with (set exactly when `policy` is).
    pub launcher: Option<PathBuf>,
    /// The private temp folder, exported as `TMPDIR` to a confined command.
    pub temp: Option<PathBuf>,
}

/// The sandbox was needed and is not there, and the settings say not to run without it.
#[derive(Debug, Error)]
pub enum SandboxRefusal {
    #[error(
        "Bash is refused: the sandbox is unavailable ({0}) and `sandbox.failIfUnavailable` is \
         set. Ask the user to run fleet where Landlock is available, or to turn that setting off."
    )]
    Unavailable(#[source] SandboxUnavailable),
    #[error("Bash is refused: cannot create the private temp folder for the sandbox: {0}")]
    Temp(#[source] std::io::Error),
    /// A read-only agent (Explore, Plan, plan mode, verification) would run unconfined.
    #[error(
        "Bash is refused: this agent is read-only, and the OS sandbox that keeps its commands \
         from changing anything or reading private files is unavailable ({0}). Use Read, Grep \
         and Glob instead. To let read-only agents run Bash with only the command classifier, \
         the user can set `sandbox.allowUnsandboxedReadOnly: true` in their user settings \
         (~/.claude/settings.json)."
    )]
    ReadOnlyUnsandboxed(#[source] SandboxUnavailable),
}

/// How one agent's Bash processes are confined. Built by the runtime for each agent and read
/// by the Bash tool for every call; the private temp folder lives as long as this does.
pub struct AgentSandbox {
    kind: SandboxKind,
    config: Arc<SandboxConfig>,
    permissions: Option<Arc<Permissions>>,
    /// Found at the first confined call (the walk for wildcard rules is not free).
    paths: OnceLock<AgentPaths>,
    /// The home folder's dot-entries the read-only sandbox denies, found at the first
    /// read-only command.
    private_home: OnceLock<Vec<PathBuf>>,
    temp: Mutex<Option<tempfile::TempDir>>,
}

impl std::fmt::Debug for AgentSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSandbox")
            .field("kind", &self.kind)
            .field("enabled", &self.config.enabled)
            .finish_non_exhaustive()
    }
}

impl AgentSandbox {
    /// An ordinary agent with no sandbox settings: only read-only commands are confined.
    pub fn off() -> Self {
        Self::new(SandboxKind::Standard, Arc::default(), None)
    }

    /// Nothing confined, ever (see [`SandboxKind::Unconfined`]).
    pub fn unconfined() -> Self {
        Self::new(SandboxKind::Unconfined, Arc::default(), None)
    }

    /// `permissions` are the agent's own: its `Edit`/`Write`/`Read` deny rules become denied
    /// paths and its workspace the writable roots.
    pub fn new(
        kind: SandboxKind,
        config: Arc<SandboxConfig>,
        permissions: Option<Arc<Permissions>>,
    ) -> Self {
        Self {
            kind,
            config,
            permissions,
            paths: OnceLock::new(),
            private_home: OnceLock::new(),
            temp: Mutex::new(None),
        }
    }

    /// What this agent's Read, Grep and Glob may not read: its `Read(...)` deny rules and the
    /// credential stores `allowRead` leaves denied — the same stores its sandbox keeps from
    /// Bash, so one setting governs both.
    pub fn read_guard(&self, cwd: &Path) -> ReadGuard {
        let Some(permissions) = &self.permissions else {
            return ReadGuard::none();
        };
        // Worked out on first use: most children of a fan-out never read a file.
        let permissions = permissions.clone();
        let config = self.config.clone();
        let cwd = cwd.to_path_buf();
        ReadGuard::deferred(move || {
            let home = permissions.home.clone().or_else(home);
            let stores = paths::credential_stores(&config, &cwd, home.as_deref());
            let mut guard = ReadGuard::new(&permissions, &cwd, &stores);
            guard.open_private(paths::lifted_reads(&config, &cwd, home.as_deref()));
            guard
        })
    }

    /// The kind an agent gets from its permission mode: read-only in plan mode, else `other`.
    pub fn kind_for_mode(mode: PermissionMode, other: SandboxKind) -> SandboxKind {
        match (mode, &other) {
            (_, SandboxKind::Unconfined) => other,
            (PermissionMode::Plan, _) => SandboxKind::ReadOnly,
            _ => other,
        }
    }

    /// The same settings for an agent of another kind (a teammate leaving plan mode).
    pub fn with_kind(&self, kind: SandboxKind, permissions: Option<Arc<Permissions>>) -> Self {
        Self::new(kind, self.config.clone(), permissions)
    }

    pub fn kind(&self) -> &SandboxKind {
        &self.kind
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The environment a tool process of this agent starts with (secrets scrubbed).
    pub fn environment(&self) -> Vec<(OsString, OsString)> {
        self.config.env.apply(std::env::vars_os())
    }

    /// The launcher, also for starting the guardian.
    pub fn launcher_hint(&self) -> Option<&Path> {
        self.config.launcher.as_deref()
    }

    /// How `command`, run in `cwd`, is to be confined.
    pub fn plan(&self, command: &str, cwd: &Path) -> Result<Plan, SandboxRefusal> {
        let Some(want) = self.wanted(command, cwd) else {
            return Ok(Plan::default());
        };
        let launcher = match availability::launcher(self.config.launcher.as_deref()) {
            Ok(launcher) => launcher,
            Err(reason) if self.config.fail_if_unavailable => {
                return Err(SandboxRefusal::Unavailable(reason))
            }
            Err(reason)
                if self.is_read_only_agent() && !self.config.allow_unsandboxed_read_only =>
            {
                return Err(SandboxRefusal::ReadOnlyUnsandboxed(reason))
            }
            Err(reason) => {
                availability::warn_once(
                    "unavailable",
                    &format!(
                        "the sandbox is unavailable, so Bash commands run unconfined (read-only \
                         agents refuse Bash unless `sandbox.allowUnsandboxedReadOnly` is set): \
                         {reason}"
                    ),
                );
                return Ok(Plan::default());
            }
        };
        let temp = self.private_temp()?;
        let home = self
            .permissions
            .as_ref()
            .and_then(|p| p.home.clone())
            .or_else(home);
        let paths = self.paths.get_or_init(|| {
            agent_paths(&Sources {
                config: &self.config,
                permissions: self.permissions.as_ref(),
                cwd,
                home: home.as_deref(),
            })
        });
        let mut policy = SandboxPolicy {
            deny_read: paths.deny_read.clone(),
            network: self.config.network,
            unix_sockets: self.config.unix_sockets,
            ..SandboxPolicy::default()
        };
        if !matches!(want, Want::Configured) {
            // The read-only sandbox: no network unless the user allows it, and none of the
            // home folder's private files.
            policy.network = self.config.network && self.config.read_only_network;
            let private = self.private_home.get_or_init(|| {
                let Some(home) = home.as_deref() else {
                    return Vec::new();
                };
                let mut open = paths.writable.clone();
                open.extend([workspace::resolve(cwd, Path::new("/")), temp.clone()]);
                // The kind's, not this command's: the list is made once per agent.
                if let SandboxKind::Scratch(dir) = &self.kind {
                    open.push(dir.clone());
                }
                open.extend(paths::lifted_reads(&self.config, cwd, Some(home)));
                paths::private_home(home, &open)
            });
            policy.deny_read.extend(private.iter().cloned());
        }
        match want {
            Want::ReadOnly => {}
            Want::Scratch(dir) => {
                // A scratch folder is thrown away (a temp folder, a verifier's snapshot), so
                // the names protected elsewhere (`.git`, `.claude`, …) guard nothing inside
                // it, and carving them out would keep the agent from adding files at its top
                // (a build's `target/`, a probe script).
                policy.deny_write = paths
                    .deny_write
                    .iter()
                    .filter(|p| {
                        !(p.starts_with(&dir)
                            && crate::permissions::protected_name(
                                p.strip_prefix(&dir).unwrap_or(p),
                            )
                            .is_some())
                    })
                    .cloned()
                    .collect();
                policy.writable_roots.push(dir);
            }
            Want::Configured => {
                policy.writable_roots.extend(paths.writable.iter().cloned());
                policy.deny_write = paths.deny_write.clone();
                policy.signals = true;
            }
        }
        policy.writable_roots.push(temp.clone());
        Ok(Plan {
            policy: Some(policy),
            launcher: Some(launcher),
            temp: Some(temp),
        })
    }

    /// Whether `command` may run without a prompt because it will be confined: the settings
    /// ask for it (`autoAllowBashIfSandboxed`), the agent's commands are sandboxed, the command
    /// is not excluded, and a sandbox is available.
    pub fn auto_allows(&self, command: &str, cwd: &Path) -> bool {
        self.config.auto_allow_bash
            && self.wanted(command, cwd).is_some()
            && availability::launcher(self.config.launcher.as_deref()).is_ok()
    }

    /// Which policy `command` needs, before asking whether a sandbox is available.
    fn wanted(&self, command: &str, cwd: &Path) -> Option<Want> {
        let read_only = || check_command(command, &CommandPolicy::ReadOnly, cwd).is_ok();
        match &self.kind {
            SandboxKind::Unconfined => None,
            SandboxKind::ReadOnly => Some(Want::ReadOnly),
            SandboxKind::Scratch(_) if read_only() => Some(Want::ReadOnly),
            SandboxKind::Scratch(dir) => Some(Want::Scratch(dir.clone())),
            SandboxKind::Standard if read_only() => Some(Want::ReadOnly),
            SandboxKind::Standard if self.config.enabled && !self.excluded(command, cwd) => {
                Some(Want::Configured)
            }
            SandboxKind::Standard => None,
        }
    }

    /// Whether `excludedCommands` covers every part of `command` (as allow rules would).
    fn excluded(&self, command: &str, cwd: &Path) -> bool {
        if self.config.excluded.is_empty() {
            return false;
        }
        let workspace = self
            .permissions
            .as_ref()
            .map(|p| p.workspace.clone())
            .unwrap_or_else(|| Arc::new(Workspace::new(cwd)));
        Permissions::new(
            PermissionMode::Default,
            self.config.excluded.clone(),
            workspace,
        )
        .check("Bash", false, &Access::Command(command.to_string()), cwd)
        .is_allowed()
    }

    /// Whether this agent is read-only as a whole (Explore, Plan, plan mode, verification),
    /// rather than an ordinary agent some of whose commands run read-only.
    fn is_read_only_agent(&self) -> bool {
        matches!(self.kind, SandboxKind::ReadOnly | SandboxKind::Scratch(_))
    }

    /// The private temp folder, made at the first confined command and removed with `self`.
    fn private_temp(&self) -> Result<PathBuf, SandboxRefusal> {
        let mut temp = self
            .temp
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(dir) = temp.as_ref() {
            return Ok(dir.path().to_path_buf());
        }
        let dir = tempfile::Builder::new()
            .prefix("fleet-tmp-")
            .tempdir()
            .map_err(SandboxRefusal::Temp)?;
        let path = workspace::resolve(dir.path(), Path::new("/"));
        *temp = Some(dir);
        Ok(path)
    }

    /// The private temp folder if one was made (for tests and diagnostics).
    pub fn temp_dir(&self) -> Option<PathBuf> {
        let temp = self
            .temp
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        temp.as_ref().map(|d| d.path().to_path_buf())
    }
}

enum Want {
    ReadOnly,
    Scratch(PathBuf),
    Configured,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}
