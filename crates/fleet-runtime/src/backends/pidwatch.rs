//! Waiting for a process that is not our child to end: a pane teammate's (the lead's view)
//! and the lead's (a pane teammate's view). Such a process was started by tmux or iTerm2, so
//! `waitpid` cannot be used on it (only a parent may wait for a child) and no `SIGCHLD`
//! arrives. On Linux a pidfd becomes readable when the process exits, so nothing polls; where
//! pidfds are missing (older kernels, other systems) or refused, a check of the pid every
//! 250 ms stands in.
//!
//! A pidfd is also right for a child of ours that has exited but not been reaped: it is
//! readable once the process has ended, while `kill(pid, 0)` still finds the zombie.

use std::time::Duration;

/// How often the fallback looks at the pid.
const POLL: Duration = Duration::from_millis(250);

/// Whether a process with this pid exists now (a zombie still does). A process we may not
/// signal (`EPERM`) exists. Pid 0 and pids beyond `i32::MAX` name no single process (to
/// `kill` they would mean process groups), so they are not alive.
pub fn alive(pid: u32) -> bool {
    let Some(pid) = to_pid(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(err) => err == rustix::io::Errno::PERM,
    }
}

/// Returns once the process `pid` has ended (at once when there is none).
pub async fn exited(pid: u32) {
    let Some(raw) = to_pid(pid) else {
        return;
    };
    #[cfg(target_os = "linux")]
    {
        match rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty()) {
            Ok(fd) => {
                if wait_readable(fd).await {
                    return;
                }
            }
            Err(rustix::io::Errno::SRCH) => return,
            Err(err) => {
                tracing::debug!(pid, %err, "no pidfd for this process; polling its pid instead");
            }
        }
    }
    let _ = raw;
    while alive(pid) {
        tokio::time::sleep(POLL).await;
    }
}

/// Waits for a pidfd to become readable (the process ended). `false` when tokio cannot
/// watch the descriptor, so the caller falls back to polling.
///
/// tokio deprecated its safe `AsyncFd` constructors for an `unsafe` one whose condition is
/// that the wrapped value keeps one open descriptor for as long as it is watched. An
/// `OwnedFd` does exactly that (it closes its descriptor only when dropped, and the
/// `AsyncFd` owns it), and this workspace forbids `unsafe`, so the deprecated safe entry is
/// used on purpose.
#[cfg(target_os = "linux")]
#[allow(deprecated)]
async fn wait_readable(fd: std::os::fd::OwnedFd) -> bool {
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;
    let Ok(watched) = AsyncFd::with_interest(fd, Interest::READABLE) else {
        return false;
    };
    watched.readable().await.is_ok()
}

fn to_pid(pid: u32) -> Option<rustix::process::Pid> {
    rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive() {
        assert!(alive(std::process::id()));
    }

    #[test]
    fn pids_that_name_groups_are_not_alive() {
        assert!(!alive(0));
        assert!(!alive(u32::MAX));
    }

    #[tokio::test]
    async fn a_reaped_child_has_exited_and_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        exited(pid).await;
        assert!(!alive(pid));
    }

    #[tokio::test]
    async fn an_unreaped_child_counts_as_exited_though_kill_still_finds_it() {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        exited(pid).await;
        assert!(alive(pid), "a zombie still exists for kill 0");
        child.wait().expect("wait");
        assert!(!alive(pid));
    }
}
