//! The security suite: fleet tried the way an attacker would try it, through the real binary,
//! the fake model server and real processes under the real OS sandbox.
//!
//! - `corpus`: the Bash bypass corpus (`fleet-tools/tests/data/bash_bypass.txt`) run by
//!   read-only and verification children in every mode — with the sandbox alone, with the
//!   classifier alone, and by an ordinary agent that must ask.
//! - `sandbox`: settings and flags, the fallback without Landlock, secrets kept from Bash, no
//!   process left behind after `kill -9`, read-only commands confined without a prompt.
//! - `approval`: the terminal prompt through a real pseudo-terminal — escape codes shown, not
//!   obeyed; long commands shown whole; "always allow" storing exact rules per command.
//! - `approval_diff`: a Write or Edit asked about with its diff; one that would fail never asked.
//! - `read_guard`: `Read(...)` deny rules and credential stores bind Grep and Glob.
//! - `blocking`: FIFOs and blocking files do not hang fleet; SIGTERM always ends it.
//! - `concurrent_resume`: two processes cannot resume one session.
//! - `env_vars`: every variable fleet reads is validated, with an error naming it.
//!
//! Elsewhere: the shell parser's corpus and rule tables (`fleet-tools/tests/bash_bypass.rs`,
//! `tests/permissions/`), Landlock rulesets (`fleet-tools/tests/sandbox/`), forged messages
//! between agents (`fleet-runtime/tests/subagents/messages.rs`).
#![allow(clippy::unwrap_used)]

mod approval;
mod approval_diff;
mod blocking;
mod concurrent_resume;
mod containment_rules;
mod containment_sandbox;
mod corpus;
mod env_vars;
mod read_guard;
mod sandbox;
mod trust;
