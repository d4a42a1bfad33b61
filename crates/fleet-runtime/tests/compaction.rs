//! Context compaction against the fake model server, which refuses any request larger than
//! its context window as the API does: long runs stay inside the window, the summary request
//! is well-formed and reuses the cached system prompt and tools, and a "prompt is too long"
//! is recovered from.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_model::{Catalog, ModelInfo, Pricing};
use fleet_protocol::{AgentEvent, CompactTrigger, EventKind, ResultSubtype, Usage};
use fleet_runtime::compact::{
    clear::CLEARED_PREFIX, CompactSettings, PreCompactHook, PreCompactInput, COMPACT_REQUEST_MARKER,
};
use fleet_runtime::Agent;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::permissions::PermissionMode;
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool, Workspace};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};

const MODEL: &str = "claude-small-window";

/// A read-only tool returning `size` characters of text.
struct Blob;

#[derive(Deserialize, JsonSchema)]
struct BlobInput {
    size: usize,
}

impl TypedTool for Blob {
    type Input = BlobInput;
    const NAME: &'static str = "Blob";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Returns a blob of text.".into()
    }

    fn access(&self, _input: &BlobInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: BlobInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("blob ".repeat(input.size / 5)))
    }
}

/// An agent on a model whose window the catalogue says is `window` tokens.
fn agent(server: &FakeModelServer, dir: &Path, window: u64, system: String) -> Agent {
    agent_hooked(server, dir, window, system, None)
}

/// [`agent`] with a PreCompact hook in its slot.
fn agent_hooked(
    server: &FakeModelServer,
    dir: &Path,
    window: u64,
    system: String,
    hook: Option<PreCompactHook>,
) -> Agent {
    let mut catalog = Catalog::builtin();
    catalog.insert(ModelInfo {
        id: MODEL.into(),
        context_window: window,
        max_output_tokens: 4_000,
        pricing: Pricing::default(),
        known: true,
        thinking: false,
    });
    let mut config = config(dir, vec![Arc::new(Blob)], PermissionMode::Default);
    config.model.id = MODEL.into();
    config.model.max_tokens = 4_000;
    config.context.system = vec![system];
    // Whatever the environment running the tests says.
    config.context.compact = CompactSettings {
        pre_compact: hook,
        ..CompactSettings::default()
    };
    let ctx = ToolContext::new(dir.to_path_buf(), Arc::new(Workspace::new(dir)));
    Agent::new(
        client(server),
        Arc::new(catalog),
        config,
        ctx,
        "compact-test",
    )
}

fn boundaries(events: &[AgentEvent]) -> Vec<(usize, &fleet_protocol::CompactBoundary)> {
    events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.kind {
            EventKind::CompactBoundary(b) => Some((i, b)),
            _ => None,
        })
        .collect()
}

/// The usage of each assistant reply committed after event `from`.
fn replies_after(events: &[AgentEvent], from: usize) -> Vec<Usage> {
    events[from..]
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::MessageCommitted(c) => c.reply.as_ref().map(|r| r.usage.clone()),
            _ => None,
        })
        .collect()
}

fn is_summary_request(body: &Value) -> bool {
    body["messages"]
        .to_string()
        .contains(COMPACT_REQUEST_MARKER)
}

#[tokio::test]
async fn three_hundred_turns_of_tool_output_twenty_times_the_window_stay_inside_it() {
    const WINDOW: u64 = 20_000;
    const TURNS: u32 = 300;
    const BLOB: usize = 5_500;
    let server = server(
        Scenario::with_rules([
            Rule::text("Summary: the user wants every blob read; reading goes on.")
                .when_last_user_contains(COMPACT_REQUEST_MARKER)
                .named("summary"),
            Rule::tool_use("Blob", json!({"size": BLOB}))
                .times(TURNS - 1)
                .named("work"),
            Rule::text("all blobs read").named("done"),
        ])
        .context_window(WINDOW),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let system = "You read blobs, patiently and without end. ".repeat(120);
    let agent = agent(&server, dir.path(), WINDOW, system);
    let (events, _agent) = run(agent, "read the blobs").await;

    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::Success, "{}", result.result);
    assert_eq!(result.result, "all blobs read");
    assert_eq!(result.num_turns, TURNS);
    let output_tokens = (TURNS as u64 - 1) * BLOB as u64 / 4;
    assert!(
        output_tokens >= 20 * WINDOW,
        "tool output: {output_tokens} tokens"
    );

    // The server refuses anything over its window; it refused nothing.
    let requests = server.requests();
    let refused: Vec<_> = requests.iter().filter(|r| r.status != 200).collect();
    assert!(
        refused.is_empty(),
        "refused: {:?}",
        refused.first().map(|r| r.seq)
    );
    for usage in replies_after(&events, 0) {
        let input = usage.input_tokens + usage.cache_read() + usage.cache_creation();
        assert!(input <= WINDOW, "a request of {input} tokens");
    }

    // Both ways of making room were used: results cleared, and the conversation compacted.
    assert!(
        requests
            .iter()
            .any(|r| r.body["messages"].to_string().contains(CLEARED_PREFIX)),
        "no request carried a cleared tool result"
    );
    let compactions = boundaries(&events);
    let summaries: Vec<_> = requests
        .iter()
        .filter(|r| is_summary_request(&r.body))
        .collect();
    assert!(!compactions.is_empty(), "never compacted");
    assert_eq!(summaries.len(), compactions.len());

    // The summary request is the agent's request with the instruction last: same model,
    // system prompt and tools, byte for byte.
    let first = &requests[0].body;
    for summary in &summaries {
        let body = &summary.body;
        assert_eq!(body["model"], first["model"]);
        assert_eq!(body["system"], first["system"]);
        assert_eq!(body["tools"], first["tools"]);
        let last = body["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(last["role"], "user");
        let instruction = last["content"].as_array().unwrap().last().unwrap();
        let text = instruction["text"].as_str().unwrap();
        assert!(text.starts_with(COMPACT_REQUEST_MARKER));
        for heading in [
            "Request:",
            "Decisions:",
            "Files and code:",
            "In progress:",
            "Next steps:",
        ] {
            assert!(text.contains(heading), "{heading} missing");
        }
    }

    for (at, boundary) in &compactions {
        assert_eq!(boundary.trigger, CompactTrigger::Auto);
        assert!(boundary.post_tokens < boundary.pre_tokens);
        assert!(boundary.pre_tokens > WINDOW / 2);
        assert!(boundary.messages[0]
            .text()
            .contains("Summary: the user wants"));
        // The next reply after the compaction read the system prompt and tools from the
        // cache (about 1,300 tokens), even though every message before it changed.
        let next = &replies_after(&events, *at)[0];
        assert!(
            next.cache_read() >= 1_000,
            "cache read after compaction: {:?}",
            next
        );
    }
}

#[tokio::test]
async fn a_prompt_too_long_is_recovered_from_by_compacting() {
    // The catalogue believes the window is 200k; the server takes 8k.
    let server = server(
        Scenario::with_rules([
            Rule::text("Summary: two blobs were read.")
                .when_last_user_contains(COMPACT_REQUEST_MARKER)
                .named("summary"),
            Rule::tool_use("Blob", json!({"size": 20_000}))
                .times(2)
                .named("work"),
            Rule::text("recovered").named("done"),
        ])
        .context_window(8_000),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    // The PreCompact slot: told before the compaction, its text joins the instructions.
    let seen: Arc<Mutex<Vec<PreCompactInput>>> = Arc::default();
    let hook_seen = seen.clone();
    let hook: PreCompactHook = Arc::new(move |input: PreCompactInput| {
        hook_seen.lock().unwrap().push(input);
        Box::pin(async { Some("HOOK-SAYS keep the blob sizes".to_string()) })
    });
    let agent = agent_hooked(
        &server,
        dir.path(),
        200_000,
        "You read blobs.".into(),
        Some(hook),
    );
    let (events, agent) = run(agent, "read two blobs").await;

    let result = result(&events);
    assert_eq!(result.subtype, ResultSubtype::Success, "{}", result.result);
    assert_eq!(result.result, "recovered");
    let requests = server.requests();
    let refused: Vec<_> = requests.iter().filter(|r| r.status == 400).collect();
    assert_eq!(refused.len(), 1, "one refusal, then room was made");
    assert_eq!(boundaries(&events).len(), 1);
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].trigger, CompactTrigger::Auto);
        assert_eq!(seen[0].agent_id, "main");
        assert!(seen[0].pre_tokens > 8_000, "{}", seen[0].pre_tokens);
    }
    let summary = requests
        .iter()
        .find(|r| is_summary_request(&r.body))
        .unwrap();
    assert!(summary.body["messages"]
        .to_string()
        .contains("HOOK-SAYS keep the blob sizes"));
    assert!(agent.messages()[0]
        .text()
        .contains("Summary: two blobs were read."));
    // Every request after the refusal fitted.
    assert!(requests
        .iter()
        .skip_while(|r| r.status != 400)
        .skip(1)
        .all(|r| r.status == 200));
}

#[tokio::test]
async fn without_room_to_make_the_refusal_ends_the_run_with_the_api_error() {
    let server = server(Scenario::with_rules([Rule::text("never")]).context_window(50)).await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(&server, dir.path(), 200_000, "You read blobs.".into());
    let (events, _agent) = run(agent, "hello").await;
    let result = result(&events);
    assert!(result.is_error());
    assert_eq!(result.api_error_status, Some(400));
    assert!(
        result.result.contains("prompt is too long"),
        "{}",
        result.result
    );
    assert!(
        result.result.contains("nothing to compact"),
        "{}",
        result.result
    );
}
