//! The permission modes. [`PermissionMode`] lives in `fleet-protocol` (the mode crosses every
//! crate: settings, the `init` line, hooks, team frames, remote jobs); it is re-exported here
//! so `fleet_tools::permissions::PermissionMode` keeps working.

pub use fleet_protocol::PermissionMode;
