//! The app: state, key dispatch, layout and the event loop.
//!
//! PLACEHOLDER (skeleton): `run`, `UiOptions` and `UiExit` are the contract the driver uses.

use crate::port::{StatusUpdate, UiCommand, UiEvent};
use crate::theme::Theme;
use std::path::PathBuf;
use tokio::sync::mpsc;

/// What the driver tells the UI at start.
#[derive(Debug, Clone, Default)]
pub struct UiOptions {
    pub cwd: PathBuf,
    /// `~`, for `~/.claude/commands` (`None` in tests).
    pub home: Option<PathBuf>,
    pub theme: Theme,
    /// `fleet "prompt"`: submitted as soon as the UI is up.
    pub initial_prompt: Option<String>,
    /// The starting model, permission mode and session id.
    pub status: StatusUpdate,
    /// Where prompt history is kept (`None`: memory only).
    pub history_file: Option<PathBuf>,
}

/// How the UI ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiExit {
    /// `/exit`, Ctrl+C twice, Ctrl+D on an empty input.
    Quit { stop_background: bool },
    /// The driver closed the event channel (the session ended by itself).
    SessionEnded,
}

#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Runs the UI on the process's terminal until the person quits or the driver hangs up.
pub async fn run(
    options: UiOptions,
    events: mpsc::Receiver<UiEvent>,
    commands: mpsc::UnboundedSender<UiCommand>,
) -> Result<UiExit, UiError> {
    let _ = (options, events, commands);
    Ok(UiExit::SessionEnded)
}
