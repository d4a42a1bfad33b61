//! The text printer, quiet and verbose, on the basic and background sessions.

#![allow(clippy::unwrap_used)]

use super::super::fixtures::*;
use super::format::{call_summary, compact_count, short_id, tree_summary};
use super::*;
use fleet_protocol::{
    PermissionNote, ResultSubtype, RunResult, SubagentStats, ToolResultEvent, TreeReport,
};
use serde_json::json;

/// What the printer writes to stdout.
fn run(events: &[AgentEvent], verbose: bool) -> String {
    run_split(events, verbose).0
}

/// What the printer writes to stdout and to stderr.
fn run_split(events: &[AgentEvent], verbose: bool) -> (String, String) {
    let (out, err) = (SharedBuf::default(), SharedBuf::default());
    let mut printer =
        TextPrinter::with_errors(Box::new(out.clone()), Box::new(err.clone()), verbose);
    for event in events {
        printer.event(event).unwrap();
    }
    printer.finish().unwrap();
    (out.text(), err.text())
}

fn failed(id: &str, content: &str) -> AgentEvent {
    main_event(EventKind::ToolResult(ToolResultEvent {
        tool_use_id: id.into(),
        tool_name: "Read".into(),
        content: content.into(),
        is_error: true,
        structured: None,
        permission: PermissionNote {
            decision: fleet_protocol::PermissionDecision::Accept,
            reason_type: fleet_protocol::PermissionReasonType::Mode,
            rule: None,
        },
    }))
}

#[test]
fn prints_only_the_final_answer() {
    assert_eq!(run(&basic_session(), false), "DONE: hello fleet\n");
}

#[test]
fn a_structured_answer_prints_as_its_json() {
    let mut result = run_result(ResultSubtype::Success, "Here it is.");
    result.structured_output = Some(serde_json::json!({"name": "Ada"}));
    let events = [main_event(EventKind::Finished(result))];
    assert_eq!(run(&events, false), "{\"name\":\"Ada\"}\n");
}

#[test]
fn an_error_result_goes_to_stderr_never_to_stdout_as_an_answer() {
    let events = [main_event(EventKind::Finished(run_result(
        ResultSubtype::ErrorDuringExecution,
        "API error: anthropic 401 authentication_error: invalid x-api-key",
    )))];
    for verbose in [false, true] {
        assert_eq!(
            run_split(&events, verbose),
            (
                String::new(),
                "fleet: API error: anthropic 401 authentication_error: invalid x-api-key\n".into()
            )
        );
    }
}

#[test]
fn subagent_answers_are_not_printed() {
    let mut events = basic_session();
    events.insert(
        3,
        sub_event(EventKind::Finished(run_result(
            ResultSubtype::Success,
            "CHILD",
        ))),
    );
    events.insert(3, sub_event(EventKind::TextDelta("CHILD".into())));
    assert_eq!(run(&events, false), "DONE: hello fleet\n");
    assert!(!run(&events, true).contains("CHILD"));
}

#[test]
fn verbose_narrates_text_tool_calls_and_the_answer_once() {
    let out = run(&basic_session(), true);
    assert_eq!(
        out,
        "Reading the file.\n\
         ● Read(/home/user/project/hello.txt)\n  ⎿ 1  hello world\n    2\n\
         ● Edit(/home/user/project/hello.txt)\n  ⎿ The file was updated.\n\
         ● Bash(cat hello.txt)\n  ⎿ hello fleet\n\
         DONE: hello fleet\n"
    );
}

#[test]
fn verbose_shows_unstreamed_text_errors_and_retries() {
    let events = [
        main_event(started()),
        main_event(EventKind::Retry {
            attempt: 2,
            max_attempts: 9,
            delay_ms: 1500,
            reason: "529 Overloaded\nbody follows".into(),
            scope: fleet_protocol::RetryScope::Request,
            error_status: None,
        }),
        main_event(block("m1", ContentBlock::text("Looking."), 10)),
        main_event(block(
            "m1",
            ContentBlock::tool_use("t1", "Read", serde_json::json!({ "file_path": "/nope" })),
            10,
        )),
        failed(
            "t1",
            "\nFile does not exist: /nope.\nDid you mean /nope.txt?",
        ),
        main_event(EventKind::Finished(run_result(
            ResultSubtype::ErrorMaxTurns,
            "Reached the turn limit (1).",
        ))),
    ];
    assert_eq!(
        run_split(&events, true),
        (
            "Looking.\n\
             ● Read(/nope)\n  ⎿ error: File does not exist: /nope.\n"
                .into(),
            "fleet: ↻ 529 Overloaded: retrying in 1s 500ms (retry 1 of 8)\n\
             fleet: Reached the turn limit (1).\n"
                .into()
        )
    );
}

#[test]
fn retries_count_from_one_and_a_whole_turn_retry_says_so() {
    let retry = |attempt, scope| {
        main_event(EventKind::Retry {
            attempt,
            max_attempts: 3,
            delay_ms: 2000,
            reason: "the reply broke off".into(),
            scope,
            error_status: None,
        })
    };
    let events = [
        retry(2, fleet_protocol::RetryScope::Request),
        retry(3, fleet_protocol::RetryScope::Turn),
    ];
    let said = "fleet: ↻ the reply broke off: retrying in 2s (retry 1 of 2)\n\
                fleet: ↻ the reply broke off: asking for the whole turn again in 2s (retry 2 of 2)\n";
    // On stderr as they happen, quiet or verbose; stdout stays the answer's.
    assert_eq!(run_split(&events, true), (String::new(), said.into()));
    assert_eq!(run_split(&events, false), (String::new(), said.into()));
}

#[test]
fn a_quiet_run_shows_a_subagents_retry_tagged_and_still_prints_the_answer() {
    let child = sub_event(EventKind::Retry {
        attempt: 2,
        max_attempts: 2,
        delay_ms: 1000,
        reason: "cannot resolve the host `x.invalid`".into(),
        scope: fleet_protocol::RetryScope::Request,
        error_status: None,
    });
    let mut events = vec![child];
    events.extend(basic_session());
    let (out, err) = run_split(&events, false);
    assert_eq!(out, "DONE: hello fleet\n");
    assert!(
        err.starts_with("fleet: ↳ [general-purpose ")
            && err.contains(
                "] ↻ cannot resolve the host `x.invalid`: retrying in 1s (retry 1 of 1)\n"
            ),
        "{err}"
    );
}

#[test]
fn summaries_are_one_short_line() {
    let long = "x".repeat(100);
    let input = serde_json::json!({ "command": format!("{long}\nsecond line") });
    let summary = call_summary("Bash", &input);
    assert_eq!(summary, format!("Bash({}…)", "x".repeat(80)));
    assert_eq!(
        call_summary("TodoWrite", &serde_json::json!({})),
        "TodoWrite"
    );
}

#[test]
fn a_closed_pipe_is_an_io_error() {
    let mut printer = TextPrinter::new(Box::new(ClosedPipe), false);
    for event in basic_session() {
        printer.event(&event).unwrap();
    }
    let err = printer.finish().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
}

fn finished(result: RunResult) -> AgentEvent {
    main_event(EventKind::Finished(result))
}

fn agent(id: &str, parent: &str, kind: &str, kind_of_event: EventKind) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::subagent(id, parent, kind, "a job"),
        kind: kind_of_event,
    }
}

#[test]
fn quiet_prints_only_the_last_runs_answer() {
    assert_eq!(run(&background_session(), false), "MAIN-SAW-NOTIFICATION\n");
}

#[test]
fn quiet_still_shows_an_earlier_runs_error_before_the_last_answer() {
    let events = [
        finished(run_result(
            ResultSubtype::ErrorMaxTurns,
            "Reached the turn limit (4).",
        )),
        finished(run_result(ResultSubtype::Success, "first answer")),
        finished(run_result(ResultSubtype::Success, "final answer")),
    ];
    assert_eq!(
        run_split(&events, false),
        (
            "final answer\n".into(),
            "fleet: Reached the turn limit (4).\n".into()
        )
    );
}

#[test]
fn verbose_background_session_announces_the_task_and_sums_up_the_tree() {
    assert_eq!(
        run(&background_session(), true),
        "● Agent(background job)\n\
         ⧗ background task a77ebf2 started: background job\n\
         \x20 ⎿ Started in the background.\n\
         MAIN-WAITING\n\
         \x20 ↳ [general-purpose a77ebf2] CHILD-RESULT-42\n\
         ✓ task a77ebf2 completed\n\
         MAIN-SAW-NOTIFICATION\n\
         1 subagent · $0.1837 · 45.8k tokens\n"
    );
}

#[test]
fn verbose_indents_subagent_work_under_the_call_one_step_per_level() {
    let spawn = |id: &str, description: &str| {
        ContentBlock::tool_use(id, "Agent", json!({ "description": description }))
    };
    let read = ContentBlock::tool_use("t1", "Read", json!({ "file_path": "src/lib.rs" }));
    let grep = ContentBlock::tool_use("t2", "Grep", json!({ "pattern": "fn main" }));
    let missing = ToolResultEvent {
        tool_use_id: "t1".into(),
        tool_name: "Read".into(),
        content: "File does not exist: src/lib.rs".into(),
        is_error: true,
        structured: None,
        permission: PermissionNote {
            decision: fleet_protocol::PermissionDecision::Accept,
            reason_type: fleet_protocol::PermissionReasonType::Mode,
            rule: None,
        },
    };
    let found = tool_result("t3", "Grep", "src/main.rs:1", None);
    let mut tree = TreeReport {
        total_cost_usd: 0.01234,
        ..TreeReport::default()
    };
    tree.subagent_stats.spawned = 2;
    tree.model_usage.insert(MODEL.into(), Default::default());
    let mut answer = run_result(ResultSubtype::Success, "DONE");
    answer.tree = Some(tree);
    let events = [
        main_event(block("m1", spawn("toolu_s1", "scan"), 10)),
        agent("b5c6d7e8f9", "toolu_s1", "Explore", started()),
        agent(
            "b5c6d7e8f9",
            "toolu_s1",
            "Explore",
            EventKind::TextDelta("Looking".into()),
        ),
        agent("b5c6d7e8f9", "toolu_s1", "Explore", block("s1", read, 10)),
        agent(
            "b5c6d7e8f9",
            "toolu_s1",
            "Explore",
            EventKind::ToolResult(missing.clone()),
        ),
        agent(
            "b5c6d7e8f9",
            "toolu_s1",
            "Explore",
            block("s1", spawn("toolu_s2", "deeper"), 10),
        ),
        agent("c1", "toolu_s2", "general-purpose", block("s2", grep, 10)),
        agent("c1", "toolu_s2", "general-purpose", found),
        agent(
            "b5c6d7e8f9",
            "toolu_s1",
            "Explore",
            block("s1", ContentBlock::text("Found it.\nIn main."), 10),
        ),
        agent(
            "b5c6d7e8f9",
            "toolu_s1",
            "Explore",
            finished(run_result(ResultSubtype::Success, "Found it.")).kind,
        ),
        main_event(tool_result("toolu_s1", "Agent", "Found it.", None)),
        finished(answer),
    ];
    assert_eq!(
        run(&events, true),
        "● Agent(scan)\n\
         \x20 ↳ [Explore b5c6d7e] ● Read(src/lib.rs)\n\
         \x20 ↳ [Explore b5c6d7e] ⎿ error: File does not exist: src/lib.rs\n\
         \x20 ↳ [Explore b5c6d7e] ● Agent(deeper)\n\
         \x20   ↳ [general-purpose c1] ● Grep(fn main)\n\
         \x20 ↳ [Explore b5c6d7e] Found it.\n\
         \x20 ⎿ Found it.\n\
         DONE\n\
         2 subagents · $0.0123 · 0 tokens\n"
    );
    // The quiet printer shows none of it.
    assert_eq!(run(&events, false), "DONE\n");
}

#[test]
fn verbose_marks_failed_and_killed_tasks_and_says_why_one_failed() {
    let updated = |status| {
        main_event(EventKind::TaskUpdated {
            task_id: CHILD.into(),
            status,
            end_time_ms: None,
        })
    };
    let events = [
        updated(TaskStatus::Running),
        updated(TaskStatus::Failed),
        main_event(EventKind::TaskNotified(notification(
            TaskStatus::Failed,
            "API error 529: Overloaded",
        ))),
        updated(TaskStatus::Killed),
        main_event(EventKind::TaskNotified(notification(
            TaskStatus::Killed,
            "",
        ))),
    ];
    assert_eq!(
        run(&events, true),
        "✗ task a77ebf2 failed\n\
         \x20 ⎿ API error 529: Overloaded\n\
         ■ task a77ebf2 killed\n"
    );
}

#[test]
fn a_tree_without_subagents_gets_no_summary_line() {
    let mut result = run_result(ResultSubtype::Success, "DONE");
    result.tree = Some(TreeReport::default());
    assert_eq!(run(&[finished(result.clone())], true), "DONE\n");
    assert_eq!(tree_summary(&TreeReport::default()), None);
    let mut tree = tree(true);
    tree.subagent_stats = SubagentStats {
        spawned: 3,
        ..SubagentStats::default()
    };
    assert_eq!(
        tree_summary(&tree).unwrap(),
        "3 subagents · $0.1837 · 45.8k tokens"
    );
}

#[test]
fn the_tree_summary_says_when_usage_was_not_reported() {
    let mut tree = TreeReport::default();
    tree.subagent_stats.spawned = 2;
    let mut local = fleet_protocol::ModelUsage::default();
    local.add_reply(&fleet_protocol::Usage::unreported(), 0.0);
    tree.model_usage.insert("local".into(), local.clone());
    assert_eq!(
        tree_summary(&tree).unwrap(),
        "2 subagents · usage not reported"
    );
    // Some replies reported: their figures, and how many did not.
    local.add_reply(
        &fleet_protocol::Usage {
            input_tokens: 1500,
            output_tokens: 20,
            ..fleet_protocol::Usage::default()
        },
        0.0,
    );
    local.add_reply(&fleet_protocol::Usage::unreported(), 0.0);
    tree.model_usage.insert("local".into(), local);
    assert_eq!(
        tree_summary(&tree).unwrap(),
        "2 subagents · $0.0000 · 1.5k tokens (2 replies did not report usage)"
    );
}

#[test]
fn counts_and_ids_are_shortened_for_a_glance() {
    assert_eq!(compact_count(0), "0");
    assert_eq!(compact_count(999), "999");
    assert_eq!(compact_count(1_000), "1.0k");
    assert_eq!(compact_count(12_345), "12.3k");
    assert_eq!(compact_count(999_949), "999.9k");
    assert_eq!(compact_count(999_950), "1.0M");
    assert_eq!(compact_count(4_500_000), "4.5M");
    assert_eq!(short_id("a77ebf272c1e7395d"), "a77ebf2");
    assert_eq!(short_id("c1"), "c1");
    assert_eq!(short_id("äöüéèàçñ"), "äöüéèàç");
}

/// Screen clear, window title, clipboard write (OSC 52), a C1 CSI and a bidi override: what an
/// untrusted model or tool might print to take over the terminal.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{9b}H\u{202e}x";
const SHOWN: &str = "\\e[2J\\e]0;pwned\\x07\\e]52;c;cm0gLXJmIH4=\\x07\\u{9b}H\\u{202e}x";

fn hostile_session() -> Vec<AgentEvent> {
    let bash = ContentBlock::tool_use(
        "toolu_h1",
        "Bash",
        json!({ "command": format!("echo '{HOSTILE}'") }),
    );
    [
        EventKind::TextDelta(format!("look: {}", &HOSTILE[..5])),
        EventKind::TextDelta(HOSTILE[5..].to_string()),
        block("msg_1", ContentBlock::text(format!("look: {HOSTILE}")), 10),
        block("msg_1", bash, 10),
        tool_result("toolu_h1", "Bash", &format!("out {HOSTILE}"), None),
        EventKind::Finished(run_result(
            ResultSubtype::Success,
            &format!("end {HOSTILE}"),
        )),
    ]
    .into_iter()
    .map(main_event)
    .collect()
}

#[test]
fn escape_sequences_from_the_model_and_tools_are_shown_not_obeyed() {
    let quiet = run(&hostile_session(), false);
    assert_eq!(quiet, format!("end {SHOWN}\n"));
    let verbose = run(&hostile_session(), true);
    assert!(
        !crate::visible::has_hidden_controls(&verbose),
        "{verbose:?}"
    );
    assert!(
        verbose.starts_with(&format!("look: {SHOWN}\n")),
        "{verbose}"
    );
    assert!(
        verbose.contains(&format!("● Bash(echo '{SHOWN}')")),
        "{verbose}"
    );
    assert!(verbose.contains(&format!("⎿ out {SHOWN}")), "{verbose}");
    assert!(verbose.ends_with(&format!("end {SHOWN}\n")), "{verbose}");
    let mut sub = hostile_session();
    sub.iter_mut().for_each(|e| *e = sub_event(e.kind.clone()));
    let verbose = run(&sub, true);
    assert!(
        !crate::visible::has_hidden_controls(&verbose),
        "{verbose:?}"
    );
}

#[test]
fn team_mail_with_escape_sequences_is_shown_not_obeyed() {
    let event = main_event(EventKind::Team(fleet_protocol::TeamEvent::TeamMessage {
        team: "t".into(),
        from: "mallory\u{1b}]0;owned\u{7}".into(),
        to: "alpha".into(),
        summary: None,
        text: "hi\u{1b}[2J\u{1b}[31mred\nsecond line".into(),
    }));
    let verbose = run(&[event], true);
    assert!(
        !crate::visible::has_hidden_controls(&verbose),
        "{verbose:?}"
    );
    assert!(verbose.contains("✉ mallory"), "{verbose}");
    assert_eq!(
        verbose.lines().count(),
        1,
        "one line per message: {verbose:?}"
    );
}

#[test]
fn a_teammates_id_is_shown_whole_and_other_ids_are_cut() {
    assert_eq!(short_id("bob@party"), "bob@party");
    assert_eq!(
        short_id("researcher-long-name@team"),
        "researcher-long-name@team"
    );
    assert_eq!(short_id("a1b2c3d4e5f6"), "a1b2c3d");
}

#[test]
fn a_sendmessage_result_reads_as_its_message_not_as_json() {
    let sent = json!({"success": true, "message": "Message sent to bob's inbox", "msg_id": "m1"});
    let events = [
        main_event(started()),
        main_event(tool_result(
            "toolu_s",
            "SendMessage",
            &sent.to_string(),
            None,
        )),
    ];
    let text = run(&events, true);
    assert!(text.contains("  ⎿ Message sent to bob's inbox\n"), "{text}");
    assert!(!text.contains("success"), "{text}");
    // Another tool's JSON output is shown as it is.
    let events = [
        main_event(started()),
        main_event(tool_result("toolu_r", "Read", &sent.to_string(), None)),
    ];
    assert!(run(&events, true).contains("\"success\""));
    assert_eq!(
        call_summary("SendMessage", &json!({"to": "bob", "message": "hi"})),
        "SendMessage(bob)"
    );
}
