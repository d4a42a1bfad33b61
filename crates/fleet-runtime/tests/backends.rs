//! Pane backends against the real programs: tmux (a server of its own per test, on its own
//! socket, so the person's tmux is never touched), a fake `it2` that records its calls, and
//! waiting for processes that are not our children.

#[path = "backends/iterm.rs"]
mod iterm;
#[path = "backends/pidwatch.rs"]
mod pidwatch;
#[path = "backends/support.rs"]
mod support;
#[path = "backends/tmux_external.rs"]
mod tmux_external;
#[path = "backends/tmux_inside.rs"]
mod tmux_inside;
