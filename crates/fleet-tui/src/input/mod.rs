//! The composer: where the person types. Multi-line editing, history, large pastes
//! collapsed, `@` path and `/` command completion, `!` shell lines, Ctrl+R history search.
//! It turns keys into [`ComposerAction`]s and leaves everything else (Esc with no popup open,
//! Ctrl+C, Ctrl+B…) to the app by answering `Unhandled`.
//!
//! - `editor`: the text, the cursor and atomic paste tokens; `wrap`: the on-screen layout.
//! - `history` and `search` (Ctrl+R); `paste`; `complete` (the `@` and `/` popups).
//! - `keys`: what each key does; `view`: the height and the drawing.

pub mod commands;
mod complete;
mod editor;
mod history;
mod keys;
mod paste;
mod search;
mod view;
mod wrap;

use commands::CommandInfo;
use complete::path::FileIndex;
use complete::{Items, Kind, Popup};
use crossterm::event::KeyEvent;
use editor::Editor;
use history::History;
use paste::Pastes;
use search::Search;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows of text shown before the box scrolls inside.
pub const MAX_TEXT_ROWS: usize = 10;

/// What the composer needs from outside.
#[derive(Debug, Clone, Default)]
pub struct ComposerContext {
    /// Where `@` completion looks (the repository, gitignore aware).
    pub cwd: PathBuf,
    /// Where submitted prompts are kept between sessions (`None`: memory only).
    pub history_file: Option<PathBuf>,
    /// Built-in and custom slash commands, for `/` completion.
    pub commands: Vec<CommandInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    /// The key was used (edited, moved, completed).
    Handled,
    /// Not the composer's key: the app decides (Esc, Ctrl+C, Ctrl+B, Ctrl+O, Ctrl+T…).
    Unhandled,
    /// Enter on a prompt; pasted blocks are inlined again.
    Submit(String),
    /// Enter on `!command`.
    Shell(String),
    /// Enter on `/name args`.
    Command { name: String, args: String },
}

#[derive(Debug, Default)]
pub struct Composer {
    editor: Editor,
    pastes: Pastes,
    history: History,
    /// What was being typed before browsing the history; Down past the newest restores it.
    draft: Option<Editor>,
    search: Option<Search>,
    popup: Option<Popup>,
    /// A popup closed with Esc stays closed for that trigger (its kind and start).
    dismissed: Option<(Kind, usize)>,
    files: FileIndex,
    commands: Vec<CommandInfo>,
    /// Column Up/Down aim for, kept across rows shorter than it.
    preferred_column: Option<usize>,
    /// Atomics rather than `Cell`s so the composer stays `Sync`; only `render` writes them.
    /// Text width at the last render, for Up/Down over wrapped rows (0: not drawn yet).
    text_width: AtomicUsize,
    /// First text row shown when the text is taller than the box.
    scroll: AtomicUsize,
}

impl Composer {
    pub fn new(context: ComposerContext) -> Self {
        Self {
            history: History::load(context.history_file),
            files: FileIndex::new(context.cwd),
            commands: context.commands,
            ..Self::default()
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        keys::handle(self, key)
    }

    /// Bracketed paste: large pastes are shown as "[pasted 240 lines]" and kept whole.
    pub fn handle_paste(&mut self, text: &str) {
        let text = paste::normalise(text);
        if let Some(search) = &mut self.search {
            search.push_str(text.lines().next().unwrap_or(""), &self.history);
            return;
        }
        if paste::is_large(&text) {
            let (id, label) = self.pastes.add(text);
            self.editor.insert_element(&label, id);
        } else {
            self.editor.insert_str(&text);
        }
        self.edited();
    }

    pub fn is_empty(&self) -> bool {
        self.editor.is_empty()
    }

    /// Empties the box (Ctrl+C, a submission); the history stays.
    pub fn clear(&mut self) {
        self.editor.clear();
        self.pastes.clear();
        self.draft = None;
        self.search = None;
        self.popup = None;
        self.dismissed = None;
        self.preferred_column = None;
        self.history.reset();
        self.scroll.store(0, Ordering::Relaxed);
    }

    pub fn set_commands(&mut self, commands: Vec<CommandInfo>) {
        self.commands = commands;
        self.update_popup();
    }

    /// The text as it would be submitted (pastes inlined).
    pub fn text(&self) -> String {
        self.pastes.expand(&self.editor)
    }

    /// Replaces the text (an initial prompt, a message put back after an error).
    pub fn set_text(&mut self, text: &str) {
        self.clear();
        self.editor.set_text(text);
        self.update_popup();
    }

    /// A file popup waits for the repository walk: the app should draw again soon.
    pub fn is_indexing(&self) -> bool {
        matches!(
            &self.popup,
            Some(Popup {
                items: Items::Files(None),
                ..
            })
        ) && self.files.paths().is_none()
    }

    /// After the text changed: browsing ends, and the popup follows the new text.
    fn edited(&mut self) {
        self.history.reset();
        self.draft = None;
        self.preferred_column = None;
        self.update_popup();
    }

    /// Opens, refreshes or closes the popup for what is at the cursor.
    fn update_popup(&mut self) {
        let Some(trigger) = complete::detect(self.editor.text(), self.editor.cursor()) else {
            self.popup = None;
            self.dismissed = None;
            return;
        };
        if self.dismissed == Some((trigger.kind, trigger.start)) {
            self.popup = None;
            return;
        }
        self.dismissed = None;
        let items = match trigger.kind {
            Kind::File => {
                self.files.ensure_started();
                Items::Files(self.files.matches(&trigger.query, complete::MAX_ROWS))
            }
            Kind::Command => {
                let found = complete::command::matches(&self.commands, &trigger.query, usize::MAX);
                if found.is_empty() {
                    self.popup = None;
                    return;
                }
                Items::Commands(found)
            }
        };
        let selected = match &self.popup {
            Some(old) if old.trigger == trigger && old.items == items => old.selected,
            _ => 0,
        };
        self.popup = Some(Popup {
            trigger,
            items,
            selected,
        });
    }

    /// The popup with its files filled in if the walk finished since the last key.
    fn current_popup(&self) -> Option<Cow<'_, Popup>> {
        let popup = self.popup.as_ref()?;
        if popup.items != Items::Files(None) {
            return Some(Cow::Borrowed(popup));
        }
        let mut popup = popup.clone();
        popup.items = Items::Files(self.files.matches(&popup.trigger.query, complete::MAX_ROWS));
        Some(Cow::Owned(popup))
    }
}
