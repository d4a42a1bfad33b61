//! The tmux backend, through the `tmux` command line only.
//!
//! Inside tmux, teammates split the lead's own window: the first beside the lead (`-h`), the
//! next ones stacked under the last teammate (`-v`); the lead keeps [`lead_width`] columns
//! (half the window, and at least 80 when the window leaves teammates 40), since the lead is
//! where the person types. The window is re-laid-out (lead on the left, teammates stacked on
//! the right) only while it holds nothing but the lead and fleet's panes, so a window where
//! the person keeps panes of their own keeps their layout. Outside tmux, teammates open in a
//! detached session `fleet-<team>` laid out tiled.
//!
//! The program runs directly (argv after `--`, never a shell string), so `#{pane_pid}` is
//! the program's own pid. tmux hands a *single* word to the shell (`sh -c word`), so a
//! one-word argv is started through `env --`, which replaces itself with the program.
//!
//! Each pane keeps its screen when its program fails (`remain-on-exit failed`), so the lead
//! can quote a crashed teammate's last words before it closes the pane; the option is set in
//! the same tmux call that opens the pane, before tmux could notice the program end. The
//! pane's title is the teammate's name, drawn in its color on the pane's top border.
//! tmux's border *line* styles are window options (setting them "per pane" recolors the
//! person's whole window), so the color is carried by the pane's own border format only.

mod cli;

use super::{BackendError, BackendKind, Pane, PaneBackend, PaneSpec};
use cli::{literal, parse_spawned, Args, Tmux};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// What a spawn asks tmux to print about the new pane.
const SPAWNED: &str = "#{pane_id} #{pane_pid}";

/// Teammate panes in tmux: split beside the lead inside its window, or in an external
/// `fleet-<team>` session the person attaches to.
#[derive(Debug)]
pub struct TmuxBackend {
    tmux: Tmux,
    placement: Placement,
    /// The panes this backend opened, oldest first. The lock also keeps two spawns from
    /// laying out the window at once.
    opened: Mutex<Vec<String>>,
}

#[derive(Debug, Clone)]
enum Placement {
    Inside { lead_pane: String },
    External { session: String },
}

impl TmuxBackend {
    /// Panes split from `lead_pane` in its window, on the server at `socket`.
    pub fn inside(socket: PathBuf, lead_pane: String) -> Self {
        Self::with(Some(socket), Placement::Inside { lead_pane })
    }

    /// Panes in the session `fleet-<team>` on the default server, made at the first spawn.
    pub fn external(team: &str) -> Self {
        Self::with(None, external_placement(team))
    }

    /// Like [`TmuxBackend::external`], on the server at `socket` (tests run their own).
    pub fn external_on(team: &str, socket: PathBuf) -> Self {
        Self::with(Some(socket), external_placement(team))
    }

    /// The external session's name (`fleet-<team>`, with characters tmux would not keep in
    /// a session name replaced by `_`); `None` inside tmux.
    pub fn session_name(&self) -> Option<&str> {
        match &self.placement {
            Placement::External { session } => Some(session),
            Placement::Inside { .. } => None,
        }
    }

    fn with(socket: Option<PathBuf>, placement: Placement) -> Self {
        Self {
            tmux: Tmux::new(socket),
            placement,
            opened: Mutex::new(Vec::new()),
        }
    }

    fn opened(&self) -> MutexGuard<'_, Vec<String>> {
        self.opened
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens a pane in the lead's window and lays the window out when it is all ours.
    fn spawn_inside(&self, lead: &str, spec: &PaneSpec) -> Result<Pane, BackendError> {
        let mut opened = self.opened();
        let before = self.tmux.window_panes(lead)?;
        let anchor = opened.iter().rev().find(|p| before.contains(p)).cloned();
        // The split divides the lead's pane, which may be narrower than the window.
        let beside = self.tmux.width(lead, "#{pane_width}")?;
        let mate_columns = beside
            .saturating_sub(lead_width(beside) + 1)
            .max(1)
            .to_string();
        let (target, split): (&str, Vec<&str>) = match &anchor {
            None => (lead, vec!["-h", "-l", &mate_columns]),
            Some(last) => (last, vec!["-v"]),
        };
        // Not `-d`: the new pane must be tmux's current one for `set-option -p` in the same
        // call; `last-pane` then gives the focus back to whichever pane had it.
        let args = Args::new()
            .words(["split-window", "-t", target])
            .words(split.iter().copied())
            .words(["-P", "-F", SPAWNED]);
        let args = finish_new_pane(pane_command(args, spec), spec, None)
            .then()
            .words(["last-pane", "-t", target]);
        let pane = parse_spawned("tmux split-window", &self.tmux.run(args)?)?;
        opened.push(pane.id.clone());

        let after = self.tmux.window_panes(lead)?;
        let ours_only = after.iter().all(|p| p == lead || opened.contains(p));
        if ours_only {
            let lead_columns = lead_width(self.tmux.width(lead, "#{window_width}")?);
            self.tmux.run(
                Args::new()
                    .words(["select-layout", "-t", lead, "main-vertical"])
                    .then()
                    .words(["resize-pane", "-t", lead, "-x", &lead_columns.to_string()]),
            )?;
        }
        Ok(pane)
    }

    /// Opens a pane in the external session, making the session for the first one.
    fn spawn_external(&self, session: &str, spec: &PaneSpec) -> Result<Pane, BackendError> {
        let mut opened = self.opened();
        let target = format!("={session}:");
        // A detached new session is not made tmux's current one, so the rest of the call
        // names it; the session's only pane is the new one.
        let args = if self.tmux.has_session(session) {
            let args = Args::new().words(["split-window", "-t", &target, "-P", "-F", SPAWNED]);
            finish_new_pane(pane_command(args, spec), spec, None)
                .then()
                .words(["select-layout", "-t", &target, "tiled"])
        } else {
            let args = Args::new()
                .words(["new-session", "-d", "-s", session, "-x", "220", "-y", "60"])
                .words(["-P", "-F", SPAWNED]);
            finish_new_pane(pane_command(args, spec), spec, Some(&target))
        };
        let pane = parse_spawned("tmux new-session/split-window", &self.tmux.run(args)?)?;
        opened.push(pane.id.clone());
        Ok(pane)
    }
}

/// The lead's columns in a window `window` wide once teammates open beside it: half the
/// window, raised to 80 (a readable transcript and composer) as long as the teammates keep
/// 40. A lead squeezed to a third of a normal terminal cannot be worked in.
pub fn lead_width(window: u16) -> u16 {
    (window / 2).max(80.min(window.saturating_sub(40)))
}

/// Appends to a spawn call what the new pane needs while it is tmux's current pane, so it
/// all happens before tmux could see the program end: keep the pane if the program fails,
/// title it with the teammate's name, draw that title in the teammate's color on the top
/// border. `target` names the pane when the spawn did not make it the current one.
fn finish_new_pane(args: Args, spec: &PaneSpec, target: Option<&str>) -> Args {
    let color = tmux_color(&spec.color);
    let at = |args: Args| match target {
        Some(target) => args.words(["-t", target]),
        None => args,
    };
    let args = at(args.then().words(["set-option", "-p"])).words(["remain-on-exit", "failed"]);
    let args = at(args.then().word("select-pane"))
        .word("-T")
        .word(literal(&spec.name));
    let args = at(args.then().words(["set-option", "-p"]))
        .word("pane-border-format")
        .word(format!("#[fg={color},bold] #{{pane_title}} #[default]"));
    at(args.then().words(["set-option", "-w"])).words(["pane-border-status", "top"])
}

/// `-c <cwd> -e K=V … -- argv…` for a spawn command.
fn pane_command(args: Args, spec: &PaneSpec) -> Args {
    // `check` has made sure the folder is UTF-8.
    let cwd = spec.cwd.to_string_lossy();
    let mut args = args.words(["-c".to_string(), literal(&cwd)]);
    for (key, value) in &spec.env {
        args = args.words(["-e".to_string(), format!("{key}={value}")]);
    }
    args = args.word("--");
    if spec.argv.len() == 1 {
        args = args.words(["env", "--"]);
    }
    args.words(spec.argv.iter().cloned())
}

/// A color name tmux reads as one (`blue`, `brightred`, `colour33`); anything else could
/// break out of the `#[fg=…]` it goes into, so it becomes `default`.
fn tmux_color(color: &str) -> &str {
    if !color.is_empty() && color.chars().all(|c| c.is_ascii_alphanumeric()) {
        color
    } else {
        "default"
    }
}

fn external_placement(team: &str) -> Placement {
    let safe: String = team
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Placement::External {
        session: format!("fleet-{safe}"),
    }
}

/// The last `lines` lines of a capture, with runs of blank lines collapsed to one and blank
/// lines at either end dropped: the empty rows between a program's last output and tmux's
/// "Pane is dead" line would otherwise push the words themselves out.
fn tidy_capture(text: &str, lines: usize) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() && kept.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        kept.push(line);
    }
    while kept.last().is_some_and(|l| l.is_empty()) {
        kept.pop();
    }
    let start = kept.len().saturating_sub(lines);
    kept[start..].join("\n")
}

impl PaneBackend for TmuxBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Tmux
    }

    fn spawn(&self, spec: &PaneSpec) -> Result<Pane, BackendError> {
        spec.check()?;
        match &self.placement {
            Placement::Inside { lead_pane } => self.spawn_inside(lead_pane, spec),
            Placement::External { session } => self.spawn_external(session, spec),
        }
    }

    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        let result = self.tmux.run(Args::new().words(["kill-pane", "-t", pane]));
        self.opened().retain(|p| p != pane);
        match result {
            Ok(_) => Ok(()),
            // Gone already (or the whole server is): what was asked is done.
            Err(err) => match self.tmux.all_panes() {
                Ok(panes) if !panes.iter().any(|(id, _)| id == pane) => Ok(()),
                _ => Err(err),
            },
        }
    }

    fn list(&self) -> Result<Vec<String>, BackendError> {
        let existing = self.tmux.all_panes()?;
        let mut opened = self.opened();
        opened.retain(|p| existing.iter().any(|(id, _)| id == p));
        Ok(opened.clone())
    }

    fn is_alive(&self, pane: &str) -> Result<bool, BackendError> {
        Ok(self
            .tmux
            .all_panes()?
            .iter()
            .any(|(id, dead)| id == pane && !dead))
    }

    fn where_to_look(&self) -> Option<String> {
        let session = self.session_name()?;
        Some(match self.tmux.socket() {
            Some(socket) => format!(
                "tmux -S {} attach -t {session}",
                super::sh_quote(&socket.to_string_lossy())
            ),
            None => format!("tmux attach -t {session}"),
        })
    }

    fn last_words(&self, pane: &str, lines: usize) -> Option<String> {
        let history = format!("-{lines}");
        let out = self
            .tmux
            .run(Args::new().words(["capture-pane", "-p", "-J", "-t", pane, "-S", &history]))
            .ok()?;
        Some(tidy_capture(&out, lines)).filter(|text| !text.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_keeps_half_the_window_and_80_columns_where_it_can() {
        assert_eq!(lead_width(120), 80);
        assert_eq!(lead_width(200), 100);
        assert_eq!(lead_width(100), 60);
        assert_eq!(lead_width(80), 40);
        assert_eq!(lead_width(30), 15);
    }

    #[test]
    fn captures_lose_blank_runs_and_keep_the_last_lines() {
        let screen = "\n$ start\nboom\n\n\n\n\nPane is dead (status 3)\n\n\n";
        assert_eq!(
            tidy_capture(screen, 10),
            "$ start\nboom\n\nPane is dead (status 3)"
        );
        assert_eq!(tidy_capture(screen, 3), "boom\n\nPane is dead (status 3)");
        assert_eq!(tidy_capture("\n\n", 5), "");
        assert_eq!(tidy_capture("a", 0), "");
    }

    #[test]
    fn colors_that_could_break_a_style_become_default() {
        assert_eq!(tmux_color("blue"), "blue");
        assert_eq!(tmux_color("colour33"), "colour33");
        assert_eq!(tmux_color("red,bg=blue"), "default");
        assert_eq!(tmux_color("red]#[x"), "default");
        assert_eq!(tmux_color(""), "default");
    }

    #[test]
    fn external_sessions_are_named_for_the_team_in_safe_characters() {
        let backend = TmuxBackend::external("my team.v2:x");
        assert_eq!(backend.session_name(), Some("fleet-my_team_v2_x"));
        assert_eq!(
            backend.where_to_look().as_deref(),
            Some("tmux attach -t fleet-my_team_v2_x")
        );
        let own = TmuxBackend::external_on("alpha", PathBuf::from("/tmp/my sock"));
        assert_eq!(
            own.where_to_look().as_deref(),
            Some("tmux -S '/tmp/my sock' attach -t fleet-alpha")
        );
        let inside = TmuxBackend::inside(PathBuf::from("/tmp/s"), "%1".into());
        assert_eq!(inside.where_to_look(), None);
    }

    #[test]
    fn one_word_programs_start_through_env_and_the_rest_directly() {
        let spec = |argv: &[&str]| PaneSpec {
            name: "a".into(),
            color: "blue".into(),
            cwd: PathBuf::from("/w#1"),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: vec![("K".into(), "v;".into())],
        };
        let one = pane_command(Args::new(), &spec(&["/bin/fleet"]));
        let many = pane_command(Args::new(), &spec(&["/bin/fleet", "--x"]));
        assert_eq!(
            format!("{one:?}"),
            format!(
                "{:?}",
                Args::new().words(["-c", "/w##1", "-e", "K=v;", "--", "env", "--", "/bin/fleet"])
            )
        );
        assert_eq!(
            format!("{many:?}"),
            format!(
                "{:?}",
                Args::new().words(["-c", "/w##1", "-e", "K=v;", "--", "/bin/fleet", "--x"])
            )
        );
    }
}
