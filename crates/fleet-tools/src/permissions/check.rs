//! Deciding one call.

use super::bash_split;
use super::call::{is_device, Call};
use super::git_reads::{self, HistoryRead};
use super::live::{merged, ModeCell, SessionGrants};
use super::mode::PermissionMode;
use super::private_home;
use super::protected;
use super::rule::{Rule, RuleError, RuleKind, RuleSet};
use super::secret_args::{self, SecretArg};
use crate::shell::quote;
use crate::tool::Access;
use crate::workspace::Workspace;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a decision was made, for the model's error text, `permission_denials` and the
/// `permission_decision` metadata printers show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecisionReason {
    /// A rule matched.
    Rule(Arc<Rule>),
    /// The mode decided (e.g. read-only tool in default mode, anything in bypassPermissions).
    Mode(PermissionMode),
    /// A write resolved outside the project and its added folders; holds the resolved path.
    OutsideWorkspace(PathBuf),
    /// A write to a path that decides what runs later (`.git/hooks`, `.claude/settings.json`,
    /// a shell rc file): always asked about, unless an allow rule names it.
    Protected(PathBuf),
    /// The call runs in the OS sandbox and the settings let sandboxed Bash calls run unasked
    /// (`autoAllowBashIfSandboxed`).
    Sandboxed,
}

impl fmt::Display for DecisionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rule(rule) => write!(f, "{} rule `{rule}` in {}", rule.kind(), rule.source()),
            Self::Mode(mode) => write!(f, "{mode} mode"),
            Self::OutsideWorkspace(path) => {
                write!(f, "{} is outside the workspace", path.display())
            }
            Self::Protected(path) => write!(f, "{} is a protected path", path.display()),
            Self::Sandboxed => f.write_str("the sandbox (autoAllowBashIfSandboxed)"),
        }
    }
}

/// What happens to the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    Allow,
    /// Run only if the user approves.
    Ask,
    Deny,
}

impl Behavior {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for Behavior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict on one call, with enough of the call kept to explain it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub behavior: Behavior,
    pub reason: DecisionReason,
    pub tool: String,
    pub access: Access,
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        self.behavior == Behavior::Allow
    }

    pub fn is_denied(&self) -> bool {
        self.behavior == Behavior::Deny
    }

    pub fn needs_approval(&self) -> bool {
        self.behavior == Behavior::Ask
    }

    /// Whether an answer on the user's behalf (a PreToolUse hook's `allow`) may run this call:
    /// it asks, or dontAsk refused it only because it would have asked (no rule allowed it,
    /// an ask rule, a protected path). Never when a deny rule, plan mode or the workspace
    /// boundary refused it: those are not questions a person would have been asked.
    pub fn is_approvable(&self) -> bool {
        match (self.behavior, &self.reason) {
            (Behavior::Ask, _) => true,
            (Behavior::Deny, DecisionReason::Mode(PermissionMode::DontAsk)) => true,
            (Behavior::Deny, DecisionReason::Protected(_)) => true,
            (Behavior::Deny, DecisionReason::Rule(rule)) => rule.kind() != RuleKind::Deny,
            _ => false,
        }
    }

    /// Allow rules that would let exactly this call through, to offer the user as "always
    /// allow". For a command line, one exact rule per simple command it runs (`Bash(git
    /// status)`, `Bash(git diff)` for `git status && git diff`), each matching only that
    /// command; none at all when a part holds a word only known when it runs, or the line
    /// writes into a file — then only a one-time yes fits.
    pub fn suggested_rules(&self) -> Vec<String> {
        match &self.access {
            Access::Command(command) => {
                let parsed = bash_split::parse(command);
                let writes_file = parsed.redirects.iter().any(|target| !is_device(target));
                let empty = parsed
                    .units
                    .iter()
                    .any(|unit| unit.words.is_empty() && unit.assignments.is_empty());
                if parsed.opaque || parsed.units.is_empty() || writes_file || empty {
                    return Vec::new();
                }
                let mut rules = Vec::new();
                for unit in &parsed.units {
                    let rule = format!("{}({})", self.tool, unit.exact_specifier());
                    if !rules.contains(&rule) {
                        rules.push(rule);
                    }
                }
                rules
            }
            Access::Read(path) => vec![format!("Read({})", path_specifier(path))],
            Access::Write(path) => vec![format!("Edit({})", path_specifier(path))],
            Access::Other => vec![self.tool.clone()],
        }
    }

    /// The allow rules to name in a message, or why there are none.
    fn suggestion(&self) -> String {
        let rules = self.suggested_rules();
        if rules.is_empty() {
            return "`Bash` (no exact rule can cover this command: part of it is only known when \
                    it runs, or it writes into a file)"
                .to_string();
        }
        rules
            .iter()
            .map(|rule| format!("`{}`", quote::visible(rule)))
            .collect::<Vec<_>>()
            .join(" and ")
    }

    /// The call in words: "Bash with command `ls`", "Write on /p/a.rs".
    fn subject(&self) -> String {
        match &self.access {
            Access::Command(command) => {
                let command = command.trim();
                let cut: String = command.chars().take(200).collect();
                let ellipsis = if cut.len() < command.len() { "…" } else { "" };
                let shown = quote::visible(&cut);
                format!("{} with command `{shown}{ellipsis}`", self.tool)
            }
            Access::Read(path) | Access::Write(path) => {
                format!("{} on {}", self.tool, path.display())
            }
            Access::Other => self.tool.clone(),
        }
    }

    /// The text the model (and the user) reads: what was decided, why, and what would change it.
    pub fn message(&self) -> String {
        let subject = self.subject();
        let suggestion = self.suggestion();
        match (&self.behavior, &self.reason) {
            (Behavior::Allow, reason) => format!("{subject} is allowed by {reason}."),
            (Behavior::Deny, DecisionReason::Rule(rule)) if rule.kind() == RuleKind::Deny => {
                format!(
                    "Permission to use {subject} was denied by rule `{rule}` in {}. Do not retry \
                     it; find another way or ask the user.",
                    rule.source()
                )
            }
            (Behavior::Deny, DecisionReason::Rule(rule)) => format!(
                "Permission to use {subject} was denied: ask rule `{rule}` in {} requires \
                 approval, and dontAsk mode denies whatever would ask.",
                rule.source()
            ),
            (Behavior::Deny, DecisionReason::Mode(PermissionMode::Plan)) => format!(
                "Permission to use {subject} was denied: plan mode allows only read-only tools. \
                 Keep to reading and planning; changes wait until the user leaves plan mode."
            ),
            (Behavior::Deny, DecisionReason::Mode(mode)) => format!(
                "Permission to use {subject} was denied: it needs approval, and {mode} mode \
                 denies whatever no rule allows. To permit it, add an allow rule such as \
                 {suggestion} to the settings or --allowedTools."
            ),
            (Behavior::Deny, DecisionReason::Sandboxed) => {
                format!("Permission to use {subject} was denied.")
            }
            (Behavior::Deny, DecisionReason::OutsideWorkspace(resolved)) => format!(
                "Permission to use {subject} was denied: the path resolves to {}, outside the \
                 workspace. Write inside the project instead, or have the user add the folder \
                 with --add-dir or an allow rule such as `Edit(/{})`.",
                resolved.display(),
                resolved.display()
            ),
            (Behavior::Deny | Behavior::Ask, DecisionReason::Protected(path))
                if matches!(self.access, Access::Read(_)) =>
            {
                format!(
                    "Permission to use {subject} needs approval: {} is among the home folder's \
                     private files (its dot-files and dot-folders, where programs keep tokens \
                     and passwords), which are read only with a person's approval{}. If the \
                     user wants it read, they can allow it with a rule naming it, such as \
                     `Read({})`, or list it in `sandbox.filesystem.allowRead` of their user \
                     settings.",
                    path.display(),
                    if self.behavior == Behavior::Deny {
                        ", and there is nobody to ask"
                    } else {
                        ""
                    },
                    path_specifier(path)
                )
            }
            (Behavior::Deny, DecisionReason::Protected(path)) => format!(
                "Permission to use {subject} was denied: {} is a protected path (settings, git \
                 hooks and config, editor tasks, MCP servers and shell start-up files decide \
                 what runs later), so a write there always needs a person's approval, and there \
                 is nobody to ask. Leave it alone, or have the user allow it with a rule naming \
                 the path, such as `Edit({})`.",
                path.display(),
                path_specifier(path)
            ),
            (Behavior::Ask, DecisionReason::Protected(path)) => format!(
                "Permission to use {subject} needs approval: {} is a protected path, and writes \
                 there always ask.",
                path.display()
            ),
            (Behavior::Ask, DecisionReason::Rule(rule))
                if rule.kind() == RuleKind::Deny && rule.tool() == "Bash" =>
            {
                format!(
                    "Permission to use {subject} needs approval: a word inside it starts a \
                     command that deny rule `{rule}` in {} denies, and the program before it \
                     may run it.",
                    rule.source()
                )
            }
            (Behavior::Ask, DecisionReason::Rule(rule)) if rule.kind() == RuleKind::Deny => {
                format!(
                    "Permission to use {subject} needs approval: it prints file contents (git \
                     history, diffs, blobs) that may hold a file deny rule `{rule}` in {} keeps \
                     from being read.",
                    rule.source()
                )
            }
            (Behavior::Ask, DecisionReason::Rule(rule))
                if rule.kind() == RuleKind::Ask && rule.tool() == "Read" =>
            {
                format!(
                    "Permission to use {subject} needs approval: it names a private file of \
                     the home folder or a folder holding a credential store ({}), and without \
                     the sandbox nothing else keeps the command out of it.",
                    rule.specifier().unwrap_or_default()
                )
            }
            (Behavior::Ask, DecisionReason::Rule(rule)) => format!(
                "Permission to use {subject} needs approval: it matches ask rule `{rule}` in {}.",
                rule.source()
            ),
            (Behavior::Ask, reason) => format!(
                "Permission to use {subject} needs approval: no rule allows it in {reason}. To \
                 allow it without asking, add an allow rule such as {suggestion} (settings \
                 `permissions.allow` or --allowedTools), or choose a --permission-mode such as \
                 acceptEdits (file edits in the workspace) or bypassPermissions."
            ),
        }
    }
}

/// A path as a specifier that names exactly it: `//abs` for an absolute path, with pattern
/// characters in it escaped.
fn path_specifier(path: &Path) -> String {
    let text = super::path_match::escape(&path.to_string_lossy());
    if path.is_absolute() {
        format!("/{text}")
    } else {
        text
    }
}

/// Everything needed to decide a call: the mode, the rules, the workspace and the home folder
/// (for `~/` specifiers).
///
/// The mode and the session's grants (rules and folders added while it runs) can change under
/// a shared `Arc<Permissions>`, and are shared by clones; see [`super::live`].
#[derive(Debug, Clone)]
pub struct Permissions {
    mode: Arc<ModeCell>,
    pub rules: RuleSet,
    pub workspace: Arc<Workspace>,
    pub home: Option<PathBuf>,
    granted: Arc<SessionGrants>,
}

impl Permissions {
    pub fn new(mode: PermissionMode, rules: RuleSet, workspace: Arc<Workspace>) -> Self {
        Self::assemble(
            mode,
            rules,
            workspace,
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
        )
    }

    pub(super) fn assemble(
        mode: PermissionMode,
        rules: RuleSet,
        workspace: Arc<Workspace>,
        home: Option<PathBuf>,
    ) -> Self {
        Self {
            mode: ModeCell::new(mode),
            rules,
            workspace,
            home,
            granted: Arc::default(),
        }
    }

    /// The mode in force now.
    pub fn mode(&self) -> PermissionMode {
        self.mode.get()
    }

    /// Gives this copy a mode of its own: it no longer follows changes made through the copies
    /// it was cloned from (nor they its). For a subagent's narrower mode, a teammate's.
    pub fn set_own_mode(&mut self, mode: PermissionMode) {
        self.mode = ModeCell::new(mode);
    }

    /// Changes the mode of this copy and of every copy sharing its mode, from their next
    /// check on (a session's `set_permission_mode`).
    pub fn change_mode(&self, mode: PermissionMode) {
        self.mode.set(mode);
    }

    /// Grants `texts` as `kind` rules for the rest of the session (all or none: one that does
    /// not parse adds nothing). `base` anchors `/x` path specifiers; `source` names where they
    /// came from in messages.
    pub fn grant_rules(
        &self,
        kind: RuleKind,
        texts: &[String],
        base: &Path,
        source: &str,
    ) -> Result<(), RuleError> {
        self.granted.add_rules(kind, texts, base, source)
    }

    /// Replaces the session's granted `kind` rules with `texts` (rules the session started
    /// with stay).
    pub fn replace_granted_rules(
        &self,
        kind: RuleKind,
        texts: &[String],
        base: &Path,
        source: &str,
    ) -> Result<(), RuleError> {
        self.granted.replace_rules(kind, texts, base, source)
    }

    /// Takes back granted `kind` rules spelled as in `texts`; returns how many there were.
    pub fn revoke_rules(&self, kind: RuleKind, texts: &[String]) -> usize {
        self.granted.remove_rules(kind, texts)
    }

    /// The rules granted while the session runs.
    pub fn granted_rules(&self) -> RuleSet {
        self.granted.rules().clone()
    }

    /// Adds folders to the workspace for the rest of the session (relative ones taken from
    /// the project root), resolved as `--add-dir` does.
    pub fn grant_dirs(&self, dirs: &[PathBuf]) {
        let root = &self.workspace.root;
        self.granted
            .add_dirs(dirs.iter().map(|dir| crate::workspace::resolve(dir, root)));
    }

    /// Takes back folders granted with [`Self::grant_dirs`].
    pub fn revoke_dirs(&self, dirs: &[PathBuf]) {
        let root = &self.workspace.root;
        let resolved: Vec<PathBuf> = dirs
            .iter()
            .map(|dir| crate::workspace::resolve(dir, root))
            .collect();
        self.granted.remove_dirs(&resolved);
    }

    /// The folders granted while the session runs.
    pub fn granted_dirs(&self) -> Vec<PathBuf> {
        self.granted.dirs()
    }

    /// Decides one call of `tool` (read-only or not) that would touch `access`; `cwd` is the
    /// calling agent's working directory.
    ///
    /// In order: a deny rule anywhere wins; plan mode refuses anything not read-only; a write
    /// to a protected path asks (in every mode) unless an allow rule names the path; a read of
    /// a dot-file or dot-folder of the home folder outside the workspace asks (in every mode
    /// but bypassPermissions) unless an allow rule names it (see `private_home`); an ask
    /// rule asks (in bypassPermissions too — an ask rule is the user saying "check with me",
    /// which a blanket mode should not silence); a write resolving outside the workspace is
    /// refused unless an allow rule names its path; an allow rule allows; then the mode
    /// decides. dontAsk turns every ask into a deny.
    pub fn check(&self, tool: &str, read_only: bool, access: &Access, cwd: &Path) -> Decision {
        self.check_call(tool, read_only, false, access, cwd)
    }

    /// As [`Self::check`]; `sandboxed` says the call will run in the OS sandbox and the
    /// settings trust it (`autoAllowBashIfSandboxed`): what only the mode would have asked
    /// about is allowed. Deny rules, ask rules and plan mode still apply.
    pub fn check_call(
        &self,
        tool: &str,
        read_only: bool,
        sandboxed: bool,
        access: &Access,
        cwd: &Path,
    ) -> Decision {
        // Read once: the mode may change while the call is decided.
        let mode = self.mode();
        let granted = self.granted.rules();
        let joined;
        let rules = if granted.is_empty() {
            &self.rules
        } else {
            joined = merged(&self.rules, &granted);
            &joined
        };
        let widened;
        let workspace = if self.granted.has_dirs() {
            let mut wider = Workspace::clone(&self.workspace);
            wider.additional.extend(self.granted.dirs());
            widened = wider;
            &widened
        } else {
            &*self.workspace
        };
        let mut call = Call::new(tool, access, cwd, self.home.as_deref(), workspace);
        call.edits_accepted = matches!(
            mode,
            PermissionMode::AcceptEdits | PermissionMode::BypassPermissions
        );
        // git led into a repository kept inside the project: no allow rule vouches for it.
        let embedded = matches!(access, Access::Command(command)
            if crate::builtin::bash::enters_embedded_repository(command, cwd));
        let (mut behavior, mut reason) = decide(
            mode,
            rules,
            &call,
            read_only && !embedded,
            sandboxed,
            embedded,
        );
        if behavior != Behavior::Deny {
            if let Access::Command(command) = access {
                let found = secret_args::sandbox_unavailable()
                    .then(|| secret_args::check(self, command, cwd))
                    .flatten();
                match found {
                    Some(SecretArg::Denied(rule)) => {
                        (behavior, reason) = (Behavior::Deny, DecisionReason::Rule(rule));
                    }
                    Some(SecretArg::Asks(rule)) if behavior == Behavior::Allow => {
                        (behavior, reason) = (Behavior::Ask, DecisionReason::Rule(rule));
                    }
                    _ => {}
                }
            }
        }
        let behavior = match (behavior, mode) {
            (Behavior::Ask, PermissionMode::DontAsk) => Behavior::Deny,
            (behavior, _) => behavior,
        };
        Decision {
            behavior,
            reason,
            tool: tool.to_string(),
            access: access.clone(),
        }
    }
}

/// The verdict before dontAsk turns asks into refusals; see [`Permissions::check`].
fn decide(
    mode: PermissionMode,
    rules: &RuleSet,
    call: &Call<'_>,
    read_only: bool,
    sandboxed: bool,
    embedded: bool,
) -> (Behavior, DecisionReason) {
    if let Some(rule) = rules.denying(call) {
        return (Behavior::Deny, DecisionReason::Rule(rule.clone()));
    }
    if mode == PermissionMode::Plan && !read_only {
        return (Behavior::Deny, DecisionReason::Mode(PermissionMode::Plan));
    }
    if let Some(rule) = rules.denying_later(call) {
        return (Behavior::Ask, DecisionReason::Rule(rule.clone()));
    }
    match git_reads::check(rules, call) {
        Some(HistoryRead::Denied(rule)) => return (Behavior::Deny, DecisionReason::Rule(rule)),
        Some(HistoryRead::Asks(rule)) => return (Behavior::Ask, DecisionReason::Rule(rule)),
        None => {}
    }
    if let Some(path) = protected::unnamed_protected_write(call, rules) {
        return (Behavior::Ask, DecisionReason::Protected(path));
    }
    // The home folder's dot-files hold tokens no list keeps up with: reading one outside the
    // workspace asks, unless the user said not to ask at all (bypassPermissions).
    if mode != PermissionMode::BypassPermissions {
        if let Some(path) = private_home::unnamed_private_read(call, rules) {
            return (Behavior::Ask, DecisionReason::Protected(path));
        }
    }
    if let Some(rule) = rules.asking(call) {
        return (Behavior::Ask, DecisionReason::Rule(rule.clone()));
    }
    if let Some(write) = call
        .write
        .as_ref()
        .filter(|w| !call.workspace.contains(&w.resolved))
    {
        return match rules.allowing_path(call) {
            Some(rule) => (Behavior::Allow, DecisionReason::Rule(rule.clone())),
            None => (
                Behavior::Deny,
                DecisionReason::OutsideWorkspace(write.resolved.clone()),
            ),
        };
    }
    if let Some(rule) = rules.allowing(call).filter(|_| !embedded) {
        return (Behavior::Allow, DecisionReason::Rule(rule.clone()));
    }
    if sandboxed && !read_only {
        return (Behavior::Allow, DecisionReason::Sandboxed);
    }
    let reason = DecisionReason::Mode(mode);
    let behavior = match mode {
        PermissionMode::BypassPermissions => Behavior::Allow,
        _ if read_only => Behavior::Allow,
        PermissionMode::AcceptEdits if call.write.is_some() => Behavior::Allow,
        PermissionMode::Plan => Behavior::Deny,
        _ => Behavior::Ask,
    };
    (behavior, reason)
}
