//! Waiting for processes that are not our children.

use fleet_runtime::backends::pidwatch;
use std::process::Command;

#[tokio::test]
async fn exited_resolves_for_a_killed_process_that_is_not_our_child() {
    // `sh` starts `sleep` and exits: the sleep is reparented, so waitpid cannot see it.
    let out = Command::new("sh")
        .args(["-c", "sleep 30 >/dev/null 2>&1 & echo $!"])
        .output()
        .expect("sh runs");
    let pid: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a pid");
    assert!(pidwatch::alive(pid));
    let watcher = tokio::spawn(pidwatch::exited(pid));
    tokio::task::yield_now().await;
    assert!(!watcher.is_finished(), "still running");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid fits")),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    tokio::time::timeout(std::time::Duration::from_secs(30), watcher)
        .await
        .expect("exited resolves once the process is killed")
        .expect("the watcher task ran");
}

#[tokio::test]
async fn exited_resolves_at_once_for_a_pid_that_does_not_exist() {
    let nobody = 0x7fff_fff0; // above any pid_max
    assert!(!pidwatch::alive(nobody));
    pidwatch::exited(nobody).await;
    pidwatch::exited(0).await;
}
