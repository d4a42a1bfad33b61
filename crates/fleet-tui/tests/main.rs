//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::unwrap_used)]

#[path = "input_support/mod.rs"]
mod input_support;
#[path = "panes_support/mod.rs"]
mod panes_support;
#[path = "transcript_fixtures/mod.rs"]
mod transcript_fixtures;

#[path = "app_approval.rs"]
mod app_approval;
#[path = "app_keys.rs"]
mod app_keys;
#[path = "app_screen.rs"]
mod app_screen;
#[path = "input_commands.rs"]
mod input_commands;
#[path = "input_complete.rs"]
mod input_complete;
#[path = "input_editing.rs"]
mod input_editing;
#[path = "input_history.rs"]
mod input_history;
#[path = "input_paste.rs"]
mod input_paste;
#[path = "input_render.rs"]
mod input_render;
#[path = "panes_forms.rs"]
mod panes_forms;
#[path = "panes_lines.rs"]
mod panes_lines;
#[path = "panes_permission.rs"]
mod panes_permission;
#[path = "panes_picker.rs"]
mod panes_picker;
#[path = "panes_status.rs"]
mod panes_status;
#[path = "panes_tasks.rs"]
mod panes_tasks;
#[path = "panes_ultraplan.rs"]
mod panes_ultraplan;
#[path = "render/main.rs"]
mod render;
#[path = "teammate_mode.rs"]
mod teammate_mode;
#[path = "transcript_agents.rs"]
mod transcript_agents;
#[path = "transcript_cells.rs"]
mod transcript_cells;
#[path = "transcript_mail.rs"]
mod transcript_mail;
#[path = "transcript_viewport.rs"]
mod transcript_viewport;
