//! What feeds the hub: the store under `$FLEET_HOME` (read at start, then watched with
//! inotify) and the live events of a session started with `--dashboard`.

mod entries;
pub(crate) mod frames;
pub(crate) mod links;
pub(crate) mod live;
pub(crate) mod store;
pub(crate) mod teams;
pub(crate) mod watch;
pub(crate) mod worktrees;
