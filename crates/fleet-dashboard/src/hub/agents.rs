//! The agent tree of one session: its nodes, what each is doing now, and which changed since
//! the last batch.
//!
//! Both feeds (the store's transcripts and a live session's events) drive the same small set
//! of moves here, so a node reads the same whichever feed saw it. A move that changes nothing
//! does not mark the node: a stream of text deltas costs a comparison each, not a batch entry.

use std::collections::HashMap;

use crate::api::{AgentKind, AgentNode, AgentState};

/// One node and the bookkeeping behind its `state`.
#[derive(Debug, Clone)]
pub(crate) struct Tracked {
    pub node: AgentNode,
    /// Tool calls started and not yet answered, oldest first: `(tool_use id, tool name)`.
    pub pending: Vec<(String, String)>,
    /// The times of the first and last lines of the agent's own transcript (store feed): its
    /// sidechain's first line is when it started, its last when it last did anything.
    lines: Option<(u64, u64)>,
    /// When the event that ended it happened (the parent's answer, a notification, its last
    /// line): lines of its transcript up to then are history, not a resumption.
    end_event_ms: Option<u64>,
    /// How long it ran, as its task's notification says (a stopped agent's last line can be
    /// far earlier than the stop, its notification line far later).
    ran_ms: Option<u64>,
    dirty: bool,
}

/// Whether a state is an end: nothing more will happen to the agent unless it is resumed.
pub(crate) fn is_terminal(state: AgentState) -> bool {
    matches!(
        state,
        AgentState::Done | AgentState::Failed | AgentState::Killed
    )
}

/// A fresh node, as first seen.
pub(crate) fn new_node(id: &str, kind: AgentKind, t_ms: u64) -> AgentNode {
    AgentNode {
        id: id.to_owned(),
        parent_id: (kind != AgentKind::Main).then(|| "main".to_owned()),
        kind,
        agent_type: if kind == AgentKind::Main {
            "main".to_owned()
        } else {
            "subagent".to_owned()
        },
        description: None,
        state: AgentState::Running,
        tool: None,
        task_id: None,
        team_member: None,
        turns: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        started_ms: t_ms,
        ended_ms: None,
        error: None,
    }
}

#[derive(Debug, Default)]
pub(crate) struct Agents {
    list: Vec<Tracked>,
    index: HashMap<String, usize>,
    /// Indexes of nodes changed since the last [`Agents::take_dirty`], each once.
    dirty: Vec<usize>,
    /// Other names an agent is known by (a teammate's transcript id → `name@team`).
    aliases: HashMap<String, String>,
}

impl Agents {
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The node's slot, following aliases.
    pub fn find(&self, id: &str) -> Option<usize> {
        let id = self.aliases.get(id).map_or(id, String::as_str);
        self.index.get(id).copied()
    }

    pub fn get(&self, id: &str) -> Option<&Tracked> {
        self.find(id).and_then(|i| self.list.get(i))
    }

    /// The slot of `id`, made with `make` if it is new (and then marked changed).
    pub fn ensure(&mut self, id: &str, make: impl FnOnce() -> AgentNode) -> usize {
        if let Some(i) = self.find(id) {
            return i;
        }
        let key = self.aliases.get(id).map_or(id, String::as_str).to_owned();
        let mut node = make();
        node.id.clone_from(&key);
        let i = self.list.len();
        self.list.push(Tracked {
            node,
            pending: Vec::new(),
            lines: None,
            end_event_ms: None,
            ran_ms: None,
            dirty: false,
        });
        self.index.insert(key, i);
        self.mark(i);
        i
    }

    /// The node at `i`, to change: marked as changed.
    pub fn edit(&mut self, i: usize) -> &mut Tracked {
        self.mark(i);
        &mut self.list[i]
    }

    pub fn at(&self, i: usize) -> &Tracked {
        &self.list[i]
    }

    fn mark(&mut self, i: usize) {
        if let Some(t) = self.list.get_mut(i) {
            if !t.dirty {
                t.dirty = true;
                self.dirty.push(i);
            }
        }
    }

    /// Records that `alias` names the agent `id` from now on.
    pub fn alias(&mut self, alias: &str, id: &str) {
        if alias != id {
            self.aliases.insert(alias.to_owned(), id.to_owned());
        }
    }

    /// The other names of the agent `id` (a teammate's transcript id).
    pub fn aliases_of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.aliases
            .iter()
            .filter(move |(_, to)| to.as_str() == id)
            .map(|(from, _)| from.as_str())
    }

    /// Gives the node `old` the id `new` (a teammate first seen by its transcript id); `old`
    /// stays an alias. Nothing happens when `new` is taken already.
    pub fn rename(&mut self, old: &str, new: &str) {
        if self.index.contains_key(new) {
            self.alias(old, new);
            return;
        }
        if let Some(i) = self.index.remove(old) {
            self.index.insert(new.to_owned(), i);
            self.edit(i).node.id = new.to_owned();
            self.alias(old, new);
        }
    }

    /// Sets the state (and the tool shown with it) when it differs.
    pub fn set_state(&mut self, i: usize, state: AgentState, tool: Option<&str>) {
        let t = &self.list[i];
        if t.node.state == state && t.node.tool.as_deref() == tool {
            return;
        }
        let tracked = self.edit(i);
        let node = &mut tracked.node;
        node.state = state;
        node.tool = tool.map(str::to_owned);
        if !is_terminal(state) {
            node.ended_ms = None;
            node.error = None;
            tracked.end_event_ms = None;
            tracked.ran_ms = None;
        }
    }

    /// Ends the agent (once: a later end does not move `ended_ms`). A stop is final: the
    /// stopped run's own end (an error, "interrupted") comes after its task was killed and
    /// must not turn `killed` into `failed`.
    pub fn end(&mut self, i: usize, state: AgentState, t_ms: u64, error: Option<String>) {
        let t = &self.list[i];
        if t.node.ended_ms.is_some()
            && (t.node.state == state || t.node.state == AgentState::Killed)
        {
            // A later word on the same end may say why (a stop's notification).
            if t.node.state == state && t.node.error.is_none() && error.is_some() {
                self.edit(i).node.error = error;
            }
            return;
        }
        let tracked = self.edit(i);
        tracked.pending.clear();
        tracked.end_event_ms = Some(t_ms);
        let node = &mut tracked.node;
        node.state = state;
        node.tool = None;
        node.ended_ms = Some(t_ms.max(node.started_ms));
        node.error = error;
        self.fit_times(i);
    }

    /// A line of the agent's own transcript, written at `t_ms`: the first one is its start.
    pub fn own_line(&mut self, i: usize, t_ms: u64) {
        let tracked = &mut self.list[i];
        let lines = match tracked.lines {
            None => (t_ms, t_ms),
            Some((first, last)) => (first.min(t_ms), last.max(t_ms)),
        };
        if tracked.lines != Some(lines) {
            tracked.lines = Some(lines);
            self.fit_times(i);
        }
    }

    /// Whether a line of the agent's transcript written at `t_ms` is from before its end (so
    /// says nothing about its state now): read after the end, as when the parent's transcript
    /// is read before the child's.
    pub fn ended_by(&self, i: usize, t_ms: u64) -> bool {
        let tracked = &self.list[i];
        is_terminal(tracked.node.state) && tracked.end_event_ms.is_some_and(|end| t_ms <= end)
    }

    /// How long the agent ran, as its task's notification says.
    pub fn ran_for(&mut self, i: usize, ms: u64) {
        if ms > 0 && self.list[i].ran_ms != Some(ms) {
            self.list[i].ran_ms = Some(ms);
            self.fit_times(i);
        }
    }

    /// Start and end from what its own transcript says, once that is known: it started at its
    /// first line; it ended after running as long as its notification says, or else (done)
    /// at its last line — not when its parent got round to reading the answer.
    fn fit_times(&mut self, i: usize) {
        let tracked = &self.list[i];
        let Some((first, last)) = tracked.lines else {
            return;
        };
        if tracked.node.kind == AgentKind::Main {
            return;
        }
        let node = &tracked.node;
        let ended = match (node.ended_ms, tracked.ran_ms, node.state) {
            (None, _, _) => None,
            (Some(_), Some(ran), _) => Some(first.saturating_add(ran).max(last)),
            (Some(_), None, AgentState::Done) => Some(last),
            (Some(at), None, _) => Some(at.max(last)),
        };
        if node.started_ms != first || node.ended_ms != ended {
            let node = &mut self.edit(i).node;
            node.started_ms = first;
            node.ended_ms = ended.map(|e| e.max(first));
        }
    }

    /// A tool call began: the agent is running it (the oldest unanswered one is shown).
    pub fn tool_started(&mut self, i: usize, id: &str, name: &str) {
        let tracked = self.edit(i);
        if !tracked.pending.iter().any(|(p, _)| p == id) {
            tracked.pending.push((id.to_owned(), name.to_owned()));
        }
        self.show_pending(i);
    }

    /// A tool call was answered; returns the tool's name when the call was known.
    pub fn tool_finished(&mut self, i: usize, id: &str) -> Option<String> {
        let name = self.forget_call(i, id)?;
        self.show_pending(i);
        Some(name)
    }

    /// A call of an agent that has ended, read after its end: remembered for its result's
    /// mark only (the state stays the end).
    pub fn past_call(&mut self, i: usize, id: &str, name: &str) {
        let tracked = &mut self.list[i];
        if !tracked.pending.iter().any(|(p, _)| p == id) {
            tracked.pending.push((id.to_owned(), name.to_owned()));
        }
    }

    /// The agent works again after its end: calls left over from reading its past are not
    /// running now.
    pub fn forget_past_calls(&mut self, i: usize) {
        if is_terminal(self.list[i].node.state) {
            self.list[i].pending.clear();
        }
    }

    /// The answer to a call of an ended agent; the tool's name when the call was known.
    pub fn forget_call(&mut self, i: usize, id: &str) -> Option<String> {
        let tracked = &mut self.list[i];
        let at = tracked.pending.iter().position(|(p, _)| p == id)?;
        Some(tracked.pending.remove(at).1)
    }

    /// `running_tool` while calls are unanswered, else `waiting_for_model` (the results go
    /// back to the model next).
    fn show_pending(&mut self, i: usize) {
        let first = self.list[i].pending.first().map(|(_, name)| name.clone());
        match first {
            Some(name) => self.set_state(i, AgentState::RunningTool, Some(&name)),
            None => self.set_state(i, AgentState::WaitingForModel, None),
        }
    }

    /// Adds one reply's figures.
    pub fn add_usage(&mut self, i: usize, input: u64, output: u64, cost: f64) {
        let node = &mut self.edit(i).node;
        node.turns += 1;
        node.input_tokens += input;
        node.output_tokens += output;
        node.cost_usd += cost;
    }

    pub fn nodes(&self) -> impl Iterator<Item = &AgentNode> {
        self.list.iter().map(|t| &t.node)
    }

    pub fn ids(&self) -> Vec<usize> {
        (0..self.list.len()).collect()
    }

    /// The nodes changed since the last call, each once, whole.
    pub fn take_dirty(&mut self) -> Vec<AgentNode> {
        let dirty = std::mem::take(&mut self.dirty);
        dirty
            .into_iter()
            .filter_map(|i| {
                let t = self.list.get_mut(i)?;
                t.dirty = false;
                Some(t.node.clone())
            })
            .collect()
    }

    pub fn has_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }
}

/// The member name in a teammate's transcript id (`a<name>-<16 hex>`, as the runtime makes
/// them), so events under that id can be tied to the member the team file names.
pub(crate) fn teammate_name(transcript_id: &str) -> Option<&str> {
    let rest = transcript_id.strip_prefix('a')?;
    let (name, hex) = rest.rsplit_once('-')?;
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) && !name.is_empty())
        .then_some(name)
}
