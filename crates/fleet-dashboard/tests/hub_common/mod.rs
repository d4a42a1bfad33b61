//! What the hub's tests share: bounded waits for batches and transcript lines built the way
//! fleet writes them.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use fleet_dashboard::api::{AgentNode, Batch};
use fleet_protocol::{ContentBlock, Message, Role};
use fleet_store::TranscriptEntry as Line;
use serde_json::json;
use tokio::sync::broadcast::{error::RecvError, Receiver};

pub const WAIT: Duration = Duration::from_secs(30);

/// Receives batches until one satisfies `pred` (bounded by [`WAIT`]).
pub async fn batch_where(
    rx: &mut Receiver<Arc<Batch>>,
    pred: impl Fn(&Batch) -> bool,
) -> Arc<Batch> {
    tokio::time::timeout(WAIT, async {
        loop {
            match rx.recv().await {
                Ok(batch) if pred(&batch) => return batch,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => panic!("the batch channel closed"),
            }
        }
    })
    .await
    .expect("no matching batch within the wait")
}

pub fn agent<'a>(batch: &'a Batch, id: &str) -> Option<&'a AgentNode> {
    batch.agents.iter().find(|a| a.id == id)
}

pub fn assistant(blocks: Vec<ContentBlock>) -> Line {
    Line::message(Message::with_blocks(Role::Assistant, blocks))
        .with_extra("model", "claude-sonnet-4-5")
        .with_extra("usage", json!({"input_tokens": 100, "output_tokens": 20}))
}

pub fn user_blocks(blocks: Vec<ContentBlock>) -> Line {
    Line::message(Message::with_blocks(Role::User, blocks))
}

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
