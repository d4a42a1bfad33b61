//! `fleet -p`: one headless session. Turns flags and settings into the session library's
//! options (`setup`), builds and starts the session there (`fleet_session`), feeds it the
//! prompt (or stdin's stream-json messages) as `Op`s, and hands every event to the printer
//! and the transcript (`relay`). The exit code is non-zero when the last result is an error.

mod approve;
mod approve_diff;
pub(crate) mod failure;
pub(crate) mod flags;
mod handshake;
pub(crate) mod panes;
mod prompt_tool;
mod relay;
pub(crate) mod report;
pub(crate) mod setup;
mod stopping;

use crate::args::PrintArgs;
use crate::control;
use crate::model_choice::{choose, Choice};
use crate::print::{self, OutputFormat, PrintOptions, Printer};
use crate::settings::{self, Settings};
use anyhow::{bail, Context};
use fleet_protocol::{env, Message};
use fleet_session::launch;
use fleet_session::mcp::McpOptions;
use fleet_session::SessionFile;
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
        failure::stdout_taken();
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
    let Io {
        format,
        stream_input,
        sdk_prompts,
    } = Io::of(&args)?;
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
    // The SDKs send `initialize` first and wait for its answer before any prompt.
    let initialize = match channel.as_mut() {
        Some(channel) => {
            handshake::read(channel, &mut args, &cwd, &mut settings, &mut choice).await?
        }
        None => None,
    };

    let mut session =
        SessionFile::open(&setup::conversation(&args), &cwd, persist, &report::Stderr)?;
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
    // Each server that fails to start is one stderr line in every format: the `init` line
    // says `failed`, and only this line says why and where its output went.
    let servers = start_mcp(&args, &cwd, true, bridge, settings.trust.trusted).await;
    let mcp = fleet_session::mcp::tools(&servers).await;
    let approver = prompt_tool::approver(&args, &mcp.tools, &cwd, approver)?;
    // `--dashboard`: the page asks "ask" decisions too, and steers tasks through controls.
    let (approver, controls, dashboard) = match args.dashboard {
        true => {
            let prepared = crate::dashboard_cmd::live::prepare(session.id(), approver)?;
            let approver = prepared.approver.clone() as std::sync::Arc<dyn fleet_runtime::Approver>;
            (
                Some(approver),
                Some(controls.unwrap_or_default()),
                Some(prepared),
            )
        }
        false => (approver, controls, None),
    };
    let model = dashboard.as_ref().map(|_| choice.model.clone());
    crate::model_choice::learn_server_limits(&mut choice, std::sync::Arc::new(report::Stderr))
        .await;
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
            channel.link.respond(id, Err(crate::render(&err)));
            return Err(err);
        }
        (built, _, _) => built?,
    };
    if let (Some(channel), Some(pending)) = (&channel, &initialize) {
        handshake::answer(channel, pending, &built);
    }
    let _scratchpad = built.scratchpad;
    let dashboard = match (dashboard, &controls) {
        (Some(prepared), Some(controls)) => Some(
            prepared
                .serve(&cwd, model.as_deref(), controls.clone())
                .await?,
        ),
        _ => None,
    };
    // Only the stdin reader sends on it from here on.
    drop(prompt_tx);
    let launch::Running {
        ops,
        mut handle,
        socket,
    } = launch::run(
        launch::Ready {
            agent: built.agent,
            spawner: built.spawner,
            sink: built.sink,
            events: built.events,
            attended: false,
        },
        &mut session,
        launch::Steer {
            controls: controls.clone(),
            answers: None,
        },
    )
    .await?;
    if let Some(prompt) = first_prompt {
        ops.prompt(Message::user_text(prompt))
            .await
            .context("starting the session")?;
    }
    // The session ends when the prompt is done, or the stdin reader's messages are.
    tokio::spawn(forward(prompt_rx, ops.clone()));
    // The host's requests are answered from here on, the session built; the steering ones
    // as ops. (Without a channel, `ops` goes here: the forwarder holds the last sender.)
    let server = channel
        .as_mut()
        .zip(controls)
        .and_then(|(channel, controls)| channel.serve(servers.clone(), controls, ops));
    let options = PrintOptions {
        verbose: args.verbose,
        include_partial_messages: args.include_partial_messages,
        session_id: Some(session.id().to_string()),
        results_as_they_come: stream_input,
        include_hook_events: args.include_hook_events,
        session_state: env::CLAUDE_CODE_SDK_READS_SESSION_STATE.is_on()?,
    };
    // From here on the printer tells every ending, an error one included.
    failure::stdout_taken();
    let mut printer: Box<dyn Printer + Send> = print::printer_with(format, &options, out);
    let mut stop = Stopping::new(handle.cancel.clone())?;
    let relay::Relayed {
        mut failed,
        last_error,
        blamed,
    } = relay::relay(
        &mut handle,
        &mut session,
        printer.as_mut(),
        &mut stop,
        dashboard.as_ref(),
    )
    .await?;
    if let Some(dashboard) = &dashboard {
        dashboard.ended().await;
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
    let synced = session.finish().map_err(anyhow::Error::new);
    // No MCP server outlives its session, whatever still holds a connection.
    drop(servers);
    fleet_runtime::mcp::kill_all_server_groups();
    let code = exit_code(
        failed,
        synced,
        blamed && format == OutputFormat::Text,
        last_error,
    )?;
    // Stopped by a signal after a result that read as a success: still not a success.
    Ok(match stop.exit_code() {
        Some(signalled) if !last_error => ExitCode::from(signalled),
        _ => code,
    })
}

/// The run's exit code: a failure of fleet's own (the output, the transcript, stdin) is an
/// error — unless the text printer has already shown it as an error result (`shown`) —, else
/// non-zero when the last result is an error.
fn exit_code(
    failed: Option<anyhow::Error>,
    synced: anyhow::Result<()>,
    shown: bool,
    last_error: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(err) = failed {
        if shown {
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

/// How the run talks to whoever started it.
struct Io {
    format: OutputFormat,
    /// `--input-format stream-json`: user messages and control requests on stdin.
    stream_input: bool,
    /// `--permission-prompt-tool stdio`: "ask" decisions go to the SDK host.
    sdk_prompts: bool,
}

impl Io {
    /// The output and input formats, refusing combinations that cannot work.
    fn of(args: &PrintArgs) -> anyhow::Result<Self> {
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
        Ok(Self {
            format,
            stream_input,
            sdk_prompts,
        })
    }
}

/// Hands each message the stdin reader sends (stream-json input) to the session, in order;
/// when the reader is done, the session's last sender goes and the session may end.
async fn forward(mut prompts: mpsc::Receiver<Message>, ops: fleet_session::OpSender) {
    while let Some(message) = prompts.recv().await {
        if ops.prompt(message).await.is_err() {
            break;
        }
    }
}

/// The folder the session works in: `--cwd`, else the current one, resolved.
pub(crate) fn resolve_cwd(args: &PrintArgs) -> anyhow::Result<PathBuf> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("reading the working directory")?,
    };
    let cwd = cwd
        .canonicalize()
        .with_context(|| format!("--cwd {}", cwd.display()))?;
    if !cwd.is_dir() {
        bail!("--cwd {}: not a folder", cwd.display());
    }
    Ok(cwd)
}

/// Starts the session's MCP servers (`.mcp.json`, settings, `--mcp-config`), all at once. A
/// server that fails is reported — one line on stderr with `report_failures`, `failed` in the
/// `init` line — and the session goes on without it.
pub(crate) async fn start_mcp(
    args: &PrintArgs,
    cwd: &std::path::Path,
    report_failures: bool,
    bridge: Option<std::sync::Arc<dyn fleet_runtime::mcp::SdkMcpBridge>>,
    trusted: bool,
) -> std::sync::Arc<fleet_runtime::subagent::McpSession> {
    let options = McpOptions {
        config: args.mcp_config.clone(),
        strict: args.strict_mcp_config,
        trusted,
        report_failures,
    };
    fleet_session::mcp::start(cwd, &options, bridge, &report::Stderr).await
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
