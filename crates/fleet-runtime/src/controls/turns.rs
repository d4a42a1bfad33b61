//! The session's side of interrupting: each turn (a prompt's run and the settling after it)
//! runs on a child of the session's token, which [`super::SessionControls::interrupt`]
//! cancels without ending the session.

use super::SessionControls;
use crate::agent::Agent;
use crate::subagent::Spawner;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The turns of one session, steered by the main agent's controls when it has them.
pub(crate) struct Turns {
    controls: Option<SessionControls>,
}

impl Turns {
    /// Takes the controls from the main agent's config and gives them the session's tasks.
    pub(crate) fn new(agent: &Agent, spawner: Option<&Arc<Spawner>>) -> Self {
        let controls = agent.config().controls.clone();
        if let (Some(controls), Some(spawner)) = (&controls, spawner) {
            controls.attach_spawner(spawner);
        }
        Self { controls }
    }

    /// The token the next turn runs on: the session's own without controls (nothing can
    /// interrupt a single turn then), else a child that the controls may cancel.
    pub(crate) fn begin(&self, session: &CancellationToken) -> CancellationToken {
        match &self.controls {
            Some(controls) => controls.begin_turn(session),
            None => session.clone(),
        }
    }

    /// The turn is over: an interrupt now finds nothing running.
    pub(crate) fn end(&self) {
        if let Some(controls) = &self.controls {
            controls.end_turn();
        }
    }
}
