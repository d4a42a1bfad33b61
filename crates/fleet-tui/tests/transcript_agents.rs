//! Subagents grouped under their Agent calls: indented activity with live counters, a
//! one-line summary when done, background agents and their notifications, nesting, and the
//! per-agent figures.

use crate::transcript_fixtures;

use fleet_protocol::{AgentEvent, AgentRef, ContentBlock, EventKind, TaskStatus};
use fleet_tui::theme::Theme;
use fleet_tui::transcript::Transcript;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;
use transcript_fixtures::*;

fn agent_call(id: &str, background: bool) -> EventKind {
    tool_use(
        id,
        "Agent",
        json!({
            "subagent_type": "Explore",
            "description": "map the crate",
            "prompt": "Map the crate.",
            "run_in_background": background,
        }),
    )
}

/// A foreground Explore agent `a1` under call `call_1` that made `calls` tool calls over
/// one turn.
fn with_running_subagent(calls: usize) -> Transcript {
    let mut t = Transcript::new();
    t.apply(&main(prompt("map the crate for me")));
    t.apply(&main(agent_call("call_1", false)));
    t.apply(&main(task_started("a1", "call_1", false)));
    t.apply(&sub("a1", "call_1", prompt("Map the crate.")));
    for i in 0..calls {
        let id = format!("s{i}");
        t.apply(&sub(
            "a1",
            "call_1",
            tool_use(&id, "Read", read_input(&format!("src/m{i}.rs"))),
        ));
        t.apply(&sub(
            "a1",
            "call_1",
            tool_result(&id, "Read", &format!("contents of m{i}"), false),
        ));
    }
    t.apply(&sub("a1", "call_1", reply(Vec::new(), usage(1000, 200))));
    t
}

fn finish_foreground(t: &mut Transcript) {
    t.apply(&main(tool_result_with(
        "call_1",
        "Agent",
        "The crate has three modules.\nDetails follow.",
        false,
        Some(json!({
            "status": "completed",
            "agentId": "a1",
            "result": "The crate has three modules.\nDetails follow.",
            "total_cost_usd": 0.0123,
            "num_turns": 3,
            "total_tokens": 12400,
            "duration_ms": 4200,
        })),
    )));
}

#[test]
fn a_subagents_activity_is_indented_under_its_agent_call_with_live_counters() {
    let mut t = with_running_subagent(1);
    let rows = rows(&mut t, 80, 10);
    let text = rows.join("\n");
    assert!(text.contains("● Agent("), "{text}");
    assert!(
        text.contains("⎿ Explore · map the crate · running · 1 turn · 1.2k tokens"),
        "{text}"
    );
    assert!(rows.iter().any(|r| r.starts_with("  ● Read(")), "{text}");
    assert!(text.contains("src/m0.rs"), "{text}");
    assert!(
        !text.contains("Map the crate."),
        "the child's task is not a prompt: {text}"
    );
    insta::assert_snapshot!("subagent_running", text);
}

#[test]
fn a_running_subagent_is_folded_to_its_last_lines_until_expanded() {
    let mut t = with_running_subagent(5);
    let folded = screen(&mut t, 80, 12);
    assert!(folded.contains("src/m4.rs"), "{folded}");
    assert!(!folded.contains("src/m0.rs"), "{folded}");
    assert!(folded.contains("lines (ctrl+o to expand)"), "{folded}");
    assert_eq!(
        folded.lines().filter(|l| l.starts_with("  ")).count(),
        1 + 1 + 3,
        "{folded}"
    );

    t.toggle_expanded();
    let expanded = screen(&mut t, 80, 30);
    for i in 0..5 {
        assert!(expanded.contains(&format!("src/m{i}.rs")), "{expanded}");
    }
    assert!(!expanded.contains("ctrl+o"), "{expanded}");
}

#[test]
fn a_finished_subagent_folds_to_one_summary_line_with_cost_and_time() {
    let mut t = with_running_subagent(2);
    finish_foreground(&mut t);
    let text = screen(&mut t, 100, 8);
    assert!(
        text.contains(
            "Explore · map the crate · completed · 3 turns · 12.4k tokens · $0.0123 · 4.2s"
        ),
        "{text}"
    );
    assert!(text.contains("  The crate has three modules."), "{text}");
    assert!(!text.contains("Details follow."), "{text}");
    assert!(!text.contains("● Read("), "{text}");
    insta::assert_snapshot!("subagent_done", text);

    let agents = t.agents();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0].tool_use_id, None);
    let child = &agents[1];
    assert_eq!(child.agent_id, "a1");
    assert_eq!(child.tool_use_id.as_deref(), Some("call_1"));
    assert_eq!(child.subagent_type, "Explore");
    assert_eq!(child.description, "map the crate");
    assert_eq!(child.turns, 3);
    assert_eq!((child.input_tokens, child.output_tokens), (1000, 200));
    assert_eq!(child.cost_usd, Some(0.0123));
    assert!(child.done);
}

#[test]
fn live_token_counts_follow_the_reply_in_progress() {
    let mut t = with_running_subagent(0);
    t.apply(&sub(
        "a1",
        "call_1",
        EventKind::AssistantBlock {
            message_id: "m2".into(),
            model: "claude-test".into(),
            block: ContentBlock::text("Looking around."),
            usage: usage(2000, 50),
        },
    ));
    let text = screen(&mut t, 80, 8);
    assert!(text.contains("1 turn · 3.2k tokens"), "{text}");
    assert_eq!(t.agents()[1].input_tokens, 3000);
}

#[test]
fn a_background_agent_is_grouped_and_its_notification_becomes_one_line() {
    let mut t = Transcript::new();
    t.apply(&main(agent_call("call_2", true)));
    t.apply(&main(tool_result_with(
        "call_2",
        "Agent",
        "Started background agent b1 (Explore): map the crate.",
        false,
        Some(json!({ "isAsync": true, "status": "async_launched", "agentId": "b1" })),
    )));
    t.apply(&main(task_started("b1", "call_2", true)));
    t.apply(&main(text_block(
        "It runs in the background; I will carry on.",
    )));
    t.apply(&sub(
        "b1",
        "call_2",
        tool_use("g1", "Glob", json!({ "pattern": "**/*.rs" })),
    ));
    let running = screen(&mut t, 80, 10);
    assert!(running.contains("running in background"), "{running}");
    assert!(running.contains("  ● Glob("), "{running}");

    t.apply(&main(EventKind::TaskUpdated {
        task_id: "b1".into(),
        status: TaskStatus::Completed,
        end_time_ms: Some(1),
    }));
    let note = notification("b1", "call_2");
    t.apply(&main(EventKind::TaskNotified(note.clone())));
    t.apply(&main(prompt(&note.render())));
    let text = screen(&mut t, 80, 12);
    assert!(
        text.contains("◆ Explore: map the crate — completed"),
        "{text}"
    );
    assert!(
        text.contains("⎿ Agent \"map the crate\" completed"),
        "{text}"
    );
    assert!(
        text.contains("completed · 0 turns · 4.3k tokens · 3.2s"),
        "{text}"
    );
    assert!(!text.contains("task-notification"), "{text}");
    assert!(
        !text.contains("›"),
        "a notification is not a prompt: {text}"
    );
    insta::assert_snapshot!("background_notification", text);
    assert!(t.agents()[1].done);
}

#[test]
fn a_sub_subagent_is_indented_under_its_parents_group() {
    let mut t = with_running_subagent(0);
    t.apply(&sub(
        "a1",
        "call_1",
        tool_use(
            "call_n",
            "Agent",
            json!({ "subagent_type": "general", "description": "dig deeper" }),
        ),
    ));
    let grandchild = AgentEvent {
        agent: AgentRef::subagent("a2", "call_n", "general", "dig deeper"),
        kind: tool_use("g1", "Grep", json!({ "pattern": "fn main" })),
    };
    t.apply(&grandchild);
    t.toggle_expanded();
    let rows = rows(&mut t, 80, 12);
    let text = rows.join("\n");
    assert!(rows.iter().any(|r| r.starts_with("  ● Agent(")), "{text}");
    assert!(
        rows.iter()
            .any(|r| r.starts_with("    ⎿ general · dig deeper · running")),
        "{text}"
    );
    assert!(rows.iter().any(|r| r.starts_with("    ● Grep(")), "{text}");
    insta::assert_snapshot!("nested_subagents", text);

    // The grandchild's result reaches the screen through both groups.
    let before = screen(&mut t, 80, 12);
    t.apply(&AgentEvent {
        agent: AgentRef::subagent("a2", "call_n", "general", "dig deeper"),
        kind: tool_result("g1", "Grep", "src/main.rs:1: fn main", false),
    });
    let after = screen(&mut t, 80, 12);
    assert_ne!(before, after);
    assert!(after.contains("src/main.rs:1: fn main"), "{after}");
    assert_eq!(t.agents().len(), 3);
}

#[test]
fn the_task_panel_view_shows_one_agent_expanded() {
    let mut t = with_running_subagent(5);
    t.apply(&main(tool_use("other", "Read", read_input("README.md"))));
    for id in ["a1", "call_1"] {
        let area = Rect::new(0, 0, 60, 20);
        let mut buf = Buffer::empty(area);
        t.render_agent(id, area, &mut buf, &Theme::mono());
        let text = buffer_rows(&buf).join("\n");
        for i in 0..5 {
            assert!(text.contains(&format!("src/m{i}.rs")), "{id}: {text}");
        }
        assert!(text.contains("Explore · map the crate"), "{text}");
        assert!(!text.contains("README.md"), "{text}");
    }
    let area = Rect::new(0, 0, 60, 5);
    let mut buf = Buffer::empty(area);
    t.render_agent("nobody", area, &mut buf, &Theme::mono());
    assert!(buffer_rows(&buf).iter().all(String::is_empty));
    assert!(
        !t.expanded(),
        "the panel's view leaves the main view folded"
    );
}

#[test]
fn a_subagent_whose_call_was_never_seen_gets_a_stand_in_agent_line() {
    let mut t = Transcript::new();
    t.apply(&sub(
        "a9",
        "call_lost",
        tool_use("x1", "Read", read_input("Cargo.toml")),
    ));
    let rows = rows(&mut t, 80, 6);
    let text = rows.join("\n");
    assert!(rows.iter().any(|r| r.starts_with("● Agent(")), "{text}");
    assert!(
        text.contains("⎿ Explore · map the crate · running"),
        "{text}"
    );
    assert!(rows.iter().any(|r| r.starts_with("  ● Read(")), "{text}");
    assert_eq!(t.agents()[1].agent_id, "a9");
}

#[test]
fn a_subagent_whose_server_reported_no_usage_says_so_instead_of_zero_tokens() {
    let mut t = Transcript::new();
    t.apply(&main(prompt("map the crate for me")));
    t.apply(&main(agent_call("call_1", false)));
    t.apply(&main(task_started("a1", "call_1", false)));
    t.apply(&sub("a1", "call_1", prompt("Map the crate.")));
    t.apply(&sub(
        "a1",
        "call_1",
        reply(Vec::new(), fleet_protocol::Usage::unreported()),
    ));
    let text = screen(&mut t, 80, 8);
    assert!(text.contains("1 turn · usage not reported"), "{text}");
    assert!(!text.contains("0 tokens"), "{text}");
    let child = &t.agents()[1];
    assert!(child.usage_unreported);
    // A later reply that reports usage makes the figures known again.
    t.apply(&sub("a1", "call_1", reply(Vec::new(), usage(1000, 200))));
    assert!(!t.agents()[1].usage_unreported);
    assert!(screen(&mut t, 80, 8).contains("2 turns · 1.2k tokens"));
}
