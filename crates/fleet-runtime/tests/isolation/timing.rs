//! Figures for the report, not assertions: run with
//! `cargo test --release -p fleet-runtime --test isolation timing -- --ignored --nocapture`.

use std::time::Instant;

use fleet_runtime::isolation::Outcome;

use crate::isolation::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "prints timings; run by hand"]
async fn timing_of_create_and_remove() {
    let fx = Fixture::new();
    // A repository of a realistic size: 2,000 small files in 40 folders.
    for d in 0..40 {
        for f in 0..50 {
            write(
                &fx.repo.join(format!("d{d}/f{f}.txt")),
                &format!("{d} {f}\n"),
            );
        }
    }
    git(&fx.repo, &["add", "-A"]);
    git(&fx.repo, &["commit", "-q", "-m", "files"]);

    let mut one = Vec::new();
    for n in 0..5 {
        let start = Instant::now();
        let wt = fx
            .manager
            .create_for_agent(&fx.repo, &format!("s{n:07}"))
            .await
            .unwrap();
        let created = start.elapsed();
        assert_eq!(fx.manager.finish(&wt).await.unwrap(), Outcome::Removed);
        one.push((created, start.elapsed()));
    }
    println!("one worktree (create, create+remove): {one:?}");

    let start = Instant::now();
    let snap = fx
        .manager
        .create_snapshot(&fx.repo, "timing")
        .await
        .unwrap();
    let snapped = start.elapsed();
    fx.manager.discard(&snap).await.unwrap();
    println!(
        "snapshot: create {snapped:?}, create+discard {:?}",
        start.elapsed()
    );

    for n in [10usize, 50] {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                let manager = fx.manager.clone();
                let repo = fx.repo.clone();
                tokio::spawn(
                    async move { manager.create_for_agent(&repo, &format!("p{i:07}")).await },
                )
            })
            .collect();
        let mut worktrees = Vec::new();
        for task in tasks {
            worktrees.push(task.await.unwrap().unwrap());
        }
        let created = start.elapsed();
        let tasks: Vec<_> = worktrees
            .into_iter()
            .map(|wt| {
                let manager = fx.manager.clone();
                tokio::spawn(async move { manager.finish(&wt).await })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap().unwrap(), Outcome::Removed);
        }
        println!(
            "{n} at once: create {created:?}, create+remove {:?}",
            start.elapsed()
        );
    }
}
