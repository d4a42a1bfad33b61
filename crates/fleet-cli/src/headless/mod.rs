//! `fleet -p`: one headless session. Sets up the agent from flags and settings files, feeds
//! it the prompt (or stdin's stream-json messages), and hands every event to the printer and
//! the transcript writer. The exit code is non-zero when the last result is an error.

pub(crate) mod agents;
mod approve;
pub(crate) mod flags;
mod hooks;
pub(crate) mod launch;
pub(crate) mod orchestration;
pub(crate) mod panes;
mod prompt_tool;
pub(crate) mod session_file;
pub(crate) mod setup;
pub(crate) use agents::sources as agent_sources;
mod stopping;
mod structured;
mod thinking;

use crate::args::PrintArgs;
use crate::control;
use crate::model_choice::{choose, Choice};
use crate::print::{self, OutputFormat, PrintOptions, Printer};
use crate::settings::{self, Settings};
use anyhow::{bail, Context};
use fleet_protocol::{env, EventKind, Message};
use session_file::{SessionFile, TranscriptLost};
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use stopping::Stopping;
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
    // A program that pipes its input (the Agent SDKs never pass -p) gets a headless session,
    // as with Claude Code: stream-json input, or the prompt itself on stdin. A prompt given as
    // an argument without -p opens the interactive mode with it.
    let piped = args.input_format == "stream-json"
        || (args.prompt.is_none() && !std::io::stdin().is_terminal());
    if !args.print && !piped {
        return crate::interactive::run(args).await;
    }
    if args.member.agent_id.is_some() {
        anyhow::bail!(
            "--agent-id and the other teammate flags are for a pane teammate its lead starts \
             in a terminal pane; they do not apply to -p"
        );
    }
    let cwd = resolve_cwd(&args)?;
    flags::check(&args)?;
    let settings = settings::load_with(&cwd, &flags::settings_flags(&args)?)?;
    if let Some(warning) = settings.trust.warning() {
        eprintln!("fleet: warning: {}", crate::visible::visible(&warning));
    }
    let choice = choose(args.provider, args.model.clone(), &settings)?;
    let out = Box::new(std::io::stdout());
    let no_persistence_flag = args.no_session_persistence;
    execute(Run {
        args,
        cwd,
        settings,
        choice,
        out,
        persist: !env::FLEET_NO_SESSION_PERSISTENCE.is_on()? && !no_persistence_flag,
    })
    .await
}

pub async fn execute(run: Run) -> anyhow::Result<ExitCode> {
    let Run {
        mut args,
        cwd,
        mut settings,
        mut choice,
        out,
        persist,
    } = run;
    let format: OutputFormat = args.output_format.parse().map_err(anyhow::Error::msg)?;
    let stream_input = args.input_format == "stream-json";
    if args.await_initialize && !stream_input {
        bail!("--await-initialize needs --input-format stream-json: initialize comes on stdin");
    }
    let sdk_prompts = match args.permission_prompt_tool.as_deref() {
        Some(prompt_tool::STDIO) if stream_input && format == OutputFormat::StreamJson => true,
        Some(prompt_tool::STDIO) => bail!(
            "--permission-prompt-tool stdio asks the program driving fleet over the control \
             protocol: it needs --input-format stream-json and --output-format stream-json"
        ),
        // An MCP tool answers (see `prompt_tool`), or nobody is asked.
        _ => false,
    };
    // Read the prompt before anything is written, so a missing prompt leaves no empty session.
    let first_prompt = if stream_input {
        None
    } else {
        Some(read_prompt(&args)?)
    };
    let (prompt_tx, prompt_rx) = mpsc::channel::<Message>(16);
    // With stream-json input, stdout is shared line by line with the control protocol.
    let (out, mut channel): (Box<dyn Write + Send>, _) = if stream_input {
        let shared = control::out::SharedOut::new(out);
        let channel = control::Channel::start(
            shared.clone(),
            prompt_tx.clone(),
            format == OutputFormat::StreamJson,
        );
        (Box::new(shared.writer()), Some(channel))
    } else {
        (out, None)
    };
    // The SDKs send `initialize` first and wait for its answer before any prompt: what it
    // adds (agents, hooks, a system prompt) is part of the session being built.
    let mut initialize = None;
    if let Some(channel) = channel.as_mut() {
        if let control::reader::First::Initialize { id, body } = channel.first().await {
            let read = control::init::InitRequest::read(&body, &mut args).and_then(|request| {
                if request.settings {
                    // A settings layer sent in `initialize` counts as if given by --settings.
                    let reread = flags::settings_flags(&args)
                        .and_then(|flags| settings::load_with(&cwd, &flags))
                        .and_then(|loaded| {
                            let picked = choose(args.provider, args.model.clone(), &loaded)?;
                            Ok((loaded, picked))
                        });
                    let (loaded, picked) = reread.map_err(|e| format!("initialize: {e:#}"))?;
                    settings = loaded;
                    choice = picked;
                }
                Ok(request)
            });
            match read {
                Ok(request) => initialize = Some((id, request)),
                Err(err) => {
                    channel.link.respond(&id, Err(err.clone()));
                    bail!("{err}");
                }
            }
        }
    }

    let mut session = SessionFile::open(&args, &cwd, persist)?;
    let session_cancel = CancellationToken::new();
    // An SDK host steers the running session, answers its questions and runs its hooks.
    let host = channel.as_ref().map(|channel| {
        let options = fleet_runtime::controls::ControlOptions {
            allow_bypass: args.allow_dangerously_skip_permissions,
            project_dir: crate::settings::repo_root(&cwd).or_else(|| Some(cwd.clone())),
            home_dir: None,
        };
        let init = initialize.as_ref().map(|(_, request)| request);
        channel.host_parts(options, init, sdk_prompts, &session_cancel)
    });
    let approver = match host.as_ref().and_then(|host| host.approver.clone()) {
        Some(approver) => Some(approver),
        // A person at the terminal answers "ask" decisions; otherwise they are refusals.
        None => {
            let stdin_in_use = stream_input || args.prompt.is_none();
            approve::TerminalApprover::if_attended(stdin_in_use)
                .map(|a| a as std::sync::Arc<dyn fleet_runtime::Approver>)
        }
    };
    let hooks = host.as_ref().and_then(|host| host.hooks.clone());
    let controls = host.as_ref().map(|host| host.controls.clone());
    // SDK-hosted servers start through the control link, while `initialize` still waits.
    let bridge = host.as_ref().map(|host| host.bridge.clone());
    let servers = start_mcp(
        &args,
        &cwd,
        format == OutputFormat::Text,
        bridge,
        settings.trust.trusted,
    )
    .await;
    let mcp = launch::mcp_tools(&servers).await;
    let approver = prompt_tool::approver(&args, &mcp.tools, &cwd, approver)?;
    crate::model_choice::learn_server_limits(&mut choice).await;
    let built = setup::agent(
        &args,
        &cwd,
        &settings,
        choice,
        session.id(),
        setup::Host {
            approver,
            hooks,
            controls: controls.clone(),
        },
        persist,
        &mcp,
    );
    let built = match (built, &channel, &initialize) {
        (Err(err), Some(channel), Some((id, _))) => {
            channel.link.respond(id, Err(format!("{err:#}")));
            return Err(err);
        }
        (built, _, _) => built?,
    };
    let _scratchpad = built.scratchpad;
    if let (Some(channel), Some((id, request))) = (&channel, &initialize) {
        if !request.ignored.is_empty() {
            eprintln!(
                "fleet: initialize: not acted on: {}",
                request.ignored.join(", ")
            );
        }
        let answer = control::init::response(
            built.spawner.agents(),
            &built.skills,
            &fleet_model::Catalog::from_env(),
            built.agent.config().permissions.mode().as_str(),
            request,
        );
        channel.link.respond(id, Ok(answer));
    }
    if let Some(prompt) = first_prompt {
        prompt_tx
            .send(Message::user_text(prompt))
            .await
            .context("starting the session")?;
    }
    // The stdin reader holds its own sender; the session ends when it (or the prompt) is done.
    drop(prompt_tx);
    let launch::Started { mut handle, socket } = launch::start(
        launch::Ready {
            agent: built.agent,
            spawner: built.spawner,
            sink: built.sink,
            events: built.events,
            attended: false,
        },
        &mut session,
        prompt_rx,
    )
    .await?;
    // The host's requests are answered from here on, the session built.
    let server = channel
        .as_mut()
        .zip(controls)
        .and_then(|(channel, controls)| channel.serve(servers.clone(), controls));
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
    // Whether a result already told the transcript's failure (see below).
    let mut blamed = false;
    let mut stop = Stopping::new(handle.cancel.clone())?;
    loop {
        let event = tokio::select! {
            event = handle.recv() => event,
            signal = stop.next() => {
                signal?;
                continue;
            }
        };
        let Some(mut event) = event else { break };
        let main = event.agent.parent_tool_use_id.is_none();
        if let Err(err) = session.record_event(&event) {
            // Nothing more may happen that the transcript cannot hold.
            handle.cancel.cancel();
            failed.get_or_insert(err);
        }
        if let (EventKind::Finished(result), true) = (&mut event.kind, main) {
            // A run the transcript's failure stopped says so, not "cancelled".
            let lost = failed
                .as_ref()
                .and_then(|e| e.downcast_ref::<TranscriptLost>());
            if let Some(lost) = lost {
                lost.blame(result);
                blamed = true;
            }
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
    // Requests still waiting for the host are withdrawn; nothing answers them any more.
    session_cancel.cancel();
    if let Some(server) = server {
        server.abort();
    }
    // A stopped run does not wait for stdin to end: whoever feeds it may never close it.
    match channel {
        Some(channel) if channel.reader_done() || !stop.stopping() => {
            if let Err(err) = channel.join() {
                failed = failed.or(Some(err));
            }
        }
        _ => {}
    }
    let synced = session.finish();
    // No MCP server outlives its session, whatever still holds a connection.
    drop(servers);
    fleet_runtime::mcp::kill_all_server_groups();
    if let Some(err) = failed {
        // The text printer has shown an error result on stderr already; once is enough.
        if blamed && format == OutputFormat::Text {
            return Ok(ExitCode::FAILURE);
        }
        return Err(err);
    }
    synced?;
    Ok(if last_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The folder the session works in: `--cwd`, else the current one, resolved.
pub(crate) fn resolve_cwd(args: &PrintArgs) -> anyhow::Result<PathBuf> {
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
    Ok(cwd)
}

/// Starts the session's MCP servers (`.mcp.json`, settings, `--mcp-config`), all at once. A
/// server that fails is reported — one line on stderr in text mode, `failed` in the `init`
/// line — and the session goes on without it.
pub(crate) async fn start_mcp(
    args: &PrintArgs,
    cwd: &std::path::Path,
    text: bool,
    bridge: Option<std::sync::Arc<dyn fleet_runtime::mcp::SdkMcpBridge>>,
    trusted: bool,
) -> std::sync::Arc<fleet_runtime::subagent::McpSession> {
    let mut config = fleet_runtime::mcp::config::McpConfig::load(
        cwd,
        args.mcp_config.clone(),
        args.strict_mcp_config,
    );
    if trusted {
        config.trust_project();
    }
    let servers = fleet_runtime::mcp::McpServers::start_with(
        &config,
        fleet_runtime::mcp::McpTimeouts::from_env(),
        bridge,
    )
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
    // Also said in every output format: a configuration the user wrote and fleet cannot use.
    for error in &config.errors {
        eprintln!(
            "fleet: warning: {}",
            crate::visible::visible(&error.warning())
        );
    }
    if text {
        // Configuration errors (no server behind them) were said just above.
        let started = servers.entries.iter().filter(|e| e.server.is_some());
        for entry in started.filter(|e| e.status == "failed") {
            eprintln!(
                "fleet: MCP server {:?} failed: {}",
                entry.name,
                crate::visible::visible(entry.error.as_deref().unwrap_or("unknown"))
            );
        }
    }
    std::sync::Arc::new(fleet_runtime::subagent::McpSession { config, servers })
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
