//! The header a session opens with, as the transcript's first cell: which folder, which
//! model, which permission mode, and where help is. Someone who has just typed `fleet` sees
//! what it will work on before typing anything; it stays above the conversation (and in the
//! scrollback printed at exit).

use crate::theme::{Role, Theme};
use fleet_protocol::PermissionMode;
use ratatui::text::{Line, Span};
use std::path::Path;

/// `✻ fleet · ~/src/app` and `  model … · permission mode … · /help for help`.
pub fn lines(
    cwd: &Path,
    home: Option<&Path>,
    model: &str,
    mode: Option<PermissionMode>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let mut details = Vec::new();
    if !model.is_empty() {
        details.push(format!("model {model}"));
    }
    if let Some(mode) = mode {
        details.push(format!("permission mode {mode}"));
    }
    details.push("/help for help".into());
    vec![
        Line::from(vec![
            Span::styled("✻ fleet", theme.style(Role::Heading)),
            Span::styled(" · ", dim),
            Span::styled(folder(cwd, home), theme.style(Role::Text)),
        ]),
        Line::styled(format!("  {}", details.join(" · ")), dim),
    ]
}

/// The folder, with the home folder written `~`.
fn folder(cwd: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| cwd.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".into(),
        Some(rest) => format!("~/{}", rest.display()),
        None => cwd.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line]) -> String {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn names_the_folder_under_home_the_model_the_mode_and_help() {
        let lines = lines(
            Path::new("/home/ann/src/app"),
            Some(Path::new("/home/ann")),
            "claude-x",
            Some(PermissionMode::AcceptEdits),
            &Theme::default(),
        );
        assert_eq!(
            text(&lines),
            "✻ fleet · ~/src/app\n  model claude-x · permission mode acceptEdits · /help for help"
        );
    }

    #[test]
    fn a_folder_outside_home_is_shown_whole() {
        let lines = lines(
            Path::new("/srv/app"),
            Some(Path::new("/home/ann")),
            "",
            None,
            &Theme::default(),
        );
        assert_eq!(text(&lines), "✻ fleet · /srv/app\n  /help for help");
    }
}
