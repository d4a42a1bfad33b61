//! Hooks of an SDK session: command hooks from settings run as usual, and the callbacks the host
//! registered in `initialize` become `hook_callback` requests. The host's answer is the same
//! JSON a command hook prints, so the hook engine reads both alike.

use super::link::{ControlLink, LinkError};
use fleet_protocol::control::{ControlRequest, HookCallback};
use fleet_runtime::hooks::run::RunFuture;
use fleet_runtime::hooks::{
    CommandRunner, Ending, Handler, HookRun, HookRunner, HookSpec, RunPlace,
};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct SdkHookRunner {
    link: Arc<ControlLink>,
    commands: CommandRunner,
}

impl SdkHookRunner {
    pub fn new(link: Arc<ControlLink>) -> Self {
        Self {
            link,
            commands: CommandRunner,
        }
    }

    async fn call(
        &self,
        id: &str,
        hook: &HookSpec,
        input: &[u8],
        cancel: &CancellationToken,
    ) -> HookRun {
        let input: Value = serde_json::from_slice(input).unwrap_or(Value::Null);
        let tool_use_id = input.get("tool_use_id").cloned();
        let request = ControlRequest::HookCallback(HookCallback {
            callback_id: id.to_string(),
            input,
            tool_use_id,
        });
        let asked = self.link.request(request, cancel);
        let ending = |ending| HookRun {
            ending,
            stdout: String::new(),
            stderr: String::new(),
        };
        match tokio::time::timeout(hook.timeout, asked).await {
            Ok(Ok(answer)) => HookRun {
                ending: Ending::Exited(0),
                stdout: answer.to_string(),
                stderr: String::new(),
            },
            Ok(Err(LinkError::Cancelled(_))) => ending(Ending::Cancelled),
            Ok(Err(err)) => ending(Ending::Failed(err.to_string())),
            Err(_) => ending(Ending::TimedOut),
        }
    }
}

impl HookRunner for SdkHookRunner {
    fn run<'a>(
        &'a self,
        hook: &'a HookSpec,
        input: Arc<Vec<u8>>,
        place: &'a RunPlace,
        cancel: &'a CancellationToken,
    ) -> RunFuture<'a> {
        match &hook.handler {
            Handler::Command(_) => self.commands.run(hook, input, place, cancel),
            Handler::Callback(id) => {
                Box::pin(async move { self.call(id, hook, &input, cancel).await })
            }
        }
    }
}
