//! Teammates in an external `fleet-<team>` session.

use crate::backends::support::{received, reporter, Server};
use fleet_runtime::backends::tmux::TmuxBackend;
use fleet_runtime::backends::{sh_quote, PaneBackend};

#[test]
fn an_external_session_holds_the_teammates_and_ends_with_them() {
    let Some(server) = Server::start() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (out_a, out_b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&out_a).expect("mkdir");
    std::fs::create_dir(&out_b).expect("mkdir");
    let tmux = TmuxBackend::external_on("alpha", server.socket.clone());
    assert_eq!(
        tmux.where_to_look(),
        Some(format!(
            "tmux -S {} attach -t fleet-alpha",
            sh_quote(&server.socket.display().to_string())
        ))
    );
    assert!(!server.ok(&["has-session", "-t", "=fleet-alpha"]));

    let a = tmux
        .spawn(&reporter("a", "blue", dir.path(), &out_a, &["x;", "y z"]))
        .expect("first pane");
    assert!(server.ok(&["has-session", "-t", "=fleet-alpha"]));
    let b = tmux
        .spawn(&reporter("b", "red", dir.path(), &out_b, &["w"]))
        .expect("second pane");
    assert_eq!(received(&out_a), ["x;", "y z"]);
    assert_eq!(received(&out_b), ["w"]);

    let in_session = server.tmux(&["list-panes", "-t", "=fleet-alpha:", "-F", "#{pane_id}"]);
    assert_eq!(in_session, format!("{}\n{}", a.id, b.id));
    assert_eq!(
        server.show("=fleet-alpha:", "#{window_width}x#{window_height}"),
        "220x60"
    );
    assert_eq!(server.show(&b.id, "#{pane_title}"), "b");
    assert_eq!(tmux.list().expect("list"), [a.id.as_str(), b.id.as_str()]);

    tmux.kill(&a.id).expect("kill");
    assert!(server.ok(&["has-session", "-t", "=fleet-alpha"]));
    tmux.kill(&b.id).expect("kill");
    assert!(
        !server.ok(&["has-session", "-t", "=fleet-alpha"]),
        "the session ended"
    );
    assert!(tmux.list().expect("list").is_empty());
    assert_eq!(
        server.panes(),
        [server.lead.as_str()],
        "the lead's session is untouched"
    );
}
