//! What the Agent tool answers: the text the model reads and the structured copy printers
//! show (`tool_use_result`), for a finished foreground child and a launched background one.

use super::build::{Blueprint, Kind};
use crate::isolation::WorktreeReport;
use fleet_protocol::{RunResult, TaskUsage, Usage};
use fleet_tools::ToolOutput;
use serde_json::json;
use std::time::Duration;

/// A child's runs, summed.
#[derive(Debug, Default)]
pub(crate) struct ChildOutcome {
    pub last: Option<RunResult>,
    /// Unreported (`null`) when every reply of every run reported no usage.
    pub usage: Usage,
    pub cost_usd: f64,
    /// Replies that reported no usage; they are in neither `usage` nor `cost_usd`.
    pub unreported_replies: u64,
    pub turns: u32,
    pub tool_uses: u64,
    pub transcript_error: Option<String>,
}

impl ChildOutcome {
    pub fn total_tokens(&self) -> u64 {
        self.usage.input_tokens
            + self.usage.output_tokens
            + self.usage.cache_read()
            + self.usage.cache_creation()
    }

    /// The totals a task notification carries (its duration is filled in by the registry).
    pub fn task_usage(&self) -> TaskUsage {
        TaskUsage {
            total_tokens: self.total_tokens(),
            tool_uses: self.tool_uses,
            duration_ms: 0,
            unreported_replies: self.unreported_replies,
        }
    }

    /// `1234 tokens`, or that the server reported none, for the line the parent reads.
    fn tokens_text(&self) -> String {
        if self.usage.is_reported() {
            format!("{} tokens", self.total_tokens())
        } else {
            "usage not reported".to_string()
        }
    }

    /// The child's answer, or what stopped it.
    pub fn result_text(&self) -> String {
        let mut text = match &self.last {
            Some(result) if result.is_error() => {
                format!("The agent did not finish: {}", result.result)
            }
            Some(result) => result.result.clone(),
            None => "The agent did not run.".to_string(),
        };
        if let Some(err) = &self.transcript_error {
            text.push_str(&format!(
                "\n\n(Its transcript could not be written completely: {err})"
            ));
        }
        text
    }
}

/// A foreground child that ran to its end.
pub(crate) fn completed(
    agent_id: &str,
    bp: &Blueprint,
    outcome: &ChildOutcome,
    elapsed: Duration,
    worktree: Option<&WorktreeReport>,
) -> ToolOutput {
    let duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let failed = outcome.last.as_ref().is_none_or(RunResult::is_error);
    let mut result = outcome.result_text();
    if let Some(kept) = worktree {
        result.push_str(&super::isolate::kept_text(kept));
    }
    let text = format!(
        "{result}\n\n[agent {agent_id} ({}): {} tool uses, {}, {:.1}s]",
        bp.kind.type_name(),
        outcome.tool_uses,
        outcome.tokens_text(),
        elapsed.as_secs_f64()
    );
    let structured = json!({
        "status": if failed { "failed" } else { "completed" },
        "agentId": agent_id,
        "agentType": bp.kind.type_name(),
        "name": bp.name,
        "result": result,
        "usage": outcome.usage,
        "total_cost_usd": outcome.usage.is_reported().then_some(outcome.cost_usd),
        "num_turns": outcome.turns,
        "tool_uses": outcome.tool_uses,
        "total_tokens": outcome.usage.is_reported().then(|| outcome.total_tokens()),
        "duration_ms": duration_ms,
        "worktree": worktree,
    });
    let output = if failed {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    };
    output.with_structured(structured)
}

/// What the caller may do about a task, as much as it holds the tools for: `(tool, use)` pairs
/// kept when `held` names the tool (an agent is never told to use a tool it lacks).
pub(crate) fn held_uses<'a>(held: &[String], offers: &[(&str, &'a str)]) -> Vec<&'a str> {
    offers
        .iter()
        .filter(|(tool, _)| held.iter().any(|h| h == tool))
        .map(|(_, use_)| *use_)
        .collect()
}

/// A background child that has just been started, for an agent holding the tools `held`
/// (the text mentions only those it can use).
pub(crate) fn launched(
    agent_id: &str,
    bp: &Blueprint,
    prompt: &str,
    output_file: &str,
    held: &[String],
) -> ToolOutput {
    let what = match &bp.kind {
        Kind::Fork(_) => format!("Forked {agent_id}"),
        Kind::Defined(def) => format!("Started background agent {agent_id} ({})", def.name),
    };
    let mut text = format!(
        "{what}: {}.\n\
         It works on its own; when it finishes you will receive a <task-notification> with its \
         result. Do not wait for it or check on it in a loop, and do not do its work yourself \
         meanwhile: carry on with other work, or end your turn if there is none.",
        bp.description
    );
    let uses = held_uses(
        held,
        &[
            ("SendMessage", "SendMessage to give it more instructions"),
            ("TaskOutput", "TaskOutput to look at its progress"),
            ("TaskStop", "TaskStop to stop it"),
        ],
    );
    if let Some((last, rest)) = uses.split_last() {
        let list = if rest.is_empty() {
            (*last).to_string()
        } else {
            format!("{} or {last}", rest.join(", "))
        };
        text.push_str(&format!(" Use {list}."));
    }
    if !output_file.is_empty() {
        text.push_str(&format!("\nIts transcript is written to {output_file}."));
    }
    ToolOutput::text(text).with_structured(launch_record(agent_id, bp, prompt, output_file))
}

/// The structured part of an `async_launched` answer (a background start, or a foreground
/// child the user moved to the background).
pub(crate) fn launch_record(
    agent_id: &str,
    bp: &Blueprint,
    prompt: &str,
    output_file: &str,
) -> serde_json::Value {
    json!({
        "isAsync": true,
        "status": "async_launched",
        "agentId": agent_id,
        "agentType": bp.kind.type_name(),
        "name": bp.name,
        "description": bp.description,
        "resolvedModel": bp.model,
        "prompt": prompt,
        "outputFile": output_file,
        "canReadOutputFile": !output_file.is_empty(),
    })
}
