//! The Ultraplan lifecycle, as a pure type: events in, the new state out, and an illegal
//! move refused with an error naming the state and the event, so the terminal UI and the
//! headless command cannot drift into a state the design does not have.
//!
//! ```text
//! IDLE ──launch──▶ LAUNCHING ──launched──▶ RUNNING ⇄ NEEDS_INPUT
//!                      └──launch failed──▶ IDLE        │
//! RUNNING / NEEDS_INPUT ──phase plan_ready──▶ PLAN_READY
//! PLAN_READY ──approve──▶ REMOTE_EXEC ──finished──▶ IDLE
//! PLAN_READY ──reject with feedback──▶ RUNNING
//! PLAN_READY ──teleport──▶ PENDING_CHOICE ──run here──▶ IDLE
//!                                          └─continue remote─▶ RUNNING
//! any remote state ──timeout / failure / stop──▶ IDLE
//! ```
//!
//! The phase a poll reports ([`Phase`]) comes from the remote record by [`phase_of`].

use std::fmt;

/// Where the local side of one Ultraplan session is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// No session.
    Idle,
    /// The job is being published (snapshot, submit).
    Launching,
    /// The remote session explores.
    Running,
    /// The remote session ended a turn without a plan and waits for a reply.
    NeedsInput,
    /// A plan waits for approve, reject or teleport.
    PlanReady,
    /// The approved plan is carried out on the worker.
    RemoteExec,
    /// The plan came back here; the person chooses to run it locally (or go on remotely).
    PendingChoice { plan: String },
}

impl State {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Idle => "IDLE",
            Self::Launching => "LAUNCHING",
            Self::Running => "RUNNING",
            Self::NeedsInput => "NEEDS_INPUT",
            Self::PlanReady => "PLAN_READY",
            Self::RemoteExec => "REMOTE_EXEC",
            Self::PendingChoice { .. } => "PENDING_CHOICE",
        }
    }

    /// The remote session exists and may be stopped.
    pub fn is_remote(&self) -> bool {
        matches!(
            self,
            Self::Running | Self::NeedsInput | Self::PlanReady | Self::RemoteExec
        )
    }
}

/// What a poll reports about the remote session (the pill follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    Running,
    NeedsInput,
    PlanReady,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::NeedsInput => "needs_input",
            Self::PlanReady => "plan_ready",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The phase from what the poll saw: a pending plan wins; else a remote that is idle with no
/// new events since the last look waits for input; else it is working.
pub fn phase_of(plan_pending: bool, remote_idle: bool, new_events: bool) -> Phase {
    if plan_pending {
        Phase::PlanReady
    } else if remote_idle && !new_events {
        Phase::NeedsInput
    } else {
        Phase::Running
    }
}

/// Why a session ended early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The poll's deadline passed.
    Timeout,
    /// The remote failed, or the poll gave up on the broker.
    Failed(String),
    /// The person stopped it.
    Stopped,
}

/// Something that moves the lifecycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Launch,
    Launched,
    LaunchFailed(String),
    Phase(Phase),
    Approve,
    Reject {
        feedback: String,
    },
    Teleport {
        plan: String,
    },
    /// The approved plan finished on the worker.
    ExecFinished,
    /// The teleported plan is run here.
    RunLocally,
    /// The teleported plan goes back to the remote session.
    ContinueRemote,
    Ended(End),
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Launch => "launch",
            Self::Launched => "launched",
            Self::LaunchFailed(_) => "launch failed",
            Self::Phase(Phase::Running) => "phase running",
            Self::Phase(Phase::NeedsInput) => "phase needs_input",
            Self::Phase(Phase::PlanReady) => "phase plan_ready",
            Self::Approve => "approve",
            Self::Reject { .. } => "reject",
            Self::Teleport { .. } => "teleport",
            Self::ExecFinished => "execution finished",
            Self::RunLocally => "run locally",
            Self::ContinueRemote => "continue remotely",
            Self::Ended(End::Timeout) => "timeout",
            Self::Ended(End::Failed(_)) => "failure",
            Self::Ended(End::Stopped) => "stop",
        }
    }
}

/// An event the current state does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ultraplan: cannot take {event} in state {state}")]
pub struct IllegalTransition {
    pub state: &'static str,
    pub event: &'static str,
}

impl State {
    /// The state after `event`, or why it is not allowed here.
    pub fn next(&self, event: &Event) -> Result<State, IllegalTransition> {
        use Event as E;
        use State as S;
        let next = match (self, event) {
            (S::Idle, E::Launch) => S::Launching,
            (S::Launching, E::Launched) => S::Running,
            (S::Launching, E::LaunchFailed(_)) => S::Idle,
            (S::Running | S::NeedsInput, E::Phase(Phase::Running)) => S::Running,
            (S::Running | S::NeedsInput, E::Phase(Phase::NeedsInput)) => S::NeedsInput,
            (S::Running | S::NeedsInput | S::PlanReady, E::Phase(Phase::PlanReady)) => S::PlanReady,
            (S::PlanReady, E::Approve) => S::RemoteExec,
            (S::PlanReady, E::Reject { feedback }) if !feedback.trim().is_empty() => S::Running,
            (S::PlanReady, E::Teleport { plan }) => S::PendingChoice { plan: plan.clone() },
            (S::RemoteExec, E::ExecFinished) => S::Idle,
            (S::PendingChoice { .. }, E::RunLocally) => S::Idle,
            (S::PendingChoice { .. }, E::ContinueRemote) => S::Running,
            (state, E::Ended(_)) if state.is_remote() => S::Idle,
            _ => {
                return Err(IllegalTransition {
                    state: self.name(),
                    event: event.name(),
                })
            }
        };
        Ok(next)
    }
}
