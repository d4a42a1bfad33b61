//! `fleet ultraplan teleport <id>`: the plan comes back and the remote session is archived;
//! then the plan runs here as a local `fleet -p` session (this binary, stdio inherited), or is
//! only printed with `--print-plan-only`.

use super::follow::Follower;
use crate::visible::visible;
use anyhow::Context;
use fleet_remote::ultraplan::prompt::teleported_prompt;
use fleet_remote::ultraplan::Until;
use fleet_remote::{Control, TaskState};
use std::path::Path;
use std::process::ExitCode;

pub async fn run(
    follow: &Follower<'_>,
    id: &str,
    cwd: &Path,
    print_plan_only: bool,
    local_args: &[String],
) -> anyhow::Result<ExitCode> {
    let before = follow.plan_ready(id).await?;
    follow.remote.send(id, Control::Teleport).await?;
    let after = match follow.follow(id, Until::End).await? {
        Ok(record) => record,
        Err(code) => return Ok(code),
    };
    if after.state != TaskState::Archived {
        eprintln!(
            "ultraplan {id}: {} instead of handing the plan back",
            after.state.as_str()
        );
        return Ok(ExitCode::FAILURE);
    }
    // The worker hands the plan back as the result; the record's plan is the fallback.
    let plan = [
        after.result.as_deref(),
        after.plan.as_deref(),
        before.plan.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find(|plan| !plan.trim().is_empty())
    .map(str::to_string);
    let Some(plan) = plan else {
        eprintln!("ultraplan {id}: archived, but no plan came back");
        return Ok(ExitCode::FAILURE);
    };
    if print_plan_only {
        println!("{}", visible(plan.trim()));
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("ultraplan {id}: the plan is here and the remote session archived; running it");
    run_locally(&plan, cwd, local_args).await
}

/// Runs `plan` as a `fleet -p` session in `cwd`, sharing this terminal.
async fn run_locally(plan: &str, cwd: &Path, local_args: &[String]) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("finding the fleet binary")?;
    let status = tokio::process::Command::new(&exe)
        .arg("-p")
        .arg(teleported_prompt(plan))
        .args(local_args)
        .current_dir(cwd)
        .status()
        .await
        .with_context(|| format!("starting {}", exe.display()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
