//! The terminal: a sandboxed command has no controlling terminal, cannot push keystrokes into
//! one (`TIOCSTI`, `TIOCLINUX`), and cannot open the terminals that exist when it starts.

use super::*;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// Runs `program args…` through the launcher under a read-only policy (writes only to
/// `/tmp`), with `stdin` as its standard input; returns what it printed, both streams.
fn launch(stdin: Stdio, program: &[&str]) -> String {
    let output = Command::new(launcher())
        .args(["__sandbox-exec", "--parent"])
        .arg(std::process::id().to_string())
        .args(["--write", "/tmp", "--"])
        .args(program)
        .stdin(stdin)
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A new pseudo-terminal: (master, slave).
fn pty() -> (OwnedFd, OwnedFd) {
    let pty = nix::pty::openpty(None, None).unwrap();
    (pty.master, pty.slave)
}

/// The `/dev/pts/N` name of a pty's slave side.
fn pts_name(slave: &OwnedFd) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).unwrap()
}

/// Python that makes its standard input (a pty nobody holds as a terminal) its controlling
/// terminal — as a command that found or made a terminal could — and then tries each
/// injection ioctl, printing `NAME ok` or `NAME errno N`. The second `TIOCSTI` sets the high
/// bits of the request, which the kernel ignores.
const INJECT: &str = r#"
import fcntl, os, termios
if os.getsid(0) != os.getpid():
    os.setsid()
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
for name, request, arg in [("TIOCSTI", termios.TIOCSTI, b"x"),
                           ("TIOCSTI-high", termios.TIOCSTI | (0xffff << 32), b"x"),
                           ("TIOCLINUX", 0x541C, b"\x06")]:
    try:
        fcntl.ioctl(0, request, arg)
        print(name, "ok")
    except OSError as e:
        print(name, "errno", e.errno)
"#;

#[test]
fn terminal_injection_ioctls_are_refused_in_the_sandbox() {
    let (_master, slave) = pty();
    let plain = Command::new("python3")
        .args(["-c", INJECT])
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .output()
        .unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout).to_string();
    // Outside the sandbox the ioctl reaches the kernel, which allows it on one's own terminal
    // (`ok`) or, where `dev.tty.legacy_tiocsti` is off, refuses with EIO: never EPERM.
    assert!(
        plain.contains("TIOCSTI ok") || plain.contains("TIOCSTI errno 5"),
        "{plain}"
    );

    let confined = launch(Stdio::from(slave), &["python3", "-c", INJECT]);
    for name in ["TIOCSTI", "TIOCSTI-high", "TIOCLINUX"] {
        assert!(
            confined.contains(&format!("{name} errno {}\n", nix::libc::EPERM)),
            "{name} must be refused by the seccomp filter: {confined}"
        );
    }
}

/// A shell with a controlling terminal (a pty made here) runs `program`, which reports
/// whether it could open `/dev/tty`.
fn with_terminal(program: &[&str]) -> String {
    let (_master, slave) = pty();
    let wrapper = r#"
import fcntl, os, subprocess, sys, termios
os.setsid()
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
args = [a.replace("PARENT", str(os.getpid())) for a in sys.argv[1:]]
out = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True)
print(out.stdout + out.stderr)
"#;
    let output = Command::new("python3")
        .args(["-c", wrapper])
        .args(program)
        .stdin(Stdio::from(slave))
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_sandboxed_command_has_no_controlling_terminal() {
    let probe = "(exec 3<>/dev/tty) && echo OPENED || echo REFUSED";
    let launcher = launcher();
    let plain = with_terminal(&["/bin/sh", "-c", probe]);
    assert!(
        plain.contains("OPENED"),
        "the test's terminal works: {plain}"
    );
    let confined = with_terminal(&[
        launcher.to_str().unwrap(),
        "__sandbox-exec",
        "--parent",
        "PARENT",
        "--write",
        "/tmp",
        "--",
        "/bin/sh",
        "-c",
        probe,
    ]);
    assert!(confined.contains("REFUSED"), "{confined}");
    assert!(!confined.contains("OPENED"), "{confined}");
}

#[tokio::test]
async fn sandboxed_bash_commands_run_in_a_session_of_their_own() {
    let p = Project::new();
    let sid = |text: &str| -> i32 {
        text.lines()
            .find_map(|l| l.strip_prefix("SID="))
            .unwrap_or_else(|| panic!("no SID in {text}"))
            .trim()
            .parse()
            .unwrap()
    };
    let ours = nix::unistd::getsid(None).unwrap().as_raw();
    let print = "python3 -c 'import os; print(\"SID=%d\" % os.getsid(0))'";
    for sandbox in [
        p.configured(&[]),
        p.sandbox(SandboxKind::ReadOnly, SandboxConfig::default(), &[]),
    ] {
        let out = bash(&p.context(&sandbox), print).await;
        assert!(!out.is_error, "{}", out.content);
        assert_ne!(sid(&out.content), ours, "{}", out.content);
        let tty = bash(&p.context(&sandbox), "exec 3<>/dev/tty && echo OPENED").await;
        assert!(
            tty.is_error && !tty.content.contains("OPENED"),
            "{}",
            tty.content
        );
    }
}

#[tokio::test]
async fn terminals_that_exist_cannot_be_opened_for_reading_or_writing() {
    let p = Project::new();
    let (_master, slave) = pty();
    let name = pts_name(&slave);
    let name = name.display();
    let command = format!(
        "(exec 3<{name} && echo READ-OPENED); (exec 4>{name} && echo WRITE-OPENED); \
         ls /dev/pts >/dev/null && echo LISTED"
    );
    for sandbox in [
        p.configured(&[]),
        p.sandbox(SandboxKind::ReadOnly, SandboxConfig::default(), &[]),
    ] {
        let out = bash(&p.context(&sandbox), &command).await;
        assert!(!out.content.contains("READ-OPENED"), "{}", out.content);
        assert!(!out.content.contains("WRITE-OPENED"), "{}", out.content);
        assert!(out.content.contains("LISTED"), "{}", out.content);
    }
    // The same command outside the sandbox opens it: the test is not vacuous.
    let out = bash(&p.context(&Arc::new(AgentSandbox::unconfined())), &command).await;
    assert!(out.content.contains("READ-OPENED"), "{}", out.content);
}

#[tokio::test]
async fn a_timeout_still_stops_every_process_of_a_sandboxed_command() {
    let p = Project::new();
    let sandbox = p.configured(&[]);
    let ctx = p.context(&sandbox);
    let out = BashTool::with_max_output(30_000)
        .call(
            json!({
                "command": "sleep 300 & echo $! > \"$TMPDIR/child\"; sleep 300",
                "timeout": 1000
            }),
            &ctx,
        )
        .await
        .unwrap();
    assert!(out.content.contains("timed out"), "{}", out.content);
    let child: i32 = std::fs::read_to_string(sandbox.temp_dir().unwrap().join("child"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Killed (SIGKILL was sent before the call returned); wait for init to reap it.
    let gone = (0..500).any(|_| {
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let dead = stat.is_empty() || stat.contains(") Z ");
        if !dead {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        dead
    });
    assert!(
        gone,
        "the background child {child} of a timed-out command survived"
    );
}

#[tokio::test]
async fn dropping_a_sandboxed_call_kills_its_whole_group() {
    let p = Project::new();
    let sandbox = p.configured(&[]);
    let ctx = p.context(&sandbox);
    let job = p.root.join("src/job.pid");
    let command = format!("sleep 100 & echo $! > {}; sleep 30", job.display());
    let tool = BashTool::with_max_output(30_000);
    let mut call = tool.call(json!({ "command": command }), &ctx);
    let pid: i32 = tokio::select! {
        result = &mut call => panic!("the call finished early: {result:?}"),
        pid = async {
            loop {
                if let Ok(text) = std::fs::read_to_string(&job) {
                    if let Ok(pid) = text.trim().parse() {
                        break pid;
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        } => pid,
    };
    drop(call);
    let gone = (0..500).any(|_| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let dead = stat.is_empty() || stat.contains(") Z ");
        if !dead {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        dead
    });
    assert!(
        gone,
        "the background job {pid} of a dropped sandboxed call survived"
    );
}

/// A command run by root owns the raw disks, where every file of the machine can be read past
/// any path rule: `/dev` is an allow-list, so only the usual sinks and sources open.
#[test]
fn raw_disks_and_other_devices_stay_shut_while_the_usual_ones_work() {
    let disk = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| PathBuf::from("/dev").join(e.file_name()))
        .find(|dev| std::fs::File::open(dev).is_ok());
    let Some(disk) = disk else {
        // Not root, or no disk to read: nothing to prove here.
        return;
    };
    let disk = disk.display().to_string();
    let script = format!(
        "head -c 16 {disk} >/dev/null && echo DISK-READ; \
         head -c 4 /dev/urandom >/dev/null && echo URANDOM-OK; \
         echo x > /dev/null && echo NULL-OK; ls /dev >/dev/null && echo LIST-OK"
    );
    let out = launch(Stdio::null(), &["/bin/sh", "-c", &script]);
    assert!(!out.contains("DISK-READ"), "{disk} was readable: {out}");
    for fine in ["URANDOM-OK", "NULL-OK", "LIST-OK"] {
        assert!(out.contains(fine), "{fine}: {out}");
    }
}
