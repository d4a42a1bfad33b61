//! Following a session from the command line: each verb sends its request, then follows the
//! record with the detached poll and prints what a person needs (phase lines, the plan, the
//! branch). A give-up, a timeout or Ctrl-C archives the session and says so.

use crate::visible::{visible, visible_line};
use anyhow::bail;
use fleet_remote::ultraplan::{
    poll, ArchiveError, LaunchRequest, Phase, PollConfig, PollOutcome, Until,
};
use fleet_remote::{Control, Remote, TaskRecord, TaskState};
use std::path::Path;
use std::process::ExitCode;

/// The exit code after Ctrl-C (128 + SIGINT), as shells report it.
const INTERRUPTED: u8 = 130;

pub struct Follower<'a> {
    pub remote: &'a Remote,
    pub config: PollConfig,
}

impl Follower<'_> {
    pub async fn launch(&self, request: &LaunchRequest) -> anyhow::Result<ExitCode> {
        let submitted = fleet_remote::ultraplan::launch(self.remote, request).await?;
        let id = submitted.task_id;
        println!(
            "ultraplan {id}: launched (events: {})",
            visible_line(&submitted.session_url)
        );
        self.to_plan(&id, None).await
    }

    pub async fn approve(&self, id: &str, cwd: &Path) -> anyhow::Result<ExitCode> {
        self.plan_ready(id).await?;
        self.remote.send(id, Control::Approve).await?;
        println!("ultraplan {id}: approved; the worker carries the plan out");
        let record = match self.follow(id, Until::End).await? {
            Ok(record) => record,
            Err(code) => return Ok(code),
        };
        if record.state != TaskState::Completed {
            return Ok(ended_badly(id, &record));
        }
        println!("ultraplan {id}: completed");
        match self.remote.fetch_branch(id, cwd).await? {
            Some(branch) => println!("branch: {}", visible_line(&branch)),
            None => println!("branch: none (nothing changed)"),
        }
        if let Some(result) = record.result.as_deref().filter(|r| !r.trim().is_empty()) {
            println!("\n{}", visible(result.trim_end()));
        }
        Ok(ExitCode::SUCCESS)
    }

    pub async fn reject(&self, id: &str, feedback: String) -> anyhow::Result<ExitCode> {
        if feedback.trim().is_empty() {
            bail!("--feedback is empty: say what the revised plan should change");
        }
        let current = self.plan_ready(id).await?;
        self.remote.send(id, Control::Reject { feedback }).await?;
        println!("ultraplan {id}: rejected; the session revises the plan");
        self.to_plan(id, Some(current)).await
    }

    pub async fn reply(&self, id: &str, text: String) -> anyhow::Result<ExitCode> {
        let current = self.existing(id).await?;
        if current.state != TaskState::Idle {
            bail!(
                "ultraplan {id} is {}, not waiting for a reply",
                current.state.as_str()
            );
        }
        self.remote.send(id, Control::Reply { text }).await?;
        println!("ultraplan {id}: replied");
        self.to_plan(id, Some(current)).await
    }

    pub async fn stop(&self, id: &str) -> anyhow::Result<ExitCode> {
        let current = self.existing(id).await?;
        if current.state.is_terminal() {
            println!("ultraplan {id}: already {}", current.state.as_str());
            return Ok(ExitCode::SUCCESS);
        }
        self.remote.send(id, Control::Stop).await?;
        println!("ultraplan {id}: stopped; the session is archived");
        Ok(ExitCode::SUCCESS)
    }

    /// The record, or an error naming the id.
    pub async fn existing(&self, id: &str) -> anyhow::Result<TaskRecord> {
        match self.remote.record(id).await? {
            Some(record) => Ok(record),
            None => Err(fleet_remote::RemoteError::UnknownTask(id.to_string()).into()),
        }
    }

    /// The record of a session whose plan waits for a decision.
    pub async fn plan_ready(&self, id: &str) -> anyhow::Result<TaskRecord> {
        let record = self.existing(id).await?;
        if record.state != TaskState::PlanReady {
            bail!(
                "ultraplan {id} is {}, not waiting for a decision on a plan",
                record.state.as_str()
            );
        }
        Ok(record)
    }

    /// Follows to the next plan and prints it with what to do next.
    async fn to_plan(&self, id: &str, not: Option<TaskRecord>) -> anyhow::Result<ExitCode> {
        let until = Until::Plan {
            not: not.map(Box::new),
        };
        let record = match self.follow(id, until).await? {
            Ok(record) => record,
            Err(code) => return Ok(code),
        };
        if record.state != TaskState::PlanReady {
            return Ok(ended_badly(id, &record));
        }
        println!("ultraplan {id}: plan_ready\n");
        println!("{}\n", visible(record.plan.as_deref().unwrap_or("").trim()));
        println!("{}", next_steps(id));
        Ok(ExitCode::SUCCESS)
    }

    /// Polls until `until`, printing phase changes; the record it stopped at, or the exit
    /// code when it gave up, timed out or was interrupted (the session archived in each).
    pub async fn follow(
        &self,
        id: &str,
        until: Until,
    ) -> anyhow::Result<Result<TaskRecord, ExitCode>> {
        // `None`: interrupted.
        let followed = tokio::select! {
            outcome = poll(self.remote, id, &self.config, until, |phase| print_phase(id, phase)) => {
                Some(outcome)
            }
            _ = tokio::signal::ctrl_c() => None,
        };
        Ok(match followed {
            Some(PollOutcome::PlanReady(record) | PollOutcome::Ended(record)) => Ok(record),
            Some(PollOutcome::TimedOut { archived }) => {
                let minutes = self.config.timeout.as_secs_f64() / 60.0;
                println!("ultraplan {id}: timed out after {minutes:.1} min");
                say_archived(id, &archived);
                Err(ExitCode::FAILURE)
            }
            Some(PollOutcome::GaveUp {
                failures,
                last_error,
                archived,
            }) => {
                println!(
                    "ultraplan {id}: gave up after {failures} failed looks in a row ({})",
                    visible_line(&last_error)
                );
                say_archived(id, &archived);
                Err(ExitCode::FAILURE)
            }
            None => {
                let archived = self
                    .remote
                    .send(id, Control::Stop)
                    .await
                    .map_err(|e| ArchiveError::Refused(std::sync::Arc::new(e)));
                println!("ultraplan {id}: interrupted");
                say_archived(id, &archived);
                Err(ExitCode::from(INTERRUPTED))
            }
        })
    }
}

/// A phase line; `plan_ready` is said with the plan itself (a poll's first look may still see
/// the plan a decision was just sent about).
fn print_phase(id: &str, phase: Phase) {
    match phase {
        Phase::PlanReady => {}
        Phase::NeedsInput => {
            println!("ultraplan {id}: needs_input (answer with: fleet ultraplan reply {id} \"…\")")
        }
        Phase::Running => println!("ultraplan {id}: running"),
    }
}

fn say_archived(id: &str, archived: &Result<(), ArchiveError>) {
    match archived {
        Ok(()) => println!("ultraplan {id}: archived the remote session"),
        Err(err) => println!(
            "ultraplan {id}: could not archive the remote session ({}); stop it later with \
             `fleet ultraplan stop {id}`",
            visible_line(&err.to_string())
        ),
    }
}

/// The session ended without what was asked: says how, and fails.
fn ended_badly(id: &str, record: &TaskRecord) -> ExitCode {
    println!("ultraplan {id}: {}", record.state.as_str());
    if let Some(result) = record.result.as_deref().filter(|r| !r.trim().is_empty()) {
        println!("{}", visible(result.trim_end()));
    }
    ExitCode::FAILURE
}

/// What a person can do with a ready plan, one command a line with its meaning aligned.
pub fn next_steps(id: &str) -> String {
    let steps = [
        (
            format!("fleet ultraplan approve {id}"),
            "carry it out on the worker; its branch comes here",
        ),
        (
            format!("fleet ultraplan reject {id} --feedback \"…\""),
            "have it revised",
        ),
        (
            format!("fleet ultraplan teleport {id}"),
            "run it here instead",
        ),
        (format!("fleet ultraplan stop {id}"), "drop it"),
    ];
    let column = steps
        .iter()
        .map(|(c, _)| c.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::from("What next:");
    for (command, meaning) in &steps {
        let pad = column - command.chars().count();
        text.push_str(&format!("\n  {command}{}  {meaning}", " ".repeat(pad)));
    }
    text
}
