//! The driver with no terminal: each test plays the UI over the two channels, against the
//! fake model server on loopback, in a temporary project folder.

use super::driver::{Driver, Ended};
use super::session::Spec;
use crate::args::PrintArgs;
use crate::settings::Settings;
use fleet_model::{AnthropicClient, AnthropicConfig, Auth, Catalog, HttpOptions, RetryPolicy};
use fleet_protocol::{ContentBlock, EventKind, RunResult};
use fleet_store::{FleetHome, SessionStore};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tui::port::{NewAgent, NoticeLevel, PermissionAnswer, PermissionAsk, PickerKind};
use fleet_tui::port::{UiCommand, UiEvent};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;

/// One `$FLEET_HOME` and `$HOME` for the whole test process: sessions are kept per project
/// folder, and every test has its own folder.
fn home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        std::env::set_var("FLEET_HOME", dir.join("fleet"));
        std::env::set_var("HOME", &dir);
        dir
    })
}

struct Ui {
    events: mpsc::Receiver<UiEvent>,
    commands: mpsc::UnboundedSender<UiCommand>,
    driver: tokio::task::JoinHandle<Ended>,
    server: FakeModelServer,
    cwd: PathBuf,
}

/// Nothing here waits for a duration to pass; this only keeps a broken test from hanging.
const PATIENCE: Duration = Duration::from_secs(60);

async fn open(scenario: Scenario, cwd: &Path, allowed: &[&str]) -> Ui {
    home();
    let server = FakeModelServer::start(scenario).await.expect("fake server");
    let mut config = AnthropicConfig::new(server.base_url(), Auth::ApiKey("test-key".into()));
    config.http = HttpOptions {
        retry: RetryPolicy {
            base_delay: Duration::from_millis(10),
            ..RetryPolicy::default()
        },
        ..HttpOptions::default()
    };
    let spec = Spec {
        args: PrintArgs {
            output_format: "text".into(),
            input_format: "text".into(),
            allowed_tools: allowed.iter().map(|s| s.to_string()).collect(),
            ..PrintArgs::default()
        },
        cwd: cwd.to_path_buf(),
        settings: Settings::default(),
        client: Arc::new(AnthropicClient::new(config).expect("client")),
        catalog: Catalog::builtin(),
        model: "claude-sonnet-4-5".into(),
        persist: true,
        member: None,
    };
    let (ui_tx, events) = mpsc::channel(256);
    let (commands, command_rx) = mpsc::unbounded_channel();
    let driver = Driver::start(spec, ui_tx).await.expect("session built");
    let driver = tokio::spawn(driver.run(command_rx));
    Ui {
        events,
        commands,
        driver,
        server,
        cwd: cwd.to_path_buf(),
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join(".git")).expect("a repository root");
    dir
}

impl Ui {
    fn send(&self, command: UiCommand) {
        self.commands.send(command).expect("driver listening");
    }

    /// The next event `pick` takes, skipping the others.
    async fn wait_for<T>(&mut self, what: &str, mut pick: impl FnMut(&UiEvent) -> Option<T>) -> T {
        let found = tokio::time::timeout(PATIENCE, async {
            while let Some(event) = self.events.recv().await {
                if let Some(found) = pick(&event) {
                    return Some(found);
                }
            }
            None
        })
        .await;
        match found {
            Ok(Some(found)) => found,
            Ok(None) => panic!("the driver hung up before {what}"),
            Err(_) => panic!("no {what} arrived"),
        }
    }

    /// Events up to the main agent's next `Finished`, and its result.
    async fn until_finished(&mut self) -> (Vec<UiEvent>, RunResult) {
        let mut seen = Vec::new();
        let result = self
            .wait_for("main Finished", |event| {
                seen.push(event.clone());
                match event {
                    UiEvent::Agent(e) if e.agent.parent_tool_use_id.is_none() => match &e.kind {
                        EventKind::Finished(result) => Some(result.clone()),
                        _ => None,
                    },
                    _ => None,
                }
            })
            .await;
        (seen, result)
    }

    async fn ask(&mut self) -> PermissionAsk {
        self.wait_for("a permission question", |event| match event {
            UiEvent::Permission(ask) => Some(ask.clone()),
            _ => None,
        })
        .await
    }

    /// Sends `prompt`, answers the permission question it raises with `answer`, and waits
    /// for the run to end; the question is returned for its checks.
    async fn answer_through(&mut self, prompt: &str, answer: PermissionAnswer) -> PermissionAsk {
        self.send(UiCommand::Submit(prompt.into()));
        let ask = self.ask().await;
        self.send(UiCommand::Answer { id: ask.id, answer });
        self.until_finished().await;
        ask
    }

    async fn notice(&mut self) -> (NoticeLevel, String) {
        self.wait_for("a notice", |event| match event {
            UiEvent::Notice { level, text } => Some((*level, text.clone())),
            _ => None,
        })
        .await
    }

    async fn session_id(&mut self) -> String {
        self.wait_for("a status with the session id", |event| match event {
            UiEvent::Status(status) => status.session_id.clone(),
            _ => None,
        })
        .await
    }

    /// The body of the last request the model got, as text.
    fn last_request(&self) -> String {
        self.server
            .last_request()
            .map(|r| r.body.to_string())
            .unwrap_or_default()
    }

    async fn quit(self) -> Ended {
        self.send(UiCommand::Quit {
            stop_background: true,
        });
        tokio::time::timeout(PATIENCE, self.driver)
            .await
            .expect("the driver ends")
            .expect("the driver did not panic")
    }
}

fn bash(command: &str) -> Rule {
    Rule::tool_use(
        "Bash",
        json!({ "command": command, "description": "run it" }),
    )
}

/// The model asks to run `command`, then answers "done" after seeing the result.
fn one_call(command: &str) -> Scenario {
    Scenario::queue([bash(command), Rule::text("done")])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_streams_back_and_is_recorded() {
    let dir = project();
    let mut ui = open(
        Scenario::queue([Rule::text("hello from the model")]),
        dir.path(),
        &[],
    )
    .await;
    let id = ui.session_id().await;
    ui.send(UiCommand::Submit("say hello".into()));
    let (seen, result) = ui.until_finished().await;
    assert!(!result.is_error(), "{result:?}");
    let text: String = seen
        .iter()
        .filter_map(|e| match e {
            UiEvent::Agent(e) => match &e.kind {
                EventKind::TextDelta(t) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(text, "hello from the model");
    let percent = ui
        .wait_for("the context share", |e| match e {
            UiEvent::Status(s) => s.context_percent,
            _ => None,
        })
        .await;
    assert!(percent <= 100);
    let cwd = ui.cwd.clone();
    assert_eq!(
        ui.quit().await,
        Ended::Quit {
            stop_background: true
        }
    );
    let store = SessionStore::new(FleetHome::from_env().expect("home"));
    let path = store.session_path(&cwd, &id).expect("path");
    let transcript = std::fs::read_to_string(&path).expect("the session was written");
    assert!(transcript.contains("say hello"), "{transcript}");
    assert!(transcript.contains("hello from the model"), "{transcript}");
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_once_runs_the_call() {
    let dir = project();
    let mut ui = open(one_call("touch made.txt"), dir.path(), &[]).await;
    ui.send(UiCommand::Submit("make the file".into()));
    let ask = ui.ask().await;
    assert_eq!(ask.tool, "Bash");
    assert_eq!(ask.agent.agent_id, "main");
    assert_eq!(ask.description, "Bash command `touch made.txt`");
    assert_eq!(ask.suggested_rule.as_deref(), Some("Bash(touch made.txt)"));
    ui.send(UiCommand::Answer {
        id: ask.id,
        answer: PermissionAnswer::AllowOnce,
    });
    let (_, result) = ui.until_finished().await;
    assert!(!result.is_error(), "{result:?}");
    assert!(dir.path().join("made.txt").exists());
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_keeps_the_call_from_running_and_tells_the_model() {
    let dir = project();
    let mut ui = open(one_call("touch made.txt"), dir.path(), &[]).await;
    ui.answer_through("make the file", PermissionAnswer::Deny)
        .await;
    assert!(!dir.path().join("made.txt").exists());
    let body = ui.last_request();
    assert!(body.contains("\"is_error\":true"), "{body}");
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn feedback_reaches_the_model() {
    let dir = project();
    let mut ui = open(one_call("touch made.txt"), dir.path(), &[]).await;
    ui.answer_through(
        "make the file",
        PermissionAnswer::DenyWithFeedback("name it other.txt instead".into()),
    )
    .await;
    assert!(!dir.path().join("made.txt").exists());
    let body = ui.last_request();
    assert!(body.contains("The user said:"), "{body}");
    assert!(body.contains("name it other.txt instead"), "{body}");
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_always_saves_the_rule_and_stops_asking() {
    let dir = project();
    let scenario = Scenario::queue([
        bash("touch made.txt"),
        Rule::text("done"),
        bash("touch made.txt"),
        Rule::text("done again"),
    ]);
    let mut ui = open(scenario, dir.path(), &[]).await;
    ui.answer_through("make the file", PermissionAnswer::AllowAlways)
        .await;
    // Saved in the user's store for this repository, not in a file of the repository.
    assert!(!dir.path().join(".claude/settings.local.json").exists());
    let root = crate::trust::repository_of(dir.path());
    let saved =
        fleet_store::trust::TrustStore::new(&fleet_store::FleetHome::at(home().join("fleet")))
            .project(&root)
            .expect("the store reads");
    assert_eq!(saved.allow, ["Bash(touch made.txt)"]);
    std::fs::remove_file(dir.path().join("made.txt")).expect("made the first time");
    ui.send(UiCommand::Submit("again".into()));
    let (seen, result) = ui.until_finished().await;
    assert!(!result.is_error(), "{result:?}");
    assert!(
        !seen.iter().any(|e| matches!(e, UiEvent::Permission(_))),
        "asked again"
    );
    assert!(dir.path().join("made.txt").exists());
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shell_command_is_shown_and_goes_ahead_of_the_next_prompt() {
    let dir = project();
    let mut ui = open(Scenario::queue([Rule::text("seen it")]), dir.path(), &[]).await;
    ui.send(UiCommand::Shell("echo hi".into()));
    let (command, output, code) = ui
        .wait_for("ShellDone", |e| match e {
            UiEvent::ShellDone {
                command,
                output,
                exit_code,
            } => Some((command.clone(), output.clone(), *exit_code)),
            _ => None,
        })
        .await;
    assert_eq!(
        (command.as_str(), output.as_str(), code),
        ("echo hi", "hi\n", Some(0))
    );
    ui.send(UiCommand::Submit("what did it print?".into()));
    ui.until_finished().await;
    let body = ui.last_request();
    assert!(body.contains("<bash-input>echo hi</bash-input>"), "{body}");
    assert!(body.contains("<bash-stdout>hi</bash-stdout>"), "{body}");
    assert!(body.contains("what did it print?"), "{body}");
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupt_stops_a_running_command() {
    let dir = project();
    let mut ui = open(one_call("sleep 30"), dir.path(), &["Bash(sleep 30)"]).await;
    ui.send(UiCommand::Submit("wait a while".into()));
    ui.wait_for("the Bash call", |e| match e {
        UiEvent::Agent(e) => match &e.kind {
            EventKind::AssistantBlock {
                block: ContentBlock::ToolUse { .. },
                ..
            } => Some(()),
            _ => None,
        },
        _ => None,
    })
    .await;
    ui.send(UiCommand::Interrupt);
    let (_, result) = ui.until_finished().await;
    assert!(result.is_error(), "the run was not interrupted: {result:?}");
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_lists_an_earlier_session_and_clear_starts_a_new_one() {
    let dir = project();
    let mut first = open(Scenario::queue([Rule::text("noted")]), dir.path(), &[]).await;
    let earlier = first.session_id().await;
    first.send(UiCommand::Submit("remember the first prompt".into()));
    first.until_finished().await;
    first.quit().await;

    let scenario = Scenario::queue([Rule::text("again")]);
    let mut ui = open(scenario, dir.path(), &[]).await;
    let current = ui.session_id().await;
    ui.send(UiCommand::Resume(None));
    let items = ui
        .wait_for("the session choices", |e| match e {
            UiEvent::Choices {
                kind: PickerKind::Sessions,
                items,
            } => Some(items.clone()),
            _ => None,
        })
        .await;
    let listed = items
        .iter()
        .find(|c| c.id == earlier)
        .expect("the earlier session is listed");
    assert_eq!(listed.label, "remember the first prompt");
    assert!(listed.detail.ends_with("· 1 turn"), "{}", listed.detail);

    ui.send(UiCommand::Resume(Some(earlier.clone())));
    let history = ui
        .wait_for("the history", |e| match e {
            UiEvent::History(messages) => Some(messages.clone()),
            _ => None,
        })
        .await;
    assert!(history.iter().any(|m| m.text() == "noted"), "{history:?}");
    assert_eq!(ui.session_id().await, earlier);

    ui.send(UiCommand::Clear);
    ui.wait_for("Cleared", |e| matches!(e, UiEvent::Cleared).then_some(()))
        .await;
    let fresh = ui.session_id().await;
    assert_ne!(fresh, earlier);
    assert_ne!(fresh, current);
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_file_is_written_once() {
    let dir = project();
    let mut ui = open(Scenario::new(), dir.path(), &[]).await;
    let form = NewAgent {
        name: "reviewer".into(),
        description: "Reviews changes".into(),
        tools: "Read, Grep".into(),
        prompt: "You review changes.".into(),
        scope: "project".into(),
    };
    ui.send(UiCommand::CreateAgent(form.clone()));
    let (level, text) = ui.notice().await;
    let path = dir.path().join(".claude/agents/reviewer.md");
    assert_eq!(level, NoticeLevel::Info, "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    let written = std::fs::read_to_string(&path).expect("written");
    ui.send(UiCommand::CreateAgent(form));
    let (level, text) = ui.notice().await;
    assert_eq!(level, NoticeLevel::Error);
    assert!(text.contains("already exists"), "{text}");
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), written);
    ui.send(UiCommand::ListAgents);
    let (_, listing) = ui.notice().await;
    // The session lists the types it started with; the new file is for sessions to come.
    assert!(listing.contains("\n  Explore (built-in) — "), "{listing}");
    ui.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_that_says_ultraplan_with_no_broker_goes_nowhere_and_says_how_to_set_one_up() {
    std::env::remove_var(crate::ultraplan_cmd::NATS_ENV);
    let dir = project();
    let mut ui = open(
        Scenario::queue([Rule::text("a model answer")]),
        dir.path(),
        &[],
    )
    .await;
    ui.send(UiCommand::Submit("ultraplan the move to OAuth2".into()));
    let taken = ui
        .wait_for("the prompt taken from the queue", |event| match event {
            UiEvent::PromptTaken(text) => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(taken, "ultraplan the move to OAuth2");
    let (level, text) = ui
        .wait_for("the Ultraplan notice", |event| match event {
            UiEvent::Notice { level, text } if text.contains("Ultraplan") => {
                Some((*level, text.clone()))
            }
            _ => None,
        })
        .await;
    assert_eq!(level, NoticeLevel::Warning);
    assert!(text.contains("FLEET_NATS_URL=nats://host:4222"), "{text}");
    assert!(text.contains("nothing was sent"), "{text}");
    // A prompt that only mentions the word goes to the model as usual; the first never did.
    ui.send(UiCommand::Submit("what is `ultraplan`".into()));
    ui.until_finished().await;
    assert_eq!(ui.server.request_count(), 1);
    assert!(ui.last_request().contains("what is `ultraplan`"));
    assert!(!ui.last_request().contains("OAuth2"));
    ui.quit().await;
}
