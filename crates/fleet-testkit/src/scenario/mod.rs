//! A scenario: the script the fake model server follows. It is data (YAML or JSON, or built
//! in Rust) so that the same script drives crate tests, the `fleet dev fake-model` command and
//! the SDK cross-check.
//!
//! Unknown keys are errors, not ignored: a misspelt condition would otherwise make a rule
//! match everything and the test pass for the wrong reason.

mod fault;
mod problem;
mod reply;
mod rule;

pub use fault::{Fault, StatusFault};
pub use problem::ScenarioProblem;
pub use reply::{ReplyBlock, UsageOverride};
pub use rule::{Rule, When};

use crate::error::TestkitError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The whole script: streaming behaviour, protocol quirks, and the rules.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// SSE bytes are written in pieces of this many bytes, regardless of event, line or UTF-8
    /// character boundaries. 0: one write per event.
    #[serde(default)]
    pub chunk_size: usize,
    /// Pause between written pieces, in milliseconds.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// Characters per streamed text/thinking delta and per tool-input fragment.
    #[serde(default = "default_delta_chars")]
    pub delta_chars: usize,
    /// The model named in replies when the request names none.
    #[serde(default = "default_model")]
    pub model: String,
    /// Reject requests carrying neither `x-api-key` nor `authorization` (401), as the API does.
    #[serde(default = "yes")]
    pub require_auth: bool,
    /// Reject requests the real API would reject (unpaired tool_use/tool_result, empty text
    /// blocks, more than four cache breakpoints, altered thinking signatures, …).
    #[serde(default = "yes")]
    pub validate_requests: bool,
    /// Answer with one JSON document even when the request asks for a stream, as some proxies
    /// and local servers do.
    #[serde(default)]
    pub ignore_stream: bool,
    #[serde(default)]
    pub cache: CacheConfig,
    #[serde(default)]
    pub openai: OpenAiOptions,
    /// What the server keeps of each request: everything (the default) or only the count.
    #[serde(default)]
    pub request_log: RequestLog,
    /// Append one JSON line per request event (received, first byte, finished and how) to
    /// this file; see the `event_log` module. Absent: no such log (the default).
    #[serde(default)]
    pub request_log_file: Option<PathBuf>,
    /// The model's context window in (estimated) tokens: a request whose input is larger is
    /// refused with the API's 400 "prompt is too long" before any rule is consulted, as the
    /// real API does. Absent: any size is accepted.
    #[serde(default)]
    pub context_window: Option<u64>,
    #[serde(default)]
    pub rules: Vec<Rule>,
}

/// The prompt-cache simulation (Anthropic path only).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Off: all input is plain `input_tokens` and nothing is stored. On, the store keeps one
    /// entry per distinct breakpoint prefix for the server's lifetime, so it grows with the
    /// number of distinct conversations.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Breakpoint prefixes shorter than this many (estimated) tokens are not cached, like the
    /// API's per-model minimum cacheable length.
    #[serde(default)]
    pub min_tokens: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            min_tokens: 0,
        }
    }
}

/// What the server keeps of each request it receives.
///
/// A benchmark that runs thousands of agents against one server in one process measures its
/// own memory; a log holding every request body would grow with the run and blur that
/// figure. [`RequestLog::CountOnly`] keeps a counter instead. The prompt-cache simulation
/// keeps one entry per distinct cached prefix as well (see [`CacheConfig::enabled`]); turn it
/// off too for memory that stays flat however many requests arrive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestLog {
    /// Every request as a [`crate::RecordedRequest`]: headers, body, rule and status.
    #[default]
    Full,
    /// Only how many requests arrived. [`crate::FakeModelServer::request_count`] and
    /// [`crate::FakeModelServer::rule_uses`] stay exact, and `when.call` still matches;
    /// [`crate::FakeModelServer::requests`] and `GET /_fake/requests` return an empty list,
    /// and [`crate::FakeModelServer::last_request`] returns `None`.
    CountOnly,
}

/// Quirks of OpenAI-compatible servers, to test that clients cope with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiOptions {
    /// Leave `id` out of streamed tool calls (some local servers do).
    #[serde(default)]
    pub omit_tool_call_ids: bool,
    /// Send each tool call's arguments whole in its first chunk instead of in fragments.
    #[serde(default)]
    pub arguments_in_one_chunk: bool,
    /// The served model's context window in (estimated) tokens, prompt and reply together.
    /// What a request that does not fit gets depends on [`OpenAiOptions::overflow`]. It is
    /// also published by `GET /v1/models` (`max_model_len`) and `GET /props` (`n_ctx`).
    #[serde(default)]
    pub context_window: Option<u64>,
    /// How the server treats a request that overflows `context_window`.
    #[serde(default)]
    pub overflow: Overflow,
    /// Never send a usage chunk (nor a `usage` object), even when the request asks for one,
    /// as some local servers do.
    #[serde(default)]
    pub omit_usage: bool,
    /// The model name put in every chunk and listed by `GET /v1/models`, whatever the request
    /// asked for (a server serving one model under its own name).
    #[serde(default)]
    pub served_model: Option<String>,
    /// Refuse with a 400 a request in which two `user` messages follow each other, as the
    /// chat templates of llama.cpp and of vLLM with some models do ("roles must alternate").
    #[serde(default)]
    pub reject_consecutive_user: bool,
    /// Whether the model's chat template renders tools, published as llama-server does in
    /// `GET /props` (`chat_template_caps.supports_tools`). `false` also makes the server leave
    /// the tool definitions out of the prompt it counts (and of `POST /apply-template`), as
    /// llama-server does with such a template. Unset: `/props` says nothing of it.
    #[serde(default)]
    pub supports_tools: Option<bool>,
    /// How many times each of `GET /v1/models`, `GET /props`, `POST /apply-template` and
    /// `POST /tokenize` first answers 503 "Loading model", as llama-server does while it
    /// loads the model. Chat requests are answered throughout.
    #[serde(default)]
    pub loading_probes: u32,
    /// Serve no `POST /apply-template` nor `POST /tokenize` (404), as an older llama-server.
    #[serde(default)]
    pub no_tokenizer: bool,
}

/// What an OpenAI-compatible server does when a request does not fit its context window;
/// each real server family behaves differently, and clients must understand all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// vLLM: prompt + `max_tokens` over the window is refused with a 400 saying both figures.
    #[default]
    Reject,
    /// llama-server: a prompt over the window is refused with a 400; otherwise the reply is
    /// cut where the window fills, with `finish_reason: "length"` and the completion tokens
    /// actually sent (fewer than `max_tokens`).
    Truncate,
    /// llama-cpp-python: a prompt over the window gets an HTTP 200 event stream with no event
    /// at all.
    Empty,
}

fn default_delta_chars() -> usize {
    16
}

fn default_model() -> String {
    "claude-fake-1".into()
}

fn yes() -> bool {
    true
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            chunk_size: 0,
            chunk_delay_ms: 0,
            delta_chars: default_delta_chars(),
            model: default_model(),
            require_auth: true,
            validate_requests: true,
            ignore_stream: false,
            cache: CacheConfig::default(),
            openai: OpenAiOptions::default(),
            request_log: RequestLog::default(),
            request_log_file: None,
            context_window: None,
            rules: Vec::new(),
        }
    }
}

impl Scenario {
    /// An empty scenario: every request gets the "no rule matched" error until rules are added.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scenario with these rules.
    pub fn with_rules(rules: impl IntoIterator<Item = Rule>) -> Self {
        Self::new().rules(rules)
    }

    /// Rules answered strictly in turn: each answers once (unless it sets `times` itself), so
    /// the N-th request gets the N-th reply. Use markers instead when conversations run
    /// concurrently.
    pub fn queue(rules: impl IntoIterator<Item = Rule>) -> Self {
        Self::with_rules(rules.into_iter().map(|r| match r.times {
            Some(_) => r,
            None => r.once(),
        }))
    }

    /// The `fleet dev fake-model` default: any request gets a short text reply.
    pub fn demo() -> Self {
        Self::with_rules([Rule::text("Hello from the fleet fake model.").named("demo")])
    }

    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    pub fn rules(mut self, rules: impl IntoIterator<Item = Rule>) -> Self {
        self.rules.extend(rules);
        self
    }

    pub fn chunk_size(mut self, bytes: usize) -> Self {
        self.chunk_size = bytes;
        self
    }

    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    pub fn delta_chars(mut self, chars: usize) -> Self {
        self.delta_chars = chars;
        self
    }

    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    pub fn require_auth(mut self, required: bool) -> Self {
        self.require_auth = required;
        self
    }

    pub fn validate_requests(mut self, validate: bool) -> Self {
        self.validate_requests = validate;
        self
    }

    pub fn ignore_stream(mut self, ignore: bool) -> Self {
        self.ignore_stream = ignore;
        self
    }

    pub fn cache(mut self, cache: CacheConfig) -> Self {
        self.cache = cache;
        self
    }

    /// Turns the prompt-cache simulation on or off. Off, every request's input is uncached
    /// and the server stores nothing per prefix.
    pub fn cache_enabled(mut self, enabled: bool) -> Self {
        self.cache.enabled = enabled;
        self
    }

    /// What the server keeps of each request (see [`RequestLog`]).
    pub fn request_log(mut self, log: RequestLog) -> Self {
        self.request_log = log;
        self
    }

    /// Appends the request event log to `path` (see [`Scenario::request_log_file`]).
    pub fn request_log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.request_log_file = Some(path.into());
        self
    }

    /// Refuses requests larger than `tokens` as the API does (see [`Scenario::context_window`]).
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    pub fn cache_min_tokens(mut self, tokens: u64) -> Self {
        self.cache.min_tokens = tokens;
        self
    }

    pub fn openai(mut self, options: OpenAiOptions) -> Self {
        self.openai = options;
        self
    }

    /// An OpenAI-compatible server with this context window, overflowing as `overflow` says.
    pub fn openai_context_window(mut self, tokens: u64, overflow: Overflow) -> Self {
        self.openai.context_window = Some(tokens);
        self.openai.overflow = overflow;
        self
    }

    /// An OpenAI-compatible server that never reports usage.
    pub fn omit_usage(mut self) -> Self {
        self.openai.omit_usage = true;
        self
    }

    /// An OpenAI-compatible server that names its model `model` whatever was asked.
    /// A llama-server whose template does (not) render tools (see
    /// [`OpenAiOptions::supports_tools`]).
    pub fn supports_tools(mut self, supported: bool) -> Self {
        self.openai.supports_tools = Some(supported);
        self
    }

    /// A llama-server still loading for the first `probes` questions about itself (see
    /// [`OpenAiOptions::loading_probes`]).
    pub fn loading_probes(mut self, probes: u32) -> Self {
        self.openai.loading_probes = probes;
        self
    }

    pub fn served_model(mut self, model: impl Into<String>) -> Self {
        self.openai.served_model = Some(model.into());
        self
    }

    /// Reads a scenario written in YAML.
    pub fn from_yaml_str(text: &str) -> Result<Self, TestkitError> {
        Self::parse_yaml(text, "<yaml string>")
    }

    /// Reads a scenario written in JSON.
    pub fn from_json_str(text: &str) -> Result<Self, TestkitError> {
        Self::parse_json(text, "<json string>")
    }

    /// Reads a scenario file: `.yaml`/`.yml` as YAML, `.json` as JSON.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, TestkitError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let parse: fn(&str, &str) -> Result<Self, TestkitError> = match ext.as_deref() {
            Some("yaml" | "yml") => Self::parse_yaml,
            Some("json") => Self::parse_json,
            _ => {
                return Err(TestkitError::invalid(
                    origin,
                    "unknown file extension: name the file *.yaml, *.yml or *.json",
                ))
            }
        };
        let text = std::fs::read_to_string(path).map_err(|source| TestkitError::ReadScenario {
            path: path.to_path_buf(),
            source,
        })?;
        parse(&text, &origin)
    }

    fn parse_yaml(text: &str, origin: &str) -> Result<Self, TestkitError> {
        let scenario: Self = serde_saphyr::from_str(text)
            .map_err(|e| TestkitError::invalid(origin, e.to_string()))?;
        scenario.validate_as(origin)?;
        Ok(scenario)
    }

    fn parse_json(text: &str, origin: &str) -> Result<Self, TestkitError> {
        let scenario: Self =
            serde_json::from_str(text).map_err(|e| TestkitError::invalid(origin, e.to_string()))?;
        scenario.validate_as(origin)?;
        Ok(scenario)
    }

    /// Checks what the types cannot (1-based call numbers, tool inputs that are objects, HTTP
    /// error statuses). The server runs it on start, so builder-made scenarios are checked too.
    pub fn validate(&self) -> Result<(), TestkitError> {
        self.validate_as("<rust builder>")
    }

    fn validate_as(&self, origin: &str) -> Result<(), TestkitError> {
        if self.delta_chars == 0 {
            return Err(TestkitError::invalid(
                origin,
                "`delta_chars` must be at least 1",
            ));
        }
        if self.openai.context_window == Some(0) {
            return Err(TestkitError::invalid(
                origin,
                "`openai.context_window` must be at least 1",
            ));
        }
        for (i, rule) in self.rules.iter().enumerate() {
            rule.validate()
                .map_err(|problem| TestkitError::InvalidRule {
                    origin: origin.to_string(),
                    rule: rule.label(i),
                    problem: Box::new(problem),
                })?;
        }
        Ok(())
    }
}
