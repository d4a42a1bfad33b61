//! `fleet remote status`: a table of workers and one of jobs, or the records as JSON.

use super::ago;
use fleet_remote::client::Status;
use fleet_remote::{TaskRecord, WorkerRecord};
use serde::Serialize;
use std::fmt::Write as _;
use std::process::ExitCode;

pub(super) async fn run(remote: &fleet_remote::Remote, json: bool) -> anyhow::Result<ExitCode> {
    let status = remote.status().await?;
    if json {
        let records = Records {
            workers: &status.workers,
            tasks: &status.tasks,
        };
        println!("{}", serde_json::to_string_pretty(&records)?);
    } else {
        // Descriptions, labels and host names come off the bus: shown, never obeyed.
        print!(
            "{}",
            crate::visible::visible(&render(&status, fleet_remote::now_ms()))
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--json`: the records as the broker holds them.
#[derive(Serialize)]
struct Records<'a> {
    workers: &'a [WorkerRecord],
    tasks: &'a [TaskRecord],
}

/// The two tables as a person reads them, ages counted from `now_ms`.
pub(crate) fn render(status: &Status, now_ms: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Workers ({})", status.workers.len());
    if status.workers.is_empty() {
        out.push_str("  none: start one with `fleet worker`\n");
    } else {
        let rows: Vec<Vec<String>> = status
            .workers
            .iter()
            .map(|w| {
                vec![
                    w.id.clone(),
                    w.host.clone(),
                    format!("{}/{}", w.running.len(), w.slots),
                    if w.labels.is_empty() {
                        "-".into()
                    } else {
                        w.labels.join(",")
                    },
                    format!("{} ago", ago(w.heartbeat_ms, now_ms)),
                ]
            })
            .collect();
        table(
            &mut out,
            &["ID", "HOST", "SLOTS", "LABELS", "HEARTBEAT"],
            &rows,
        );
    }
    let _ = writeln!(out, "\nJobs ({})", status.tasks.len());
    if status.tasks.is_empty() {
        out.push_str("  none\n");
    } else {
        let rows: Vec<Vec<String>> = status
            .tasks
            .iter()
            .map(|t| {
                vec![
                    t.task_id.clone(),
                    serde_json::to_value(t.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    t.state.as_str().to_string(),
                    t.worker.clone().unwrap_or_else(|| "-".into()),
                    if t.attempt == 0 {
                        "-".into()
                    } else {
                        t.attempt.to_string()
                    },
                    ago(t.queued_ms, now_ms),
                    one_line(&t.description, 60),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                "ID",
                "KIND",
                "STATE",
                "WORKER",
                "ATTEMPT",
                "AGE",
                "DESCRIPTION",
            ],
            &rows,
        );
    }
    out
}

/// Left-aligned columns two spaces apart; the last column is not padded.
fn table(out: &mut String, headers: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut text = String::from("  ");
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                text.push_str(cell);
                text.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(headers.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_remote::{JobKind, TaskRecord, TaskState, WorkerRecord};

    fn task(
        id: &str,
        state: TaskState,
        worker: Option<&str>,
        attempt: u32,
        queued: u64,
    ) -> TaskRecord {
        TaskRecord {
            task_id: id.into(),
            kind: JobKind::Agent,
            description: "fix the\nflaky test".into(),
            state,
            worker: worker.map(str::to_string),
            attempt,
            plan: None,
            result: None,
            branch: None,
            usage: Default::default(),
            events: 0,
            queued_ms: queued,
            started_ms: None,
            ended_ms: None,
            updated_ms: queued,
            origin: String::new(),
        }
    }

    #[test]
    fn status_shows_workers_and_jobs_as_tables() {
        let status = Status {
            workers: vec![WorkerRecord {
                id: "box-41".into(),
                host: "box".into(),
                pid: 41,
                slots: 2,
                running: vec!["r2".into()],
                labels: vec!["gpu".into(), "big".into()],
                started_ms: 0,
                heartbeat_ms: 97_000,
            }],
            tasks: vec![
                task("r2", TaskState::Running, Some("box-41"), 2, 40_000),
                task("r1", TaskState::Queued, None, 0, 100_000),
            ],
        };
        let text = render(&status, 100_000);
        assert_eq!(
            text,
            "Workers (1)\n\
             \x20 ID      HOST  SLOTS  LABELS   HEARTBEAT\n\
             \x20 box-41  box   1/2    gpu,big  3 s ago\n\
             \n\
             Jobs (2)\n\
             \x20 ID  KIND   STATE    WORKER  ATTEMPT  AGE    DESCRIPTION\n\
             \x20 r2  agent  running  box-41  2        1 min  fix the flaky test\n\
             \x20 r1  agent  queued   -       -        0 s    fix the flaky test\n"
        );
    }

    #[test]
    fn an_empty_broker_says_how_to_start_a_worker() {
        let text = render(&Status::default(), 0);
        assert_eq!(
            text,
            "Workers (0)\n  none: start one with `fleet worker`\n\nJobs (0)\n  none\n"
        );
    }
}
