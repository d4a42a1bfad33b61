//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#![allow(clippy::unwrap_used)]

#[path = "bash.rs"]
mod bash;
#[path = "bash_bypass.rs"]
mod bash_bypass;
#[path = "bash_policy.rs"]
mod bash_policy;
#[path = "bash_unsandboxed.rs"]
mod bash_unsandboxed;
#[path = "files/main.rs"]
mod files;
#[path = "git_config_programs.rs"]
mod git_config_programs;
#[path = "permissions/main.rs"]
mod permissions;
#[path = "sandbox/main.rs"]
mod sandbox;
#[path = "sandbox_env.rs"]
mod sandbox_env;
#[path = "sandbox_unavailable.rs"]
mod sandbox_unavailable;
#[path = "search.rs"]
mod search;
