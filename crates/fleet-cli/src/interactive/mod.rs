//! `fleet` with a terminal: the interactive mode. The terminal UI (`fleet_tui`) shows the
//! session and sends commands; the [`driver`] owns the session — built the way `-p` builds
//! it — records and forwards its events, asks the person for permissions, and does what the
//! UI asks. The two talk only over channels (`fleet_tui::port`).
//!
//! - `session`: building (and rebuilding, for `/clear` and `/resume`) the session.
//! - `driver`: the loop between the session and the UI.
//! - `ending`: ending a session, and what is noted of each event.
//! - `advice`: what to do after an event that leaves the person stuck (a refused key).
//! - `approver`: permission questions to the UI and their answers.
//! - `shell`: `!command`.
//! - `rules`, `commands`, `resume`, `agent_file`: what the slash commands do.
//! - `ultraplan`: a prompt that says `ultraplan` launches remote planning instead.

mod advice;
mod agent_file;
mod approver;
mod commands;
pub(crate) mod driver;
mod ending;
mod resume;
mod rules;
pub(crate) mod session;
mod shell;
#[cfg(test)]
mod tests;
mod ultraplan;

use crate::args::PrintArgs;
use crate::headless::flags;
use crate::model_choice::choose;
use crate::settings;
use anyhow::bail;
use driver::{Driver, Ended};
use fleet_protocol::env;
use fleet_tui::port::UiCommand;
use fleet_tui::{UiExit, UiOptions};
use session::Spec;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;

/// Events waiting for the UI before the session waits for it.
const UI_BUFFER: usize = 256;

/// Opens the terminal UI on a session built from `args`, and ends the session cleanly when
/// the person leaves.
pub async fn run(args: PrintArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(
            "the interactive mode needs a terminal on stdin and stdout: for a script or a \
             pipe, run `fleet -p \"your prompt\"` (or pipe the prompt to `fleet -p`)"
        );
    }
    refuse_headless_flags(&args)?;
    let mut args = args;
    if let Some(identity) = args.member.identity() {
        args.append_system_prompt =
            Some(teammate_prompt(&identity, args.append_system_prompt.take()));
    }
    let cwd = crate::headless::resolve_cwd(&args)?;
    flags::check(&args)?;
    let mut settings_flags = flags::settings_flags(&args)?;
    let mut settings = settings::load_with(&cwd, &settings_flags)?;
    // One trust question per repository, before the UI takes the terminal; a pane teammate
    // goes by its lead's decision (the store, or --trust-project).
    if !settings.trust.trusted && args.member.agent_id.is_none() {
        settings_flags.trust = Some(crate::trust::cmd::ask(&settings.trust)?);
        settings = settings::load_with(&cwd, &settings_flags)?;
    }
    let mut choice = choose(args.provider, args.model.clone(), &settings)?;
    let (ui_tx, ui_rx) = mpsc::channel(UI_BUFFER);
    let notices = std::sync::Arc::new(UiNotices(ui_tx.downgrade()));
    crate::model_choice::learn_server_limits(&mut choice, notices).await;
    let persist = !env::FLEET_NO_SESSION_PERSISTENCE.is_on()? && !args.no_session_persistence;
    let member = args.member.identity();
    // A pane teammate's prompts come through its inbox.
    let initial_prompt = args
        .prompt
        .clone()
        .filter(|p| !p.trim().is_empty() && member.is_none());
    let spec = Spec {
        args,
        cwd: cwd.clone(),
        settings,
        client: choice.client,
        catalog: choice.catalog,
        model: choice.model,
        persist,
        member,
    };
    let (command_tx, command_rx) = mpsc::unbounded_channel();
    let driver = Driver::start(spec, ui_tx).await?;
    let member = driver.member();
    let options = UiOptions {
        cwd,
        home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from),
        theme: fleet_tui::theme::Theme::from_env(),
        initial_prompt,
        status: driver.status(),
        history_file: settings::fleet_home().map(|home| home.join("history.jsonl")),
    };
    let resumable = driver.resumable();
    let show_resume = persist && member.is_none();
    let background = driver.background_count();
    let servers = driver.servers();
    let driving = tokio::spawn(driver.run(command_rx));
    let quit = command_tx.clone();
    let exit = fleet_tui::run(options, ui_rx, command_tx).await;
    // The UI is gone: from here on, stderr is the person's again.
    let stop_background = match &exit {
        Ok(UiExit::Quit { stop_background }) => *stop_background,
        Ok(UiExit::SessionEnded) => false,
        Ok(UiExit::Signal(_)) | Err(_) => true,
    };
    let waiting = background.load(Ordering::Relaxed);
    if !stop_background && waiting > 0 && !driving.is_finished() {
        eprintln!(
            "fleet: waiting for {waiting} background task{} to finish (Ctrl+C stops them)",
            if waiting == 1 { "" } else { "s" }
        );
    }
    let _ = quit.send(UiCommand::Quit { stop_background });
    let interrupt = quit.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = interrupt.send(UiCommand::Quit {
                stop_background: true,
            });
        }
    });
    drop(quit);
    let ended = driving.await;
    ctrl_c.abort();
    // No MCP server outlives its session.
    drop(servers);
    fleet_runtime::mcp::kill_all_server_groups();
    let exit = exit?;
    if show_resume {
        let id = resumable.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(id) = id {
            // Not `println!`: a terminal closed under us (its pane killed) makes the write
            // fail, and a hint nobody can read is no reason to panic.
            let _ = writeln!(std::io::stdout(), "{}", resume_hint(&id));
        }
    }
    if let UiExit::Signal(number) = exit {
        // As a shell reports a program a signal ended; the terminal is already restored.
        return Ok(ExitCode::from(u8::try_from(128 + number).unwrap_or(1)));
    }
    match ended {
        Ok(Ended::SessionEnded { crash: Some(crash) }) => {
            eprintln!("fleet: the session stopped unexpectedly: {crash}");
            Ok(ExitCode::FAILURE)
        }
        Ok(Ended::SessionEnded { crash: None }) => {
            eprintln!("fleet: the session ended: its transcript could not be written");
            Ok(ExitCode::FAILURE)
        }
        Ok(Ended::Quit { .. }) => {
            if let Some(member) = member.filter(|m| m.lead_gone()) {
                eprintln!("fleet: {} stops: its team lead is gone", member.name());
                member.close_own_pane();
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => bail!("the session driver failed: {err}"),
    }
}

/// The last line fleet leaves in the terminal, under the conversation: how to come back to
/// it (`-c` takes the folder's latest session, which this is unless another ended since).
fn resume_hint(id: &str) -> String {
    format!("\nResume with: fleet -r {id}  (or fleet -c)")
}

/// Flags that shape `-p`'s output or an SDK's conversation mean nothing with a UI.
fn refuse_headless_flags(args: &PrintArgs) -> anyhow::Result<()> {
    let refused = [
        (args.output_format != "text", "--output-format"),
        (args.input_format != "text", "--input-format"),
        (args.include_partial_messages, "--include-partial-messages"),
        (args.include_hook_events, "--include-hook-events"),
        (args.json_schema.is_some(), "--json-schema"),
        (
            args.permission_prompt_tool.is_some(),
            "--permission-prompt-tool",
        ),
        (args.await_initialize, "--await-initialize"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        bail!(
            "{flag} only applies with -p (a headless run); the interactive mode shows the \
             session in the terminal. Add -p \"your prompt\" to use it."
        );
    }
    Ok(())
}

/// What a pane teammate's system prompt ends with: the team's rules, and who it is.
fn teammate_prompt(
    identity: &fleet_runtime::teams::member::Identity,
    appended: Option<String>,
) -> String {
    let mut text = appended.map(|t| format!("{t}\n\n")).unwrap_or_default();
    text.push_str(fleet_runtime::teams::mate::TEAMMATE_NOTES);
    text.push_str(&format!(
        "\n\nYou are {name:?} ({agent_id}), a member of team {team:?}, running in a terminal \
         pane of your own: the user can watch it and may type to you there directly. Your \
         lead is `team-lead`.",
        name = identity.name,
        agent_id = identity.agent_id,
        team = identity.team,
    ));
    text
}

/// Lines about the model server (a template that cannot use tools) as warnings in the UI;
/// queued until the UI reads them, dropped if it is gone or far behind. Weak, so that a
/// client holding it for the session never keeps the UI's channel open.
struct UiNotices(mpsc::WeakSender<fleet_tui::port::UiEvent>);

impl fleet_session::Report for UiNotices {
    fn line(&self, ours: &str, outside: &str) {
        let Some(ui) = self.0.upgrade() else {
            return;
        };
        let _ = ui.try_send(fleet_tui::port::UiEvent::Notice {
            level: fleet_tui::port::NoticeLevel::Warning,
            text: format!("{ours}{}", crate::visible::visible(outside)),
        });
    }
}
