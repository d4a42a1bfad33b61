//! A delivered letter as lines. Prose: `✉ team-lead · hello`, then the body as Markdown,
//! indented and folded to a few rows (Ctrl+O shows all). A frame: one sentence,
//! `✉ team-lead asks you to shut down: work done`, with a submitted plan folded under it.
//!
//! The sender's name is in its team colour and always written out, so `NO_COLOR` loses
//! nothing; a letter the teammate could not verify as the lead's says so in words.

use super::cell::RenderKey;
use super::draw::{hang, indent};
use crate::mail::view::{shown, FrameLine, Shown, Tone};
use crate::mail::Letter;
use crate::render;
use crate::theme::{Role, Theme};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// Rows of a body (or a plan) shown while folded.
const FOLDED_ROWS: usize = 6;
/// Columns a body is indented by, under its header.
const BODY_INDENT: u16 = 2;

pub(crate) fn draw(letter: &Letter, key: RenderKey, theme: &Theme) -> Vec<Line<'static>> {
    match shown(letter) {
        Shown::Text => prose(letter, key, theme),
        Shown::Frame(line) => frame(letter, &line, key, theme),
    }
}

fn prose(letter: &Letter, key: RenderKey, theme: &Theme) -> Vec<Line<'static>> {
    let mut head = vec![sender(letter, theme)];
    head.extend(unverified(letter, theme));
    if let Some(summary) = letter
        .summary
        .as_deref()
        .map(inert)
        .filter(|s| !s.is_empty())
    {
        head.push(Span::styled(
            format!(" · {summary}"),
            theme.style(Role::Dim),
        ));
    }
    let mark = Span::styled("✉ ", theme.style(Role::Accent));
    let mut out = hang(vec![Line::from(head)], mark, key.width);
    out.extend(body(&letter.body, key, theme));
    out
}

fn frame(letter: &Letter, line: &FrameLine, key: RenderKey, theme: &Theme) -> Vec<Line<'static>> {
    let role = match line.tone {
        Tone::Plain => Role::Text,
        Tone::Quiet => Role::Dim,
        Tone::Good => Role::Success,
        Tone::Bad => Role::Warning,
    };
    let mark_role = if line.tone == Tone::Plain {
        Role::Accent
    } else {
        role
    };
    let mut spans = Vec::new();
    if line.sender_first {
        spans.push(sender(letter, theme));
        spans.extend(unverified(letter, theme));
        spans.push(Span::styled(" ", theme.style(role)));
    }
    spans.push(Span::styled(inert(&line.text), theme.style(role)));
    if !line.sender_first {
        spans.extend(unverified(letter, theme));
    }
    let mark = Span::styled(format!("{} ", line.mark), theme.style(mark_role));
    let mut out = hang(vec![Line::from(spans)], mark, key.width);
    if let Some(more) = &line.more {
        out.extend(body(more, key, theme));
    }
    out
}

/// The sender's name in its colour (bold without one).
fn sender(letter: &Letter, theme: &Theme) -> Span<'static> {
    let style = match &letter.color {
        Some(color) => theme.team(color),
        None => theme.style(Role::Text).add_modifier(Modifier::BOLD),
    };
    Span::styled(inert(&letter.from), style)
}

fn unverified(letter: &Letter, theme: &Theme) -> Option<Span<'static>> {
    letter
        .unverified
        .then(|| Span::styled(" (unverified)", theme.style(Role::Warning)))
}

/// Markdown under a header, indented, its first rows only unless everything is expanded.
fn body(text: &str, key: RenderKey, theme: &Theme) -> Vec<Line<'static>> {
    let text = clean(text);
    if text.trim().is_empty() {
        return Vec::new();
    }
    let width = key.width.saturating_sub(BODY_INDENT).max(1);
    let mut lines = render::markdown(&text, width, theme);
    while lines.last().is_some_and(|l| l.width() == 0) {
        lines.pop();
    }
    // Folding away one row would cost the same row as showing it.
    if !key.expanded && lines.len() > FOLDED_ROWS + 1 {
        let hidden = lines.len() - FOLDED_ROWS;
        lines.truncate(FOLDED_ROWS);
        lines.push(Line::styled(
            format!("… +{hidden} lines (ctrl+o to expand)"),
            theme.style(Role::Dim),
        ));
    }
    indent(&lines, usize::from(BODY_INDENT))
}

/// One line of an attribute or a sentence: control characters (escape sequences included)
/// become spaces, so nothing a sender wrote can drive the terminal or break the row.
fn inert(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// A body's control characters dropped, line breaks and tabs kept.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}
