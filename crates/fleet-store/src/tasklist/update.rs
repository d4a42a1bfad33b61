//! Applying a TaskUpdate to the list in memory, with the claim checks, before anything is
//! written. The caller holds the list's lock and has read every task, so the checks see the
//! list exactly as the write will find it; on an error nothing is written.
//!
//! Claim rules (Claude Code performs none of these through TaskUpdate):
//! - A member other than the lead may not change the owner of, or start (`in_progress`), a
//!   task another member owns → [`TaskListError::Claimed`]. The lead may reassign anything.
//! - Starting a task, or a member taking an owner for it, while a task it waits on is not
//!   completed → [`TaskListError::Blocked`]. The lead may still assign a blocked task ahead of
//!   time; its owner cannot start it until the blockers are done.
//! - A member that starts an unowned task becomes its owner, so "in progress" always says by
//!   whom, and two members starting one task cannot both win.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::error::TaskListError;
use super::files::parse_id;
use super::task::{Actor, PatchStatus, Task, TaskPatch, TaskState, Updated};

type Result<T> = std::result::Result<T, TaskListError>;

/// What to write after a successful [`apply`].
#[derive(Debug)]
pub(super) struct Outcome {
    pub updated: Updated,
    /// Tasks whose files must be rewritten (the updated one and the other ends of links).
    pub dirty: BTreeSet<u64>,
    /// The task whose file must be removed.
    pub removed: Option<u64>,
}

pub(super) fn apply(
    all: &mut BTreeMap<u64, Task>,
    id: u64,
    patch: TaskPatch,
    actor: &Actor,
) -> Result<Outcome> {
    let before = all
        .get(&id)
        .cloned()
        .ok_or_else(|| TaskListError::NotFound { id: id.to_string() })?;
    if patch.status == Some(PatchStatus::Deleted) {
        return Ok(delete(all, id));
    }

    let mut dirty = BTreeSet::new();
    link(all, id, &patch, &mut dirty)?;

    let old_owner = before.owner.clone();
    let requested_owner = patch.owner.clone().map(|owner| {
        owner
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty())
    });
    let starting = patch.status == Some(PatchStatus::InProgress);
    if !actor.is_lead {
        if let Some(owner) = old_owner.as_ref().filter(|o| **o != actor.name) {
            let moves_owner = requested_owner.as_ref().is_some_and(|o| *o != old_owner);
            if moves_owner || starting {
                return Err(TaskListError::Claimed {
                    id: before.id,
                    owner: owner.clone(),
                });
            }
        }
    }
    let mut owner = requested_owner.unwrap_or_else(|| old_owner.clone());
    if starting && owner.is_none() && !actor.is_lead {
        owner = Some(actor.name.clone());
    }
    let claims_start = starting && before.status != TaskState::InProgress;
    let claims_owner = !actor.is_lead && owner.is_some() && owner != old_owner;
    if claims_start || claims_owner {
        let blocked_by = all
            .get(&id)
            .map(|t| t.blocked_by.clone())
            .unwrap_or_default();
        let unfinished: Vec<(String, String)> = blocked_by
            .iter()
            .filter_map(|b| parse_id(b).and_then(|b| all.get(&b)))
            .filter(|b| b.status != TaskState::Completed)
            .map(|b| (b.id.clone(), b.subject.clone()))
            .collect();
        if !unfinished.is_empty() {
            return Err(TaskListError::Blocked {
                id: before.id,
                by: unfinished,
            });
        }
    }

    let task = all
        .get_mut(&id)
        .ok_or_else(|| TaskListError::NotFound { id: id.to_string() })?;
    if let Some(subject) = patch.subject {
        task.subject = subject;
    }
    if let Some(description) = patch.description {
        task.description = description;
    }
    if let Some(active_form) = patch.active_form {
        task.active_form = Some(active_form);
    }
    task.owner = owner;
    task.status = match patch.status {
        Some(PatchStatus::Pending) => TaskState::Pending,
        Some(PatchStatus::InProgress) => TaskState::InProgress,
        Some(PatchStatus::Completed) => TaskState::Completed,
        Some(PatchStatus::Deleted) | None => task.status,
    };
    if let Some(changes) = patch.metadata {
        task.metadata = merge(task.metadata.take(), changes);
    }

    let after = task.clone();
    let changed = changed_fields(&before, &after);
    if !changed.is_empty() {
        dirty.insert(id);
    }
    let new_owner = after.owner.clone().filter(|_| after.owner != old_owner);
    Ok(Outcome {
        updated: Updated {
            task: Some(after),
            changed,
            new_owner,
        },
        dirty,
        removed: None,
    })
}

/// Removes task `id` and every link to it.
fn delete(all: &mut BTreeMap<u64, Task>, id: u64) -> Outcome {
    all.remove(&id);
    let key = id.to_string();
    let mut dirty = BTreeSet::new();
    for (other_id, other) in all.iter_mut() {
        let links = other.blocks.len() + other.blocked_by.len();
        other
            .blocks
            .retain(|b| parse_id(b) != Some(id) && *b != key);
        other
            .blocked_by
            .retain(|b| parse_id(b) != Some(id) && *b != key);
        if other.blocks.len() + other.blocked_by.len() != links {
            dirty.insert(*other_id);
        }
    }
    Outcome {
        updated: Updated {
            task: None,
            changed: vec!["deleted"],
            new_owner: None,
        },
        dirty,
        removed: Some(id),
    }
}

/// Adds `addBlocks` / `addBlockedBy`, writing both sides of each link, refusing unknown ids,
/// self-links and loops.
fn link(
    all: &mut BTreeMap<u64, Task>,
    id: u64,
    patch: &TaskPatch,
    dirty: &mut BTreeSet<u64>,
) -> Result<()> {
    // (waiter, waited on)
    let edges = patch
        .add_blocks
        .iter()
        .map(|b| (b, true))
        .chain(patch.add_blocked_by.iter().map(|b| (b, false)));
    for (other, this_blocks_other) in edges {
        let other = parse_id(other)
            .filter(|o| all.contains_key(o))
            .ok_or_else(|| TaskListError::NotFound {
                id: other.trim().trim_start_matches('#').to_string(),
            })?;
        if other == id {
            return Err(TaskListError::SelfDependency { id: id.to_string() });
        }
        let (waiter, waited_on) = if this_blocks_other {
            (other, id)
        } else {
            (id, other)
        };
        if waits_on(all, waited_on, waiter) {
            return Err(TaskListError::Cycle {
                id: waiter.to_string(),
                on: waited_on.to_string(),
            });
        }
        let (waiter_key, waited_key) = (waiter.to_string(), waited_on.to_string());
        if let Some(task) = all.get_mut(&waiter) {
            if !task.blocked_by.contains(&waited_key) {
                task.blocked_by.push(waited_key);
                dirty.insert(waiter);
            }
        }
        if let Some(task) = all.get_mut(&waited_on) {
            if !task.blocks.contains(&waiter_key) {
                task.blocks.push(waiter_key);
                dirty.insert(waited_on);
            }
        }
    }
    Ok(())
}

/// Whether `from` waits on `target`, directly or through other tasks.
fn waits_on(all: &BTreeMap<u64, Task>, from: u64, target: u64) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from];
    while let Some(current) = stack.pop() {
        if current == target {
            return true;
        }
        if !seen.insert(current) {
            continue;
        }
        if let Some(task) = all.get(&current) {
            stack.extend(task.blocked_by.iter().filter_map(|b| parse_id(b)));
        }
    }
    false
}

/// Key-by-key merge; `null` deletes a key, and an emptied map is dropped.
fn merge(
    current: Option<Map<String, Value>>,
    changes: Map<String, Value>,
) -> Option<Map<String, Value>> {
    let mut map = current.unwrap_or_default();
    for (key, value) in changes {
        if value.is_null() {
            map.remove(&key);
        } else {
            map.insert(key, value);
        }
    }
    (!map.is_empty()).then_some(map)
}

fn changed_fields(before: &Task, after: &Task) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let mut check = |name, differs: bool| {
        if differs {
            changed.push(name);
        }
    };
    check("subject", before.subject != after.subject);
    check("description", before.description != after.description);
    check("activeForm", before.active_form != after.active_form);
    check("owner", before.owner != after.owner);
    check("status", before.status != after.status);
    check("blocks", before.blocks != after.blocks);
    check("blockedBy", before.blocked_by != after.blocked_by);
    check("metadata", before.metadata != after.metadata);
    changed
}
