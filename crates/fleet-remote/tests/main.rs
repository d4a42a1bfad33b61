//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::unwrap_used)]

#[path = "support/mod.rs"]
mod support;

#[path = "broker.rs"]
mod broker;
#[path = "bundle.rs"]
mod bundle;
#[path = "client.rs"]
mod client;
#[path = "client_launcher.rs"]
mod client_launcher;
#[path = "publisher.rs"]
mod publisher;
#[path = "ultraplan_broker.rs"]
mod ultraplan_broker;
#[path = "ultraplan_poll.rs"]
mod ultraplan_poll;
#[path = "ultraplan_state.rs"]
mod ultraplan_state;
