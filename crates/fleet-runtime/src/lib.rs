//! Agents running: the agent loop and the events it emits.
//!
//! An [`Agent`] owns one conversation. [`Agent::run`] takes a prompt and drives turns — request,
//! streamed reply, tool calls, results — until the model ends its turn or a limit stops it,
//! reporting everything as [`fleet_protocol::AgentEvent`]s on an [`EventSink`]. [`Session`]
//! wraps an agent in a task and hands back the event stream.

mod accounting;
pub mod agent;
pub mod approval;
mod attended;
pub mod backends;
pub mod compact;
pub mod config;
pub mod context;
pub mod controls;
pub mod coordinator;
pub mod crash;
pub mod definitions;
mod dispatch;
pub mod effort;
pub mod error;
mod failpoint;
pub mod hooks;
pub mod inbox;
pub mod isolation;
pub mod ledger;
pub mod limits;
pub mod locations;
pub mod mcp;
pub mod memory;
pub mod output_limit;
pub mod private_key;
pub mod remote;
pub mod services;
pub mod session;
mod settle;
pub mod sink;
pub mod skills;
pub mod structured;
pub mod subagent;
pub mod system_prompt;
pub mod tasks;
pub mod teams;
pub mod tracked;
pub mod transcript;
pub mod watchdog;

pub use agent::Agent;
pub use approval::{Approval, ApprovalRequest, Approver};
pub use config::AgentConfig;
pub use context::{AgentContext, SubagentContext, TeammateContext};
pub use controls::SessionControls;
pub use error::RuntimeError;
pub use hooks::Hooks;
pub use inbox::Inbox;
pub use ledger::Ledger;
pub use limits::SpawnLimits;
pub use services::SpawnerConfig;
pub use session::{Session, SessionHandle};
pub use sink::EventSink;
pub use sink::EventTap;
pub use subagent::Spawner;
pub use system_prompt::{Environment, SystemPromptBuilder};
pub use tasks::{TaskOutputTool, TaskRegistry, TaskStopTool};
