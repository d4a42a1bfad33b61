//! The headless printers of `fleet -p`: each turns the session's one `AgentEvent` stream into
//! what a script or a person reads on stdout.
//!
//! `stream-json` and `json` keep Claude Code's shapes (event `type`/`subtype` values and key
//! names) so that scripts written against it keep working; `text` is for people.
//!
//! A printer only writes: it never decides the exit code, and a failed write (EPIPE when the
//! reader has gone away) comes back as an `io::Error` for the caller to act on.

mod encode;
mod json;
mod line;
mod order;
mod partial;
mod results;
mod sdk_lines;
mod stream_json;
mod tasks;
mod text;

#[cfg(test)]
mod background_tests;
#[cfg(test)]
mod claude_order_tests;
#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod sdk_tests;
#[cfg(test)]
mod unreported_tests;

use fleet_protocol::AgentEvent;
use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

pub use json::JsonPrinter;
pub use stream_json::StreamJsonPrinter;
pub use text::TextPrinter;

/// The value of `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    StreamJson,
}

impl OutputFormat {
    pub const NAMES: [&'static str; 3] = ["text", "json", "stream-json"];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
            Self::StreamJson => "stream-json",
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error is a plain `String` so that clap's `value_parser` shows it as is.
impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            "stream-json" => Ok(Self::StreamJson),
            other => Err(format!(
                "unknown output format `{other}`; expected one of: {}",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// A consumer of the event stream that writes to stdout (or any writer).
pub trait Printer {
    /// Renders one event; called for every event of the session, subagents' included.
    fn event(&mut self, event: &AgentEvent) -> io::Result<()>;
    /// Called once after the last event: printers that buffer write out here.
    fn finish(&mut self) -> io::Result<()>;
}

/// Everything that changes what a printer writes, beyond the format.
#[derive(Debug, Clone, Default)]
pub struct PrintOptions {
    /// `--verbose`: `json` prints every event as one array, `text` narrates the run.
    pub verbose: bool,
    /// `--include-partial-messages`: `stream-json` also prints the replies' stream events
    /// (`stream_event` lines: message and block starts and stops, every delta).
    pub include_partial_messages: bool,
    /// The session id when known before the first event; otherwise taken from `Started`.
    pub session_id: Option<String>,
    /// `stream-json`: print each `result` line as soon as its run ends, instead of holding
    /// them all to the end. Set when the prompts themselves come as stream-json, since the
    /// caller then waits for each result before sending its next message.
    pub results_as_they_come: bool,
    /// `--include-hook-events`: `stream-json` also prints `hook_started` / `hook_response`.
    pub include_hook_events: bool,
    /// `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`: `stream-json` also prints
    /// `session_state_changed` lines (running, requires_action, idle) for the Agent SDKs.
    pub session_state: bool,
}

/// The printer for `format`, writing to `out`.
pub fn printer_with(
    format: OutputFormat,
    options: &PrintOptions,
    out: Box<dyn Write + Send>,
) -> Box<dyn Printer + Send> {
    match format {
        OutputFormat::Text => Box::new(TextPrinter::new(out, options.verbose)),
        OutputFormat::Json => Box::new(JsonPrinter::new(out, options)),
        OutputFormat::StreamJson => Box::new(StreamJsonPrinter::new(out, options)),
    }
}

/// Writes `value` as one compact line and flushes it, so a reader sees each event as it
/// happens; a failed write or flush is returned, never swallowed. JSON already escapes C0
/// controls; the C1 controls and bidi overrides it would leave raw are escaped too (see
/// [`crate::visible::json_safe`]), so `fleet -p … --output-format stream-json` on a terminal
/// is as safe as text.
pub(crate) fn write_json_line(
    out: &mut dyn Write,
    value: &impl serde::Serialize,
) -> io::Result<()> {
    let line = serde_json::to_string(value)?;
    let mut line = match crate::visible::json_safe(&line) {
        std::borrow::Cow::Borrowed(_) => line,
        std::borrow::Cow::Owned(safe) => safe,
    };
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// `FLEET_SUBAGENT_MESSAGES=1`: the JSON printers also print what foreground subagents say
/// (their `assistant` lines and tool results), which Claude Code leaves out. A bad value was
/// refused when fleet started (`env::check_all`).
fn subagent_messages_wanted() -> bool {
    fleet_protocol::env::FLEET_SUBAGENT_MESSAGES
        .is_on()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::fixtures::{basic_session, SharedBuf};
    use super::*;

    #[test]
    fn output_format_parses_the_three_names_and_rejects_others() {
        for name in OutputFormat::NAMES {
            let format: OutputFormat = name.parse().unwrap();
            assert_eq!(format.to_string(), name);
        }
        let err = "xml".parse::<OutputFormat>().unwrap_err();
        assert_eq!(
            err,
            "unknown output format `xml`; expected one of: text, json, stream-json"
        );
        assert!("JSON".parse::<OutputFormat>().is_err());
    }

    #[test]
    fn factory_builds_the_printer_for_each_format() {
        let outputs: Vec<String> = [
            OutputFormat::Text,
            OutputFormat::Json,
            OutputFormat::StreamJson,
        ]
        .into_iter()
        .map(|format| {
            let buf = SharedBuf::default();
            let mut p = printer_with(format, &PrintOptions::default(), Box::new(buf.clone()));
            for event in basic_session() {
                p.event(&event).unwrap();
            }
            p.finish().unwrap();
            buf.text()
        })
        .collect();
        assert_eq!(outputs[0], "DONE: hello fleet\n");
        let json: serde_json::Value = serde_json::from_str(&outputs[1]).unwrap();
        assert_eq!(json["type"], "result");
        assert_eq!(outputs[2].lines().count(), 10);
    }
}
