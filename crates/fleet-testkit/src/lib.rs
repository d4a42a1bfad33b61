//! The fake model server every fleet test runs against: no network, no API key, but the real
//! wire protocols over real HTTP on loopback.
//!
//! [`FakeModelServer`] answers `POST /v1/messages` (Anthropic Messages API, SSE streaming or
//! whole JSON) and `POST /v1/chat/completions` (OpenAI-compatible, `chat.completion.chunk`
//! streaming or whole JSON) from a [`Scenario`]: an ordered list of [`Rule`]s saying which
//! request gets which reply, with faults (HTTP errors with `retry-after`, SSE error events,
//! dropped connections, broken tool JSON) and byte-level pacing (`chunk_size` splits the
//! SSE bytes anywhere, mid-line and mid-character). It checks what the real API checks
//! (credentials, `anthropic-version`, tool_use/tool_result pairing, …), simulates the prompt
//! cache so that cache reuse is measurable offline, and records every request.
//!
//! ```no_run
//! # async fn demo() -> Result<(), fleet_testkit::TestkitError> {
//! use fleet_testkit::{FakeModelServer, Rule, Scenario};
//! use serde_json::json;
//!
//! let server = FakeModelServer::start(Scenario::queue([
//!     Rule::tool_use("Read", json!({"file_path": "/etc/hostname"})),
//!     Rule::text("The hostname is fake.").when_tool_result(true),
//! ]))
//! .await?;
//! // point the client at server.base_url(), run it, then:
//! assert_eq!(server.request_count(), 2);
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Scenario format (YAML or JSON)
//!
//! ```yaml
//! chunk_size: 16            # bytes per write; 0/absent: one write per event
//! chunk_delay_ms: 0         # pause between writes
//! delta_chars: 16           # characters per text/thinking delta and tool-input fragment
//! model: claude-fake-1      # used when the request names no model
//! require_auth: true        # 401 without x-api-key / authorization
//! validate_requests: true   # 400 for requests the real API rejects
//! ignore_stream: false      # answer with one JSON document even to stream: true
//! cache: { enabled: true, min_tokens: 0 }
//! openai:
//!   omit_tool_call_ids: false     # some local servers leave tool-call ids out
//!   arguments_in_one_chunk: false # each tool call's arguments whole in its first chunk
//!   context_window: 4096          # prompt + reply, in tokens (absent: unlimited)
//!   overflow: reject              # reject (vLLM) | truncate (llama-server) | empty (llama-cpp-python)
//!   omit_usage: false             # never send usage, even when asked
//!   served_model: my-model.gguf   # the model named in every chunk, whatever was asked
//!   reject_consecutive_user: false # 400 for two user messages in a row ("roles must alternate")
//! request_log: full          # or count_only: keep the number of requests, not the requests
//! rules:
//!   - name: first-read
//!     when:                       # every condition given must hold
//!       system_contains: "..."
//!       last_user_contains: "..." # text of the last user message
//!       has_tool_result: true     # the last user message carries tool results
//!       tool_result_contains: "..."
//!       marker: "[case:abc]"      # substring of the first user message
//!       call: 2                   # the server's 2nd request (1-based, global)
//!       protocol: anthropic       # or openai
//!     times: 1                    # answers at most once (absent: unlimited)
//!     delay_ms: 0                 # wait before the response starts
//!     first_event_delay_ms: 0     # headers at once, the first bytes this much later
//!     respond:
//!       - thinking: "..."         # signature optional (generated, and checked on return)
//!         signature: "..."
//!       - text: "..."
//!       - tool_use: { name: Read, input: { file_path: /x }, id: toolu_x }   # id optional
//!       - redacted_thinking: "..."
//!     stop_reason: end_turn       # default: tool_use if a tool is called, else end_turn
//!     usage: { output_tokens: 12 } # or input_tokens, cache_*_input_tokens
//!     chunk_size: 7               # per-rule pacing overrides
//!     fault:                      # exactly one kind:
//!       status: 429               #   HTTP error with the API's error body
//!       type: rate_limit_error    #   (default: the API's type for the status)
//!       message: "Rate limited"
//!       retry_after: 1            #   `retry-after` seconds; retry_after_ms → `retry-after-ms`
//!       should_retry: true        #   `x-should-retry`
//!       # sse_error: { type: overloaded_error, message: Overloaded }, after_events: K
//!       # drop_after_events: K    # connection closed abruptly after K events
//!       # malformed_tool_json: true
//!       # empty_stream: true      # HTTP 200 event stream with no event at all
//! ```
//!
//! The first matching rule that is not used up answers. When none does, the reply is a 400
//! `invalid_request_error` saying "fake model: no scenario rule matched request #N" with the
//! last user text. Unknown keys are errors.
//!
//! # Usage figures
//!
//! Input tokens are the canonical JSON bytes of tools + system + messages / 4; output tokens
//! the reply's content bytes / 4 (at least 1); a rule's `usage` overrides either. On the
//! Anthropic path the prompt-cache simulation (below) splits
//! input into `input_tokens`, `cache_creation_input_tokens` and `cache_read_input_tokens`,
//! the cache fields always present.
//!
//! # Prompt cache
//!
//! Each `cache_control` breakpoint (tools, then system blocks, then message blocks) stands
//! for the prefix up to and including its block, hashed with the model name and with
//! `cache_control` stripped, so moving a breakpoint does not change content hashes. The
//! longest prefix already stored, at a breakpoint or up to 20 blocks before one, is read;
//! from there to the last breakpoint is created (and every breakpoint prefix stored); the
//! rest is plain input. Prefixes under `cache.min_tokens` are not cached. Entries never
//! expire, so the store grows by one per distinct prefix; `cache.enabled: false` stores
//! nothing (with `request_log: count_only`, the server's memory stays flat).
//!
//! # OpenAI-compatible servers and their context window
//!
//! With `openai.context_window: N` the prompt (counted as above) is checked against `N` the
//! way each server family does, before any rule is consulted:
//!
//! - `overflow: reject` (vLLM): prompt + `max_tokens` over `N` is a 400 "This model's maximum
//!   context length is N tokens. However, you requested M tokens (P in the messages, K in the
//!   completion). …" (without `max_tokens`, only a prompt over `N` is refused).
//! - `overflow: truncate` (llama-server): a prompt over `N` is a 400 "the request exceeds the
//!   available context size, try increasing it" (`exceed_context_size_error`); otherwise the
//!   reply is cut after `min(N − prompt, max_tokens)` output tokens — text cut mid-word, a tool
//!   call cut mid-arguments (broken JSON) — with `finish_reason: "length"` and
//!   `completion_tokens` the tokens actually sent.
//! - `overflow: empty` (llama-cpp-python): a prompt over `N` gets an HTTP 200 event stream with
//!   no event at all (logged with status 200 and no rule).
//!
//! A rule whose `stop_reason` is `max_tokens` answers `finish_reason: "length"` with
//! `completion_tokens` equal to the request's `max_tokens` (unless `usage.output_tokens` says
//! otherwise), as a server that stopped at the limit does.
//!
//! # Extra endpoints
//!
//! `GET /_fake/requests` returns the request log as JSON (not itself logged), for tests that
//! run the server as a separate process (`fleet dev fake-model`).
//!
//! `GET /v1/models` lists the one model the server stands for (`openai.served_model`, else the
//! scenario's `model`) in OpenAI's shape, with vLLM's `max_model_len` when
//! `openai.context_window` is set — except with `overflow: truncate`, where it lists what
//! llama-server does, the model's training context (`meta.n_ctx_train`, 4 × N), so that only
//! `/props` tells the window the server runs with. `GET /props` answers as llama-server does
//! (`{"default_generation_settings":{"n_ctx":N},…}`) when `openai.context_window` is set. A
//! scenario with neither `served_model` nor `context_window` describes no server, and both
//! answer 404. Neither is logged or counted: the request log counts model requests.

mod answer;
mod anthropic;
mod cache;
pub mod child_test;
mod conn;
mod encode;
mod error;
mod event_log;
mod http_error;
mod listing;
mod mcp_fault;
mod mcp_sse;
mod nats;
mod openai;
mod record;
mod scenario;
mod server;
mod sse;
mod validate;
mod view;
pub mod wait;
mod window;

pub use error::TestkitError;
pub use mcp_fault::{mcp_everything_entry, mcp_fault_server, BuildError};
pub use mcp_sse::{serve_mcp_sse, McpSseOptions};
pub use nats::{nats_server_binary, NatsServer};
pub use record::{RecordedRequest, REDACTED};
pub use scenario::{
    CacheConfig, Fault, OpenAiOptions, Overflow, ReplyBlock, RequestLog, Rule, Scenario,
    ScenarioProblem, StatusFault, UsageOverride, When,
};
pub use server::FakeModelServer;
pub use view::Protocol;
pub use wait::{
    output_within, process_gone, reap, wait_child, wait_for, wait_for_async, wait_output,
    wait_until, wait_until_async, within, WAIT,
};
