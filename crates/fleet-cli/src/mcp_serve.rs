//! `fleet mcp serve`: fleet itself as an MCP server on stdin/stdout, so other MCP clients can
//! use its file and search tools (Read, Edit, Write, Glob, Grep, Bash).
//!
//! Each call goes through the same permission check an agent's call does: the settings files of
//! the folder it is started in (its working folder for every call), then `--allowedTools`,
//! `--disallowedTools` and `--permission-mode`. There is nobody to ask, so a call that would
//! ask is refused like a denied one: an `isError` result saying which allow rule would let it
//! through. Tool failures are `isError` results too; only a call of a tool that does not exist
//! is a protocol error.
//!
//! stdout carries the protocol and nothing else; logs go to stderr.

use crate::headless::setup::{permission_sources, sandbox_from_settings};
use crate::settings::{self, repo_root};
use anyhow::Context;
use fleet_session::build::ToolHost;
use fleet_session::SessionOptions;
use fleet_tools::permissions::{Behavior, Decision, DecisionReason, PermissionMode, Permissions};
use fleet_tools::{Tool, ToolContext, ToolError, ToolOutput, ToolPool};
use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Rules to allow without asking, e.g. "Bash(git *)" Edit (comma or space separated).
    #[arg(long = "allowedTools", visible_alias = "allowed-tools", value_name = "RULES", num_args = 1..)]
    allowed_tools: Vec<String>,
    /// Rules to deny; a bare tool name also removes the tool from the list.
    #[arg(long = "disallowedTools", visible_alias = "disallowed-tools", value_name = "RULES", num_args = 1..)]
    disallowed_tools: Vec<String>,
    /// default, acceptEdits, plan, bypassPermissions or dontAsk.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    permission_mode: Option<PermissionMode>,
    /// The same as `--permission-mode bypassPermissions`.
    #[arg(long)]
    dangerously_skip_permissions: bool,
    /// More folders the tools may change, besides the project.
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    add_dir: Vec<PathBuf>,
    /// Run Bash commands in the OS sandbox (overrides the settings).
    #[arg(long, conflicts_with = "no_sandbox")]
    sandbox: bool,
    /// Run Bash commands outside the OS sandbox (overrides the settings).
    #[arg(long)]
    no_sandbox: bool,
}

fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    s.parse()
}

impl ServeArgs {
    fn mode(&self) -> Option<PermissionMode> {
        if self.dangerously_skip_permissions {
            Some(PermissionMode::BypassPermissions)
        } else {
            self.permission_mode
        }
    }

    fn sandbox(&self) -> Option<bool> {
        match (self.sandbox, self.no_sandbox) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("finding the current folder")?;
    let server = FleetServer::new(&args, &cwd)?;
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .context("starting the MCP session on stdin/stdout")?;
    service
        .waiting()
        .await
        .context("serving MCP on stdin/stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The server: the tools it offers, the rules they run under, and one tool context shared by
/// every call (so a Read is seen by the Edit that follows it, as in an agent).
#[derive(Clone)]
struct FleetServer {
    tools: ToolPool,
    permissions: Arc<Permissions>,
    ctx: ToolContext,
    calls: Arc<AtomicU64>,
}

impl FleetServer {
    fn new(args: &ServeArgs, cwd: &Path) -> anyhow::Result<Self> {
        let settings = settings::load(cwd)?;
        let options = SessionOptions {
            repo_root: repo_root(cwd),
            allowed_tools: args.allowed_tools.clone(),
            disallowed_tools: args.disallowed_tools.clone(),
            permission_mode: args.mode(),
            add_dirs: args.add_dir.clone(),
            permission_sources: permission_sources(&settings),
            sandbox: sandbox_from_settings(&settings, args.sandbox())?,
            ..SessionOptions::new(cwd.to_path_buf())
        };
        let ToolHost {
            tools,
            permissions,
            ctx,
        } = fleet_session::build::tool_host(&options)?;
        Ok(Self {
            tools,
            permissions,
            ctx,
            calls: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The MCP listing of every tool: name, description, input schema, and `readOnlyHint`.
    fn tool_list(&self) -> Value {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "inputSchema": tool.input_schema(),
                    "annotations": {
                        "readOnlyHint": tool.is_read_only(),
                        "destructiveHint": !tool.is_read_only(),
                        "openWorldHint": tool.name() == "Bash",
                    },
                })
            })
            .collect();
        json!({ "tools": tools })
    }

    /// Checks and runs one call; a refusal or a failure is an error output.
    async fn answer(
        &self,
        tool: &Arc<dyn Tool>,
        input: Value,
        context: &RequestContext<RoleServer>,
    ) -> ToolOutput {
        let access = tool.access(&input, &self.ctx);
        let read_only = tool.is_read_only_call(&input, &self.ctx);
        let sandboxed = !read_only && tool.is_sandboxed_call(&input, &self.ctx);
        let decision =
            self.permissions
                .check_call(tool.name(), read_only, sandboxed, &access, &self.ctx.cwd);
        match decision.behavior {
            Behavior::Allow => {}
            Behavior::Ask | Behavior::Deny => return ToolOutput::error(refusal(&decision)),
        }
        let id = format!(
            "mcp-serve-{}",
            self.calls.fetch_add(1, Ordering::Relaxed) + 1
        );
        let ctx = self.ctx.for_call(context.ct.child_token(), &id, None);
        let run = AssertUnwindSafe(tool.call(input, &ctx)).catch_unwind();
        let result = tokio::select! {
            biased;
            () = context.ct.cancelled() => Err(ToolError::Cancelled),
            result = run => match result {
                Ok(result) => result,
                Err(_) => Err(ToolError::failed(format!(
                    "{} failed unexpectedly (internal error).",
                    tool.name()
                ))),
            },
        };
        match result {
            Ok(output) => output,
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// Why a call was not run. An "ask" has nobody to ask here, so it is a refusal that says what
/// would let the call through: the allow rule to add, or the ask rule in the way.
fn refusal(decision: &Decision) -> String {
    let message = decision.message();
    if decision.behavior != Behavior::Ask {
        return message;
    }
    const NOBODY: &str = "Refused: fleet mcp serve has nobody to ask for approval.";
    match &decision.reason {
        DecisionReason::Rule(rule) => format!(
            "{NOBODY} {message} An allow rule does not override an ask rule: remove or narrow \
             `{rule}` in {}, or call something it does not match.",
            rule.source()
        ),
        _ => {
            let rules = decision.suggested_rules();
            let named = rules.iter().all(|rule| message.contains(rule.as_str()));
            if named && !rules.is_empty() {
                return format!("{NOBODY} {message}");
            }
            let fix = if rules.is_empty() {
                "`Bash` (no exact rule can cover this command)".to_string()
            } else {
                rules
                    .iter()
                    .map(|rule| format!("`{rule}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            };
            format!(
                "{NOBODY} {message} To allow it, add the allow rule {fix} to the settings' \
                 `permissions.allow` or start the server with `fleet mcp serve --allowedTools`."
            )
        }
    }
}

fn result(output: ToolOutput) -> Result<CallToolResponse, ErrorData> {
    let value = json!({
        "content": [{"type": "text", "text": output.content}],
        "isError": output.is_error,
    });
    serde_json::from_value::<CallToolResult>(value)
        .map(CallToolResponse::from)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl ServerHandler for FleetServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("fleet", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "fleet's file and search tools, working in {}. Calls follow the permission \
                 rules fleet was started with; a refused call says which rule would allow it.",
                self.ctx.cwd.display()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(self.tool_list())
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.get(request.name.as_ref()).cloned() else {
            let names = self.tools.names().join(", ");
            return Err(ErrorData::invalid_params(
                format!("no tool named {}; the tools are {names}", request.name),
                None,
            ));
        };
        let input = Value::Object(request.arguments.unwrap_or_default());
        result(self.answer(&tool, input, &context).await)
    }
}
