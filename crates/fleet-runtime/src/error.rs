//! Errors that stop a session from starting. Errors during a run end it with an error result
//! event instead, so consumers see them in the same stream as everything else.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RuntimeError {
    #[error("the model `{0}` is not usable: {1}")]
    Model(String, String),
    #[error("the event stream was closed before the run finished")]
    Closed,
}
