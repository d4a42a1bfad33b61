//! The stdin reader of a stream-json session: user messages go to the session, the host's
//! control requests to the request handler, its answers to the requests fleet is waiting on.
//! A blocking thread, because stdin is; it ends at end of input.

use super::link::ControlLink;
use super::wire::{self, Incoming, WireError};
use fleet_protocol::control::{ControlRequest, Initialize, RequestBody};
use fleet_protocol::Message;
use std::io::BufRead;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A request from the host, for the handler.
#[derive(Debug)]
pub enum HostRequest {
    Call {
        id: String,
        request: RequestBody,
    },
    /// The host gave up on its request `id`.
    Cancel {
        id: String,
    },
}

/// What came first on stdin: the SDKs always start with `initialize` and wait for its answer
/// before they send a prompt, so the session is set up only once it is known.
#[derive(Debug)]
pub enum First {
    Initialize {
        id: String,
        request: Box<Initialize>,
    },
    /// A user message or another request: there is no `initialize` to wait for.
    Other,
    /// stdin ended before anything came.
    End,
}

pub struct Reader {
    pub prompts: mpsc::Sender<Message>,
    pub requests: mpsc::UnboundedSender<HostRequest>,
    pub link: Arc<ControlLink>,
    pub first: oneshot::Sender<First>,
    /// False when stdout is not stream-json: control lines cannot be answered there.
    pub answers: bool,
}

impl Reader {
    /// Reads stdin to its end. Bad user-message lines are reported and skipped; the run then
    /// ends with an error naming the first of them. A bad control line is answered with an
    /// error response when its `request_id` can be read, else reported on stderr.
    pub fn run(self, stdin: impl BufRead) -> anyhow::Result<()> {
        let Self {
            prompts,
            requests,
            link,
            first,
            answers,
        } = self;
        let mut first = Some(first);
        let mut bad_users = Vec::new();
        for line in crate::input::Lines::new(stdin) {
            let (number, text) = match line {
                Ok(line) => line,
                Err(err) => {
                    eprintln!("fleet: {}", crate::visible::visible(&err.to_string()));
                    bad_users.push(err.line());
                    continue;
                }
            };
            match wire::parse(&text, number) {
                Ok(Incoming::User(message)) => {
                    if let Some(first) = first.take() {
                        let _ = first.send(First::Other);
                    }
                    if prompts.blocking_send(message).is_err() {
                        break;
                    }
                }
                Ok(Incoming::Request { id, request }) if !answers => {
                    let subtype = request.subtype();
                    eprintln!(
                        "fleet: stdin line {number}: control request {subtype:?} ({id}) ignored: \
                         control requests need --output-format stream-json"
                    );
                }
                Ok(Incoming::Request { id, request }) => {
                    let request = match (first.take(), request) {
                        (Some(first), RequestBody::Known(ControlRequest::Initialize(request))) => {
                            let _ = first.send(First::Initialize { id, request });
                            continue;
                        }
                        (Some(first), request) => {
                            let _ = first.send(First::Other);
                            request
                        }
                        (None, request) => request,
                    };
                    if requests.send(HostRequest::Call { id, request }).is_err() {
                        break;
                    }
                }
                Ok(Incoming::Response { id, outcome }) => {
                    if !link.deliver(&id, outcome) {
                        eprintln!(
                            "fleet: stdin line {number}: control_response for {id:?}, which fleet \
                             is not waiting for; ignored"
                        );
                    }
                }
                Ok(Incoming::Cancel { id }) => {
                    let _ = requests.send(HostRequest::Cancel { id });
                }
                Ok(Incoming::Nothing) => {}
                Err(WireError::Control(bad)) => match (&bad.request_id, answers) {
                    (Some(id), true) => link.respond(id, Err(bad.to_string())),
                    _ => eprintln!("fleet: {}", crate::visible::visible(&bad.to_string())),
                },
                Err(WireError::Input(err)) => {
                    eprintln!("fleet: {}", crate::visible::visible(&err.to_string()));
                    bad_users.push(err.line());
                }
            }
        }
        if let Some(first) = first.take() {
            let _ = first.send(First::End);
        }
        link.close();
        match bad_users.first() {
            None => Ok(()),
            Some(line) => anyhow::bail!(
                "{} stdin line(s) were not valid stream-json user messages (first: line {line})",
                bad_users.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::control::out::SharedOut;
    use crate::print::fixtures::SharedBuf as Collect;
    use serde_json::Value;

    struct Run {
        result: anyhow::Result<()>,
        first: First,
        prompts: Vec<String>,
        requests: Vec<HostRequest>,
        out: Vec<Value>,
    }

    fn read(input: &[u8]) -> Run {
        let sink = Collect::default();
        let link = Arc::new(ControlLink::new(SharedOut::new(Box::new(sink.clone()))));
        let (prompts_tx, mut prompts) = mpsc::channel(16);
        let (requests_tx, mut requests) = mpsc::unbounded_channel();
        let (first_tx, mut first) = oneshot::channel();
        let result = Reader {
            prompts: prompts_tx,
            requests: requests_tx,
            link,
            first: first_tx,
            answers: true,
        }
        .run(input);
        let mut texts = Vec::new();
        while let Ok(message) = prompts.try_recv() {
            texts.push(message.text());
        }
        let mut calls = Vec::new();
        while let Ok(request) = requests.try_recv() {
            calls.push(request);
        }
        let out = sink.json_lines();
        Run {
            result,
            first: first.try_recv().unwrap(),
            prompts: texts,
            requests: calls,
            out,
        }
    }

    #[test]
    fn initialize_first_is_kept_apart_and_the_rest_is_routed() {
        let run = read(
            concat!(
                r#"{"type":"control_request","request_id":"i1","request":{"subtype":"initialize","hooks":null}}"#,
                "\n",
                r#"{"type":"user","message":{"role":"user","content":"hello"}}"#,
                "\n",
                r#"{"type":"control_request","request_id":"r2","request":{"subtype":"interrupt"}}"#,
                "\n",
                r#"{"type":"control_cancel_request","request_id":"r2"}"#,
                "\n",
            )
            .as_bytes(),
        );
        assert!(run.result.is_ok());
        assert!(matches!(run.first, First::Initialize { ref id, .. } if id == "i1"));
        assert_eq!(run.prompts, vec!["hello".to_string()]);
        assert!(matches!(&run.requests[0], HostRequest::Call { id, .. } if id == "r2"));
        assert!(matches!(&run.requests[1], HostRequest::Cancel { id } if id == "r2"));
        assert!(run.out.is_empty(), "{:?}", run.out);
    }

    #[test]
    fn bad_lines_are_answered_or_reported_and_reading_goes_on() {
        let mut input = b"\xff\xfe\n".to_vec();
        input.extend_from_slice(
            concat!(
                r#"{"type":"user","message":{"content":"first"}}"#,
                "\n",
                r#"{"type":"control_request","request_id":"bad1","request":{"no":"subtype"}}"#,
                "\n",
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"nobody"}}"#,
                "\n",
                "not json\n",
                r#"{"type":"user","message":{"content":"second"}}"#,
                "\n",
            )
            .as_bytes(),
        );
        let run = read(&input);
        assert!(matches!(run.first, First::Other));
        assert_eq!(run.prompts, vec!["first".to_string(), "second".to_string()]);
        assert_eq!(run.out.len(), 1, "{:?}", run.out);
        assert_eq!(run.out[0]["response"]["subtype"], "error");
        assert_eq!(run.out[0]["response"]["request_id"], "bad1");
        let err = run.result.unwrap_err().to_string();
        assert!(
            err.contains("2 stdin line(s)") && err.contains("first: line 1"),
            "{err}"
        );
    }

    #[test]
    fn empty_input_says_so() {
        let run = read(b"");
        assert!(matches!(run.first, First::End));
        assert!(run.result.is_ok());
    }
}
