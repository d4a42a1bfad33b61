//! fleet's headless output against Claude Code 2.1.328's, scenario by scenario.
//!
//! `../shared/reference/headless/` holds what `claude -p` printed against a fake Messages API
//! in six scenarios, in `json`, `stream-json --verbose` and (for two) partial-message mode.
//! Each test here runs the real `fleet` binary against the fake model server with the same
//! model script and the same flags, and compares the two outputs line by line: the order of
//! line kinds (`type`/`subtype`, the content block of a message line, the event of a
//! `stream_event`), and for each pair of lines Claude Code's keys, recursively, with the JSON
//! type of each value. Values themselves (ids, times, costs, paths, texts) are not compared;
//! keys fleet adds are allowed (Claude Code's keys must be a subset of fleet's).
//!
//! Keys for concepts fleet does not have (slash commands, plugins, fast mode, telemetry
//! timings, …) are listed in [`CLAUDE_ONLY`] with the reason, rather than faked.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Said in every subagent's system prompt and in no main agent's.
const CHILD: &str = "running as a subagent";

/// `(line kind, key path)` of Claude Code's keys fleet leaves out on purpose. `*` in a kind
/// matches every kind; `*` in a path matches any one key (a model's name in `modelUsage`).
const CLAUDE_ONLY: &[(&str, &str)] = &[
    // Claude Code's own product surface: slash commands, plugins, output styles, its UI.
    ("system/init", "slash_commands"),
    ("system/init", "terminal_slash_commands"),
    ("system/init", "apiKeySource"),
    ("system/init", "output_style"),
    ("system/init", "plugins"),
    ("system/init", "capabilities"),
    ("system/init", "analytics_disabled"),
    ("system/init", "product_feedback_disabled"),
    ("system/init", "memory_paths"),
    ("system/init", "original_cwd"),
    ("system/init", "messaging_socket_path"),
    ("system/init", "per_turn_effort_active"),
    ("system/init", "ultrathink_available"),
    ("system/init", "ultrathink_typed_raises"),
    ("system/init", "view_mode"),
    // Fast mode is a Claude Code subscription feature.
    ("*", "fast_mode_state"),
    ("*", "fast_mode_disabled_reason"),
    // Telemetry timings and counters of Claude Code's own.
    ("result", "ttft_ms"),
    ("result", "ttft_stream_ms"),
    ("result", "time_to_request_ms"),
    ("result", "first_content_frame_ms"),
    ("result", "queued_turn_count"),
    ("result", "safety_stops"),
    ("result", "model_usage_since_last_result"),
    ("result", "api_error_type"),
    ("stream_event/*", "ttft_ms"),
    ("stream_event/*", "thinking_display"),
    ("stream_event/*", "api_message_id"),
    // Usage details the Messages API reports and fleet does not carry.
    ("*", "usage.output_tokens_details"),
    ("*", "usage.inference_geo"),
    ("*", "usage.iterations"),
    ("*", "usage.speed"),
    ("*", "usage.fallback_credit"),
    ("*", "modelUsage.*.webSearchRequests"),
    ("*", "modelUsage.*.thinkingTokens"),
    ("*", "modelUsage.*.cacheCreationEphemeral5mInputTokens"),
    ("*", "modelUsage.*.cacheCreationEphemeral1hInputTokens"),
    ("*", "modelUsage.*.canonicalModel"),
    ("*", "modelUsage.*.provider"),
    ("*", "modelUsage.*.costBasis"),
    // The API's context-management report on a message; fleet manages context itself.
    ("assistant/*", "message.context_management"),
    // Claude Code's synthetic API-error message carries the raw API envelope.
    ("assistant/text", "message.diagnostics"),
    ("assistant/text", "message.container"),
    ("assistant/text", "message.stop_details"),
    ("assistant/text", "message.usage"),
    ("assistant/text", "api_error_type"),
    // The Agent tool's structured result is Claude Code's own bookkeeping (harness hashes,
    // its prompt-cache figures); fleet's carries its own.
    ("user/tool_result", "tool_use_result"),
];

/// Objects keyed by a model's name, which is not the same in both runs.
const BY_POSITION: &[&str] = &["modelUsage"];

/// A scenario of the reference: the repository, the model's script, the prompt.
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    scenario: fn(&Project) -> Scenario,
    prompt: &'static str,
    flags: &'static [&'static str],
    /// Line kinds only one side prints for a reason given where the case is declared.
    optional: &'static [&'static str],
}

fn trivial(_: &Project) -> Scenario {
    Scenario::with_rules([Rule::text("ok")])
}

fn basic(project: &Project) -> Scenario {
    let file = project.path("hello.txt");
    Scenario::queue([
        Rule::text("Reading the file.").then_tool_use("Read", json!({ "file_path": file })),
        Rule::tool_use(
            "Edit",
            json!({"replace_all": false, "file_path": file, "old_string": "world",
                   "new_string": "fleet"}),
        ),
        Rule::tool_use(
            "Bash",
            json!({"command": "cat hello.txt", "description": "show file"}),
        ),
        Rule::text("DONE: hello fleet"),
    ])
}

fn fanout(_: &Project) -> Scenario {
    let mut rules: Vec<Rule> = (0..3)
        .map(|n| {
            Rule::text(format!("subtask {n} done"))
                .when_system_contains(CHILD)
                .when_last_user_contains(format!("SUBTASK-{n}"))
        })
        .collect();
    let call = |n: u32| {
        json!({"description": format!("subtask {n}"), "prompt": format!("Do SUBTASK-{n} now"),
               "subagent_type": "general-purpose", "run_in_background": false})
    };
    rules.push(Rule::text("all subtasks finished").when_tool_result(true));
    rules.push(
        Rule::tool_use("Agent", call(0))
            .then_tool_use("Agent", call(1))
            .then_tool_use("Agent", call(2)),
    );
    Scenario::with_rules(rules)
}

fn background(_: &Project) -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-RESULT-42")
            .when_system_contains(CHILD)
            .delay_ms(300),
        Rule::text("MAIN-SAW-NOTIFICATION").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING").when_tool_result_contains("Started background agent"),
        Rule::tool_use(
            "Agent",
            json!({"description": "background job", "prompt": "Do BGTASK-1 and report",
                   "subagent_type": "general-purpose", "run_in_background": true}),
        )
        .when_tool_result(false),
    ])
}

fn faults(_: &Project) -> Scenario {
    Scenario::queue([
        Rule::text("never seen")
            .fault_status(429)
            .retry_after(0)
            .once(),
        Rule::text("never seen").fault_status(529).once(),
        Rule::text("RECOVERED"),
    ])
}

fn auth401(_: &Project) -> Scenario {
    Scenario::with_rules([Rule::text("never seen").fault_status(401)])
}

const CASES: &[Case] = &[
    Case {
        name: "trivial",
        files: &[],
        scenario: trivial,
        prompt: "say ok",
        flags: &[],
        optional: &[],
    },
    Case {
        name: "basic",
        files: &[("hello.txt", "hello world\n")],
        scenario: basic,
        prompt: "fix the greeting",
        flags: &["--allowedTools", "Bash(cat *)"],
        optional: &[],
    },
    Case {
        name: "fanout",
        files: &[],
        scenario: fanout,
        prompt: "run three subtasks",
        flags: &[],
        optional: &[],
    },
    Case {
        name: "background",
        files: &[],
        scenario: background,
        prompt: "start a background job",
        flags: &[],
        optional: &[],
    },
    Case {
        name: "faults",
        files: &[],
        scenario: faults,
        prompt: "say something",
        flags: &[],
        optional: &[],
    },
    Case {
        name: "auth401",
        files: &[],
        scenario: auth401,
        prompt: "say something",
        flags: &[],
        // Claude Code retries a refused key ten times over three minutes; fleet does not
        // retry a 401 (the key will not change by waiting), so it has no `api_retry` lines.
        optional: &["system/api_retry"],
    },
];

/// How `claude -p` was run for a capture.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Json,
    Stream,
    Partial,
}

impl Mode {
    fn file_suffix(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Stream => "stream",
            Self::Partial => "partial",
        }
    }

    fn flags(self) -> &'static [&'static str] {
        match self {
            Self::Json => &["--output-format", "json"],
            Self::Stream => &["--output-format", "stream-json", "--verbose"],
            Self::Partial => &[
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
        }
    }
}

fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/headless")
}

/// Claude Code's lines for `case` in `mode`, or `None` when the reference has no capture.
fn reference(case: &str, mode: Mode) -> Option<Vec<Value>> {
    let path = reference_dir().join(format!("cc-{case}-{}.jsonl", mode.file_suffix()));
    let text = std::fs::read_to_string(path).ok()?;
    Some(parse_lines(&text, "reference"))
}

fn parse_lines(text: &str, whose: &str) -> Vec<Value> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{whose} line {} is not JSON ({e}): {line}", i + 1))
        })
        .collect()
}

/// fleet's lines for `case` in `mode`, run as Claude Code was (`acceptEdits`).
async fn fleet_lines(case: &Case, mode: Mode) -> Vec<Value> {
    let project = Project::new(case.files);
    let server = server((case.scenario)(&project)).await;
    let mut args = vec!["-p", case.prompt, "--permission-mode", "acceptEdits"];
    args.extend_from_slice(mode.flags());
    args.extend_from_slice(case.flags);
    // The default output, as a script sees it (the tests' harness asks for subagents' lines).
    let mut cmd = project.command(&server, &args);
    cmd.env_remove("FLEET_SUBAGENT_MESSAGES");
    let out = common::run_with_stdin(cmd, "").await;
    let lines = parse_lines(&stdout(&out), "fleet");
    assert!(
        !lines.is_empty(),
        "fleet printed nothing for {} ({mode:?}): {}",
        case.name,
        stderr(&out)
    );
    lines
}

/// The kind of a line, for comparing their order: `type`, then `subtype` for system and result
/// lines, the first content block's type for message lines, the event's type for
/// `stream_event` lines.
fn kind(line: &Value) -> String {
    let ty = line["type"].as_str().unwrap_or("?");
    let detail = match ty {
        "system" | "result" => line["subtype"].as_str(),
        "assistant" | "user" => line["message"]["content"][0]["type"].as_str(),
        "stream_event" => line["event"]["type"].as_str(),
        _ => None,
    };
    match detail {
        Some(detail) => format!("{ty}/{detail}"),
        None => ty.to_string(),
    }
}

/// Kinds whose consecutive lines count as one: how many retries a refused request gets is
/// configuration (Claude Code's ten against the tests' two), and how many deltas a block
/// streams in is the server's chunking.
const RUNS: &[&str] = &["system/api_retry", "stream_event/content_block_delta"];

/// The lines that are compared, runs of [`RUNS`] kinds collapsed to their first line, and the
/// case's optional kinds left out.
fn collapsed<'a>(lines: &'a [Value], optional: &[&str]) -> Vec<&'a Value> {
    let mut out: Vec<&Value> = Vec::new();
    for line in lines {
        let k = kind(line);
        if optional.contains(&k.as_str()) {
            continue;
        }
        if RUNS.contains(&k.as_str()) && out.last().is_some_and(|l| kind(l) == k) {
            continue;
        }
        out.push(line);
    }
    out
}

/// The kinds in order, as [`collapsed`] keeps them.
fn kinds(lines: &[Value], optional: &[&str]) -> Vec<String> {
    collapsed(lines, optional).into_iter().map(kind).collect()
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn claude_only(kind: &str, path: &str) -> bool {
    CLAUDE_ONLY.iter().any(|(k, p)| {
        let family = kind.split('/').next();
        let kind_ok = *k == "*"
            || *k == kind
            || (!k.contains('/') && family == Some(*k))
            || k.strip_suffix("/*")
                .is_some_and(|prefix| family == Some(prefix));
        let path_ok = p.split('.').count() == path.split('.').count()
            && p.split('.')
                .zip(path.split('.'))
                .all(|(a, b)| a == "*" || a == b);
        kind_ok && path_ok
    })
}

/// Every way `ours` lacks Claude Code's keys in `theirs` or gives a key another JSON type,
/// as `path: what` lines. Arrays compare element by element as far as both go.
fn differences(kind: &str, path: &str, theirs: &Value, ours: &Value, out: &mut Vec<String>) {
    if !path.is_empty() && claude_only(kind, path) {
        return;
    }
    let shown = if path.is_empty() { "(line)" } else { path };
    if json_type(theirs) != json_type(ours) {
        out.push(format!(
            "{shown}: Claude Code has {} ({}), fleet has {} ({})",
            json_type(theirs),
            short(theirs),
            json_type(ours),
            short(ours)
        ));
        return;
    }
    match (theirs, ours) {
        // Keyed by model name, and the models differ: compare the entries in order.
        (Value::Object(t), Value::Object(o)) if BY_POSITION.contains(&path) => {
            for ((name, a), (_, b)) in t.iter().zip(o) {
                differences(kind, &format!("{path}.{name}"), a, b, out);
            }
            if o.is_empty() && !t.is_empty() {
                out.push(format!("{path}: empty (Claude Code has {})", short(theirs)));
            }
        }
        (Value::Object(t), Value::Object(o)) => {
            for (key, value) in t {
                let sub = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match o.get(key) {
                    Some(mine) => differences(kind, &sub, value, mine, out),
                    None if claude_only(kind, &sub) => {}
                    None => out.push(format!("{sub}: missing (Claude Code has {})", short(value))),
                }
            }
        }
        (Value::Array(t), Value::Array(o)) => {
            for (i, (a, b)) in t.iter().zip(o).enumerate() {
                differences(kind, &format!("{path}[{i}]"), a, b, out);
            }
        }
        _ => {}
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Compares fleet's output with Claude Code's; the panic message lists every difference.
fn compare(case: &Case, mode: Mode, theirs: &[Value], ours: &[Value]) {
    let mut problems = Vec::new();
    let optional = case.optional;
    let (their_kinds, our_kinds) = (kinds(theirs, optional), kinds(ours, optional));
    if their_kinds != our_kinds {
        problems.push(format!(
            "line kinds differ:\n  Claude Code: {their_kinds:?}\n  fleet:       {our_kinds:?}"
        ));
    } else {
        let pairs = collapsed(theirs, optional)
            .into_iter()
            .zip(collapsed(ours, optional));
        for (t, o) in pairs {
            let mut found = Vec::new();
            differences(&kind(t), "", t, o, &mut found);
            let at = |lines: &[Value], line: &Value| {
                lines
                    .iter()
                    .position(|l| std::ptr::eq(l, line))
                    .map_or(0, |i| i + 1)
            };
            for f in found {
                problems.push(format!(
                    "line {} of Claude Code's, {} of fleet's ({}): {f}",
                    at(theirs, t),
                    at(ours, o),
                    kind(t)
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} ({mode:?}) differs from Claude Code's output:\n{}\n\nfleet printed:\n{}",
        case.name,
        problems.join("\n"),
        ours.iter().map(short_line).collect::<Vec<_>>().join("\n")
    );
}

fn short_line(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

async fn check(name: &str, mode: Mode) {
    let case = CASES.iter().find(|c| c.name == name).unwrap();
    let theirs = reference(name, mode).unwrap_or_else(|| panic!("no capture for {name} {mode:?}"));
    let ours = fleet_lines(case, mode).await;
    // `--output-format json` prints one object; the capture holds it as one line.
    compare(case, mode, &theirs, &ours);
}

#[tokio::test]
async fn trivial_json() {
    check("trivial", Mode::Json).await;
}

#[tokio::test]
async fn trivial_stream() {
    check("trivial", Mode::Stream).await;
}

#[tokio::test]
async fn trivial_partial() {
    check("trivial", Mode::Partial).await;
}

#[tokio::test]
async fn basic_json() {
    check("basic", Mode::Json).await;
}

#[tokio::test]
async fn basic_stream() {
    check("basic", Mode::Stream).await;
}

#[tokio::test]
async fn basic_partial() {
    check("basic", Mode::Partial).await;
}

#[tokio::test]
async fn fanout_json() {
    check("fanout", Mode::Json).await;
}

#[tokio::test]
async fn fanout_stream() {
    check("fanout", Mode::Stream).await;
}

#[tokio::test]
async fn background_json() {
    check("background", Mode::Json).await;
}

#[tokio::test]
async fn background_stream() {
    check("background", Mode::Stream).await;
}

#[tokio::test]
async fn faults_json() {
    check("faults", Mode::Json).await;
}

#[tokio::test]
async fn faults_stream() {
    check("faults", Mode::Stream).await;
}

#[tokio::test]
async fn auth401_stream() {
    check("auth401", Mode::Stream).await;
}

/// The comparison itself: a missing key, a changed type and a changed order are each named.
#[test]
fn the_comparison_names_what_differs() {
    let theirs = json!({"type": "result", "subtype": "success", "usage": {"a": 1, "b": "x"},
                        "fast_mode_state": "off"});
    let ours = json!({"type": "result", "subtype": "success", "usage": {"a": "1"},
                      "extra": true});
    let mut found = Vec::new();
    differences("result/success", "", &theirs, &ours, &mut found);
    assert_eq!(
        found,
        [
            "usage.a: Claude Code has number (1), fleet has string (\"1\")",
            "usage.b: missing (Claude Code has \"x\")",
        ]
    );
    let a = [
        json!({"type": "system", "subtype": "init"}),
        json!({"type": "result"}),
    ];
    assert_eq!(kinds(&a, &[]), ["system/init", "result"]);
    let retries = [
        json!({"type": "system", "subtype": "api_retry"}),
        json!({"type": "system", "subtype": "api_retry"}),
        json!({"type": "result", "subtype": "success"}),
    ];
    assert_eq!(kinds(&retries, &[]), ["system/api_retry", "result/success"]);
    assert_eq!(kinds(&retries, &["system/api_retry"]), ["result/success"]);
}
