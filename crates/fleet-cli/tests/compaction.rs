//! Compaction through the real binary: `/compact [focus]` as a prompt compacts a resumed
//! session, stream-json prints the `compact_boundary` line, the transcript records it, and the
//! next `--resume` starts from the summary instead of the whole history.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_runtime::compact::COMPACT_REQUEST_MARKER;
use fleet_testkit::{Rule, Scenario};

#[tokio::test]
async fn compact_as_a_prompt_compacts_the_session_and_resume_starts_from_the_boundary() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("SUMMARY-OF-SESSION: the user asked about a.txt.")
            .when_last_user_contains(COMPACT_REQUEST_MARKER)
            .named("summary"),
        Rule::text("carrying on").when_last_user_contains("what next"),
        Rule::text("first answer"),
    ]))
    .await;
    let id = "5e0c2f9e-3c1d-4d5e-9f00-1234567890ab";
    let out = project
        .run(&server, &["-p", "first question", "--session-id", id], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));

    let out = project
        .run(
            &server,
            &[
                "-p",
                "/compact keep the file names",
                "--resume",
                id,
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let boundary = lines
        .iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "compact_boundary")
        .unwrap_or_else(|| panic!("no compact_boundary line: {lines:?}"));
    assert_eq!(boundary["session_id"], id);
    assert_eq!(boundary["compact_metadata"]["trigger"], "manual");
    assert!(boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap() > 0);
    assert_eq!(result_of(&lines)["subtype"], "success");

    // The summary request: the conversation, then the instruction with the user's focus; the
    // command itself never reaches the model.
    let summary = server.last_request().unwrap().body;
    let sent = summary["messages"].to_string();
    assert!(sent.contains(COMPACT_REQUEST_MARKER));
    assert!(sent.contains("keep the file names"));
    assert!(!sent.contains("/compact"));

    // The transcript holds the boundary, and a resumed session reads from it.
    let transcript = std::fs::read_to_string(&project.transcripts()[0]).unwrap();
    assert!(transcript.contains("\"subtype\":\"compact_boundary\""));
    assert!(transcript.contains("\"isCompactSummary\":true"));
    let out = project
        .run(&server, &["-p", "what next", "--resume", id], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "carrying on\n");
    let messages = server.last_request().unwrap().body["messages"].clone();
    let messages = messages.as_array().unwrap();
    assert!(messages[0].to_string().contains("SUMMARY-OF-SESSION"));
    assert!(
        !messages
            .iter()
            .any(|m| m.to_string().contains("first question")),
        "the history before the boundary was sent again: {messages:?}"
    );
    assert!(messages.last().unwrap().to_string().contains("what next"));
}

#[tokio::test]
async fn compacting_an_empty_session_is_a_clear_error() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("unused")])).await;
    let out = project
        .run(&server, &["-p", "/compact", "--output-format", "json"], "")
        .await;
    assert!(!out.status.success());
    let lines = json_lines(&out);
    let result = result_of(&lines);
    assert_eq!(result["is_error"], true);
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("nothing to compact"),
        "{result}"
    );
    assert_eq!(server.request_count(), 0, "no summary request for nothing");
}

#[tokio::test]
async fn a_session_past_its_autocompact_threshold_compacts_on_its_own() {
    let big = "a line of the big file, read again and again by the agent\n".repeat(700);
    let project = Project::new(&[("big.txt", big.as_str())]);
    let path = project.path("big.txt");
    let server = server(Scenario::with_rules([
        Rule::text("SUMMARY: big.txt was read twice.")
            .when_last_user_contains(COMPACT_REQUEST_MARKER)
            .named("summary"),
        Rule::tool_use("Read", serde_json::json!({"file_path": path}))
            .times(3)
            .named("read"),
        Rule::text("read it three times").named("done"),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "read big.txt three times",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("FLEET_AUTOCOMPACT_PCT", "10")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let first_size = server.requests()[0].body.to_string().len() / 4;
    let boundary = lines
        .iter()
        .find(|l| l["subtype"] == "compact_boundary")
        .unwrap_or_else(|| panic!("no compaction (first request ~{first_size} tokens)"));
    assert_eq!(boundary["compact_metadata"]["trigger"], "auto");
    assert!(boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap() > 16_000);
    let result = result_of(&lines);
    assert_eq!(result["result"], "read it three times", "{result}");
    // The request after the compaction starts with the summary.
    let last = server.last_request().unwrap().body;
    assert!(last["messages"][0]
        .to_string()
        .contains("SUMMARY: big.txt was read twice."));
    let transcript = std::fs::read_to_string(&project.transcripts()[0]).unwrap();
    assert!(transcript.contains("\"trigger\":\"auto\""));
}

/// Every file under `dir` whose text contains `needle`.
fn files_containing(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle)) {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn a_subagent_compacts_its_own_conversation() {
    let big = "a line of the big file, read again and again by the agent\n".repeat(700);
    let project = Project::new(&[("big.txt", big.as_str())]);
    let path = project.path("big.txt");
    let server = server(Scenario::with_rules([
        Rule::text("SUMMARY: the subagent read big.txt.")
            .when_last_user_contains(COMPACT_REQUEST_MARKER)
            .named("summary"),
        Rule::tool_use("Read", serde_json::json!({"file_path": path}))
            .when_marker("SUB-JOB")
            .times(3)
            .named("sub-read"),
        Rule::text("sub done")
            .when_marker("SUB-JOB")
            .named("sub-done"),
        Rule::text("main done")
            .when_tool_result(true)
            .named("main-done"),
        Rule::tool_use(
            "Agent",
            serde_json::json!({"description": "read", "prompt": "SUB-JOB: read big.txt three times",
                               "subagent_type": "general-purpose"}),
        )
        .named("main-start"),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "delegate the reading",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("FLEET_AUTOCOMPACT_PCT", "10")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(result_of(&lines)["result"], "main done");
    let boundaries: Vec<_> = lines
        .iter()
        .filter(|l| l["subtype"] == "compact_boundary")
        .collect();
    assert!(!boundaries.is_empty(), "the subagent never compacted");
    for boundary in &boundaries {
        assert!(
            boundary["parent_tool_use_id"].is_string(),
            "not marked as the subagent's: {boundary}"
        );
    }
    // Its own transcript records the boundary; the session's does not (the main agent never
    // compacted).
    let recorded = files_containing(&project.fleet_home, "\"subtype\":\"compact_boundary\"");
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let sessions: Vec<_> = project
        .transcripts()
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(!sessions.is_empty());
    assert!(
        sessions.iter().all(|s| !recorded.contains(s)),
        "{recorded:?} {sessions:?}"
    );
}

#[tokio::test]
async fn a_pre_compact_hook_runs_and_its_words_reach_the_summary_request() {
    let hooks = serde_json::json!({"hooks": {"PreCompact": [{"matcher": "", "hooks": [{
        "type": "command",
        "command": "cat > pre-compact.json; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreCompact\", \"additionalContext\": \"HOOK-SAYS: keep the test names\"}}'"
    }]}]}})
    .to_string();
    let project =
        Project::new(&[("a.txt", "x\n"), (".claude/settings.json", hooks.as_str())]).trusting();
    let server = server(Scenario::with_rules([
        Rule::text("SUMMARY: about a.txt.").when_last_user_contains(COMPACT_REQUEST_MARKER),
        Rule::text("first answer"),
    ]))
    .await;
    let id = "6f1d3a0f-4d2e-4e6f-8a11-234567890abc";
    let out = project
        .run(&server, &["-p", "first question", "--session-id", id], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = project
        .run(&server, &["-p", "/compact", "--resume", id], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.path("pre-compact.json")).unwrap())
            .unwrap();
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "manual");
    let sent = server.last_request().unwrap().body["messages"].to_string();
    assert!(sent.contains(COMPACT_REQUEST_MARKER));
    assert!(sent.contains("HOOK-SAYS: keep the test names"), "{sent}");
}
