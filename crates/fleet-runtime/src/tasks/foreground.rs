//! A foreground subagent seen as a task: the Agent call waits for it, so it never enters the
//! registry (nothing can stop it by id, and its answer is the tool result, not a
//! notification in its parent's inbox), yet a reader of the event stream is told of its start
//! and end exactly as for a background task. The Agent SDKs count on that: they keep stdin
//! open while a `local_agent` task is in flight, and show its progress from these events.

use crate::sink::EventSink;
use fleet_protocol::{EventKind, TaskNotification, TaskStarted, TaskStatus, TaskUsage};
use std::time::{Instant, SystemTime};

/// One foreground child between its `TaskStarted` and its end.
#[derive(Debug)]
pub(crate) struct ForegroundTask {
    task_id: String,
    tool_use_id: String,
    description: String,
    output_file: String,
    started: Instant,
}

/// What starting a foreground child says about it.
pub(crate) struct ForegroundStart<'a> {
    pub task_id: &'a str,
    pub tool_use_id: &'a str,
    pub description: &'a str,
    pub subagent_type: &'a str,
    pub prompt: &'a str,
    pub model: &'a str,
    pub depth: u32,
    /// The child's transcript, which holds its whole conversation (empty when transcripts
    /// are off).
    pub output_file: &'a str,
}

impl ForegroundTask {
    /// Announces the child on `sink` (the session's stream, as for background tasks).
    pub(crate) async fn start(sink: &EventSink, start: ForegroundStart<'_>) -> Self {
        sink.emit(EventKind::TaskStarted(TaskStarted {
            task_id: start.task_id.to_string(),
            tool_use_id: start.tool_use_id.to_string(),
            description: start.description.to_string(),
            subagent_type: start.subagent_type.to_string(),
            prompt: start.prompt.to_string(),
            model: start.model.to_string(),
            is_backgrounded: false,
            spawn_depth: start.depth,
            task_type: "local_agent".into(),
            output_file: start.output_file.to_string(),
        }))
        .await;
        Self {
            task_id: start.task_id.to_string(),
            tool_use_id: start.tool_use_id.to_string(),
            description: start.description.to_string(),
            output_file: start.output_file.to_string(),
            started: Instant::now(),
        }
    }

    /// Reports the end: the final state with its time, then the notification a reader
    /// takes the answer and totals from. `usage.duration_ms` is measured here.
    pub(crate) async fn end(
        self,
        sink: &EventSink,
        status: TaskStatus,
        result: String,
        usage: TaskUsage,
    ) {
        let end_time_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        sink.emit(EventKind::TaskUpdated {
            task_id: self.task_id.clone(),
            status,
            end_time_ms,
        })
        .await;
        let duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        sink.emit(EventKind::TaskNotified(TaskNotification {
            summary: super::registry::summary(&self.description, status, &result),
            task_id: self.task_id,
            tool_use_id: self.tool_use_id,
            status,
            result,
            usage: TaskUsage {
                duration_ms,
                ..usage
            },
            output_file: self.output_file,
            worktree: None,
        }))
        .await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fleet_protocol::AgentEvent;

    #[tokio::test]
    async fn start_and_end_are_three_events_for_one_task() {
        let (sink, mut rx) = EventSink::channel(8);
        let task = ForegroundTask::start(
            &sink,
            ForegroundStart {
                task_id: "a1",
                tool_use_id: "toolu_1",
                description: "greet",
                subagent_type: "greeter",
                prompt: "say hi",
                model: "m",
                depth: 1,
                output_file: "/tmp/a1.jsonl",
            },
        )
        .await;
        let usage = TaskUsage {
            total_tokens: 10,
            tool_uses: 2,
            duration_ms: 0,
            unreported_replies: 0,
        };
        task.end(&sink, TaskStatus::Completed, "hello".into(), usage)
            .await;
        drop(sink);
        let mut events: Vec<AgentEvent> = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        assert_eq!(events.len(), 3);
        let EventKind::TaskStarted(started) = &events[0].kind else {
            panic!("{:?}", events[0])
        };
        assert!(!started.is_backgrounded);
        assert_eq!(started.task_type, "local_agent");
        assert_eq!(started.spawn_depth, 1);
        let EventKind::TaskUpdated {
            status,
            end_time_ms,
            ..
        } = &events[1].kind
        else {
            panic!("{:?}", events[1])
        };
        assert_eq!(*status, TaskStatus::Completed);
        assert!(end_time_ms.is_some());
        let EventKind::TaskNotified(n) = &events[2].kind else {
            panic!("{:?}", events[2])
        };
        assert_eq!((n.task_id.as_str(), n.result.as_str()), ("a1", "hello"));
        assert_eq!(n.output_file, "/tmp/a1.jsonl");
        assert_eq!((n.usage.total_tokens, n.usage.tool_uses), (10, 2));
    }
}
