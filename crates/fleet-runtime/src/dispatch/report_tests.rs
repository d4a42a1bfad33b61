//! The reproducer of the 10,000-agent fan-out hang, made deterministic.
//!
//! Three calls run in one batch. The first is done at once; the other two each send an event
//! first (as a starting subagent announces itself) and find the stream full. The result of
//! the first call then waits for room behind them. When the stream's reader takes the one
//! event it holds, the room goes to the second call — which only the batch's stream can
//! poll. A reporter that waited for room without polling the batch never got it back: the
//! stream stayed empty and full at once, and nothing was left to wake anyone.

use super::{report, Outcome};
use crate::sink::EventSink;
use fleet_protocol::{ContentBlock, EventKind, PermissionNote, ToolResultEvent};
use futures::StreamExt;
use std::time::Duration;

fn result_of(call: usize) -> (Outcome, ToolResultEvent) {
    let outcome = Outcome {
        block: ContentBlock::text(format!("result {call}")),
        structured: None,
        denial: None,
    };
    let event = ToolResultEvent {
        tool_use_id: format!("call-{call}"),
        tool_name: "Probe".into(),
        content: format!("result {call}"),
        is_error: false,
        structured: None,
        permission: PermissionNote {
            decision: fleet_protocol::PermissionDecision::Accept,
            reason_type: fleet_protocol::PermissionReasonType::Mode,
            rule: None,
        },
    };
    (outcome, event)
}

#[tokio::test]
async fn a_result_waiting_for_room_keeps_the_calls_behind_it_going() {
    let (sink, mut events) = EventSink::channel(1);
    // The stream is full before the batch starts.
    sink.emit(EventKind::TextDelta("already waiting".into()))
        .await;
    let calls = (0..3).map(|call| {
        let sink = sink.clone();
        async move {
            if call > 0 {
                sink.emit(EventKind::TextDelta(format!("call {call} starts")))
                    .await;
            }
            result_of(call)
        }
    });
    let mut results = futures::stream::iter(calls).buffered(3);
    let mut outcomes = Vec::new();
    let reporting = report(&sink, &mut results, &mut outcomes);
    let reading = async {
        let mut seen = Vec::new();
        while seen.len() < 6 {
            match events.recv().await {
                Some(event) => seen.push(event.kind),
                None => break,
            }
        }
        seen
    };
    let both = futures::future::join(reporting, reading);
    let ((), seen) = tokio::time::timeout(Duration::from_secs(30), both)
        .await
        .expect("the batch and its reports ended: no room was lost to a call left unpolled");
    assert_eq!(outcomes.len(), 3);
    let reported: Vec<String> = seen
        .iter()
        .filter_map(|kind| match kind {
            EventKind::ToolResult(result) => Some(result.tool_use_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reported, ["call-0", "call-1", "call-2"], "in call order");
}
