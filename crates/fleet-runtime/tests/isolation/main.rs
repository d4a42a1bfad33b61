//! Worktree isolation against real git in temporary repositories: where worktrees start, when
//! they are kept, snapshots that leave the user's checkout alone, many at once, list and clean.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod concurrency;
mod listing;
mod snapshots;
mod support;
mod timing;
