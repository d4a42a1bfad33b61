//! Everything on screen besides the transcript and the composer. Each pane renders itself
//! into the area the app gives it and turns the keys it is given into a result; the app
//! decides which pane has the keys. Panes own no session state: the task board is fed the
//! same events as the transcript, and everything else comes in as arguments.
//!
//! - `permission`: the inline approval prompt; `confirm`: a lettered question box;
//!   `escape`: outside text's hidden characters shown as escapes.
//! - `tasks`: the board of tasks built from events; `pills`: its footer row;
//!   `task_panel`: the Ctrl+T list.
//! - `status`: the status line; `picker`: choose-one lists; `agent_form`: `/agents new`.
//! - `help`, `cost`: lines for `/help` and `/cost`.
//! - `teammate`: the header row of a pane teammate (who it is, in which team).
//! - `ultraplan`: the Ultraplan pill at the left of the footer row.
//! - `welcome`: the header a session opens with (folder, model, mode, help).

pub mod agent_form;
pub mod confirm;
pub mod cost;
mod escape;
mod field;
pub mod help;
pub mod permission;
pub mod picker;
pub mod pills;
pub mod status;
pub mod task_panel;
pub mod tasks;
pub mod teammate;
mod text;
pub mod ultraplan;
pub mod welcome;
