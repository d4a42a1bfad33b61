//! Subagents against the fake model server: the Agent tool in the foreground and in the
//! background, notifications, TaskStop and TaskOutput, limits, tool restrictions, transcripts
//! and costs; forks, coordinator mode and SendMessage; teammates.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::harness;

mod admission;
mod background;
mod controls;
mod coordinator;
mod crowded_stream;
mod foreground;
mod fork;
mod limits;
mod messages;
mod remote;
mod restrictions;
mod teams;
