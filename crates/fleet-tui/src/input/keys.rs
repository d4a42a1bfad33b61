//! What each key does in the composer: the search and the popups get first say, then
//! editing, moving, history and submitting. Keys nobody here uses answer `Unhandled`.

use super::complete::{Items, Kind};
use super::history::Newer;
use super::search::{Search, SearchOutcome};
use super::wrap;
use super::{Composer, ComposerAction};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::borrow::Cow;
use std::sync::atomic::Ordering;

pub(super) fn handle(c: &mut Composer, key: KeyEvent) -> ComposerAction {
    if key.kind == KeyEventKind::Release {
        return ComposerAction::Unhandled;
    }
    if c.search.is_some() {
        return search_key(c, key);
    }
    if c.popup
        .as_ref()
        .is_some_and(|p| p.items == Items::Files(None))
    {
        c.popup = c.current_popup().map(Cow::into_owned);
    }
    if let Some(action) = popup_key(c, key) {
        return action;
    }
    edit_key(c, key)
}

fn search_key(c: &mut Composer, key: KeyEvent) -> ComposerAction {
    let Some(search) = c.search.as_mut() else {
        return ComposerAction::Unhandled;
    };
    // Ctrl+C ends the search and still reaches the app (which clears the input).
    if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
        c.search = None;
        return ComposerAction::Unhandled;
    }
    let moves = matches!(
        key.code,
        KeyCode::Left | KeyCode::Right | KeyCode::Home | KeyCode::End
    );
    let takes = matches!(key.code, KeyCode::Up | KeyCode::Down);
    match search.handle_key(key, &c.history) {
        SearchOutcome::Continue => {}
        SearchOutcome::Accept(found) => take_found(c, found),
        SearchOutcome::Cancel => c.search = None,
        // A movement key takes the match and then moves in it, as in a shell.
        SearchOutcome::Unhandled if moves => {
            let found = search.found(&c.history).map(str::to_string);
            take_found(c, found);
            return edit_key(c, key);
        }
        // Up/Down take the match too, without stepping into the history from it.
        SearchOutcome::Unhandled if takes => {
            let found = search.found(&c.history).map(str::to_string);
            take_found(c, found);
        }
        SearchOutcome::Unhandled => return ComposerAction::Unhandled,
    }
    ComposerAction::Handled
}

fn take_found(c: &mut Composer, found: Option<String>) {
    c.search = None;
    if let Some(found) = found {
        c.editor.set_text(&found);
        c.edited();
    }
}

/// Keys an open popup takes; `None` lets the key through.
fn popup_key(c: &mut Composer, key: KeyEvent) -> Option<ComposerAction> {
    let popup = c.popup.as_mut()?;
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let plain = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
    match key.code {
        KeyCode::Up => popup.select_previous(),
        KeyCode::Char('p') if ctrl => popup.select_previous(),
        KeyCode::Down => popup.select_next(),
        KeyCode::Char('n') if ctrl => popup.select_next(),
        KeyCode::Esc => {
            c.dismissed = Some((popup.trigger.kind, popup.trigger.start));
            c.popup = None;
        }
        KeyCode::Tab => accept(c),
        KeyCode::Enter if plain && !popup.is_empty() => {
            if popup.trigger.kind == Kind::Command {
                let name = popup.selected_command()?.name.clone();
                let args = c.editor.text()[popup.trigger.end..].trim().to_string();
                let typed = format!("/{name} {args}");
                c.history.record(typed.trim_end());
                c.clear();
                return Some(ComposerAction::Command { name, args });
            }
            accept(c);
        }
        _ => return None,
    }
    Some(ComposerAction::Handled)
}

/// Puts the selected choice in place of what was typed.
fn accept(c: &mut Composer) {
    let Some(popup) = c.popup.take() else {
        return;
    };
    let Some(replacement) = popup.replacement() else {
        c.popup = Some(popup);
        return;
    };
    let end = popup.trigger.end;
    let next_is_blank = c.editor.text()[end..].starts_with(char::is_whitespace);
    let spaced = if next_is_blank {
        replacement
    } else {
        format!("{replacement} ")
    };
    c.editor.replace_range(popup.trigger.start, end, &spaced);
    if next_is_blank {
        c.editor.move_right();
    }
    c.edited();
}

fn edit_key(c: &mut Composer, key: KeyEvent) -> ComposerAction {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let word = ctrl || alt;
    let before = (c.editor.text().len(), c.editor.cursor());
    match key.code {
        KeyCode::Enter if shift || alt => c.editor.insert_str("\n"),
        KeyCode::Char('j') if ctrl => c.editor.insert_str("\n"),
        KeyCode::Enter if ctrl => return ComposerAction::Unhandled,
        KeyCode::Enter if c.editor.char_before_is('\\') => {
            c.editor.backspace();
            c.editor.insert_str("\n");
        }
        KeyCode::Enter => return submit(c),
        KeyCode::Char('r') if ctrl => {
            c.popup = None;
            c.search = Some(Search::new(&c.history));
            return ComposerAction::Handled;
        }
        KeyCode::Char('a') if ctrl => c.editor.move_line_start(),
        KeyCode::Char('e') if ctrl => c.editor.move_line_end(),
        KeyCode::Char('w') if ctrl => c.editor.delete_word_back(),
        KeyCode::Char('u') if ctrl => c.editor.delete_to_line_start(),
        KeyCode::Char('k') if ctrl => c.editor.kill_to_line_end(),
        KeyCode::Char('h') if ctrl => c.editor.backspace(),
        KeyCode::Char('b') if alt && !ctrl => c.editor.move_word_left(),
        KeyCode::Char('f') if alt && !ctrl => c.editor.move_word_right(),
        KeyCode::Char('d') if alt && !ctrl => c.editor.delete_word_forward(),
        KeyCode::Char(ch) if !ctrl && !alt => {
            let mut buf = [0u8; 4];
            c.editor.insert_str(ch.encode_utf8(&mut buf));
        }
        KeyCode::Backspace if word => c.editor.delete_word_back(),
        KeyCode::Backspace => c.editor.backspace(),
        KeyCode::Delete if word => c.editor.delete_word_forward(),
        KeyCode::Delete => c.editor.delete(),
        KeyCode::Left if word => c.editor.move_word_left(),
        KeyCode::Left => c.editor.move_left(),
        KeyCode::Right if word => c.editor.move_word_right(),
        KeyCode::Right => c.editor.move_right(),
        KeyCode::Home => c.editor.move_line_start(),
        KeyCode::End => c.editor.move_line_end(),
        KeyCode::Up if !word => return vertical(c, true),
        KeyCode::Down if !word => return vertical(c, false),
        _ => return ComposerAction::Unhandled,
    }
    if c.editor.text().len() != before.0 {
        c.edited();
    } else if c.editor.cursor() != before.1 {
        c.preferred_column = None;
        c.update_popup();
    }
    ComposerAction::Handled
}

/// Up/Down: between rows of the text, and into the history from the first or last row.
fn vertical(c: &mut Composer, up: bool) -> ComposerAction {
    let width = match c.text_width.load(Ordering::Relaxed) {
        0 => usize::MAX / 2,
        w => w,
    };
    let text = c.editor.text();
    let rows = wrap::wrap(text, width);
    let (row, column) = wrap::position(text, &rows, c.editor.cursor());
    let target = if up {
        row.checked_sub(1)
    } else {
        Some(row + 1).filter(|r| *r < rows.len())
    };
    if let Some(target) = target {
        let column = *c.preferred_column.get_or_insert(column);
        let offset = wrap::offset_at(text, &rows[target], column);
        c.editor.set_cursor(offset, !up);
        c.update_popup();
        return ComposerAction::Handled;
    }
    if up {
        if !c.history.is_browsing() {
            c.draft = Some(c.editor.clone());
        }
        if let Some(entry) = c.history.older() {
            c.editor.set_text(entry);
        }
    } else {
        match c.history.newer() {
            Newer::Entry(entry) => c.editor.set_text(entry),
            Newer::Draft => c.editor = c.draft.take().unwrap_or_default(),
            Newer::None => return ComposerAction::Handled,
        }
    }
    c.preferred_column = None;
    c.popup = None;
    ComposerAction::Handled
}

/// Enter: `!command`, `/name args`, or a prompt with its pastes inlined.
fn submit(c: &mut Composer) -> ComposerAction {
    let full = c.text();
    let text = full.trim_end();
    if text.trim().is_empty() {
        c.clear();
        return ComposerAction::Handled;
    }
    let text = text.to_string();
    c.history.record(&text);
    c.clear();
    if let Some(command) = text.strip_prefix('!') {
        let command = command.trim();
        if command.is_empty() {
            return ComposerAction::Handled;
        }
        return ComposerAction::Shell(command.to_string());
    }
    if let Some(rest) = text.strip_prefix('/') {
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        // `/usr/bin/env is odd` is a sentence about a path, not a command.
        if !name.is_empty() && !name.contains('/') {
            return ComposerAction::Command {
                name: name.to_string(),
                args: args.trim().to_string(),
            };
        }
    }
    ComposerAction::Submit(text)
}
