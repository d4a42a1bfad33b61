//! The JSON routes: reads from the [`Hub`](crate::Hub), actions through [`Actions`].

use super::reply::ApiError;
use super::AppState;
use crate::api::{
    ActionResult, PermissionAnswer, SendMessage, SessionSummary, Snapshot, TranscriptPage,
};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

/// `?after=N` (the token rides in the same query and is ignored here).
#[derive(Debug, Default, Deserialize)]
pub struct After {
    #[serde(default)]
    pub after: u64,
}

pub async fn sessions(State(state): State<AppState>) -> Json<Vec<SessionSummary>> {
    Json(state.hub.sessions())
}

pub async fn snapshot(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Snapshot>, ApiError> {
    state.snapshot(&id).map(Json)
}

pub async fn transcript(
    State(state): State<AppState>,
    Path((id, agent)): Path<(String, String)>,
    Query(after): Query<After>,
) -> Result<Json<TranscriptPage>, ApiError> {
    state.transcript(id, agent, after.after).await.map(Json)
}

pub async fn stop_task(
    State(state): State<AppState>,
    Path((id, task_id)): Path<(String, String)>,
) -> Result<Json<ActionResult>, ApiError> {
    Ok(Json(state.actions.stop_task(id, task_id).await?))
}

pub async fn message_member(
    State(state): State<AppState>,
    Path((team, member)): Path<(String, String)>,
    body: Result<Json<SendMessage>, JsonRejection>,
) -> Result<Json<ActionResult>, ApiError> {
    let Json(message) = body.map_err(bad_body)?;
    Ok(Json(
        state.actions.message_member(team, member, message).await?,
    ))
}

pub async fn answer_permission(
    State(state): State<AppState>,
    Path((id, request_id)): Path<(String, String)>,
    body: Result<Json<PermissionAnswer>, JsonRejection>,
) -> Result<Json<ActionResult>, ApiError> {
    let Json(answer) = body.map_err(bad_body)?;
    Ok(Json(
        state
            .actions
            .answer_permission(id, request_id, answer)
            .await?,
    ))
}

pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such page or API route")
}

fn bad_body(rejection: JsonRejection) -> ApiError {
    ApiError::new(
        rejection.status(),
        format!(
            "the request body is not what this route takes: {}",
            rejection.body_text()
        ),
    )
}
