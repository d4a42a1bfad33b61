//! What the SDK host adds to the session it drives, made once `initialize` is read: the
//! controls it steers by, its answers to "ask" decisions, its hook callbacks, and the way to
//! its in-process MCP servers.

use super::approver::SdkApprover;
use super::hook_runner::SdkHookRunner;
use super::init::InitRequest;
use super::mcp_bridge::LinkBridge;
use super::server::Effects;
use super::Channel;
use fleet_runtime::controls::{ControlOptions, SessionControls};
use fleet_runtime::hooks::{HookRunner, HookSet};
use fleet_runtime::mcp::SdkMcpBridge;
use fleet_runtime::Approver;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The hooks an SDK host registered in `initialize`, and the runner that calls them back.
#[derive(Clone)]
pub struct SdkHooks {
    pub set: HookSet,
    pub runner: Arc<dyn HookRunner>,
}

pub struct HostParts {
    pub controls: SessionControls,
    /// `can_use_tool` for every ask, when the host asked for it (`--permission-prompt-tool
    /// stdio`).
    pub approver: Option<Arc<dyn Approver>>,
    pub hooks: Option<SdkHooks>,
    pub bridge: Arc<dyn SdkMcpBridge>,
}

impl Channel {
    /// The session's parts that talk to the host. `cancel` withdraws whatever still waits
    /// for the host when the session ends.
    pub fn host_parts(
        &self,
        options: ControlOptions,
        init: Option<&InitRequest>,
        asks: bool,
        cancel: &CancellationToken,
    ) -> HostParts {
        let controls = SessionControls::new(options);
        let approver = asks.then(|| {
            Arc::new(SdkApprover::new(
                self.link.clone(),
                Arc::new(Effects(controls.clone())),
                cancel.clone(),
            )) as Arc<dyn Approver>
        });
        let hooks = init
            .filter(|request| !request.hooks.is_empty())
            .map(|request| SdkHooks {
                set: request.hooks.clone(),
                runner: Arc::new(SdkHookRunner::new(self.link.clone())),
            });
        let bridge = Arc::new(LinkBridge::new(self.link.clone(), cancel.clone()));
        HostParts {
            controls,
            approver,
            hooks,
            bridge,
        }
    }
}
