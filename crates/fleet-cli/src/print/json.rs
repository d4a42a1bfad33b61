//! `--output-format json`: one object at the end, the same `result` object `stream-json`
//! ends with, on one line. With `--verbose`, one array of every `stream-json` object instead,
//! as Claude Code does.
//!
//! Both are written at `finish`: the session can run the main agent more than once (a
//! background task's notification wakes it), and the last result is the one that answers.

use super::encode::Encoder;
use super::{subagent_messages_wanted, write_json_line, PrintOptions, Printer};
use fleet_protocol::wire::StreamLine;
use fleet_protocol::AgentEvent;
use std::io::{self, Write};

pub struct JsonPrinter {
    out: Box<dyn Write + Send>,
    encoder: Encoder,
    verbose: bool,
    /// Verbose only: every line so far, results excepted (the encoder holds those).
    collected: Vec<StreamLine>,
    finished: bool,
}

impl JsonPrinter {
    pub fn new(out: Box<dyn Write + Send>, options: &PrintOptions) -> Self {
        Self {
            out,
            // Partial deltas belong to streaming output; a document written at the end has
            // no use for them.
            encoder: Encoder::new(options.session_id.clone(), false)
                .with_subagent_messages(subagent_messages_wanted()),
            verbose: options.verbose,
            collected: Vec::new(),
            finished: false,
        }
    }
}

impl Printer for JsonPrinter {
    fn event(&mut self, event: &AgentEvent) -> io::Result<()> {
        // Encoding every event keeps the session id and the held results right in both modes.
        let lines = self.encoder.encode(event);
        if self.verbose {
            self.collected.extend(lines);
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        let held = self.encoder.release_held();
        let results = self.encoder.take_results();
        if self.verbose {
            let mut all = std::mem::take(&mut self.collected);
            all.extend(held);
            all.extend(results.into_iter().map(StreamLine::from));
            return write_json_line(&mut self.out, &all);
        }
        match results.into_iter().last() {
            Some(result) => write_json_line(&mut self.out, &StreamLine::from(result)),
            None => self.out.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::fixtures::*;
    use super::*;
    use fleet_protocol::{ContentBlock, EventKind, ResultSubtype};

    fn run(events: &[AgentEvent], verbose: bool) -> SharedBuf {
        let buf = SharedBuf::default();
        let options = PrintOptions {
            verbose,
            ..PrintOptions::default()
        };
        let mut printer = JsonPrinter::new(Box::new(buf.clone()), &options);
        for event in events {
            printer.event(event).unwrap();
        }
        printer.finish().unwrap();
        buf
    }

    #[test]
    fn prints_exactly_one_line_the_result() {
        let buf = run(&basic_session(), false);
        let lines = buf.json_lines();
        assert_eq!(lines.len(), 1);
        let result = &lines[0];
        assert_eq!(result["type"], "result");
        assert_eq!(result["subtype"], "success");
        assert_eq!(result["result"], "DONE: hello fleet");
        assert_eq!(result["session_id"], SESSION);
        assert_eq!(result["usage"]["cache_read_input_tokens"], 0);
    }

    #[test]
    fn prints_nothing_before_finish() {
        let buf = SharedBuf::default();
        let mut printer = JsonPrinter::new(Box::new(buf.clone()), &PrintOptions::default());
        for event in basic_session() {
            printer.event(&event).unwrap();
        }
        assert_eq!(buf.text(), "");
        printer.finish().unwrap();
        printer.finish().unwrap();
        assert_eq!(buf.text().lines().count(), 1, "finish writes once");
    }

    #[test]
    fn a_subagent_result_is_not_the_session_result() {
        let mut events = basic_session();
        let last = events.pop().unwrap();
        events.push(sub_event(started()));
        events.push(sub_event(block("msg_9", ContentBlock::text("child"), 10)));
        events.push(sub_event(EventKind::Finished(run_result(
            ResultSubtype::Success,
            "CHILD-RESULT-42",
        ))));
        let only_child = run(&events, false);
        assert_eq!(only_child.text(), "", "no main result, nothing printed");
        events.push(last);
        let lines = run(&events, false).json_lines();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["result"], "DONE: hello fleet");
    }

    #[test]
    fn the_latest_main_result_wins() {
        let mut events = basic_session();
        events.push(main_event(EventKind::Finished(run_result(
            ResultSubtype::ErrorMaxTurns,
            "Reached the turn limit (4).",
        ))));
        let lines = run(&events, false).json_lines();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["subtype"], "error_max_turns");
        assert_eq!(lines[0]["terminal_reason"], "max_turns");
        assert_eq!(lines[0]["errors"][0], "Reached the turn limit (4).");
    }

    #[test]
    fn verbose_prints_one_array_of_every_stream_json_object() {
        let buf = run(&basic_session(), true);
        assert_eq!(buf.text().lines().count(), 1);
        let all: serde_json::Value = serde_json::from_str(&buf.text()).unwrap();
        let all = all.as_array().unwrap();
        assert_eq!(all.len(), 10);
        assert_eq!(all[0]["subtype"], "init");
        assert_eq!(all[3]["type"], "user");
        assert_eq!(all[9]["type"], "result");
        assert!(all.iter().all(|v| v["session_id"] == SESSION));
    }

    #[test]
    fn a_closed_pipe_is_reported_at_finish() {
        let mut printer = JsonPrinter::new(Box::new(ClosedPipe), &PrintOptions::default());
        for event in basic_session() {
            printer.event(&event).unwrap();
        }
        let err = printer.finish().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    }
}
