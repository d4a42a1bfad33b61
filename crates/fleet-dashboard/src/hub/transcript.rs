//! An agent's conversation as the page shows it, read from its transcript file a page at a
//! time.
//!
//! Entries are numbered in file order (one line may give several: a reply's text, thinking and
//! tool calls); `after` counts entries already shown. The position where the last page ended
//! is kept per file, so following a growing transcript reads only what is new. Tool results
//! are cut at 20,000 characters, and values that look like secrets (`…_API_KEY=…`,
//! `"password": …`, `sk-ant-…`, GitHub and AWS keys) are masked in every text shown, except in
//! tool inputs, which are shown as the model sent them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use fleet_protocol::{ContentBlock, MessageContent, ToolResultContent};
use fleet_store::{EntryKind, TranscriptEntry as Line};
use regex::{Captures, Regex};
use serde_json::Value;

use super::{is_terminal, lock, Inner};
use crate::api::{TranscriptEntry, TranscriptPage};
use crate::error::DashboardError;

/// Entries per page.
pub const PAGE: usize = 500;
/// Characters of a tool result shown.
pub const RESULT_CHARS: usize = 20_000;
/// Diff lines shown for one call.
const DIFF_LINES: usize = 2_000;

/// Where the last page of each file ended: `(entries before the line, the line's offset)`.
static ENDS: LazyLock<Mutex<HashMap<PathBuf, (u64, u64)>>> = LazyLock::new(Default::default);

pub(crate) fn page(
    inner: &Inner,
    session: &str,
    agent: &str,
    after: u64,
) -> Result<TranscriptPage, DashboardError> {
    let shared = inner
        .session(session)
        .ok_or_else(|| DashboardError::UnknownSession { id: session.into() })?;
    let (names, complete) = {
        let m = lock(&shared);
        let tracked = m
            .agents
            .get(agent)
            .ok_or_else(|| DashboardError::UnknownAgent {
                session: session.into(),
                agent: agent.into(),
            })?;
        let id = tracked.node.id.clone();
        let mut names = vec![id.clone()];
        names.extend(m.agents.aliases_of(&id).map(str::to_owned));
        (names, is_terminal(tracked.node.state))
    };
    let Some(files) = inner.session_files(session) else {
        return Ok(TranscriptPage {
            entries: Vec::new(),
            next: after,
            complete,
        });
    };
    let path = names
        .iter()
        .map(|n| files.agent_transcript(n))
        .find(|p| p.exists());
    let Some(path) = path else {
        return Ok(TranscriptPage {
            entries: Vec::new(),
            next: after,
            complete,
        });
    };
    let entries = read_page(&path, after)?;
    Ok(TranscriptPage {
        next: after + entries.len() as u64,
        complete,
        entries,
    })
}

/// Up to [`PAGE`] entries from entry `after` on.
fn read_page(path: &Path, after: u64) -> Result<Vec<TranscriptEntry>, DashboardError> {
    let file = std::fs::File::open(path).map_err(|e| DashboardError::io("open", path, e))?;
    let mut reader = BufReader::new(file);
    let (mut index, mut offset) = lock(&ENDS)
        .get(path)
        .copied()
        .filter(|(index, _)| *index <= after)
        .unwrap_or((0, 0));
    reader
        .seek(SeekFrom::Start(offset))
        .map_err(|e| DashboardError::io("seek in", path, e))?;
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| DashboardError::io("read", path, e))?;
        if read == 0 || buf.last() != Some(&b'\n') {
            break; // the end, or a line still being written
        }
        let line_start = (index, offset);
        offset += read as u64;
        let Ok(line) = serde_json::from_slice::<Line>(&buf) else {
            continue;
        };
        let entries = convert(&line);
        let count = entries.len() as u64;
        if index + count > after {
            let skip = after.saturating_sub(index) as usize;
            out.extend(entries.into_iter().skip(skip));
        }
        index += count;
        if out.len() >= PAGE {
            out.truncate(PAGE);
            lock(&ENDS).insert(path.to_path_buf(), line_start);
            return Ok(out);
        }
    }
    lock(&ENDS).insert(path.to_path_buf(), (index, offset));
    Ok(out)
}

fn time_ms(line: &Line) -> Option<u64> {
    let t = line.time()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(t.as_millis()).ok()
}

/// The entries one transcript line shows.
pub(crate) fn convert(line: &Line) -> Vec<TranscriptEntry> {
    let t_ms = time_ms(line);
    let mut out = Vec::new();
    match (&line.kind, &line.message) {
        (EntryKind::System, _) => {
            let text = line
                .extra
                .get("content")
                .or_else(|| line.extra.get("subtype"))
                .and_then(Value::as_str)
                .unwrap_or("system");
            out.push(TranscriptEntry::System { text: redact(text) });
        }
        (EntryKind::User | EntryKind::Assistant, Some(message)) => {
            let assistant = line.kind == EntryKind::Assistant;
            let meta = line.is_meta();
            let blocks = match &message.content {
                MessageContent::Text(text) => vec![ContentBlock::text(text.clone())],
                MessageContent::Blocks(blocks) => blocks.clone(),
            };
            for block in blocks {
                out.extend(block_entry(block, assistant, meta, t_ms));
            }
        }
        _ => {}
    }
    out
}

fn block_entry(
    block: ContentBlock,
    assistant: bool,
    meta: bool,
    t_ms: Option<u64>,
) -> Option<TranscriptEntry> {
    Some(match block {
        ContentBlock::Text { text, .. } if text.trim().is_empty() => return None,
        ContentBlock::Text { text, .. } if assistant => TranscriptEntry::Assistant {
            text: redact(&text),
            t_ms,
        },
        // fleet's own messages to the model (task notifications, instruction files).
        ContentBlock::Text { text, .. }
            if meta
                || text
                    .trim_start()
                    .starts_with(fleet_protocol::notification::OPEN_TAG) =>
        {
            TranscriptEntry::System {
                text: redact(&text),
            }
        }
        ContentBlock::Text { text, .. } => TranscriptEntry::User {
            text: redact(&text),
            t_ms,
        },
        ContentBlock::Thinking { thinking, .. } => TranscriptEntry::Thinking {
            text: redact(&thinking),
        },
        ContentBlock::RedactedThinking { .. } => TranscriptEntry::Thinking {
            text: "(redacted thinking)".into(),
        },
        ContentBlock::ToolUse {
            id, name, input, ..
        } => TranscriptEntry::ToolUse {
            diff: diff(&name, &input),
            input: serde_json::to_string_pretty(&input).unwrap_or_default(),
            id,
            name,
        },
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
            ..
        } => {
            let text = result_text(content.as_ref());
            let (text, truncated) = match text.char_indices().nth(RESULT_CHARS) {
                Some((at, _)) => (text[..at].to_owned(), true),
                None => (text, false),
            };
            TranscriptEntry::ToolResult {
                tool_use_id,
                text: redact(&text),
                is_error: is_error.unwrap_or(false),
                truncated,
            }
        }
        ContentBlock::Image { .. } if assistant => TranscriptEntry::Assistant {
            text: "(image)".into(),
            t_ms,
        },
        ContentBlock::Image { .. } => TranscriptEntry::User {
            text: "(image)".into(),
            t_ms,
        },
    })
}

fn result_text(content: Option<&ToolResultContent>) -> String {
    match content {
        Some(ToolResultContent::Text(text)) => text.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text, .. } => text.as_str(),
                ContentBlock::Image { .. } => "(image)",
                _ => "",
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    }
}

/// For Edit, MultiEdit and Write: the change the call asks for, as diff lines (`-`, `+`,
/// ` `), from its input (the file itself may have changed since).
pub(crate) fn diff(tool: &str, input: &Value) -> Option<Vec<String>> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut lines = Vec::new();
    match tool {
        "Edit" => lines_of(
            &text(input, "old_string")?,
            &text(input, "new_string")?,
            &mut lines,
        ),
        "MultiEdit" => {
            for edit in input.get("edits")?.as_array()? {
                let (Some(old), Some(new)) = (text(edit, "old_string"), text(edit, "new_string"))
                else {
                    continue;
                };
                lines_of(&old, &new, &mut lines);
            }
        }
        "Write" => lines.extend(text(input, "content")?.lines().map(|l| format!("+{l}"))),
        _ => return None,
    }
    lines.truncate(DIFF_LINES);
    Some(lines)
}

fn lines_of(old: &str, new: &str, out: &mut Vec<String>) {
    let diff = similar::TextDiff::from_lines(old, new);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Equal => ' ',
        };
        let line = change.value();
        out.push(format!("{sign}{}", line.strip_suffix('\n').unwrap_or(line)));
    }
}

/// Known key shapes, and `NAME=value` / `"name": "value"` where the name says secret.
static SECRETS: LazyLock<Option<(Regex, Regex)>> = LazyLock::new(|| {
    let keys = Regex::new(
        r"sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,}",
    )
    .ok()?;
    let named = Regex::new(
        r#"(?i)([A-Za-z0-9_\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|access[_\-]?key|credential)[A-Za-z0-9_\-]*)("?\s*[:=]\s*["']?)([^\s"',;]{4,})"#,
    )
    .ok()?;
    Some((keys, named))
});

/// `text` with values that look like secrets masked.
pub(crate) fn redact(text: &str) -> String {
    let Some((keys, named)) = SECRETS.as_ref() else {
        return text.to_owned();
    };
    let text = keys.replace_all(text, "[redacted]");
    named
        .replace_all(&text, |c: &Captures<'_>| {
            let key = c[1].to_ascii_lowercase();
            // Token counts (`input_tokens: 1200`) are not secrets.
            if key.ends_with("tokens") || key.ends_with("_count") {
                c[0].to_owned()
            } else {
                format!("{}{}[redacted]", &c[1], &c[2])
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_counts_kept() {
        let text =
            "ANTHROPIC_API_KEY=sk-ant-abcdefghijkl\n\"password\": \"hunter22\"\ninput_tokens: 1200";
        let shown = redact(text);
        assert!(!shown.contains("abcdefghijkl"), "{shown}");
        assert!(!shown.contains("hunter22"), "{shown}");
        assert!(shown.contains("input_tokens: 1200"), "{shown}");
        assert!(shown.contains("ANTHROPIC_API_KEY="), "{shown}");
    }

    #[test]
    fn edits_become_diff_lines() {
        let input =
            serde_json::json!({"file_path": "/a", "old_string": "a\nb\n", "new_string": "a\nc\n"});
        assert_eq!(
            diff("Edit", &input),
            Some(vec![" a".into(), "-b".into(), "+c".into()])
        );
        let write = serde_json::json!({"file_path": "/a", "content": "x\ny"});
        assert_eq!(diff("Write", &write), Some(vec!["+x".into(), "+y".into()]));
        assert_eq!(diff("Bash", &write), None);
    }
}
