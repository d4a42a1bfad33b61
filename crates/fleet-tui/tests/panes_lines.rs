//! `/help` and `/cost` as lines for the transcript.

use crate::panes_support;

use fleet_protocol::{AgentUsage, TreeReport, Usage};
use fleet_tui::input::commands::{CommandInfo, CommandSource};
use fleet_tui::panes::{cost, help};
use fleet_tui::theme::Theme;
use fleet_tui::transcript::AgentSummary;
use panes_support::{draw, lines_text, text};
use ratatui::widgets::{Paragraph, Widget, Wrap};

fn commands() -> Vec<CommandInfo> {
    let builtin = |name: &str, hint: &str, description: &str| CommandInfo {
        name: name.into(),
        description: description.into(),
        argument_hint: hint.into(),
        source: CommandSource::Builtin,
    };
    vec![
        builtin("help", "", "show this help"),
        builtin(
            "compact",
            "[instructions]",
            "summarise the conversation to free context",
        ),
        builtin("resume", "[session]", "pick up an earlier session"),
        CommandInfo {
            name: "review".into(),
            description: "review the staged diff".into(),
            argument_hint: String::new(),
            source: CommandSource::Custom(".claude/commands/review.md".into()),
        },
    ]
}

/// The lines as the transcript would wrap them at `width`.
fn wrapped(lines: Vec<ratatui::text::Line<'static>>, width: u16) -> String {
    let height = 80;
    text(&draw(width, height, |a, b| {
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(a, b)
    }))
    .trim_end()
    .to_string()
}

#[test]
fn help_lists_keys_and_commands() {
    let lines = help::lines(&commands(), &Theme::mono());
    let plain = lines_text(&lines);
    for key in [
        "Esc",
        "Ctrl+B",
        "Ctrl+C",
        "Ctrl+O",
        "Ctrl+T",
        "Ctrl+R",
        "Shift+Tab",
        "Shift+Enter",
        "PgUp/PgDn",
    ] {
        assert!(plain.contains(key), "{key} missing:\n{plain}");
    }
    assert!(
        plain.contains("/compact [instructions]  summarise the conversation"),
        "{plain}"
    );
    assert!(plain.contains("/review"), "{plain}");
    assert!(plain.contains("review the staged diff (custom)"), "{plain}");
    insta::assert_snapshot!("help_80", wrapped(lines, 80));
    let narrow = help::lines_for_width(&commands(), 30, &Theme::mono());
    let narrow_text = lines_text(&narrow);
    assert!(
        narrow_text.contains("  Ctrl+B\n      move the running"),
        "{narrow_text}"
    );
    assert!(narrow_text.contains("(custom)"), "{narrow_text}");
    insta::assert_snapshot!("help_30", wrapped(narrow, 30));
}

fn summaries() -> Vec<AgentSummary> {
    vec![
        AgentSummary {
            agent_id: "main".into(),
            tool_use_id: None,
            subagent_type: String::new(),
            description: String::new(),
            turns: 6,
            input_tokens: 48_210,
            output_tokens: 3_120,
            cost_usd: Some(0.1832),
            done: true,
            usage_unreported: false,
        },
        AgentSummary {
            agent_id: "agent-1".into(),
            tool_use_id: Some("toolu_1".into()),
            subagent_type: "Explore".into(),
            description: "map the crate".into(),
            turns: 3,
            input_tokens: 12_000,
            output_tokens: 900,
            cost_usd: None,
            done: true,
            usage_unreported: false,
        },
        AgentSummary {
            agent_id: "agent-2".into(),
            tool_use_id: Some("toolu_2".into()),
            subagent_type: "Plan".into(),
            description: "design the cache".into(),
            turns: 1,
            input_tokens: 2_000,
            output_tokens: 100,
            cost_usd: None,
            done: false,
            usage_unreported: false,
        },
    ]
}

#[test]
fn cost_shows_unknown_as_a_dash_never_as_zero() {
    let lines = cost::lines(&summaries(), None, &Theme::mono());
    let plain = lines_text(&lines);
    let row = |needle: &str| {
        plain
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} missing:\n{plain}"))
            .to_string()
    };
    assert!(row("main").ends_with("$0.1832"), "{plain}");
    assert!(row("Explore: map the crate").ends_with("—"), "{plain}");
    assert!(
        row("Plan: design the cache (running)").ends_with("—"),
        "{plain}"
    );
    assert!(row("Total").contains("62,210"), "{plain}");
    assert!(row("Total").ends_with("$0.1832+"), "{plain}");
    assert!(!plain.contains("$0.0000"), "{plain}");
    insta::assert_snapshot!("cost_80", wrapped(lines, 80));
    insta::assert_snapshot!(
        "cost_30",
        wrapped(
            cost::lines_for_width(&summaries(), None, 30, &Theme::mono()),
            30
        )
    );
}

#[test]
fn cost_takes_known_figures_from_the_tree() {
    let tree = TreeReport {
        total_cost_usd: 0.25,
        agents: vec![AgentUsage {
            agent_id: "agent-1".into(),
            agent_type: "Explore".into(),
            parent_agent_id: Some("main".into()),
            depth: 1,
            model: "haiku".into(),
            status: "completed".into(),
            num_turns: 3,
            tool_uses: 4,
            usage: Usage::default(),
            cost_usd: Some(0.0421),
            served_model: None,
            usage_unreported_replies: 0,
        }],
        ..TreeReport::default()
    };
    let plain = lines_text(&cost::lines(&summaries(), Some(&tree), &Theme::mono()));
    let explore = plain.lines().find(|l| l.contains("Explore")).expect("row");
    assert!(explore.ends_with("$0.0421"), "{plain}");
    let total = plain.lines().find(|l| l.contains("Total")).expect("total");
    assert!(total.ends_with("$0.2500"), "{plain}");
    // With no agents known, the tree alone makes the table.
    let only_tree = lines_text(&cost::lines(&[], Some(&tree), &Theme::mono()));
    assert!(only_tree.contains("Explore"), "{only_tree}");
    // With nothing at all, the total is unknown rather than zero.
    let nothing = lines_text(&cost::lines(&[], None, &Theme::mono()));
    assert!(
        nothing.lines().last().expect("total").ends_with("—"),
        "{nothing}"
    );
}

#[test]
fn cost_says_when_a_server_reported_no_usage_instead_of_showing_zeros() {
    let mut agents = summaries();
    agents.truncate(1);
    agents[0].input_tokens = 0;
    agents[0].output_tokens = 0;
    agents[0].cost_usd = None;
    agents[0].usage_unreported = true;
    let plain = lines_text(&cost::lines(&agents, None, &Theme::mono()));
    let main = plain.lines().find(|l| l.contains("main")).expect("row");
    assert!(!main.contains(" 0 "), "{plain}");
    assert!(main.trim_end().ends_with("—"), "{plain}");
    assert!(
        plain
            .lines()
            .last()
            .expect("a last line")
            .contains("usage not reported"),
        "{plain}"
    );
    // From the tree alone: an agent whose usage is null.
    let tree = TreeReport {
        agents: vec![AgentUsage {
            agent_id: "agent-1".into(),
            agent_type: "Explore".into(),
            parent_agent_id: Some("main".into()),
            depth: 1,
            model: "qwen2.5-coder".into(),
            status: "completed".into(),
            num_turns: 2,
            tool_uses: 0,
            usage: Usage::unreported(),
            cost_usd: None,
            served_model: None,
            usage_unreported_replies: 2,
        }],
        ..TreeReport::default()
    };
    let only_tree = lines_text(&cost::lines(&[], Some(&tree), &Theme::mono()));
    let explore = only_tree
        .lines()
        .find(|l| l.contains("Explore"))
        .expect("row");
    assert!(!explore.contains("$0"), "{only_tree}");
    assert_eq!(
        explore.matches('—').count(),
        3,
        "input, output, cost: {only_tree}"
    );
    assert!(only_tree.contains("usage not reported"), "{only_tree}");
    // Everything reported: no such line.
    let reported = lines_text(&cost::lines(&summaries(), None, &Theme::mono()));
    assert!(!reported.contains("not reported"), "{reported}");
}
