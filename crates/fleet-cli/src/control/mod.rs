//! The SDK control protocol: how a program drives fleet over stdin/stdout the way the Claude
//! Agent SDKs drive Claude Code. With `--input-format stream-json`, stdin carries user
//! messages and the host's `control_request`s (`initialize`, `interrupt`, `set_model`, …);
//! stdout carries the message stream and fleet's own requests to the host (`can_use_tool`,
//! `hook_callback`, `mcp_message`), each answered by a `control_response` with its id.
//!
//! - `wire.rs`: the lines, read and written
//! - `out.rs`: stdout shared line by line between the printer and the protocol
//! - `link.rs`: fleet's requests waiting for their answers
//! - `reader.rs`: the stdin thread that routes every line
//! - `init.rs`: `initialize`, read before the session is built and answered after
//! - `server.rs`: the host's later requests
//! - `steer.rs`: those of them that steer the session, sent as its `Op`s
//! - `host.rs`: the session's parts that talk to the host, made after `initialize`
//! - `approver.rs`, `hook_runner.rs`, `mcp_bridge.rs`: `can_use_tool`, `hook_callback` and
//!   `mcp_message`

pub mod approver;
pub mod hook_runner;
pub mod host;
pub mod init;
pub mod link;
pub mod mcp_bridge;
pub mod out;
pub mod reader;
pub mod server;
pub mod steer;
pub mod wire;

use fleet_protocol::Message;
use link::ControlLink;
use out::SharedOut;
use reader::{First, HostRequest, Reader};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// The control side of one stream-json session.
pub struct Channel {
    pub link: Arc<ControlLink>,
    /// Taken by [`Self::serve`] once the session is built.
    requests: Option<mpsc::UnboundedReceiver<HostRequest>>,
    first: Option<oneshot::Receiver<First>>,
    reader: std::thread::JoinHandle<anyhow::Result<()>>,
}

impl Channel {
    /// Starts reading stdin. User messages go to `prompts`; `answers` is false when stdout
    /// is not stream-json (control requests are then refused on stderr).
    pub fn start(out: SharedOut, prompts: mpsc::Sender<Message>, answers: bool) -> Self {
        let link = Arc::new(ControlLink::new(out));
        let (requests_tx, requests) = mpsc::unbounded_channel();
        let (first_tx, first) = oneshot::channel();
        let reader = Reader {
            prompts,
            requests: requests_tx,
            link: link.clone(),
            first: first_tx,
            answers,
        };
        let reader = std::thread::spawn(move || reader.run(std::io::stdin().lock()));
        Self {
            link,
            requests: Some(requests),
            first: Some(first),
            reader,
        }
    }

    /// What came first on stdin (once; later calls say `Other`).
    pub async fn first(&mut self) -> First {
        match self.first.take() {
            Some(first) => first.await.unwrap_or(First::End),
            None => First::Other,
        }
    }

    /// Answers the host's requests from now on, in a task of its own (`None` once started).
    /// The steering ones go to the session as ops through `ops`, which the task holds until
    /// stdin ends (when the session's prompts end too), so it never keeps the session alive.
    pub fn serve(
        &mut self,
        mcp: Arc<fleet_runtime::subagent::McpSession>,
        controls: fleet_runtime::controls::SessionControls,
        ops: fleet_session::OpSender,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let requests = self.requests.take()?;
        let server = server::Server {
            link: self.link.clone(),
            mcp,
            controls,
        };
        Some(tokio::spawn(server.serve(requests, ops)))
    }

    /// Whether the stdin reader has stopped.
    pub fn reader_done(&self) -> bool {
        self.reader.is_finished()
    }

    /// The reader's outcome: an error names the first bad user-message line.
    pub fn join(self) -> anyhow::Result<()> {
        match self.reader.join() {
            Ok(result) => result,
            Err(_) => anyhow::bail!("the stdin reader stopped unexpectedly"),
        }
    }
}
