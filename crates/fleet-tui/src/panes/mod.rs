//! Everything on screen besides the transcript and the composer. Each pane renders itself
//! into the area the app gives it and turns the keys it is given into a result; the app
//! decides which pane has the keys.
//!
//! PLACEHOLDER (skeleton): the public API is the contract the app builds on.

pub mod agent_form;
pub mod confirm;
pub mod cost;
pub mod help;
pub mod permission;
pub mod picker;
pub mod pills;
pub mod status;
pub mod task_panel;
pub mod tasks;
