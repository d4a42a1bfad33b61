//! Choosing the teammate backend, as the design this follows does: inside tmux → tmux (even
//! in iTerm2); in iTerm2 with `it2` → iTerm2; in iTerm2 without `it2` but with tmux → tmux,
//! with a hint on installing `it2`; elsewhere with tmux → an external tmux session; nothing →
//! an error with install instructions. `auto` stays in-process unless the session runs inside
//! tmux or iTerm2 (or no pane backend is usable); a non-interactive run (`-p`) is in-process
//! unless a mode is forced.
//!
//! Everything detection looks at is an [`Environment`], so the whole table is tested with
//! hand-made environments and a fake `PATH` (`detect/tests.rs`).

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

    /// The full path of `program` on `PATH`, if it is there and executable (as `which`
    /// answers). Empty `PATH` entries (which would mean the current folder) are skipped: a
    /// `tmux` lying in whatever folder fleet was started from is not one to run.
    pub fn find(&self, program: &str) -> Option<PathBuf> {
        if program.is_empty() || program.contains('/') {
            return None;
        }
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| dir.join(program))
            .find(|candidate| is_executable(candidate))
    }

    /// Inside tmux: the server's socket (first field of `$TMUX`) and the lead's pane.
    fn tmux_inside(&self) -> Option<(PathBuf, String)> {
        let socket = self.tmux.as_deref()?.split(',').next()?;
        let pane = self.tmux_pane.as_deref()?;
        if socket.is_empty() || pane.is_empty() {
            return None;
        }
        Some((PathBuf::from(socket), pane.to_string()))
    }

    /// Running in iTerm2 (`TERM_PROGRAM` says so, or iTerm2 gave the session an id, which
    /// survives into a tmux started from it).
    fn in_iterm(&self) -> bool {
        self.term_program.as_deref() == Some("iTerm.app")
            || self.iterm_session.as_deref().is_some_and(|s| !s.is_empty())
    }
}

#[cfg(unix)]
fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &std::path::Path) -> bool {
    path.is_file()
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
    let inside = || {
        env.tmux_inside()
            .map(|(socket, lead_pane)| Choice::TmuxInside { socket, lead_pane })
    };
    match mode {
        TeammateMode::InProcess => Ok(Choice::InProcess { notice: None }),
        TeammateMode::Auto if !interactive => Ok(Choice::InProcess { notice: None }),
        TeammateMode::Auto => {
            if let Some(choice) = inside() {
                return Ok(choice);
            }
            if !env.in_iterm() {
                return Ok(Choice::InProcess { notice: None });
            }
            if let Some(it2) = env.find("it2") {
                return Ok(Choice::Iterm2 { it2 });
            }
            if env.find("tmux").is_some() {
                return Ok(Choice::TmuxExternal {
                    hint: Some(format!(
                        "Teammates open in an external tmux session: iTerm2 split panes need \
                         the it2 command line, which is not on PATH. {}",
                        it2_install()
                    )),
                });
            }
            Ok(Choice::InProcess {
                notice: Some(format!(
                    "Teammates run in this process: iTerm2 split panes need the it2 command \
                     line and neither it2 nor tmux is on PATH. {}",
                    it2_install()
                )),
            })
        }
        TeammateMode::Tmux => {
            if let Some(choice) = inside() {
                return Ok(choice);
            }
            if env.find("tmux").is_some() {
                return Ok(Choice::TmuxExternal { hint: None });
            }
            Err(DetectError::NoBackend(format!(
                "--teammate-mode tmux asks for tmux panes, but tmux is not on PATH. {} \
                 Or run teammates in this process with --teammate-mode in-process.",
                tmux_install(&env.os)
            )))
        }
        TeammateMode::Iterm2 => {
            if !env.in_iterm() {
                return Err(DetectError::NoBackend(
                    "--teammate-mode iterm2 asks for iTerm2 split panes, but this session is \
                     not running in iTerm2 (TERM_PROGRAM is not iTerm.app and there is no \
                     ITERM_SESSION_ID). Start fleet in iTerm2, or use --teammate-mode tmux or \
                     --teammate-mode in-process."
                        .into(),
                ));
            }
            match env.find("it2") {
                Some(it2) => Ok(Choice::Iterm2 { it2 }),
                None => Err(DetectError::NoBackend(format!(
                    "--teammate-mode iterm2 asks for iTerm2 split panes, which need the it2 \
                     command line, and it2 is not on PATH. {} Or run teammates in this process \
                     with --teammate-mode in-process.",
                    it2_install()
                ))),
            }
        }
    }
}

/// How to get `it2` working: the program, and the API it talks to (off by default).
fn it2_install() -> &'static str {
    "Install it with `pip install it2` (or `uv tool install it2`), then enable iTerm2's \
     Python API: Settings → General → Magic → Enable Python API."
}

/// How to install tmux on `os` (`std::env::consts::OS` names).
fn tmux_install(os: &str) -> &'static str {
    match os {
        "macos" => "Install it with `brew install tmux`.",
        "linux" => {
            "Install it with your package manager: `sudo apt-get install tmux` (Debian, \
             Ubuntu), `sudo dnf install tmux` (Fedora) or `sudo pacman -S tmux` (Arch)."
        }
        _ => "See https://github.com/tmux/tmux/wiki/Installing for how to install it.",
    }
}

/// The backend for a pane choice (`None` for in-process). `team` names an external tmux
/// session (`fleet-<team>`).
pub fn backend_for(choice: &Choice, team: &str) -> Option<std::sync::Arc<dyn super::PaneBackend>> {
    use super::{iterm::ITermBackend, tmux::TmuxBackend};
    match choice {
        Choice::InProcess { .. } => None,
        Choice::TmuxInside { socket, lead_pane } => Some(std::sync::Arc::new(TmuxBackend::inside(
            socket.clone(),
            lead_pane.clone(),
        ))),
        Choice::TmuxExternal { .. } => Some(std::sync::Arc::new(TmuxBackend::external(team))),
        Choice::Iterm2 { it2 } => Some(std::sync::Arc::new(ITermBackend::new(it2.clone()))),
    }
}

#[cfg(test)]
mod tests;
