//! The `fleet` binary: parses the command line and hands each subcommand to its module.

mod agents_cmd;
mod args;
mod control;
mod dashboard_cmd;
mod demo;
mod dev;
#[cfg(test)]
mod fuzz_props;
mod headless;
mod input;
mod interactive;
mod mcp_cmd;
mod mcp_list;
mod mcp_serve;
mod model_choice;
mod print;
mod remote_cmd;
mod sessions;
mod settings;
mod team_cmd;
mod trust;
mod ultraplan_cmd;
mod unsupported_flags;
mod verify;
mod visible;
mod worker_cmd;
mod worktrees_cmd;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "fleet",
    version,
    about = "A multi-agent harness for LLM coding agents",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    print: args::PrintArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// A short exchange with fleet's built-in fake model server: no API key needed.
    Demo(demo::DemoArgs),
    /// List the sessions of a folder, newest first (ids for `fleet -p --resume`).
    Sessions(sessions::SessionsArgs),
    /// Agent definitions: list the ones in effect here, or check agent files.
    #[command(subcommand)]
    Agents(agents_cmd::AgentsCommand),
    /// Teams: list them, show one, send a member a message, read an inbox.
    #[command(subcommand, long_about = team_cmd::LONG_ABOUT)]
    Team(team_cmd::TeamCommand),
    /// Run the verification agent on the checkout as it is now (uncommitted work included),
    /// in a throwaway worktree; exit 0 for PASS, 1 FAIL, 2 PARTIAL, 3 no verdict.
    Verify(verify::VerifyArgs),
    /// Worktrees isolated agents left: list them, or clean up the ones holding nothing.
    #[command(subcommand)]
    Worktrees(worktrees_cmd::WorktreesCommand),
    /// MCP servers: add one to the project's .mcp.json or the user settings, remove one, or
    /// serve fleet's own tools over MCP.
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// Run a remote worker: take agent jobs from a NATS JetStream queue and run them here.
    Worker(worker_cmd::WorkerArgs),
    /// Remote agents: workers and jobs on the broker, and a job's log.
    #[command(subcommand)]
    Remote(remote_cmd::RemoteCommand),
    /// Plan on a remote worker (plan mode, the strongest model) while this terminal stays
    /// free; then approve, reject with feedback, teleport the plan here, or stop.
    Ultraplan(ultraplan_cmd::UltraplanArgs),
    /// Trust a repository: its hooks, allow rules, default mode, MCP servers, skills' tools
    /// and the rest of what it ships apply from now on (`--list`, `--revoke`).
    Trust(trust::cmd::TrustArgs),
    /// Serve the live web dashboard of the sessions under $FLEET_HOME (live and past) and
    /// print its URL (with its token) as the first line; runs until Ctrl+C.
    Dashboard(dashboard_cmd::DashboardArgs),
    /// Developer tools: the fake model server and benchmarks.
    #[command(subcommand)]
    Dev(dev::DevCommand),
}

fn main() -> std::process::ExitCode {
    // The sandbox launcher and guardian are this binary in hidden modes: they must run before
    // any thread or runtime exists.
    if let Some(code) = fleet_tools::sandbox::dispatch() {
        return code;
    }
    fleet_tools::sandbox::set_warning_handler(|message| eprintln!("fleet: warning: {message}"));
    // A pane teammate's secrets (API keys) come in a file its lead wrote for it, read once
    // here, while this is still the only thread.
    match fleet_runtime::teams::member::take_secret_env() {
        Ok(vars) => {
            for (name, value) in vars {
                std::env::set_var(name, value);
            }
        }
        Err(err) => {
            eprintln!("fleet: {err}");
            return std::process::ExitCode::FAILURE;
        }
    }
    // A remote job's fleet dies with its worker, even one killed with -9 (its own Bash
    // commands then die with it, through the sandbox launcher's own death signal).
    if let Some(parent) = std::env::var_os(fleet_remote::worker::child::DIE_WITH_PARENT) {
        std::env::remove_var(fleet_remote::worker::child::DIE_WITH_PARENT);
        let parent: Option<i32> = parent.to_str().and_then(|p| p.parse().ok());
        let armed = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).is_ok();
        // The worker may already be gone (the signal only covers deaths after it is set).
        if !armed || parent != Some(nix::unistd::getppid().as_raw()) {
            eprintln!("fleet: the worker that started this job is gone; not running it");
            return std::process::ExitCode::FAILURE;
        }
    }
    // No MCP server outlives fleet, whatever way it ends: a panic kills their process groups
    // before the usual report.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        fleet_runtime::mcp::kill_all_server_groups();
        report(info);
    }));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("fleet: cannot start the async runtime: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run_and_report());
    // Every path out (an error, a second Ctrl-C, SIGTERM's deadline) comes through here.
    fleet_runtime::mcp::kill_all_server_groups();
    // Exit without waiting for blocking threads: one stuck in the kernel (a read nobody will
    // answer, a hung mount, a question at the terminal no one answers) must never keep fleet
    // from exiting once it has decided to.
    runtime.shutdown_background();
    code
}

async fn run_and_report() -> std::process::ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A script that asked for json output gets its `result` even when the run cannot start.
    let wanted = headless::failure::Wanted::from_argv(&argv);
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => return refused(&err, wanted.as_ref()),
    };
    let headless = cli.command.is_none();
    match run(cli).await {
        Ok(code) => code,
        // The reader went away (`fleet -p … | head`): nothing left to tell anyone.
        Err(err) if is_broken_pipe(&err) => std::process::ExitCode::FAILURE,
        Err(err) => {
            // Errors may quote a server's or a file's words: shown, never obeyed by the terminal.
            let message = visible::visible(&render(&err)).into_owned();
            eprintln!("fleet: {message}");
            if let Some(wanted) = wanted.as_ref().filter(|_| headless) {
                wanted.report(&message, headless::failure::Cause::of(&err));
            }
            std::process::ExitCode::FAILURE
        }
    }
}

/// A command line clap refused: its message on stderr as clap writes it (help and version
/// on stdout), and for json output the `result` a script waits for.
fn refused(
    err: &clap::Error,
    wanted: Option<&headless::failure::Wanted>,
) -> std::process::ExitCode {
    let _ = err.print();
    if err.use_stderr() {
        if let Some(wanted) = wanted {
            wanted.report(
                &headless::failure::clap_message(err),
                headless::failure::Cause::Other,
            );
        }
    }
    let code = u8::try_from(err.exit_code()).unwrap_or(2);
    std::process::ExitCode::from(code)
}

async fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    // Before anything else happens: a mistyped variable stops fleet here, by name.
    let log_filter = check_environment()?;
    tracing_subscriber::fmt()
        .with_env_filter(log_filter)
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Some(Command::Demo(args)) => demo::run(args).await,
        Some(Command::Sessions(args)) => {
            sessions::run(args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Some(Command::Agents(cmd)) => agents_cmd::run(cmd),
        Some(Command::Team(cmd)) => team_cmd::run(cmd),
        Some(Command::Verify(args)) => verify::run(args).await,
        Some(Command::Worktrees(cmd)) => worktrees_cmd::run(cmd).await,
        Some(Command::Mcp(cmd)) => mcp_cmd::run(cmd).await,
        Some(Command::Worker(args)) => worker_cmd::run(args).await,
        Some(Command::Remote(cmd)) => remote_cmd::run(cmd).await,
        Some(Command::Ultraplan(args)) => ultraplan_cmd::run(args).await,
        Some(Command::Trust(args)) => trust::cmd::run(args),
        Some(Command::Dashboard(args)) => dashboard_cmd::run(args).await,
        Some(Command::Dev(cmd)) => dev::run(cmd)
            .await
            .map(|()| std::process::ExitCode::SUCCESS),
        None => headless::run(cli.print).await,
    }
}

/// Checks every numeric and on/off variable fleet reads (see `fleet_protocol::env`) and the
/// `FLEET_LOG` filter, reporting all the bad ones at once.
fn check_environment() -> anyhow::Result<tracing_subscriber::EnvFilter> {
    let mut problems: Vec<String> = fleet_protocol::env::check_all()
        .iter()
        .map(ToString::to_string)
        .collect();
    let filter = match std::env::var("FLEET_LOG") {
        Ok(value) if !value.trim().is_empty() => tracing_subscriber::EnvFilter::try_new(&value)
            .unwrap_or_else(|err| {
                problems.push(format!(
                    "FLEET_LOG={value:?} is not valid: expected a log filter such as `info` or \
                     `fleet_model=debug` ({err})"
                ));
                tracing_subscriber::EnvFilter::default()
            }),
        _ => tracing_subscriber::EnvFilter::default(),
    };
    match problems.len() {
        0 => Ok(filter),
        1 => anyhow::bail!("{}", problems[0]),
        _ => anyhow::bail!("invalid environment:\n  {}", problems.join("\n  ")),
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, each said once: many library errors already quote
/// their cause in their own message, and repeating it would only add noise.
fn render(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        // An OS error reads as the store quotes it, `… (ENOSPC)`, so a quoted one is not repeated.
        let text = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => fleet_store::IoReason(io).to_string(),
            None => cause.to_string(),
        };
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_already_quoted_are_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let quoted = anyhow::Error::new(io).context("cannot open /x: gone");
        assert_eq!(render(&quoted), "cannot open /x: gone");
        let fresh = anyhow::anyhow!("disk full").context("starting session 1");
        assert_eq!(render(&fresh), "starting session 1: disk full");
        let full = std::io::Error::from_raw_os_error(28);
        let store =
            anyhow::Error::new(full).context("cannot write /x: No space left on device (ENOSPC)");
        assert_eq!(
            render(&store),
            "cannot write /x: No space left on device (ENOSPC)"
        );
    }
}
