//! What goes wrong loading settings, each error naming the file (or flag) and the field.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A settings file exists but cannot be read.
    #[error("reading {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A settings file (or the `--settings` layer) is not valid JSON for settings.
    #[error("{}:{line}:{column}: not valid settings JSON: {error}", file.display())]
    Json {
        /// The file, or `--settings` for the inline layer.
        file: PathBuf,
        line: usize,
        column: usize,
        error: serde_json::Error,
    },
    /// One field holds a value fleet cannot use; `problem` names the field and what to use.
    #[error("{}: {problem}", file.display())]
    Field {
        file: PathBuf,
        /// The key as written, e.g. `openai.toolChoice`.
        field: &'static str,
        problem: String,
    },
    /// `--setting-sources` names a source that does not exist.
    #[error("--setting-sources: unknown source {0:?}; the sources are user, project and local")]
    UnknownSource(String),
    /// `--settings ""`.
    #[error("--settings is empty: give a settings file or a JSON object")]
    EmptySettingsFlag,
    /// `--settings FILE` names a file that cannot be read.
    #[error("--settings {value}: cannot read the settings file {}", path.display())]
    SettingsFlagFile {
        value: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ConfigError {
    /// The field the error is about, when it is about one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ConfigError::Field { field, .. } => Some(field),
            _ => None,
        }
    }
}
