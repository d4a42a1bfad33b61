//! fleet's terminal UI. It sits between the runtime and the binary: it consumes the same
//! `AgentEvent` stream that `-p` prints, plus a few questions and notices from the driver
//! (`port`), and answers with [`port::UiCommand`]s. It owns no agent logic, so everything the
//! UI shows is something a headless reader could have seen too.
//!
//! - `port`: the boundary with the driver (what comes in, what goes out).
//! - `transcript`: the conversation as cells, grouped by agent, with a viewport that renders
//!   only what is on screen.
//! - `mail`: delivered team mail (`<teammate-message>` blocks) read as letters, each shown as
//!   a cell of its own.
//! - `render`: one small module per kind of item (Markdown, code, diffs, tool lines).
//! - `input`: the composer (editing, history, paste, completion, Ctrl+R search) and the
//!   slash commands.
//! - `panes`: the rest of the screen (permission prompt, task pills and panel, status line,
//!   pickers, forms).
//! - `app`: state, key dispatch, layout and the event loop; `terminal`: raw mode in and,
//!   whatever happens, out again; `scrollback`: the conversation printed to the normal
//!   screen once the UI is gone, so it stays in the terminal's scrollback.

pub mod app;
pub mod bench;
mod figures;
pub mod input;
mod mail;
pub mod panes;
pub mod port;
pub mod render;
pub mod scrollback;
pub mod terminal;
pub mod theme;
pub mod transcript;

pub use app::{run, UiExit, UiOptions};
pub use port::{PermissionAnswer, PermissionAsk, TeammateIdentity, UiCommand, UiEvent};
