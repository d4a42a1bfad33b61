//! fleet's side of the control channel: requests fleet sends to the host (`can_use_tool`,
//! `hook_callback`, `mcp_message`) waiting for their answers, and the answers fleet gives to
//! the host's requests. The stdin reader hands every `control_response` here.

use super::out::SharedOut;
use fleet_protocol::control::{ControlLine, ControlRequest};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Why a request to the host got no answer to act on.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// stdin ended: nobody is left to answer.
    #[error("the SDK host closed stdin, so nobody can answer {0}")]
    Closed(&'static str),
    /// The host answered with an error.
    #[error("the SDK host answered {subtype} with an error: {message}")]
    Refused {
        subtype: &'static str,
        message: String,
    },
    /// fleet stopped waiting (the turn was interrupted, a timeout passed).
    #[error("stopped waiting for the SDK host to answer {0}")]
    Cancelled(&'static str),
    #[error("could not write the {subtype} request to stdout: {source}")]
    Write {
        subtype: &'static str,
        #[source]
        source: std::io::Error,
    },
}

type Answer = Result<Value, String>;

pub struct ControlLink {
    out: SharedOut,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    closed: AtomicBool,
    next: AtomicU64,
    /// Told apart from the host's own ids, and from another fleet's in the same host.
    prefix: String,
}

impl ControlLink {
    pub fn new(out: SharedOut) -> Self {
        let prefix = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        Self {
            out,
            pending: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            next: AtomicU64::new(1),
            prefix,
        }
    }

    /// Sends `request` and waits for the host's answer (its body, read by the asker). When
    /// `cancel` fires first, the host is told with a `control_cancel_request`.
    pub async fn request(
        &self,
        request: ControlRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, LinkError> {
        let subtype = request.subtype();
        if self.closed.load(Ordering::Acquire) {
            return Err(LinkError::Closed(subtype));
        }
        let id = format!(
            "fleet_{}_{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        // Withdraws the request however this future ends early: cancelled, or dropped.
        let mut waiting = Waiting {
            link: self,
            id: &id,
            answered: false,
        };
        // Registered before it is written, so an answer cannot arrive unexpected.
        if let Err(source) = self.write(&ControlLine::request(id.as_str(), request)) {
            self.lock().remove(&id);
            waiting.answered = true;
            return Err(LinkError::Write { subtype, source });
        }
        tokio::select! {
            answer = rx => {
                waiting.answered = true;
                match answer {
                    Ok(Ok(body)) => Ok(body),
                    Ok(Err(message)) => Err(LinkError::Refused { subtype, message }),
                    Err(_) => Err(LinkError::Closed(subtype)),
                }
            }
            _ = cancel.cancelled() => Err(LinkError::Cancelled(subtype)),
        }
    }

    /// Hands the host's answer to the request waiting for it; false when none waits (an
    /// unknown id, or one fleet stopped waiting for).
    pub fn deliver(&self, id: &str, outcome: Answer) -> bool {
        match self.lock().remove(id) {
            Some(waiting) => {
                let _ = waiting.send(outcome);
                true
            }
            None => false,
        }
    }

    /// stdin ended: every request still waiting fails, and later ones fail at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.lock().clear();
    }

    /// Answers the host's request `id`.
    pub fn respond(&self, id: &str, outcome: Answer) {
        let line = match outcome {
            Ok(body) => ControlLine::success(id, body),
            Err(message) => ControlLine::error(id, message),
        };
        if let Err(err) = self.write(&line) {
            eprintln!("fleet: could not answer control request {id:?}: {err}");
        }
    }

    /// Writes one protocol line of fleet's own.
    fn write(&self, line: &ControlLine) -> std::io::Result<()> {
        self.out.line(&line.to_json())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A request still waiting for its answer; dropped unanswered, it tells the host to stop.
struct Waiting<'a> {
    link: &'a ControlLink,
    id: &'a str,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.answered && self.link.lock().remove(self.id).is_some() {
            let _ = self.link.write(&ControlLine::cancel(self.id));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::print::fixtures::SharedBuf as Collect;
    use std::sync::Arc;

    async fn written(sink: &Collect, n: usize) -> Vec<Value> {
        for _ in 0..500 {
            let got = sink.json_lines();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        panic!("expected {n} lines, got {:?}", sink.json_lines());
    }

    #[tokio::test]
    async fn an_answer_reaches_its_request_and_a_cancel_tells_the_host() {
        let sink = Collect::default();
        let link = Arc::new(ControlLink::new(SharedOut::new(Box::new(sink.clone()))));
        let never = CancellationToken::new();
        let asking = {
            let link = link.clone();
            let never = never.clone();
            tokio::spawn(async move {
                link.request(ControlRequest::CanUseTool(Box::default()), &never)
                    .await
            })
        };
        let sent = written(&sink, 1).await;
        let id = sent[0]["request_id"].as_str().unwrap().to_string();
        assert_eq!(sent[0]["request"]["subtype"], "can_use_tool");
        assert!(!link.deliver("someone-else", Ok(Value::Null)));
        assert!(link.deliver(&id, Ok(serde_json::json!({"behavior": "allow"}))));
        let answer = asking.await.unwrap().unwrap();
        assert_eq!(answer["behavior"], "allow");

        let cancel = CancellationToken::new();
        let asking = {
            let link = link.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { link.request(ControlRequest::Interrupt, &cancel).await })
        };
        let sent = written(&sink, 2).await;
        let id = sent[1]["request_id"].as_str().unwrap().to_string();
        cancel.cancel();
        assert!(matches!(
            asking.await.unwrap(),
            Err(LinkError::Cancelled(_))
        ));
        let sent = written(&sink, 3).await;
        assert_eq!(
            sent[2],
            serde_json::to_value(ControlLine::cancel(id.as_str())).unwrap()
        );
        // A late answer to it is nobody's.
        assert!(!link.deliver(&id, Ok(Value::Null)));
    }

    #[tokio::test]
    async fn closing_fails_what_waits_and_what_comes() {
        let sink = Collect::default();
        let link = Arc::new(ControlLink::new(SharedOut::new(Box::new(sink.clone()))));
        let asking = {
            let link = link.clone();
            tokio::spawn(async move {
                link.request(ControlRequest::McpStatus, &CancellationToken::new())
                    .await
            })
        };
        written(&sink, 1).await;
        link.close();
        assert!(matches!(asking.await.unwrap(), Err(LinkError::Closed(_))));
        let late = link
            .request(ControlRequest::McpStatus, &CancellationToken::new())
            .await;
        assert!(matches!(late, Err(LinkError::Closed(_))));
    }
}
