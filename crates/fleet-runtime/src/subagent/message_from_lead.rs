//! A message the person at the terminal sends a background agent or teammate (the task
//! panel of the interactive mode): delivered exactly as the main agent's own SendMessage
//! would deliver it, so the recipient reads it as its lead's words, at its next turn (a
//! stopped agent is resumed with it).

use super::message::{MessageBody, SendMessageInput};
use super::Spawner;
use fleet_tools::{ToolContext, ToolError};
use std::sync::Arc;

/// Why the person's message did not reach the agent.
#[derive(Debug, thiserror::Error)]
pub enum LeadMessageError {
    #[error("the message is empty")]
    Empty,
    #[error("the main agent is not started yet")]
    NotStarted,
    /// The session ended before the message could go.
    #[error("the session has ended")]
    SessionEnded,
    /// SendMessage refused it (no such agent, …); its words are the tool's.
    #[error(transparent)]
    Refused(#[from] ToolError),
}

impl Spawner {
    /// Sends `text` to `to` (an agent id, an agent's or a teammate's name) as the main agent.
    /// Returns what SendMessage would have told the main agent; an error says why it could
    /// not be delivered (no such agent, the main agent not built yet).
    pub async fn send_from_lead(
        self: &Arc<Self>,
        to: &str,
        text: &str,
    ) -> Result<String, LeadMessageError> {
        if text.trim().is_empty() {
            return Err(LeadMessageError::Empty);
        }
        let view = self.main_view().ok_or(LeadMessageError::NotStarted)?;
        let input = SendMessageInput {
            to: to.to_string(),
            message: MessageBody::Text(text.to_string()),
            summary: None,
        };
        let ctx = ToolContext::new(view.cwd.clone(), view.permissions.workspace.clone());
        self.send(&view, input, &ctx)
            .await
            .map(|out| out.content)
            .map_err(LeadMessageError::from)
    }
}
