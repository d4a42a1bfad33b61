//! Messages between fleet sessions on one machine: every session with teams listens on a Unix
//! socket, `$FLEET_HOME/sockets/<session id>.sock`, named in its team file. `SendMessage` to
//! `uds:<path>` connects (5 s timeout), writes one JSON line and waits for the receiver's
//! answer, which comes only once the message is durably in the receiving lead's inbox.
//!
//! Wire: request `{"from": "…", "text": "…", "summary": "…"?, "reply_to": "…"?}`, answer
//! `{"ok": true, "msg_id": "…"}` or `{"ok": false, "error": "…"}`, one line each.
//!
//! Tried as an attacker would:
//! - A model cannot point SendMessage at any socket on the machine (a Docker or database
//!   socket): only sockets in `$FLEET_HOME/sockets/` are reachable, and the folder is private
//!   to the user (0700).
//! - What arrives is another agent's words: it is delivered as teammate mail to the lead, its
//!   sender marked `uds:…` so it cannot pass for a member or the lead, and a text shaped like a
//!   protocol frame is refused, so no other session can approve a plan or a shutdown.
//! - A connection can send at most [`MAX_CONNECTION_BYTES`]; a line longer than [`MAX_LINE`] is
//!   refused, so a local process cannot make the session hold unbounded input.
//! - Running out of file descriptors (a flood of connections) does not make the accept loop
//!   spin: it backs off, and ends when the session does ([`super::accept`]).

use super::{clock, LEAD_NAME};
use crate::subagent::Spawner;
use fleet_protocol::MailEntry;
use fleet_tools::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A line longer than this is refused: a message is prose, not a file transfer.
const MAX_LINE: usize = 1 << 20;
/// What one connection may send in all.
const MAX_CONNECTION_BYTES: u64 = 16 << 20;

#[derive(Debug, Serialize, Deserialize)]
struct Request {
    from: String,
    text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    /// The sender's own socket, so the reader can answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply_to: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    msg_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Where a session listens.
pub fn socket_path(home: &fleet_store::FleetHome, session_id: &str) -> PathBuf {
    sockets_dir(home).join(format!("{session_id}.sock"))
}

fn sockets_dir(home: &fleet_store::FleetHome) -> PathBuf {
    home.root().join("sockets")
}

/// The socket `target` names: a path inside `$FLEET_HOME/sockets/`, or a bare session id.
/// Anything else is refused.
pub(crate) fn resolve_target(
    home: &fleet_store::FleetHome,
    target: &str,
) -> Result<PathBuf, String> {
    let target = target.trim();
    if target.is_empty() {
        return Err("`uds:` needs a socket path or a session id after it.".into());
    }
    let dir = sockets_dir(home);
    let path = if target.contains('/') {
        PathBuf::from(target)
    } else {
        fleet_store::validate_session_id(target).map_err(|err| err.to_string())?;
        dir.join(format!("{target}.sock"))
    };
    // Compared by folder, resolved, so `..` and links cannot lead elsewhere.
    let inside = match (path.parent().map(Path::canonicalize), dir.canonicalize()) {
        (Some(Ok(parent)), Ok(dir)) => parent == dir,
        _ => path.parent() == Some(dir.as_path()),
    };
    if !inside || path.extension().is_none_or(|e| e != "sock") {
        return Err(format!(
            "`uds:` reaches other fleet sessions only: a socket in {} (give its path or the \
             session id), not {target}.",
            dir.display()
        ));
    }
    Ok(path)
}

impl Spawner {
    /// Starts listening for other sessions' messages; they land in the lead's inbox. Returns
    /// the socket's path.
    pub fn listen_uds(self: &Arc<Self>) -> Result<PathBuf, String> {
        let teams = self.teams().ok_or("teams are off")?;
        let path = socket_path(&teams.settings.home, &teams.settings.session_id);
        if let Some(dir) = path.parent() {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .and_then(|()| {
                    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                })
                .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        }
        // A socket file left by a session that died is in the way; one that answers is not ours.
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(&path).is_ok() {
                return Err(format!("{} is in use by another session", path.display()));
            }
            let _ = std::fs::remove_file(&path);
        }
        let listener = UnixListener::bind(&path)
            .map_err(|err| format!("cannot listen on {}: {err}", path.display()))?;
        teams.set_socket(&path);
        let spawner = Arc::downgrade(self);
        let (stop, what) = (teams.listening.clone(), path.display().to_string());
        tokio::spawn(async move {
            let stats = super::accept::AcceptStats::default();
            super::accept::accept_loop(listener, &what, stop, &stats, |stream| {
                let Some(spawner) = spawner.upgrade() else {
                    return super::accept::Next::Stop;
                };
                tokio::spawn(async move { spawner.serve(stream).await });
                super::accept::Next::Continue
            })
            .await;
        });
        Ok(path)
    }

    async fn serve(self: Arc<Self>, stream: UnixStream) {
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read.take(MAX_CONNECTION_BYTES)).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let answer = match self.accept_line(&line).await {
                Ok(msg_id) => Answer {
                    ok: true,
                    msg_id: Some(msg_id),
                    error: None,
                },
                Err(error) => Answer {
                    ok: false,
                    msg_id: None,
                    error: Some(error),
                },
            };
            let mut text = serde_json::to_string(&answer).unwrap_or_default();
            text.push('\n');
            if write.write_all(text.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    async fn accept_line(self: &Arc<Self>, line: &str) -> Result<String, String> {
        if line.len() > MAX_LINE {
            return Err(format!("message over {MAX_LINE} bytes"));
        }
        let request: Request =
            serde_json::from_str(line).map_err(|err| format!("not a message line: {err}"))?;
        if request.text.trim().is_empty() {
            return Err("empty text".into());
        }
        if let Some(kind) = fleet_protocol::team::frames::frame_type(&request.text) {
            return Err(format!("a {kind} frame cannot come from another session"));
        }
        let mut text = request.text;
        if let Some(reply_to) = request.reply_to.filter(|r| !r.trim().is_empty()) {
            text.push_str(&format!(
                "\n\n(Sent from another fleet session; answer with SendMessage to \"uds:{reply_to}\".)"
            ));
        }
        let teams = self.teams().ok_or("teams are off")?;
        let cwd = self
            .main_view()
            .map(|v| v.cwd.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let team = teams.get_or_create(&cwd)?;
        self.ensure_lead_poller(&team);
        // Marked, so another session cannot pass for a member, the lead or the user.
        let from: String = request.from.trim().chars().take(200).collect();
        let entry = MailEntry::new(
            format!("uds:{from}"),
            text,
            clock::now_iso(),
            clock::new_msg_id(),
        )
        .with_summary(request.summary);
        team.post_async(LEAD_NAME, &entry).await?;
        Ok(entry.msg_id)
    }
}

/// Sends `text` to the session listening on `path`.
pub(crate) async fn send(
    path: &Path,
    from: &str,
    text: &str,
    summary: Option<&str>,
    reply_to: Option<String>,
) -> Result<ToolOutput, String> {
    let shown = path.display();
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, UnixStream::connect(path))
        .await
        .map_err(|_| format!("No session answered on {shown} within 5 s."))?
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => format!(
                "Nobody listens on {shown}: that session has ended, or the path is wrong \
                 (sessions listen on $FLEET_HOME/sockets/<session id>.sock)."
            ),
            _ => format!("Cannot connect to {shown}: {err}"),
        })?;
    let (read, mut write) = stream.into_split();
    let mut line = serde_json::to_string(&Request {
        from: from.to_string(),
        text: text.to_string(),
        summary: summary.map(str::to_string),
        reply_to,
    })
    .map_err(|err| err.to_string())?;
    line.push('\n');
    write
        .write_all(line.as_bytes())
        .await
        .map_err(|err| format!("Cannot write to {shown}: {err}"))?;
    let mut answer = String::new();
    tokio::time::timeout(CONNECT_TIMEOUT, BufReader::new(read).read_line(&mut answer))
        .await
        .map_err(|_| format!("{shown} took the message but did not confirm it within 5 s."))?
        .map_err(|err| format!("Cannot read the answer from {shown}: {err}"))?;
    let answer: Answer = serde_json::from_str(answer.trim())
        .map_err(|_| format!("{shown} answered with something that is not fleet's: {answer:?}"))?;
    if !answer.ok {
        return Err(format!(
            "The session on {shown} refused the message: {}",
            answer.error.unwrap_or_default()
        ));
    }
    let value = json!({
        "success": true,
        "message": format!("Message delivered to the session on {shown}"),
        "msg_id": answer.msg_id,
    });
    Ok(ToolOutput::text(value.to_string()).with_structured(value))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_sockets_in_the_fleet_folder_are_reachable() {
        let tmp = tempfile::tempdir().unwrap();
        let home = fleet_store::FleetHome::at(tmp.path());
        let dir = tmp.path().join("sockets");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(tmp.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), dir.join("link")).unwrap();
        let id = "0b1c2d3e-0000-4000-8000-000000000000";
        let by_id = resolve_target(&home, id).unwrap();
        assert_eq!(by_id, dir.join(format!("{id}.sock")));
        let by_path = dir.join("x.sock").display().to_string();
        assert!(resolve_target(&home, &by_path).is_ok());
        for bad in [
            "/var/run/docker.sock".to_string(),
            format!("{}/../elsewhere/x.sock", dir.display()),
            format!("{}/link/x.sock", dir.display()),
            format!("{}/x.txt", dir.display()),
            "../x".to_string(),
            String::new(),
        ] {
            assert!(
                resolve_target(&home, &bad).is_err(),
                "{bad:?} must be refused"
            );
        }
    }
}
