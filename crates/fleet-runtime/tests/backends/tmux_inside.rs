//! Teammates split into the lead's own tmux window.

use crate::backends::support::{
    assert_not_pwned, cmdline, eventually, read, received, reporter, Server, HOSTILE,
};
use fleet_runtime::backends::pidwatch;
use fleet_runtime::backends::tmux::TmuxBackend;
use fleet_runtime::backends::{PaneBackend, PaneSpec};
use std::path::PathBuf;

fn backend(server: &Server) -> TmuxBackend {
    TmuxBackend::inside(server.socket.clone(), server.lead.clone())
}

/// `left,width` of a pane.
fn columns(server: &Server, pane: &str) -> String {
    server.show(pane, "#{pane_left},#{pane_width}")
}

#[tokio::test]
async fn two_teammates_run_directly_beside_the_lead_and_leave_no_trace_when_killed() {
    let Some(server) = Server::start() else {
        return;
    };
    // A window of the person's own, with a layout they made.
    server.tmux(&["new-window", "-d", "-t", "lead:", "sleep 1000"]);
    let other = server.tmux(&["list-windows", "-t", "lead:", "-F", "#{window_id}"]);
    let other = other.lines().last().expect("second window").to_string();
    server.tmux(&[
        "split-window",
        "-d",
        "-h",
        "-l",
        "20",
        "-t",
        &other,
        "sleep 1000",
    ]);
    server.tmux(&["split-window", "-d", "-v", "-t", &other, "sleep 1000"]);
    let other_layout = server.show(&other, "#{window_layout}");

    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work #{pane_id} it's");
    let (out_a, out_b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&work, &out_a, &out_b] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let tmux = backend(&server);
    let alice = reporter("alice", "blue", &work, &out_a, HOSTILE);
    let bob = reporter("bob #1", "green", &work, &out_b, &["plain"]);
    let a = tmux.spawn(&alice).expect("alice's pane");
    let b = tmux.spawn(&bob).expect("bob's pane");

    // The words arrive exactly, nothing ran as a command, and the folder is the one asked.
    assert_eq!(received(&out_a), HOSTILE);
    assert_eq!(received(&out_b), ["plain"]);
    assert_not_pwned(&[
        &work,
        &out_a,
        &out_b,
        dir.path(),
        &std::env::current_dir().expect("cwd"),
    ]);
    assert_eq!(PathBuf::from(read(&out_a.join("cwd"))), work);

    // The pane's pid is the program itself, with exactly the argv asked for.
    for (pane, spec, out) in [(&a, &alice, &out_a), (&b, &bob, &out_b)] {
        let pid = pane.pid.expect("tmux reports a pid");
        assert_eq!(read(&out.join("pid")), pid.to_string());
        assert_eq!(cmdline(pid), spec.argv);
        assert!(pidwatch::alive(pid));
    }

    // Titles, colors on the border title, crashed panes kept.
    assert_eq!(server.show(&a.id, "#{pane_title}"), "alice");
    assert_eq!(server.show(&b.id, "#{pane_title}"), "bob #1");
    let format = server.tmux(&[
        "show-options",
        "-p",
        "-v",
        "-t",
        &a.id,
        "pane-border-format",
    ]);
    assert_eq!(format, "#[fg=blue,bold] #{pane_title} #[default]");
    let kept = server.tmux(&["show-options", "-p", "-v", "-t", &b.id, "remain-on-exit"]);
    assert_eq!(kept, "failed");
    assert_eq!(server.show(&a.id, "#{pane-border-status}"), "top");
    // Border line colors are window-wide in tmux: fleet leaves them alone.
    let window_style = server.tmux(&[
        "show-options",
        "-w",
        "-t",
        &server.lead,
        "pane-border-style",
    ]);
    assert_eq!(window_style, "", "the person's border style is untouched");

    // Laid out: the lead on the left with half the 200-column window, the teammates stacked
    // on the right.
    assert_eq!(columns(&server, &server.lead), "0,100");
    assert_eq!(columns(&server, &a.id), columns(&server, &b.id));
    assert!(server.show(&a.id, "#{pane_top}") < server.show(&b.id, "#{pane_top}"));
    assert_eq!(
        server.show(&server.lead, "#{pane_active}"),
        "1",
        "focus stays on the lead"
    );
    assert_eq!(server.show(&other, "#{window_layout}"), other_layout);
    assert_eq!(tmux.list().expect("list"), [a.id.as_str(), b.id.as_str()]);
    assert!(tmux.is_alive(&a.id).expect("is_alive"));

    // Killing a pane ends its program and its pane.
    let pid_a = a.pid.expect("pid");
    tmux.kill(&a.id).expect("kill");
    pidwatch::exited(pid_a).await;
    eventually("tmux to reap the killed teammate", || {
        !pidwatch::alive(pid_a)
    });
    assert!(!server.panes().contains(&a.id));
    assert_eq!(tmux.list().expect("list"), [b.id.as_str()]);
    assert!(!tmux.is_alive(&a.id).expect("is_alive"));
    tmux.kill(&a.id).expect("a pane already gone is fine");

    let pid_b = b.pid.expect("pid");
    tmux.kill(&b.id).expect("kill");
    pidwatch::exited(pid_b).await;
    eventually("tmux to reap the killed teammate", || {
        !pidwatch::alive(pid_b)
    });
    assert!(tmux.list().expect("list").is_empty());
    assert_eq!(
        server.panes().len(),
        4,
        "the lead and the person's three panes remain"
    );
    assert_eq!(server.show(&other, "#{window_layout}"), other_layout);
}

#[test]
fn a_window_holding_a_pane_of_the_persons_own_is_not_relaid_out() {
    let Some(server) = Server::start() else {
        return;
    };
    let own = server.tmux(&[
        "split-window",
        "-d",
        "-v",
        "-t",
        &server.lead,
        "-P",
        "-F",
        "#{pane_id}",
        "sleep 1000",
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    let tmux = backend(&server);
    let first = tmux
        .spawn(&reporter("a", "red", dir.path(), dir.path(), &[]))
        .expect("pane");
    let after_first = server.show(&server.lead, "#{window_layout}");
    let second = tmux
        .spawn(&reporter("b", "red", dir.path(), dir.path(), &[]))
        .expect("pane");

    // The person's pane still spans the window's whole width under the lead; main-vertical
    // would have moved it into the right-hand column.
    assert_eq!(columns(&server, &own), "0,200");
    // The second teammate split the first one; nothing else moved.
    assert_eq!(columns(&server, &first.id), columns(&server, &second.id));
    assert_ne!(server.show(&server.lead, "#{window_layout}"), after_first);
    assert_eq!(server.show(&own, "#{pane_left},#{pane_width}"), "0,200");
    assert!(server.panes().contains(&own));
    tmux.kill(&first.id).expect("kill");
    tmux.kill(&second.id).expect("kill");
    assert_eq!(server.panes().len(), 2);
}

#[test]
fn a_teammate_that_crashes_leaves_its_last_words_and_one_that_finishes_leaves_nothing() {
    let Some(server) = Server::start() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let tmux = backend(&server);
    let spec = |name: &str, script: &str| PaneSpec {
        name: name.into(),
        color: "yellow".into(),
        cwd: dir.path().to_path_buf(),
        argv: vec!["sh".into(), "-c".into(), script.into()],
        env: Vec::new(),
    };
    let crashed = tmux
        // A moment between the words and the exit: tmux may mark a pane dead before it has
        // read what a program wrote just as it ended.
        .spawn(&spec("crash", "echo boom; sleep 0.3; exit 3"))
        .expect("pane");
    eventually("the crashed teammate's pane to show it is dead", || {
        !tmux.is_alive(&crashed.id).expect("is_alive")
    });
    assert_eq!(
        tmux.list().expect("list"),
        [crashed.id.as_str()],
        "kept on screen"
    );
    // tmux may mark the pane dead a moment before it has drawn the last output (and its
    // own "Pane is dead (status 3)" line, which it does not always write).
    eventually("the crashed teammate's last words", || {
        tmux.last_words(&crashed.id, 20)
            .is_some_and(|w| w.lines().any(|l| l == "boom"))
    });
    tmux.kill(&crashed.id).expect("kill");
    assert!(tmux.list().expect("list").is_empty());
    assert_eq!(tmux.last_words(&crashed.id, 20), None);

    let finished = tmux.spawn(&spec("done", "exit 0")).expect("pane");
    // tmux closes such a pane itself once it has reaped the program, which under load can
    // take longer than any sane limit (CI once waited 30 s). The lead does not rely on it:
    // when the pid ends it closes the pane, so the test does the same once tmux sees the end.
    eventually("a teammate that finished to end", || {
        !tmux.is_alive(&finished.id).expect("is_alive")
    });
    if server.panes().contains(&finished.id) {
        assert_eq!(
            tmux.last_words(&finished.id, 20),
            None,
            "a clean exit leaves no words"
        );
        tmux.kill(&finished.id).expect("kill");
    }
    assert!(!server.panes().contains(&finished.id));
    assert!(tmux.list().expect("list").is_empty());
    assert!(!tmux.is_alive(&finished.id).expect("is_alive"));
}

#[test]
fn a_one_word_program_runs_directly_even_from_a_hostile_folder_name() {
    let Some(server) = Server::start() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = dir.path().join("bin $(touch pwned) it's");
    std::fs::create_dir(&bin).expect("mkdir");
    let program = bin.join("teammate.sh");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(
        &program,
        format!("#!/bin/sh\necho $$ > '{}/pid'\nread x\n", out.display()),
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let tmux = backend(&server);
    let pane = tmux
        .spawn(&PaneSpec {
            name: "solo".into(),
            color: "cyan".into(),
            cwd: dir.path().to_path_buf(),
            argv: vec![program.display().to_string()],
            env: Vec::new(),
        })
        .expect("pane");
    let pid_file = out.join("pid");
    eventually("the program to report its pid", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let pid = pane.pid.expect("pid");
    assert_eq!(read(&pid_file), pid.to_string());
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).expect("comm");
    assert_eq!(comm.trim(), "teammate.sh");
    assert_not_pwned(&[dir.path(), &bin]);
    tmux.kill(&pane.id).expect("kill");
}

#[test]
fn a_spec_that_cannot_be_passed_safely_is_refused_before_tmux_runs() {
    let Some(server) = Server::start() else {
        return;
    };
    let tmux = backend(&server);
    let mut spec = reporter(
        "x",
        "blue",
        std::path::Path::new("/"),
        std::path::Path::new("/"),
        &[],
    );
    spec.env.push(("A=B".into(), "c".into()));
    let err = tmux.spawn(&spec).expect_err("refused");
    assert!(
        err.to_string().contains("\"A=B\" is not a variable name"),
        "{err}"
    );
    spec.env.clear();
    spec.argv.clear();
    assert!(tmux.spawn(&spec).is_err());
    assert_eq!(server.panes(), [server.lead.as_str()]);
}
