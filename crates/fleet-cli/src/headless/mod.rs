//! `fleet -p`: one headless session. Sets up the agent from flags and settings files, feeds
//! it the prompt (or stdin's stream-json messages), and hands every event to the printer and
//! the transcript writer. The exit code is non-zero when the last result is an error.

mod agents;
mod approve;
mod hooks;
mod orchestration;
mod session_file;
pub(crate) mod setup;
mod structured;

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
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
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
    let servers = start_mcp(&args, &cwd, format == OutputFormat::Text).await;
    let mcp = setup::McpTools {
        tools: {
            let mut tools = servers.servers.tools().await;
            tools.extend(servers.servers.resource_tools().await);
            tools
        },
        instructions: servers.servers.instructions().await,
        statuses: servers
            .servers
            .statuses()
            .into_iter()
            .map(|(name, status)| fleet_protocol::McpServerStatus { name, status })
            .collect(),
        session: Some(servers.clone()),
    };
    let built = setup::agent(
        &args,
        &cwd,
        &settings,
        choice,
        session.id(),
        approver,
        persist,
        &mcp,
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

    // A resumed session takes up its team again: members, their conversations, unread mail.
    if let Some(team) = built
        .spawner
        .restore_team(session.mail_read())
        .await
        .map_err(anyhow::Error::msg)
        .context("bringing the session's team back")?
    {
        tracing::info!("resumed team {team}");
    }
    let mut socket = None;
    if built.spawner.teams().is_some_and(|t| t.settings.listen) {
        match built.spawner.listen_uds() {
            Ok(path) => socket = Some(path),
            Err(err) => tracing::warn!("not listening for other sessions' messages: {err}"),
        }
    }
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
        include_hook_events: args.include_hook_events,
        session_state: env::CLAUDE_CODE_SDK_READS_SESSION_STATE.is_on()?,
    };
    let mut printer: Box<dyn Printer + Send> = print::printer_with(format, &options, out);
    let mut failed = None;
    let mut last_error = false;
    let mut stop = Stopping::new(handle.cancel.clone())?;
    loop {
        let event = tokio::select! {
            event = handle.recv() => event,
            signal = stop.next() => {
                signal?;
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
        if let (EventKind::CompactBoundary(boundary), true) = (&event.kind, main) {
            if let Err(err) = session.record_boundary(boundary) {
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
    tokio::select! {
        _ = handle.finish() => {}
        signal = stop.next() => signal?,
    }
    // Nobody answers on it any more; a later sender gets "nobody listens" at once.
    if let Some(path) = socket {
        let _ = std::fs::remove_file(path);
    }
    printer.finish().context("writing the output")?;
    // A stopped run does not wait for stdin to end: whoever feeds it may never close it.
    match feeder {
        Some(feeder) if feeder.is_finished() || !stop.stopping() => match feeder.join() {
            Ok(Ok(())) => {}
            Ok(Err(err)) => failed = failed.or(Some(err)),
            Err(_) => bail!("the stdin reader stopped unexpectedly"),
        },
        _ => {}
    }
    session.finish()?;
    // No MCP server outlives its session, whatever still holds a connection.
    drop(servers);
    fleet_runtime::mcp::kill_all_server_groups();
    if let Some(err) = failed {
        return Err(err);
    }
    Ok(if last_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Starts the session's MCP servers (`.mcp.json`, settings, `--mcp-config`), all at once. A
/// server that fails is reported — one line on stderr in text mode, `failed` in the `init`
/// line — and the session goes on without it.
async fn start_mcp(
    args: &PrintArgs,
    cwd: &std::path::Path,
    text: bool,
) -> std::sync::Arc<fleet_runtime::subagent::McpSession> {
    let config = fleet_runtime::mcp::config::McpConfig::load(
        cwd,
        args.mcp_config.clone(),
        args.strict_mcp_config,
    );
    let servers =
        fleet_runtime::mcp::McpServers::start(&config, fleet_runtime::mcp::McpTimeouts::from_env())
            .await;
    // Said in every output format (on stderr): a server the repository asks for but the user
    // never approved is a decision the user should see.
    for server in &config.unapproved {
        eprintln!(
            "fleet: MCP server {:?} not started: {}",
            server.name,
            config
                .approval
                .refusal(&server.name, &server.source.to_string())
        );
    }
    if text {
        for entry in servers.entries.iter().filter(|e| e.status == "failed") {
            eprintln!(
                "fleet: MCP server {:?} failed: {}",
                entry.name,
                crate::visible::visible(entry.error.as_deref().unwrap_or("unknown"))
            );
        }
    }
    std::sync::Arc::new(fleet_runtime::subagent::McpSession { config, servers })
}

/// How long a run stopped by SIGTERM gets to end with its result and a whole transcript
/// (commands it runs get 2 s between SIGTERM and SIGKILL) before fleet exits regardless.
const SIGTERM_GRACE: Duration = Duration::from_secs(5);

/// The signals that stop a run. The first Ctrl-C cancels the run, which then ends with its
/// result and a consistent transcript; a second one stops waiting at once. SIGTERM cancels
/// too, and fleet exits after [`SIGTERM_GRACE`] even if something the run waits on never
/// ends (a tool stuck in a blocking call); a second signal of either kind exits at once.
struct Stopping {
    cancel: CancellationToken,
    sigint: Signal,
    sigterm: Signal,
    signals: u32,
    deadline: Option<tokio::time::Instant>,
}

impl Stopping {
    /// Installs the handlers: once, before the run, so a signal between two events is not
    /// missed.
    fn new(cancel: CancellationToken) -> anyhow::Result<Self> {
        Ok(Self {
            cancel,
            sigint: signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?,
            sigterm: signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
            signals: 0,
            deadline: None,
        })
    }

    /// Whether a signal has asked the run to stop.
    fn stopping(&self) -> bool {
        self.signals > 0
    }

    /// Waits for the next signal and acts on it: `Ok` when the run was asked to stop and may
    /// go on ending, `Err` when fleet must exit now.
    async fn next(&mut self) -> anyhow::Result<()> {
        let deadline = self.deadline;
        let expired = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let terminated = tokio::select! {
            _ = self.sigint.recv() => false,
            _ = self.sigterm.recv() => true,
            () = expired => bail!(
                "stopped by SIGTERM: the run did not end within {}s, so fleet exits without \
                 waiting for it",
                SIGTERM_GRACE.as_secs()
            ),
        };
        self.signals += 1;
        if self.signals > 1 {
            bail!("interrupted twice: stopping without waiting for the run to end");
        }
        if terminated {
            self.deadline = Some(tokio::time::Instant::now() + SIGTERM_GRACE);
        }
        self.cancel.cancel();
        Ok(())
    }
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
                eprintln!("fleet: {}", crate::visible::visible(&err.to_string()));
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
