//! The viewport: following the stream, holding still while the person reads back, long
//! transcripts drawn from the cache, and a resumed history.

use crate::transcript_fixtures;

use fleet_protocol::{ContentBlock, Message, Role};
use fleet_tui::transcript::Transcript;
use serde_json::json;
use transcript_fixtures::*;

/// `cells` replies of `lines` lines each: "r{cell}-{line}".
fn long_transcript(cells: usize, lines: usize) -> Transcript {
    let mut t = Transcript::new();
    for c in 0..cells {
        let text: Vec<String> = (0..lines).map(|l| format!("r{c}-{l}")).collect();
        t.apply(&main(text_block(&text.join("\n"))));
    }
    t
}

#[test]
fn the_view_follows_new_output_at_the_bottom() {
    let mut t = long_transcript(10, 3);
    assert_eq!(rows(&mut t, 40, 5)[4], "r9-2");
    t.apply(&main(delta("fresh")));
    assert_eq!(rows(&mut t, 40, 5)[4], "fresh");
    assert_eq!(t.scroll_offset(), 0);
}

#[test]
fn a_scrolled_up_view_stays_put_while_new_text_streams() {
    let mut t = long_transcript(10, 3);
    let _ = rows(&mut t, 40, 5);
    t.scroll_up(7);
    let reading = rows(&mut t, 40, 5);
    // 39 rows (ten cells of three and the blanks between); rows 27..32 are on screen.
    assert_eq!(reading, ["", "r7-0", "r7-1", "r7-2", ""]);
    assert_eq!(t.scroll_offset(), 7);

    t.apply(&main(delta("new text ")));
    t.apply(&main(delta("keeps coming")));
    t.apply(&main(tool_use("t1", "Read", read_input("src/lib.rs"))));
    assert_eq!(rows(&mut t, 40, 5), reading);
    assert!(t.scroll_offset() > 7);
    insta::assert_snapshot!("scrolled_up", reading.join("\n"));

    t.scroll_down(3);
    let lower = rows(&mut t, 40, 5);
    assert_eq!(lower, ["r7-2", "", "r8-0", "r8-1", "r8-2"]);

    t.scroll_to_bottom();
    let bottom = rows(&mut t, 40, 5).join("\n");
    assert!(bottom.contains("● Read("), "{bottom}");
    assert_eq!(t.scroll_offset(), 0);
}

#[test]
fn scrolling_down_past_the_end_follows_the_stream_again() {
    let mut t = long_transcript(10, 3);
    let _ = rows(&mut t, 40, 5);
    t.scroll_up(4);
    t.scroll_down(100);
    t.apply(&main(delta("the latest")));
    assert_eq!(rows(&mut t, 40, 5)[4], "the latest");
}

#[test]
fn a_group_growing_above_does_not_move_what_is_read() {
    let mut t = Transcript::new();
    t.apply(&main(tool_use(
        "call_1",
        "Agent",
        json!({ "description": "map the crate" }),
    )));
    for c in 0..10 {
        t.apply(&main(text_block(&format!("r{c}-0\nr{c}-1"))));
    }
    t.toggle_expanded();
    let _ = rows(&mut t, 40, 6);
    t.scroll_up(10);
    let reading = rows(&mut t, 40, 6);
    t.apply(&sub(
        "a1",
        "call_1",
        tool_use("s1", "Glob", json!({ "pattern": "*" })),
    ));
    t.apply(&sub(
        "a1",
        "call_1",
        tool_use("s2", "Glob", json!({ "pattern": "*.md" })),
    ));
    assert_eq!(rows(&mut t, 40, 6), reading);
}

#[test]
fn twenty_thousand_lines_render_their_last_rows_from_a_cache_that_does_not_grow() {
    let mut t = long_transcript(2000, 10);
    // Ten rows a cell, and a blank row between cells.
    assert_eq!(t.height(80), 2000 * 10 + 1999);
    let rows_now = rows(&mut t, 80, 6);
    assert_eq!(
        rows_now,
        ["r1999-4", "r1999-5", "r1999-6", "r1999-7", "r1999-8", "r1999-9"]
    );

    let cached = t.cached_rows();
    let drawn = t.cells_drawn();
    assert_eq!(cached, 2000 * 10 + 1999);
    for _ in 0..3 {
        assert_eq!(rows(&mut t, 80, 6), rows_now);
    }
    assert_eq!(t.cached_rows(), cached, "the cache grows with renders");
    assert_eq!(t.cells_drawn(), drawn, "unchanged cells were drawn again");

    t.scroll_up(11_000);
    let middle = rows(&mut t, 80, 6);
    // Rows 21999-6-11000 = 10993.. : cell 999 starts at row 999 * 11 = 10989.
    assert_eq!(middle[0], "r999-4", "{middle:?}");
    assert_eq!(t.cells_drawn(), drawn, "scrolling draws nothing new");
}

#[test]
fn a_streamed_delta_draws_only_the_open_cell_again() {
    let mut t = long_transcript(50, 4);
    let _ = rows(&mut t, 80, 10);
    let drawn = t.cells_drawn();
    for word in ["one ", "two ", "three"] {
        t.apply(&main(delta(word)));
        let _ = rows(&mut t, 80, 10);
    }
    // The first delta opens a cell (drawn once), each later delta redraws only it.
    assert_eq!(t.cells_drawn(), drawn + 3);
    assert_eq!(rows(&mut t, 80, 10)[9], "one two three");
}

#[test]
fn a_resized_or_expanded_view_is_drawn_again_at_its_new_width() {
    let mut t = long_transcript(5, 2);
    let _ = rows(&mut t, 80, 10);
    let drawn = t.cells_drawn();
    let _ = rows(&mut t, 50, 10);
    assert_eq!(t.cells_drawn(), drawn + 5);
    t.toggle_expanded();
    let _ = rows(&mut t, 50, 10);
    assert_eq!(t.cells_drawn(), drawn + 10);
}

#[test]
fn a_resumed_history_shows_prompts_replies_and_matched_results() {
    let messages = vec![
        Message::user_text("fix the failing test"),
        Message::with_blocks(
            Role::Assistant,
            vec![
                ContentBlock::text("Let me look."),
                ContentBlock::tool_use("t1", "Read", read_input("tests/it.rs")),
                ContentBlock::tool_use("t2", "Bash", json!({ "command": "cargo test" })),
            ],
        ),
        Message::with_blocks(
            Role::User,
            vec![
                ContentBlock::tool_result("t2", "test it ... FAILED", true),
                ContentBlock::tool_result("t1", "fn it() { assert!(false) }", false),
            ],
        ),
        Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::text("Fixed the assertion.")],
        ),
        Message::user_text(notification("b1", "call_9").render()),
    ];
    let mut t = Transcript::new();
    t.apply(&main(delta("from before the resume")));
    t.load_history(&messages);
    let text = screen(&mut t, 80, 20);
    assert!(!text.contains("from before the resume"), "{text}");
    assert!(text.contains("› fix the failing test"), "{text}");
    assert!(text.contains("Let me look."), "{text}");
    assert!(text.contains("● Read("), "{text}");
    // Read's result is its matched summary, not the file.
    assert!(text.contains("⎿ Read"), "{text}");
    assert!(text.contains("test it ... FAILED"), "{text}");
    assert!(!text.contains("running…"), "{text}");
    assert!(text.contains("Fixed the assertion."), "{text}");
    assert!(text.contains("◆ task b1 — completed"), "{text}");
    insta::assert_snapshot!("history", text);
}
