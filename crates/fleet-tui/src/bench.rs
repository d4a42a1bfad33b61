//! The figures behind the UI's quality bar, measured on the real app and renderers (a
//! `TestBackend` stands in for the terminal, so the numbers are the UI's own work: layout,
//! rendering, the frame diff — not the terminal emulator's). `fleet dev bench tui` prints them.
//!
//! - keystroke to frame while 20 subagents stream (the time from a key to a drawn frame, with
//!   the events that arrived since the last frame applied first, as the event loop does);
//! - scrolling a 20,000-line session a page at a time;
//! - memory: resident size after the session is loaded, and its growth over many frames
//!   (it must grow with the transcript, not with the number of renders).

use crate::app::{App, UiOptions};
use crate::port::UiEvent;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use fleet_protocol::{AgentEvent, AgentRef, ContentBlock, EventKind, Usage};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

#[derive(Debug, Clone, Copy)]
pub struct BenchConfig {
    pub width: u16,
    pub height: u16,
    /// Subagents streaming while keys are pressed.
    pub subagents: usize,
    /// Keys pressed (each drawn).
    pub keys: usize,
    /// Lines of the long session.
    pub lines: usize,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            width: 120,
            height: 40,
            subagents: 20,
            keys: 2000,
            lines: 20_000,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Percentiles {
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// Key handled, pending stream events applied, frame drawn.
    pub keystroke_while_streaming: Percentiles,
    /// Agent events applied during that run.
    pub events_applied: usize,
    /// The first frame of the long session (every visible cell rendered).
    pub long_session_first_frame_us: u64,
    /// One PageUp and its frame, over the whole long session.
    pub page_scroll: Percentiles,
    /// Resident size after loading the long session, and after drawing it many more times.
    pub rss_after_load_kb: u64,
    pub rss_after_frames_kb: u64,
    pub frames_for_growth: usize,
}

pub fn run(config: BenchConfig) -> BenchReport {
    let (keystroke, events_applied) = keystrokes(config);
    let long = long_session(config);
    BenchReport {
        keystroke_while_streaming: keystroke,
        events_applied,
        long_session_first_frame_us: long.first_frame_us,
        page_scroll: long.scroll,
        rss_after_load_kb: long.rss_after_load_kb,
        rss_after_frames_kb: long.rss_after_frames_kb,
        frames_for_growth: long.frames,
    }
}

fn app() -> App {
    let (tx, rx) = mpsc::unbounded_channel();
    // Commands go nowhere; the receiver is leaked with the app for the run's length.
    std::mem::forget(rx);
    App::new(UiOptions::default(), tx)
}

fn event(agent: AgentRef, kind: EventKind) -> UiEvent {
    UiEvent::Agent(AgentEvent { agent, kind })
}

fn tool_use(id: &str, name: &str, input: serde_json::Value) -> EventKind {
    EventKind::AssistantBlock {
        message_id: format!("msg-{id}"),
        model: "bench".into(),
        block: ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            cache_control: None,
        },
        usage: Usage::default(),
    }
}

fn keystrokes(config: BenchConfig) -> (Percentiles, usize) {
    let mut app = app();
    let mut terminal = match Terminal::new(TestBackend::new(config.width, config.height)) {
        Ok(t) => t,
        Err(never) => match never {},
    };
    let agents: Vec<AgentRef> = (0..config.subagents)
        .map(|i| {
            let call = format!("toolu_{i}");
            app.handle_ui_event(event(
                AgentRef::main(),
                tool_use(
                    &call,
                    "Agent",
                    json!({"subagent_type": "Explore", "description": format!("part {i}"),
                           "prompt": "map it"}),
                ),
            ));
            AgentRef::subagent(format!("agent-{i}"), call, "Explore", format!("part {i}"))
        })
        .collect();
    let mut applied = 0;
    let mut times = Vec::with_capacity(config.keys);
    for k in 0..config.keys {
        // What arrived since the last frame: a chunk from each subagent, and now and then
        // a tool call with its result.
        for (i, agent) in agents.iter().enumerate() {
            let kind = if (k + i) % 25 == 0 {
                tool_use(
                    &format!("t-{k}-{i}"),
                    "Read",
                    json!({"file_path": format!("src/file_{k}.rs")}),
                )
            } else {
                EventKind::TextDelta(format!("word{k} and **more** text "))
            };
            app.handle_ui_event(event(agent.clone(), kind));
            applied += 1;
        }
        let c = char::from(b'a' + (k % 26) as u8);
        let started = Instant::now();
        app.handle_terminal_event(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
        let _ = terminal.draw(|frame| app.draw(frame));
        times.push(started.elapsed());
        if k % 60 == 59 {
            // Keep the input short, as a person's is.
            app.handle_terminal_event(Event::Key(KeyEvent::new(
                KeyCode::Char('u'),
                KeyModifiers::CONTROL,
            )));
        }
    }
    (percentiles(times), applied)
}

struct Long {
    first_frame_us: u64,
    scroll: Percentiles,
    rss_after_load_kb: u64,
    rss_after_frames_kb: u64,
    frames: usize,
}

fn long_session(config: BenchConfig) -> Long {
    let mut app = app();
    let mut terminal = match Terminal::new(TestBackend::new(config.width, config.height)) {
        Ok(t) => t,
        Err(never) => match never {},
    };
    // Replies of ten lines each, with a tool call between them.
    let replies = config.lines / 12;
    for r in 0..replies {
        let text: String = (0..10)
            .map(|l| format!("Line {l} of reply {r}: some `code` and a [link](https://x.y)\n"))
            .collect();
        app.handle_ui_event(event(AgentRef::main(), EventKind::TextDelta(text)));
        app.handle_ui_event(event(
            AgentRef::main(),
            tool_use(
                &format!("long-{r}"),
                "Bash",
                json!({"command": format!("cargo test part_{r}")}),
            ),
        ));
    }
    let started = Instant::now();
    let _ = terminal.draw(|frame| app.draw(frame));
    let first_frame_us = micros(started.elapsed());
    let rss_after_load_kb = rss_kb();
    let frames = (config.lines / usize::from(config.height.max(1))).max(100);
    let mut times = Vec::with_capacity(frames);
    for _ in 0..frames {
        let started = Instant::now();
        app.handle_terminal_event(Event::Key(KeyEvent::new(
            KeyCode::PageUp,
            KeyModifiers::NONE,
        )));
        let _ = terminal.draw(|frame| app.draw(frame));
        times.push(started.elapsed());
    }
    // The same frames again, back down: nothing new is cached, so nothing should grow.
    for _ in 0..frames {
        app.handle_terminal_event(Event::Key(KeyEvent::new(
            KeyCode::PageDown,
            KeyModifiers::NONE,
        )));
        let _ = terminal.draw(|frame| app.draw(frame));
    }
    Long {
        first_frame_us,
        scroll: percentiles(times),
        rss_after_load_kb,
        rss_after_frames_kb: rss_kb(),
        frames: frames * 2,
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn percentiles(mut times: Vec<Duration>) -> Percentiles {
    times.sort();
    let at = |q: f64| {
        times
            .get(((times.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .map_or(0, micros)
    };
    Percentiles {
        p50_us: at(0.5),
        p99_us: at(0.99),
        max_us: times.last().copied().map_or(0, micros),
    }
}

/// This process's resident size (Linux; 0 elsewhere).
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}
