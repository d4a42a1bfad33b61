//! [`LazyFrame`]: the agent's request without its messages, made only when a check needs it.
//!
//! The check before every request needs the frame (system prompt and every tool definition)
//! only when it has no usage figure from the API to start from, or when it compacts. Building
//! it each time would clone every tool definition of every agent before every request.

use std::sync::OnceLock;

use fleet_protocol::MessagesRequest;

/// The frame, built on first use and kept for the rest of the check.
pub struct LazyFrame<'a> {
    make: Box<dyn Fn() -> MessagesRequest + Send + Sync + 'a>,
    built: OnceLock<MessagesRequest>,
}

impl<'a> LazyFrame<'a> {
    pub fn new(make: impl Fn() -> MessagesRequest + Send + Sync + 'a) -> Self {
        Self {
            make: Box::new(make),
            built: OnceLock::new(),
        }
    }

    /// A frame already at hand.
    pub fn ready(frame: MessagesRequest) -> Self {
        let built = OnceLock::new();
        let _ = built.set(frame);
        Self {
            make: Box::new(|| MessagesRequest::new("", 0, Vec::new())),
            built,
        }
    }

    pub fn get(&self) -> &MessagesRequest {
        self.built.get_or_init(|| (self.make)())
    }

    /// Whether it has been built (for tests of when it is needed).
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }
}
