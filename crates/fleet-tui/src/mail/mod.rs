//! Team mail as a person reads it. A pane teammate's prompts, and the lead's mail turns, are
//! user messages made of `<teammate-message>` blocks; the transcript shows one cell per
//! message instead of the XML.
//!
//! - `parse`: a user message into its letters (strict; anything unclear stays plain text).
//! - `view`: a letter's body into prose or one readable line per protocol frame.
//!
//! Drawing is the transcript's (`transcript::mail_cell`).

pub(crate) mod parse;
pub(crate) mod view;

pub(crate) use parse::{is_reminders_only, parse_delivery, Letter};
