//! Team mail as a person reads it. A pane teammate's prompts, and the lead's mail turns, are
//! user messages made of `<teammate-message>` blocks; the transcript shows one cell per
//! message instead of the XML.
//!
//! Splitting a message into its letters is `fleet_protocol::team::parse`, the parser the model
//! path uses too, so the screen and the model agree on where a letter ends (strict; anything
//! unclear stays plain text). `view` turns a letter's body into prose or one readable line per
//! protocol frame. Drawing is the transcript's (`transcript::mail_cell`).

pub(crate) mod view;

pub(crate) use fleet_protocol::team::parse::{is_reminders_only, parse_delivery, Letter};
