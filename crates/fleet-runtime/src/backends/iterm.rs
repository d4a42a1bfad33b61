//! The iTerm2 backend, through the `it2` command line (the `it2` package on PyPI, which talks
//! to iTerm2's Python API). The calls used, as `it2` spells them:
//! - `it2 session split [-v] -s <session>` prints `Created new pane: <session id>`; `-v`
//!   splits with a vertical divider, so the new pane sits *beside* the old one;
//! - `it2 session set-name <name> -s <id>` titles it;
//! - `it2 session run -s <id> <line>` types `<line>` and Return into the pane's shell;
//! - `it2 session close -f -s <id>` closes it (`-f`: without it `it2` asks to confirm);
//!   an unknown id makes `it2` exit 3 with "Session '…' not found";
//! - `it2 session list --json` lists every session (`[{"id": …}, …]`).
//!
//! The layout matches tmux's: the first teammate beside the lead (`split -v` from the lead's
//! session, `$ITERM_SESSION_ID` after its `:`), the next ones stacked under the last
//! teammate (`split` without `-v`).
//!
//! iTerm2 starts nothing by itself: the command is *typed* into the new pane's shell (the
//! person's bash, zsh or fish). So it is one line, `cd '<cwd>' && exec env -- 'K=V' …
//! 'argv0' 'arg' …`, every word quoted by [`sh_quote`], and words holding a
//! control character other than a newline are refused: typed into a terminal, a Ctrl-C or a
//! Tab would act as a key, not arrive as text. The pid is not known (iTerm2 does not say).

use super::command;
use super::{sh_quote, BackendError, BackendKind, Pane, PaneBackend, PaneSpec};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// Teammate panes as native iTerm2 split panes.
#[derive(Debug)]
pub struct ITermBackend {
    it2: PathBuf,
    /// The lead's own session, split for the first teammate; `None` splits the active one.
    lead_session: Option<String>,
    /// The sessions this backend opened, oldest first.
    opened: Mutex<Vec<String>>,
}

impl ITermBackend {
    /// Uses the `it2` program at `it2`, splitting from the session in this process's
    /// `$ITERM_SESSION_ID`.
    pub fn new(it2: PathBuf) -> Self {
        Self::with_lead_session(it2, std::env::var("ITERM_SESSION_ID").ok())
    }

    /// Uses the `it2` program at `it2`, splitting from `iterm_session_id` (an
    /// `$ITERM_SESSION_ID` such as `w0t0p0:<uuid>`, or a bare session id) for the first pane.
    pub fn with_lead_session(it2: PathBuf, iterm_session_id: Option<String>) -> Self {
        let lead_session = iterm_session_id
            .map(|id| match id.split_once(':') {
                Some((_, uuid)) => uuid.to_string(),
                None => id,
            })
            .filter(|id| !id.is_empty());
        Self {
            it2,
            lead_session,
            opened: Mutex::new(Vec::new()),
        }
    }

    fn opened(&self) -> MutexGuard<'_, Vec<String>> {
        self.opened
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn it2(&self, args: &[&str]) -> Result<String, BackendError> {
        command::run(self.it2.as_os_str(), args)
    }

    /// Every session iTerm2 has now.
    fn sessions(&self) -> Result<Vec<String>, BackendError> {
        let args = ["session", "list", "--json"];
        let out = self.it2(&args)?;
        let unexpected = || BackendError::Unexpected {
            command: command::shown(self.it2.as_os_str(), &args),
            output: out.clone(),
        };
        let listed: Vec<serde_json::Value> =
            serde_json::from_str(&out).map_err(|_| unexpected())?;
        listed
            .iter()
            .map(|s| s.get("id").and_then(|id| id.as_str()).map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(unexpected)
    }
}

/// The id in what `it2 session split` printed.
fn split_answer(out: &str) -> Option<String> {
    let id = match out.lines().find_map(|l| l.split_once("Created new pane:")) {
        Some((_, id)) => id.trim(),
        None => out.trim(),
    };
    let plain = !id.is_empty() && !id.chars().any(|c| c.is_whitespace() || c.is_control());
    plain.then(|| id.to_string())
}

/// Refuses what cannot be typed into a shell safely (see the module doc).
fn check_typable(spec: &PaneSpec) -> Result<(), BackendError> {
    let cwd = spec.cwd.to_string_lossy();
    let words = spec
        .argv
        .iter()
        .map(String::as_str)
        .chain(spec.env.iter().map(|(_, v)| v.as_str()))
        .chain(std::iter::once(cwd.as_ref()));
    for word in words {
        if word.chars().any(|c| c.is_control() && c != '\n') {
            return Err(BackendError::InvalidSpec(format!(
                "{word:?} holds a control character, which iTerm2 would type as a key"
            )));
        }
    }
    if spec.argv.first().is_some_and(|p| p.contains('=')) {
        return Err(BackendError::InvalidSpec(
            "a program name with `=` would be read by `env` as a variable".into(),
        ));
    }
    Ok(())
}

/// `cd '<cwd>' && exec env -- 'K=V' … 'argv0' 'arg' …`
fn command_line(spec: &PaneSpec) -> String {
    let mut words = vec![
        "cd".to_string(),
        sh_quote(&spec.cwd.to_string_lossy()),
        "&&".into(),
        "exec".into(),
        "env".into(),
        "--".into(),
    ];
    words.extend(spec.env.iter().map(|(k, v)| sh_quote(&format!("{k}={v}"))));
    words.extend(spec.argv.iter().map(|w| sh_quote(w)));
    words.join(" ")
}

impl PaneBackend for ITermBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::ITerm2
    }

    fn spawn(&self, spec: &PaneSpec) -> Result<Pane, BackendError> {
        spec.check()?;
        check_typable(spec)?;
        let mut opened = self.opened();
        if !opened.is_empty() {
            let live = self.sessions()?;
            opened.retain(|id| live.contains(id));
        }
        let mut split = vec!["session", "split"];
        match opened.last() {
            Some(last) => split.extend(["-s", last.as_str()]),
            None => {
                split.push("-v");
                if let Some(lead) = &self.lead_session {
                    split.extend(["-s", lead.as_str()]);
                }
            }
        }
        let out = self.it2(&split)?;
        let id = split_answer(&out).ok_or_else(|| BackendError::Unexpected {
            command: command::shown(self.it2.as_os_str(), &split),
            output: out.clone(),
        })?;
        // A title is a nicety: a failure to set it does not stop the teammate.
        if let Err(err) = self.it2(&["session", "set-name", &spec.name, "-s", &id]) {
            tracing::debug!(%err, "could not title the iTerm2 pane");
        }
        if let Err(err) = self.it2(&["session", "run", "-s", &id, &command_line(spec)]) {
            let _ = self.it2(&["session", "close", "-f", "-s", &id]);
            return Err(err);
        }
        opened.push(id.clone());
        Ok(Pane { id, pid: None })
    }

    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        let result = self.it2(&["session", "close", "-f", "-s", pane]);
        self.opened().retain(|id| id != pane);
        match result {
            Ok(_) => Ok(()),
            Err(BackendError::Failed { stderr, .. }) if stderr.contains("not found") => Ok(()),
            Err(err) => Err(err),
        }
    }

    fn list(&self) -> Result<Vec<String>, BackendError> {
        let live = self.sessions()?;
        let mut opened = self.opened();
        opened.retain(|id| live.contains(id));
        Ok(opened.clone())
    }

    fn is_alive(&self, pane: &str) -> Result<bool, BackendError> {
        Ok(self.sessions()?.iter().any(|id| id == pane))
    }

    fn where_to_look(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(argv: &[&str]) -> PaneSpec {
        PaneSpec {
            name: "alice".into(),
            color: "blue".into(),
            cwd: PathBuf::from("/work/it's here"),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: vec![("FLEET_TEAM".into(), "a b".into())],
        }
    }

    #[test]
    fn the_command_line_quotes_every_word() {
        assert_eq!(
            command_line(&spec(&["/bin/fleet", "--name", "$(x)"])),
            "cd '/work/it'\\''s here' && exec env -- 'FLEET_TEAM=a b' '/bin/fleet' '--name' '$(x)'"
        );
    }

    #[test]
    fn control_characters_and_programs_with_equals_are_refused() {
        assert!(check_typable(&spec(&["fleet", "line\nbreak"])).is_ok());
        assert!(matches!(
            check_typable(&spec(&["fleet", "\u{3}"])),
            Err(BackendError::InvalidSpec(_))
        ));
        assert!(matches!(
            check_typable(&spec(&["fleet", "a\tb"])),
            Err(BackendError::InvalidSpec(_))
        ));
        assert!(matches!(
            check_typable(&spec(&["A=B"])),
            Err(BackendError::InvalidSpec(_))
        ));
    }

    #[test]
    fn split_answers_are_read() {
        assert_eq!(
            split_answer("Created new pane: 1A2B-3C\n").as_deref(),
            Some("1A2B-3C")
        );
        assert_eq!(split_answer("1A2B-3C\n").as_deref(), Some("1A2B-3C"));
        assert_eq!(split_answer("Error: no window"), None);
        assert_eq!(split_answer(""), None);
    }

    #[test]
    fn the_lead_session_is_the_part_after_the_colon() {
        let b = ITermBackend::with_lead_session("it2".into(), Some("w0t1p2:ABC-1".into()));
        assert_eq!(b.lead_session.as_deref(), Some("ABC-1"));
        let b = ITermBackend::with_lead_session("it2".into(), Some("ABC-2".into()));
        assert_eq!(b.lead_session.as_deref(), Some("ABC-2"));
        let b = ITermBackend::with_lead_session("it2".into(), Some(String::new()));
        assert_eq!(b.lead_session, None);
    }
}
