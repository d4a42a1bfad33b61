//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "subagents/harness.rs"]
mod harness;

#[path = "agent_loop.rs"]
mod agent_loop;
#[path = "backends.rs"]
mod backends;
#[path = "background_move.rs"]
mod background_move;
#[path = "compaction.rs"]
mod compaction;
#[path = "controls.rs"]
mod controls;
#[path = "definition_sources.rs"]
mod definition_sources;
#[path = "definitions.rs"]
mod definitions;
#[path = "isolation/main.rs"]
mod isolation;
#[path = "layering.rs"]
mod layering;
#[path = "mcp/main.rs"]
mod mcp;
#[path = "subagents/main.rs"]
mod subagents;
#[path = "uds_accept.rs"]
mod uds_accept;
