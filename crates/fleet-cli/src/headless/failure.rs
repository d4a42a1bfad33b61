//! A headless run that fails before its printer has the output — a flag clap refuses, a bad
//! variable, no API key, an unknown `--resume` id — still ends the way a script reading
//! `--output-format json|stream-json` expects: exactly one `result` object on stdout with
//! `is_error: true` (an array holding it for `json --verbose`), the message for people on
//! stderr (written by `main`), and a non-zero exit.
//!
//! clap may be what refused the command line, so the format is read from argv leniently
//! ([`Wanted::from_argv`]), not from the parsed arguments.

use crate::print::OutputFormat;
use fleet_protocol::wire::{ResultLine, ResultUsage, StreamLine};
use fleet_protocol::{ResultSubtype, TerminalReason};
use std::ffi::OsString;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once something else owns stdout: the run's printer (it prints the results from then
/// on, an error one included), or the terminal UI. A failure after that adds no line.
static STDOUT_TAKEN: AtomicBool = AtomicBool::new(false);

/// Says that the printer or the terminal UI writes stdout from now on.
pub(crate) fn stdout_taken() {
    STDOUT_TAKEN.store(true, Ordering::Release);
}

/// What a failure's `result` line must look like, as the command line asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wanted {
    format: OutputFormat,
    verbose: bool,
    session_id: Option<String>,
}

/// Why the run could not start, as far as the result's shape goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// No model credentials at all: Claude Code reports a missing or refused key as a
    /// `success` that `is_error`, ended by `api_error` (see the 401 reference).
    NoCredentials,
    /// Anything else: `error_during_execution`, ended by `error`.
    Other,
}

/// The variables any of which makes a model provider configured (see
/// `fleet_model::provider`).
const CREDENTIALS: [&str; 5] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FLEET_PROVIDER",
];

impl Cause {
    /// The cause of `err`: a model client that could not be configured while no credential
    /// is set is a missing key; the rest is [`Cause::Other`].
    pub(crate) fn of(err: &anyhow::Error) -> Self {
        let model_config = err.chain().any(|cause| {
            let model = match cause.downcast_ref::<fleet_session::SessionError>() {
                Some(fleet_session::SessionError::Model(model)) => Some(&**model),
                _ => cause.downcast_ref::<fleet_model::ModelError>(),
            };
            matches!(model, Some(fleet_model::ModelError::Config(_)))
        });
        let unset = |name: &&str| std::env::var(name).map_or(true, |v| v.trim().is_empty());
        if model_config && CREDENTIALS.iter().all(unset) {
            Self::NoCredentials
        } else {
            Self::Other
        }
    }
}

impl Wanted {
    /// `--output-format json|stream-json` (and `--verbose`, `--session-id`) as argv gives
    /// them, whatever else is wrong with it; `None` for text output, or a format that is not
    /// one (clap says so on stderr).
    pub(crate) fn from_argv(argv: &[OsString]) -> Option<Self> {
        let mut format = None;
        let mut verbose = false;
        let mut session_id = None;
        let mut args = argv.iter().skip(1).map(|a| a.to_string_lossy());
        while let Some(arg) = args.next() {
            if arg == "--" {
                break;
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
                _ => (arg.as_ref(), None),
            };
            match flag {
                "--output-format" => {
                    let value = inline.or_else(|| args.next().map(|v| v.into_owned()));
                    format = value.and_then(|v| v.parse::<OutputFormat>().ok());
                }
                "--session-id" => {
                    session_id = inline.or_else(|| args.next().map(|v| v.into_owned()));
                }
                "--verbose" => verbose = true,
                _ => {}
            }
        }
        match format? {
            OutputFormat::Text => None,
            format => Some(Self {
                format,
                verbose,
                session_id,
            }),
        }
    }

    /// Writes the failure's `result` to stdout, unless the printer or the terminal UI has it.
    pub(crate) fn report(&self, message: &str, cause: Cause) {
        if STDOUT_TAKEN.load(Ordering::Acquire) {
            return;
        }
        let mut out = std::io::stdout().lock();
        // Nothing more can be done when stdout is gone; stderr has the message.
        let _ = self.write(&mut out, message, cause);
    }

    fn write(&self, out: &mut dyn Write, message: &str, cause: Cause) -> std::io::Result<()> {
        let line = StreamLine::from(result_line(
            message,
            cause,
            self.session_id.clone().unwrap_or_default(),
        ));
        if self.format == OutputFormat::Json && self.verbose {
            crate::print::write_json_line(out, &[line])
        } else {
            crate::print::write_json_line(out, &line)
        }
    }
}

/// The `result` of a run that never started: no turn, no cost, the message as `result` and in
/// `errors`. Its `session_id` is `--session-id` when given, else empty: no session exists.
fn result_line(message: &str, cause: Cause, session_id: String) -> ResultLine {
    let (subtype, terminal_reason) = match cause {
        Cause::NoCredentials => (ResultSubtype::Success, TerminalReason::ApiError),
        Cause::Other => (ResultSubtype::ErrorDuringExecution, TerminalReason::Error),
    };
    ResultLine {
        subtype,
        is_error: true,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        result: message.to_string(),
        stop_reason: None,
        session_id,
        total_cost_usd: Some(0.0),
        usage: Some(ResultUsage::new(0, 0, 0, 0)),
        model_usage: Default::default(),
        permission_denials: Vec::new(),
        api_error_status: None,
        terminal_reason,
        structured_output: None,
        origin: None,
        subagent_stats: None,
        usage_by_agent: None,
        errors: Some(vec![message.to_string()]),
        usage_unreported_replies: None,
        result_index: 0,
        uuid: uuid::Uuid::new_v4().to_string(),
        team: None,
    }
}

/// clap's refusal as one line for the `result`: its text without `error: ` and the hint that
/// follows the blank line.
pub(crate) fn clap_message(err: &clap::Error) -> String {
    let text = err.render().to_string();
    let text = text.trim_start().strip_prefix("error: ").unwrap_or(&text);
    text.split("\n\n")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("fleet")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_format_is_read_from_argv_in_both_spellings_and_text_wants_nothing() {
        let wanted = Wanted::from_argv(&argv(&["-p", "x", "--output-format", "stream-json"]));
        assert_eq!(
            wanted.map(|w| w.format),
            Some(OutputFormat::StreamJson),
            "separate value"
        );
        let wanted = Wanted::from_argv(&argv(&[
            "--output-format=json",
            "--verbose",
            "--session-id=abc",
        ]))
        .unwrap();
        assert_eq!(wanted.format, OutputFormat::Json);
        assert!(wanted.verbose);
        assert_eq!(wanted.session_id.as_deref(), Some("abc"));
        assert_eq!(Wanted::from_argv(&argv(&["-p", "x"])), None);
        assert_eq!(Wanted::from_argv(&argv(&["--output-format", "text"])), None);
        assert_eq!(Wanted::from_argv(&argv(&["--output-format", "xml"])), None);
        assert_eq!(Wanted::from_argv(&argv(&["--output-format"])), None);
        // After `--`, words are the prompt's.
        assert_eq!(
            Wanted::from_argv(&argv(&["-p", "--", "--output-format", "json"])),
            None
        );
    }

    #[test]
    fn the_result_is_one_error_line_and_an_array_for_verbose_json() {
        let mut out = Vec::new();
        let wanted = Wanted::from_argv(&argv(&["--output-format", "stream-json"])).unwrap();
        wanted
            .write(&mut out, "no session \"x\"", Cause::Other)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1);
        let line: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(line["type"], "result");
        assert_eq!(line["subtype"], "error_during_execution");
        assert_eq!(line["is_error"], true);
        assert_eq!(line["terminal_reason"], "error");
        assert_eq!(line["result"], "no session \"x\"");
        assert_eq!(line["errors"][0], "no session \"x\"");
        assert_eq!(line["session_id"], "");

        let mut out = Vec::new();
        let wanted = Wanted::from_argv(&argv(&["--output-format", "json", "--verbose"])).unwrap();
        wanted
            .write(&mut out, "no key", Cause::NoCredentials)
            .unwrap();
        let all: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(all.as_array().unwrap().len(), 1);
        assert_eq!(all[0]["subtype"], "success");
        assert_eq!(all[0]["is_error"], true);
        assert_eq!(all[0]["terminal_reason"], "api_error");
    }
}
