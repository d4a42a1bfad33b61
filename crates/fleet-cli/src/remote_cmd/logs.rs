//! `fleet remote logs <task>`: a job's events replayed one per line — assistant text, tool
//! calls (name and a short input), their results and the worker's own lines — or as the raw
//! JSON lines, and with `--follow` until the task ends.

use super::status::one_line;
use fleet_remote::client::RemoteEvent;
use fleet_remote::{Remote, RemoteError, WorkerEvent};
use futures::StreamExt;
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;

pub(super) async fn run(
    remote: &Remote,
    task: &str,
    json: bool,
    follow: bool,
) -> anyhow::Result<ExitCode> {
    let Some(record) = remote.record(task).await? else {
        return Err(RemoteError::UnknownTask(task.to_string()).into());
    };
    let mut stdout = std::io::stdout().lock();
    // A task that has ended has nothing more to follow (one stopped while queued never
    // gets an `ended` line).
    if !follow || record.state.is_terminal() {
        for event in remote.logs(task).await? {
            print_event(&mut stdout, &event, json)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut events = remote.events(task, 0).await?;
    while let Some(event) = events.next().await {
        let event = event?;
        print_event(&mut stdout, &event, json)?;
        stdout.flush()?;
        if is_end(&event) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_event(out: &mut impl Write, event: &RemoteEvent, json: bool) -> std::io::Result<()> {
    if json {
        return writeln!(out, "{}", event.line);
    }
    // What a remote agent or worker wrote is shown, never obeyed by the terminal.
    for line in render(event) {
        writeln!(out, "{}", crate::visible::visible_line(&line))?;
    }
    Ok(())
}

/// The worker's last line for a job.
fn is_end(event: &RemoteEvent) -> bool {
    event
        .worker_event()
        .is_some_and(|worker| worker.name() == "ended")
}

/// One event as lines a person reads (an assistant message may hold several blocks).
pub(crate) fn render(event: &RemoteEvent) -> Vec<String> {
    let line = &event.line;
    let prefix = if event.attempt > 1 {
        format!("[attempt {}] ", event.attempt)
    } else {
        String::new()
    };
    if let Some(worker) = event.worker_event() {
        return vec![format!("{prefix}{}", worker_line(&worker))];
    }
    let lines = match line["type"].as_str().unwrap_or_default() {
        // The worker's plumbing with its child, not what the agent did.
        "control_request" | "control_response" | "control_cancel_request" => Vec::new(),
        "assistant" => blocks(&line["message"]["content"], assistant_block),
        "user" => blocks(&line["message"]["content"], result_block),
        "system" => vec![format!(
            "system: {}{}",
            line["subtype"].as_str().unwrap_or("event"),
            line["model"]
                .as_str()
                .map(|m| format!(" (model {m})"))
                .unwrap_or_default()
        )],
        "result" => vec![format!(
            "result: {}{}",
            line["subtype"].as_str().unwrap_or("done"),
            line["result"]
                .as_str()
                .map(|r| format!(" — {}", one_line(r, 200)))
                .unwrap_or_default()
        )],
        other => vec![other.to_string()],
    };
    lines
        .into_iter()
        .map(|text| format!("{prefix}{text}"))
        .collect()
}

fn blocks(content: &Value, one: fn(&Value) -> Option<String>) -> Vec<String> {
    match content {
        Value::String(text) => vec![format!("user: {}", one_line(text, 200))],
        Value::Array(blocks) => blocks.iter().filter_map(one).collect(),
        _ => Vec::new(),
    }
}

fn assistant_block(block: &Value) -> Option<String> {
    match block["type"].as_str()? {
        "text" => Some(format!(
            "assistant: {}",
            one_line(block["text"].as_str().unwrap_or_default(), 200)
        )),
        "tool_use" => Some(format!(
            "tool: {}({})",
            block["name"].as_str().unwrap_or("?"),
            short_input(&block["input"])
        )),
        "thinking" => Some("thinking…".into()),
        _ => None,
    }
}

fn result_block(block: &Value) -> Option<String> {
    match block["type"].as_str()? {
        "tool_result" => {
            let text = match &block["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            let label = if block["is_error"] == true {
                "error"
            } else {
                "result"
            };
            Some(format!("  {label}: {}", one_line(&text, 160)))
        }
        "text" => Some(format!(
            "user: {}",
            one_line(block["text"].as_str().unwrap_or_default(), 200)
        )),
        _ => None,
    }
}

/// The input's telling field (a command, a path, a pattern), else its JSON, kept short.
fn short_input(input: &Value) -> String {
    for key in [
        "command",
        "file_path",
        "path",
        "pattern",
        "url",
        "description",
        "plan",
    ] {
        if let Some(text) = input[key].as_str() {
            return one_line(text, 80);
        }
    }
    one_line(&input.to_string(), 80)
}

fn worker_line(event: &WorkerEvent) -> String {
    match event {
        WorkerEvent::Started { worker, attempt } => {
            format!("fleet_remote: started on {worker} (attempt {attempt})")
        }
        WorkerEvent::Ended { state, result } => match result.as_deref().filter(|r| !r.is_empty()) {
            None => format!("fleet_remote: ended {}", state.as_str()),
            Some(result) => format!(
                "fleet_remote: ended {} — {}",
                state.as_str(),
                one_line(result, 200)
            ),
        },
        WorkerEvent::PlanReady { plan } => {
            format!("fleet_remote: plan ready — {}", one_line(plan, 200))
        }
        // Named as before; an event this fleet does not know is shown by its name.
        other => format!("fleet_remote: {}", other.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(events: &[(u32, Value)]) -> String {
        events
            .iter()
            .flat_map(|(attempt, line)| {
                render(&RemoteEvent {
                    seq: 1,
                    attempt: *attempt,
                    line: line.clone(),
                })
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn an_escape_sequence_from_the_bus_is_shown_not_obeyed() {
        let event = RemoteEvent {
            seq: 1,
            attempt: 1,
            line: json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "done\u{1b}]0;owned\u{7}\u{1b}[2J"}
            ]}}),
        };
        let mut out = Vec::new();
        print_event(&mut out, &event, false).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("done\\e]0;owned"), "{text:?}");
    }

    #[test]
    fn a_jobs_events_read_one_per_line() {
        let text = lines(&[
            (
                1,
                json!({"type": "fleet_remote", "event": "started", "worker": "box-1", "attempt": 1}),
            ),
            (
                1,
                json!({"type": "control_response", "response": {"subtype": "success"}}),
            ),
            (
                1,
                json!({"type": "system", "subtype": "init", "model": "claude-fake-1"}),
            ),
            (
                1,
                json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "Let me look.\nFirst the tests."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test -p app", "timeout": 5}}]}}),
            ),
            (
                1,
                json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok: 3 passed", "is_error": false}]}}),
            ),
            (
                1,
                json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "no such file"}], "is_error": true}]}}),
            ),
            (
                1,
                json!({"type": "result", "subtype": "success", "result": "All green."}),
            ),
            (
                2,
                json!({"type": "fleet_remote", "event": "ended", "state": "completed", "result": "All green."}),
            ),
        ]);
        assert_eq!(
            text,
            "fleet_remote: started on box-1 (attempt 1)\n\
             system: init (model claude-fake-1)\n\
             assistant: Let me look. First the tests.\n\
             tool: Bash(cargo test -p app)\n\
             \x20 result: ok: 3 passed\n\
             \x20 error: no such file\n\
             result: success — All green.\n\
             [attempt 2] fleet_remote: ended completed — All green."
        );
    }

    #[test]
    fn an_input_without_a_telling_field_is_shown_as_short_json() {
        assert_eq!(short_input(&json!({"a": 1})), r#"{"a":1}"#);
        let long = json!({"text": "x".repeat(200)});
        assert_eq!(short_input(&long).chars().count(), 80);
        let event = |line: Value| RemoteEvent {
            seq: 1,
            attempt: 1,
            line,
        };
        assert!(is_end(&event(
            json!({"type": "fleet_remote", "event": "ended", "state": "completed", "result": null})
        )));
        assert!(!is_end(&event(json!({"type": "result"}))));
        // A state or an event this fleet does not know is shown by name.
        assert_eq!(
            render(&event(json!({"type": "fleet_remote", "event": "ended",
                                 "state": "reviewing", "result": "later"}))),
            vec!["fleet_remote: ended reviewing — later".to_string()]
        );
        assert_eq!(
            render(&event(json!({"type": "fleet_remote", "event": "migrated"}))),
            vec!["fleet_remote: migrated".to_string()]
        );
    }
}
