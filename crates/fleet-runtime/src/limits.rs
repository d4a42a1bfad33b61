//! Limits on the agent tree: how deep subagents may nest and how many may run at once.
//!
//! A slot is held for as long as a subagent runs and is given back when its guard drops —
//! whatever way the run ends — so a panic or a kill cannot leak capacity.

use fleet_protocol::env::{self, EnvError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub const DEFAULT_MAX_DEPTH: u32 = 3;
pub const DEFAULT_MAX_CONCURRENT: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpawnLimits {
    /// A child of the main agent is at depth 1; a spawn deeper than this is refused.
    pub max_depth: u32,
    /// Subagents running at once across the tree (foreground and background).
    pub max_concurrent: usize,
}

impl Default for SpawnLimits {
    fn default() -> Self {
        Self {
            max_depth: DEFAULT_MAX_DEPTH,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
        }
    }
}

impl SpawnLimits {
    /// `FLEET_MAX_SPAWN_DEPTH` and `FLEET_MAX_CONCURRENT_SUBAGENTS`, else the defaults. A value
    /// that is not a whole number within the variable's bounds is an error naming it.
    pub fn from_env() -> Result<Self, EnvError> {
        let mut limits = Self::default();
        if let Some(depth) = env::FLEET_MAX_SPAWN_DEPTH.get()? {
            limits.max_depth = u32::try_from(depth).unwrap_or(u32::MAX);
        }
        if let Some(max) = env::FLEET_MAX_CONCURRENT_SUBAGENTS.get()? {
            limits.max_concurrent = usize::try_from(max).unwrap_or(usize::MAX);
        }
        Ok(limits)
    }
}

/// Counts running subagents against the limit.
#[derive(Debug)]
pub struct Slots {
    max: usize,
    running: Arc<AtomicUsize>,
}

/// One running subagent's place; dropping it frees the place.
#[derive(Debug)]
pub struct SlotGuard {
    running: Arc<AtomicUsize>,
}

impl Slots {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            running: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A slot, or `None` when `max` subagents already run.
    pub fn try_acquire(&self) -> Option<SlotGuard> {
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()?;
        Some(SlotGuard {
            running: self.running.clone(),
        })
    }

    pub fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    pub fn max(&self) -> usize {
        self.max
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_refuse_past_the_limit_and_come_back_on_drop() {
        let slots = Slots::new(2);
        let a = slots.try_acquire().expect("first");
        let _b = slots.try_acquire().expect("second");
        assert!(slots.try_acquire().is_none());
        drop(a);
        assert_eq!(slots.running(), 1);
        assert!(slots.try_acquire().is_some());
    }
}
