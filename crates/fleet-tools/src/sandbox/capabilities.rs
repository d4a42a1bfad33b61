//! Dropping every Linux capability before the shell starts.
//!
//! Landlock confines paths and seccomp confines sockets, but neither stops what a capability
//! allows: fleet run as root (containers, CI) would hand a sandboxed command `CAP_SYS_TIME`
//! (`date -s` resets the machine's clock — seen in this project's own security suite),
//! `CAP_SYS_MODULE` (load a kernel module: out of every sandbox) or `CAP_SYS_BOOT`. So the
//! launcher empties the bounding set first (which needs `CAP_SETPCAP`, so it goes first),
//! then the ambient, inheritable, effective and permitted sets. With the bounding set empty
//! and `no_new_privs` set, no later `exec` — of a root-owned program, a setuid binary or one
//! with file capabilities — can give any back. An ordinary user has none to drop.

use caps::{CapSet, Capability};

/// Why the capabilities could not be dropped.
#[derive(Debug, thiserror::Error)]
#[error("cannot drop capabilities: {0}")]
pub struct CapsDropError(String);

/// Drops every capability of the calling (single-threaded) process for good.
pub fn drop_all() -> Result<(), CapsDropError> {
    let fail = |err: caps::errors::CapsError| CapsDropError(err.to_string());
    let effective = caps::read(None, CapSet::Effective).map_err(fail)?;
    let permitted = caps::read(None, CapSet::Permitted).map_err(fail)?;
    if effective.contains(&Capability::CAP_SETPCAP) {
        caps::clear(None, CapSet::Bounding).map_err(fail)?;
    }
    if effective.is_empty() && permitted.is_empty() {
        return Ok(());
    }
    for set in [
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        caps::clear(None, set).map_err(fail)?;
    }
    Ok(())
}
