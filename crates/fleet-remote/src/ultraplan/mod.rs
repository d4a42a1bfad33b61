//! Ultraplan: remote planning that keeps the person's terminal free. A prompt with the word
//! `ultraplan` ([`keyword`]) launches a planning job (plan mode, the strongest model, free to
//! use parallel Explore agents) that ends by submitting a plan; a detached poll ([`poll`])
//! maps the remote state to phases, and [`state`] is the lifecycle the caller moves through.
//! PLACEHOLDER: written in the Ultraplan helper's branch.

pub mod keyword;
pub mod poll;
pub mod state;
