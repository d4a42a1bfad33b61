//! `--output-format text`: the main agent's final answer, for people and `$(fleet -p …)`.
//!
//! With `--verbose` it narrates the main agent's run as it happens: its text streams live, and
//! each tool call and retry gets one line. Subagents stay quiet here; their work shows as the
//! main agent's Agent tool call and its result.

use super::Printer;
use fleet_protocol::{AgentEvent, ContentBlock, EventKind, ToolResultEvent};
use serde_json::Value;
use std::io::{self, Write};
use std::time::Duration;

/// Input fields that best say what a call is about, in order of preference.
const SUMMARY_FIELDS: [&str; 8] = [
    "file_path",
    "path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
];
const SUMMARY_CHARS: usize = 80;
const ERROR_CHARS: usize = 200;

pub struct TextPrinter {
    out: Box<dyn Write + Send>,
    verbose: bool,
    /// Whether the cursor is at the start of a line, so notes never glue onto streamed text.
    at_line_start: bool,
    /// Text streamed for the block in progress; empty when the model sent no deltas for it.
    streamed: String,
    /// The last text block shown, if nothing came after it: when it is the final answer,
    /// it is not printed twice.
    last_text: Option<String>,
}

impl TextPrinter {
    pub fn new(out: Box<dyn Write + Send>, verbose: bool) -> Self {
        Self {
            out,
            verbose,
            at_line_start: true,
            streamed: String::new(),
            last_text: None,
        }
    }

    fn write(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.at_line_start = text.ends_with('\n');
        self.out.flush()
    }

    fn end_line(&mut self) -> io::Result<()> {
        if self.at_line_start {
            Ok(())
        } else {
            self.write("\n")
        }
    }

    /// A line of its own, after whatever was streamed before it.
    fn note(&mut self, line: &str) -> io::Result<()> {
        self.end_line()?;
        self.last_text = None;
        self.write(&format!("{line}\n"))
    }

    fn verbose_event(&mut self, kind: &EventKind) -> io::Result<()> {
        match kind {
            EventKind::TextDelta(text) => {
                self.streamed.push_str(text);
                self.write(text)
            }
            EventKind::AssistantBlock { block, .. } => match block {
                ContentBlock::Text { text, .. } => {
                    // A provider that does not stream still gets its text shown.
                    if std::mem::take(&mut self.streamed).is_empty() {
                        self.write(text)?;
                    }
                    self.end_line()?;
                    self.last_text = Some(text.clone());
                    Ok(())
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    self.note(&format!("● {}", call_summary(name, input)))
                }
                _ => Ok(()),
            },
            EventKind::ToolResult(result) => self.note(&format!("  ⎿ {}", outcome(result))),
            EventKind::TaskStarted(_)
            | EventKind::TaskUpdated { .. }
            | EventKind::TaskNotified(_)
            | EventKind::BackgroundTasksChanged(_) => Ok(()),
            EventKind::Retry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                self.streamed.clear();
                let delay = humantime::format_duration(Duration::from_millis(*delay_ms));
                self.note(&format!(
                    "↻ {}: retrying in {delay} (attempt {attempt} of {max_attempts})",
                    first_line(reason, ERROR_CHARS)
                ))
            }
            EventKind::Finished(result) => {
                if self.last_text.as_deref() == Some(result.result.as_str()) {
                    self.end_line()
                } else {
                    self.note(&result.result)
                }
            }
            EventKind::Started(_)
            | EventKind::ThinkingDelta(_)
            | EventKind::MessageCommitted(_) => Ok(()),
        }
    }
}

impl Printer for TextPrinter {
    fn event(&mut self, event: &AgentEvent) -> io::Result<()> {
        if event.agent.parent_tool_use_id.is_some() {
            return Ok(());
        }
        if self.verbose {
            return self.verbose_event(&event.kind);
        }
        match &event.kind {
            EventKind::Finished(result) => self.write(&format!("{}\n", result.result)),
            _ => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `Read(/path)`, `Bash(cargo test)`: the tool and what it is pointed at.
fn call_summary(name: &str, input: &Value) -> String {
    let subject = SUMMARY_FIELDS
        .iter()
        .find_map(|field| input.get(field).and_then(Value::as_str))
        .map(|s| first_line(s, SUMMARY_CHARS));
    match subject {
        Some(s) => format!("{name}({s})"),
        None => name.to_string(),
    }
}

/// A failed call's first line, or the first few lines of what a call returned, so a reader
/// can follow the run without the whole output.
fn outcome(result: &ToolResultEvent) -> String {
    if result.is_error {
        return format!("error: {}", first_line(&result.content, ERROR_CHARS));
    }
    let lines: Vec<&str> = result
        .content
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return "ok".to_string();
    }
    let mut shown: Vec<String> = lines
        .iter()
        .take(OUTCOME_LINES)
        .map(|l| first_line(&l.replace('\t', "  "), SUMMARY_CHARS))
        .collect();
    if lines.len() > OUTCOME_LINES {
        shown.push(format!("… +{} lines", lines.len() - OUTCOME_LINES));
    }
    shown.join("\n    ")
}

/// Lines of a successful call's output shown in verbose text.
const OUTCOME_LINES: usize = 3;

/// The first non-empty line, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= max {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::fixtures::*;
    use super::*;
    use fleet_protocol::{PermissionNote, ResultSubtype};

    fn run(events: &[AgentEvent], verbose: bool) -> String {
        let buf = SharedBuf::default();
        let mut printer = TextPrinter::new(Box::new(buf.clone()), verbose);
        for event in events {
            printer.event(event).unwrap();
        }
        printer.finish().unwrap();
        buf.text()
    }

    fn failed(id: &str, content: &str) -> AgentEvent {
        main_event(EventKind::ToolResult(ToolResultEvent {
            tool_use_id: id.into(),
            tool_name: "Read".into(),
            content: content.into(),
            is_error: true,
            structured: None,
            permission: PermissionNote {
                decision: "accept".into(),
                reason_type: "mode".into(),
                rule: None,
            },
        }))
    }

    #[test]
    fn prints_only_the_final_answer() {
        assert_eq!(run(&basic_session(), false), "DONE: hello fleet\n");
    }

    #[test]
    fn an_error_result_prints_what_went_wrong() {
        let events = [main_event(EventKind::Finished(run_result(
            ResultSubtype::ErrorDuringExecution,
            "API error 401: invalid x-api-key. Check ANTHROPIC_API_KEY.",
        )))];
        assert_eq!(
            run(&events, false),
            "API error 401: invalid x-api-key. Check ANTHROPIC_API_KEY.\n"
        );
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
            run(&events, true),
            "↻ 529 Overloaded: retrying in 1s 500ms (attempt 2 of 9)\n\
             Looking.\n\
             ● Read(/nope)\n  ⎿ error: File does not exist: /nope.\n\
             Reached the turn limit (1).\n"
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
        let events = basic_session();
        let (last, rest) = events.split_last().unwrap();
        for event in rest {
            printer.event(event).unwrap();
        }
        let err = printer.event(last).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    }
}
