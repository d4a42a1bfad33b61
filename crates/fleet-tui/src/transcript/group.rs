//! A subagent's activity, grouped under the Agent call that started it: its label, live
//! counters, how it ended, and its own cells (which may hold Agent calls with groups of their
//! own, for a subagent's subagents).

use super::cell::Cell;
use fleet_protocol::{TaskStatus, Usage};
use serde_json::Value;
use std::collections::HashMap;

/// Turns and tokens of one agent, live: the committed replies plus the one still arriving.
#[derive(Debug, Default, Clone)]
pub(crate) struct Counters {
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Committed replies whose server reported no usage (not in the counts above).
    pub unreported_replies: u64,
    /// The reply in progress, as its last `AssistantBlock` reported it.
    pub pending: Usage,
}

impl Counters {
    /// A reply's usage as known so far; replaced by later figures for the same reply.
    pub fn progress(&mut self, usage: &Usage) {
        self.pending = usage.clone();
    }

    /// A reply was committed with its final usage.
    pub fn commit(&mut self, usage: &Usage) {
        self.turns += 1;
        if !usage.is_reported() {
            self.unreported_replies += 1;
        }
        self.input_tokens += usage.total_input();
        self.output_tokens += usage.output_tokens;
        self.pending = Usage::default();
    }

    /// Whether the agent has replies and none of them reported usage: its token counts are
    /// unknown, not zero.
    pub fn nothing_reported(&self) -> bool {
        self.unreported_replies > 0 && self.unreported_replies == u64::from(self.turns)
    }

    pub fn input(&self) -> u64 {
        self.input_tokens + self.pending.total_input()
    }

    pub fn output(&self) -> u64 {
        self.output_tokens + self.pending.output_tokens
    }

    pub fn total(&self) -> u64 {
        self.input() + self.output()
    }
}

/// How a subagent ended, from its Agent call's result (foreground) or its task's
/// notification (background).
#[derive(Debug, Default, Clone)]
pub(crate) struct Outcome {
    pub status: Option<TaskStatus>,
    pub cost_usd: Option<f64>,
    pub duration_ms: Option<u64>,
    pub total_tokens: Option<u64>,
    pub turns: Option<u32>,
    /// One line for the folded view: the answer's first line, or what went wrong.
    pub summary: String,
}

#[derive(Debug)]
pub(crate) struct Group {
    pub tool_use_id: String,
    pub agent_id: String,
    pub task_id: Option<String>,
    pub subagent_type: String,
    pub description: String,
    pub background: bool,
    pub cells: Vec<Cell>,
    pub counters: Counters,
    pub outcome: Outcome,
}

impl Group {
    pub fn new(tool_use_id: &str) -> Self {
        Self {
            tool_use_id: tool_use_id.to_string(),
            agent_id: String::new(),
            task_id: None,
            subagent_type: String::new(),
            description: String::new(),
            background: false,
            cells: Vec::new(),
            counters: Counters::default(),
            outcome: Outcome::default(),
        }
    }

    pub fn done(&self) -> bool {
        self.outcome.status.is_some_and(TaskStatus::is_terminal)
    }

    /// Fills in the label where it is still unknown (events, the task's start and the Agent
    /// call's input each may be first to tell it).
    pub fn label(&mut self, subagent_type: &str, description: &str) {
        if self.subagent_type.is_empty() && !subagent_type.is_empty() {
            self.subagent_type = subagent_type.to_string();
        }
        if self.description.is_empty() && !description.is_empty() {
            self.description = description.to_string();
        }
    }

    /// The foreground Agent call answered: its structured copy holds the child's totals.
    /// A background launch answers at once and says nothing about the end.
    pub fn finish_from_result(&mut self, content: &str, structured: Option<&Value>, error: bool) {
        let structured = structured.filter(|v| v.is_object());
        let status = structured
            .and_then(|v| v.get("status"))
            .and_then(Value::as_str);
        if status == Some("async_launched") {
            self.background = true;
            return;
        }
        let failed = error || status == Some("failed");
        let number = |name: &str| structured.and_then(|v| v.get(name));
        self.outcome.status = Some(if failed {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        });
        self.outcome.cost_usd = number("total_cost_usd").and_then(Value::as_f64);
        self.outcome.duration_ms = number("duration_ms").and_then(Value::as_u64);
        self.outcome.total_tokens = number("total_tokens").and_then(Value::as_u64);
        self.outcome.turns = number("num_turns")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok());
        let answer = number("result").and_then(Value::as_str).unwrap_or(content);
        self.outcome.summary = first_line(answer);
    }

    /// The header's words after the label: state, turns, tokens, and cost and time once done.
    pub fn figures(&self) -> String {
        let state = match self.outcome.status {
            Some(status) if status.is_terminal() => status.as_str(),
            _ if self.background => "running in background",
            _ => "running",
        };
        let turns = self.outcome.turns.unwrap_or(self.counters.turns);
        let tokens = match self.outcome.total_tokens {
            Some(tokens) => format!("{} tokens", tokens_short(tokens)),
            None if self.counters.nothing_reported() => "usage not reported".to_string(),
            None => format!("{} tokens", tokens_short(self.counters.total())),
        };
        let mut parts = vec![state.to_string(), plural(u64::from(turns), "turn"), tokens];
        if let Some(cost) = self.outcome.cost_usd {
            parts.push(cost_short(cost));
        }
        if let Some(ms) = self.outcome.duration_ms {
            parts.push(duration_short(ms));
        }
        parts.join(" · ")
    }
}

/// The groups of a session, by the id of the Agent call that started each, in the order
/// they were first seen (for `agents()`).
#[derive(Debug, Default)]
pub(crate) struct Groups {
    by_call: HashMap<String, Group>,
    pub order: Vec<String>,
}

impl Groups {
    pub fn get(&self, call: &str) -> Option<&Group> {
        self.by_call.get(call)
    }

    pub fn get_mut(&mut self, call: &str) -> Option<&mut Group> {
        self.by_call.get_mut(call)
    }

    pub fn contains(&self, call: &str) -> bool {
        self.by_call.contains_key(call)
    }

    /// The group for `call`, made on first sight.
    pub fn entry(&mut self, call: &str) -> &mut Group {
        if !self.by_call.contains_key(call) {
            self.order.push(call.to_string());
        }
        self.by_call
            .entry(call.to_string())
            .or_insert_with(|| Group::new(call))
    }

    /// Takes a group out while its cells are drawn, so a nested group can be borrowed too;
    /// [`Groups::put_back`] returns it.
    pub fn take(&mut self, call: &str) -> Option<Group> {
        self.by_call.remove(call)
    }

    pub fn put_back(&mut self, group: Group) {
        self.by_call.insert(group.tool_use_id.clone(), group);
    }

    /// The group a task panel asks for, by Agent call id, agent id or task id.
    pub fn find(&self, id: &str) -> Option<&Group> {
        self.by_call.get(id).or_else(|| {
            self.by_call
                .values()
                .find(|g| g.agent_id == id || g.task_id.as_deref() == Some(id))
        })
    }

    pub fn in_order(&self) -> impl Iterator<Item = &Group> {
        self.order.iter().filter_map(|id| self.by_call.get(id))
    }

    pub fn clear(&mut self) {
        self.by_call.clear();
        self.order.clear();
    }
}

pub(crate) fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `800`, `12.4k`, `1.2M`: counters that stay short while they grow.
pub(crate) fn tokens_short(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

pub(crate) fn cost_short(cost: f64) -> String {
    if cost >= 1.0 {
        format!("${cost:.2}")
    } else {
        format!("${cost:.4}")
    }
}

pub(crate) fn duration_short(ms: u64) -> String {
    let secs = ms / 1000;
    if secs >= 60 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}
