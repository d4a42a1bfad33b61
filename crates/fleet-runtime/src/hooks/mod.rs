//! Hooks: commands the user configures to run at moments of an agent's life (before a tool
//! call, when the agent stops, …), which can block, rewrite or add to what happens.
//!
//! One engine serves every source: settings files (merged in the order fleet reads them), an
//! agent file's `hooks` (active only while that agent runs — see [`Hooks::for_agent`]), and
//! later SDK callbacks, which only need a [`HookRunner`] of their own. A [`Hooks`] value is
//! shared (`Arc`) by the agent loop and the tool dispatcher of each agent; every matching hook
//! runs in parallel with the event as JSON on stdin, and their answers are combined into a
//! [`Verdict`]. Each run is reported on the event stream (`hook_started` / `hook_response`).
//!
//! - `config.rs`: the settings shape, events, matcher groups, errors naming the file
//! - `matcher.rs`: which tool names a matcher accepts
//! - `run.rs`: running a command hook (own process group, timeout, killed with its group)
//! - `decision.rs`: exit codes and JSON output into a [`Verdict`]
//! - `events.rs`: one function per event, building its input
//! - `tool.rs`, `turn.rs`: what the dispatcher and the agent loop do with the answers
//! - `worktree.rs`: `WorktreeCreate` hooks that make an isolated agent's worktree
//! - `sdk.rs`: callbacks an SDK host registers in `initialize`

pub mod config;
pub mod decision;
pub(crate) mod events;
pub mod matcher;
pub mod run;
pub mod sdk;
pub(crate) mod tool;
pub(crate) mod turn;
pub(crate) mod worktree;

pub use config::{Handler, HookConfigError, HookEvent, HookSet, HookSpec};
pub use decision::{PermissionVerdict, Verdict};
pub use events::{stop_event, Caller, ToolCallRef};
pub use run::{CommandRunner, Ending, HookRun, HookRunner, RunPlace};
pub use sdk::{SdkHookProblem, SdkHooksError};

use crate::sink::EventSink;
use fleet_protocol::{EventKind, HookNote, PermissionMode};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The hooks one agent runs with, and how they are run.
#[derive(Clone)]
pub struct Hooks {
    set: HookSet,
    runner: Arc<dyn HookRunner>,
    transcript_path: Option<PathBuf>,
    project_dir: Option<PathBuf>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("set", &self.set)
            .field("transcript_path", &self.transcript_path)
            .finish_non_exhaustive()
    }
}

impl Hooks {
    /// `set`'s hooks, run as commands.
    pub fn new(set: HookSet) -> Self {
        Self {
            set,
            runner: Arc::new(CommandRunner),
            transcript_path: None,
            project_dir: None,
        }
    }

    /// The same hooks run by `runner` (a callback source, or a test's).
    pub fn with_runner(mut self, runner: Arc<dyn HookRunner>) -> Self {
        self.runner = runner;
        self
    }

    /// The session transcript, named in every hook's input as `transcript_path`.
    pub fn with_transcript_path(mut self, path: Option<PathBuf>) -> Self {
        self.transcript_path = path;
        self
    }

    /// The project folder, given to commands as `CLAUDE_PROJECT_DIR`.
    pub fn with_project_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.project_dir = dir;
        self
    }

    pub fn set(&self) -> &HookSet {
        &self.set
    }

    pub fn has(&self, event: HookEvent) -> bool {
        self.set.has(event)
    }

    /// The hooks an agent started from a definition runs with: the session's, then the
    /// definition's own (`own`, the `hooks` field, read from `source`). The definition's hooks
    /// live in the returned value only, so they apply to that agent alone and end with it;
    /// its `Stop` hooks fire as `SubagentStop`, the moment such an agent finishes.
    pub fn for_agent(
        session: Option<&Arc<Hooks>>,
        own: Option<&Value>,
        source: &str,
    ) -> Result<Option<Arc<Hooks>>, HookConfigError> {
        let Some(own) = own else {
            return Ok(session.cloned());
        };
        let (own, warnings) = HookSet::parse(own, source)?;
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        if own.is_empty() {
            return Ok(session.cloned());
        }
        let mut hooks = match session {
            Some(session) => Hooks::clone(session),
            None => Hooks::new(HookSet::default()),
        };
        hooks.set.extend(own.stop_as_subagent_stop());
        Ok(Some(Arc::new(hooks)))
    }

    /// Runs every hook of `event` whose matcher accepts `target`, all at once, with the
    /// common fields plus `fields` as input, and combines their answers. Each run is announced
    /// on `sink`. Nothing runs (and nothing is reported) when no hook matches.
    pub async fn fire(
        &self,
        event: HookEvent,
        target: Option<&str>,
        caller: &Caller,
        fields: Map<String, Value>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let name = display_name(event, target);
        let runs = self
            .run_matching(event, target, caller, fields, sink, cancel)
            .await;
        let mut verdict = Verdict::default();
        for run in &runs {
            verdict.add(event, run);
            tell_user(event, &name, run, sink).await;
        }
        verdict
    }

    /// Runs every hook of `event` whose matcher accepts `target`, all at once, and returns
    /// each run as it ended, for events whose hooks answer with more than a verdict
    /// (`WorktreeCreate` prints a path). Each run is announced on `sink`.
    pub(crate) async fn run_matching(
        &self,
        event: HookEvent,
        target: Option<&str>,
        caller: &Caller,
        fields: Map<String, Value>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Vec<HookRun> {
        let hooks = self.set.matching(event, target);
        if hooks.is_empty() {
            return Vec::new();
        }
        let input = Arc::new(self.input(event, caller, fields));
        let place = RunPlace {
            cwd: caller.cwd.clone(),
            project_dir: self.project_dir.clone(),
        };
        let name = display_name(event, target);
        let runs = futures::future::join_all(hooks.into_iter().map(|hook| {
            let input = input.clone();
            let (place, name) = (&place, &name);
            async move {
                let hook_id = uuid::Uuid::new_v4().to_string();
                sink.emit(EventKind::Hook(HookNote::HookStarted {
                    hook_id: hook_id.clone(),
                    hook_name: name.clone(),
                    hook_event: event.to_string(),
                }))
                .await;
                let run = self.runner.run(hook, input, place, cancel).await;
                sink.emit(EventKind::Hook(response(hook_id, name, event, &run)))
                    .await;
                if !matches!(run.ending, Ending::Exited(0 | 2) | Ending::Cancelled) {
                    tracing::warn!(
                        "{event} hook from {} did not succeed: {:?}",
                        hook.source,
                        run.ending
                    );
                }
                run
            }
        }))
        .await;
        runs
    }

    /// The JSON a hook reads on stdin: the fields every event has, then the event's own.
    fn input(&self, event: HookEvent, caller: &Caller, fields: Map<String, Value>) -> Vec<u8> {
        let mut input = Map::new();
        input.insert("session_id".into(), caller.session_id.clone().into());
        input.insert(
            "transcript_path".into(),
            self.transcript_path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
                .into(),
        );
        input.insert("cwd".into(), caller.cwd.display().to_string().into());
        input.insert(
            "permission_mode".into(),
            caller
                .permission_mode
                .map_or("", PermissionMode::as_str)
                .into(),
        );
        input.insert("hook_event_name".into(), event.as_str().into());
        if let Some((id, kind)) = &caller.agent {
            input.insert("agent_id".into(), id.clone().into());
            input.insert("agent_type".into(), kind.clone().into());
        }
        input.extend(fields);
        serde_json::to_vec(&Value::Object(input)).unwrap_or_default()
    }
}

/// The hooks of a child agent: the session's, and for one started from a definition, the
/// definition's own too (a fork has no definition of its own).
pub(crate) fn for_child(
    session: Option<&Arc<Hooks>>,
    definition: Option<&crate::definitions::AgentDefinition>,
) -> Result<Option<Arc<Hooks>>, fleet_tools::ToolError> {
    let Some(def) = definition else {
        return Ok(session.cloned());
    };
    use crate::definitions::AgentSource;
    let source = match &def.source {
        AgentSource::Project(path) | AgentSource::User(path) => path.display().to_string(),
        AgentSource::CommandLine => format!("--agents ({})", def.name),
        AgentSource::BuiltIn => format!("built-in agent {}", def.name),
    };
    Hooks::for_agent(session, def.hooks.as_ref(), &source).map_err(|err| {
        let message = format!("Agent type {:?} has bad hooks: {err}", def.name);
        fleet_tools::ToolError::bad_value_from("subagent_type", message, err)
    })
}

/// How a hook run is named for the user: `Event:target` (`PreToolUse:Bash`), or the event.
fn display_name(event: HookEvent, target: Option<&str>) -> String {
    match target {
        Some(target) => format!("{event}:{target}"),
        None => event.to_string(),
    }
}

/// Whether a hook of `event` saying `continue: false` stops its agent. The rest (a session
/// ending, a compaction, a notification…) have nothing left to stop: their `stopReason` is
/// shown as a plain message.
pub fn honours_continue(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::UserPromptSubmit
            | HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::Stop
            | HookEvent::SubagentStop
            | HookEvent::TeammateIdle
    )
}

/// Shows the user what one run asked to show: its `systemMessage`, its non-blocking error or
/// timeout, and the `stopReason` of a stop, each as an `informational` note naming the hook.
async fn tell_user(event: HookEvent, name: &str, run: &HookRun, sink: &EventSink) {
    let mut own = Verdict::default();
    own.add(event, run);
    let mut notes: Vec<(String, bool)> = own
        .messages
        .into_iter()
        .map(|message| (format!("{name} hook: {message}"), false))
        .collect();
    if let Some(reason) = own.stop {
        notes.push(if honours_continue(event) {
            (format!("{name} hook stopped the agent: {reason}"), true)
        } else {
            (format!("{name} hook: {reason}"), false)
        });
    }
    for (content, prevent_continuation) in notes {
        sink.emit(EventKind::Hook(HookNote::Informational {
            content,
            level: "warning".into(),
            prevent_continuation,
        }))
        .await;
    }
}

fn response(hook_id: String, name: &str, event: HookEvent, run: &HookRun) -> HookNote {
    let (exit_code, outcome) = match &run.ending {
        Ending::Exited(0) => (Some(0), "success"),
        Ending::Exited(code) => (Some(*code), "error"),
        Ending::TimedOut | Ending::Cancelled => (None, "cancelled"),
        Ending::Failed(_) => (None, "error"),
    };
    // `suppressOutput: true` keeps the hook's stdout (its JSON answer) out of what is shown.
    let stdout = if decision::suppresses_output(run) {
        String::new()
    } else {
        run.stdout.clone()
    };
    let mut output = stdout.clone();
    if !run.stderr.is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&run.stderr);
    }
    if let Ending::Failed(why) = &run.ending {
        output.push_str(why);
    }
    if run.ending == Ending::TimedOut {
        output.push_str("(killed at its timeout)");
    }
    HookNote::HookResponse {
        hook_id,
        hook_name: name.to_string(),
        hook_event: event.to_string(),
        output,
        stdout,
        stderr: run.stderr.clone(),
        exit_code,
        outcome: outcome.to_string(),
    }
}

#[cfg(test)]
mod input_tests {
    use super::*;

    fn input(mode: Option<PermissionMode>) -> Vec<u8> {
        let caller = Caller {
            session_id: "s".into(),
            cwd: PathBuf::from("/r"),
            permission_mode: mode,
            agent: None,
        };
        Hooks::new(HookSet::default()).input(HookEvent::WorktreeCreate, &caller, Map::new())
    }

    /// The hook input's bytes are what they were when the mode was a string: the wire name,
    /// and `""` where no agent (so no mode) is behind the event.
    #[test]
    fn the_permission_mode_is_its_wire_name_or_empty_without_an_agent() {
        let with = String::from_utf8(input(Some(PermissionMode::AcceptEdits))).unwrap_or_default();
        assert!(
            with.contains(r#""permission_mode":"acceptEdits""#),
            "{with}"
        );
        let without = String::from_utf8(input(None)).unwrap_or_default();
        assert!(without.contains(r#""permission_mode":"""#), "{without}");
    }
}
