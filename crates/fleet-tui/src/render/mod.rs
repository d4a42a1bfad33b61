//! Pure renderers: data in, styled lines out, one small module per kind of item. Nothing
//! here keeps state or knows about the screen; the transcript caches what they return per
//! width, so they run again only when an item or the width changes.
//!
//! - `markdown`: the assistant's text (with `table` for its tables);
//! - `highlight`: code blocks, syntect loaded once on first use;
//! - `diff`: Edit and Write changes with line numbers;
//! - `tool_label` / `tool_result`: a tool call's one line and its folded result;
//! - `wrap`: word wrap of styled lines, which all of the above use.

mod containers;
mod diff;
mod highlight;
mod markdown;
mod table;
mod toml_syntax;
mod tool_label;
mod tool_result;
mod wrap;

pub use diff::{diff, structured_patch};
pub use highlight::{code, knows_language};
pub use markdown::markdown;
pub use tool_label::tool_label;
pub use tool_result::{tool_result, ToolResultView};
pub use wrap::{spans_width, truncate, truncate_left, wrap, wrap_prefixed};
