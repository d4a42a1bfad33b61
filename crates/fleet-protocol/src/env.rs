//! The environment variables fleet reads for numbers and switches, and the one parser they all
//! go through.
//!
//! Each variable is declared once here with its type and bounds, so that every reader agrees
//! on what a value means and the binary can check them all ([`check_all`]) before it does
//! anything: a typo such as `FLEET_MAX_RETRIES=abc` or a value that would break every request
//! (`FLEET_STREAM_IDLE_TIMEOUT_MS=0`) stops fleet with an error naming the variable, its value
//! and what is expected, instead of being ignored or failing later.
//!
//! Rules shared by every variable: unset, empty or blank means "not set" (the default
//! applies); surrounding spaces are ignored; a value that is not UTF-8 is invalid. Switches take
//! `1`/`0`/`true`/`false` (any case) and nothing else, so `yes` is an error rather than a
//! silent "off". A choice takes one of a few words (any case). Text variables (`FLEET_MODEL`,
//! `ANTHROPIC_BASE_URL`, …) are not here: any text is a value, and their readers check what
//! they mean.

use std::fmt;
use std::time::Duration;
use thiserror::Error;

/// A variable set to something its type does not allow.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{name}={value:?} is not valid: expected {expected}")]
pub struct EnvError {
    pub name: &'static str,
    /// The value as set (lossily decoded when it is not UTF-8).
    pub value: String,
    /// What the variable takes, in words: "a whole number from 0 to 100".
    pub expected: String,
}

/// An on/off switch: `1`/`true` or `0`/`false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagVar {
    pub name: &'static str,
}

/// A whole number within `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountVar {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
}

/// A duration in whole milliseconds within `min..=max`; `min` is at least 1, since a zero
/// timeout or delay is never what anyone means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MillisVar {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
}

/// One word out of a fixed few, compared without regard to case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChoiceVar {
    pub name: &'static str,
    pub values: &'static [&'static str],
}

/// Any of the typed variables, for checking them all at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Var {
    Flag(FlagVar),
    Count(CountVar),
    Millis(MillisVar),
    Choice(ChoiceVar),
}

/// The raw value of `name`: `None` when unset or blank, `Err` when it is not UTF-8.
fn raw(name: &'static str) -> Result<Option<String>, EnvError> {
    match std::env::var(name) {
        Ok(value) if value.trim().is_empty() => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(value)) => Err(EnvError {
            name,
            value: value.to_string_lossy().into_owned(),
            expected: "UTF-8 text".into(),
        }),
    }
}

impl FlagVar {
    pub const fn new(name: &'static str) -> Self {
        Self { name }
    }

    /// The switch as set in the environment; `None` when unset.
    pub fn get(&self) -> Result<Option<bool>, EnvError> {
        raw(self.name)?.map(|v| self.parse(&v)).transpose()
    }

    /// Whether the switch is on; off when unset.
    pub fn is_on(&self) -> Result<bool, EnvError> {
        Ok(self.get()?.unwrap_or(false))
    }

    /// Reads one value as this variable would.
    pub fn parse(&self, value: &str) -> Result<bool, EnvError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            _ => Err(EnvError {
                name: self.name,
                value: value.to_string(),
                expected: "1 or true to turn it on, 0 or false to turn it off".into(),
            }),
        }
    }
}

/// `value` as a whole number in `min..=max`, or what went wrong in words.
fn bounded(value: &str, min: u64, max: u64) -> Result<u64, ()> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or(())
}

impl CountVar {
    pub const fn new(name: &'static str, min: u64, max: u64) -> Self {
        Self { name, min, max }
    }

    /// The number as set in the environment; `None` when unset.
    pub fn get(&self) -> Result<Option<u64>, EnvError> {
        raw(self.name)?.map(|v| self.parse(&v)).transpose()
    }

    /// Reads one value as this variable would.
    pub fn parse(&self, value: &str) -> Result<u64, EnvError> {
        bounded(value, self.min, self.max).map_err(|()| EnvError {
            name: self.name,
            value: value.to_string(),
            expected: format!("a whole number from {} to {}", self.min, self.max),
        })
    }
}

impl MillisVar {
    pub const fn new(name: &'static str, min: u64, max: u64) -> Self {
        let min = if min == 0 { 1 } else { min };
        Self { name, min, max }
    }

    /// The duration as set in the environment; `None` when unset.
    pub fn get(&self) -> Result<Option<Duration>, EnvError> {
        raw(self.name)?.map(|v| self.parse(&v)).transpose()
    }

    /// Reads one value as this variable would.
    pub fn parse(&self, value: &str) -> Result<Duration, EnvError> {
        bounded(value, self.min, self.max)
            .map(Duration::from_millis)
            .map_err(|()| EnvError {
                name: self.name,
                value: value.to_string(),
                expected: format!("a number of milliseconds from {} to {}", self.min, self.max),
            })
    }
}

impl ChoiceVar {
    pub const fn new(name: &'static str, values: &'static [&'static str]) -> Self {
        Self { name, values }
    }

    /// The word as set in the environment, spelt as in `values`; `None` when unset.
    pub fn get(&self) -> Result<Option<&'static str>, EnvError> {
        raw(self.name)?.map(|v| self.parse(&v)).transpose()
    }

    /// Reads one value as this variable would.
    pub fn parse(&self, value: &str) -> Result<&'static str, EnvError> {
        let word = value.trim();
        self.values
            .iter()
            .find(|v| v.eq_ignore_ascii_case(word))
            .copied()
            .ok_or_else(|| EnvError {
                name: self.name,
                value: value.to_string(),
                expected: format!("one of {}", self.values.join(", ")),
            })
    }
}

impl Var {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Flag(v) => v.name,
            Self::Count(v) => v.name,
            Self::Millis(v) => v.name,
            Self::Choice(v) => v.name,
        }
    }

    /// Whether the variable's current value (if any) is valid.
    pub fn check(&self) -> Result<(), EnvError> {
        match self {
            Self::Flag(v) => v.get().map(drop),
            Self::Count(v) => v.get().map(drop),
            Self::Millis(v) => v.get().map(drop),
            Self::Choice(v) => v.get().map(drop),
        }
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One day: the longest any timeout or delay may be set to.
const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Retries after a request's first attempt.
pub const FLEET_MAX_RETRIES: CountVar = CountVar::new("FLEET_MAX_RETRIES", 0, 100);
/// The first backoff delay between retries.
pub const FLEET_RETRY_BASE_DELAY_MS: MillisVar =
    MillisVar::new("FLEET_RETRY_BASE_DELAY_MS", 1, 600_000);
/// How long connecting to the model server may take.
pub const FLEET_CONNECT_TIMEOUT_MS: MillisVar =
    MillisVar::new("FLEET_CONNECT_TIMEOUT_MS", 1, DAY_MS);
/// The longest silence allowed inside a streamed reply, once it has begun.
pub const FLEET_STREAM_IDLE_TIMEOUT_MS: MillisVar =
    MillisVar::new("FLEET_STREAM_IDLE_TIMEOUT_MS", 1, DAY_MS);
/// The longest reply (`max_tokens`) any agent asks for; beats `CLAUDE_CODE_MAX_OUTPUT_TOKENS`
/// and the `maxOutputTokens` setting, loses to `--max-output-tokens`.
pub const FLEET_MAX_OUTPUT_TOKENS: CountVar =
    CountVar::new("FLEET_MAX_OUTPUT_TOKENS", 1, 10_000_000);
/// Claude Code's name for the same limit, read when fleet's own is not set.
pub const CLAUDE_CODE_MAX_OUTPUT_TOKENS: CountVar =
    CountVar::new("CLAUDE_CODE_MAX_OUTPUT_TOKENS", 1, 10_000_000);
/// How long a model server may take from the request to the reply's first event (10 minutes
/// for a server on this machine or a private network, 3 minutes otherwise, unless set).
pub const FLEET_FIRST_TOKEN_TIMEOUT_MS: MillisVar =
    MillisVar::new("FLEET_FIRST_TOKEN_TIMEOUT_MS", 1, DAY_MS);
/// The `tool_choice` sent to OpenAI-compatible servers with the tools (`auto` unless set);
/// some servers only call tools when it is given, a few reject it.
pub const FLEET_OPENAI_TOOL_CHOICE: ChoiceVar =
    ChoiceVar::new("FLEET_OPENAI_TOOL_CHOICE", &["omit", "auto", "required"]);
/// Read-only tool calls of one reply that run at once.
pub const FLEET_MAX_TOOL_USE_CONCURRENCY: CountVar =
    CountVar::new("FLEET_MAX_TOOL_USE_CONCURRENCY", 1, 1_000);
/// How deep subagents may nest.
pub const FLEET_MAX_SPAWN_DEPTH: CountVar = CountVar::new("FLEET_MAX_SPAWN_DEPTH", 1, 100);
/// Subagents running at once across the tree.
pub const FLEET_MAX_CONCURRENT_SUBAGENTS: CountVar =
    CountVar::new("FLEET_MAX_CONCURRENT_SUBAGENTS", 1, 10_000);
/// Model requests in flight at once in one fleet process (every agent's together).
pub const FLEET_MAX_MODEL_REQUESTS: CountVar =
    CountVar::new("FLEET_MAX_MODEL_REQUESTS", 1, 100_000);
/// An Agent call without a type forks the caller.
pub const FLEET_FORK_SUBAGENT: FlagVar = FlagVar::new("FLEET_FORK_SUBAGENT");
/// Run the main agent as a coordinator.
pub const FLEET_COORDINATOR_MODE: FlagVar = FlagVar::new("FLEET_COORDINATOR_MODE");
/// The JSON printers also print what foreground subagents say (their `assistant` lines and
/// tool results), which Claude Code's line set leaves out.
pub const FLEET_SUBAGENT_MESSAGES: FlagVar = FlagVar::new("FLEET_SUBAGENT_MESSAGES");
/// Write no session transcript.
pub const FLEET_NO_SESSION_PERSISTENCE: FlagVar = FlagVar::new("FLEET_NO_SESSION_PERSISTENCE");
/// Trust the repository for this run, as `--trust-project` (for CI).
pub const FLEET_TRUST_PROJECT: FlagVar = FlagVar::new("FLEET_TRUST_PROJECT");
/// Teams (`Agent` with `name` starts a teammate); on unless set to 0.
pub const FLEET_AGENT_TEAMS: FlagVar = FlagVar::new("FLEET_AGENT_TEAMS");
/// Approve a plan-mode teammate's plan as soon as it is submitted (off unless set to 1).
pub const FLEET_TEAM_AUTO_APPROVE_PLANS: FlagVar = FlagVar::new("FLEET_TEAM_AUTO_APPROVE_PLANS");
/// Send no `cache_control` breakpoints.
pub const DISABLE_PROMPT_CACHING: FlagVar = FlagVar::new("DISABLE_PROMPT_CACHING");
/// Characters of Bash output kept per call (Claude Code's variable and its ceiling).
pub const BASH_MAX_OUTPUT_LENGTH: CountVar = CountVar::new("BASH_MAX_OUTPUT_LENGTH", 1, 150_000);

/// The percentage of a model's context window at which an agent compacts its conversation
/// (it can only make compaction come earlier: the reply always keeps its reserve).
pub const FLEET_AUTOCOMPACT_PCT: CountVar = CountVar::new("FLEET_AUTOCOMPACT_PCT", 1, 100);
/// Never compact on its own (a prompt the API finds too long is still recovered from).
pub const FLEET_DISABLE_AUTO_COMPACT: FlagVar = FlagVar::new("FLEET_DISABLE_AUTO_COMPACT");
/// Set by the Agent SDKs: print `system/session_state_changed` lines in stream-json (the SDK
/// keeps stdin open until it reads `idle`).
pub const CLAUDE_CODE_SDK_READS_SESSION_STATE: FlagVar =
    FlagVar::new("CLAUDE_CODE_SDK_READS_SESSION_STATE");
/// `--json-schema`: how many times the model may fail to give valid structured output (a
/// call the schema refuses, or a reply without the call) before the run ends with
/// `error_max_structured_output_retries` (Claude Code's variable; 5 unless set).
pub const MAX_STRUCTURED_OUTPUT_RETRIES: CountVar =
    CountVar::new("MAX_STRUCTURED_OUTPUT_RETRIES", 1, 100);

/// How long a remote job stays with a worker that stopped renewing it before JetStream hands
/// it to another (fixed when the workers' consumer is first made on a broker).
pub const FLEET_REMOTE_ACK_WAIT_MS: MillisVar =
    MillisVar::new("FLEET_REMOTE_ACK_WAIT_MS", 100, DAY_MS);
/// How often a remote worker renews its heartbeat.
pub const FLEET_REMOTE_HEARTBEAT_MS: MillisVar =
    MillisVar::new("FLEET_REMOTE_HEARTBEAT_MS", 10, 600_000);
/// How often Ultraplan's detached poll reads the remote session (3 s unless set).
pub const FLEET_ULTRAPLAN_POLL_MS: MillisVar = MillisVar::new("FLEET_ULTRAPLAN_POLL_MS", 1, DAY_MS);
/// Consecutive failed polls after which Ultraplan gives up (5 unless set).
pub const FLEET_ULTRAPLAN_MAX_FAILURES: CountVar =
    CountVar::new("FLEET_ULTRAPLAN_MAX_FAILURES", 1, 1_000);
/// How long an Ultraplan session may run before it is archived (30 min unless set).
pub const FLEET_ULTRAPLAN_TIMEOUT_MS: MillisVar =
    MillisVar::new("FLEET_ULTRAPLAN_TIMEOUT_MS", 1, DAY_MS);
/// How long any wait (the model, a tool, a child, mail, the output's reader) may last before
/// the watchdog reports what is being waited for (5 minutes unless set); reported again at
/// each doubling.
pub const FLEET_WATCHDOG_MS: MillisVar = MillisVar::new("FLEET_WATCHDOG_MS", 1, DAY_MS);

/// Every typed variable, in the order they are checked.
pub const ALL: &[Var] = &[
    Var::Count(FLEET_MAX_RETRIES),
    Var::Millis(FLEET_RETRY_BASE_DELAY_MS),
    Var::Millis(FLEET_CONNECT_TIMEOUT_MS),
    Var::Millis(FLEET_STREAM_IDLE_TIMEOUT_MS),
    Var::Count(FLEET_MAX_OUTPUT_TOKENS),
    Var::Count(CLAUDE_CODE_MAX_OUTPUT_TOKENS),
    Var::Millis(FLEET_FIRST_TOKEN_TIMEOUT_MS),
    Var::Choice(FLEET_OPENAI_TOOL_CHOICE),
    Var::Count(FLEET_MAX_TOOL_USE_CONCURRENCY),
    Var::Count(FLEET_MAX_SPAWN_DEPTH),
    Var::Count(FLEET_MAX_CONCURRENT_SUBAGENTS),
    Var::Count(FLEET_MAX_MODEL_REQUESTS),
    Var::Flag(FLEET_FORK_SUBAGENT),
    Var::Flag(FLEET_COORDINATOR_MODE),
    Var::Flag(FLEET_NO_SESSION_PERSISTENCE),
    Var::Flag(FLEET_SUBAGENT_MESSAGES),
    Var::Flag(FLEET_TRUST_PROJECT),
    Var::Flag(FLEET_AGENT_TEAMS),
    Var::Flag(FLEET_TEAM_AUTO_APPROVE_PLANS),
    Var::Flag(DISABLE_PROMPT_CACHING),
    Var::Count(BASH_MAX_OUTPUT_LENGTH),
    Var::Count(FLEET_AUTOCOMPACT_PCT),
    Var::Flag(FLEET_DISABLE_AUTO_COMPACT),
    Var::Flag(CLAUDE_CODE_SDK_READS_SESSION_STATE),
    Var::Count(MAX_STRUCTURED_OUTPUT_RETRIES),
    Var::Millis(FLEET_REMOTE_ACK_WAIT_MS),
    Var::Millis(FLEET_REMOTE_HEARTBEAT_MS),
    Var::Millis(FLEET_ULTRAPLAN_POLL_MS),
    Var::Count(FLEET_ULTRAPLAN_MAX_FAILURES),
    Var::Millis(FLEET_ULTRAPLAN_TIMEOUT_MS),
    Var::Millis(FLEET_WATCHDOG_MS),
];

/// Checks every variable in [`ALL`]; the errors of all the invalid ones, so a user fixes them
/// in one go.
pub fn check_all() -> Vec<EnvError> {
    ALL.iter().filter_map(|var| var.check().err()).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn flags_take_one_zero_true_false_only() {
        let flag = FlagVar::new("X_FLAG");
        for (value, on) in [
            ("1", true),
            ("TRUE", true),
            (" 0 ", false),
            ("false", false),
        ] {
            assert_eq!(flag.parse(value), Ok(on), "{value}");
        }
        for value in ["yes", "on", "2", "enabled"] {
            let err = flag.parse(value).unwrap_err();
            assert_eq!(err.name, "X_FLAG");
            assert!(
                err.to_string().contains(&format!("X_FLAG={value:?}")),
                "{err}"
            );
        }
    }

    #[test]
    fn counts_are_whole_numbers_within_bounds() {
        let count = CountVar::new("X_COUNT", 1, 10);
        assert_eq!(count.parse(" 7 "), Ok(7));
        for value in ["0", "11", "-5", "abc", "2.5"] {
            let err = count.parse(value).unwrap_err();
            assert_eq!(err.expected, "a whole number from 1 to 10", "{value}");
        }
    }

    #[test]
    fn durations_are_never_zero() {
        let ms = MillisVar::new("X_MS", 0, 1000);
        assert_eq!(ms.min, 1);
        assert_eq!(ms.parse("250"), Ok(Duration::from_millis(250)));
        assert!(ms.parse("0").is_err());
        assert!(ms.parse("1001").is_err());
    }

    #[test]
    fn choices_take_their_words_in_any_case_and_nothing_else() {
        let choice = ChoiceVar::new("X_CHOICE", &["omit", "auto"]);
        assert_eq!(choice.parse(" AUTO "), Ok("auto"));
        let err = choice.parse("sometimes").unwrap_err();
        assert_eq!(err.expected, "one of omit, auto");
        assert!(err.to_string().contains("X_CHOICE=\"sometimes\""), "{err}");
    }

    #[test]
    fn every_variable_is_listed_once() {
        let mut names: Vec<&str> = ALL.iter().map(Var::name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
