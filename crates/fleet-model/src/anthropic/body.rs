//! The Messages API request body, serialized while it is sent rather than before.
//!
//! A body serialized up front is a second copy of the agent's whole conversation and tool
//! list, held for as long as the request is in flight (it is kept for retries), and with
//! hundreds of agents those copies were most of fleet's heap. Here the body holds the
//! request's shared lists (see [`fleet_protocol::Shared`]) and writes them out in chunks as
//! the connection takes them; only the marked tails (see [`crate::cache`]) are copies. The
//! length is counted first, so the request still carries a `content-length` (some servers
//! refuse chunked uploads).

use crate::cache::{marked_message, Marked};
use bytes::Bytes;
use fleet_protocol::MessagesRequest;
use std::io::{self, Write};
use std::sync::Arc;

/// Chunks are cut at about this size: big enough to keep the writes few, small enough that
/// a chunk waiting for the socket holds little.
const CHUNK: usize = 16 * 1024;

/// One request's body, cheap to clone (each attempt of a retried request streams its own).
#[derive(Debug, Clone)]
pub(crate) struct StreamedBody {
    inner: Arc<Inner>,
    len: u64,
}

#[derive(Debug)]
struct Inner {
    /// Everything but the tools and the messages, as JSON without its closing brace; shared
    /// with the requests that send the same (see [`head`]).
    head: Arc<[u8]>,
    /// `,"tools":[…]`, shared with every request that sends the same list.
    tools: Arc<[u8]>,
    request: MessagesRequest,
    marked: Marked,
}

/// A piece of the body, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Head,
    /// The whole tool list, written once per list (see [`tools`]).
    Tools,
    Message(usize),
    End,
}

impl StreamedBody {
    /// `request` with `stream: true` and the `marked` tails in place of the originals.
    pub fn new(
        mut request: MessagesRequest,
        mut marked: Marked,
    ) -> Result<Self, serde_json::Error> {
        // The system prompt goes into the head, and the request keeps no other copy of it
        // while it is in flight.
        let own = request.system.take();
        let system = marked.system.take().or(own);
        let head = head::head_json(&request, system)?;
        let tools = tools::tools_json(&request.tools, marked.last_tool)?;
        let inner = Arc::new(Inner {
            head,
            tools,
            request,
            marked,
        });
        let mut counter = Counter(0);
        let mut part = Some(Part::Head);
        while let Some(current) = part {
            inner.write(current, &mut counter)?;
            part = inner.after(current);
        }
        Ok(Self {
            inner,
            len: counter.0,
        })
    }

    /// The exact number of bytes [`Self::into_body`] yields.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The body for one attempt, serialized chunk by chunk as the connection asks.
    pub fn into_body(self) -> reqwest::Body {
        let stream = futures::stream::unfold(
            (self.inner, Some(Part::Head)),
            |(inner, mut part)| async move {
                part?;
                let mut chunk = Vec::with_capacity(CHUNK + CHUNK / 4);
                while let Some(current) = part {
                    if let Err(err) = inner.write(current, &mut chunk) {
                        return Some((Err(io::Error::other(err)), (inner, None)));
                    }
                    part = inner.after(current);
                    if chunk.len() >= CHUNK {
                        break;
                    }
                }
                chunk.shrink_to_fit();
                Some((Ok(Bytes::from(chunk)), (inner, part)))
            },
        );
        reqwest::Body::wrap_stream(stream)
    }

    /// The whole body at once (for tests and for comparing with a plain serialization).
    #[cfg(test)]
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut part = Some(Part::Head);
        while let Some(current) = part {
            if self.inner.write(current, &mut out).is_err() {
                break;
            }
            part = self.inner.after(current);
        }
        out
    }
}

impl Inner {
    fn after(&self, part: Part) -> Option<Part> {
        let messages = self.request.messages.len();
        let first_message = || {
            if messages > 0 {
                Part::Message(0)
            } else {
                Part::End
            }
        };
        match part {
            Part::Head if !self.tools.is_empty() => Some(Part::Tools),
            Part::Head | Part::Tools => Some(first_message()),
            Part::Message(i) if i + 1 < messages => Some(Part::Message(i + 1)),
            Part::Message(_) => Some(Part::End),
            Part::End => None,
        }
    }

    fn write(&self, part: Part, out: &mut impl Write) -> Result<(), serde_json::Error> {
        let request = &self.request;
        match part {
            Part::Head => out.write_all(&self.head).map_err(serde_json::Error::io),
            Part::Tools => out.write_all(&self.tools).map_err(serde_json::Error::io),
            Part::Message(i) => {
                let lead: &[u8] = if i == 0 { b",\"messages\":[" } else { b"," };
                out.write_all(lead).map_err(serde_json::Error::io)?;
                let last = i + 1 == request.messages.len();
                let message = &request.messages[i];
                if last && self.marked.last_message {
                    // A copy just for this write: it is often the largest message.
                    serde_json::to_writer(&mut *out, &marked_message(message))
                } else {
                    serde_json::to_writer(&mut *out, message)
                }?;
                if last {
                    out.write_all(b"]").map_err(serde_json::Error::io)?;
                }
                Ok(())
            }
            Part::End if request.messages.is_empty() => out
                .write_all(b",\"messages\":[]}")
                .map_err(serde_json::Error::io),
            Part::End => out.write_all(b"}").map_err(serde_json::Error::io),
        }
    }
}

/// Counts bytes instead of keeping them.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

mod head;
#[cfg(test)]
mod tests;
mod tools;
