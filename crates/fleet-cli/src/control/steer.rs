//! The host's requests that steer the session: each is an [`Op`](fleet_session::Op) sent
//! through the session's [`OpSender`], as `-p` and the TUI steer it, so the control server
//! is a thin adapter over the session's queue. The answer on the wire is the one the host
//! always got.

use super::server::ServerError;
use fleet_protocol::control::{
    ControlRequest, Empty, InterruptAnswer, ModeAnswer, ModelAnswer, RequestBody,
};
use fleet_session::OpSender;
use fleet_tools::permissions::PermissionMode;
use serde::Serialize;
use serde_json::Value;

/// A host request that has an `Op`.
#[derive(Debug)]
pub enum Steer {
    Interrupt,
    SetPermissionMode(PermissionMode),
    SetModel(Option<String>),
    StopTask(String),
}

impl Steer {
    /// The request as an op; `None` when no op does it.
    pub fn of(request: &RequestBody) -> Option<Self> {
        let RequestBody::Known(request) = request else {
            return None;
        };
        match request {
            ControlRequest::Interrupt => Some(Self::Interrupt),
            ControlRequest::SetPermissionMode { mode } => Some(Self::SetPermissionMode(*mode)),
            ControlRequest::SetModel { model } => Some(Self::SetModel(model.clone())),
            ControlRequest::StopTask { task_id } => Some(Self::StopTask(task_id.clone())),
            _ => None,
        }
    }

    /// Sends the op and turns its reply into the answer's body.
    pub async fn send(self, ops: &OpSender) -> Result<Value, ServerError> {
        match self {
            Self::Interrupt => {
                // Idle or not (or already over), the host's stop is acknowledged, as Claude
                // Code does.
                let _ = ops.interrupt();
                answer(InterruptAnswer::default())
            }
            Self::SetPermissionMode(mode) => {
                let mode = ops.set_permission_mode(mode).await??;
                answer(ModeAnswer { mode })
            }
            Self::SetModel(model) => {
                let model = ops.set_model(model).await??;
                answer(ModelAnswer { model })
            }
            Self::StopTask(task_id) => {
                ops.stop_task(task_id).await??;
                answer(Empty {})
            }
        }
    }
}

fn answer(body: impl Serialize) -> Result<Value, ServerError> {
    Ok(serde_json::to_value(body)?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn known(request: ControlRequest) -> RequestBody {
        RequestBody::Known(request)
    }

    #[test]
    fn only_the_requests_with_an_op_are_taken() {
        let taken = Steer::of(&known(ControlRequest::SetModel {
            model: Some("opus".into()),
        }));
        assert!(matches!(taken, Some(Steer::SetModel(Some(m))) if m == "opus"));
        assert!(matches!(
            Steer::of(&known(ControlRequest::StopTask {
                task_id: "t1".into()
            })),
            Some(Steer::StopTask(id)) if id == "t1"
        ));
        assert!(Steer::of(&known(ControlRequest::McpStatus)).is_none());
        assert!(Steer::of(&known(ControlRequest::GetContextUsage)).is_none());
    }

    #[tokio::test]
    async fn an_interrupt_is_acknowledged_after_the_end_and_the_rest_are_refused() {
        let ops = OpSender::closed();
        let interrupt = Steer::Interrupt.send(&ops).await.unwrap();
        assert_eq!(
            interrupt,
            serde_json::to_value(InterruptAnswer::default()).unwrap()
        );
        let model = Steer::SetModel(None).send(&ops).await.unwrap_err();
        assert!(matches!(model, ServerError::Ended(_)), "{model}");
        assert_eq!(model.to_string(), "the session has ended");
        let stop = Steer::StopTask("t1".into()).send(&ops).await.unwrap_err();
        assert!(matches!(stop, ServerError::Ended(_)), "{stop}");
    }
}
