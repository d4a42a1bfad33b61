//! The guardian kills what it was told about, and what carries the mark, when its input closes.

use super::*;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

#[test]
fn closing_the_pipe_kills_registered_groups_and_marked_processes() {
    let token = format!("test-{}", std::process::id());
    let mut registered = Command::new("sleep")
        .arg("300")
        .process_group(0)
        .spawn()
        .unwrap();
    let mut marked = Command::new("sleep")
        .arg("301")
        .env("FLEET_GUARD", &token)
        .process_group(0)
        .spawn()
        .unwrap();
    let mut bystander = Command::new("sleep")
        .arg("302")
        .env("FLEET_GUARD", "someone-else")
        .process_group(0)
        .spawn()
        .unwrap();
    let mut guardian = Command::new(launcher())
        .args(["__sandbox-guard", &token])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = guardian.stdin.take().unwrap();
    writeln!(pipe, "+{}", registered.id()).unwrap();
    drop(pipe);
    let wait = |child: &mut std::process::Child, what: &str| {
        fleet_testkit::wait_child(child, fleet_testkit::WAIT, what)
    };
    assert!(wait(&mut guardian, "the guardian to exit").success());
    assert_eq!(
        wait(&mut registered, "the registered process to be killed").signal(),
        Some(9)
    );
    assert_eq!(
        wait(&mut marked, "the marked process to be killed").signal(),
        Some(9)
    );
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "another fleet's process is left alone"
    );
    bystander.kill().unwrap();
    let _ = bystander.wait();
}
