//! Reading hooks in Claude Code's settings shape:
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit",
//!                            "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}
//! ```
//!
//! The same shape comes from every settings file and from an agent file's `hooks` field. A
//! malformed entry is an error naming the file and the place in it; an event or a hook `type`
//! this version does not run (newer Claude Code versions add some) is skipped with a warning,
//! so a user's `~/.claude/settings.json` never stops fleet from starting.

use super::matcher::Matcher;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// How long a hook may run when its entry gives no `timeout`, as in Claude Code.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The moments a hook can run at, spelled as Claude Code spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    SessionStart,
    SessionEnd,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    PermissionRequest,
    Notification,
    Stop,
    SubagentStart,
    SubagentStop,
    PreCompact,
    TeammateIdle,
    TaskCreated,
    TaskCompleted,
    WorktreeCreate,
    WorktreeRemove,
}

impl HookEvent {
    pub const ALL: [HookEvent; 17] = [
        Self::SessionStart,
        Self::SessionEnd,
        Self::UserPromptSubmit,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PostToolUseFailure,
        Self::PermissionRequest,
        Self::Notification,
        Self::Stop,
        Self::SubagentStart,
        Self::SubagentStop,
        Self::PreCompact,
        Self::TeammateIdle,
        Self::TaskCreated,
        Self::TaskCompleted,
        Self::WorktreeCreate,
        Self::WorktreeRemove,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::PermissionRequest => "PermissionRequest",
            Self::Notification => "Notification",
            Self::Stop => "Stop",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::PreCompact => "PreCompact",
            Self::TeammateIdle => "TeammateIdle",
            Self::TaskCreated => "TaskCreated",
            Self::TaskCompleted => "TaskCompleted",
            Self::WorktreeCreate => "WorktreeCreate",
            Self::WorktreeRemove => "WorktreeRemove",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a hook does when it runs. Only commands come from files; callbacks are registered by
/// an SDK host in its `initialize` request and run by the host's own [`super::HookRunner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handler {
    /// A shell command line, run with `sh -c`.
    Command(String),
    /// A function in the SDK host's process, named by the id it registered.
    Callback(String),
}

/// One hook: what runs, how long it may take, and the file that configured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    pub handler: Handler,
    pub timeout: Duration,
    /// The settings or agent file it came from, for messages.
    pub source: Arc<str>,
}

/// A `matcher` and the hooks it guards.
#[derive(Debug, Clone)]
pub struct MatcherGroup {
    pub matcher: Matcher,
    pub hooks: Vec<HookSpec>,
}

/// Hooks by event, in the order their files were read.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    groups: BTreeMap<HookEvent, Vec<MatcherGroup>>,
}

/// A hooks entry that cannot be used, with the file and the place in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: hooks.{path}: {message}")]
pub struct HookConfigError {
    pub source_name: String,
    pub path: String,
    pub message: String,
}

impl HookSet {
    /// Reads the value of a `hooks` key from `source` (a file name, shown in errors). Returns
    /// the hooks and warnings about the parts skipped.
    pub fn parse(value: &Value, source: &str) -> Result<(Self, Vec<String>), HookConfigError> {
        let err = |path: String, message: String| HookConfigError {
            source_name: source.to_string(),
            path,
            message,
        };
        let source_arc: Arc<str> = Arc::from(source);
        let mut set = Self::default();
        let mut warnings = Vec::new();
        let events = match value {
            Value::Object(events) => events,
            Value::Null => return Ok((set, warnings)),
            other => {
                return Err(err(
                    String::new(),
                    format!(
                        "must be an object keyed by event name, found {}",
                        fleet_protocol::json_kind(other)
                    ),
                ))
            }
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::parse(name) else {
                warnings.push(format!(
                    "{source}: hooks.{name}: not an event fleet runs hooks for (skipped); the \
                     events are {}",
                    HookEvent::ALL.map(HookEvent::as_str).join(", ")
                ));
                continue;
            };
            let groups = match groups {
                Value::Array(groups) => groups,
                other => {
                    return Err(err(
                        name.clone(),
                        format!(
                            "must be a list of matcher groups, found {}",
                            fleet_protocol::json_kind(other)
                        ),
                    ))
                }
            };
            for (i, group) in groups.iter().enumerate() {
                let path = format!("{name}[{i}]");
                if let Some(group) = parse_group(group, &path, &source_arc, &mut warnings)
                    .map_err(|(path, message)| err(path, message))?
                {
                    set.groups.entry(event).or_default().push(group);
                }
            }
        }
        Ok((set, warnings))
    }

    /// Adds one matcher group for `event`, after the ones it has.
    pub fn push(&mut self, event: HookEvent, group: MatcherGroup) {
        self.groups.entry(event).or_default().push(group);
    }

    /// Adds `other`'s hooks after this set's.
    pub fn extend(&mut self, other: HookSet) {
        for (event, groups) in other.groups {
            self.groups.entry(event).or_default().extend(groups);
        }
    }

    /// The same hooks with every `Stop` hook moved to `SubagentStop`: an agent file's Stop
    /// hooks are meant for the moment that agent finishes, which for a subagent is its
    /// SubagentStop (as in Claude Code).
    pub fn stop_as_subagent_stop(mut self) -> Self {
        if let Some(stop) = self.groups.remove(&HookEvent::Stop) {
            self.groups
                .entry(HookEvent::SubagentStop)
                .or_default()
                .extend(stop);
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.groups.values().all(Vec::is_empty)
    }

    pub fn has(&self, event: HookEvent) -> bool {
        self.groups.get(&event).is_some_and(|g| !g.is_empty())
    }

    /// The hooks of `event` whose matcher accepts `target` (every group when the event has no
    /// target), each command once even when several groups name it.
    pub fn matching(&self, event: HookEvent, target: Option<&str>) -> Vec<&HookSpec> {
        let mut found: Vec<&HookSpec> = Vec::new();
        for group in self.groups.get(&event).into_iter().flatten() {
            if target.is_some_and(|t| !group.matcher.matches(t)) {
                continue;
            }
            for hook in &group.hooks {
                if !found.iter().any(|seen| seen.handler == hook.handler) {
                    found.push(hook);
                }
            }
        }
        found
    }
}

/// One `{"matcher": …, "hooks": [...]}` entry; also accepts a bare hook (`{"command": …}`),
/// the short form agent files sometimes use. `None` when all its hooks were skipped.
fn parse_group(
    group: &Value,
    path: &str,
    source: &Arc<str>,
    warnings: &mut Vec<String>,
) -> Result<Option<MatcherGroup>, (String, String)> {
    let Value::Object(fields) = group else {
        return Err((
            path.to_string(),
            format!(
                "must be an object with `matcher` and `hooks`, found {}",
                fleet_protocol::json_kind(group)
            ),
        ));
    };
    let matcher = match fields.get("matcher") {
        None | Some(Value::Null) => Matcher::any(),
        Some(Value::String(text)) => Matcher::parse(text).map_err(|e| {
            (
                format!("{path}.matcher"),
                format!("{text:?} is not a regex: {e}"),
            )
        })?,
        Some(other) => {
            return Err((
                format!("{path}.matcher"),
                format!(
                    "must be a string, found {}",
                    fleet_protocol::json_kind(other)
                ),
            ))
        }
    };
    let entries: Vec<(String, &Value)> = match fields.get("hooks") {
        Some(Value::Array(hooks)) => hooks
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("{path}.hooks[{i}]"), h))
            .collect(),
        Some(other) => {
            return Err((
                format!("{path}.hooks"),
                format!(
                    "must be a list of hooks, found {}",
                    fleet_protocol::json_kind(other)
                ),
            ))
        }
        None if fields.contains_key("command") => vec![(path.to_string(), group)],
        None => {
            return Err((
                path.to_string(),
                "has no `hooks` list (e.g. [{\"type\": \"command\", \"command\": \"…\"}])".into(),
            ))
        }
    };
    let mut hooks = Vec::new();
    for (hook_path, entry) in entries {
        if let Some(hook) = parse_hook(entry, &hook_path, source, warnings)? {
            hooks.push(hook);
        }
    }
    Ok((!hooks.is_empty()).then_some(MatcherGroup { matcher, hooks }))
}

fn parse_hook(
    entry: &Value,
    path: &str,
    source: &Arc<str>,
    warnings: &mut Vec<String>,
) -> Result<Option<HookSpec>, (String, String)> {
    let Value::Object(fields) = entry else {
        return Err((
            path.to_string(),
            format!(
                "must be an object like {{\"type\": \"command\", \"command\": \"…\"}}, found {}",
                fleet_protocol::json_kind(entry)
            ),
        ));
    };
    match fields.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == "command" => {}
        Some(Value::String(kind)) => {
            warnings.push(format!(
                "{source}: hooks.{path}: hooks of type {kind:?} are not run by fleet (skipped); \
                 use \"command\""
            ));
            return Ok(None);
        }
        Some(other) => {
            return Err((
                format!("{path}.type"),
                format!(
                    "must be a string, found {}",
                    fleet_protocol::json_kind(other)
                ),
            ))
        }
    }
    let command = match fields.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
        Some(Value::String(_)) => return Err((format!("{path}.command"), "is empty".into())),
        Some(other) => {
            return Err((
                format!("{path}.command"),
                format!(
                    "must be a string, found {}",
                    fleet_protocol::json_kind(other)
                ),
            ))
        }
        None => return Err((path.to_string(), "has no `command`".into())),
    };
    let timeout = match fields.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() && secs <= 86_400.0 => {
                Duration::from_secs_f64(secs)
            }
            _ => {
                return Err((
                    format!("{path}.timeout"),
                    format!("must be a number of seconds between 0 and 86400, found {n}"),
                ))
            }
        },
        Some(other) => {
            return Err((
                format!("{path}.timeout"),
                format!(
                    "must be a number of seconds, found {}",
                    fleet_protocol::json_kind(other)
                ),
            ))
        }
    };
    Ok(Some(HookSpec {
        handler: Handler::Command(command),
        timeout,
        source: source.clone(),
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_claude_codes_shape() {
        let (set, warnings) = HookSet::parse(
            &json!({"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [
                {"type": "command", "command": "echo hi", "timeout": 5}]}]}),
            "settings.json",
        )
        .unwrap();
        assert!(warnings.is_empty());
        let hooks = set.matching(HookEvent::PreToolUse, Some("Bash"));
        assert_eq!(hooks.len(), 1);
        assert_eq!(hooks[0].timeout, Duration::from_secs(5));
        assert_eq!(hooks[0].handler, Handler::Command("echo hi".into()));
        assert!(set.matching(HookEvent::PreToolUse, Some("Read")).is_empty());
        assert!(set
            .matching(HookEvent::PostToolUse, Some("Bash"))
            .is_empty());
    }

    #[test]
    fn errors_name_the_file_and_the_place() {
        let err = HookSet::parse(
            &json!({"Stop": [{"hooks": [{"type": "command"}]}]}),
            "/p/.claude/settings.json",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "/p/.claude/settings.json: hooks.Stop[0].hooks[0]: has no `command`"
        );
        let err = HookSet::parse(&json!({"PreToolUse": [{"matcher": "(", "hooks": []}]}), "f")
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("f: hooks.PreToolUse[0].matcher:"));
        let err = HookSet::parse(&json!({"Stop": {}}), "f").unwrap_err();
        assert!(err.to_string().contains("list of matcher groups"));
    }

    #[test]
    fn unknown_events_and_types_are_skipped_with_a_warning() {
        let (set, warnings) = HookSet::parse(
            &json!({"FutureEvent": [], "Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}),
            "f",
        )
        .unwrap();
        assert!(set.is_empty());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn the_same_command_runs_once_and_the_short_form_is_read() {
        let (set, _) = HookSet::parse(
            &json!({"Stop": [{"command": "a"}, {"matcher": "*", "hooks": [{"command": "a"}]}]}),
            "f",
        )
        .unwrap();
        assert_eq!(set.matching(HookEvent::Stop, None).len(), 1);
        let moved = set.stop_as_subagent_stop();
        assert!(!moved.has(HookEvent::Stop));
        assert!(moved.has(HookEvent::SubagentStop));
    }
}
