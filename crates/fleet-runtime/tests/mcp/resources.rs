//! Resources through fleet's client and the two resource tools, against a small rmcp server
//! run in this test process on loopback (streamable HTTP): pages followed, a cursor loop
//! stopped, text shown, binary described, the output cap, the call timeout, cancellation, a
//! server without resources, and the tools offered only when some server has resources.
//! server-everything covers the same over stdio and HTTP in `everything.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use fleet_runtime::mcp::config::McpConfig;
use fleet_runtime::mcp::{
    McpConnection, McpResourceError, McpServerConfig, McpServers, McpSource, McpTimeouts,
    McpTransport, ResourceServers, LIST_MCP_RESOURCES_TOOL, READ_MCP_RESOURCE_TOOL,
};
use fleet_tools::{ToolContext, ToolError, Workspace};
use rmcp::model::{
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// "binary payload!" (15 bytes) in base64.
const BLOB: &str = "YmluYXJ5IHBheWxvYWQh";

/// A server whose resources are `doc-0` … `doc-{count-1}` (text), `bin` (binary), `big`
/// (100 KB of text) and `slow` (answers after 10 s), listed `page` at a time.
#[derive(Clone)]
struct Library {
    offer: bool,
    count: usize,
    page: usize,
    /// Every page points at the same next cursor.
    cursor_loop: bool,
}

impl Library {
    fn uris(&self) -> Vec<String> {
        let mut uris: Vec<String> = (0..self.count).map(|i| format!("lib://doc-{i}")).collect();
        uris.extend(["lib://bin", "lib://big", "lib://slow"].map(String::from));
        uris
    }
}

impl ServerHandler for Library {
    fn get_info(&self) -> ServerConfig {
        let builder = ServerCapabilities::builder().enable_tools();
        let capabilities = if self.offer {
            builder.enable_resources().build()
        } else {
            builder.build()
        };
        ServerConfig::new(capabilities)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let uris = self.uris();
        let start: usize = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = (start + self.page).min(uris.len());
        let resources: Vec<Value> = uris[start.min(end)..end]
            .iter()
            .map(|uri| {
                let name = uri.trim_start_matches("lib://");
                json!({"uri": uri, "name": name, "mimeType": "text/plain",
                       "description": format!("the {name} resource")})
            })
            .collect();
        let next = if self.cursor_loop {
            Some("1".to_string())
        } else {
            (end < uris.len()).then(|| end.to_string())
        };
        serde_json::from_value(json!({"resources": resources, "nextCursor": next}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let content = match uri {
            "lib://bin" => {
                json!({"uri": uri, "mimeType": "application/octet-stream", "blob": BLOB})
            }
            "lib://big" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "y".repeat(100_000)})
            }
            "lib://slow" => {
                tokio::time::sleep(Duration::from_secs(10)).await;
                json!({"uri": uri, "text": "late"})
            }
            _ if self.uris().iter().any(|u| u == uri) => {
                json!({"uri": uri, "mimeType": "text/plain", "text": format!("contents of {uri}")})
            }
            _ => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {uri}"),
                    None,
                ))
            }
        };
        serde_json::from_value::<ReadResourceResult>(json!({"contents": [content]}))
            .map(ReadResourceResponse::Complete)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

/// Serves `library` on a loopback port for the rest of the test process; its URL.
async fn serve(library: Library) -> String {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        move || Ok(library.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().nest_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/mcp")
}

fn http_config(name: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        transport: McpTransport::Http {
            url: url.into(),
            headers: BTreeMap::new(),
        },
        source: McpSource::FlagInline(0),
    }
}

fn library(count: usize, page: usize) -> Library {
    Library {
        offer: true,
        count,
        page,
        cursor_loop: false,
    }
}

async fn connect_to(name: &str, library: Library, timeouts: McpTimeouts) -> McpConnection {
    let url = serve(library).await;
    McpConnection::connect(&http_config(name, &url), timeouts)
        .await
        .expect("connect to the in-process server")
}

fn ctx() -> ToolContext {
    let dir = std::env::temp_dir();
    ToolContext::new(dir.clone(), Arc::new(Workspace::new(&dir)))
}

#[tokio::test]
async fn every_page_is_listed_and_text_and_binary_are_read() {
    let conn = connect_to("lib", library(5, 2), super::support::timeouts()).await;
    assert!(conn.offers_resources().await);
    let cancel = CancellationToken::new();
    let listed = conn.list_resources(&cancel).await.expect("list");
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "lib://doc-0",
            "lib://doc-1",
            "lib://doc-2",
            "lib://doc-3",
            "lib://doc-4",
            "lib://bin",
            "lib://big",
            "lib://slow"
        ],
        "all four pages, in order"
    );
    assert_eq!(listed[0].name, "doc-0");
    assert_eq!(listed[0].mime_type.as_deref(), Some("text/plain"));
    assert_eq!(listed[0].description.as_deref(), Some("the doc-0 resource"));

    let text = conn.read_resource("lib://doc-3", &cancel).await.unwrap();
    assert_eq!(
        text,
        "[resource lib://doc-3 (text/plain)]\ncontents of lib://doc-3"
    );
    let binary = conn.read_resource("lib://bin", &cancel).await.unwrap();
    assert_eq!(
        binary,
        "[resource lib://bin: binary, application/octet-stream, 15 bytes, not shown]"
    );
    let missing = conn.read_resource("lib://nope", &cancel).await.unwrap_err();
    assert!(
        matches!(missing, McpResourceError::Failed { .. }),
        "{missing:?}"
    );
    assert!(
        missing.to_string().contains("no resource lib://nope"),
        "{missing}"
    );
}

#[tokio::test]
async fn a_server_that_repeats_its_cursor_is_stopped() {
    let looping = Library {
        cursor_loop: true,
        ..library(3, 1)
    };
    let conn = connect_to("loop", looping, super::support::timeouts()).await;
    let error = conn
        .list_resources(&CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cursor \"1\" twice"), "{error}");
}

#[tokio::test]
async fn a_read_is_capped_timed_out_and_cancelled_like_a_call() {
    let timeouts = McpTimeouts {
        connect: Duration::from_secs(30),
        call: Some(Duration::from_millis(300)),
    };
    let conn = connect_to("lib", library(1, 10), timeouts)
        .await
        .with_max_output_tokens(100);
    let cancel = CancellationToken::new();
    let big = conn.read_resource("lib://big", &cancel).await.unwrap();
    assert!(big.contains("MCP output truncated"), "{}", &big[..200]);
    assert!(big.len() < 1_000, "capped at about 400 characters");

    let started = std::time::Instant::now();
    let error = conn.read_resource("lib://slow", &cancel).await.unwrap_err();
    assert!(
        matches!(error, McpResourceError::Timeout { .. }),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // Cancelled while the server is still working on it (a fresh connection: the timed-out
    // read above is no business of this one).
    let conn = connect_to("lib", library(1, 10), super::support::timeouts()).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let started = std::time::Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let error = conn.read_resource("lib://slow", &cancel).await.unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert!(
        matches!(error, McpResourceError::Cancelled { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_server_without_resources_is_not_asked() {
    let plain = Library {
        offer: false,
        ..library(2, 10)
    };
    let conn = connect_to("plain", plain, super::support::timeouts()).await;
    assert!(!conn.offers_resources().await);
    let error = conn
        .list_resources(&CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, McpResourceError::NotOffered { ref server } if server == "plain"),
        "{error:?}"
    );
    // The fault server (stdio) has no resources either.
    let fault = super::support::connect("fault", &[]).await;
    assert!(!fault.offers_resources().await);
    fault.shutdown().await;
}

#[tokio::test]
async fn the_tools_list_every_server_and_read_by_server_and_uri() {
    let docs = Arc::new(connect_to("docs", library(2, 1), super::support::timeouts()).await);
    let more = Arc::new(connect_to("more", library(1, 10), super::support::timeouts()).await);
    let plain = Arc::new(
        connect_to(
            "plain",
            Library {
                offer: false,
                ..library(1, 1)
            },
            super::support::timeouts(),
        )
        .await,
    );
    let servers = ResourceServers::new([docs, more, plain]).await;
    assert_eq!(servers.names(), ["docs", "more"]);
    let tools = servers.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, [LIST_MCP_RESOURCES_TOOL, READ_MCP_RESOURCE_TOOL]);
    assert!(tools.iter().all(|t| t.is_read_only()));
    let (list, read) = (&tools[0], &tools[1]);
    assert_eq!(read.input_schema()["required"], json!(["server", "uri"]));
    assert!(list.input_schema()["properties"]["server"].is_object());

    let ctx = ctx();
    let all = list.call(json!({}), &ctx).await.expect("list all");
    let entries: Vec<Value> = serde_json::from_str(&all.content).expect("a JSON list");
    assert_eq!(entries.len(), 5 + 4, "docs has 5 resources, more has 4");
    assert_eq!(
        entries[0],
        json!({"server": "docs", "uri": "lib://doc-0", "name": "doc-0",
               "mimeType": "text/plain", "description": "the doc-0 resource"})
    );
    assert!(entries.iter().any(|e| e["server"] == "more"));

    let one = list.call(json!({"server": "more"}), &ctx).await.unwrap();
    let entries: Vec<Value> = serde_json::from_str(&one.content).unwrap();
    assert!(entries.iter().all(|e| e["server"] == "more"), "{entries:?}");

    let read_one = read
        .call(json!({"server": "docs", "uri": "lib://doc-1"}), &ctx)
        .await
        .unwrap();
    assert!(read_one.content.ends_with("contents of lib://doc-1"));
    assert!(!read_one.is_error);

    for (input, wanted) in [
        (
            json!({"server": "nope", "uri": "lib://doc-1"}),
            "There is no MCP server named \"nope\". Servers with resources: \"docs\", \"more\".",
        ),
        (
            json!({"server": "plain", "uri": "lib://doc-1"}),
            "MCP server \"plain\" does not offer resources. Servers with resources: \"docs\", \"more\".",
        ),
    ] {
        // The model named the server: the error says which field to change.
        let Err(ToolError::BadValue {
            field: "server",
            message,
            ..
        }) = read.call(input, &ctx).await
        else {
            panic!("an unusable server was read");
        };
        assert_eq!(message, wanted);
    }
    let Err(ToolError::BadValue {
        field: "server",
        message,
        ..
    }) = list.call(json!({"server": "nope"}), &ctx).await
    else {
        panic!("an unknown server was listed");
    };
    assert!(message.contains("\"docs\", \"more\""), "{message}");
    let Err(ToolError::InvalidInput { .. }) = read.call(json!({"server": "docs"}), &ctx).await
    else {
        panic!("a read without a uri was accepted");
    };
}

#[tokio::test]
async fn a_session_offers_the_tools_only_when_a_server_has_resources() {
    let with = http_config("with", &serve(library(1, 1)).await);
    let without = http_config(
        "without",
        &serve(Library {
            offer: false,
            ..library(1, 1)
        })
        .await,
    );
    let session = McpServers::start(
        &McpConfig {
            servers: vec![with, without.clone()],
            ..McpConfig::default()
        },
        super::support::timeouts(),
    )
    .await;
    let names: Vec<String> = session
        .resource_tools()
        .await
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(names, [LIST_MCP_RESOURCES_TOOL, READ_MCP_RESOURCE_TOOL]);

    let session = McpServers::start(
        &McpConfig {
            servers: vec![without],
            ..McpConfig::default()
        },
        super::support::timeouts(),
    )
    .await;
    assert!(session.resource_tools().await.is_empty());
}
