//! The security suite: fleet tried the way an attacker would try it, through the real binary,
//! the fake model server and real processes under the real OS sandbox.
//!
//! - `corpus`: the Bash bypass corpus (`fleet-tools/tests/data/bash_bypass.txt`) run by
//!   read-only and verification children in every mode — with the sandbox alone, with the
//!   classifier alone, and by an ordinary agent that must ask.
//! - `sandbox`: settings and flags, the fallback without Landlock, secrets kept from Bash, no
//!   process left behind after `kill -9`.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod corpus;
mod sandbox;
