//! fleet's live web dashboard (`fleet dashboard`, `fleet … --dashboard`): the state of every
//! session under `$FLEET_HOME` — fed by the store (inotify) and by the live events of a session
//! started with `--dashboard` — served over HTTP to a page compiled into the binary.
//!
//! - [`api`]: the JSON contract between the server and the page.
//! - [`server`]: the HTTP side: routes, the token, the origin check, server-sent events.
//! - [`actions`]: what the page may ask of a session (stop a task, message a member, answer a
//!   permission question), implemented by whoever runs the server.

pub mod actions;
pub mod api;
pub mod error;
mod feed;
pub mod hub;
pub mod server;

pub use actions::Actions;
pub use error::DashboardError;
pub use feed::live::LiveFeed;
pub use hub::Hub;
pub use server::{serve, ServeOptions, Serving};
