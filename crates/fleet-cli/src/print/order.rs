//! Lines held back so that the output comes in Claude Code's order, which is not the order
//! in which fleet's runtime reports things.
//!
//! - An Agent call's `assistant` line waits for its `task_started`: Claude Code starts each
//!   subagent as soon as its call has streamed, so a fan-out reads call → `task_started` →
//!   prompt for each agent in turn, while fleet starts them once the reply is complete. Any
//!   other line releases the held calls first, so nothing is reordered past them.
//! - A foreground task's `task_updated` waits for its `task_notification`, and both wait for
//!   the Agent call's `tool_result`, so that each subagent's updated, notification and
//!   result lines come together (fleet reports parallel calls' results together, in call
//!   order, once all are done).
//!
//! Everything still held is written when the session ends.

use fleet_protocol::wire::StreamLine;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Default)]
pub(super) struct Order {
    /// Agent calls waiting for their `task_started`, oldest first, by tool-use id.
    calls: Vec<(String, StreamLine)>,
    /// Foreground tasks' `task_updated` lines waiting for their notification, by task id.
    updates: HashMap<String, Vec<StreamLine>>,
    /// Foreground tasks' update and notification lines waiting for the call's result, by the
    /// call's tool-use id.
    notes: HashMap<String, Vec<StreamLine>>,
    /// The tasks that run in the foreground (their agent id is the task id).
    foreground: HashSet<String>,
}

impl Order {
    pub(super) fn is_foreground(&self, agent_id: &str) -> bool {
        self.foreground.contains(agent_id)
    }

    pub(super) fn foreground(&mut self, task_id: &str) {
        self.foreground.insert(task_id.to_string());
    }

    pub(super) fn hold_call(&mut self, tool_use_id: &str, line: StreamLine) {
        self.calls.push((tool_use_id.to_string(), line));
    }

    /// The held calls up to and including `tool_use_id`'s (all of them when it is not held).
    pub(super) fn release_through(&mut self, tool_use_id: &str) -> Vec<StreamLine> {
        match self.calls.iter().position(|(id, _)| id == tool_use_id) {
            Some(at) => self.calls.drain(..=at).map(|(_, line)| line).collect(),
            None => self.release_all(),
        }
    }

    /// Every held call.
    pub(super) fn release_all(&mut self) -> Vec<StreamLine> {
        self.calls.drain(..).map(|(_, line)| line).collect()
    }

    /// Holds a foreground task's update until its notification; `false` (not held) for a
    /// background task's.
    pub(super) fn hold_update(&mut self, task_id: &str, line: StreamLine) -> bool {
        if !self.foreground.contains(task_id) {
            return false;
        }
        self.updates
            .entry(task_id.to_string())
            .or_default()
            .push(line);
        true
    }

    /// `task_id`'s held updates, for its notification.
    pub(super) fn release_update(&mut self, task_id: &str) -> Vec<StreamLine> {
        self.updates.remove(task_id).unwrap_or_default()
    }

    /// Holds a foreground task's notification (with its updates) until the call's result.
    pub(super) fn hold_notification(&mut self, task_id: &str, tool_use_id: &str, line: StreamLine) {
        let mut lines = self.release_update(task_id);
        lines.push(line);
        self.notes
            .entry(tool_use_id.to_string())
            .or_default()
            .extend(lines);
    }

    /// The lines held for the result of the call `tool_use_id`.
    pub(super) fn release_notification(&mut self, tool_use_id: &str) -> Vec<StreamLine> {
        self.notes.remove(tool_use_id).unwrap_or_default()
    }

    /// Everything held, calls first, for the end of the session.
    pub(super) fn release_everything(&mut self) -> Vec<StreamLine> {
        let mut out = self.release_all();
        let mut calls: Vec<String> = self.notes.keys().cloned().collect();
        calls.sort();
        for call in calls {
            out.extend(self.release_notification(&call));
        }
        let mut tasks: Vec<String> = self.updates.keys().cloned().collect();
        tasks.sort();
        for task in tasks {
            out.extend(self.release_update(&task));
        }
        out
    }
}
