//! `fleet-mcp-fault`: a small MCP server built with rmcp's server side, for tests of fleet's MCP
//! client. It behaves well or badly on demand, so each failure mode the client must survive can
//! be produced by a real process speaking the real protocol.
//!
//! Usage: `fleet-mcp-fault [--start-delay-ms N] [--bad-schema] [--odd-names] [--spawn-child] [--log FILE]
//! [--instructions TEXT] [--http 127.0.0.1:0 | --sse 127.0.0.1:0 [--sse-no-endpoint]]`
//!
//! - stdio by default; with `--http ADDR` it serves streamable HTTP at `/mcp` and prints
//!   `listening http://HOST:PORT/mcp` as its first stdout line.
//! - `--sse ADDR`: the legacy HTTP+SSE transport (`GET /sse`, `POST /message?sessionId=…`,
//!   see `fleet_testkit::serve_mcp_sse`); prints `listening http://HOST:PORT/sse` first. With
//!   `--log`, every request header is logged (`GET /sse header NAME: VALUE`), and so are
//!   sessions opening and closing. `--sse-no-endpoint`: the stream never sends `endpoint`.
//!   `crash` ends the whole process, so the stream drops mid-call; a test that wants the
//!   server back starts another on the same address.
//! - `--start-delay-ms`: sleeps before answering anything (a slow start).
//! - `--bad-schema`: lists one more tool, `broken`, whose input schema is not an object schema.
//! - `--odd-names`: lists `odd name!`, `odd_name_` and an 80-character name (names the
//!   Messages API would refuse as they are).
//! - `--spawn-child`: starts a `sleep 600` grandchild, to prove the client kills the whole group.
//! - `--log FILE`: appends one line per notable event (`cancelled hang`), so a test can see what
//!   the server saw.
//!
//! Tools: `echo {text}`, `add {a, b}`, `slow {ms}`, `hang` (never answers), `crash` (the process
//! exits mid-call), `big {bytes}`, `image`, `resource`, `fail` (an `isError` result),
//! `change_tools` (adds the tool `extra` and sends `notifications/tools/list_changed`), `pids`,
//! `approve {tool_name, input}` (a `--permission-prompt-tool`: denies an input mentioning
//! `DENY-ME`, allows the rest unchanged).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Default)]
struct Options {
    start_delay_ms: u64,
    bad_schema: bool,
    odd_names: bool,
    spawn_child: bool,
    log: Option<PathBuf>,
    instructions: Option<String>,
    http: Option<String>,
    sse: Option<String>,
    sse_no_endpoint: bool,
}

/// A command line this server does not understand (exit status 2).
#[derive(Debug, thiserror::Error)]
enum ArgError {
    #[error("{0} needs a value")]
    MissingValue(String),
    #[error("--start-delay-ms: {0}")]
    StartDelay(#[source] std::num::ParseIntError),
    #[error("unknown argument {0:?}")]
    Unknown(String),
    #[error("--http and --sse exclude each other")]
    HttpAndSse,
}

/// Why serving stopped (exit status 1): a transport's own error, or binding the address.
#[derive(Debug, thiserror::Error)]
enum ServeError {
    #[error("binding {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Boxed: rmcp's error is large, and this one happens once.
    #[error(transparent)]
    Initialize(Box<rmcp::service::ServerInitializeError>),
    #[error(transparent)]
    Join(#[from] tokio::task::JoinError),
}

fn parse_args() -> Result<Options, ArgError> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| ArgError::MissingValue(name.to_string()))
        };
        match arg.as_str() {
            "--start-delay-ms" => {
                options.start_delay_ms = value(&arg)?.parse().map_err(ArgError::StartDelay)?;
            }
            "--bad-schema" => options.bad_schema = true,
            "--odd-names" => options.odd_names = true,
            "--spawn-child" => options.spawn_child = true,
            "--log" => options.log = Some(PathBuf::from(value(&arg)?)),
            "--instructions" => options.instructions = Some(value(&arg)?),
            "--http" => options.http = Some(value(&arg)?),
            "--sse" => options.sse = Some(value(&arg)?),
            "--sse-no-endpoint" => options.sse_no_endpoint = true,
            other => return Err(ArgError::Unknown(other.to_string())),
        }
    }
    if options.http.is_some() && options.sse.is_some() {
        return Err(ArgError::HttpAndSse);
    }
    Ok(options)
}

#[derive(Clone)]
struct Fault {
    options: Arc<Options>,
    /// Set by `change_tools`: `extra` is listed from then on.
    extra: Arc<AtomicBool>,
    child_pid: Option<u32>,
}

impl Fault {
    fn log(&self, line: &str) {
        if let Some(path) = &self.options.log {
            if let Ok(mut file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = writeln!(file, "{line}");
            }
        }
    }

    fn tool_list(&self) -> Value {
        let object = |props: Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required});
        let mut tools = vec![
            json!({"name": "echo", "description": "Returns its text.",
                   "inputSchema": object(json!({"text": {"type": "string"}}), &["text"]),
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "add", "description": "Adds two numbers.",
                   "inputSchema": object(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]),
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "slow", "description": "Answers after `ms` milliseconds.",
                   "inputSchema": object(json!({"ms": {"type": "integer"}}), &["ms"])}),
            json!({"name": "hang", "description": "Never answers.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "crash", "description": "The server exits mid-call.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "big", "description": "Returns `bytes` bytes of text.",
                   "inputSchema": object(json!({"bytes": {"type": "integer"}}), &["bytes"])}),
            json!({"name": "image", "description": "Returns a tiny PNG and a caption.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "resource", "description": "Returns an embedded resource.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "fail", "description": "Returns an isError result.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "change_tools", "description": "Adds `extra` and says the list changed.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "pids", "description": "This process's pid and its child's.", "inputSchema": object(json!({}), &[])}),
            json!({"name": "approve", "description": "A permission prompt tool: denies a call whose input mentions DENY-ME, allows the rest unchanged.",
                "inputSchema": object(json!({"tool_name": {"type": "string"}, "input": {"type": "object"}, "tool_use_id": {"type": "string"}}), &["tool_name", "input"])}),
        ];
        if self.options.odd_names {
            // Names the API would refuse as they are: one to rename, one that collides with
            // it once renamed, one too long for any renaming.
            for name in ["odd name!", "odd_name_", &"long".repeat(20)] {
                tools.push(json!({"name": name, "description": "An oddly named tool.",
                                  "inputSchema": object(json!({}), &[])}));
            }
        }
        if self.options.bad_schema {
            tools.push(
                json!({"name": "broken", "description": "Its schema is not an object schema.",
                              "inputSchema": {"type": "string"}}),
            );
        }
        if self.extra.load(Ordering::SeqCst) {
            tools.push(
                json!({"name": "extra", "description": "Appears after change_tools.",
                              "inputSchema": object(json!({}), &[])}),
            );
        }
        json!({ "tools": tools })
    }
}

fn text_result(text: impl Into<String>, is_error: bool) -> Result<CallToolResponse, ErrorData> {
    result_from(json!({"content": [{"type": "text", "text": text.into()}], "isError": is_error}))
}

fn result_from(value: Value) -> Result<CallToolResponse, ErrorData> {
    serde_json::from_value::<CallToolResult>(value)
        .map(CallToolResponse::from)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn arg<'a>(request: &'a CallToolRequestParams, name: &str) -> Option<&'a Value> {
    request.arguments.as_ref().and_then(|a| a.get(name))
}

impl ServerHandler for Fault {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let config = ServerConfig::new(capabilities);
        match &self.options.instructions {
            Some(text) => config.with_instructions(text.clone()),
            None => config,
        }
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
        match request.name.as_ref() {
            "echo" => {
                let text = arg(&request, "text").and_then(Value::as_str).unwrap_or("");
                text_result(text, false)
            }
            "add" => {
                let a = arg(&request, "a").and_then(Value::as_f64).unwrap_or(0.0);
                let b = arg(&request, "b").and_then(Value::as_f64).unwrap_or(0.0);
                text_result(format!("{}", a + b), false)
            }
            "slow" => {
                let ms = arg(&request, "ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text_result(format!("slept {ms} ms"), false)
            }
            "hang" => {
                self.log("started hang");
                context.ct.cancelled().await;
                self.log("cancelled hang");
                text_result("cancelled", true)
            }
            "crash" => {
                self.log("crashing");
                std::process::exit(3);
            }
            "big" => {
                let bytes = arg(&request, "bytes").and_then(Value::as_u64).unwrap_or(0);
                let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
                text_result("x".repeat(bytes), false)
            }
            "image" => result_from(json!({"content": [
                {"type": "text", "text": "a red pixel"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ]})),
            "resource" => result_from(json!({"content": [
                {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "resource body"}}
            ]})),
            "fail" => text_result("it went wrong", true),
            "change_tools" => {
                self.extra.store(true, Ordering::SeqCst);
                context
                    .peer
                    .notify_tool_list_changed()
                    .await
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                text_result("tools changed", false)
            }
            "pids" => {
                let child = self.child_pid.map_or(Value::Null, |p| json!(p));
                text_result(
                    json!({"pid": std::process::id(), "child": child}).to_string(),
                    false,
                )
            }
            "approve" => {
                let input = arg(&request, "input").cloned().unwrap_or(Value::Null);
                let answer = if input.to_string().contains("DENY-ME") {
                    json!({"behavior": "deny", "message": "the prompt tool said no"})
                } else {
                    json!({"behavior": "allow", "updatedInput": input})
                };
                text_result(answer.to_string(), false)
            }
            "extra" if self.extra.load(Ordering::SeqCst) => text_result("extra", false),
            "odd name!" if self.options.odd_names => text_result("odd answered", false),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("fleet-mcp-fault: {message}");
            std::process::exit(2);
        }
    };
    if options.start_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(options.start_delay_ms)).await;
    }
    // Kept alive (not awaited) for the life of the server; it dies with the process group.
    let child = if options.spawn_child {
        match std::process::Command::new("sleep").arg("600").spawn() {
            Ok(child) => Some(child),
            Err(e) => {
                eprintln!("fleet-mcp-fault: spawning the child: {e}");
                std::process::exit(2);
            }
        }
    } else {
        None
    };
    let fault = Fault {
        options: Arc::new(options.clone()),
        extra: Arc::new(AtomicBool::new(false)),
        child_pid: child.as_ref().map(std::process::Child::id),
    };
    let outcome = match (&options.http, &options.sse) {
        (Some(addr), _) => serve_http(fault, addr).await,
        (None, Some(addr)) => serve_sse(fault, addr).await,
        (None, None) => serve_stdio(fault).await,
    };
    if let Err(message) = outcome {
        eprintln!("fleet-mcp-fault: {message}");
        std::process::exit(1);
    }
}

async fn serve_stdio(fault: Fault) -> Result<(), ServeError> {
    let service = fault
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Initialize(Box::new(e)))?;
    service.waiting().await?;
    Ok(())
}

async fn bind(addr: &str) -> Result<tokio::net::TcpListener, ServeError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: addr.to_string(),
            source,
        })
}

async fn serve_http(fault: Fault, addr: &str) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        move || Ok(fault.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = bind(addr).await?;
    let local = listener.local_addr()?;
    println!("listening http://{local}/mcp");
    let _ = std::io::stdout().flush();
    let router = axum::Router::new().nest_service("/mcp", service);
    Ok(axum::serve(listener, router).await?)
}

async fn serve_sse(fault: Fault, addr: &str) -> Result<(), ServeError> {
    let listener = bind(addr).await?;
    let local = listener.local_addr()?;
    println!("listening http://{local}/sse");
    let _ = std::io::stdout().flush();
    let options = fleet_testkit::McpSseOptions {
        no_endpoint: fault.options.sse_no_endpoint,
    };
    let logger = fault.clone();
    fleet_testkit::serve_mcp_sse(
        listener,
        move || fault.clone(),
        move |line| logger.log(line),
        options,
    )
    .await?;
    Ok(())
}
