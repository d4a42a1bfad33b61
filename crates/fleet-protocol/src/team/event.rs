//! What a team does, as events: a consumer (stream-json, the text printer, the UI to come)
//! sees who joined, who went idle, who left, what was said to whom and how the task list
//! changed, without reading the team's files.

use serde::{Deserialize, Serialize};

/// One thing that happened in a team. Serialized with `subtype` naming the variant, which is
/// how stream-json prints it (`{"type":"system","subtype":"teammate_spawned",…}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum TeamEvent {
    TeamCreated {
        team: String,
        lead_agent_id: String,
    },
    TeammateSpawned {
        team: String,
        name: String,
        agent_id: String,
        agent_type: String,
        model: String,
        color: String,
        /// Whether it was brought back (a resumed session, or a message to a stopped member).
        resumed: bool,
    },
    TeammateIdle {
        team: String,
        name: String,
        agent_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    TeammateTerminated {
        team: String,
        name: String,
        agent_id: String,
        reason: String,
    },
    /// A message was left in a member's inbox (or the lead's).
    TeamMessage {
        team: String,
        from: String,
        to: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// The text, or the frame's type for a protocol frame.
        text: String,
    },
    /// A pane teammate refused an inbox entry that claims to come from the lead without the
    /// lead's valid signature (another local process wrote it).
    MailRefused {
        team: String,
        /// The teammate that refused it.
        to: String,
        /// Who the entry claimed to be from.
        from: String,
        reason: String,
    },
    TaskListUpdated {
        team: String,
        task_id: String,
        subject: String,
        /// `created`, `updated` or `deleted`.
        action: String,
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
    },
    TeamDeleted {
        team: String,
    },
    /// The team at the end of the session: who was in it and what each member cost.
    TeamSummary {
        team: String,
        members: Vec<MemberSummary>,
    },
}

/// One member in a [`TeamEvent::TeamSummary`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberSummary {
    pub name: String,
    pub agent_id: String,
    pub agent_type: String,
    pub model: String,
    /// `active`, `idle` or `stopped`.
    pub status: String,
    pub cost_usd: f64,
    pub turns: u32,
}

impl Eq for MemberSummary {}

impl TeamEvent {
    pub fn team(&self) -> &str {
        match self {
            Self::TeamCreated { team, .. }
            | Self::TeammateSpawned { team, .. }
            | Self::TeammateIdle { team, .. }
            | Self::TeammateTerminated { team, .. }
            | Self::TeamMessage { team, .. }
            | Self::MailRefused { team, .. }
            | Self::TaskListUpdated { team, .. }
            | Self::TeamDeleted { team }
            | Self::TeamSummary { team, .. } => team,
        }
    }
}
