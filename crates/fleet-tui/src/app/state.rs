//! What the UI knows: the transcript, the composer, the tasks, the status line, the questions
//! waiting for the person, and which pane has the keys. Events from the driver land here.

use super::{UiExit, UiOptions};
use crate::input::commands::{self, CommandInfo};
use crate::input::{Composer, ComposerContext};
use crate::panes::agent_form::AgentForm;
use crate::panes::confirm::Confirm;
use crate::panes::permission::PermissionPrompt;
use crate::panes::picker::Picker;
use crate::panes::status::Status;
use crate::panes::task_panel::TaskPanel;
use crate::panes::tasks::TaskBoard;
use crate::port::{PickerKind, StatusUpdate, TeammateIdentity, UiCommand, UiEvent};
use crate::theme::Theme;
use crate::transcript::Transcript;
use fleet_protocol::{EventKind, Role as MessageRole, SessionState, TreeReport};
use std::collections::VecDeque;
use std::time::Instant;
use tokio::sync::mpsc;

/// Who has the keys besides the composer.
#[derive(Debug)]
pub(super) enum Overlay {
    Picker(PickerKind, Picker),
    /// The task list; `viewing` is the task whose transcript fills the screen.
    Tasks {
        panel: TaskPanel,
        viewing: Option<String>,
    },
    AgentForm(AgentForm),
    /// Quitting with background tasks still running.
    QuitConfirm(Confirm),
}

pub struct App {
    pub(super) theme: Theme,
    pub(super) transcript: Transcript,
    pub(super) composer: Composer,
    pub(super) board: TaskBoard,
    pub(super) status: Status,
    pub(super) prompts: VecDeque<PermissionPrompt>,
    pub(super) overlay: Option<Overlay>,
    /// Prompts sent but not yet taken up by the session, shown dimmed above the input.
    pub(super) queued: VecDeque<String>,
    pub(super) commands: Vec<CommandInfo>,
    pub(super) custom: Vec<CommandInfo>,
    pub(super) tree: Option<TreeReport>,
    /// When the main agent's current turn began; `None` while it is idle.
    pub(super) working_since: Option<Instant>,
    /// The first Ctrl+C of a possible double press.
    pub(super) ctrl_c_at: Option<Instant>,
    pub(super) hint_until: Option<Instant>,
    /// The transcript's height in the last frame (what a page is).
    pub(super) transcript_rows: u16,
    /// Set when this session is a teammate in its own pane: the header row names it.
    pub(super) identity: Option<TeammateIdentity>,
    /// The Ultraplan session's pill, while there is one.
    pub(super) ultraplan: Option<crate::panes::ultraplan::UltraplanPill>,
    /// The folder and home, for the header the transcript opens with.
    cwd: std::path::PathBuf,
    home: Option<std::path::PathBuf>,
    exit: Option<UiExit>,
    sender: mpsc::UnboundedSender<UiCommand>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").finish_non_exhaustive()
    }
}

impl App {
    pub fn new(options: UiOptions, sender: mpsc::UnboundedSender<UiCommand>) -> Self {
        let custom = commands::load_custom(&options.cwd, options.home.as_deref());
        let mut all = commands::builtin();
        all.extend(custom.iter().cloned());
        let composer = Composer::new(ComposerContext {
            cwd: options.cwd.clone(),
            history_file: options.history_file.clone(),
            commands: all.clone(),
        });
        let mut app = Self {
            theme: options.theme,
            transcript: Transcript::new(),
            composer,
            board: TaskBoard::new(),
            status: Status::default(),
            prompts: VecDeque::new(),
            overlay: None,
            queued: VecDeque::new(),
            commands: all,
            custom,
            tree: None,
            working_since: None,
            ctrl_c_at: None,
            hint_until: None,
            transcript_rows: 20,
            identity: None,
            ultraplan: None,
            cwd: options.cwd,
            home: options.home,
            exit: None,
            sender,
        };
        app.apply_status(&options.status);
        app.push_header();
        if let Some(prompt) = options.initial_prompt.filter(|p| !p.trim().is_empty()) {
            app.submit(prompt);
        }
        app
    }

    /// The exit, once the person (or a signal) asked for one.
    pub fn take_exit(&mut self) -> Option<UiExit> {
        self.exit.take()
    }

    pub fn exit_pending(&self) -> bool {
        self.exit.is_some()
    }

    /// The conversation to leave in the terminal's scrollback once the UI is gone.
    pub fn scrollback(&mut self, width: u16) -> Vec<ratatui::text::Line<'static>> {
        self.transcript.scrollback(width, &self.theme)
    }

    /// Who this session is, when it is a pane teammate.
    pub fn identity(&self) -> Option<&TeammateIdentity> {
        self.identity.as_ref()
    }

    /// Whether the main agent is in a turn (the "working" line shows, its clock moves).
    pub fn is_working(&self) -> bool {
        self.working_since.is_some()
    }

    /// Whether something the screen shows changes without an event: the `@` file list being
    /// built on its thread.
    pub fn is_waiting_on_background(&self) -> bool {
        self.composer.is_indexing()
    }

    pub fn handle_ui_event(&mut self, event: UiEvent) {
        match event {
            UiEvent::Agent(event) => {
                if event.agent.is_main() {
                    self.main_event(&event.kind);
                }
                self.board.apply(&event);
                self.transcript.apply(&event);
            }
            UiEvent::Permission(ask) => self.prompts.push_back(PermissionPrompt::new(ask)),
            UiEvent::PermissionWithdrawn { id } => self.prompts.retain(|p| p.ask.id != id),
            UiEvent::History(messages) => {
                self.transcript.clear();
                self.push_header();
                self.transcript.append_history(&messages);
            }
            UiEvent::Notice { level, text } => self.transcript.push_notice(level, &text),
            UiEvent::ShellDone {
                command,
                output,
                exit_code,
            } => self.transcript.push_shell(&command, &output, exit_code),
            UiEvent::Status(update) => self.apply_status(&update),
            UiEvent::Choices { kind, items } => {
                let title = match kind {
                    PickerKind::Sessions => "Resume a session",
                    PickerKind::Models => "Choose a model",
                };
                self.overlay = Some(Overlay::Picker(kind, Picker::new(title, items)));
            }
            UiEvent::Cleared => {
                self.transcript.clear();
                self.push_header();
                self.tree = None;
                self.status.cost_usd = 0.0;
                self.status.usage_unreported = false;
            }
            // Mail cells need nothing from it: the transcript shows delivered mail as letters
            // in every session, the lead's included.
            UiEvent::Identity(identity) => self.identity = Some(identity),
            UiEvent::Ultraplan(pill) => self.ultraplan = pill,
            UiEvent::PromptTaken(text) => {
                if let Some(at) = self.queued.iter().position(|q| *q == text) {
                    self.queued.remove(at);
                }
            }
        }
    }

    /// The main agent's events that change the UI's own state (the transcript and the task
    /// board see every event anyway).
    fn main_event(&mut self, kind: &EventKind) {
        match kind {
            // Not `Started`: the session announces itself before anyone has asked anything.
            EventKind::SessionState(SessionState::Running) => {
                self.working_since.get_or_insert_with(Instant::now);
            }
            EventKind::SessionState(SessionState::Idle) => self.working_since = None,
            EventKind::Finished(result) => {
                self.working_since = None;
                let cost = result
                    .tree
                    .as_ref()
                    .map_or(result.reported_cost_usd(), |t| t.reported_cost_usd());
                self.status.cost_usd = cost.unwrap_or(0.0);
                self.status.usage_unreported = cost.is_none();
                if let Some(tree) = &result.tree {
                    self.tree = Some(tree.clone());
                }
            }
            EventKind::MessageCommitted(committed)
                if committed.message.role == MessageRole::User
                    && committed.mail_ids.is_empty()
                    && is_prompt(&committed.message) =>
            {
                self.queued.pop_front();
            }
            _ => {}
        }
        self.status.running_agents = self.board.running();
    }

    /// The header the transcript opens with: folder, model, permission mode, `/help`.
    fn push_header(&mut self) {
        let lines = crate::panes::welcome::lines(
            &self.cwd,
            self.home.as_deref(),
            &self.status.model,
            self.status.permission_mode,
            &self.theme,
        );
        self.transcript.push_lines(lines);
    }

    fn apply_status(&mut self, update: &StatusUpdate) {
        if let Some(model) = &update.model {
            self.status.model = model.clone();
        }
        if let Some(mode) = update.permission_mode {
            self.status.permission_mode = Some(mode);
        }
        if update.context_percent.is_some() {
            self.status.context_percent = update.context_percent;
        }
    }

    pub(super) fn send(&self, command: UiCommand) {
        // The driver gone means the session is over; the event channel's end says so too.
        let _ = self.sender.send(command);
    }

    pub(super) fn submit(&mut self, text: String) {
        self.board.acknowledge_finished();
        self.transcript.scroll_to_bottom();
        self.queued.push_back(text.clone());
        self.send(UiCommand::Submit(text));
    }

    /// Ends the UI: with `stop_background`, running tasks are stopped; without, the driver
    /// waits for them after the UI is gone.
    pub fn quit_now(&mut self, stop_background: bool) {
        self.send(UiCommand::Quit { stop_background });
        self.exit = Some(UiExit::Quit { stop_background });
    }

    pub(super) fn set_hint(&mut self, hint: impl Into<String>) {
        self.status.hint = Some(hint.into());
        self.hint_until = Some(Instant::now() + std::time::Duration::from_secs(3));
    }

    pub(super) fn clear_hint(&mut self) {
        self.status.hint = None;
        self.hint_until = None;
    }

    /// Drops a hint whose time is up.
    pub(super) fn expire_hint(&mut self) {
        if self.hint_until.is_some_and(|until| Instant::now() >= until) {
            self.status.hint = None;
            self.hint_until = None;
        }
    }
}

/// A user message the person typed (not a turn's tool results, not a task notification, not
/// team mail): only such a message takes up a queued prompt.
fn is_prompt(message: &fleet_protocol::Message) -> bool {
    let text = message.text();
    !text.is_empty()
        && !text.trim_start().starts_with("<task-notification>")
        && crate::mail::parse_delivery(&text).is_none()
}
