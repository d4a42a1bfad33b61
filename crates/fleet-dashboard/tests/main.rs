//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::unwrap_used)]

#[path = "hub_common/mod.rs"]
mod hub_common;

#[path = "hub_live.rs"]
mod hub_live;
#[path = "hub_remote.rs"]
mod hub_remote;
#[path = "hub_store.rs"]
mod hub_store;
#[path = "server.rs"]
mod server;
