//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "remote/cluster.rs"]
mod cluster;
#[path = "common/mod.rs"]
mod common;
#[path = "dashboard_common/mod.rs"]
mod dashboard_common;
#[allow(dead_code)]
#[path = "tui/tmux.rs"]
mod tmux;

#[path = "agents_cmd.rs"]
mod agents_cmd;
#[path = "api_faults.rs"]
mod api_faults;
#[path = "ask.rs"]
mod ask;
#[path = "bench_fanout.rs"]
mod bench_fanout;
#[path = "bench_fork.rs"]
mod bench_fork;
#[path = "bench_long.rs"]
mod bench_long;
#[path = "bench_mcp.rs"]
mod bench_mcp;
#[path = "bench_remote.rs"]
mod bench_remote;
#[path = "bench_team.rs"]
mod bench_team;
#[path = "bench_worktrees.rs"]
mod bench_worktrees;
#[path = "compaction.rs"]
mod compaction;
#[path = "coordinator.rs"]
mod coordinator;
#[path = "crash.rs"]
mod crash;
#[path = "dashboard.rs"]
mod dashboard;
#[path = "dashboard_remote.rs"]
mod dashboard_remote;
#[path = "dashboard_session.rs"]
mod dashboard_session;
#[path = "dashboard_tui.rs"]
mod dashboard_tui;
#[path = "demo.rs"]
mod demo;
#[path = "disk_full.rs"]
mod disk_full;
#[path = "fork.rs"]
mod fork;
#[path = "golden_headless.rs"]
mod golden_headless;
#[path = "headless.rs"]
mod headless;
#[path = "hook_control.rs"]
mod hook_control;
#[path = "hooks.rs"]
mod hooks;
#[path = "interrupt.rs"]
mod interrupt;
#[path = "local_limits.rs"]
mod local_limits;
#[path = "local_models_report.rs"]
mod local_models_report;
#[path = "local_server_facts.rs"]
mod local_server_facts;
#[path = "mcp_cmd.rs"]
mod mcp_cmd;
#[path = "mcp_config_warning.rs"]
mod mcp_config_warning;
#[path = "mcp_exit.rs"]
mod mcp_exit;
#[path = "mcp_failures.rs"]
mod mcp_failures;
#[path = "mcp_remote.rs"]
mod mcp_remote;
#[path = "mcp_serve.rs"]
mod mcp_serve;
#[path = "mcp_session.rs"]
mod mcp_session;
#[path = "mcp_teammates.rs"]
mod mcp_teammates;
#[path = "mcp_trust.rs"]
mod mcp_trust;
#[path = "openai_settings.rs"]
mod openai_settings;
#[path = "output_limits.rs"]
mod output_limits;
#[path = "panes.rs"]
mod panes;
#[path = "plan_exit.rs"]
mod plan_exit;
#[path = "prompt_tool.rs"]
mod prompt_tool;
#[path = "remote.rs"]
mod remote;
#[path = "remote_attacks.rs"]
mod remote_attacks;
#[path = "remote_cmd.rs"]
mod remote_cmd;
#[path = "resume_tasks.rs"]
mod resume_tasks;
#[path = "sdk_control.rs"]
mod sdk_control;
#[path = "sdk_flags.rs"]
mod sdk_flags;
#[path = "sdk_lines.rs"]
mod sdk_lines;
#[path = "security/main.rs"]
mod security;
#[path = "setup_errors.rs"]
mod setup_errors;
#[path = "skill_grants.rs"]
mod skill_grants;
#[path = "skills_memory.rs"]
mod skills_memory;
#[path = "soak.rs"]
mod soak;
#[path = "subagents.rs"]
mod subagents;
#[path = "team_cmd.rs"]
mod team_cmd;
#[path = "team_output.rs"]
mod team_output;
#[path = "team_send.rs"]
mod team_send;
#[path = "teams.rs"]
mod teams;
#[path = "tui.rs"]
mod tui;
#[path = "tui_approval_diff.rs"]
mod tui_approval_diff;
#[path = "tui_exit.rs"]
mod tui_exit;
#[path = "ultraplan.rs"]
mod ultraplan;
#[path = "verify.rs"]
mod verify;
#[path = "watchdog.rs"]
mod watchdog;
#[path = "worker.rs"]
mod worker;
#[path = "worktree_hooks.rs"]
mod worktree_hooks;
#[path = "worktrees.rs"]
mod worktrees;
#[path = "worktrees_cmd.rs"]
mod worktrees_cmd;
