//! `fleet -p`: one headless session. Sets up the agent from flags and settings files, feeds
//! it the prompt (or stdin's stream-json messages), and hands every event to the printer and
//! the transcript writer. The exit code is non-zero when the last result is an error.

mod agents;
mod approve;
mod orchestration;
mod session_file;
mod setup;

use crate::args::PrintArgs;
use crate::model_choice::{choose, Choice};
use crate::print::{self, OutputFormat, PrintOptions, Printer};
use crate::settings::{self, Settings};
use anyhow::{bail, Context};
use fleet_protocol::{env, EventKind, Message};
use fleet_runtime::Session;
use session_file::SessionFile;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Everything one headless run needs, so `fleet demo` can run the very same path with its own
/// model client and folder.
pub struct Run {
    pub args: PrintArgs,
    pub cwd: PathBuf,
    pub settings: Settings,
    pub choice: Choice,
    pub out: Box<dyn Write + Send>,
    /// Whether the session is written to `$FLEET_HOME/projects/…` (off for the demo).
    pub persist: bool,
}

pub async fn run(args: PrintArgs) -> anyhow::Result<ExitCode> {
    if !args.print {
        bail!(
            "the interactive mode is not built yet: run `fleet -p \"your prompt\"` (or pipe the \
             prompt to `fleet -p`), or try `fleet demo`"
        );
    }
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("reading the working directory")?,
    };
    let cwd = cwd
        .canonicalize()
        .with_context(|| format!("--cwd {}: no such folder", cwd.display()))?;
    if !cwd.is_dir() {
        bail!("--cwd {}: not a folder", cwd.display());
    }
    let settings = settings::load(&cwd)?;
    let choice = choose(args.provider, args.model.clone(), &settings)?;
    let out = Box::new(std::io::stdout());
    execute(Run {
        args,
        cwd,
        settings,
        choice,
        out,
        persist: !env::FLEET_NO_SESSION_PERSISTENCE.is_on()?,
    })
    .await
}

pub async fn execute(run: Run) -> anyhow::Result<ExitCode> {
    let Run {
        args,
        cwd,
        settings,
        choice,
        out,
        persist,
    } = run;
    let format: OutputFormat = args.output_format.parse().map_err(anyhow::Error::msg)?;
    let stream_input = args.input_format == "stream-json";
    // Read the prompt before anything is written, so a missing prompt leaves no empty session.
    let first_prompt = if stream_input {
        None
    } else {
        Some(read_prompt(&args)?)
    };

    let mut session = SessionFile::open(&args, &cwd, persist)?;
    // A person at the terminal answers "ask" decisions; otherwise they are refusals.
    let stdin_in_use = stream_input || args.prompt.is_none();
    let approver = approve::TerminalApprover::if_attended(stdin_in_use)
        .map(|a| a as std::sync::Arc<dyn fleet_runtime::Approver>);
    let built = setup::agent(
        &args,
        &cwd,
        &settings,
        choice,
        session.id(),
        approver,
        persist,
    )?;
    let _scratchpad = built.scratchpad;
    let agent = built.agent.with_history(session.history());
    let (prompt_tx, prompt_rx) = mpsc::channel::<Message>(16);
    let feeder = match first_prompt {
        Some(prompt) => {
            prompt_tx
                .send(Message::user_text(prompt))
                .await
                .context("starting the session")?;
            drop(prompt_tx);
            None
        }
        None => Some(std::thread::spawn(move || feed_stdin(prompt_tx))),
    };

    let mut handle = Session::spawn_with(
        agent,
        prompt_rx,
        built.sink,
        built.events,
        Some(built.spawner),
    );
    let options = PrintOptions {
        verbose: args.verbose,
        include_partial_messages: args.include_partial_messages,
        session_id: Some(session.id().to_string()),
        results_as_they_come: stream_input,
    };
    let mut printer: Box<dyn Printer + Send> = print::printer_with(format, &options, out);
    let mut failed = None;
    let mut last_error = false;
    let mut interrupts = 0u32;
    // Installed once, before the loop, so a signal arriving between two events is not missed.
    let mut sigint = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut sigterm = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    loop {
        let event = tokio::select! {
            event = handle.recv() => event,
            _ = sigint.recv() => {
                interrupted(&mut interrupts, &handle.cancel)?;
                continue;
            }
            _ = sigterm.recv() => {
                interrupted(&mut interrupts, &handle.cancel)?;
                continue;
            }
        };
        let Some(event) = event else { break };
        let main = event.agent.parent_tool_use_id.is_none();
        if let (EventKind::MessageCommitted(committed), true) = (&event.kind, main) {
            if let Err(err) = session.record(committed) {
                // Nothing more may happen that the transcript cannot hold.
                handle.cancel.cancel();
                failed.get_or_insert(err);
            }
        }
        if let (EventKind::Finished(result), true) = (&event.kind, main) {
            last_error = result.is_error();
        }
        if let Err(err) = printer.event(&event) {
            handle.cancel.cancel();
            failed.get_or_insert(anyhow::Error::new(err).context("writing the output"));
        }
    }
    let _ = handle.finish().await;
    printer.finish().context("writing the output")?;
    if let Some(feeder) = feeder {
        match feeder.join() {
            Ok(Ok(())) => {}
            Ok(Err(err)) => failed = failed.or(Some(err)),
            Err(_) => bail!("the stdin reader stopped unexpectedly"),
        }
    }
    session.finish()?;
    if let Some(err) = failed {
        return Err(err);
    }
    Ok(if last_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The first Ctrl-C (or SIGTERM) cancels the run, which then ends with its result and a
/// consistent transcript; a second one gives up waiting.
fn interrupted(count: &mut u32, cancel: &CancellationToken) -> anyhow::Result<()> {
    *count += 1;
    if *count > 1 {
        bail!("interrupted twice: stopping without waiting for the run to end");
    }
    cancel.cancel();
    Ok(())
}

/// The prompt argument, else all of stdin.
fn read_prompt(args: &PrintArgs) -> anyhow::Result<String> {
    if let Some(prompt) = &args.prompt {
        if prompt.trim().is_empty() {
            bail!("the prompt is empty");
        }
        return Ok(prompt.clone());
    }
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("no prompt: pass it as an argument (`fleet -p \"…\"`) or on stdin");
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .context("reading the prompt from stdin")?;
    if text.trim().is_empty() {
        bail!("no prompt: stdin was empty");
    }
    Ok(text)
}

/// Sends each stream-json user message on stdin to the session, in order. A bad line is
/// reported and skipped so the messages after it still run; the run then ends with an error
/// naming the first bad line.
fn feed_stdin(tx: mpsc::Sender<Message>) -> anyhow::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut bad = Vec::new();
    for message in crate::input::InputReader::new(stdin) {
        match message {
            Ok(message) => {
                if tx.blocking_send(message).is_err() {
                    break;
                }
            }
            Err(err) => {
                eprintln!("fleet: {err}");
                bad.push(err.line());
            }
        }
    }
    match bad.first() {
        None => Ok(()),
        Some(first) => bail!(
            "{} stdin line(s) were not valid stream-json user messages (first: line {first})",
            bad.len()
        ),
    }
}
