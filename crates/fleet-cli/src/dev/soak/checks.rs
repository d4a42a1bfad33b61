//! The invariants checked after every run. Each check returns the problems it found as
//! [`Problem`]s; a run with none is good.

use super::child::{marked_processes, wait_marked_gone, Ended, Outcome};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// What went wrong, by kind: the report counts them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Kind {
    /// Still running at its deadline.
    Hang,
    /// Exit code 0 without a success result line.
    SilentFailure,
    /// A non-zero exit with neither an error result nor anything on stderr.
    UnexplainedExit,
    /// Ended with an error (explained), or with the wrong result.
    Failed,
    /// A process, worktree, branch or socket outlived the session.
    LeftBehind,
    /// A transcript line that does not parse, or acknowledged work that is missing.
    Lost,
    /// The resumed conversation is not valid for the API (a `tool_use` left unanswered).
    InvalidResume,
    /// The soak itself could not set the run up.
    Harness,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct Problem {
    pub kind: Kind,
    pub detail: String,
}

impl Problem {
    pub fn new(kind: Kind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }
}

/// The last line of a file, shortened, for a problem's detail.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let mut cut: String = last.chars().take(300).collect();
    if cut.len() < last.len() {
        cut.push('…');
    }
    cut
}

/// The exit code matches the result, and the result is the one expected (`want`; empty:
/// any success). A killed run is not judged.
pub(super) fn exit_and_result(outcome: &Outcome, want: &str) -> Vec<Problem> {
    let status = match &outcome.ended {
        Ended::Exited(status) => *status,
        Ended::Killed => return Vec::new(),
        Ended::Hung { capture, summary } => {
            return vec![Problem::new(
                Kind::Hang,
                format!(
                    "no end after {:.0} s; {summary}; capture: {}",
                    outcome.wall.as_secs_f64(),
                    capture.display()
                ),
            )]
        }
    };
    let stdout = std::fs::read_to_string(&outcome.stdout).unwrap_or_default();
    let result = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .rfind(|v| v["type"] == "result");
    let stderr = std::fs::read_to_string(&outcome.stderr).unwrap_or_default();
    let is_error = result.as_ref().map(|r| r["is_error"] == true);
    match (status.success(), is_error) {
        (true, Some(false)) => {
            let text = result
                .as_ref()
                .and_then(|r| r["result"].as_str())
                .unwrap_or_default();
            if !want.is_empty() && !text.contains(want) {
                return vec![Problem::new(
                    Kind::Failed,
                    format!("result {text:?}, wanted {want:?}"),
                )];
            }
            Vec::new()
        }
        (true, None) => vec![Problem::new(
            Kind::SilentFailure,
            format!(
                "exit 0 without a result line; stderr: {}",
                tail(&outcome.stderr)
            ),
        )],
        (true, Some(true)) => vec![Problem::new(
            Kind::SilentFailure,
            format!("exit 0 with an error result: {}", tail(&outcome.stdout)),
        )],
        (false, Some(true)) => vec![Problem::new(
            Kind::Failed,
            format!(
                "{status}: {}",
                result.map(|r| r["result"].to_string()).unwrap_or_default()
            ),
        )],
        (false, Some(false)) => vec![Problem::new(
            Kind::Failed,
            format!(
                "{status} after a success result; stderr: {}",
                tail(&outcome.stderr)
            ),
        )],
        (false, None) if stderr.trim().is_empty() => vec![Problem::new(
            Kind::UnexplainedExit,
            format!("{status} with no result and nothing on stderr"),
        )],
        (false, None) => vec![Problem::new(
            Kind::Failed,
            format!("{status}: {}", tail(&outcome.stderr)),
        )],
    }
}

/// Where a torn last line (no newline) is tolerated: only where a kill -9 may have cut it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Torn {
    /// No kill: every line must be whole.
    Nowhere,
    /// Just after the kill, before the resume: any file.
    Anywhere,
    /// After the resume: a killed subagent's own transcript (`subagents/`), which nothing
    /// writes again, may keep the line the kill cut; the session's transcript may not.
    InSubagentFiles,
}

/// Every `*.jsonl` line under the fleet home parses; a torn last line is tolerated as `torn`
/// says.
pub(super) fn transcripts(fleet_home: &Path, torn: Torn) -> Vec<Problem> {
    let mut problems = Vec::new();
    for path in files_under(fleet_home) {
        let name = path.to_string_lossy();
        let (jsonl, json) = (name.ends_with(".jsonl"), name.ends_with(".json"));
        if !jsonl && !json {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if json {
            if !text.trim().is_empty() && serde_json::from_str::<Value>(&text).is_err() {
                problems.push(Problem::new(Kind::Lost, format!("{name}: not valid JSON")));
            }
            continue;
        }
        let complete = text.ends_with('\n') || text.is_empty();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let last = i + 1 == lines.len();
            if line.trim().is_empty() || serde_json::from_str::<Value>(line).is_ok() {
                continue;
            }
            let torn_ok = match torn {
                Torn::Nowhere => false,
                Torn::Anywhere => true,
                Torn::InSubagentFiles => path.parent().is_some_and(|p| p.ends_with("subagents")),
            };
            if last && !complete && torn_ok {
                continue;
            }
            problems.push(Problem::new(
                Kind::Lost,
                format!("{name}:{}: a line that does not parse", i + 1),
            ));
            break;
        }
    }
    problems
}

/// Each of `texts` is found in some file under the fleet home.
pub(super) fn persisted(fleet_home: &Path, texts: &[String]) -> Vec<Problem> {
    if texts.is_empty() {
        return Vec::new();
    }
    let mut missing: HashSet<&String> = texts.iter().collect();
    for path in files_under(fleet_home) {
        if missing.is_empty() {
            break;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        missing.retain(|t| !text.contains(t.as_str()));
    }
    missing
        .into_iter()
        .map(|t| {
            Problem::new(
                Kind::Lost,
                format!("{t:?} is in no file under the fleet home"),
            )
        })
        .collect()
}

/// Each named rule answered exactly as many requests as the scenario needs (read from the
/// fake server's request event log).
pub(super) fn rule_counts(request_log: &Path, want: &[(&str, usize)]) -> Vec<Problem> {
    if want.is_empty() {
        return Vec::new();
    }
    let log = std::fs::read_to_string(request_log).unwrap_or_default();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["event"] == "received" && v["status"] == 200 {
            if let Some(rule) = v["rule"].as_str() {
                *counts.entry(rule.to_owned()).or_insert(0) += 1;
            }
        }
    }
    want.iter()
        .filter_map(|(rule, n)| {
            let got = counts.get(*rule).copied().unwrap_or(0);
            (got != *n).then(|| {
                Problem::new(
                    Kind::Lost,
                    format!("rule {rule} answered {got} requests, expected {n}"),
                )
            })
        })
        .collect()
}

/// No process of the session (by its marker), no worktree or `fleet/*` branch, no socket
/// file under the run's folder outlived it.
pub(super) fn left_behind(repo: &Path, dir: &Path, marker: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let left = wait_marked_gone(marker, Duration::from_secs(5));
    if !left.is_empty() {
        let shown: Vec<String> = left
            .iter()
            .take(5)
            .map(|(pid, cmd)| format!("{pid} {cmd}"))
            .collect();
        problems.push(Problem::new(
            Kind::LeftBehind,
            format!(
                "{} processes still running: {}",
                left.len(),
                shown.join("; ")
            ),
        ));
    }
    let worktrees = git(repo, &["worktree", "list", "--porcelain"]);
    let extra = worktrees
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count();
    if extra > 1 {
        problems.push(Problem::new(
            Kind::LeftBehind,
            format!("{} worktrees besides the checkout", extra - 1),
        ));
    }
    let branches = git(repo, &["branch", "--list", "fleet/*"]);
    if !branches.trim().is_empty() {
        problems.push(Problem::new(
            Kind::LeftBehind,
            format!(
                "branches left: {}",
                branches.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
        ));
    }
    use std::os::unix::fs::FileTypeExt;
    let sockets: Vec<String> = files_under(dir)
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()))
        .map(|p| p.display().to_string())
        .collect();
    if !sockets.is_empty() {
        problems.push(Problem::new(
            Kind::LeftBehind,
            format!("socket files left (panes, servers): {}", sockets.join(", ")),
        ));
    }
    problems
}

/// Every `tool_use` in the conversations the resumed session sent is answered by a
/// `tool_result` in the next message (what the API requires).
pub(super) fn resumed_requests_valid(requests: &[Value], mark: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut seen = 0;
    for req in requests {
        let body = &req["body"];
        let Some(messages) = body["messages"].as_array() else {
            continue;
        };
        if !body.to_string().contains(mark) {
            continue;
        }
        seen += 1;
        for (i, msg) in messages.iter().enumerate() {
            if msg["role"] != "assistant" {
                continue;
            }
            let ids: Vec<&str> = blocks(msg, "tool_use")
                .filter_map(|b| b["id"].as_str())
                .collect();
            if ids.is_empty() {
                continue;
            }
            let answered: HashSet<&str> = messages
                .get(i + 1)
                .map(|next| {
                    blocks(next, "tool_result")
                        .filter_map(|b| b["tool_use_id"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            let unanswered: Vec<&&str> = ids.iter().filter(|id| !answered.contains(**id)).collect();
            if !unanswered.is_empty() {
                problems.push(Problem::new(
                    Kind::InvalidResume,
                    format!(
                        "request #{}: {} tool_use blocks unanswered (first {})",
                        req["seq"],
                        unanswered.len(),
                        unanswered[0]
                    ),
                ));
                return problems;
            }
        }
        if req["status"] == 400 {
            problems.push(Problem::new(
                Kind::InvalidResume,
                format!("request #{} refused by the API's validation", req["seq"]),
            ));
        }
    }
    if seen == 0 && !requests.is_empty() {
        problems.push(Problem::new(
            Kind::InvalidResume,
            "the resumed session sent no request carrying its prompt",
        ));
    }
    problems
}

/// Every background agent the conversation started has reported by the session's last
/// request: a `<task-notification>` naming it follows its "Started background agent" result
/// (after a kill, the resumed session must say it was interrupted), so the model never waits
/// on work that will not report.
pub(super) fn every_task_reported(requests: &[Value]) -> Vec<Problem> {
    let Some(last) = requests
        .iter()
        .filter(|r| r["body"]["messages"].is_array())
        .max_by_key(|r| r["seq"].as_u64().unwrap_or(0))
    else {
        return Vec::new();
    };
    let text = last["body"]["messages"].to_string();
    let started: Vec<&str> = ids_after(&text, "Started background agent ");
    let reported: HashSet<&str> = ids_after(&text, "<task-id>").into_iter().collect();
    let silent: Vec<&&str> = started
        .iter()
        .filter(|id| !reported.contains(**id))
        .collect();
    if silent.is_empty() {
        return Vec::new();
    }
    vec![Problem::new(
        Kind::Lost,
        format!(
            "{} of {} background agents never reported in the final conversation (request #{}), e.g. {}",
            silent.len(),
            started.len(),
            last["seq"],
            silent[0]
        ),
    )]
}

/// The word (letters and digits) after each occurrence of `prefix`.
fn ids_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .filter_map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
                .unwrap_or(rest.len());
            (end > 0).then(|| &rest[..end])
        })
        .collect()
}

fn blocks<'a>(msg: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    msg["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |b| b["type"] == kind)
}

fn git(repo: &Path, args: &[&str]) -> String {
    Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Every file under `root`, recursively (symlinks not followed).
pub(super) fn files_under(root: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if !kind.is_symlink() {
                found.push(entry.path());
            }
        }
    }
    found
}

/// Processes of the session still running right now (no wait): after a kill -9.
pub(super) fn survivors(marker: &str) -> Vec<(u32, String)> {
    marked_processes(marker)
}
