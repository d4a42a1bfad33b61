//! `fleet mcp add | remove`: writing MCP server definitions where fleet (and Claude Code) read
//! them — the project's `.mcp.json`, or with `--scope user` `$FLEET_HOME/settings.json`.
//!
//! The editing itself (one entry changed, every other key kept, atomic replacement, a file that
//! does not parse left alone) is `fleet_runtime::mcp::config`'s; this module turns arguments
//! into a [`ServerSpec`] and picks the file. Values are written as typed, so `-e
//! TOKEN='${TOKEN}'` keeps the secret in the environment rather than in the file.

use anyhow::Context;
use fleet_runtime::mcp::config::{
    add_server, process_env, project_file_for_writing, remove_server, server_names,
    McpConfigSources, McpSource, ServerSpec,
};
use fleet_store::FleetHome;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::visible::visible;

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Every configured server, started as a session would start it: source, transport,
    /// status and tool count. Exits with status 1 when any server failed to start (every
    /// server is still listed); a server not approved yet does not count as failed.
    List(crate::mcp_list::ListArgs),
    /// One server and its tools. Exits with status 1 when it failed to start.
    Get(crate::mcp_list::GetArgs),
    /// Add a server: `fleet mcp add NAME -- command args…` (stdio) or
    /// `fleet mcp add --transport http NAME URL`.
    Add(AddArgs),
    /// Remove a server from the project's .mcp.json or the user settings.
    Remove(RemoveArgs),
    /// Serve fleet's own tools (Read, Edit, Write, Glob, Grep, Bash) as an MCP server on
    /// stdin/stdout, under the permission rules of this folder and the flags.
    Serve(crate::mcp_serve::ServeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    Stdio,
    Http,
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The project's `.mcp.json` (shared with everyone who checks out the repository).
    Project,
    /// `$FLEET_HOME/settings.json` (this user, every project).
    User,
}

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// stdio runs COMMAND with ARGS; http (streamable HTTP) and sse connect to a URL.
    #[arg(long, short = 't', value_enum, default_value_t = Transport::Stdio)]
    transport: Transport,
    /// Where to write the server.
    #[arg(long, short = 's', value_enum, default_value_t = Scope::Project)]
    scope: Scope,
    /// An environment variable for a stdio server (repeatable). Quote `${VAR}` to keep it a
    /// reference that fleet expands at start.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// An HTTP header for an http or sse server (repeatable), e.g. "Authorization: Bearer ${T}".
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The server's name (letters, digits, `_`, `-`); its tools appear as mcp__NAME__tool.
    name: String,
    /// The command to run (stdio), or the server's URL (http, sse).
    #[arg(value_name = "COMMAND_OR_URL")]
    target: String,
    /// The command's arguments (stdio); put `--` before the command when they start with `-`.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The server's name.
    name: String,
    /// Where to remove it from; without it, wherever it is (an error if it is in both).
    #[arg(long, short = 's', value_enum)]
    scope: Option<Scope>,
}

pub async fn run(command: McpCommand) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("finding the current folder")?;
    match command {
        McpCommand::Add(args) => add(&cwd, args),
        McpCommand::Remove(args) => remove(&cwd, args),
        McpCommand::Serve(args) => crate::mcp_serve::run(args).await,
        McpCommand::List(args) => crate::mcp_list::list(args).await,
        McpCommand::Get(args) => crate::mcp_list::get(args).await,
    }
}

fn user_file() -> anyhow::Result<PathBuf> {
    let home = FleetHome::from_env().context("finding the fleet home")?;
    Ok(home.root().join("settings.json"))
}

fn add(cwd: &Path, args: AddArgs) -> anyhow::Result<ExitCode> {
    let spec = spec_of(&args)?;
    let file = match args.scope {
        Scope::Project => project_file_for_writing(cwd),
        Scope::User => user_file()?,
    };
    add_server(&file, &args.name, &spec)?;
    let what = match &spec {
        ServerSpec::Stdio {
            command,
            args: command_args,
            ..
        } => {
            let mut line = command.clone();
            for arg in command_args {
                line.push(' ');
                line.push_str(arg);
            }
            format!("stdio MCP server {} (command: {line})", args.name)
        }
        ServerSpec::Http { url, .. } => format!("http MCP server {} ({url})", args.name),
        ServerSpec::Sse { url, .. } => format!("sse MCP server {} ({url})", args.name),
    };
    println!(
        "{}",
        visible(&format!("Added {what} to {}", file.display()))
    );
    // The user added it, so the user approves it: project servers start only once approved,
    // and the approval lives in the user's store (keyed by the repository), which no
    // repository can write.
    if args.scope == Scope::Project {
        let folder = file.parent().unwrap_or(cwd);
        let root = fleet_runtime::tracked::repository_root(folder);
        let files = fleet_runtime::mcp::config::McpConfigSources::discover(
            &fleet_session::config::locations(folder),
            Vec::new(),
            false,
        )
        .project_files;
        let hash = fleet_runtime::mcp::config::approval::project_server_hash(&files, &args.name)
            .unwrap_or_default();
        let approved = fleet_store::trust::TrustStore::from_env().and_then(|store| {
            store.update(&root, |p| {
                p.mcp_servers.insert(args.name.clone(), hash);
            })?;
            Ok(store.path().to_path_buf())
        });
        match approved {
            Ok(store) => println!(
                "{}",
                visible(&format!(
                    "Approved it for {} in {}",
                    root.display(),
                    store.display()
                ))
            ),
            Err(err) => eprintln!(
                "fleet: warning: could not record the approval ({err}); the server will not \
                 start until {:?} is in \"enabledMcpjsonServers\"",
                args.name
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The definition the arguments describe, or why they do not describe one.
fn spec_of(args: &AddArgs) -> anyhow::Result<ServerSpec> {
    match args.transport {
        Transport::Stdio => {
            if !args.headers.is_empty() {
                anyhow::bail!(
                    "--header is for http and sse servers; a stdio server takes -e KEY=VALUE"
                );
            }
            let mut env = BTreeMap::new();
            for pair in &args.env {
                let (key, value) = pair
                    .split_once('=')
                    .filter(|(key, _)| !key.is_empty())
                    .with_context(|| format!("-e {pair:?}: expected KEY=VALUE"))?;
                env.insert(key.to_string(), value.to_string());
            }
            Ok(ServerSpec::Stdio {
                command: args.target.clone(),
                args: args.args.clone(),
                env,
            })
        }
        Transport::Http | Transport::Sse => {
            if !args.env.is_empty() {
                anyhow::bail!(
                    "-e is for stdio servers; an {} server takes --header \"NAME: VALUE\"",
                    if args.transport == Transport::Http {
                        "http"
                    } else {
                        "sse"
                    }
                );
            }
            if !args.args.is_empty() {
                anyhow::bail!(
                    "an http or sse server takes one URL; unexpected arguments after it: {}",
                    args.args.join(" ")
                );
            }
            let mut headers = BTreeMap::new();
            for header in &args.headers {
                let (key, value) = header
                    .split_once(':')
                    .map(|(k, v)| (k.trim(), v.trim()))
                    .filter(|(key, _)| !key.is_empty())
                    .with_context(|| format!("--header {header:?}: expected \"NAME: VALUE\""))?;
                headers.insert(key.to_string(), value.to_string());
            }
            let url = args.target.clone();
            Ok(if args.transport == Transport::Http {
                ServerSpec::Http { url, headers }
            } else {
                ServerSpec::Sse { url, headers }
            })
        }
    }
}

fn remove(cwd: &Path, args: RemoveArgs) -> anyhow::Result<ExitCode> {
    // The project's .mcp.json files, nearest first: the one that has the name is the one meant.
    let discovered =
        McpConfigSources::discover(&fleet_session::config::locations(cwd), Vec::new(), false);
    let mut project_files = discovered.project_files.clone();
    project_files.reverse();
    let project_hit = project_files
        .into_iter()
        .map(|file| server_names(&file).map(|names| (names.contains(&args.name), file)))
        .find(|found| !matches!(found, Ok((false, _))));
    let project_hit = match project_hit {
        Some(Ok((_, file))) => Some(file),
        Some(Err(err)) if args.scope != Some(Scope::User) => return Err(err.into()),
        _ => None,
    };
    let user = user_file()?;
    let user_hit = match args.scope {
        Some(Scope::Project) => false,
        _ => server_names(&user)?.contains(&args.name),
    };
    let file = match (args.scope, project_hit, user_hit) {
        (Some(Scope::User), _, true) | (None, None, true) => user,
        (Some(Scope::Project), Some(project), _) | (None, Some(project), false) => project,
        (None, Some(project), true) => anyhow::bail!(
            "MCP server {:?} is in both {} and {}: say which with --scope project or --scope user",
            args.name,
            project.display(),
            user.display()
        ),
        _ => anyhow::bail!("{}", not_found(&discovered, &args)),
    };
    remove_server(&file, &args.name)?;
    println!(
        "{}",
        visible(&format!(
            "Removed MCP server {} from {}",
            args.name,
            file.display()
        ))
    );
    Ok(ExitCode::SUCCESS)
}

/// Says where the server is not, and where it is when fleet does not edit that file.
fn not_found(discovered: &McpConfigSources, args: &RemoveArgs) -> String {
    let looked = match args.scope {
        Some(Scope::Project) => "the project's .mcp.json",
        Some(Scope::User) => "the user settings",
        None => "the project's .mcp.json or the user settings",
    };
    let mut message = format!("no MCP server named {:?} in {looked}", args.name);
    let config = discovered.load(&process_env);
    let elsewhere = config
        .servers
        .iter()
        .find(|s| s.name == args.name)
        .map(|s| s.source.clone())
        .or_else(|| config.error_for(&args.name).map(|e| e.origin().clone()));
    match elsewhere {
        Some(McpSource::ClaudeUser(path) | McpSource::ClaudeLocal(path)) => {
            message.push_str(&format!(
                "; it is defined in {} (Claude Code's configuration, which fleet reads but does \
                 not edit: use `claude mcp remove {}`)",
                path.display(),
                args.name
            ))
        }
        Some(source) => message.push_str(&format!("; it is defined in {source}")),
        None => {}
    }
    message
}
