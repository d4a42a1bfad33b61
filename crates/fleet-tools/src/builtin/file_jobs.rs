//! A process-wide cap on file-tool work running at once (Read, Write, Edit, Glob, Grep).
//!
//! Each job takes a thread of the blocking pool, and a search adds walker threads of its own.
//! Without a cap, 200 subagents searching at once started about 600 threads, whose stacks and
//! allocator arenas weighed more than the agents themselves, and on a machine with a few cores
//! they finished no sooner than a few jobs at a time would. Waiting for a slot is cheap: the
//! agent's task sleeps until one frees.
//!
//! A job keeps its slot until its thread returns or its lease runs out. The lease is what
//! keeps a few stuck jobs (reads on a hung network mount, which no one can interrupt) from
//! stopping every agent's file tools: after [`LEASE`] the slot goes to the next job while the
//! stuck thread finishes on its own.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit};

/// How long one job may hold its slot. Ordinary file work takes milliseconds.
pub const LEASE: Duration = Duration::from_secs(10);

/// Jobs per core. File work is part CPU (matching, formatting) and part waiting on the disk,
/// so two jobs per core keep both busy; more only added threads (each with its allocator
/// arena) and peak memory in `fleet dev bench fanout --work`, and no speed.
const JOBS_PER_CORE: usize = 2;
const MIN_JOBS: usize = 4;
const MAX_JOBS: usize = 64;

fn slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(limit()))
}

/// How many file jobs may run at once on this machine.
fn limit() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    (cores * JOBS_PER_CORE).clamp(MIN_JOBS, MAX_JOBS)
}

/// Runs `work` on the blocking pool once a slot is free.
pub(crate) async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    run_leased(slots(), LEASE, work).await
}

async fn run_leased<T: Send + 'static>(
    slots: &'static Semaphore,
    lease: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    // The semaphore is never closed, so acquiring only waits.
    let slot: Arc<Mutex<Option<SemaphorePermit<'static>>>> =
        Arc::new(Mutex::new(slots.acquire().await.ok()));
    let free = |slot: &Mutex<Option<SemaphorePermit<'static>>>| {
        slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    };
    let expiry = {
        let slot = slot.clone();
        tokio::spawn(async move {
            tokio::time::sleep(lease).await;
            free(&slot);
        })
    };
    let done = tokio::task::spawn_blocking(move || {
        let out = work();
        free(&slot);
        out
    })
    .await;
    expiry.abort();
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stuck_job_gives_its_slot_up_when_its_lease_ends() {
        static TWO: Semaphore = Semaphore::const_new(2);
        let lease = Duration::from_millis(50);
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let stuck = Arc::new(Mutex::new(stuck));
        // Both slots taken by jobs that wait until the test lets them go.
        let blocked: Vec<_> = (0..2)
            .map(|_| {
                let stuck = stuck.clone();
                tokio::spawn(run_leased(&TWO, lease, move || {
                    let _ = stuck.lock().map(|rx| rx.recv());
                }))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(10)).await;
        let next =
            tokio::time::timeout(Duration::from_secs(20), run_leased(&TWO, lease, || "ran")).await;
        assert!(
            matches!(next, Ok(Ok("ran"))),
            "a new job waited on the stuck ones"
        );
        for _ in 0..2 {
            let _ = release.send(());
        }
        for job in blocked {
            assert!(matches!(job.await, Ok(Ok(()))));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_than_the_limit_run_at_once() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let jobs: Vec<_> = (0..limit() * 3)
            .map(|_| {
                let (running, most) = (running.clone(), most.clone());
                tokio::spawn(run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                }))
            })
            .collect();
        for job in jobs {
            assert!(matches!(job.await, Ok(Ok(()))));
        }
        let most = most.load(Ordering::SeqCst);
        assert!(
            most <= limit(),
            "{most} jobs ran at once, limit {}",
            limit()
        );
        assert!(most > 1, "jobs should still run side by side");
    }
}
