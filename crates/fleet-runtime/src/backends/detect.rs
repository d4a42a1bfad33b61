//! Choosing the teammate backend, as the design this follows does: inside tmux → tmux (even
//! in iTerm2); in iTerm2 with `it2` → iTerm2; in iTerm2 without `it2` but with tmux → tmux,
//! with a hint on installing `it2`; elsewhere with tmux → an external tmux session; nothing →
//! an error with install instructions. `auto` stays in-process unless the session runs inside
//! tmux or iTerm2 (or no pane backend is usable); a non-interactive run (`-p`) is in-process
//! unless a mode is forced. PLACEHOLDER (helper A fills this in).

use std::ffi::OsString;
use std::path::PathBuf;

/// `--teammate-mode` / the `teammateMode` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TeammateMode {
    #[default]
    Auto,
    InProcess,
    Tmux,
    Iterm2,
}

impl TeammateMode {
    pub fn as_str(self) -> &'static str {
        match self {
            TeammateMode::Auto => "auto",
            TeammateMode::InProcess => "in-process",
            TeammateMode::Tmux => "tmux",
            TeammateMode::Iterm2 => "iterm2",
        }
    }
}

impl std::str::FromStr for TeammateMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "in-process" => Ok(Self::InProcess),
            "tmux" => Ok(Self::Tmux),
            "iterm2" => Ok(Self::Iterm2),
            other => Err(format!(
                "unknown teammate mode {other:?}: use auto, in-process, tmux or iterm2"
            )),
        }
    }
}

/// What detection looks at; tests build one by hand.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// `$TMUX` (`<socket>,<server pid>,<session>`), set inside tmux.
    pub tmux: Option<String>,
    /// `$TMUX_PANE` (`%0`): the lead's own pane.
    pub tmux_pane: Option<String>,
    /// `$TERM_PROGRAM` (`iTerm.app`, …).
    pub term_program: Option<String>,
    /// `$ITERM_SESSION_ID`, set in iTerm2 panes.
    pub iterm_session: Option<String>,
    /// `$PATH`, where `tmux` and `it2` are looked for.
    pub path: Option<OsString>,
    /// The platform, for install instructions (`linux`, `macos`, …).
    pub os: String,
}

impl Environment {
    /// This process's environment.
    pub fn from_process() -> Self {
        Self {
            tmux: std::env::var("TMUX").ok().filter(|v| !v.is_empty()),
            tmux_pane: std::env::var("TMUX_PANE").ok().filter(|v| !v.is_empty()),
            term_program: std::env::var("TERM_PROGRAM").ok(),
            iterm_session: std::env::var("ITERM_SESSION_ID").ok(),
            path: std::env::var_os("PATH"),
            os: std::env::consts::OS.to_string(),
        }
    }

    /// The full path of `program` on `PATH`, if it is there and executable.
    pub fn find(&self, program: &str) -> Option<PathBuf> {
        let _ = program;
        None
    }
}

/// Where teammates run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// In this process. `notice` says why when a pane was wanted (`auto` found none).
    InProcess { notice: Option<String> },
    /// Split panes in the lead's own tmux window.
    TmuxInside {
        /// The server's socket, from `$TMUX`.
        socket: PathBuf,
        /// The lead's pane, from `$TMUX_PANE`.
        lead_pane: String,
    },
    /// An external tmux session `fleet-<team>` on the default server; `hint` is shown once
    /// (in iTerm2 without `it2`: how to install it).
    TmuxExternal { hint: Option<String> },
    /// Native iTerm2 split panes through `it2`.
    Iterm2 { it2: PathBuf },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DetectError {
    /// A pane mode was asked for and nothing can host it; the message carries install
    /// instructions for this platform.
    #[error("{0}")]
    NoBackend(String),
}

/// Decides where teammates run.
pub fn choose(
    mode: TeammateMode,
    env: &Environment,
    interactive: bool,
) -> Result<Choice, DetectError> {
    let _ = (mode, env, interactive);
    Ok(Choice::InProcess { notice: None })
}

/// The backend for a pane choice (`None` for in-process). `team` names an external tmux
/// session (`fleet-<team>`).
pub fn backend_for(choice: &Choice, team: &str) -> Option<std::sync::Arc<dyn super::PaneBackend>> {
    let _ = (choice, team);
    None
}
