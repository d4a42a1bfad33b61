//! `/help`: the keys and the slash commands, as lines for the transcript. The keys are
//! listed from one table here, so the help cannot drift from a second copy elsewhere.

use super::text::{pad, width, wrapped_lines};
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

/// The width of the key column.
const KEY_CELLS: usize = 11;
/// A command column wider than this pushes its description to the next row.
const COMMAND_CELLS: usize = 26;
/// Below this width each entry's description goes under its key, wrapped.
const SIDE_BY_SIDE: u16 = 60;

/// The help for a wide view (the transcript wraps it on a narrow one); see
/// [`lines_for_width`] for a form that reads well at any width.
pub fn lines(commands: &[CommandInfo], theme: &Theme) -> Vec<Line<'static>> {
    lines_for_width(commands, u16::MAX, theme)
}

/// Like [`lines`]; when `width` is narrow, each description sits under its key, wrapped
/// with an indent.
pub fn lines_for_width(
    commands: &[CommandInfo],
    width_cells: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut entries: Vec<(String, String, Role)> = KEYS
        .iter()
        .map(|(k, what)| (k.to_string(), what.to_string(), Role::Accent))
        .collect();
    let keys = entries.len();
    entries.extend(commands.iter().map(|c| {
        let mut name = format!("/{}", c.name);
        if !c.argument_hint.is_empty() {
            name = format!("{name} {}", c.argument_hint);
        }
        let mut what = c.description.clone();
        if matches!(c.source, CommandSource::Custom(_)) {
            what.push_str(" (custom)");
        }
        (name, what, Role::Tool)
    }));
    let command_column = entries[keys..]
        .iter()
        .map(|(n, _, _)| width(n))
        .filter(|w| *w <= COMMAND_CELLS)
        .max()
        .unwrap_or(0)
        .max(KEY_CELLS);

    let mut out = vec![heading("Keys", theme)];
    for (i, (name, what, role)) in entries.into_iter().enumerate() {
        if i == keys {
            out.push(Line::default());
            out.push(heading("Commands", theme));
        }
        let column = if i < keys { KEY_CELLS } else { command_column };
        let name_style = theme.style(role);
        let text_style = theme.style(Role::Text);
        if width_cells < SIDE_BY_SIDE {
            out.push(Line::from(Span::styled(format!("  {name}"), name_style)));
            out.extend(wrapped_lines(
                &what,
                usize::from(width_cells),
                "      ",
                text_style,
            ));
        } else if width(&name) > column {
            out.push(Line::from(Span::styled(format!("  {name}"), name_style)));
            out.push(Line::from(vec![
                Span::raw(pad("", column + 4)),
                Span::styled(what, text_style),
            ]));
        } else {
            out.push(Line::from(vec![
                Span::styled(format!("  {}  ", pad(&name, column)), name_style),
                Span::styled(what, text_style),
            ]));
        }
    }
    out
}

fn heading(text: &str, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(text.to_string(), theme.style(Role::Heading)))
}
