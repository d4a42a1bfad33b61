//! One session, for every front end. `fleet -p`, the terminal UI, the Agent SDK control server,
//! `fleet mcp serve`, pane teammates and remote workers all start their session here, so a
//! setting, a trust decision or a new service is wired once and behaves the same in each.
//!
//! - [`config`]: the configuration layer stack (each value knows its source), the folders it
//!   is read from, and the trust gate a repository's settings pass.
//! - [`options`]: what a session is built from, resolved by the front end from its flags and
//!   the configuration ([`SessionOptions`], [`Conversation`], [`Choice`]).
//! - [`build`]: the main agent and the services its subagents come from.
//! - [`mcp`]: the session's MCP servers and the tools they give.
//! - [`model`]: which provider and model, and the client with its extras.
//! - [`transcript`]: the session's file: which conversation, its history, recording it.
//! - [`launch`]: starting a built agent as a running session; [`launch::run`] gives the
//!   queue pair.
//! - [`ops`]: the [`Op`]s a front end sends a running session.
//! - [`report`]: the lines the builder has for the person.
//!
//! A front end's whole use of it (see `tests/queue_pair.rs`):
//!
//! ```text
//! let options = SessionOptions { .. };       // the front end's flags and config, resolved
//! let mut file = SessionFile::open(&conversation, &cwd, persist, &report)?;
//! let servers = mcp::start(&cwd, &mcp_options, bridge, &report).await;
//! let built = build::agent(&options, choice, file.id(), host, &mcp::tools(&servers).await, &report)?;
//! let Running { ops, mut handle, .. } = launch::run(Ready { .. }, &mut file, steer).await?;
//! ops.prompt(Message::user_text("…")).await?;        // Op in
//! drop(ops);                                  // no more: the session ends after its turn
//! while let Some(event) = handle.recv().await { file.record_event(&event)?; /* show it */ }
//! ```

pub mod build;
pub mod config;
pub mod error;
pub mod launch;
pub mod mcp;
pub mod model;
pub mod ops;
pub mod options;
pub mod report;
pub mod thinking;
pub mod transcript;

pub use build::{Built, Host};
pub use error::SessionError;
pub use launch::{Running, Steer};
pub use ops::{Op, OpSender};
pub use options::{Choice, Conversation, SessionOptions};
pub use report::Report;
pub use thinking::Thinking;
pub use transcript::{SessionFile, TranscriptLost};
