//! Ultraplan: remote planning that keeps the person's terminal free. A prompt with the word
//! `ultraplan` ([`keyword`]) launches a planning job ([`launch`]: plan mode, the strongest
//! model, free to use parallel Explore agents, told what to do by [`prompt`]) that ends by
//! submitting a plan; a detached poll ([`poll`]) maps the remote state to phases, and
//! [`state`] is the lifecycle the caller moves through. Every error path after the job exists
//! archives it, so no session is left running with nobody to answer it.

pub mod keyword;
pub mod launch;
pub mod poll;
pub mod prompt;
pub mod state;

pub use launch::{launch, LaunchRequest};
pub use poll::{poll, ArchiveError, PollConfig, PollOutcome, StateSource, Until};
pub use state::{Event, Phase, State};
