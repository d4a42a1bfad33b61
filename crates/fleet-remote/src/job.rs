//! A job: what travels to a worker. Model credentials never do — a worker uses its own.

use serde::{Deserialize, Serialize};

/// What the worker runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// An agent from an Agent call with `isolation: "remote"`: one prompt, one result.
    Agent,
    /// A remote planning session: plan mode until a plan is approved, rejected or teleported.
    Ultraplan,
}

/// One job on the `FLEET_JOBS` queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub task_id: String,
    pub kind: JobKind,
    pub description: String,
    pub prompt: String,
    pub agent: AgentSpec,
    /// The model to run; `None`: the worker's default.
    #[serde(default)]
    pub model: Option<String>,
    /// `default`, `acceptEdits`, `plan`, `bypassPermissions` or `dontAsk`.
    pub permission_mode: String,
    /// Allow and deny rules in settings syntax, passed as `--allowedTools`/`--disallowedTools`.
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
    /// The repository state to check out; `None`: an empty folder.
    #[serde(default)]
    pub repo: Option<RepoRef>,
    /// Labels a worker must all have to take the job.
    #[serde(default)]
    pub labels: Vec<String>,
    /// How many deliveries the job gets before it fails (a worker dying mid-job is one).
    pub max_deliver: u32,
    /// When it was published (ms since the epoch): queue-to-start latency is measured from it.
    pub queued_ms: u64,
    /// Who asked: host name and folder, for `fleet remote status`.
    #[serde(default)]
    pub origin: String,
}

/// The agent a job runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentSpec {
    /// The agent type (`general-purpose`, `Explore`, a user's agent).
    pub name: String,
    /// The definition in Claude Code's `--agents` entry form; `None` for a plain session.
    #[serde(default)]
    pub definition: Option<serde_json::Value>,
    /// Appended to the system prompt (Ultraplan's planning instructions).
    #[serde(default)]
    pub append_system_prompt: Option<String>,
}

/// A repository state in the object store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepoRef {
    /// The object holding the bundle (`repo-<snapshot>.bundle`).
    pub object: String,
    /// The caller's HEAD commit.
    pub head: String,
    /// The commit to check out: HEAD plus uncommitted and untracked files (HEAD itself when
    /// the checkout was clean).
    pub snapshot: String,
    /// The caller's branch, for the record.
    #[serde(default)]
    pub branch: Option<String>,
    /// The caller's folder inside the checkout (`crates/x`); empty at the top. The job's
    /// agent starts there.
    #[serde(default)]
    pub subdir: String,
}

/// The default number of deliveries before a job fails.
pub const DEFAULT_MAX_DELIVER: u32 = 3;
