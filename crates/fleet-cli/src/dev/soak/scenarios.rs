//! What the soak runs: each scenario is a fake-model script (JSON, served by `fleet dev
//! fake-model` in its own process), a prompt for `fleet -p`, the environment, a deadline, and
//! what a run must leave behind to count as good.

use serde_json::{json, Value};
use std::time::Duration;

/// In every subagent's system prompt (fleet-runtime's subagent notes), in no main prompt.
pub(super) const CHILD_MARK: &str = "running as a subagent";
/// The prompt of a `--resume` run after a kill; the scripts answer it with `RESUMED-OK`.
pub(super) const RESUME_MARK: &str = "SOAK-RESUME";
/// The most a kill waits after its request count was reached, in milliseconds.
pub(super) const KILL_JITTER_MS: u64 = 400;

/// One kind of run.
#[derive(Debug, Clone)]
pub(super) struct Spec {
    pub name: String,
    /// The fake model's scenario.
    pub model: Value,
    pub prompt: String,
    /// Extra arguments after `-p PROMPT --output-format stream-json --verbose`.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// A run that has not ended by then is a hang (as is one idle for a minute).
    pub deadline: Duration,
    /// Kill -9 the session once the server has received a random number of requests, 1 to
    /// this many (the run's total), plus up to `KILL_JITTER_MS`; then resume it.
    pub kill_within_requests: Option<usize>,
    /// The text the final result line must carry (the run did what it was asked).
    pub result: &'static str,
    /// Texts that must each be found in some file under the fleet home after the run:
    /// acknowledged mail, tool results the transcript must hold.
    pub persisted: Vec<String>,
    /// How many requests each named rule must have answered (from the request log).
    pub rule_counts: Vec<(&'static str, usize)>,
    /// Files of the project (relative path, text).
    pub files: Vec<(String, String)>,
    /// Every background agent started must have reported by the last request.
    pub tasks_report: bool,
}

/// The scenario names `--scenario` accepts, in the order the soak runs them.
pub(super) const NAMES: &[&str] = &[
    "fanout",
    "faults",
    "background",
    "team",
    "mcp",
    "kill-background",
    "kill-fanout",
];

/// Sizes of a soak: the short one CI runs, or the full one.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sizes {
    pub fanouts: &'static [usize],
    pub background: usize,
    pub faults_children: usize,
    pub kill_fanout: usize,
}

pub(super) const SHORT: Sizes = Sizes {
    fanouts: &[200],
    background: 10,
    faults_children: 12,
    kill_fanout: 50,
};

pub(super) const FULL: Sizes = Sizes {
    fanouts: &[200, 2_000, 10_000],
    background: 50,
    faults_children: 40,
    kill_fanout: 200,
};

/// The specs named `name` at these sizes (a fan-out gives one per size).
pub(super) fn specs(name: &str, sizes: Sizes, exe: &str) -> Vec<Spec> {
    match name {
        "fanout" => sizes.fanouts.iter().map(|n| fanout(*n)).collect(),
        "faults" => vec![faults(sizes.faults_children)],
        "background" => vec![background(sizes.background)],
        "team" => vec![team()],
        "mcp" => vec![mcp(exe)],
        "kill-background" => {
            let mut spec = background(sizes.background);
            spec.name = "kill-background".into();
            spec.kill_within_requests = Some(1 + 2 * sizes.background);
            vec![spec]
        }
        "kill-fanout" => {
            let mut spec = fanout(sizes.kill_fanout);
            spec.name = "kill-fanout".into();
            spec.kill_within_requests = Some(1 + 2 * sizes.kill_fanout);
            // The resume must be valid for the API: the server checks every request.
            spec.model["validate_requests"] = json!(true);
            vec![spec]
        }
        _ => Vec::new(),
    }
}

fn base(name: String, prompt: String, rules: Vec<Value>) -> Spec {
    Spec {
        name,
        model: json!({"rules": rules}),
        prompt,
        args: vec!["--permission-mode".into(), "bypassPermissions".into()],
        env: Vec::new(),
        deadline: Duration::from_secs(120),
        kill_within_requests: None,
        result: "",
        persisted: Vec::new(),
        rule_counts: Vec::new(),
        files: Vec::new(),
        tasks_report: false,
    }
}

/// The answer to a `--resume` run's prompt, placed before the main agent's rules.
fn resume_rule() -> Value {
    json!({"name": "resumed", "when": {"last_user_contains": RESUME_MARK},
           "respond": [{"text": "RESUMED-OK"}]})
}

/// Working children: each Reads a file and Greps the project, then reports.
fn child_rules() -> Vec<Value> {
    vec![
        json!({"name": "child-done", "when": {"system_contains": CHILD_MARK, "has_tool_result": true},
               "respond": [{"text": "job done"}]}),
        json!({"name": "child-work", "when": {"system_contains": CHILD_MARK, "has_tool_result": false},
        "respond": [
            {"tool_use": {"name": "Read", "input": {"file_path": "{REPO}/notes.txt"}}},
            {"tool_use": {"name": "Grep", "input": {"pattern": "needle 3", "path": "{REPO}/src", "output_mode": "content"}}}
        ]}),
    ]
}

fn project_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = (0..20)
        .map(|i| {
            let body: String = (0..40)
                .map(|line| format!("fn item_{i}_{line}() -> u32 {{ {line} }} // needle {line}\n"))
                .collect();
            (format!("src/m{i}.rs"), body)
        })
        .collect();
    let notes: String = (0..200)
        .map(|n| format!("{n:04} a line of notes for the agents to read\n"))
        .collect();
    files.push(("notes.txt".into(), notes));
    files
}

fn agent_calls(n: usize, background: bool) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut input = json!({"description": format!("job {i}"),
                                   "prompt": format!("Do job {i} and report.")});
            if background {
                input["run_in_background"] = json!(true);
            }
            json!({"tool_use": {"name": "Agent", "input": input}})
        })
        .collect()
}

/// One turn of the main agent starts `n` working subagents; it sums up when they are done.
fn fanout(n: usize) -> Spec {
    let mut rules = child_rules();
    rules.push(resume_rule());
    rules.push(json!({"name": "summary", "when": {"has_tool_result": true},
                      "respond": [{"text": "all jobs done"}]}));
    rules.push(json!({"name": "fanout", "respond": agent_calls(n, false)}));
    let mut spec = base(format!("fanout-{n}"), "Run the jobs.".into(), rules);
    // Thousands of agents: no request bodies kept, no validation, no cache simulation.
    spec.model["validate_requests"] = json!(n <= 200);
    spec.model["request_log"] = json!(if n <= 200 { "full" } else { "count_only" });
    spec.model["cache"] = json!({"enabled": false});
    spec.env
        .push(("FLEET_MAX_CONCURRENT_SUBAGENTS".into(), n.to_string()));
    // Generous: a debug build beside busy loops takes ~100 s for 2,000 agents. A hang is
    // usually caught sooner, by the idle limit (no request, no CPU for 60 s).
    spec.deadline = Duration::from_secs(120 + (n as u64) / 8);
    spec.result = "all jobs done";
    spec.rule_counts = vec![("child-done", n), ("child-work", n)];
    spec.files = project_files();
    spec
}

/// A fan-out whose children meet every fault the API and the network produce, each a few
/// times; all are retried, so the run must still succeed.
fn faults(n: usize) -> Spec {
    // A fault answers a child's first request; what it answers when it completes (a slow
    // or stalled reply) is the child's work, so every child still does it and reports.
    let child = json!({"system_contains": CHILD_MARK, "has_tool_result": false});
    let work = child_rules()
        .pop()
        .map(|r| r["respond"].clone())
        .unwrap_or_default();
    let fault = |name: &str, times: u32, extra: Value| {
        let mut rule = json!({"name": name, "when": child, "times": times, "respond": work});
        if let (Value::Object(rule), Value::Object(extra)) = (&mut rule, extra) {
            rule.extend(extra);
        }
        rule
    };
    let mut rules = vec![
        fault("overloaded-529", 3, json!({"fault": {"status": 529}})),
        fault(
            "rate-limited-429",
            2,
            json!({"fault": {"status": 429, "retry_after_ms": 200}}),
        ),
        fault("server-500", 2, json!({"fault": {"status": 500}})),
        fault(
            "dropped-stream",
            3,
            json!({"fault": {"drop_after_events": 3}}),
        ),
        fault(
            "sse-overloaded",
            2,
            json!({"fault": {"sse_error": {"type": "overloaded_error"}, "after_events": 2}}),
        ),
        fault("slow-first-token", 3, json!({"first_event_delay_ms": 1500})),
        fault(
            "stall-mid-stream",
            3,
            json!({"fault": {"stall_after_events": 3, "stall_ms": 1500}}),
        ),
        fault(
            "stall-forever",
            2,
            json!({"fault": {"stall_after_events": 2}}),
        ),
        fault(
            "connection-reset",
            3,
            json!({"fault": {"reset_after_events": 3}}),
        ),
    ];
    rules.extend(child_rules());
    rules.push(json!({"name": "summary", "when": {"has_tool_result": true},
                      "respond": [{"text": "all jobs done"}]}));
    rules.push(json!({"name": "fanout", "respond": agent_calls(n, false)}));
    let mut spec = base("faults".into(), "Run the jobs.".into(), rules);
    spec.env.extend([
        ("FLEET_MAX_CONCURRENT_SUBAGENTS".into(), n.to_string()),
        ("FLEET_MAX_RETRIES".into(), "8".into()),
        ("FLEET_RETRY_BASE_DELAY_MS".into(), "50".into()),
        // A stalled stream is abandoned (and retried) after this long without a byte.
        ("FLEET_STREAM_IDLE_TIMEOUT_MS".into(), "4000".into()),
    ]);
    spec.deadline = Duration::from_secs(120);
    spec.result = "all jobs done";
    spec.rule_counts = vec![("child-done", n)];
    spec.files = project_files();
    spec
}

/// The main agent starts `n` background agents (each runs a short command) and ends its
/// turn; every one must report with a task notification, and the run ends after them.
fn background(n: usize) -> Spec {
    let rules = vec![
        json!({"name": "child-done", "when": {"system_contains": CHILD_MARK, "has_tool_result": true},
               "respond": [{"text": "background job done"}]}),
        json!({"name": "child-work", "when": {"system_contains": CHILD_MARK, "has_tool_result": false},
               "respond": [{"tool_use": {"name": "Bash", "input": {"command": "sleep 1; echo BG-WORKED"}}}]}),
        resume_rule(),
        json!({"name": "notified", "when": {"last_user_contains": "<task-notification>"},
               "respond": [{"text": "MAIN-SAW-IT"}]}),
        json!({"name": "waiting", "when": {"tool_result_contains": "background"},
               "respond": [{"text": "MAIN-WAITING"}]}),
        json!({"name": "start", "when": {"has_tool_result": false},
               "respond": agent_calls(n, true)}),
    ];
    let mut spec = base("background".into(), "Start the jobs.".into(), rules);
    spec.env
        .push(("FLEET_MAX_CONCURRENT_SUBAGENTS".into(), n.to_string()));
    spec.deadline = Duration::from_secs(90);
    spec.result = "MAIN-SAW-IT";
    spec.rule_counts = vec![("child-done", n)];
    spec.persisted = vec!["BG-WORKED".into()];
    spec.tasks_report = true;
    spec
}

/// A lead creates a team and one teammate; the teammate mails its report, the lead asks it
/// to shut down, it approves, the lead ends.
fn team() -> Spec {
    let alpha = |when: Value, respond: Value| {
        let mut w = json!({"marker": "ALPHA-START"});
        if let (Value::Object(w), Value::Object(extra)) = (&mut w, when) {
            w.extend(extra);
        }
        json!({"when": w, "respond": [respond]})
    };
    let lead = |when: Value, respond: Value, times: Option<u32>| {
        let mut w = json!({"marker": "TEAM-SOAK"});
        if let (Value::Object(w), Value::Object(extra)) = (&mut w, when) {
            w.extend(extra);
        }
        let mut rule = json!({"when": w, "respond": [respond]});
        if let Some(t) = times {
            rule["times"] = json!(t);
        }
        rule
    };
    let send = |to: &str, message: Value| json!({"tool_use": {"name": "SendMessage", "input": {"to": to, "message": message}}});
    let rules = vec![
        alpha(
            json!({"last_user_contains": "shutdown_request"}),
            send(
                "team-lead",
                json!({"type": "shutdown_response", "approve": true}),
            ),
        ),
        alpha(
            json!({"tool_result_contains": "team-lead's inbox"}),
            json!({"text": "ALPHA-IDLE"}),
        ),
        alpha(
            json!({"has_tool_result": false}),
            send("team-lead", json!("ALPHA-REPORT: the work is done")),
        ),
        alpha(json!({}), json!({"text": "ALPHA-NOTED"})),
        lead(
            json!({"last_user_contains": "alpha has shut down"}),
            json!({"text": "ALL-DONE"}),
            None,
        ),
        lead(
            json!({"last_user_contains": "ALPHA-REPORT"}),
            send(
                "alpha",
                json!({"type": "shutdown_request", "reason": "SOAK-DONE"}),
            ),
            Some(1),
        ),
        lead(
            json!({"tool_result_contains": "created with you as lead"}),
            json!({"tool_use": {"name": "Agent", "input": {"description": "member", "name": "alpha",
                   "prompt": "ALPHA-START: report to the lead"}}}),
            None,
        ),
        lead(
            json!({"has_tool_result": false}),
            json!({"tool_use": {"name": "TeamCreate", "input": {"team_name": "Soak Team", "description": "soak"}}}),
            Some(1),
        ),
        lead(json!({}), json!({"text": "LEAD-NOTED"}), None),
    ];
    let mut spec = base("team".into(), "TEAM-SOAK: run the team".into(), rules);
    spec.result = "ALL-DONE";
    spec.persisted = vec!["ALPHA-REPORT".into()];
    spec
}

/// The main agent reads a file through an MCP server (`fleet mcp serve`, a stdio child),
/// which must be gone when the session ends.
fn mcp(exe: &str) -> Spec {
    let rules = vec![
        json!({"name": "mcp-done", "when": {"tool_result_contains": "MCP-FILE-TEXT"},
               "respond": [{"text": "MCP-DONE"}]}),
        json!({"name": "mcp-call", "when": {"has_tool_result": false},
               "respond": [{"tool_use": {"name": "mcp__soak__Read", "input": {"file_path": "{REPO}/mcp.txt"}}}]}),
    ];
    let mut spec = base("mcp".into(), "Read it over MCP.".into(), rules);
    let config = json!({"mcpServers": {"soak": {"command": exe, "args": ["mcp", "serve"]}}});
    spec.args.extend([
        "--mcp-config".into(),
        config.to_string(),
        "--allowedTools".into(),
        "mcp__soak".into(),
    ]);
    spec.env.push(("MCP_TIMEOUT".into(), "20000".into()));
    spec.result = "MCP-DONE";
    spec.files = vec![("mcp.txt".into(), "MCP-FILE-TEXT\n".into())];
    spec
}
