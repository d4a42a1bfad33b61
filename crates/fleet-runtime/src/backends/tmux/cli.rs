//! The `tmux` command line: one server (`-S <socket>` or the default), argv words only.
//!
//! tmux reads two things into words even when they come as separate arguments, and both are
//! undone here so what reaches tmux is exactly what fleet meant:
//! - a word ending in `;` ends a command (so a `;` argument to the teammate's program would
//!   cut the tmux command short): such a word is sent as `…\;`, which tmux reads back as
//!   `…;`. Real separators are added with [`Args::then`].
//! - `-c` (start folder) and `-T` (pane title) are expanded as formats, so `#` in them is
//!   doubled ([`literal`]). Program arguments and `-e` values are not expanded.

use crate::backends::command;
use crate::backends::BackendError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The words of one tmux call (a command, or several joined by `;`).
#[derive(Debug, Default)]
pub(super) struct Args(Vec<String>);

impl Args {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Adds a word as data: a trailing `;` stays a character, not a separator.
    pub(super) fn word(mut self, word: impl Into<String>) -> Self {
        let mut word = word.into();
        if word.ends_with(';') {
            word.insert(word.len() - 1, '\\');
        }
        self.0.push(word);
        self
    }

    pub(super) fn words<I, S>(self, words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        words.into_iter().fold(self, Args::word)
    }

    /// Ends the command so far; the next word starts another, run in the same call (tmux
    /// runs the whole sequence before it looks at anything else, such as a pane's program
    /// exiting).
    pub(super) fn then(mut self) -> Self {
        self.0.push(";".into());
        self
    }
}

/// `text` as a tmux format that expands to `text` itself.
pub(super) fn literal(text: &str) -> String {
    text.replace('#', "##")
}

/// One tmux server.
#[derive(Debug, Clone)]
pub(super) struct Tmux {
    socket: Option<PathBuf>,
}

impl Tmux {
    pub(super) fn new(socket: Option<PathBuf>) -> Self {
        Self { socket }
    }

    pub(super) fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// Runs `tmux [-S socket] args…` and returns what it printed.
    pub(super) fn run(&self, args: Args) -> Result<String, BackendError> {
        let mut argv: Vec<OsString> = Vec::with_capacity(args.0.len() + 2);
        if let Some(socket) = &self.socket {
            argv.push("-S".into());
            argv.push(socket.clone().into_os_string());
        }
        argv.extend(args.0.into_iter().map(OsString::from));
        command::run("tmux".as_ref(), &argv)
    }

    /// Every pane on the server with whether its program has ended (`remain-on-exit` keeps
    /// such a pane on screen). A server that is not running has no panes.
    pub(super) fn all_panes(&self) -> Result<Vec<(String, bool)>, BackendError> {
        let out = match self.run(
            Args::new()
                .words(["list-panes", "-a", "-F"])
                .word("#{pane_id} #{pane_dead}"),
        ) {
            Ok(out) => out,
            Err(BackendError::Failed { stderr, .. }) if no_server(&stderr) => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        Ok(out
            .lines()
            .filter_map(|line| {
                let (id, dead) = line.split_once(' ')?;
                Some((id.to_string(), dead.trim() == "1"))
            })
            .collect())
    }

    /// The panes in the window that holds `target`.
    pub(super) fn window_panes(&self, target: &str) -> Result<Vec<String>, BackendError> {
        let out = self.run(Args::new().words(["list-panes", "-t", target, "-F", "#{pane_id}"]))?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// A width in columns about `target`: `#{window_width}` or `#{pane_width}`.
    pub(super) fn width(&self, target: &str, format: &str) -> Result<u16, BackendError> {
        let out = self.run(Args::new().words(["display-message", "-p", "-t", target, format]))?;
        out.trim().parse().map_err(|_| BackendError::Unexpected {
            command: format!("tmux display-message {format}"),
            output: out.clone(),
        })
    }

    /// Whether a session named exactly `name` exists.
    pub(super) fn has_session(&self, name: &str) -> bool {
        self.run(
            Args::new()
                .words(["has-session", "-t"])
                .word(format!("={name}")),
        )
        .is_ok()
    }
}

/// What tmux says when there is no server to talk to.
fn no_server(stderr: &str) -> bool {
    stderr.contains("no server running") || stderr.contains("error connecting to")
}

/// Reads the `#{pane_id} #{pane_pid}` line a `-P -F` spawn prints.
pub(super) fn parse_spawned(
    command: &str,
    out: &str,
) -> Result<crate::backends::Pane, BackendError> {
    let unexpected = || BackendError::Unexpected {
        command: command.to_string(),
        output: out.to_string(),
    };
    let line = out.lines().next().ok_or_else(unexpected)?;
    let (id, pid) = line.trim().split_once(' ').ok_or_else(unexpected)?;
    if !id.starts_with('%') {
        return Err(unexpected());
    }
    let pid = pid.trim().parse::<u32>().map_err(|_| unexpected())?;
    Ok(crate::backends::Pane {
        id: id.to_string(),
        pid: Some(pid),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_semicolon_is_escaped_and_separators_are_not() {
        let args = Args::new()
            .words([";", "a;", "a\\;", "b;c"])
            .then()
            .word("x");
        assert_eq!(args.0, ["\\;", "a\\;", "a\\\\;", "b;c", ";", "x"]);
    }

    #[test]
    fn literal_doubles_hashes() {
        assert_eq!(literal("/tmp/a#{pane_id}"), "/tmp/a##{pane_id}");
    }

    #[test]
    fn spawned_lines_are_read_or_refused() {
        let pane = parse_spawned("tmux", "%12 4567\n").expect("parsed");
        assert_eq!(pane.id, "%12");
        assert_eq!(pane.pid, Some(4567));
        assert!(parse_spawned("tmux", "").is_err());
        assert!(parse_spawned("tmux", "12 4567").is_err());
        assert!(parse_spawned("tmux", "%1 x").is_err());
    }
}
