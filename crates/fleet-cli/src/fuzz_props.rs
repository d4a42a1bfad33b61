//! Property tests for the parsers the `fleet` binary keeps to itself: stream-json input lines,
//! SDK control lines and the `initialize` request, and settings files (the trust gate and the
//! `--settings` layer). The library crates' parsers are fuzzed by `cargo fuzz` (see
//! docs/fuzzing.md); these are private to the binary, so they are exercised here instead, with
//! inputs mutated from valid seeds by a small deterministic generator (no extra dependency).
//!
//! The property is the same for all: whatever the bytes, the parser returns (a value or an
//! error) and never panics. A failing case is printed with its bytes; paste it into a
//! `#[test]` beside the parser as a regression test. `FLEET_FUZZ_ITERS` (default 1500) sets the
//! cases per property and `FLEET_FUZZ_SEED` the generator's seed, for longer runs by hand.

#![allow(clippy::unwrap_used)]

use crate::args::PrintArgs;
use crate::control::init::InitRequest;
use crate::control::wire::{self, Incoming};
use crate::input;
use crate::settings::{self, SettingSource, SettingsFlags};
use fleet_protocol::control::{ControlRequest, RequestBody};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Bytes that tend to matter to JSON and line parsers; mutations splice them in.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"1e999",
    b"18446744073709551616",
    b"\"\\u0000\"",
    b"\"\\ud800\"",
    b"\n",
    b"\r",
    b"\r\n",
    b"\xff",
    b"\xc3",
    "é🦀".as_bytes(),
    b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[]}}",
    b"\"subtype\":\"initialize\"",
    b"\"request_id\":\"r1\"",
    b"\"permissions\":{\"allow\":[\"Bash(*)\"]}",
    b"\"hooks\":{\"PreToolUse\":[{\"matcher\":\"(\",\"hooks\":[]}]}",
    b"Bash(",
    b"Read(//**)",
    b"${HOME}",
];

/// A deterministic generator of inputs: each seed as written, then mutations of them.
struct Mutator {
    state: u64,
}

impl Mutator {
    fn new() -> Self {
        let seed = std::env::var("FLEET_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_f1ee7_u64);
        Self { state: seed | 1 }
    }

    /// xorshift64*: fast, and the same seed always gives the same cases.
    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// One to four edits of a seed: flip, insert a token, delete, duplicate, splice, cut.
    fn mutate(&mut self, seeds: &[&[u8]]) -> Vec<u8> {
        let mut data = seeds[self.below(seeds.len())].to_vec();
        for _ in 0..=self.below(4) {
            let at = self.below(data.len() + 1);
            match self.below(6) {
                0 if !data.is_empty() => {
                    let i = self.below(data.len());
                    data[i] ^= 1 << self.below(8);
                }
                1 => {
                    let token = TOKENS[self.below(TOKENS.len())];
                    data.splice(at..at, token.iter().copied());
                }
                2 => {
                    let end = (at + 1 + self.below(16)).min(data.len());
                    data.drain(at.min(end)..end);
                }
                3 => {
                    let end = (at + 1 + self.below(64)).min(data.len());
                    let copy = data[at.min(end)..end].to_vec();
                    data.splice(at..at, copy);
                }
                4 => {
                    let other = seeds[self.below(seeds.len())];
                    let from = self.below(other.len() + 1);
                    data.splice(at..at, other[from..].iter().copied());
                }
                _ => data.truncate(at),
            }
        }
        data
    }
}

fn iterations() -> usize {
    std::env::var("FLEET_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500)
}

/// Runs `check` on every seed and on `iterations()` mutations; a panic fails the test naming
/// the input that caused it.
fn for_cases(seeds: &[&[u8]], mut check: impl FnMut(&[u8])) {
    let mut mutator = Mutator::new();
    let cases = seeds
        .iter()
        .map(|s| s.to_vec())
        .chain((0..iterations()).map(|_| mutator.mutate(seeds)));
    for case in cases {
        if catch_unwind(AssertUnwindSafe(|| check(&case))).is_err() {
            panic!(
                "the parser panicked on this input (as a Rust byte string): b\"{}\"",
                case.escape_ascii()
            );
        }
    }
}

const INPUT_SEEDS: &[&[u8]] = &[
    b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n",
    b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"AA==\"}}]},\"session_id\":\"s\",\"parent_tool_use_id\":null}\r\n\n",
    b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"is_error\":false}]}}\n{\"type\":\"assistant\"}\n",
    b"{\"type\":\"control_request\",\"request_id\":\"r1\",\"request\":{\"subtype\":\"interrupt\"}}\n",
    b"{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"q1\",\"response\":{\"behavior\":\"allow\",\"updatedInput\":{}}}}\n",
    b"{\"type\":\"control_response\",\"response\":{\"subtype\":\"error\",\"request_id\":\"q2\",\"error\":\"no\"}}\n",
    b"{\"type\":\"control_cancel_request\",\"request_id\":\"q3\"}\n{\"type\":\"keep_alive\"}\n",
    b"{\"type\":\"control_request\",\"request_id\":\"r2\",\"request\":{\"subtype\":\"initialize\",\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hookCallbackIds\":[\"h1\"],\"timeout\":5}]},\"agents\":{\"rev\":{\"description\":\"reviews\",\"prompt\":\"Review.\",\"tools\":[\"Read\"],\"model\":\"haiku\"}},\"systemPrompt\":[\"a\",\"b\"],\"appendSystemPrompt\":\"c\",\"sdkMcpServers\":[\"calc\"],\"jsonSchema\":{\"type\":\"object\"}}}\n",
    b"{\"type\":\"control_request\",\"request_id\":\"r3\",\"request\":{\"subtype\":\"set_permission_mode\",\"mode\":\"plan\"}}\n",
];

#[test]
fn stream_json_input_lines_never_panic() {
    for_cases(INPUT_SEEDS, |bytes| {
        for item in input::Lines::new(bytes) {
            match item {
                Ok((line, text)) => {
                    assert!(line >= 1);
                    if let Ok(message) = input::parse_line(&text, line) {
                        assert_eq!(message.role, fleet_protocol::Role::User);
                    }
                }
                Err(e) => assert!(e.line() >= 1),
            }
        }
    });
}

#[test]
fn control_lines_and_initialize_never_panic() {
    for_cases(INPUT_SEEDS, |bytes| {
        for (n, text) in String::from_utf8_lossy(bytes).lines().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            match wire::parse(text, n + 1) {
                Ok(Incoming::Request {
                    request: RequestBody::Known(ControlRequest::Initialize(body)),
                    ..
                }) => {
                    let _ = InitRequest::read(&body, &mut PrintArgs::default());
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = e.to_string();
                }
            }
        }
    });
}

const SETTINGS_SEEDS: &[&[u8]] = &[
    br#"{"provider":"openai","model":"gpt-5","effort":"high","maxOutputTokens":8000,"teammateMode":"in-process","forkSubagent":true}"#,
    br#"{"permissions":{"allow":["Bash(npm run *)","Read(~/.config/**)","mcp__srv__tool"],"deny":["Bash(rm:*)","Write(/etc/**)"],"ask":["WebFetch(domain:example.com)"],"defaultMode":"acceptEdits","additionalDirectories":["../lib","/tmp/x"]}}"#,
    br#"{"sandbox":{"enabled":true,"filesystem":{"allowWrite":["./out"],"denyRead":["~/.ssh"]},"allowRead":["/opt"]},"shellEnvironmentPolicy":{"inherit":"core","exclude":["*KEY*"],"set":{"A":"1"},"includeOnly":["PATH"]}}"#,
    br#"{"hooks":{"PreToolUse":[{"matcher":"Bash|Write","hooks":[{"type":"command","command":"./check.sh","timeout":10}]}],"Stop":[{"hooks":[{"type":"command","command":"true"}]}]},"openai":{"toolChoice":"required"},"remote":{"natsUrl":"nats://127.0.0.1:4222"}}"#,
    br#"{"apiKeyHelper":"./key.sh","env":{"ANTHROPIC_BASE_URL":"http://x"},"enabledMcpjsonServers":["a"],"enableAllProjectMcpServers":true,"permissions":{"allow":["Bash"],"defaultMode":"bypassPermissions"}}"#,
];

#[test]
fn settings_files_never_panic() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    let file = project.path().join(".claude/settings.json");
    let mut trusted = false;
    for_cases(SETTINGS_SEEDS, |bytes| {
        // A repository's own file, through the trust gate (trusted or not).
        trusted = !trusted;
        std::fs::write(&file, bytes).unwrap();
        let flags = SettingsFlags {
            sources: Some(vec![SettingSource::Project]),
            layer: None,
            trust: Some(trusted),
        };
        let _ = settings::load_with(project.path(), &flags);
        // The same text as inline `--settings` JSON, alone.
        let text = String::from_utf8_lossy(bytes);
        if text.trim_start().starts_with('{') {
            let flags = SettingsFlags {
                sources: Some(Vec::new()),
                layer: Some(text.into_owned()),
                trust: Some(true),
            };
            let _ = settings::load_with(project.path(), &flags);
        }
    });
}
