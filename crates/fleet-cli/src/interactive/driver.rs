//! The driver: owns the session and talks to the UI over two channels. Every event of the
//! session is recorded (as `-p` records it) and forwarded; every command of the UI is done
//! here. Nothing in it needs a terminal, so tests play the UI's part over the channels.

use super::approver::{self, AgentLabels, UiApprover};
use super::ending::{end, observe};
use super::session::{Builder, Live, Spec, Which};
use super::shell::{self, ShellOutput};
use super::{agent_file, commands, resume, rules};
use fleet_protocol::{AgentEvent, EventKind, Message};
use fleet_runtime::approval::Approval;
use fleet_runtime::controls::{Destination, RuleBehavior};
use fleet_session::Op;
use fleet_tui::port::{
    NoticeLevel, PermissionAnswer, PickerKind, StatusUpdate, UiCommand, UiEvent,
};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// How the driver ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The UI asked to leave (or went away).
    Quit { stop_background: bool },
    /// The session ended by itself: its transcript could not be written, or it crashed (the
    /// crash's text, with how to resume).
    SessionEnded { crash: Option<String> },
}

pub struct Driver {
    builder: Builder,
    live: Live,
    ui: mpsc::Sender<UiEvent>,
    approver: Arc<UiApprover>,
    labels: Arc<AgentLabels>,
    shell: Option<shell::Running>,
    shell_tx: mpsc::UnboundedSender<ShellOutput>,
    shell_rx: mpsc::UnboundedReceiver<ShellOutput>,
    /// `!` commands' output not yet sent to the model.
    shell_context: Vec<String>,
    /// Background tasks running now (the main agent's), for the goodbye on stderr.
    background: Arc<AtomicUsize>,
    /// Once the driver is done: the last session's id, when it has a transcript to resume.
    resumable: Arc<Mutex<Option<String>>>,
}

impl Driver {
    /// Starts the MCP servers and the first session (as the command line says), ready to
    /// talk to the UI on `ui`.
    pub async fn start(spec: Spec, ui: mpsc::Sender<UiEvent>) -> anyhow::Result<Self> {
        let servers = crate::headless::start_mcp(
            &spec.args,
            &spec.cwd,
            false,
            None,
            spec.settings.trust.trusted,
        )
        .await;
        let labels = Arc::new(AgentLabels::default());
        let approver = Arc::new(UiApprover::new(ui.clone(), labels.clone()));
        let mcp = fleet_session::mcp::tools(&servers).await;
        let dashboard = crate::dashboard_cmd::tui::TuiDashboard::if_asked(&spec.args).await?;
        let builder = Builder {
            spec,
            servers,
            mcp,
            approver: approver.clone(),
            dashboard,
        };
        let live = builder.start(&Which::CommandLine, None, None).await?;
        let (shell_tx, shell_rx) = mpsc::unbounded_channel();
        Ok(Self {
            builder,
            live,
            ui,
            approver,
            labels,
            shell: None,
            shell_tx,
            shell_rx,
            shell_context: Vec::new(),
            background: Arc::default(),
            resumable: Arc::default(),
        })
    }

    /// The model, permission mode and session id now.
    pub fn status(&self) -> StatusUpdate {
        StatusUpdate {
            model: self.live.controls.model(),
            permission_mode: self.live.controls.permission_mode(),
            context_percent: None,
            session_id: Some(self.live.file.id().to_string()),
        }
    }

    /// This session's membership of a team, when it is a pane teammate.
    pub fn member(&self) -> Option<Arc<fleet_runtime::teams::member::Membership>> {
        self.live.member.clone()
    }

    /// How many background tasks run now, kept up to date while the driver runs.
    pub fn background_count(&self) -> Arc<AtomicUsize> {
        self.background.clone()
    }

    /// Where the driver leaves, when it is done, the id of the session to resume (`None`
    /// when nothing of it was written).
    pub fn resumable(&self) -> Arc<Mutex<Option<String>>> {
        self.resumable.clone()
    }

    /// The MCP servers, so the caller can stop them once the driver is done.
    pub fn servers(&self) -> Arc<fleet_runtime::subagent::McpSession> {
        self.builder.servers.clone()
    }

    /// Runs until the UI quits or the session ends, then ends the session.
    pub async fn run(mut self, mut commands: mpsc::UnboundedReceiver<UiCommand>) -> Ended {
        self.say(UiEvent::Status(self.status())).await;
        if let Some(member) = &self.live.member {
            let identity = &member.identity;
            self.say(UiEvent::Identity(fleet_tui::TeammateIdentity {
                name: identity.name.clone(),
                team: identity.team.clone(),
                color: identity.color.clone(),
                agent_type: identity.agent_type.clone(),
            }))
            .await;
            self.approver.offer_lead();
        }
        if let Some(dashboard) = &self.builder.dashboard {
            self.notice(NoticeLevel::Info, format!("dashboard: {}", dashboard.url()))
                .await;
        }
        if let Some(text) = crate::headless::panes::take_notice() {
            self.notice(NoticeLevel::Info, text).await;
        }
        for failed in fleet_session::mcp::failures(&self.builder.servers) {
            self.notice(NoticeLevel::Warning, failed.to_string()).await;
        }
        let member = self.live.member.clone();
        if !self.live.history.is_empty() {
            let history = std::mem::take(&mut self.live.history);
            self.say(UiEvent::History(history)).await;
        }
        let ended = loop {
            tokio::select! {
                event = self.live.handle.recv() => match event {
                    Some(event) => self.on_event(event).await,
                    None => break Ended::SessionEnded {
                        crash: self
                            .live
                            .handle
                            .crash()
                            .map(|c| c.explain(self.live.handle.session_id())),
                    },
                },
                command = commands.recv() => match command {
                    Some(UiCommand::Quit { stop_background }) => break Ended::Quit { stop_background },
                    Some(command) => self.on_command(command).await,
                    None => break Ended::Quit { stop_background: false },
                },
                Some(output) = self.shell_rx.recv() => self.on_shell_done(output).await,
                why = left_team(&member) => {
                    self.notice(NoticeLevel::Info, why).await;
                    break Ended::Quit { stop_background: true };
                }
            }
        };
        if let Some(shell) = self.shell.take() {
            shell.kill();
        }
        let stop = match &ended {
            Ended::Quit { stop_background } => *stop_background,
            Ended::SessionEnded { .. } => true,
        };
        let live = self.live;
        let id = end(
            live,
            stop,
            &self.ui,
            &self.labels,
            &self.background,
            &self.approver,
            Some(&mut commands),
        )
        .await;
        *self.resumable.lock().unwrap_or_else(|p| p.into_inner()) = id;
        ended
    }

    /// Tells the UI; a UI that is gone is noticed by the command channel closing.
    async fn say(&self, event: UiEvent) {
        let _ = self.ui.send(event).await;
    }

    async fn notice(&self, level: NoticeLevel, text: impl Into<String>) {
        self.say(UiEvent::Notice {
            level,
            text: text.into(),
        })
        .await;
    }

    async fn on_event(&mut self, event: AgentEvent) {
        self.live.tap(&event);
        if let Err(err) = observe(&mut self.live, &event, &self.labels, &self.background) {
            self.notice(NoticeLevel::Error, format!("{err:#}")).await;
        }
        match &event.kind {
            EventKind::Team(fleet_protocol::TeamEvent::MailRefused { reason, .. }) => {
                self.notice(NoticeLevel::Warning, reason.clone()).await;
            }
            // A pane teammate sends no events here; its questions are labelled by name.
            EventKind::Team(fleet_protocol::TeamEvent::TeammateSpawned {
                name,
                agent_id,
                agent_type,
                ..
            }) => self.labels.note(&fleet_protocol::AgentRef {
                agent_id: agent_id.clone(),
                parent_tool_use_id: None,
                subagent: Some(Arc::new(fleet_protocol::SubagentLabel {
                    subagent_type: agent_type.clone(),
                    description: format!("teammate {name}"),
                })),
            }),
            _ => {}
        }
        let finished = matches!(event.kind, EventKind::Finished(_))
            && event.agent.parent_tool_use_id.is_none();
        let advice = super::advice::after(&event, self.builder.spec.client.provider());
        self.say(UiEvent::Agent(event)).await;
        if let Some(text) = advice {
            // Under the `✗` line of the error it explains.
            self.notice(NoticeLevel::Info, text).await;
        }
        if finished {
            let percent = self
                .live
                .controls
                .context_usage()
                .map(|usage| usage.percentage.min(100) as u8);
            self.say(UiEvent::Status(StatusUpdate {
                context_percent: percent,
                ..StatusUpdate::default()
            }))
            .await;
        }
    }

    async fn on_shell_done(&mut self, output: ShellOutput) {
        self.shell = None;
        self.shell_context.push(output.context());
        self.say(UiEvent::ShellDone {
            command: output.command.clone(),
            output: output.combined(),
            exit_code: output.exit_code,
        })
        .await;
    }

    async fn prompt(&mut self, text: String) {
        let text = if self.shell_context.is_empty() {
            text
        } else {
            let mut context = std::mem::take(&mut self.shell_context).join("\n");
            context.push_str("\n\n");
            context.push_str(&text);
            context
        };
        if self
            .live
            .ops
            .send(Op::Prompt(Message::user_text(text)))
            .is_err()
        {
            self.notice(
                NoticeLevel::Error,
                "the session has ended; the prompt was not sent",
            )
            .await;
        }
    }

    async fn on_command(&mut self, command: UiCommand) {
        let ops = self.live.ops.clone();
        match command {
            UiCommand::Submit(text) if fleet_remote::ultraplan::keyword::triggers(&text) => {
                super::ultraplan::start(self.ui.clone(), self.builder.spec.cwd.clone(), text).await
            }
            UiCommand::Submit(text) => self.prompt(text).await,
            UiCommand::Compact(focus) => {
                if !self.shell_context.is_empty() {
                    // `!` output waiting for the model goes with the next prompt, as before.
                    let text = match focus.as_deref().map(str::trim) {
                        Some(focus) if !focus.is_empty() => format!("/compact {focus}"),
                        _ => "/compact".to_string(),
                    };
                    return self.prompt(text).await;
                }
                if ops.send(Op::Compact { focus }).is_err() {
                    self.notice(
                        NoticeLevel::Error,
                        "the session has ended; the prompt was not sent",
                    )
                    .await;
                }
            }
            UiCommand::Shell(command) => self.start_shell(command).await,
            UiCommand::Interrupt => {
                let _ = ops.interrupt();
                if let Some(shell) = &self.shell {
                    shell.kill();
                }
            }
            UiCommand::Background => {
                // Moving emits task events, which this loop forwards: waiting here for the
                // move to finish could wait on ourselves, so it runs beside the loop.
                let ui = self.ui.clone();
                tokio::spawn(async move {
                    let text = match ops.background().await {
                        Ok(0) | Err(_) => "nothing running in the foreground".to_string(),
                        Ok(1) => "moved 1 task to the background".to_string(),
                        Ok(n) => format!("moved {n} tasks to the background"),
                    };
                    let _ = ui
                        .send(UiEvent::Notice {
                            level: NoticeLevel::Info,
                            text,
                        })
                        .await;
                });
            }
            UiCommand::Answer { id, answer } => self.answer(id, answer).await,
            UiCommand::SetModel(None) => {
                let spec = &self.builder.spec;
                let items =
                    commands::model_choices(&spec.catalog, spec.client.provider(), &spec.model);
                self.say(UiEvent::Choices {
                    kind: PickerKind::Models,
                    items,
                })
                .await;
            }
            UiCommand::SetModel(Some(name)) => match ops.set_model(Some(name)).await {
                Ok(Ok(model)) => {
                    self.say(UiEvent::Status(StatusUpdate {
                        model: Some(model),
                        ..StatusUpdate::default()
                    }))
                    .await
                }
                Ok(Err(err)) => self.notice(NoticeLevel::Error, err.to_string()).await,
                Err(err) => self.notice(NoticeLevel::Error, err.to_string()).await,
            },
            UiCommand::SetPermissionMode(mode) => {
                let set = match ops.set_permission_mode(mode).await {
                    Ok(set) => set.map_err(|e| e.to_string()),
                    Err(err) => Err(err.to_string()),
                };
                match set {
                    Ok(mode) => {
                        self.say(UiEvent::Status(StatusUpdate {
                            permission_mode: Some(mode),
                            ..StatusUpdate::default()
                        }))
                        .await
                    }
                    Err(err) => self.notice(NoticeLevel::Error, err).await,
                }
            }
            UiCommand::EditRule(None) => {
                let text = rules::listing(&self.live.permissions);
                self.notice(NoticeLevel::Info, text).await;
            }
            UiCommand::EditRule(Some(edit)) => {
                match rules::edit(&self.live.controls, &edit, &self.builder.spec.cwd) {
                    Ok(text) => self.notice(NoticeLevel::Info, text).await,
                    Err(err) => self.notice(NoticeLevel::Error, err).await,
                }
            }
            UiCommand::StopTask(id) => match ops.stop_task(id).await {
                Ok(Ok(stopped)) => {
                    let text = format!("stopped {} ({})", stopped.task_id, stopped.description);
                    self.notice(NoticeLevel::Info, text).await;
                }
                Ok(Err(err)) => self.notice(NoticeLevel::Error, err.to_string()).await,
                Err(err) => self.notice(NoticeLevel::Error, err.to_string()).await,
            },
            UiCommand::MessageTask { task_id, text } => {
                match ops.message_task(task_id.clone(), text).await {
                    Ok(Ok(_)) => {
                        self.notice(NoticeLevel::Info, format!("message sent to {task_id}"))
                            .await
                    }
                    Ok(Err(err)) => self.notice(NoticeLevel::Error, err.to_string()).await,
                    Err(err) => self.notice(NoticeLevel::Error, err.to_string()).await,
                }
            }
            UiCommand::Clear | UiCommand::Resume(_) if self.live.member.is_some() => {
                let text = "a teammate keeps its conversation: /clear and /resume are the \
                            lead's (ask it to shut this teammate down instead)";
                self.notice(NoticeLevel::Warning, text).await;
            }
            UiCommand::Clear => self.switch(Which::Fresh).await,
            UiCommand::Resume(Some(id)) => {
                if id.trim() == self.live.file.id() {
                    self.notice(NoticeLevel::Info, "this is the session you are in")
                        .await;
                } else {
                    self.switch(Which::Resume(id.trim().to_string())).await;
                }
            }
            UiCommand::Resume(None) => match resume::choices(&self.builder.spec.cwd) {
                Ok(items) => {
                    self.say(UiEvent::Choices {
                        kind: PickerKind::Sessions,
                        items,
                    })
                    .await
                }
                Err(err) => self.notice(NoticeLevel::Error, format!("{err:#}")).await,
            },
            UiCommand::McpStatus => {
                let text = commands::mcp_status(&self.builder.servers).await;
                self.notice(NoticeLevel::Info, text).await;
            }
            UiCommand::ListAgents => {
                let text = commands::agent_list(self.live.spawner.agents());
                self.notice(NoticeLevel::Info, text).await;
            }
            UiCommand::CreateAgent(form) => {
                let cwd = &self.builder.spec.cwd;
                let project = crate::settings::repo_root(cwd).unwrap_or_else(|| cwd.clone());
                let home = std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(std::path::PathBuf::from);
                match agent_file::create(&form, &project, home.as_deref()) {
                    Ok(path) => {
                        let text = format!(
                            "wrote {} (sessions started from now on can use it)",
                            path.display()
                        );
                        self.notice(NoticeLevel::Info, text).await;
                    }
                    Err(err) => self.notice(NoticeLevel::Error, err.to_string()).await,
                }
            }
            // Handled by the loop.
            UiCommand::Quit { .. } => {}
        }
    }

    async fn start_shell(&mut self, command: String) {
        if self.shell.is_some() {
            let text = "a ! command is still running: wait for it, or press Esc to stop it";
            self.notice(NoticeLevel::Warning, text).await;
            return;
        }
        match shell::start(&command, &self.builder.spec.cwd, self.shell_tx.clone()) {
            Ok(running) => self.shell = Some(running),
            Err(err) => {
                self.notice(NoticeLevel::Error, format!("cannot run sh: {err}"))
                    .await
            }
        }
    }

    async fn answer(&mut self, id: u64, answer: PermissionAnswer) {
        let Some(pending) = self.approver.take(id) else {
            // Withdrawn meanwhile (the agent was cancelled), or answered twice.
            return;
        };
        let approval = match answer {
            PermissionAnswer::AllowOnce => Approval::allow(),
            PermissionAnswer::Deny => Approval::deny(),
            PermissionAnswer::DenyWithFeedback(text) if text.trim().is_empty() => Approval::deny(),
            PermissionAnswer::DenyWithFeedback(text) => approver::feedback(&pending.tool, &text),
            PermissionAnswer::AskLead => return self.ask_lead(pending).await,
            PermissionAnswer::AllowAlways => {
                if pending.rules.is_empty() {
                    let text = "no rule covers exactly this call, so it was allowed once";
                    self.notice(NoticeLevel::Warning, text).await;
                } else {
                    let values: Vec<_> =
                        pending.rules.iter().map(|r| rules::rule_value(r)).collect();
                    // In force now, and remembered in the user's store (keyed by this
                    // repository), never in a file the repository could have committed.
                    let root = crate::trust::repository_of(&self.builder.spec.cwd);
                    let added = self
                        .live
                        .controls
                        .add_rules(RuleBehavior::Allow, &values, Destination::Session)
                        .map_err(|e| e.to_string())
                        .and_then(|_| {
                            crate::trust::store_allow_rules(&root, &pending.rules, false)
                                .map_err(|e| format!("{e:#}"))
                        });
                    if let Err(err) = added {
                        let text = format!("allowed once; the rule was not saved: {err}");
                        self.notice(NoticeLevel::Error, text).await;
                    }
                }
                Approval::allow()
            }
        };
        pending.reply(approval);
    }

    /// Hands the question to the team's lead; the call waits for the answer that comes back
    /// by mail (or is refused when it cannot be asked).
    async fn ask_lead(&mut self, pending: approver::Pending) {
        let Some(member) = self.live.member.clone() else {
            self.notice(NoticeLevel::Warning, "only a teammate has a lead to ask")
                .await;
            pending.reply(Approval::deny());
            return;
        };
        let rule = (!pending.rules.is_empty()).then(|| pending.rules.join(", "));
        let asked = member.ask_lead(
            &pending.tool,
            &pending.input,
            &pending.tool_use_id,
            &pending.description,
            rule,
        );
        let answer = match asked {
            Ok(answer) => answer,
            Err(err) => {
                self.notice(NoticeLevel::Error, format!("the lead was not asked: {err}"))
                    .await;
                pending.reply(Approval::deny());
                return;
            }
        };
        self.notice(
            NoticeLevel::Info,
            format!("{} asked team-lead; waiting for the answer", pending.tool),
        )
        .await;
        let tool = pending.tool.clone();
        tokio::spawn(async move {
            let approval = match answer.await {
                Ok(answer) if answer.approved => Approval::allow(),
                Ok(answer) => Approval::Deny {
                    message: Some(match answer.feedback {
                        Some(feedback) => format!(
                            "The team lead did not allow this {tool} call. It said:\n{feedback}"
                        ),
                        None => format!("The team lead did not allow this {tool} call."),
                    }),
                },
                Err(_) => Approval::Deny {
                    message: Some(format!(
                        "This {tool} call was not run: the team lead's answer never came."
                    )),
                },
            };
            pending.reply(approval);
        });
    }

    /// Ends the current conversation and carries on with `which` (`/clear`, `/resume`). The
    /// new session is built first: when that fails, the current one goes on.
    async fn switch(&mut self, which: Which) {
        let model = self.live.controls.model();
        let mode = self.live.controls.permission_mode();
        let next = match self.builder.start(&which, model, mode).await {
            Ok(next) => next,
            Err(err) => {
                self.notice(NoticeLevel::Error, format!("{err:#}")).await;
                return;
            }
        };
        let old = std::mem::replace(&mut self.live, next);
        end(
            old,
            true,
            &self.ui,
            &self.labels,
            &self.background,
            &self.approver,
            None,
        )
        .await;
        self.shell_context.clear();
        match which {
            Which::Resume(_) => {
                let history = std::mem::take(&mut self.live.history);
                self.say(UiEvent::History(history)).await;
            }
            _ => self.say(UiEvent::Cleared).await,
        }
        self.say(UiEvent::Status(self.status())).await;
    }
}

/// Resolves when this pane teammate's session should end (it agreed to shut down, or its
/// lead is gone), with the reason; never for a session that is no teammate.
async fn left_team(member: &Option<Arc<fleet_runtime::teams::member::Membership>>) -> String {
    match member {
        Some(member) => member.gone().await,
        None => std::future::pending().await,
    }
}
