//! Every integration test of this crate, in one binary: one link instead of one per file,
//! which keeps a clean build's disk and time within CI's. Each module is what was its own
//! test target; nextest still runs every test in a process of its own. The `#[path]`s keep
//! each file's own `mod` lines resolving as when it was a crate root; modules that several
//! files share are declared once here and `use`d there.

#[path = "common/mod.rs"]
mod common;

#[path = "anthropic.rs"]
mod anthropic;
#[path = "failures.rs"]
mod failures;
#[path = "in_flight.rs"]
mod in_flight;
#[path = "openai.rs"]
mod openai;
#[path = "openai_local.rs"]
mod openai_local;
