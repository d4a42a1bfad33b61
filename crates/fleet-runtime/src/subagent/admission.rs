//! How many subagents may be built before the model has answered them.
//!
//! A fan-out wider than the process's model places (`fleet_model::max_in_flight`, 256 unless
//! `FLEET_MAX_MODEL_REQUESTS` says otherwise) used to build all its children at once, and all
//! but 256 waited for a place to send their first request, each holding a built agent: its
//! config and system prompt, its request, its task. How many piled up depended on how fast the
//! server answered relative to how fast fleet built them, and a 10,000-agent fan-out peaked
//! anywhere from 150 to 270 MB. A child now takes a start permit before it is built and gives it
//! back once the model has answered it, or when it ends; the calls beyond the permits wait as
//! what they are until then, the Agent call's arguments.
//!
//! No deadlock: a permit is held only until the child's first reply, and before that reply a
//! child has started nothing, so a holder never waits for another permit. The wait is bounded
//! by the children ahead of it, each bounded by its first request's own timeouts.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Children built and not yet answered, per model place: enough that the places never wait
/// for a child to be built, few enough that the rest cost nothing.
const PER_PLACE: usize = 2;

fn gate() -> &'static Arc<Semaphore> {
    static GATE: OnceLock<Arc<Semaphore>> = OnceLock::new();
    GATE.get_or_init(|| {
        Arc::new(Semaphore::new(
            fleet_model::max_in_flight().saturating_mul(PER_PLACE),
        ))
    })
}

/// A child's permit, held from before it is built until the model first answers it.
#[derive(Debug, Default)]
pub(crate) struct StartPermit(Mutex<Option<OwnedSemaphorePermit>>);

impl StartPermit {
    /// Waits for a permit. The gate is never closed, so this only waits; were it closed, the
    /// child would start without one rather than never.
    pub async fn acquire() -> Self {
        Self(Mutex::new(gate().clone().acquire_owned().await.ok()))
    }

    /// Takes over `other`'s permit (the one taken before the child was built).
    pub fn hold(&self, other: Self) {
        let permit = other.0.into_inner().unwrap_or_else(PoisonError::into_inner);
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = permit;
    }

    /// Gives the permit back (once; later calls do nothing).
    pub fn release(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }

    /// Whether the permit is still held (for tests).
    #[cfg(test)]
    pub fn held(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// Permits free now (for tests: every one comes back).
#[cfg(test)]
pub(crate) fn available() -> usize {
    gate().available_permits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_permit_comes_back_once_released_or_dropped() {
        let before = available();
        let permit = StartPermit::acquire().await;
        assert!(permit.held());
        assert_eq!(available(), before - 1);
        permit.release();
        permit.release();
        assert!(!permit.held());
        assert_eq!(available(), before);
        let dropped = StartPermit::acquire().await;
        drop(dropped);
        assert_eq!(available(), before);
    }
}
