//! A process-wide cap on file-tool work running at once (Read, Write, Edit, Glob, Grep).
//!
//! Each job takes a thread of the blocking pool, and a search adds walker threads of its own.
//! Without a cap, 200 subagents searching at once started about 600 threads, whose stacks and
//! allocator arenas weighed more than the agents themselves, and on a machine with a few cores
//! they finished no sooner than a few jobs at a time would. Waiting for a slot is cheap: the
//! agent's task sleeps until one frees.
//!
//! A job keeps its slot until its thread returns, even when the agent stopped waiting (a read
//! stuck on a hung network mount): the thread is still busy, so the slot is too.

use std::sync::OnceLock;
use tokio::sync::Semaphore;

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
pub fn limit() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    (cores * JOBS_PER_CORE).clamp(MIN_JOBS, MAX_JOBS)
}

/// Runs `work` on the blocking pool once a slot is free.
pub(crate) async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    // The semaphore is never closed, so acquiring only waits.
    let permit = slots().acquire().await.ok();
    tokio::task::spawn_blocking(move || {
        let _slot = permit;
        work()
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

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
