//! Errors as the page gets them: a status and `{"error": "…"}`.

use crate::actions::ActionError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// A refused or failed request.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "a valid token is required: open the URL `fleet dashboard` printed (it ends in \
             ?token=…), or send `Authorization: Bearer <token>`",
        )
    }

    pub fn forbidden(message: String) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    pub fn unsupported_media() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "requests that change something must send `Content-Type: application/json`",
        )
    }

    pub fn no_session(id: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("no session {id:?}"))
    }
}

impl From<ActionError> for ApiError {
    fn from(err: ActionError) -> Self {
        let status = match err {
            ActionError::Unavailable(_) => StatusCode::CONFLICT,
            ActionError::NotFound(_) => StatusCode::NOT_FOUND,
            ActionError::Invalid(_) => StatusCode::BAD_REQUEST,
            ActionError::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, err.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}
