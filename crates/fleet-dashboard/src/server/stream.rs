//! The server-sent event streams: the list of sessions, a session's changes and an agent's
//! transcript.
//!
//! Each stream is fed by a small task that writes into a short channel; when the page goes
//! away the channel closes and the task ends with it. A page that reads slower than the
//! session changes makes the task wait, the session's broadcast then skips ahead for it
//! (lagged), and it gets a fresh `snapshot` instead of the batches it missed — memory stays
//! bounded however slow the reader is.

use super::reply::ApiError;
use super::AppState;
use crate::api::Batch;
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, KeepAliveStream, Sse};
use serde::Serialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

/// A comment line this often keeps proxies and the browser from taking a quiet stream for a
/// dead one.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Events waiting for a slow page before the feeding task waits.
const ROOM: usize = 8;

type Events = Sse<KeepAliveStream<ReceiverStream<Result<Event, Infallible>>>>;

fn sse(rx: mpsc::Receiver<Result<Event, Infallible>>) -> Events {
    Sse::new(ReceiverStream::new(rx)).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}

/// Sends `data` as event `name`; false when the page is gone.
async fn send<T: Serialize>(
    tx: &mpsc::Sender<Result<Event, Infallible>>,
    name: &str,
    data: &T,
) -> bool {
    match Event::default().event(name).json_data(data) {
        Ok(event) => tx.send(Ok(event)).await.is_ok(),
        Err(err) => {
            tracing::warn!("dashboard: cannot encode a {name} event: {err}");
            true
        }
    }
}

/// `GET /api/sessions/events`: `sessions` with the whole list at once, then again whenever it
/// changes (ticks that come faster than the page reads fold into one list, the newest).
pub async fn sessions_events(State(state): State<AppState>) -> Events {
    // Subscribed before the first list is taken: no change falls between the two.
    let mut ticks = state.hub.subscribe_sessions();
    ticks.borrow_and_update();
    let first = state.hub.sessions();
    let (tx, rx) = mpsc::channel(ROOM);
    tokio::spawn(async move {
        if !send(&tx, "sessions", &first).await {
            return;
        }
        drop(first);
        loop {
            tokio::select! {
                () = tx.closed() => return,
                changed = ticks.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    if !send(&tx, "sessions", &state.hub.sessions()).await {
                        return;
                    }
                }
            }
        }
        // The hub is gone: nothing more will come; stay open and quiet, as a transcript does.
        tx.closed().await;
    });
    sse(rx)
}

/// `GET /api/sessions/{id}/events`: `snapshot` first, then `batch`es after it, and `sessions`
/// whenever the list of sessions changes.
pub async fn session_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Events, ApiError> {
    // Subscribed before the snapshot is taken: no change falls between the two.
    let batches = state.hub.subscribe(&id);
    let snapshot = state.snapshot(&id)?;
    let (tx, rx) = mpsc::channel(ROOM);
    tokio::spawn(async move {
        let mut last = snapshot.seq;
        if !send(&tx, "snapshot", &snapshot).await {
            return;
        }
        drop(snapshot);
        let mut batches = batches;
        let mut sessions = state.hub.subscribe_sessions();
        sessions.borrow_and_update();
        let mut sessions_open = true;
        loop {
            tokio::select! {
                () = tx.closed() => return,
                batch = next_batch(&mut batches) => match batch {
                    Ok(batch) if batch.seq > last => {
                        last = batch.seq;
                        if !send(&tx, "batch", &*batch).await {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let Ok(snapshot) = state.snapshot(&id) else { return };
                        last = snapshot.seq;
                        if !send(&tx, "snapshot", &snapshot).await {
                            return;
                        }
                    }
                    // The session is gone from the hub: no more batches, the list goes on.
                    Err(broadcast::error::RecvError::Closed) => batches = None,
                },
                changed = sessions.changed(), if sessions_open => match changed {
                    Ok(()) => {
                        if !send(&tx, "sessions", &state.hub.sessions()).await {
                            return;
                        }
                    }
                    Err(_) => sessions_open = false,
                },
            }
        }
    });
    Ok(sse(rx))
}

/// The next batch, or never when there is no receiver.
async fn next_batch(
    batches: &mut Option<broadcast::Receiver<Arc<Batch>>>,
) -> Result<Arc<Batch>, broadcast::error::RecvError> {
    match batches {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// `GET …/agents/{agent_id}/transcript/events?after=N`: `entries` with what is there after
/// `N` at once, then whatever is added. Once the agent is done (`complete`) the stream stays
/// open and quiet, so the browser does not reconnect for nothing; the page may close it.
pub async fn transcript_events(
    State(state): State<AppState>,
    Path((id, agent)): Path<(String, String)>,
    Query(after): Query<super::routes::After>,
) -> Result<Events, ApiError> {
    let ticks = state.hub.subscribe_transcript(&id, &agent);
    let first = state
        .transcript(id.clone(), agent.clone(), after.after)
        .await?;
    let (tx, rx) = mpsc::channel(ROOM);
    tokio::spawn(async move {
        let mut next = first.next;
        let mut complete = first.complete;
        if !send(&tx, "entries", &first).await {
            return;
        }
        drop(first);
        let Some(mut ticks) = ticks else {
            tx.closed().await;
            return;
        };
        ticks.borrow_and_update();
        while !complete {
            tokio::select! {
                () = tx.closed() => return,
                changed = ticks.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let Ok(page) = state.transcript(id.clone(), agent.clone(), next).await else {
                        break;
                    };
                    if page.entries.is_empty() && !page.complete {
                        continue;
                    }
                    next = page.next;
                    complete = page.complete;
                    if !send(&tx, "entries", &page).await {
                        return;
                    }
                }
            }
        }
        tx.closed().await;
    });
    Ok(sse(rx))
}
