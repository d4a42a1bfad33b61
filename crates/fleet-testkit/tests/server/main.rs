//! The fake model server tested as clients see it: real HTTP on loopback, with reqwest.

mod anthropic;
mod cache;
mod chunking;
mod common;
mod faults;
mod liveness;
mod load;
mod openai;
mod record;
mod rules;
mod scenario_files;
mod window;
