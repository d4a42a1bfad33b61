//! Every subagent a session has started, by id and by name, with what it takes to build it
//! again: what SendMessage needs to reach an agent, and to resume one that has stopped.

use super::build::Blueprint;
use super::lifecycle::{Lifecycle, Run};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

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
    pub life: Lifecycle,
}

impl Directory {
    /// Adds an agent whose first run is `run`. Fails, naming the holder, when its name is
    /// taken.
    pub fn add(
        &self,
        id: &str,
        blueprint: Arc<Blueprint>,
        run: Run,
    ) -> Result<Arc<AgentRecord>, NameTaken> {
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
            life: Lifecycle::running(run),
        });
        inner.agents.insert(id.to_string(), record.clone());
        inner.order.push(id.to_string());
        Ok(record)
    }

    /// Fails, naming the holder, when `name` is taken (checked again when the agent is added).
    pub fn check_name_free(&self, name: &str) -> Result<(), NameTaken> {
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
                let state = if record.life.is_running() {
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

fn taken(name: &str, holder: &str) -> NameTaken {
    NameTaken {
        name: name.to_string(),
        holder: holder.to_string(),
    }
}

/// An agent's `name` that another agent of the session holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "The name {name:?} is already taken by agent {holder}; choose another name, or use \
     SendMessage to continue that agent."
)]
pub struct NameTaken {
    pub name: String,
    /// The id of the agent that holds the name.
    pub holder: String,
}

impl From<NameTaken> for fleet_tools::ToolError {
    fn from(taken: NameTaken) -> Self {
        Self::bad_value("name", taken.to_string())
    }
}
