//! What each key does. The order is the point: a question on screen (quit confirmation,
//! permission prompt) takes every key; then an open pane (picker, task panel, form); then
//! the composer; and what the composer leaves (`Unhandled`) is the app's: Esc interrupts,
//! Ctrl+B backgrounds, Ctrl+C clears or quits, Ctrl+O expands, Ctrl+T opens the tasks.

use super::state::{App, Overlay};
use crate::input::ComposerAction;
use crate::panes::agent_form::FormResult;
use crate::panes::picker::Picked;
use crate::panes::task_panel::TaskPanelAction;
use crate::port::{PickerKind, UiCommand};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use fleet_protocol::PermissionMode;
use std::time::{Duration, Instant};

/// How long the first Ctrl+C waits for the second.
const DOUBLE_PRESS: Duration = Duration::from_secs(2);

/// The permission modes Shift+Tab cycles through, in order.
const MODES: [PermissionMode; 3] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
];

impl App {
    pub fn handle_terminal_event(&mut self, event: Event) {
        self.expire_hint();
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(key),
            Event::Paste(text) => self.paste(&text),
            // The next frame is drawn at the new size; nothing is cached by terminal size.
            Event::Resize(..) => {}
            _ => {}
        }
    }

    fn paste(&mut self, text: &str) {
        if let Some(prompt) = self.prompts.front_mut() {
            prompt.handle_paste(text);
            return;
        }
        match &mut self.overlay {
            Some(Overlay::Tasks { panel, .. }) => panel.handle_paste(text),
            Some(Overlay::AgentForm(form)) => form.handle_paste(text),
            Some(_) => {}
            None => self.composer.handle_paste(text),
        }
    }

    fn key(&mut self, key: KeyEvent) {
        if let Some(Overlay::QuitConfirm(confirm)) = &mut self.overlay {
            match confirm.handle_key(key) {
                Some('s') => self.quit_now(true),
                Some('w') => self.quit_now(false),
                Some(_) => {
                    // Cancelled: the double-press hint that led here is stale now.
                    self.overlay = None;
                    self.ctrl_c_at = None;
                    self.clear_hint();
                }
                None => {}
            }
            return;
        }
        if let Some(prompt) = self.prompts.front_mut() {
            if let Some(answer) = prompt.handle_key(key) {
                let id = prompt.ask.id;
                self.prompts.pop_front();
                self.send(UiCommand::Answer { id, answer });
            }
            return;
        }
        if self.overlay.is_some() {
            self.overlay_key(key);
            return;
        }
        match self.composer.handle_key(key) {
            ComposerAction::Handled => self.ctrl_c_at = None,
            ComposerAction::Submit(text) => self.submit(text),
            ComposerAction::Shell(command) => {
                self.transcript.scroll_to_bottom();
                self.send(UiCommand::Shell(command));
            }
            ComposerAction::Command { name, args } => self.slash(&name, args.trim()),
            ComposerAction::Unhandled => self.app_key(key),
        }
    }

    fn overlay_key(&mut self, key: KeyEvent) {
        let Some(overlay) = self.overlay.as_mut() else {
            return;
        };
        match overlay {
            Overlay::Picker(kind, picker) => {
                let kind = *kind;
                match picker.handle_key(key) {
                    Some(Picked::Chosen(id)) => {
                        self.overlay = None;
                        self.send(match kind {
                            PickerKind::Sessions => UiCommand::Resume(Some(id)),
                            PickerKind::Models => UiCommand::SetModel(Some(id)),
                        });
                    }
                    Some(Picked::Cancelled) => self.overlay = None,
                    None => {}
                }
            }
            Overlay::Tasks { panel, viewing } => {
                // While a task's transcript fills the screen, the page keys scroll it and Esc
                // goes back to the list.
                if viewing.is_some() && key.code == KeyCode::Esc {
                    *viewing = None;
                    return;
                }
                match panel.handle_key(key, &self.board) {
                    Some(TaskPanelAction::Close) => self.overlay = None,
                    Some(TaskPanelAction::View(id)) => *viewing = Some(id),
                    Some(TaskPanelAction::Stop(id)) => self.send(UiCommand::StopTask(id)),
                    Some(TaskPanelAction::Message { task_id, text }) => {
                        self.send(UiCommand::MessageTask { task_id, text })
                    }
                    None => {}
                }
            }
            Overlay::AgentForm(form) => match form.handle_key(key) {
                Some(FormResult::Done(agent)) => {
                    self.overlay = None;
                    self.send(UiCommand::CreateAgent(agent));
                }
                Some(FormResult::Cancelled) => self.overlay = None,
                None => {}
            },
            Overlay::QuitConfirm(_) => {}
        }
    }

    /// The keys the composer leaves to the app.
    fn app_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if !(ctrl && key.code == KeyCode::Char('c')) {
            self.ctrl_c_at = None;
        }
        match key.code {
            KeyCode::Esc if self.is_working() => {
                self.send(UiCommand::Interrupt);
                self.set_hint("interrupted");
            }
            KeyCode::Char('c') if ctrl => self.ctrl_c(),
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => self.quit(),
            KeyCode::Char('b') if ctrl => {
                self.send(UiCommand::Background);
            }
            KeyCode::Char('o') if ctrl => self.transcript.toggle_expanded(),
            KeyCode::Char('t') if ctrl => self.open_tasks(),
            KeyCode::BackTab => self.cycle_mode(),
            KeyCode::PageUp => self.transcript.scroll_up(self.page()),
            KeyCode::PageDown => self.transcript.scroll_down(self.page()),
            KeyCode::Up if key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.transcript.scroll_up(1)
            }
            KeyCode::Down if key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.transcript.scroll_down(1)
            }
            KeyCode::End if ctrl => self.transcript.scroll_to_bottom(),
            _ => {}
        }
    }

    /// Clears the input; on an empty input, interrupts a running turn; twice within two
    /// seconds, quits.
    fn ctrl_c(&mut self) {
        if !self.composer.is_empty() {
            self.composer.clear();
            self.ctrl_c_at = None;
            return;
        }
        if self
            .ctrl_c_at
            .is_some_and(|at| at.elapsed() <= DOUBLE_PRESS)
        {
            self.ctrl_c_at = None;
            self.quit();
            return;
        }
        if self.is_working() {
            self.send(UiCommand::Interrupt);
        }
        self.ctrl_c_at = Some(Instant::now());
        self.set_hint("Press Ctrl+C again to quit");
    }

    /// Quits at once, or asks first when background tasks would be left behind.
    pub(super) fn quit(&mut self) {
        let running = self.board.running_background();
        if running == 0 {
            self.quit_now(true);
            return;
        }
        let question = if running == 1 {
            "1 background task is still running. Quit?".to_string()
        } else {
            format!("{running} background tasks are still running. Quit?")
        };
        self.overlay = Some(Overlay::QuitConfirm(crate::panes::confirm::Confirm::new(
            question,
            vec![
                ('s', "stop them and quit".into()),
                ('w', "wait for them to finish, then quit".into()),
                ('c', "cancel".into()),
            ],
        )));
    }

    pub(super) fn open_tasks(&mut self) {
        self.overlay = Some(Overlay::Tasks {
            panel: crate::panes::task_panel::TaskPanel::new(),
            viewing: None,
        });
    }

    fn cycle_mode(&mut self) {
        let current = MODES
            .iter()
            .position(|m| Some(*m) == self.status.permission_mode)
            .unwrap_or(MODES.len() - 1);
        let next = MODES[(current + 1) % MODES.len()];
        self.send(UiCommand::SetPermissionMode(next));
    }

    /// Rows a page key moves: most of the transcript's height, so a line of context stays.
    fn page(&self) -> usize {
        usize::from(self.transcript_rows.saturating_sub(2).max(1))
    }
}
