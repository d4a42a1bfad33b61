//! `--output-format text`: the main agent's final answer, for people and `$(fleet -p …)`.
//!
//! The answer is written when the session is over: a session can run the main agent again
//! when background tasks report back, and the last run's answer is the one that counts. An
//! earlier run that failed still has its error shown, so nothing goes unreported.
//!
//! A run that ended in an error has no answer: what went wrong goes to stderr, never to
//! stdout where `$(fleet -p …)` would take it for one (the exit code says it failed too).
//!
//! Every retry of a model request gets one line on stderr as it happens, in every mode.
//!
//! With `--verbose` it narrates the run as it happens: the main agent's text streams live,
//! each tool call gets one line, a subagent's calls appear indented and tagged with
//! who made them, background tasks are announced when they start and end, and the last line
//! sums up the agent tree when subagents ran.
//!
//! Everything that comes from the model or a tool (text, call inputs, outputs, errors, agent
//! labels) passes through [`crate::visible`] on its way out, so its escape sequences are shown
//! rather than obeyed by the terminal; the printer's own marks are written as they are.

mod format;
#[cfg(test)]
mod tests;

use super::Printer;
use crate::visible::{visible, visible_line};
use fleet_protocol::{
    AgentEvent, AgentRef, ContentBlock, EventKind, RetryScope, TaskStatus, TeamEvent, TreeReport,
};
use format::{call_summary, first_line, outcome, short_id, ERROR_CHARS, SUMMARY_CHARS};
use std::collections::HashMap;
use std::io::{self, Write};
use std::time::Duration;

/// Tools that start a subagent; a subagent calling one makes the tree one level deeper.
const SPAWNING_TOOLS: [&str; 2] = ["Agent", "Task"];

pub struct TextPrinter {
    out: Box<dyn Write + Send>,
    /// Where a failed run's error goes (stderr).
    err: Box<dyn Write + Send>,
    verbose: bool,
    /// Whether the cursor is at the start of a line, so notes never glue onto streamed text.
    at_line_start: bool,
    /// Text streamed for the block in progress; empty when the model sent no deltas for it.
    streamed: String,
    /// The last text block shown, if nothing came after it: when it is the final answer,
    /// it is not printed twice.
    last_text: Option<String>,
    /// Not verbose: errors of main runs that a later run followed, then the latest answer.
    earlier_errors: Vec<String>,
    answer: Option<(String, bool)>,
    /// The agent tree as the latest main result reported it.
    tree: Option<TreeReport>,
    /// Depth of the subagent each spawning call starts, kept only below the first level (a
    /// subagent whose call is not here is a child of the main agent).
    depth_by_call: HashMap<String, usize>,
}

impl TextPrinter {
    /// Answers to `out`, errors to stderr.
    pub fn new(out: Box<dyn Write + Send>, verbose: bool) -> Self {
        Self::with_errors(out, Box::new(io::stderr()), verbose)
    }

    /// Answers to `out`, the errors that ended runs to `err`.
    pub fn with_errors(
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
        verbose: bool,
    ) -> Self {
        Self {
            out,
            err,
            verbose,
            at_line_start: true,
            streamed: String::new(),
            last_text: None,
            earlier_errors: Vec::new(),
            answer: None,
            tree: None,
            depth_by_call: HashMap::new(),
        }
    }

    fn write(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.at_line_start = text.ends_with('\n');
        self.out.flush()
    }

    /// The error that ended a run, on stderr, escape sequences shown rather than obeyed.
    fn error(&mut self, message: &str) -> io::Result<()> {
        self.err
            .write_all(format!("fleet: {}\n", visible(message)).as_bytes())?;
        self.err.flush()
    }

    fn end_line(&mut self) -> io::Result<()> {
        if self.at_line_start {
            Ok(())
        } else {
            self.write("\n")
        }
    }

    /// A line of its own, after whatever was streamed before it.
    fn note(&mut self, line: &str) -> io::Result<()> {
        self.end_line()?;
        self.last_text = None;
        self.write(&format!("{line}\n"))
    }

    /// A line about another agent's work. It leaves `last_text` alone: a background agent's
    /// line landing between the main agent's answer and its result must not make the answer
    /// print twice.
    fn aside(&mut self, line: &str) -> io::Result<()> {
        self.end_line()?;
        self.write(&format!("{line}\n"))
    }

    /// 0 for the main agent, 1 for its children, and so on.
    fn depth(&self, agent: &AgentRef) -> usize {
        match &agent.parent_tool_use_id {
            None => 0,
            Some(call) => self.depth_by_call.get(call).copied().unwrap_or(1),
        }
    }

    /// `  ↳ [Explore a1b2c3d] `: indented one step per level, with the agent's type and id.
    fn tag(&self, agent: &AgentRef) -> String {
        let indent = "  ".repeat(self.depth(agent));
        let id = short_id(&agent.agent_id);
        match &agent.subagent {
            Some(label) => format!(
                "{indent}↳ [{} {}] ",
                visible_line(&label.subagent_type),
                visible_line(id)
            ),
            None => format!("{indent}↳ [{}] ", visible_line(id)),
        }
    }

    fn remember_spawn(&mut self, call_id: &str, depth: usize) {
        if depth > 1 {
            self.depth_by_call.insert(call_id.to_string(), depth);
        }
    }

    fn main_event(&mut self, kind: &EventKind) -> io::Result<()> {
        match kind {
            EventKind::TextDelta(text) => {
                self.streamed.push_str(text);
                self.write(&visible(text))
            }
            EventKind::AssistantBlock { block, .. } => match block {
                ContentBlock::Text { text, .. } => {
                    // A provider that does not stream still gets its text shown.
                    if std::mem::take(&mut self.streamed).is_empty() {
                        self.write(&visible(text))?;
                    }
                    self.end_line()?;
                    self.last_text = Some(text.clone());
                    Ok(())
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    self.note(&format!("● {}", call_summary(name, input)))
                }
                _ => Ok(()),
            },
            EventKind::ToolResult(result) => self.note(&format!("  ⎿ {}", outcome(result))),
            EventKind::Finished(result) => {
                if result.tree.is_some() {
                    self.tree.clone_from(&result.tree);
                }
                if result.is_error() {
                    self.end_line()?;
                    self.error(&result.result)
                } else if self.last_text.as_deref() == Some(result.result.as_str()) {
                    self.end_line()
                } else {
                    self.note(&visible(&result.result))
                }
            }
            _ => Ok(()),
        }
    }

    /// A retry, as it happens, on stderr in every mode (`fleet: ↻ …`, a subagent's tagged
    /// with who it is): a run that waits on a failing server must not look idle, and stdout
    /// stays the answer's. In the narrated trace, what was streamed of the failed reply is
    /// closed off first, so that the next reply starts on a line of its own.
    fn retry(&mut self, agent: &AgentRef, kind: &EventKind) -> io::Result<()> {
        let EventKind::Retry {
            attempt,
            max_attempts,
            delay_ms,
            reason,
            scope,
            ..
        } = kind
        else {
            return Ok(());
        };
        if self.verbose && agent.is_main() {
            self.streamed.clear();
            self.last_text = None;
            self.end_line()?;
        }
        let tag = if agent.is_main() {
            String::new()
        } else {
            self.tag(agent).trim_start().to_owned()
        };
        let line = retry_line(*attempt, *max_attempts, *delay_ms, reason, *scope);
        self.err
            .write_all(format!("fleet: {tag}{line}\n").as_bytes())?;
        self.err.flush()
    }

    /// A subagent's calls, failures and texts (its retries go to stderr, see [`Self::retry`]);
    /// its streamed text and its result stay
    /// out (the result reaches the parent as a tool result or a task notification).
    fn subagent_event(&mut self, agent: &AgentRef, kind: &EventKind) -> io::Result<()> {
        let line = match kind {
            EventKind::AssistantBlock { block, .. } => match block {
                ContentBlock::Text { text, .. } => first_line(text, SUMMARY_CHARS),
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => {
                    if SPAWNING_TOOLS.contains(&name.as_str()) {
                        self.remember_spawn(id, self.depth(agent) + 1);
                    }
                    format!("● {}", call_summary(name, input))
                }
                _ => return Ok(()),
            },
            EventKind::ToolResult(result) if result.is_error => {
                format!("⎿ {}", outcome(result))
            }
            _ => return Ok(()),
        };
        if line.is_empty() {
            return Ok(());
        }
        let tag = self.tag(agent);
        self.aside(&format!("{tag}{line}"))
    }

    /// Background tasks starting and ending, at the depth of the agent that owns them.
    fn task_event(&mut self, agent: &AgentRef, kind: &EventKind) -> io::Result<()> {
        let indent = "  ".repeat(self.depth(agent));
        let line = match kind {
            EventKind::TaskStarted(task) => {
                self.remember_spawn(&task.tool_use_id, task.spawn_depth as usize);
                let what = if task.is_backgrounded {
                    "background task"
                } else {
                    "task"
                };
                format!(
                    "⧗ {what} {} started: {}",
                    short_id(&task.task_id),
                    first_line(&task.description, SUMMARY_CHARS)
                )
            }
            EventKind::TaskUpdated {
                task_id, status, ..
            } => {
                let mark = match status {
                    TaskStatus::Completed => "✓",
                    TaskStatus::Failed => "✗",
                    TaskStatus::Killed => "■",
                    TaskStatus::Pending | TaskStatus::Running => return Ok(()),
                };
                format!("{mark} task {} {status}", short_id(task_id))
            }
            // Why a task failed comes only with its notification.
            EventKind::TaskNotified(n) if n.status == TaskStatus::Failed => {
                let why = if n.result.trim().is_empty() {
                    &n.summary
                } else {
                    &n.result
                };
                format!("  ⎿ {}", first_line(why, ERROR_CHARS))
            }
            _ => return Ok(()),
        };
        self.aside(&format!("{indent}{line}"))
    }

    /// A team's life in one line each: who joined, who said what to whom, who left.
    fn team_event(&mut self, event: &TeamEvent) -> io::Result<()> {
        let line = match event {
            TeamEvent::TeamCreated { team, .. } => format!("⚑ team {team} created"),
            TeamEvent::TeammateSpawned {
                name,
                agent_type,
                resumed,
                ..
            } => {
                let verb = if *resumed { "is back" } else { "joined" };
                format!("+ {name} ({agent_type}) {verb}")
            }
            TeamEvent::TeammateIdle { name, .. } => format!("… {name} is idle"),
            TeamEvent::TeammateTerminated { reason, .. } => format!("- {reason}"),
            TeamEvent::TeamMessage {
                from,
                to,
                summary,
                text,
                ..
            } => {
                // Idle notices come after every turn; the "is idle" line already says it.
                if text == "idle_notification" {
                    return Ok(());
                }
                let said = summary.as_deref().unwrap_or(text);
                format!("✉ {from} → {to}: {}", first_line(said, SUMMARY_CHARS))
            }
            TeamEvent::TaskListUpdated {
                task_id,
                subject,
                status,
                owner,
                action,
                ..
            } => {
                let owner = owner
                    .as_deref()
                    .map(|o| format!(" ({o})"))
                    .unwrap_or_default();
                format!("☐ task #{task_id} {action}: [{status}] {subject}{owner}")
            }
            TeamEvent::TeamDeleted { team } => format!("⚑ team {team} ended"),
            TeamEvent::MailRefused { reason, .. } => format!("⚠ {reason}"),
            TeamEvent::TeamSummary { .. } => return Ok(()),
        };
        self.aside(&visible_line(&line))
    }

    /// Not verbose: keeps the latest answer, and the error of any run that did not get the
    /// last word.
    fn quiet_event(&mut self, event: &AgentEvent) {
        if let (EventKind::Finished(result), true) = (&event.kind, event.agent.is_main()) {
            // With `--json-schema` the answer is the structured value, as compact JSON.
            let text = match &result.structured_output {
                Some(value) => value.to_string(),
                None => result.result.clone(),
            };
            let next = (text, result.is_error());
            if let Some((text, true)) = self.answer.replace(next) {
                self.earlier_errors.push(text);
            }
        }
    }
}

impl Printer for TextPrinter {
    fn event(&mut self, event: &AgentEvent) -> io::Result<()> {
        if let EventKind::Hook(note) = &event.kind {
            // What a hook wants the user to read (its systemMessage, a non-blocking error, a
            // timeout, why it stopped the agent) goes to stderr in any mode, one line each,
            // naming the hook.
            if let fleet_protocol::HookNote::Informational { content, .. } = note {
                eprintln!("fleet: {}", visible_line(content));
            }
            return Ok(());
        }
        if let EventKind::ModelFallback { from, to, .. } = &event.kind {
            // Said in every mode: the answer comes from another model than the one asked for.
            eprintln!(
                "fleet: {}",
                visible_line(&crate::headless::flags::fallback_notice(from, to))
            );
            return Ok(());
        }
        if let EventKind::Retry { .. } = &event.kind {
            return self.retry(&event.agent, &event.kind);
        }
        if let EventKind::Waiting(report) = &event.kind {
            // Said in every mode, on stderr: a run that waits long must say on what.
            let tag = if event.agent.is_main() {
                String::new()
            } else {
                self.tag(&event.agent).trim_start().to_owned()
            };
            let line = format!(
                "fleet: {tag}still waiting after {} s for {}\n",
                report.waited_ms / 1000,
                visible_line(&report.waiting_for)
            );
            self.err.write_all(line.as_bytes())?;
            return self.err.flush();
        }
        if let (EventKind::Finished(result), true) = (&event.kind, event.agent.is_main()) {
            // Said in every mode: the answer printed is not the whole answer.
            if let Some(why) = cut_short(result) {
                self.error(why)?;
            }
        }
        if let EventKind::TreeTotals(tree) = &event.kind {
            // Only the narrated (verbose) trace ends with a summary of the tree.
            if self.verbose {
                self.tree = Some(tree.clone());
            }
            return Ok(());
        }
        if !self.verbose {
            self.quiet_event(event);
            return Ok(());
        }
        match &event.kind {
            EventKind::TaskStarted(_)
            | EventKind::TaskUpdated { .. }
            | EventKind::TaskNotified(_)
            | EventKind::BackgroundTasksChanged(_) => self.task_event(&event.agent, &event.kind),
            EventKind::Team(team) => self.team_event(team),
            kind if event.agent.is_main() => self.main_event(kind),
            kind => self.subagent_event(&event.agent, kind),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        for message in std::mem::take(&mut self.earlier_errors) {
            self.error(&message)?;
        }
        match self.answer.take() {
            Some((message, true)) => self.error(&message)?,
            Some((answer, false)) => self.write(&format!("{}\n", visible(&answer)))?,
            None => {}
        }
        if let Some(summary) = self.tree.take().as_ref().and_then(format::tree_summary) {
            self.note(&summary)?;
        }
        self.out.flush()
    }
}

/// `↻ 529 Overloaded: retrying in 1s 500ms (retry 1 of 8)`. Retries are counted as Claude
/// Code counts them: the event names the attempt about to start (2 for the first retry) out
/// of every attempt, the line the retry out of the retries. A retry of the whole turn says
/// so, since what was shown of the reply is asked for again.
fn retry_line(
    attempt: u32,
    max_attempts: u32,
    delay_ms: u64,
    reason: &str,
    scope: RetryScope,
) -> String {
    let delay = humantime::format_duration(Duration::from_millis(delay_ms));
    let what = match scope {
        RetryScope::Request => "retrying",
        RetryScope::Turn => "asking for the whole turn again",
    };
    format!(
        "↻ {}: {what} in {delay} (retry {} of {})",
        first_line(reason, ERROR_CHARS),
        attempt.saturating_sub(1).max(1),
        max_attempts.saturating_sub(1).max(1)
    )
}

/// Why a successful run's answer is incomplete, when the model was stopped mid-answer: by the
/// output limit, or by the context window filling up (which a larger limit would not mend).
fn cut_short(result: &fleet_protocol::RunResult) -> Option<&'static str> {
    if result.is_error() {
        return None;
    }
    match result.stop_reason.as_ref()? {
        fleet_protocol::StopReason::MaxTokens => Some(
            "the answer was cut off at the output limit (max_tokens); raise it with \
             --max-output-tokens or FLEET_MAX_OUTPUT_TOKENS",
        ),
        fleet_protocol::StopReason::ModelContextWindowExceeded => Some(
            "the answer was cut off because the model's context window is full; start a new \
             session, /compact, or use a server with a larger context",
        ),
        _ => None,
    }
}
