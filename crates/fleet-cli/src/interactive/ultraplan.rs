//! A prompt with the word `ultraplan` in the terminal UI: instead of going to the model it
//! launches a remote planning session, and the footer pill follows it (`◇ ultraplan`,
//! `◇ ultraplan needs your input`, `◆ ultraplan ready`) while the person keeps working. The
//! plan arrives as a notice with what to do next (`!fleet ultraplan approve <id>` …).
//! With no broker configured, nothing is sent anywhere and the notice says how to set one up.

use crate::ultraplan_cmd::{follow::next_steps, nats_url, NATS_ENV};
use crate::visible::{visible, visible_line};
use fleet_remote::ultraplan::{launch, poll, LaunchRequest, Phase, PollConfig, PollOutcome, Until};
use fleet_remote::{Remote, TaskRecord};
use fleet_tui::panes::ultraplan::UltraplanPill;
use fleet_tui::port::{NoticeLevel, UiEvent};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a ready plan is watched for a decision made elsewhere (a reject's revision, the
/// end) before the session is archived as abandoned.
const DECISION_WAIT: Duration = Duration::from_secs(24 * 3600);

/// Takes `prompt` away from the model and launches Ultraplan for it in the background.
pub async fn start(ui: mpsc::Sender<UiEvent>, cwd: PathBuf, prompt: String) {
    let _ = ui.send(UiEvent::PromptTaken(prompt.clone())).await;
    let Some(url) = nats_url(None, &cwd) else {
        let text = format!(
            "This prompt asks for Ultraplan (it says `ultraplan`), which plans on a remote \
             worker, and no NATS server is set up, so nothing was sent. Set {NATS_ENV}=\
             nats://host:4222 (or the `remote.natsUrl` setting) before starting fleet, start `fleet worker --nats \
             nats://host:4222` on a worker machine, then send the prompt again. (To talk \
             about the feature instead, quote the word or put it in backticks.)"
        );
        let _ = ui
            .send(UiEvent::Notice {
                level: NoticeLevel::Warning,
                text,
            })
            .await;
        return;
    };
    tokio::spawn(run(ui, url, cwd, prompt));
}

async fn run(ui: mpsc::Sender<UiEvent>, url: String, cwd: PathBuf, prompt: String) {
    let say = |level: NoticeLevel, text: String| {
        let ui = ui.clone();
        async move {
            let _ = ui.send(UiEvent::Notice { level, text }).await;
        }
    };
    say(
        NoticeLevel::Info,
        format!(
            "ultraplan: launching a remote planning session for: {}",
            visible_line(prompt.trim())
        ),
    )
    .await;
    let config = match PollConfig::from_env() {
        Ok(config) => config,
        Err(err) => return say(NoticeLevel::Error, format!("ultraplan: {err}")).await,
    };
    let remote = match Remote::connect(&url).await {
        Ok(remote) => remote,
        Err(err) => return say(NoticeLevel::Error, format!("ultraplan: {err}")).await,
    };
    let request = LaunchRequest {
        prompt,
        cwd,
        model: None,
        labels: Vec::new(),
    };
    let id = match launch(&remote, &request).await {
        Ok(submitted) => submitted.task_id,
        Err(err) => {
            return say(
                NoticeLevel::Error,
                format!("ultraplan: launch failed: {err}"),
            )
            .await
        }
    };
    let _ = ui
        .send(UiEvent::Ultraplan(Some(UltraplanPill::Running)))
        .await;
    say(
        NoticeLevel::Info,
        format!("ultraplan {id}: launched; this terminal stays free"),
    )
    .await;
    follow(&ui, &remote, &id, config).await;
}

/// Follows the session from plan to plan until it ends, keeping the pill up to date.
async fn follow(ui: &mpsc::Sender<UiEvent>, remote: &Remote, id: &str, config: PollConfig) {
    let (phase_tx, mut phases) = mpsc::unbounded_channel();
    let pills = {
        let ui = ui.clone();
        tokio::spawn(async move {
            while let Some(phase) = phases.recv().await {
                let _ = ui.send(UiEvent::Ultraplan(Some(pill(phase)))).await;
            }
        })
    };
    let mut last: Option<TaskRecord> = None;
    let mut config = config;
    let (level, text) = loop {
        let until = Until::Plan {
            not: last.clone().map(Box::new),
        };
        let tx = phase_tx.clone();
        let outcome = poll(remote, id, &config, until, move |phase| {
            let _ = tx.send(phase);
        })
        .await;
        match outcome {
            PollOutcome::PlanReady(record) => {
                let plan = record.plan.as_deref().unwrap_or("").trim().to_string();
                let text = format!(
                    "ultraplan {id}: the plan is ready\n\n{}\n\n{}\n(in this terminal: prefix \
                     the command with `!`)",
                    visible(&plan),
                    next_steps(id)
                );
                let _ = ui
                    .send(UiEvent::Notice {
                        level: NoticeLevel::Info,
                        text,
                    })
                    .await;
                last = Some(record);
                config.timeout = DECISION_WAIT;
            }
            PollOutcome::Ended(record) => break ended(id, &record),
            PollOutcome::TimedOut { archived } => {
                break (
                    NoticeLevel::Warning,
                    format!("ultraplan {id}: timed out; {}", archive_words(&archived)),
                )
            }
            PollOutcome::GaveUp {
                failures,
                last_error,
                archived,
            } => {
                break (
                    NoticeLevel::Error,
                    format!(
                        "ultraplan {id}: gave up after {failures} failed looks ({}); {}",
                        visible_line(&last_error),
                        archive_words(&archived)
                    ),
                )
            }
        }
    };
    drop(phase_tx);
    let _ = pills.await;
    let _ = ui.send(UiEvent::Ultraplan(None)).await;
    let _ = ui.send(UiEvent::Notice { level, text }).await;
}

fn pill(phase: Phase) -> UltraplanPill {
    match phase {
        Phase::Running => UltraplanPill::Running,
        Phase::NeedsInput => UltraplanPill::NeedsInput,
        Phase::PlanReady => UltraplanPill::Ready,
    }
}

fn ended(id: &str, record: &TaskRecord) -> (NoticeLevel, String) {
    let level = match record.state {
        fleet_remote::TaskState::Completed | fleet_remote::TaskState::Archived => NoticeLevel::Info,
        _ => NoticeLevel::Warning,
    };
    let mut text = format!("ultraplan {id}: {}", record.state.as_str());
    if let Some(branch) = &record.branch {
        text.push_str(&format!(" (branch {})", visible_line(&branch.branch)));
    }
    (level, text)
}

fn archive_words(archived: &Result<(), fleet_remote::ultraplan::poll::ArchiveError>) -> String {
    match archived {
        Ok(()) => "the remote session was archived".to_string(),
        Err(err) => format!(
            "the remote session could not be archived ({}); stop it with `fleet ultraplan stop`",
            visible_line(&err.to_string())
        ),
    }
}
