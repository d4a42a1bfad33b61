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

use super::uds_error::AcceptRefusal;
use super::{clock, ListenError, TargetError, Teams, UdsSendError, LEAD_NAME};
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
) -> Result<PathBuf, TargetError> {
    let target = target.trim();
    if target.is_empty() {
        return Err(TargetError::Empty);
    }
    let dir = sockets_dir(home);
    let path = if target.contains('/') {
        PathBuf::from(target)
    } else {
        fleet_store::validate_session_id(target).map_err(TargetError::BadSessionId)?;
        dir.join(format!("{target}.sock"))
    };
    // Compared by folder, resolved, so `..` and links cannot lead elsewhere.
    let inside = match (path.parent().map(Path::canonicalize), dir.canonicalize()) {
        (Some(Ok(parent)), Ok(dir)) => parent == dir,
        _ => path.parent() == Some(dir.as_path()),
    };
    if !inside || path.extension().is_none_or(|e| e != "sock") {
        return Err(TargetError::Outside {
            dir,
            target: target.to_string(),
        });
    }
    Ok(path)
}

impl Teams {
    /// Starts listening for other sessions' messages; they land in the lead's inbox (read by
    /// `spawner`'s main agent). Returns the socket's path.
    pub fn listen_uds(&self, spawner: &Arc<Spawner>) -> Result<PathBuf, ListenError> {
        let teams = self;
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
                .map_err(|source| ListenError::Folder {
                    dir: dir.to_path_buf(),
                    source,
                })?;
        }
        // A socket file left by a session that died is in the way; one that answers is not ours.
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(&path).is_ok() {
                return Err(ListenError::InUse { path });
            }
            let _ = std::fs::remove_file(&path);
        }
        let listener = match UnixListener::bind(&path) {
            Ok(listener) => listener,
            Err(source) => return Err(ListenError::Bind { path, source }),
        };
        teams.set_socket(&path);
        let spawner = Arc::downgrade(spawner);
        let (stop, what) = (teams.listening.clone(), path.display().to_string());
        tokio::spawn(async move {
            let stats = super::accept::AcceptStats::default();
            super::accept::accept_loop(listener, &what, stop, &stats, |stream| {
                let Some(spawner) = spawner.upgrade() else {
                    return super::accept::Next::Stop;
                };
                tokio::spawn(async move { serve(spawner, stream).await });
                super::accept::Next::Continue
            })
            .await;
        });
        Ok(path)
    }
}

async fn serve(spawner: Arc<Spawner>, stream: UnixStream) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read.take(MAX_CONNECTION_BYTES)).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let answer = match accept_line(&spawner, &line).await {
            Ok(msg_id) => Answer {
                ok: true,
                msg_id: Some(msg_id),
                error: None,
            },
            Err(error) => Answer {
                ok: false,
                msg_id: None,
                error: Some(error.to_string()),
            },
        };
        let mut text = serde_json::to_string(&answer).unwrap_or_default();
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}

async fn accept_line(spawner: &Arc<Spawner>, line: &str) -> Result<String, AcceptRefusal> {
    if line.len() > MAX_LINE {
        return Err(AcceptRefusal::TooLong { max: MAX_LINE });
    }
    let request: Request = serde_json::from_str(line).map_err(AcceptRefusal::NotALine)?;
    if request.text.trim().is_empty() {
        return Err(AcceptRefusal::Empty);
    }
    if let Some(kind) = fleet_protocol::team::frames::frame_type(&request.text) {
        return Err(AcceptRefusal::Frame {
            kind: kind.to_string(),
        });
    }
    let mut text = request.text;
    if let Some(reply_to) = request.reply_to.filter(|r| !r.trim().is_empty()) {
        text.push_str(&format!(
            "\n\n(Sent from another fleet session; answer with SendMessage to \"uds:{reply_to}\".)"
        ));
    }
    let teams = Teams::of(spawner).ok_or(AcceptRefusal::TeamsOff)?;
    let cwd = spawner
        .main_view()
        .map(|v| v.cwd.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    let team = teams.get_or_create(&cwd)?;
    teams.ensure_lead_poller(spawner, &team);
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

/// Sends `text` to the session listening on `path`.
pub(crate) async fn send(
    path: &Path,
    from: &str,
    text: &str,
    summary: Option<&str>,
    reply_to: Option<String>,
) -> Result<ToolOutput, UdsSendError> {
    let shown = path.display();
    let path_buf = || path.to_path_buf();
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, UnixStream::connect(path))
        .await
        .map_err(|_| UdsSendError::ConnectTimeout { path: path_buf() })?
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                UdsSendError::Nobody {
                    path: path_buf(),
                    source,
                }
            }
            _ => UdsSendError::Connect {
                path: path_buf(),
                source,
            },
        })?;
    let (read, mut write) = stream.into_split();
    let mut line = serde_json::to_string(&Request {
        from: from.to_string(),
        text: text.to_string(),
        summary: summary.map(str::to_string),
        reply_to,
    })
    .map_err(UdsSendError::Encode)?;
    line.push('\n');
    write
        .write_all(line.as_bytes())
        .await
        .map_err(|source| UdsSendError::Write {
            path: path_buf(),
            source,
        })?;
    let mut answer = String::new();
    tokio::time::timeout(CONNECT_TIMEOUT, BufReader::new(read).read_line(&mut answer))
        .await
        .map_err(|_| UdsSendError::Unconfirmed { path: path_buf() })?
        .map_err(|source| UdsSendError::Read {
            path: path_buf(),
            source,
        })?;
    let answer: Answer =
        serde_json::from_str(answer.trim()).map_err(|_| UdsSendError::Foreign {
            path: path_buf(),
            answer: answer.clone(),
        })?;
    if !answer.ok {
        return Err(UdsSendError::Refused {
            path: path_buf(),
            reason: answer.error.unwrap_or_default(),
        });
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
        assert!(matches!(resolve_target(&home, ""), Err(TargetError::Empty)));
        let outside = resolve_target(&home, "/var/run/docker.sock");
        assert!(
            matches!(&outside, Err(TargetError::Outside { dir: d, .. }) if *d == dir),
            "{outside:?}"
        );
    }
}
