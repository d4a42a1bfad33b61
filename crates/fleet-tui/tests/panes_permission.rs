//! The permission prompt: who asks, the call, the four answers and the feedback field.

use crate::panes_support;

use crossterm::event::KeyCode;
use fleet_protocol::AgentRef;
use fleet_tui::panes::permission::PermissionPrompt;
use fleet_tui::port::{PermissionAnswer, PermissionAsk};
use fleet_tui::theme::Theme;
use panes_support::{ch, draw, key, text, typed};
use serde_json::json;

fn subagent_bash() -> PermissionAsk {
    PermissionAsk {
        id: 7,
        agent: AgentRef::subagent("agent-1", "toolu_9", "Explore", "map the crate"),
        tool: "Bash".into(),
        input: json!({"command": "cargo test --workspace --all-features -- --nocapture --test-threads 1"}),
        description: "Run the test suite".into(),
        suggested_rule: Some("Bash(cargo test:*)".into()),
        forwardable: false,
        change: None,
    }
}

fn main_write() -> PermissionAsk {
    PermissionAsk {
        id: 8,
        agent: AgentRef::main(),
        tool: "Write".into(),
        input: json!({"file_path": "src/new.rs", "content": "fn main() {}"}),
        description: "Create src/new.rs".into(),
        suggested_rule: None,
        forwardable: false,
        change: None,
    }
}

fn render(prompt: &PermissionPrompt, width: u16) -> String {
    let height = prompt.height(width);
    text(&draw(width, height, |area, buf| {
        prompt.render(area, buf, &Theme::mono())
    }))
}

#[test]
fn a_subagent_asks_with_a_rule_at_80_columns() {
    let prompt = PermissionPrompt::new(subagent_bash());
    let screen = render(&prompt, 80);
    assert!(screen.contains("Bash — asked by Explore (map the crate)"));
    assert!(screen.contains("$ cargo test --workspace"));
    assert!(screen.contains("❯ 1. Yes (y)"));
    assert!(screen.contains("2. Yes, and don't ask again for Bash(cargo test:*) (a)"));
    assert!(screen.contains("4. No, and tell the model what to do differently (f)"));
    insta::assert_snapshot!(screen);
}

#[test]
fn a_subagent_asks_with_a_rule_at_30_columns() {
    let prompt = PermissionPrompt::new(subagent_bash());
    let screen = render(&prompt, 30);
    // The command is wrapped, never cut: every word of it is on screen.
    for word in ["cargo", "--all-features", "--nocapture", "--test-threads"] {
        assert!(screen.contains(word), "{word} missing:\n{screen}");
    }
    insta::assert_snapshot!(screen);
}

#[test]
fn the_main_agent_asks_plainly_and_without_a_rule() {
    let prompt = PermissionPrompt::new(main_write());
    let screen = render(&prompt, 80);
    assert!(screen.contains("╭ Write ─"), "{screen}");
    assert!(!screen.contains("asked by"));
    assert!(screen.contains("src/new.rs"));
    assert!(!screen.contains("don't ask again"));
    assert!(screen.contains("2. No (n)"));
    insta::assert_snapshot!(screen);
}

#[test]
fn the_feedback_field_replaces_the_answers() {
    let mut prompt = PermissionPrompt::new(subagent_bash());
    assert_eq!(prompt.handle_key(ch('f')), None);
    for k in typed("use nextest") {
        assert_eq!(prompt.handle_key(k), None);
    }
    let screen = render(&prompt, 80);
    assert!(screen.contains("Tell the model what to do differently:"));
    assert!(screen.contains("> use nextest"));
    assert!(!screen.contains("1. Yes"));
    insta::assert_snapshot!("feedback_80", screen);
    insta::assert_snapshot!("feedback_30", render(&prompt, 30));
}

#[test]
fn each_answer_by_letter_number_and_arrows() {
    let answer = |keys: Vec<crossterm::event::KeyEvent>| {
        let mut prompt = PermissionPrompt::new(subagent_bash());
        keys.into_iter().find_map(|k| prompt.handle_key(k))
    };
    assert_eq!(answer(vec![ch('y')]), Some(PermissionAnswer::AllowOnce));
    assert_eq!(answer(vec![ch('1')]), Some(PermissionAnswer::AllowOnce));
    assert_eq!(
        answer(vec![key(KeyCode::Enter)]),
        Some(PermissionAnswer::AllowOnce)
    );
    assert_eq!(answer(vec![ch('a')]), Some(PermissionAnswer::AllowAlways));
    assert_eq!(answer(vec![ch('2')]), Some(PermissionAnswer::AllowAlways));
    assert_eq!(
        answer(vec![key(KeyCode::Down), key(KeyCode::Enter)]),
        Some(PermissionAnswer::AllowAlways)
    );
    assert_eq!(answer(vec![ch('n')]), Some(PermissionAnswer::Deny));
    assert_eq!(answer(vec![ch('3')]), Some(PermissionAnswer::Deny));
    assert_eq!(
        answer(vec![key(KeyCode::Esc)]),
        Some(PermissionAnswer::Deny)
    );
    let mut feedback = vec![ch('4')];
    feedback.extend(typed("try cargo nextest"));
    feedback.push(key(KeyCode::Enter));
    assert_eq!(
        answer(feedback),
        Some(PermissionAnswer::DenyWithFeedback(
            "try cargo nextest".into()
        ))
    );
    // An empty feedback is a plain no.
    assert_eq!(
        answer(vec![ch('f'), key(KeyCode::Enter)]),
        Some(PermissionAnswer::Deny)
    );
    // Unrelated keys answer nothing.
    assert_eq!(answer(vec![ch('z'), ch('9'), key(KeyCode::Up)]), None);
}

#[test]
fn without_a_rule_allow_always_is_not_offered() {
    let mut prompt = PermissionPrompt::new(main_write());
    assert_eq!(prompt.handle_key(ch('a')), None);
    // The numbers follow what is listed: 2 is "No" here.
    assert_eq!(prompt.handle_key(ch('2')), Some(PermissionAnswer::Deny));
}

#[test]
fn esc_in_the_feedback_field_goes_back_to_the_answers() {
    let mut prompt = PermissionPrompt::new(subagent_bash());
    prompt.handle_key(ch('f'));
    prompt.handle_paste("keep it short\nplease");
    assert!(prompt.is_typing_feedback());
    assert!(render(&prompt, 80).contains("> keep it short please"));
    assert_eq!(prompt.handle_key(key(KeyCode::Esc)), None);
    assert!(!prompt.is_typing_feedback());
    let screen = render(&prompt, 80);
    assert!(screen.contains("❯ 4. No, and tell the model"), "{screen}");
    // A paste while the answers show picks nothing.
    prompt.handle_paste("y");
    assert!(!prompt.is_typing_feedback());
}

#[test]
fn tiny_widths_do_not_panic() {
    let prompt = PermissionPrompt::new(subagent_bash());
    for width in 0..6 {
        let height = prompt.height(width);
        draw(width, height.min(40), |area, buf| {
            prompt.render(area, buf, &Theme::dark())
        });
    }
}

fn hidden_tail() -> PermissionAsk {
    PermissionAsk {
        input: json!({"command": format!("git status{}touch /tmp/x", "\n".repeat(120))}),
        description: "Check the tree".into(),
        ..subagent_bash()
    }
}

fn render_in(prompt: &PermissionPrompt, width: u16, height: u16) -> String {
    text(&draw(width, height, |area, buf| {
        prompt.render(area, buf, &Theme::mono())
    }))
}

/// The box is given fewer rows than it wants (the app gives what the terminal has): from
/// three rows up, the end of the call and every answer are in them.
#[test]
fn every_height_keeps_the_answers_and_the_end_of_the_call() {
    let prompt = PermissionPrompt::new(hidden_tail());
    for width in [30, 50, 80] {
        for height in 3..=40 {
            let screen = render_in(&prompt, width, height);
            for needle in ["touch /tmp/x", "1. Yes (y)", "(a)", "No (n)", "(f)"] {
                assert!(
                    screen.contains(needle),
                    "{needle} missing at {width}×{height}:\n{screen}"
                );
            }
        }
    }
    // With room, the box says what it collapsed and keeps its frame and title.
    let roomy = render_in(&prompt, 80, 12);
    assert!(roomy.contains("(119 blank lines)"), "{roomy}");
    assert!(roomy.contains("asked by Explore"), "{roomy}");
}

#[test]
fn another_tools_input_is_shown_to_its_end() {
    let prompt = PermissionPrompt::new(PermissionAsk {
        tool: "mcp__deploy__run".into(),
        input: json!({"script": format!("{}THE_END", "a".repeat(600))}),
        description: "mcp__deploy__run".into(),
        suggested_rule: None,
        ..subagent_bash()
    });
    let whole = render(&prompt, 60);
    assert!(whole.contains("THE_END"), "{whole}");
    assert!(
        !whole.contains("more lines"),
        "nothing cut at full height:\n{whole}"
    );
    let short = render_in(&prompt, 60, 9);
    assert!(short.contains("THE_END"), "{short}");
    assert!(short.contains("more lines …"), "{short}");
}

/// A description or a rule that holds line breaks cannot push the answers away: the
/// description is flattened and cut to two rows, the rule's breaks are shown as `\n`.
#[test]
fn descriptions_and_rules_stay_short_and_visible() {
    let prompt = PermissionPrompt::new(PermissionAsk {
        description: format!("Run it{}really", "\n".repeat(80)),
        suggested_rule: Some(format!("Bash(echo a{}b)", "\n".repeat(3))),
        ..subagent_bash()
    });
    let screen = render(&prompt, 80);
    assert!(screen.contains("Run it ⏎×80 really"), "{screen}");
    assert!(screen.contains(r"Bash(echo a\n\n\nb)"), "{screen}");
    assert!(screen.lines().count() < 20, "{screen}");
}

#[test]
fn the_feedback_field_stays_in_a_short_box() {
    let mut prompt = PermissionPrompt::new(hidden_tail());
    prompt.handle_key(ch('f'));
    for k in typed("no") {
        prompt.handle_key(k);
    }
    let screen = render_in(&prompt, 60, 5);
    assert!(screen.contains("> no"), "{screen}");
    assert!(screen.contains("touch /tmp/x"), "{screen}");
    // The page keys scroll the call; they never reach the field.
    render_in(&prompt, 60, 8);
    assert_eq!(prompt.handle_key(key(KeyCode::PageDown)), None);
    assert_eq!(prompt.handle_key(key(KeyCode::PageUp)), None);
    assert_eq!(
        prompt.handle_key(key(KeyCode::Enter)),
        Some(PermissionAnswer::DenyWithFeedback("no".into()))
    );
}

#[test]
fn tiny_boxes_do_not_panic() {
    let prompt = PermissionPrompt::new(hidden_tail());
    for width in 0..12 {
        for height in 0..12 {
            draw(width, height, |area, buf| {
                prompt.render(area, buf, &Theme::dark())
            });
        }
    }
}

/// An Edit's question shows the change it would make: the file's line numbers, `-` for what
/// goes and `+` for what comes, folded when long, and the answers stay on screen.
#[test]
fn an_edit_shows_its_diff_with_the_files_line_numbers() {
    use fleet_protocol::{DiffLine, DiffTag, ProposedChange};
    let line = |tag, text: &str| DiffLine {
        tag,
        text: text.into(),
    };
    let mut lines = vec![
        line(DiffTag::Context, "fn keep() {}"),
        line(DiffTag::Delete, "fn old_name() {}"),
        line(DiffTag::Insert, "fn new_name() {}"),
    ];
    lines.extend((0..100).map(|i| line(DiffTag::Insert, &format!("// added {i}"))));
    let ask = PermissionAsk {
        tool: "Edit".into(),
        input: json!({"file_path": "/p/src/lib.rs", "old_string": "x", "new_string": "y"}),
        description: "Edit: 101 lines added, 1 removed".into(),
        change: Some(ProposedChange::one_hunk(
            "/p/src/lib.rs",
            41,
            lines.into_iter().map(|l| (l.tag, l.text)),
        )),
        ..main_write()
    };
    let prompt = PermissionPrompt::new(ask);
    let screen = render(&prompt, 80);
    assert!(screen.contains("/p/src/lib.rs"), "{screen}");
    assert!(screen.contains(" 41   fn keep() {}"), "{screen}");
    assert!(screen.contains(" 42 - fn old_name() {}"), "{screen}");
    assert!(screen.contains(" 42 + fn new_name() {}"), "{screen}");
    assert!(screen.contains("… 85 more lines"), "folded:\n{screen}");
    assert!(
        screen.contains("142 + // added 99"),
        "the end shows:\n{screen}"
    );
    assert!(screen.lines().count() < 40, "{screen}");
    let short = render_in(&prompt, 80, 16);
    assert!(
        short.contains("1. Yes (y)") && short.contains("No (n)"),
        "{short}"
    );
}
