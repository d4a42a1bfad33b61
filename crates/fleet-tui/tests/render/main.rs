//! The renderers, from the outside: what a person would read at 80 and 30 columns, with and
//! without colour.

mod support;

mod code;
mod diff;
mod markdown;
mod tool_label;
mod tool_result;
mod wrap;
