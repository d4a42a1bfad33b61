//! What the worker says to a job's `fleet` process and when the job ends, decided from the
//! process's stdout lines and the caller's controls alone. It does no I/O, so every turn of an
//! Agent job and of an Ultraplan session (plan, reject, revise, approve, teleport, stop) is
//! tested here without a process or a broker; `job_run.rs` carries the steps out.

use crate::job::JobKind;
use crate::record::{Control, RemoteUsage, TaskState};
use fleet_protocol::control::{
    CanUseTool, CanUseToolAnswer, ControlLine, ControlRequest, Destination, PermissionUpdate,
    RequestBody,
};
use fleet_protocol::{Message, PermissionMode};
use serde::Serialize;
use serde_json::Value;

/// The answer to every question on a worker that has not been settled by the job's own rules.
pub const NO_ONE_TO_ASK: &str = "No one can answer permission questions on a remote worker, \
    and this job's permission rules and mode do not allow this call. Do not retry it; carry \
    on without it or say in your answer what you would need.";

/// The answer to the plan's ExitPlanMode when the person takes the plan to their terminal.
pub const TELEPORTED: &str = "The plan was taken to the person's terminal to be carried out \
    there; stop here.";

/// The id of the worker's `initialize` request.
const INIT_ID: &str = "fleet_worker_init";

/// A line for the process's stdin.
#[derive(Debug, Clone, PartialEq)]
pub enum StdinLine {
    /// A control request or an answer to one of the process's.
    Control(ControlLine),
    /// A user message: the prompt, or a reply to a session waiting for input.
    Prompt(String),
}

/// `{"type":"user","message":{"role":"user","content":…}}`, as `--input-format stream-json`
/// reads a prompt.
#[derive(Serialize)]
struct PromptLine {
    #[serde(rename = "type")]
    kind: &'static str,
    message: Message,
}

impl StdinLine {
    pub fn to_value(&self) -> Value {
        let value = match self {
            Self::Control(line) => serde_json::to_value(line),
            Self::Prompt(text) => serde_json::to_value(PromptLine {
                kind: "user",
                message: Message::user_text(text.as_str()),
            }),
        };
        // Derived types with string keys only: serializing cannot fail.
        value.unwrap_or_default()
    }

    /// The line as written (no newline).
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

/// One thing to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A line for the process's stdin.
    Write(StdinLine),
    /// The record's state changes (and nothing else ends).
    State(TaskState),
    /// A plan was submitted: record `PlanReady` with it and publish a `plan_ready` event.
    PlanReady(String),
    /// The session is done with input: close stdin and let the process end.
    CloseStdin,
    /// Kill the process and everything it started.
    Kill,
    /// The job ends so.
    End(Ending),
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    pub state: TaskState,
    pub result: Option<String>,
    /// Whether the checkout's changes go back as a result branch.
    pub branch: bool,
}

/// Where the session is.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// The model works (or plans).
    Working,
    /// An Ultraplan session waits for a decision on `plan`; `request` is the pending
    /// `can_use_tool` request of its ExitPlanMode.
    PlanReady { request: String, plan: String },
    /// The session ended a turn without a plan and waits for a reply.
    Idle,
    /// The job has ended; later lines are only published.
    Done,
}

/// The decisions of one job's session.
#[derive(Debug)]
pub struct Driver {
    kind: JobKind,
    phase: Phase,
    /// An approved Ultraplan session carries out its plan: on a worker whose maximum is
    /// `bypassPermissions` every question is allowed; elsewhere it runs in the narrower of
    /// `acceptEdits` and the maximum, and questions are answered as before approval.
    approved: bool,
    /// The worker's maximum permission mode: an approval never widens the session past it.
    max_mode: PermissionMode,
    /// The latest plan, what a teleport or a stop hands back.
    plan: Option<String>,
    pub usage: RemoteUsage,
}

impl Driver {
    pub fn new(kind: JobKind) -> Self {
        Self {
            kind,
            phase: Phase::Working,
            approved: false,
            max_mode: super::admit::DEFAULT_MAX_MODE,
            plan: None,
            usage: RemoteUsage::default(),
        }
    }

    /// The worker's maximum permission mode (the default is [`super::admit::DEFAULT_MAX_MODE`]).
    pub fn with_max_mode(mut self, max_mode: PermissionMode) -> Self {
        self.max_mode = max_mode;
        self
    }

    /// Whether an approved session's questions are all allowed.
    fn allows_everything(&self) -> bool {
        self.approved && self.max_mode == PermissionMode::BypassPermissions
    }

    /// Whether the job has ended.
    pub fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The first lines for the process: `initialize`, then the prompt.
    pub fn opening(prompt: &str) -> Vec<StdinLine> {
        let initialize = ControlRequest::Initialize(Box::default());
        vec![
            StdinLine::Control(ControlLine::request(INIT_ID, initialize)),
            StdinLine::Prompt(prompt.to_string()),
        ]
    }

    /// One stdout line of the process.
    pub fn on_line(&mut self, line: &Value) -> Vec<Step> {
        if self.done() {
            return Vec::new();
        }
        match ControlLine::from_value(line) {
            Ok(ControlLine::ControlRequest {
                request_id,
                request,
            }) => return self.on_request(request_id, request),
            // A malformed request of the process's: answered when it can be.
            Err(bad) => {
                return match bad.request_id() {
                    Some(id) => vec![Step::Write(error(id, &bad.to_string()))],
                    None => Vec::new(),
                }
            }
            // The answer to `initialize`, and lines that are not control lines.
            Ok(_) => {}
        }
        match line.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                self.usage.tool_uses += count_tool_uses(line);
                Vec::new()
            }
            Some("result") if line.get("parent_tool_use_id").is_none_or(Value::is_null) => {
                self.on_result(line)
            }
            _ => Vec::new(),
        }
    }

    fn on_request(&mut self, id: String, request: RequestBody) -> Vec<Step> {
        let ask = match request {
            RequestBody::Known(ControlRequest::CanUseTool(ask)) => ask,
            // fleet asks the host nothing else a worker offers (hooks, MCP): refuse.
            _ => {
                return vec![Step::Write(error(
                    &id,
                    "a remote worker answers only can_use_tool",
                ))]
            }
        };
        if self.allows_everything() {
            return vec![Step::Write(allow(&id, Vec::new()))];
        }
        let CanUseTool {
            tool_name, input, ..
        } = *ask;
        if self.kind == JobKind::Ultraplan && tool_name == "ExitPlanMode" {
            let plan = input
                .get("plan")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            self.plan = Some(plan.clone());
            self.phase = Phase::PlanReady {
                request: id,
                plan: plan.clone(),
            };
            return vec![Step::PlanReady(plan)];
        }
        vec![Step::Write(deny(&id, NO_ONE_TO_ASK))]
    }

    fn on_result(&mut self, line: &Value) -> Vec<Step> {
        self.read_usage(line);
        if self.kind == JobKind::Ultraplan && !self.approved {
            // The session ended its turn without a plan (a question, say): it waits.
            self.phase = Phase::Idle;
            return vec![Step::State(TaskState::Idle)];
        }
        let failed = line.get("is_error").and_then(Value::as_bool) == Some(true);
        let text = line
            .get("result")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.phase = Phase::Done;
        vec![
            Step::CloseStdin,
            Step::End(Ending {
                state: if failed {
                    TaskState::Failed
                } else {
                    TaskState::Completed
                },
                result: text,
                branch: true,
            }),
        ]
    }

    /// A control from the caller.
    pub fn on_control(&mut self, control: Control) -> Vec<Step> {
        if self.done() {
            return Vec::new();
        }
        if control == Control::Stop {
            return self.end_killed(None);
        }
        match (self.phase.clone(), control) {
            (Phase::PlanReady { request, .. }, Control::Approve) => {
                self.approved = true;
                self.phase = Phase::Working;
                let mode = PermissionMode::AcceptEdits.narrower(self.max_mode);
                let mode = PermissionUpdate::SetMode {
                    mode,
                    destination: Destination::Session,
                };
                vec![
                    Step::Write(allow(&request, vec![mode])),
                    Step::State(TaskState::Executing),
                ]
            }
            (Phase::PlanReady { request, .. }, Control::Reject { feedback }) => {
                self.phase = Phase::Working;
                vec![
                    Step::Write(deny(&request, &feedback)),
                    Step::State(TaskState::Running),
                ]
            }
            (Phase::PlanReady { request, plan }, Control::Teleport) => {
                let mut steps = vec![Step::Write(deny(&request, TELEPORTED))];
                steps.extend(self.end_killed(Some(plan)));
                steps
            }
            (Phase::Idle, Control::Reply { text } | Control::Reject { feedback: text }) => {
                self.phase = Phase::Working;
                vec![
                    Step::Write(StdinLine::Prompt(text)),
                    Step::State(TaskState::Running),
                ]
            }
            (Phase::Idle, Control::Teleport) => self.end_killed(None),
            // A decision that does not fit the moment (one meant for an earlier delivery of
            // the job, replayed from the control stream) changes nothing.
            _ => Vec::new(),
        }
    }

    /// Stopped (or teleported): an Agent job is killed, an Ultraplan session put away with
    /// its latest plan.
    fn end_killed(&mut self, plan: Option<String>) -> Vec<Step> {
        self.phase = Phase::Done;
        let ending = match self.kind {
            JobKind::Agent => Ending {
                state: TaskState::Killed,
                result: Some("stopped on request (TaskStop)".to_string()),
                branch: false,
            },
            JobKind::Ultraplan => Ending {
                state: TaskState::Archived,
                result: plan.or_else(|| self.plan.clone()),
                branch: false,
            },
        };
        vec![Step::Kill, Step::End(ending)]
    }

    /// The process's output ended (it exited or was killed) before the job ended.
    pub fn on_exit(&mut self, status: &str, stderr_tail: &[String]) -> Vec<Step> {
        if self.done() {
            return Vec::new();
        }
        self.phase = Phase::Done;
        let mut reason = format!("the agent's fleet process ended without a result ({status})");
        if !stderr_tail.is_empty() {
            reason.push_str("; its last stderr lines:\n");
            reason.push_str(&stderr_tail.join("\n"));
        }
        vec![Step::End(Ending {
            state: TaskState::Failed,
            result: Some(reason),
            branch: false,
        })]
    }

    fn read_usage(&mut self, line: &Value) {
        let usage = line.get("usage").unwrap_or(&Value::Null);
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        self.usage.total_tokens = count("input_tokens")
            + count("output_tokens")
            + count("cache_creation_input_tokens")
            + count("cache_read_input_tokens");
        if let Some(ms) = line.get("duration_ms").and_then(Value::as_u64) {
            self.usage.duration_ms = ms;
        }
        // Only a cost the process reported; never one made up here.
        self.usage.cost_usd = line.get("total_cost_usd").and_then(Value::as_f64);
    }
}

fn count_tool_uses(line: &Value) -> u64 {
    line.pointer("/message/content")
        .and_then(Value::as_array)
        .map_or(0, |blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .count() as u64
        })
}

fn error(id: &str, message: &str) -> StdinLine {
    StdinLine::Control(ControlLine::error(id, message))
}

fn answer(id: &str, answer: CanUseToolAnswer) -> StdinLine {
    // A derived enum of strings and values: serializing cannot fail.
    let body = serde_json::to_value(answer).unwrap_or_default();
    StdinLine::Control(ControlLine::success(id, body))
}

fn allow(id: &str, updates: Vec<PermissionUpdate>) -> StdinLine {
    let updates: Vec<Value> = updates
        .iter()
        .filter_map(|update| serde_json::to_value(update).ok())
        .collect();
    answer(
        id,
        CanUseToolAnswer::Allow {
            updated_input: None,
            updated_permissions: (!updates.is_empty()).then_some(updates),
        },
    )
}

fn deny(id: &str, message: &str) -> StdinLine {
    answer(
        id,
        CanUseToolAnswer::Deny {
            message: Some(message.to_string()),
            interrupt: None,
        },
    )
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
