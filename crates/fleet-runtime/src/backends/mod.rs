//! Pane backends: where a teammate that is its own `fleet` process gets a terminal the person
//! can watch and type into. tmux (split panes in the lead's window, or an external
//! `fleet-<team>` session) and iTerm2 (native split panes through the `it2` CLI) are driven
//! through their command lines only; in-process teammates need no backend.
//!
//! - [`detect`]: which backend a session uses (`--teammate-mode`, `teammateMode`, the terminal
//!   it runs in, what is on `PATH`).
//! - [`tmux`]: the tmux backend, [`tmux::TmuxBackend`].
//! - [`iterm`]: the iTerm2 backend, [`iterm::ITermBackend`].
//! - [`pidwatch`]: waiting for a process that is not our child to end (a teammate's, the
//!   lead's), without polling where the kernel can tell us.

mod command;
pub mod detect;
pub mod iterm;
pub mod pidwatch;
mod quote;
pub mod tmux;

pub use quote::sh_quote;

use std::path::PathBuf;

/// Which pane backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Tmux,
    ITerm2,
}

impl BackendKind {
    /// The name in team files (`backendType`) and frames.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Tmux => "tmux",
            BackendKind::ITerm2 => "iterm2",
        }
    }
}

/// The backend as team files and frames name it (`backendType`).
impl From<BackendKind> for fleet_protocol::BackendType {
    fn from(kind: BackendKind) -> Self {
        match kind {
            BackendKind::Tmux => Self::Tmux,
            BackendKind::ITerm2 => Self::ITerm2,
        }
    }
}

/// A pane to open for one teammate.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneSpec {
    /// The teammate's name: the pane's title.
    pub name: String,
    /// The teammate's color (`blue`, `green`, …): the pane's border.
    pub color: String,
    /// The folder the command starts in.
    pub cwd: PathBuf,
    /// The program and its arguments, run directly (never through a shell).
    pub argv: Vec<String>,
    /// Variables set for the command only (on top of what the terminal's server has).
    pub env: Vec<(String, String)>,
}

/// A pane a backend opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// The backend's id for it: `%3` for tmux, a session id for iTerm2.
    pub id: String,
    /// The pid of the command in it, when the backend can tell.
    pub pid: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The backend's program could not be run at all.
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// It ran and failed.
    #[error("`{command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    /// It answered something we cannot read.
    #[error("`{command}` answered {output:?}, which is not what fleet expects")]
    Unexpected { command: String, output: String },
    /// The pane asked for cannot be described to this backend safely (no program, a variable
    /// name `env` would misread, a control character a terminal would take as a key).
    #[error("cannot open a pane for this command: {0}")]
    InvalidSpec(String),
}

impl PaneSpec {
    /// Checks what every backend needs: a program to run and variable names that are plain
    /// identifiers (`K=V` with a `=` or a space in `K` would be read differently by tmux and
    /// `env`, and a NUL cannot reach a program at all).
    pub(crate) fn check(&self) -> Result<(), BackendError> {
        let Some(program) = self.argv.first() else {
            return Err(BackendError::InvalidSpec("no program to run".into()));
        };
        if program.is_empty() {
            return Err(BackendError::InvalidSpec(
                "the program name is empty".into(),
            ));
        }
        for (key, _) in &self.env {
            let mut chars = key.chars();
            let first_ok = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(BackendError::InvalidSpec(format!(
                    "{key:?} is not a variable name"
                )));
            }
        }
        let words = self
            .argv
            .iter()
            .chain(self.env.iter().map(|(_, value)| value))
            .map(String::as_str)
            .chain(self.cwd.to_str());
        if words.clone().any(|w| w.contains('\0')) {
            return Err(BackendError::InvalidSpec(
                "an argument holds a NUL character".into(),
            ));
        }
        if self.cwd.to_str().is_none() {
            return Err(BackendError::InvalidSpec(format!(
                "the folder {} is not valid UTF-8",
                self.cwd.display()
            )));
        }
        Ok(())
    }
}

/// A terminal that can host teammate panes. Calls are short command-line runs, so the trait
/// is synchronous; async callers use `spawn_blocking`.
pub trait PaneBackend: Send + Sync + std::fmt::Debug {
    fn kind(&self) -> BackendKind;
    /// Opens a pane running `spec.argv`, laid out beside the others this backend opened.
    fn spawn(&self, spec: &PaneSpec) -> Result<Pane, BackendError>;
    /// Closes the pane (and with it what runs in it). A pane already gone is not an error.
    fn kill(&self, pane: &str) -> Result<(), BackendError>;
    /// The panes this backend opened that still exist.
    fn list(&self) -> Result<Vec<String>, BackendError>;
    fn is_alive(&self, pane: &str) -> Result<bool, BackendError>;
    /// A line telling the person where the panes are when they are not on screen (an
    /// external tmux session: `tmux attach -t fleet-<team>`).
    fn where_to_look(&self) -> Option<String>;
    /// The last `lines` lines a pane shows (blank runs collapsed, trailing blanks trimmed),
    /// so the lead can quote what a teammate that crashed said last. `None` when the
    /// backend cannot read a pane or the pane is gone.
    fn last_words(&self, pane: &str, lines: usize) -> Option<String> {
        let _ = (pane, lines);
        None
    }
}

#[cfg(test)]
mod kind_tests {
    use super::BackendKind;
    use fleet_protocol::BackendType;

    #[test]
    fn a_pane_backend_is_named_in_team_files_as_it_names_itself() {
        for kind in [BackendKind::Tmux, BackendKind::ITerm2] {
            let named = BackendType::from(kind);
            assert!(named.is_known());
            assert_eq!(named.as_str(), kind.as_str());
        }
    }
}
