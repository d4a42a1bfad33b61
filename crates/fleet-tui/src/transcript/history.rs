//! A resumed session's conversation, shown as if it had just happened: the person's
//! prompts, the assistant's text and tool calls, and each call's result matched by id.
//! Subagents' own activity is not in the main conversation, so their calls show their
//! results only.

use super::{Owner, Transcript};
use fleet_protocol::{Message, Role};

impl Transcript {
    pub(super) fn replay(&mut self, messages: &[Message]) {
        for message in messages {
            match message.role {
                Role::Assistant => self.assistant_message(&Owner::Main, message, false),
                Role::User => self.user_message(&Owner::Main, message, false),
            }
        }
    }
}
