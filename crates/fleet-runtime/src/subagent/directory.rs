//! Every subagent a session has started, by id and by name, and whether it is running: what
//! SendMessage needs to reach an agent, and to resume one that has stopped.
//!
//! Delivery and the end of a run meet under one lock per agent, so a message is either in the
//! inbox of a run that will still read it, or it resumes the agent: never dropped between a
//! run's last look at its inbox and its end.

use super::build::Blueprint;
use crate::inbox::Inbox;
use fleet_protocol::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub(crate) struct Directory {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    agents: HashMap<String, Arc<AgentRecord>>,
    names: HashMap<String, String>,
    /// Ids in the order the agents started, for listing.
    order: Vec<String>,
}

/// One subagent: how to build it again, and its current run.
#[derive(Debug)]
pub(crate) struct AgentRecord {
    pub id: String,
    pub blueprint: Arc<Blueprint>,
    life: Mutex<Life>,
    stopped: Notify,
}

/// A run that is going on: where its messages go and what stops it.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub inbox: Arc<Inbox>,
    pub cancel: CancellationToken,
}

#[derive(Debug)]
enum Life {
    Running(Run),
    /// The run has read its last message and is ending (its task finishing); a message now
    /// waits for it to stop, then resumes it.
    Closing,
    Stopped,
}

/// What happened to a message for an agent.
#[derive(Debug)]
pub(crate) enum Delivery {
    /// In the inbox of the running agent; it reads it at its next turn.
    Queued,
    /// The agent had stopped: it is now claimed for a new run, which the caller must start
    /// (or hand back with [`AgentRecord::release`]).
    Resume(Run),
    /// The agent was stopped and its run is still winding down; try again once it has.
    WindingDown,
}

impl Directory {
    /// Adds an agent whose first run is `run`. Fails, naming the holder, when its name is
    /// taken.
    pub fn add(
        &self,
        id: &str,
        blueprint: Arc<Blueprint>,
        run: Run,
    ) -> Result<Arc<AgentRecord>, String> {
        let mut inner = self.lock();
        if let Some(name) = &blueprint.name {
            if let Some(holder) = inner.names.get(name) {
                return Err(taken(name, holder));
            }
            inner.names.insert(name.clone(), id.to_string());
        }
        let record = Arc::new(AgentRecord {
            id: id.to_string(),
            blueprint,
            life: Mutex::new(Life::Running(run)),
            stopped: Notify::new(),
        });
        inner.agents.insert(id.to_string(), record.clone());
        inner.order.push(id.to_string());
        Ok(record)
    }

    /// Fails, naming the holder, when `name` is taken (checked again when the agent is added).
    pub fn check_name_free(&self, name: &str) -> Result<(), String> {
        match self.lock().names.get(name) {
            Some(holder) => Err(taken(name, holder)),
            None => Ok(()),
        }
    }

    /// The agent with this id or name.
    pub fn find(&self, to: &str) -> Option<Arc<AgentRecord>> {
        let inner = self.lock();
        let id = inner.names.get(to).map(String::as_str).unwrap_or(to);
        inner.agents.get(id).cloned()
    }

    /// One line per agent other than `except`, oldest first: id, name, type, state.
    pub fn listing(&self, except: &str) -> Vec<String> {
        let inner = self.lock();
        inner
            .order
            .iter()
            .filter(|id| id.as_str() != except)
            .filter_map(|id| inner.agents.get(id))
            .map(|record| {
                let bp = &record.blueprint;
                let name = bp
                    .name
                    .as_ref()
                    .map(|n| format!(" \"{n}\""))
                    .unwrap_or_default();
                let state = if record.is_running() {
                    "running"
                } else {
                    "stopped"
                };
                format!(
                    "{}{name} ({}, {state}): {}",
                    record.id,
                    bp.kind.type_name(),
                    bp.description
                )
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn taken(name: &str, holder: &str) -> String {
    format!(
        "The name {name:?} is already taken by agent {holder}; choose another name, or use \
         SendMessage to continue that agent."
    )
}

impl AgentRecord {
    /// Queues `message` for the running agent, or claims the stopped agent for a new run.
    pub fn deliver(&self, message: Message) -> Delivery {
        let mut life = self.lock();
        match &*life {
            Life::Running(run) if run.cancel.is_cancelled() => Delivery::WindingDown,
            Life::Closing => Delivery::WindingDown,
            Life::Running(run) => {
                run.inbox.push(message);
                Delivery::Queued
            }
            Life::Stopped => {
                let run = Run {
                    inbox: Arc::new(Inbox::new()),
                    cancel: CancellationToken::new(),
                };
                *life = Life::Running(run.clone());
                Delivery::Resume(run)
            }
        }
    }

    /// Hands back a claim that could not be started.
    pub fn release(&self) {
        self.set_stopped();
    }

    /// Closes the current run to messages unless some are waiting that it should still read
    /// (it was not stopped, and its inbox is not empty): then `false`, and the run must go
    /// on. After closing, the run ends with [`Self::set_stopped`].
    pub fn try_close(&self, run: &Run) -> bool {
        let mut life = self.lock();
        if !run.cancel.is_cancelled() && !run.inbox.is_empty() {
            return false;
        }
        *life = Life::Closing;
        true
    }

    /// The run is over; a message now resumes the agent.
    pub fn set_stopped(&self) {
        *self.lock() = Life::Stopped;
        self.stopped.notify_waiters();
    }

    /// Returns once the agent is not running.
    pub async fn wait_stopped(&self) {
        loop {
            let notified = self.stopped.notified();
            tokio::pin!(notified);
            // Registered before the check, so a close in between still wakes us.
            notified.as_mut().enable();
            if !self.is_running() {
                return;
            }
            notified.await;
        }
    }

    /// Running or still ending.
    pub fn is_running(&self) -> bool {
        !matches!(&*self.lock(), Life::Stopped)
    }

    fn lock(&self) -> MutexGuard<'_, Life> {
        self.life
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
