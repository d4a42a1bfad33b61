//! One session's model: its agents, teams, worktrees, remote jobs, usage and tool marks, with
//! what changed since the last batch.
//!
//! Changes only mark things dirty; [`SessionModel::flush`] turns everything marked into one
//! [`Batch`] (an agent changed a hundred times is sent once, whole), at most once per tick of
//! the hub's flusher. So the cost of a change is a few field writes, whatever the number of
//! agents or subscribers.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::{broadcast, watch};

use super::agents::{new_node, Agents};
use crate::api::{
    Actions, AgentKind, Batch, PermissionRequest, RemoteJob, SessionState, SessionSummary,
    Snapshot, Team, ToolMark, UsagePoint, Worktree,
};

/// Tool marks kept per session (the contract's bound); older ones go first.
pub(crate) const MAX_MARKS: usize = 20_000;
/// Usage points kept per session; at most one is added per batch.
const MAX_USAGE_POINTS: usize = 5_000;
/// Batches a subscriber may fall behind before it sees `Lagged` (and should take a snapshot).
const BATCH_BUFFER: usize = 64;
/// Characters of the first prompt kept as the title.
const TITLE_CHARS: usize = 120;

/// An Agent tool call, remembered so that the child it starts can be tied to its caller.
#[derive(Debug, Clone, Default)]
pub(crate) struct AgentCall {
    /// The agent that made the call.
    pub parent: String,
    pub subagent_type: Option<String>,
    pub description: Option<String>,
    /// The prompt it was given (the key of [`SessionModel::prompts`]).
    pub prompt: Option<String>,
}

/// Where a session's liveness comes from (see [`SessionModel::state`]).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Liveness {
    /// Attached with `attach_live` and not yet ended.
    pub attached: bool,
    /// The store says so: the session's lock names a running process, or (no pid to ask) its
    /// files were written in the last minute (see `feed::store::settle_liveness`).
    pub store: bool,
    /// When a live feed said the session ended (Unix ms): from then on only a write after it
    /// (a resumed session) makes the store call it live again.
    pub ended_ms: Option<u64>,
}

pub(crate) struct SessionModel {
    pub id: String,
    pub folder: String,
    pub started_ms: u64,
    pub updated_ms: u64,
    pub model: Option<String>,
    pub title: Option<String>,
    pub live: Liveness,
    pub actions: Actions,
    pub agents: Agents,
    /// Agent tool calls by tool_use id.
    pub calls: HashMap<String, AgentCall>,
    /// The prompt of each unanswered Agent call → its tool_use id: a sync child's transcript
    /// starts with that prompt before its caller hears back, which is how the store feed ties
    /// a running child to its caller.
    pub prompts: HashMap<String, String>,
    /// Teammate name → `name@team`.
    pub mates: HashMap<String, String>,
    teams: BTreeMap<String, Team>,
    dirty_teams: BTreeSet<String>,
    worktrees: Vec<Worktree>,
    remote_jobs: Vec<RemoteJob>,
    dirty_worktrees: bool,
    dirty_jobs: bool,
    totals: (f64, u64, u64),
    usage: VecDeque<UsagePoint>,
    usage_dirty: bool,
    marks: VecDeque<ToolMark>,
    new_marks: Vec<ToolMark>,
    permissions: Vec<PermissionRequest>,
    dirty_permissions: bool,
    /// The summary changed (the list's view of it).
    summary_dirty: bool,
    /// A change the session list must show soon (new, live/ended, title, model).
    pub list_dirty: bool,
    newest_event_ms: Option<u64>,
    seq: u64,
    /// Queued for the flusher already.
    pub queued: bool,
    tx: broadcast::Sender<Arc<Batch>>,
    transcript_ticks: HashMap<String, watch::Sender<u64>>,
}

impl SessionModel {
    pub fn new(id: &str, folder: &str, t_ms: u64) -> Self {
        let mut agents = Agents::default();
        agents.ensure("main", || new_node("main", AgentKind::Main, t_ms));
        Self {
            id: id.to_owned(),
            folder: folder.to_owned(),
            started_ms: t_ms,
            updated_ms: t_ms,
            model: None,
            title: None,
            live: Liveness::default(),
            actions: Actions::default(),
            agents,
            calls: HashMap::new(),
            prompts: HashMap::new(),
            mates: HashMap::new(),
            teams: BTreeMap::new(),
            dirty_teams: BTreeSet::new(),
            worktrees: Vec::new(),
            remote_jobs: Vec::new(),
            dirty_worktrees: false,
            dirty_jobs: false,
            totals: (0.0, 0, 0),
            usage: VecDeque::new(),
            usage_dirty: false,
            marks: VecDeque::new(),
            new_marks: Vec::new(),
            permissions: Vec::new(),
            dirty_permissions: false,
            summary_dirty: true,
            list_dirty: true,
            newest_event_ms: None,
            seq: 0,
            queued: false,
            tx: broadcast::channel(BATCH_BUFFER).0,
            transcript_ticks: HashMap::new(),
        }
    }

    pub fn state(&self) -> SessionState {
        if self.live.attached || self.live.store {
            SessionState::Live
        } else {
            SessionState::Ended
        }
    }

    /// Something happened at `t_ms` (Unix ms) in the session.
    pub fn touch(&mut self, t_ms: u64) {
        if t_ms > self.updated_ms {
            self.updated_ms = t_ms;
        }
        if t_ms < self.started_ms {
            self.started_ms = t_ms;
        }
        self.newest_event_ms = Some(self.newest_event_ms.unwrap_or(0).max(t_ms));
        self.summary_dirty = true;
    }

    pub fn set_title(&mut self, text: &str) {
        if self.title.is_some() {
            return;
        }
        let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.is_empty() {
            return;
        }
        self.title = Some(one_line.chars().take(TITLE_CHARS).collect());
        self.list_dirty = true;
    }

    pub fn set_model(&mut self, model: &str) {
        if self.model.as_deref() != Some(model) && !model.is_empty() {
            self.model = Some(model.to_owned());
            self.list_dirty = true;
        }
    }

    /// Adds one reply's usage to agent `i` and to the session's totals.
    pub fn add_usage(&mut self, i: usize, input: u64, output: u64, cost: f64) {
        self.agents.add_usage(i, input, output, cost);
        self.totals.0 += cost;
        self.totals.1 += input;
        self.totals.2 += output;
        self.usage_dirty = true;
        self.summary_dirty = true;
    }

    pub fn add_mark(&mut self, agent_id: &str, t_ms: u64, tool: &str, is_error: bool) {
        let mark = ToolMark {
            agent_id: agent_id.to_owned(),
            t_ms,
            tool: tool.to_owned(),
            is_error,
        };
        if self.marks.len() == MAX_MARKS {
            self.marks.pop_front();
        }
        self.marks.push_back(mark.clone());
        if self.new_marks.len() == MAX_MARKS {
            self.new_marks.remove(0);
        }
        self.new_marks.push(mark);
    }

    /// The team `name`, made empty if new, to change (sent whole in the next batch).
    pub fn team_mut(&mut self, name: &str) -> &mut Team {
        self.dirty_teams.insert(name.to_owned());
        self.teams.entry(name.to_owned()).or_insert_with(|| Team {
            name: name.to_owned(),
            members: Vec::new(),
            messages: Vec::new(),
            tasks: Vec::new(),
        })
    }

    /// Adds a worktree, or updates the one at the same path.
    pub fn add_worktree(&mut self, worktree: Worktree) {
        match self.worktrees.iter_mut().find(|w| w.path == worktree.path) {
            Some(known) if *known == worktree => return,
            Some(known) => *known = worktree,
            None => self.worktrees.push(worktree),
        }
        self.dirty_worktrees = true;
    }

    /// The remote job `id`, made if new, to change.
    pub fn remote_job_mut(&mut self, id: &str) -> &mut RemoteJob {
        self.dirty_jobs = true;
        let at = match self.remote_jobs.iter().position(|j| j.id == id) {
            Some(at) => at,
            None => {
                self.remote_jobs.push(RemoteJob {
                    id: id.to_owned(),
                    agent_id: Some(id.to_owned()),
                    worker: None,
                    attempt: 0,
                    state: "launched".into(),
                    description: None,
                });
                self.remote_jobs.len() - 1
            }
        };
        &mut self.remote_jobs[at]
    }

    /// The remote job `id`, if this session knows it.
    pub fn remote_job(&self, id: &str) -> Option<&RemoteJob> {
        self.remote_jobs.iter().find(|j| j.id == id)
    }

    pub fn has_remote_job(&self, id: &str) -> bool {
        self.remote_jobs.iter().any(|j| j.id == id)
    }

    pub fn set_permissions(&mut self, pending: Vec<PermissionRequest>) {
        self.permissions = pending;
        self.dirty_permissions = true;
    }

    /// The session's line in the list.
    pub fn summary(&self) -> SessionSummary {
        SessionSummary {
            id: self.id.clone(),
            folder: self.folder.clone(),
            started_ms: self.started_ms,
            updated_ms: self.updated_ms,
            state: self.state(),
            model: self.model.clone(),
            agents: self.agents.len() as u64,
            cost_usd: self.totals.0,
            title: self.title.clone(),
        }
    }

    /// Marks the summary as changed (liveness moved, say).
    pub fn summary_changed(&mut self) {
        self.summary_dirty = true;
        self.list_dirty = true;
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            session: self.summary(),
            seq: self.seq,
            agents: self.agents.nodes().cloned().collect(),
            teams: self.teams.values().cloned().collect(),
            worktrees: self.worktrees.clone(),
            remote_jobs: self.remote_jobs.clone(),
            usage: self.usage.iter().cloned().collect(),
            marks: self.marks.iter().cloned().collect(),
            pending_permissions: self.permissions.clone(),
            actions: self.actions,
        }
    }

    pub fn needs_flush(&self) -> bool {
        self.summary_dirty
            || self.agents.has_dirty()
            || !self.dirty_teams.is_empty()
            || self.dirty_worktrees
            || self.dirty_jobs
            || self.usage_dirty
            || !self.new_marks.is_empty()
            || self.dirty_permissions
    }

    /// Everything changed since the last flush, as one batch, sent to the subscribers.
    /// Returns whether a batch was made.
    pub fn flush(&mut self) -> bool {
        self.queued = false;
        if !self.needs_flush() {
            return false;
        }
        self.seq += 1;
        let mut usage = Vec::new();
        if std::mem::take(&mut self.usage_dirty) {
            let point = UsagePoint {
                t_ms: self.newest_event_ms.unwrap_or(self.updated_ms),
                cost_usd: self.totals.0,
                input_tokens: self.totals.1,
                output_tokens: self.totals.2,
            };
            if self.usage.len() == MAX_USAGE_POINTS {
                self.usage.pop_front();
            }
            self.usage.push_back(point.clone());
            usage.push(point);
        }
        let teams = std::mem::take(&mut self.dirty_teams)
            .into_iter()
            .filter_map(|name| self.teams.get(&name).cloned())
            .collect();
        let batch = Batch {
            seq: self.seq,
            newest_event_ms: self.newest_event_ms.take(),
            session: std::mem::take(&mut self.summary_dirty).then(|| self.summary()),
            agents: self.agents.take_dirty(),
            teams,
            worktrees: if std::mem::take(&mut self.dirty_worktrees) {
                self.worktrees.clone()
            } else {
                Vec::new()
            },
            remote_jobs: if std::mem::take(&mut self.dirty_jobs) {
                self.remote_jobs.clone()
            } else {
                Vec::new()
            },
            usage,
            marks: std::mem::take(&mut self.new_marks),
            pending_permissions: std::mem::take(&mut self.dirty_permissions)
                .then(|| self.permissions.clone()),
        };
        // No subscriber is not an error: the next snapshot has it all.
        let _ = self.tx.send(Arc::new(batch));
        true
    }

    /// How many pages follow this session now.
    pub fn watchers(&self) -> usize {
        self.tx.receiver_count()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Batch>> {
        self.tx.subscribe()
    }

    pub fn subscribe_transcript(&mut self, agent_id: &str) -> watch::Receiver<u64> {
        let id = self
            .agents
            .get(agent_id)
            .map_or_else(|| agent_id.to_owned(), |t| t.node.id.clone());
        self.transcript_ticks
            .entry(id)
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// The agent's transcript grew: wakes its followers (and forgets channels nobody follows).
    pub fn tick_transcript(&mut self, agent_id: &str) {
        if self.transcript_ticks.is_empty() {
            return;
        }
        let id = self
            .agents
            .get(agent_id)
            .map_or_else(|| agent_id.to_owned(), |t| t.node.id.clone());
        if let Some(tx) = self.transcript_ticks.get(&id) {
            if tx.receiver_count() == 0 {
                self.transcript_ticks.remove(&id);
            } else {
                tx.send_modify(|n| *n += 1);
            }
        }
    }

    pub fn teams(&self) -> impl Iterator<Item = &Team> {
        self.teams.values()
    }
}
