//! `/help`: the keys and the slash commands, as lines for the transcript. The keys are
//! listed from one table here, so the help cannot drift from a second copy elsewhere.

use super::text::pad;
use crate::input::commands::{CommandInfo, CommandSource};
use crate::theme::{Role, Theme};
use ratatui::text::{Line, Span};

/// Each key and what it does, in the order a newcomer needs them.
pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the prompt"),
    ("Shift+Enter", "new line (or \\ then Enter)"),
    ("Esc", "interrupt the turn; background agents keep running"),
    (
        "Ctrl+B",
        "move the running subagent or command to the background",
    ),
    ("Ctrl+C", "clear the input; twice to quit"),
    ("Ctrl+O", "expand or collapse tool results and thinking"),
    ("Ctrl+T", "tasks: view, stop or message them"),
    ("Ctrl+R", "search prompt history"),
    (
        "Shift+Tab",
        "cycle permission mode: default, accept edits, plan",
    ),
    ("PgUp/PgDn", "scroll the transcript"),
    ("Up/Down", "previous and next prompts"),
    ("@path", "mention a file"),
    ("!command", "run a shell command directly"),
];

/// The width of the first column.
const KEY_CELLS: usize = 13;
/// A command column wider than this pushes its description to the next row.
const COMMAND_CELLS: usize = 26;

pub fn lines(commands: &[CommandInfo], theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled("Keys", theme.style(Role::Heading)))];
    for (key, what) in KEYS {
        out.push(Line::from(vec![
            Span::styled(
                format!("  {}", pad(key, KEY_CELLS)),
                theme.style(Role::Accent),
            ),
            Span::styled(what.to_string(), theme.style(Role::Text)),
        ]));
    }
    if commands.is_empty() {
        return out;
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        "Commands",
        theme.style(Role::Heading),
    )));
    let names: Vec<String> = commands
        .iter()
        .map(|c| {
            let mut name = format!("/{}", c.name);
            if !c.argument_hint.is_empty() {
                name = format!("{name} {}", c.argument_hint);
            }
            name
        })
        .collect();
    let column = names
        .iter()
        .map(|n| super::text::width(n))
        .filter(|w| *w <= COMMAND_CELLS)
        .max()
        .unwrap_or(0)
        .max(KEY_CELLS);
    for (command, name) in commands.iter().zip(names) {
        let mut what = command.description.clone();
        if matches!(command.source, CommandSource::Custom(_)) {
            what.push_str(" (custom)");
        }
        let name_span = Span::styled(format!("  {}", pad(&name, column)), theme.style(Role::Tool));
        if super::text::width(&name) > COMMAND_CELLS {
            out.push(Line::from(name_span));
            out.push(Line::from(vec![
                Span::raw(pad("", column + 2)),
                Span::styled(what, theme.style(Role::Text)),
            ]));
        } else {
            out.push(Line::from(vec![
                name_span,
                Span::styled(what, theme.style(Role::Text)),
            ]));
        }
    }
    out
}
