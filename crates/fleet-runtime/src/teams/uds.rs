//! Messages between fleet sessions on one machine: every session with teams listens on a Unix
//! socket, `$FLEET_HOME/sockets/<session id>.sock`, named in its team file. `SendMessage` to
//! `uds:<path>` connects (5 s timeout), writes one JSON line and waits for the receiver's
//! answer, which comes only once the message is durably in the receiving lead's inbox.
//!
//! Wire: request `{"from": "…", "text": "…", "summary": "…"?}`, answer `{"ok": true,
//! "msg_id": "…"}` or `{"ok": false, "error": "…"}`, one line each.

use super::{clock, LEAD_NAME};
use crate::subagent::Spawner;
use fleet_protocol::MailEntry;
use fleet_tools::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A line longer than this is refused: a message is prose, not a file transfer.
const MAX_LINE: usize = 1 << 20;

#[derive(Debug, Serialize, Deserialize)]
struct Request {
    from: String,
    text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
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
    home.root()
        .join("sockets")
        .join(format!("{session_id}.sock"))
}

impl Spawner {
    /// Starts listening for other sessions' messages; they land in the lead's inbox. Returns
    /// the socket's path.
    pub fn listen_uds(self: &Arc<Self>) -> Result<PathBuf, String> {
        let teams = self.teams().ok_or("teams are off")?;
        let path = socket_path(&teams.settings.home, &teams.settings.session_id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
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
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let Some(spawner) = spawner.upgrade() else {
                    return;
                };
                tokio::spawn(async move { spawner.serve(stream).await });
            }
        });
        Ok(path)
    }

    async fn serve(self: Arc<Self>, stream: UnixStream) {
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let answer = match self.accept_line(&line) {
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

    fn accept_line(self: &Arc<Self>, line: &str) -> Result<String, String> {
        if line.len() > MAX_LINE {
            return Err(format!("message over {MAX_LINE} bytes"));
        }
        let request: Request =
            serde_json::from_str(line).map_err(|err| format!("not a message line: {err}"))?;
        if request.text.trim().is_empty() {
            return Err("empty text".into());
        }
        let teams = self.teams().ok_or("teams are off")?;
        let cwd = self
            .main_view()
            .map(|v| v.cwd.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let team = teams.get_or_create(&cwd)?;
        self.ensure_lead_poller(&team);
        let entry = MailEntry::new(
            request.from.trim(),
            request.text,
            clock::now_iso(),
            clock::new_msg_id(),
        )
        .with_summary(request.summary);
        team.post(LEAD_NAME, &entry)?;
        Ok(entry.msg_id)
    }
}

/// Sends `text` to the session listening on `path`.
pub(crate) async fn send(
    path: &Path,
    from: &str,
    text: &str,
    summary: Option<&str>,
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
