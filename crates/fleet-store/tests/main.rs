//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::unwrap_used)]

#[path = "common/mod.rs"]
mod common;

#[path = "mailbox.rs"]
mod mailbox;
#[path = "mailbox_off_thread.rs"]
mod mailbox_off_thread;
#[path = "mailbox_private.rs"]
mod mailbox_private;
#[path = "mailbox_torture.rs"]
mod mailbox_torture;
#[path = "sessions.rs"]
mod sessions;
#[path = "transcript.rs"]
mod transcript;
#[path = "unreported_tasks.rs"]
mod unreported_tasks;
