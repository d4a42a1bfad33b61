//! The SDK control protocol, as Claude Code and the Agent SDKs exchange it on stdin/stdout
//! beside the message stream: `control_request` (either way), `control_response` (the answer,
//! with the same `request_id`), `control_cancel_request` (the asker gave up) and `keep_alive`.
//!
//! fleet's SDK server (`fleet-cli`) and the remote worker (which drives a `fleet` process over
//! the same protocol) write and read these lines through the types here, so the two sides
//! cannot drift apart. Field order is the order on the wire (serde_json keeps insertion
//! order), which the Agent SDK check compares byte for byte.
//!
//! - `line.rs`: the line kinds, the answer envelope, and why a line could not be read
//! - `request.rs`: each request's body, by `subtype`; unknown subtypes are kept by name, so
//!   the server answers "unsupported" instead of failing the line
//! - `answer.rs`: the bodies of success answers
//! - `permission_update.rs`: `permission_suggestions` / `updatedPermissions` entries

mod answer;
mod line;
mod permission_update;
mod request;

pub use answer::{
    AgentInfo, ApiAccount, CanUseToolAnswer, CommandInfo, Empty, InitializeAnswer, InterruptAnswer,
    McpMessageAnswer, McpStatusAnswer, ModeAnswer, ModelAnswer, ModelInfo,
};
pub use line::{ControlLine, ControlResponse, LineError};
pub use permission_update::{Destination, PermissionUpdate, RuleBehavior, RuleValue};
pub use request::{
    CanUseTool, ControlRequest, HookCallback, Initialize, McpMessage, RequestBody, UnknownRequest,
};

#[cfg(test)]
mod tests;
