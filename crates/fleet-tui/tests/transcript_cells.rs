//! The transcript's cells, drawn: streaming text, tool calls and their folded results,
//! thinking, refusals, retries, errors and the UI's own lines.

use crate::transcript_fixtures;

use fleet_protocol::{
    CompactBoundary, CompactTrigger, DeniedCall, EventKind, HookNote, ResultSubtype, RunResult,
    Usage,
};
use fleet_tui::port::NoticeLevel;
use fleet_tui::transcript::Transcript;
use serde_json::json;
use std::collections::BTreeMap;
use transcript_fixtures::*;

fn failed_run(subtype: ResultSubtype, why: &str) -> RunResult {
    RunResult {
        subtype,
        result: why.into(),
        num_turns: 3,
        duration_ms: 1000,
        duration_api_ms: 900,
        total_cost_usd: 0.5,
        usage: Usage::default(),
        model_usage: BTreeMap::new(),
        permission_denials: Vec::new(),
        stop_reason: None,
        api_error_status: None,
        session_id: "s1".into(),
        origin: None,
        tree: None,
        terminal_reason: None,
        structured_output: None,
    }
}

#[test]
fn streamed_text_appears_as_it_arrives_and_settles() {
    let mut t = Transcript::new();
    t.apply(&main(prompt("explain the crate")));
    t.apply(&main(delta("The crate ")));
    let first = screen(&mut t, 80, 6);
    assert!(first.contains("› explain the crate"), "{first}");
    assert!(first.contains("The crate"), "{first}");
    assert!(!first.contains("reads events"), "{first}");

    t.apply(&main(delta("reads events")));
    let second = screen(&mut t, 80, 6);
    assert!(second.contains("The crate reads events"), "{second}");

    t.apply(&main(text_block("The crate reads events.")));
    t.apply(&main(reply(
        vec![fleet_protocol::ContentBlock::text(
            "The crate reads events.",
        )],
        usage(100, 20),
    )));
    let settled = screen(&mut t, 80, 6);
    assert_eq!(
        settled.matches("The crate reads events.").count(),
        1,
        "{settled}"
    );
    insta::assert_snapshot!("streamed_text", settled);
}

#[test]
fn a_reply_without_deltas_is_shown_from_its_committed_message() {
    let mut t = Transcript::new();
    t.apply(&main(reply(
        vec![
            fleet_protocol::ContentBlock::text("No stream here."),
            fleet_protocol::ContentBlock::tool_use("t1", "Read", read_input("src/lib.rs")),
        ],
        usage(10, 2),
    )));
    let text = screen(&mut t, 80, 6);
    assert!(text.contains("No stream here."), "{text}");
    assert!(text.contains("● Read("), "{text}");
    assert!(text.contains("src/lib.rs"), "{text}");
}

#[test]
fn a_tool_call_runs_then_shows_its_result_folded_and_ctrl_o_expands_it() {
    let mut t = Transcript::new();
    t.apply(&main(tool_use("t1", "Grep", json!({ "pattern": "match" }))));
    let running = screen(&mut t, 80, 4);
    assert!(running.contains("● Grep("), "{running}");
    assert!(running.contains("running…"), "{running}");

    let output: Vec<String> = (1..=30).map(|i| format!("match {i:02}")).collect();
    t.apply(&main(tool_result("t1", "Grep", &output.join("\n"), false)));
    let folded = screen(&mut t, 80, 12);
    assert!(!folded.contains("running…"), "{folded}");
    assert!(folded.contains("match 01"), "{folded}");
    assert!(!folded.contains("match 15"), "{folded}");
    insta::assert_snapshot!("tool_result_folded", folded);

    t.toggle_expanded();
    assert!(t.expanded());
    let expanded = screen(&mut t, 80, 40);
    assert!(expanded.contains("match 15"), "{expanded}");
    assert!(expanded.contains("match 30"), "{expanded}");

    t.toggle_expanded();
    let again = screen(&mut t, 80, 12);
    assert_eq!(again, folded);
}

#[test]
fn thinking_is_one_dim_line_until_expanded() {
    let mut t = Transcript::new();
    t.apply(&main(EventKind::ThinkingDelta("weigh the options".into())));
    t.apply(&main(delta("Done.")));
    let folded = screen(&mut t, 80, 5);
    assert!(folded.contains("✻ Thinking…"), "{folded}");
    assert!(!folded.contains("weigh the options"), "{folded}");
    assert!(folded.contains("Done."), "{folded}");
    t.toggle_expanded();
    let expanded = screen(&mut t, 80, 6);
    assert!(expanded.contains("weigh the options"), "{expanded}");
}

#[test]
fn a_refused_call_is_marked_refused_not_running() {
    let mut t = Transcript::new();
    t.apply(&main(tool_use(
        "t1",
        "Bash",
        json!({ "command": "rm -rf build" }),
    )));
    t.apply(&main(EventKind::PermissionDenied(DeniedCall {
        tool_name: "Bash".into(),
        tool_use_id: "t1".into(),
        message: "Permission to use Bash was denied.".into(),
        reason_type: fleet_protocol::PermissionReasonType::User,
    })));
    t.apply(&main(tool_result(
        "t1",
        "Bash",
        "Permission to use Bash was denied.",
        true,
    )));
    let text = screen(&mut t, 80, 4);
    assert!(text.contains("● Bash("), "{text}");
    assert!(
        text.contains("refused: Permission to use Bash was denied."),
        "{text}"
    );
    assert!(!text.contains("running…"), "{text}");
    assert_eq!(text.matches("was denied").count(), 1, "{text}");
}

#[test]
fn a_call_waiting_for_approval_says_so_until_answered() {
    let mut t = Transcript::new();
    t.apply(&main(tool_use(
        "t1",
        "Write",
        json!({ "file_path": "a.txt", "content": "x" }),
    )));
    let approval = |waiting| {
        main(EventKind::Approval {
            tool_use_id: "t1".into(),
            tool_name: "Write".into(),
            waiting,
        })
    };
    t.apply(&approval(true));
    let text = screen(&mut t, 80, 3);
    assert!(text.contains("waiting for approval…"), "{text}");
    t.apply(&approval(false));
    let text = screen(&mut t, 80, 3);
    assert!(text.contains("running…"), "{text}");
    assert!(!text.contains("waiting"), "{text}");
}

#[test]
fn a_retry_drops_the_partial_text_and_warns() {
    let mut t = Transcript::new();
    t.apply(&main(delta("half a sent")));
    t.apply(&main(EventKind::Retry {
        attempt: 2,
        max_attempts: 5,
        delay_ms: 2000,
        reason: "overloaded".into(),
        scope: fleet_protocol::RetryScope::Request,
        error_status: None,
    }));
    t.apply(&main(delta("A whole answer.")));
    let text = screen(&mut t, 80, 6);
    assert!(!text.contains("half a sent"), "{text}");
    assert!(
        text.contains("⚠ Retrying in 2.0s (attempt 2/5): overloaded"),
        "{text}"
    );
    assert!(text.contains("A whole answer."), "{text}");
}

#[test]
fn warnings_errors_and_the_compaction_rule() {
    let mut t = Transcript::new();
    t.apply(&main(EventKind::ModelFallback {
        from: "opus".into(),
        to: "sonnet".into(),
        reason: "overloaded".into(),
    }));
    let hook = |outcome: &str, name: &str| {
        main(EventKind::Hook(HookNote::HookResponse {
            hook_id: "h".into(),
            hook_name: name.into(),
            hook_event: "PreToolUse".into(),
            output: "lint failed".into(),
            stdout: String::new(),
            stderr: "lint failed".into(),
            exit_code: Some(1),
            outcome: outcome.into(),
        }))
    };
    t.apply(&hook("success", "quiet-hook"));
    t.apply(&hook("error", "lint"));
    t.apply(&main(EventKind::CompactBoundary(CompactBoundary {
        trigger: CompactTrigger::Auto,
        pre_tokens: 150_000,
        post_tokens: 9_000,
        messages: Vec::new(),
    })));
    t.apply(&main(EventKind::Finished(failed_run(
        ResultSubtype::ErrorMaxTurns,
        "Reached the maximum number of turns (3)",
    ))));
    let text = screen(&mut t, 60, 12);
    assert!(
        text.contains("⚠ Switched from opus to sonnet: overloaded"),
        "{text}"
    );
    assert!(!text.contains("quiet-hook"), "{text}");
    assert!(
        text.contains("⚠ Hook lint (PreToolUse) failed: lint failed"),
        "{text}"
    );
    assert!(text.contains("── compacted ──"), "{text}");
    assert!(
        text.contains("✗ error_max_turns: Reached the maximum number of turns (3)"),
        "{text}"
    );
    insta::assert_snapshot!("warnings_and_errors", text);
    let main_agent = &t.agents()[0];
    assert_eq!(main_agent.cost_usd, Some(0.5));
}

#[test]
fn notices_shell_commands_and_pushed_lines() {
    let mut t = Transcript::new();
    t.push_notice(NoticeLevel::Info, "Session saved.");
    t.push_notice(NoticeLevel::Error, "No such session: abc");
    let output: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    t.push_shell("ls -l", &output.join("\n"), Some(2));
    t.push_lines(vec![ratatui::text::Line::from("/help — commands")]);
    let text = screen(&mut t, 80, 20);
    assert!(text.contains("Session saved."), "{text}");
    assert!(text.contains("✗ No such session: abc"), "{text}");
    assert!(text.contains("! ls -l"), "{text}");
    assert!(text.contains("line 12"), "{text}");
    assert!(!text.contains("line 3\n"), "{text}");
    assert!(text.contains("… 7 lines above"), "{text}");
    assert!(text.contains("exit code 2"), "{text}");
    assert!(text.contains("/help — commands"), "{text}");
    insta::assert_snapshot!("notices_and_shell", text);

    t.clear();
    assert!(screen(&mut t, 80, 5).trim().is_empty());
}

#[test]
fn narrow_widths_wrap_and_tiny_ones_do_not_panic() {
    let mut t = Transcript::new();
    t.apply(&main(prompt(
        "please read the library file and summarise it",
    )));
    t.apply(&main(tool_use(
        "t1",
        "Read",
        read_input("crates/fleet-tui/src/lib.rs"),
    )));
    t.apply(&main(tool_result(
        "t1",
        "Read",
        "//! fleet's terminal UI",
        false,
    )));
    t.apply(&main(text_block(
        "It is the terminal UI of fleet, between the runtime and the binary.",
    )));
    let narrow = rows(&mut t, 30, 14);
    assert!(narrow
        .iter()
        .all(|r| unicode_width::UnicodeWidthStr::width(r.as_str()) <= 30));
    let joined = narrow.join("\n");
    assert!(joined.contains("› please"), "{joined}");
    assert!(joined.contains("● Read("), "{joined}");
    insta::assert_snapshot!("narrow_30", joined);
    for width in [0, 1, 2] {
        for height in [0, 1, 3] {
            let _ = rows(&mut t, width, height);
        }
    }
    assert!(t.height(1) > 0);
    assert_eq!(t.height(0), t.height(0));
}
