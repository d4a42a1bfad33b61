//! What a task's event subject (`fleet.events.<task>`) carries: the stream-json lines of the
//! job's `fleet` process, as they came, and the worker's own `{"type":"fleet_remote",…}`
//! lines saying where the job is. The worker writes its lines and the launcher, `fleet remote
//! logs` and the tests read them through [`EventLine`], so the two sides share one shape.
//!
//! These types live here rather than in `fleet-protocol`: their vocabulary ([`TaskState`],
//! attempts, worker ids) is the remote records', and nothing below `fleet-remote` reads them.
//!
//! Lines from a newer worker stay readable: an event this fleet does not know is
//! [`WorkerEvent::Unknown`] (kept whole, shown by name), and an `ended` state it does not know
//! is [`RemoteState::Unknown`] — neither is taken for a failure.

use crate::record::TaskState;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `type` of the worker's own lines.
pub const WORKER_LINE_TYPE: &str = "fleet_remote";

/// One line of a task's events.
#[derive(Debug, Clone, PartialEq)]
pub enum EventLine {
    /// One of the worker's own lines.
    Worker(WorkerEvent),
    /// A stream-json line of the job's `fleet` process (or anything else), as it came.
    Agent(Value),
}

/// One of the worker's own lines, told apart by `event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WorkerEvent {
    /// A worker took the job (a later `attempt` is a redelivery: counting starts over).
    Started {
        #[serde(default)]
        worker: String,
        attempt: u32,
    },
    /// The job ended; its record (written first) holds the rest.
    Ended {
        /// Without one the line is malformed, and the job is taken to have failed, as before
        /// the events were typed (a state that is there but unknown is not: see
        /// [`RemoteState::Unknown`]).
        #[serde(default = "RemoteState::failed")]
        state: RemoteState,
        /// The final text, or what went wrong (`null` when there is none).
        #[serde(default)]
        result: Option<String>,
    },
    /// An Ultraplan session submitted a plan.
    PlanReady { plan: String },
    /// The broker did not take events for a while; the agent's output was held back.
    OutputPaused {
        queued: u64,
        paused_ms: u64,
        message: String,
    },
    /// An event this fleet does not know, kept whole (`event` and all).
    #[serde(skip)]
    Unknown {
        event: String,
        line: Map<String, Value>,
    },
}

impl WorkerEvent {
    /// The event's name, known or not.
    pub fn name(&self) -> &str {
        match self {
            Self::Started { .. } => "started",
            Self::Ended { .. } => "ended",
            Self::PlanReady { .. } => "plan_ready",
            Self::OutputPaused { .. } => "output_paused",
            Self::Unknown { event, .. } => event,
        }
    }
}

/// A task state as an event reports it: one this fleet knows, or the name it was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RemoteState {
    Known(TaskState),
    Unknown(String),
}

impl<'de> Deserialize<'de> for RemoteState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(match TaskState::from_name(&name) {
            Some(state) => Self::Known(state),
            None => Self::Unknown(name),
        })
    }
}

impl WorkerEvent {
    /// The worker's event a line carries; `None` for any other line (the agent's).
    pub fn from_line(line: &Value) -> Option<Self> {
        let Value::Object(line) = line else {
            return None;
        };
        if line.get("type").and_then(Value::as_str) != Some(WORKER_LINE_TYPE) {
            return None;
        }
        let mut fields = line.clone();
        fields.remove("type");
        Some(match Self::deserialize(Value::Object(fields)) {
            Ok(known) => known,
            Err(_) => Self::Unknown {
                event: line
                    .get("event")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                line: line.clone(),
            },
        })
    }
}

impl RemoteState {
    fn failed() -> Self {
        Self::Known(TaskState::Failed)
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(state) => state.as_str(),
            Self::Unknown(name) => name,
        }
    }
}

impl From<TaskState> for RemoteState {
    fn from(state: TaskState) -> Self {
        Self::Known(state)
    }
}

impl EventLine {
    /// Reads a line's JSON. A worker line whose known event has the wrong fields stays an
    /// [`WorkerEvent::Unknown`] (named), never an error: a follower must not stop on it.
    pub fn from_value(value: Value) -> Self {
        match WorkerEvent::from_line(&value) {
            Some(event) => Self::Worker(event),
            None => Self::Agent(value),
        }
    }

    /// The line as it goes on the subject: the worker's own lines start with
    /// `{"type":"fleet_remote","event":…`.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Agent(value) => value.clone(),
            Self::Worker(WorkerEvent::Unknown { line, .. }) => Value::Object(line.clone()),
            Self::Worker(event) => {
                let mut line = Map::new();
                line.insert("type".into(), WORKER_LINE_TYPE.into());
                // A derived enum of strings and numbers: serializing cannot fail.
                if let Ok(Value::Object(fields)) = serde_json::to_value(event) {
                    line.extend(fields);
                }
                Value::Object(line)
            }
        }
    }

    /// The line as one line of JSON (no newline).
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

impl From<WorkerEvent> for EventLine {
    fn from(event: WorkerEvent) -> Self {
        Self::Worker(event)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn round_trip(value: Value, expected: EventLine) {
        let read = EventLine::from_value(value.clone());
        assert_eq!(read, expected);
        assert_eq!(read.to_value(), value);
    }

    #[test]
    fn the_workers_lines_read_and_write_through_the_same_types() {
        round_trip(
            json!({"type": "fleet_remote", "event": "started", "worker": "box-1", "attempt": 2}),
            WorkerEvent::Started {
                worker: "box-1".into(),
                attempt: 2,
            }
            .into(),
        );
        round_trip(
            json!({"type": "fleet_remote", "event": "ended", "state": "completed",
                   "result": "All green."}),
            WorkerEvent::Ended {
                state: TaskState::Completed.into(),
                result: Some("All green.".into()),
            }
            .into(),
        );
        round_trip(
            json!({"type": "fleet_remote", "event": "ended", "state": "failed", "result": null}),
            WorkerEvent::Ended {
                state: TaskState::Failed.into(),
                result: None,
            }
            .into(),
        );
        round_trip(
            json!({"type": "fleet_remote", "event": "plan_ready", "plan": "1. do it"}),
            WorkerEvent::PlanReady {
                plan: "1. do it".into(),
            }
            .into(),
        );
        round_trip(
            json!({"type": "fleet_remote", "event": "output_paused", "queued": 3,
                   "paused_ms": 1500, "message": "held back"}),
            WorkerEvent::OutputPaused {
                queued: 3,
                paused_ms: 1500,
                message: "held back".into(),
            }
            .into(),
        );
        // The bytes the worker has always written.
        assert_eq!(
            EventLine::from(WorkerEvent::Started {
                worker: "w".into(),
                attempt: 1
            })
            .to_json(),
            r#"{"type":"fleet_remote","event":"started","worker":"w","attempt":1}"#
        );
    }

    #[test]
    fn the_agents_lines_pass_through_as_they_came() {
        let line = json!({"type": "assistant", "message": {"content": []}});
        round_trip(line.clone(), EventLine::Agent(line));
        round_trip(json!("text"), EventLine::Agent(json!("text")));
    }

    #[test]
    fn unknown_events_and_states_are_kept_by_name_not_taken_for_failures() {
        let line = json!({"type": "fleet_remote", "event": "migrated", "to": "box-9"});
        let read = EventLine::from_value(line.clone());
        match &read {
            EventLine::Worker(event @ WorkerEvent::Unknown { .. }) => {
                assert_eq!(event.name(), "migrated")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(read.to_value(), line);

        let ended = json!({"type": "fleet_remote", "event": "ended", "state": "reviewing",
                           "result": "waiting for a person"});
        let read = EventLine::from_value(ended.clone());
        let EventLine::Worker(WorkerEvent::Ended { state, .. }) = &read else {
            panic!("{read:?}")
        };
        assert_eq!(state, &RemoteState::Unknown("reviewing".into()));
        assert_eq!(state.as_str(), "reviewing");
        assert_eq!(read.to_value(), ended);
    }
}
