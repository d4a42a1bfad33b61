//! Why a session could not be built or started. The texts are the ones a person reads on
//! stderr: a flag or setting that cannot work names it, a failed step says which step it was
//! and keeps the failure underneath as its source (a front end prints the whole chain).

use thiserror::Error;

/// Any error kept as the source of a failed step.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, Error)]
pub enum SessionError {
    /// A flag, setting or combination that cannot work; the text names it.
    #[error("{0}")]
    Invalid(String),
    /// A step of building or starting failed: `context` says which, the source why.
    #[error("{context}")]
    Step {
        context: String,
        #[source]
        source: BoxError,
    },
    /// No model client could be made (boxed: the model's errors are large).
    #[error(transparent)]
    Model(Box<fleet_model::ModelError>),
    #[error(transparent)]
    Store(#[from] fleet_store::StoreError),
    #[error(transparent)]
    Env(#[from] fleet_protocol::env::EnvError),
    #[error(transparent)]
    Rule(#[from] fleet_tools::permissions::RuleError),
    #[error(transparent)]
    Hooks(#[from] fleet_runtime::hooks::HookConfigError),
    /// The front end could not say where pane teammates run (its [`PaneFactory`]).
    ///
    /// [`PaneFactory`]: crate::options::PaneFactory
    #[error(transparent)]
    Panes(BoxError),
}

impl From<fleet_model::ModelError> for SessionError {
    fn from(err: fleet_model::ModelError) -> Self {
        Self::Model(Box::new(err))
    }
}

impl SessionError {
    pub(crate) fn invalid(text: impl Into<String>) -> Self {
        Self::Invalid(text.into())
    }

    pub(crate) fn step(context: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Step {
            context: context.into(),
            source: source.into(),
        }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;
