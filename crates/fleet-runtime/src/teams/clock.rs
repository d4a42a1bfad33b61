//! Time as team files write it.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// ISO-8601 with milliseconds, UTC (`2026-12-01T17:00:00.000Z`).
pub fn now_iso() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// A fresh message id.
pub fn new_msg_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
