//! Resources: what a server offers to be read (files, records, generated documents) rather
//! than called.
//!
//! Listing walks the pages itself instead of using rmcp's `list_all_resources`, because that
//! one follows cursors for as long as the server hands them out: a buggy server would hold the
//! agent forever. Here a repeated cursor or more than [`MAX_RESOURCE_PAGES`] pages is an error.
//!
//! Reading renders the contents as text for the model: text as it is, binary content as one
//! line naming its type and size — base64 in a prompt costs tokens and tells the model nothing.
//!
//! Both are bounded like a tool call: the call timeout (`MCP_TOOL_TIMEOUT`), the caller's
//! cancellation, and (for a read) the output cap; a transport that closes under them fails the
//! connection the same way, so the next use restarts the server once.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde::Serialize;
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use super::client::McpError;
use super::connection::{is_transport_error, McpConnection, McpStatus};
use super::output::cap_text;

/// The most pages one listing follows.
pub const MAX_RESOURCE_PAGES: usize = 100;

/// One resource as a server lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpResource {
    pub uri: String,
    pub name: String,
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Why a listing or a read gave nothing. Every variant names the server.
#[derive(Debug, Error)]
pub enum McpResourceError {
    /// The server could not be reached (failed, or its restart failed).
    #[error(transparent)]
    Server(#[from] McpError),
    #[error("MCP server {server:?} does not offer resources")]
    NotOffered { server: String },
    #[error("MCP server {server:?}: {operation} did not answer within {timeout:?}")]
    Timeout {
        server: String,
        operation: String,
        timeout: Duration,
    },
    #[error("MCP server {server:?}: {operation} was cancelled")]
    Cancelled { server: String, operation: String },
    #[error("MCP server {server:?}: {operation}: {message}")]
    Failed {
        server: String,
        operation: String,
        message: String,
    },
    /// The server's listing pages went wrong (a cursor loop, no end).
    #[error("MCP server {server:?}: {operation}: {problem}")]
    Paging {
        server: String,
        operation: String,
        #[source]
        problem: PagingProblem,
    },
}

/// How a server's paged listing went wrong; what was listed until then is dropped.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PagingProblem {
    #[error("the server gave the cursor {cursor:?} twice; stopped after {listed} resources")]
    RepeatedCursor { cursor: String, listed: usize },
    #[error("more than {pages} pages; stopped after {listed} resources")]
    TooManyPages { pages: usize, listed: usize },
}

impl McpConnection {
    /// Whether the server announced the `resources` capability when it connected. A
    /// connection already known to have failed offers nothing (asking does not restart it).
    pub async fn offers_resources(&self) -> bool {
        if self.status().await != McpStatus::Connected {
            return false;
        }
        match self.ready_peer().await {
            Ok(peer) => peer
                .peer_info()
                .is_some_and(|info| info.capabilities.resources.is_some()),
            Err(_) => false,
        }
    }

    /// Every resource the server lists, all pages, within the call timeout.
    pub async fn list_resources(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpResource>, McpResourceError> {
        let peer = self.resource_peer().await?;
        let server = self.name().to_string();
        let operation = "resources/list".to_string();
        let listing = list_pages(&peer);
        match self.bounded(&operation, cancel, listing).await? {
            Ok(resources) => Ok(resources),
            Err(problem) => Err(McpResourceError::Paging {
                server,
                operation,
                problem,
            }),
        }
    }

    /// The contents of `uri` as text for the model, capped like a tool result.
    pub async fn read_resource(
        &self,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<String, McpResourceError> {
        let peer = self.resource_peer().await?;
        let operation = format!("reading {uri}");
        let failed = |message: String| McpResourceError::Failed {
            server: self.name().to_string(),
            operation: operation.clone(),
            message,
        };
        let request = peer.read_resource_once(ReadResourceRequestParams::new(uri));
        let result = match self.bounded(&operation, cancel, request).await? {
            ReadResourceResponse::Complete(result) => result,
            _ => {
                return Err(failed(
                    "the server asked for more input; fleet does not support that yet".into(),
                ))
            }
        };
        let value = serde_json::to_value(&result).map_err(|e| failed(e.to_string()))?;
        Ok(cap_text(&render_contents(&value), self.max_output_tokens))
    }

    /// The peer, if the server offers resources at all (asking one that does not would only
    /// earn a "method not found").
    async fn resource_peer(&self) -> Result<Peer<RoleClient>, McpResourceError> {
        let peer = self.ready_peer().await?;
        let offered = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some());
        if offered {
            Ok(peer)
        } else {
            Err(McpResourceError::NotOffered {
                server: self.name().to_string(),
            })
        }
    }

    /// Runs one request under the call timeout and `cancel`; a closed transport fails the
    /// connection, as a call would.
    async fn bounded<T>(
        &self,
        operation: &str,
        cancel: &CancellationToken,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpResourceError> {
        let server = self.name().to_string();
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(McpResourceError::Cancelled {
                    server,
                    operation: operation.to_string(),
                });
            }
            outcome = self.within_call_timeout(request) => outcome,
        };
        match outcome {
            None => Err(McpResourceError::Timeout {
                server,
                operation: operation.to_string(),
                timeout: self.timeouts.call.unwrap_or_default(),
            }),
            Some(Ok(value)) => Ok(value),
            Some(Err(ServiceError::McpError(e))) => Err(McpResourceError::Failed {
                server,
                operation: operation.to_string(),
                message: e.message.to_string(),
            }),
            Some(Err(e)) if is_transport_error(&e) => Err(self
                .mark_failed(format!("the server exited during {operation} ({e})"))
                .await
                .into()),
            Some(Err(e)) => Err(McpResourceError::Failed {
                server,
                operation: operation.to_string(),
                message: e.to_string(),
            }),
        }
    }
}

/// Follows the cursors page by page. The outer `Result` is the protocol's (so the caller maps
/// it like any request's); the inner one says the server's paging went wrong.
async fn list_pages(
    peer: &Peer<RoleClient>,
) -> Result<Result<Vec<McpResource>, PagingProblem>, ServiceError> {
    let mut resources = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_RESOURCE_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = peer.list_resources(Some(params)).await?;
        resources.extend(page.resources.into_iter().map(|r| McpResource {
            uri: r.uri,
            name: r.name,
            mime_type: r.mime_type,
            description: r.description,
        }));
        match page.next_cursor {
            None => return Ok(Ok(resources)),
            Some(next) if !seen.insert(next.clone()) => {
                return Ok(Err(PagingProblem::RepeatedCursor {
                    cursor: next,
                    listed: resources.len(),
                }))
            }
            Some(next) => cursor = Some(next),
        }
    }
    Ok(Err(PagingProblem::TooManyPages {
        pages: MAX_RESOURCE_PAGES,
        listed: resources.len(),
    }))
}

/// A `resources/read` result (wire JSON, so an unknown content kind degrades to a line
/// instead of failing the read) as text: a header line per content naming its URI and type,
/// then its text; binary contents are the header alone, with their size.
pub fn render_contents(result: &Value) -> String {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if contents.is_empty() {
        return "(the resource has no contents)".to_string();
    }
    let parts: Vec<String> = contents.iter().map(render_content).collect();
    parts.join("\n\n")
}

fn render_content(content: &Value) -> String {
    let field = |name: &str| content.get(name).and_then(Value::as_str);
    let uri = field("uri").unwrap_or("(no uri)");
    let mime = field("mimeType");
    if let Some(text) = field("text") {
        let mime = mime.map(|m| format!(" ({m})")).unwrap_or_default();
        return format!("[resource {uri}{mime}]\n{text}");
    }
    if let Some(blob) = field("blob") {
        return format!(
            "[resource {uri}: binary, {}, {} bytes, not shown]",
            mime.unwrap_or("unknown type"),
            base64_decoded_len(blob)
        );
    }
    format!("[resource {uri}: neither text nor binary contents]")
}

/// The size of the bytes `base64` encodes, without decoding them.
fn base64_decoded_len(base64: &str) -> usize {
    let digits = base64.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = base64
        .bytes()
        .rev()
        .filter(|b| !b.is_ascii_whitespace())
        .take(2)
        .filter(|&b| b == b'=')
        .count();
    (digits / 4 * 3 + (digits % 4).saturating_sub(1)).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_contents_are_shown_and_blobs_described_never_dumped() {
        let blob = "aGVsbG8gYmluYXJ5IHdvcmxk"; // "hello binary world", 18 bytes
        let text = render_contents(&json!({"contents": [
            {"uri": "demo://a", "mimeType": "text/plain", "text": "hello"},
            {"uri": "demo://b", "mimeType": "image/png", "blob": blob},
        ]}));
        assert_eq!(
            text,
            "[resource demo://a (text/plain)]\nhello\n\n\
             [resource demo://b: binary, image/png, 18 bytes, not shown]"
        );
        assert!(!text.contains(blob));
    }

    #[test]
    fn odd_contents_degrade_to_a_line() {
        assert_eq!(
            render_contents(&json!({"contents": []})),
            "(the resource has no contents)"
        );
        assert_eq!(
            render_contents(&json!({"contents": [{"uri": "x://y"}]})),
            "[resource x://y: neither text nor binary contents]"
        );
        assert_eq!(
            render_contents(&json!({"contents": [{"uri": "x://t", "text": "no type"}]})),
            "[resource x://t]\nno type"
        );
    }

    #[test]
    fn base64_sizes_count_padding_and_ignore_line_breaks() {
        assert_eq!(base64_decoded_len(""), 0);
        assert_eq!(base64_decoded_len("YQ=="), 1);
        assert_eq!(base64_decoded_len("YWI="), 2);
        assert_eq!(base64_decoded_len("YWJj"), 3);
        assert_eq!(base64_decoded_len("YWJjZA=="), 4);
        assert_eq!(base64_decoded_len("YWJj\nZA=="), 4);
        assert_eq!(base64_decoded_len("YWJjZA"), 4, "unpadded");
    }
}
