//! Waiting for a process that is not our child to end: a pane teammate's (the lead's view)
//! and the lead's (a pane teammate's view). On Linux a pidfd becomes readable when the
//! process exits, so nothing polls; elsewhere (or where pidfds are refused) a slow check of
//! the pid stands in. PLACEHOLDER (helper A fills this in).

/// Whether a process with this pid exists now.
pub fn alive(pid: u32) -> bool {
    let _ = pid;
    false
}

/// Returns once the process `pid` has ended (at once when there is none).
pub async fn exited(pid: u32) {
    let _ = pid;
}
