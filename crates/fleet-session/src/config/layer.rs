//! The layers a configuration value can come from, and a value that remembers its layer.

use std::path::PathBuf;

/// What kind of place a setting was read from. The stack reads its files in a fixed order
/// (see [`super::load`]); the layer says whose file it was, which is what the trust gate and
/// `--setting-sources` decide by. The order of the variants is the order of the kinds from
/// lowest to highest, but precedence is the stack's order of files, not this enum's order:
/// `.fleet/settings.json` (shared) is read after `.claude/settings.local.json` (local) and
/// wins over it, as it always has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    /// Built-in defaults: what a value is when no layer sets it.
    Defaults,
    /// fleet's user settings, `$FLEET_HOME/settings.json` (default `~/.fleet`).
    User,
    /// Claude Code's user settings, `~/.claude/settings.json`.
    ClaudeUser,
    /// A project's shared settings, `.claude/settings.json` or `.fleet/settings.json`: the
    /// repository wrote them.
    Project,
    /// A project's local settings, `.claude/settings.local.json` or
    /// `.fleet/settings.local.json`: the user's own unless git tracks them.
    ProjectLocal,
    /// The user's approvals for one repository kept in the user's store
    /// (`$FLEET_HOME/trust.json`), where the repository cannot write.
    UserStore,
    /// Managed (administrator) settings. fleet reads none today; the slot is reserved.
    Managed,
    /// Environment variables. The variables that beat a setting (`FLEET_OPENAI_TOOL_CHOICE`,
    /// `FLEET_MAX_OUTPUT_TOKENS`, …) are applied by the code that uses the value.
    Environment,
    /// The command line: `--settings` (a file or inline JSON), which is also how the Agent
    /// SDKs pass their `settings` option.
    Flags,
    /// The Agent SDK's `initialize` request.
    Sdk,
}

impl Layer {
    /// The `--setting-sources` name that lets this layer load, for the layers that flag
    /// filters (`None`: always loads).
    pub fn setting_source(self) -> Option<super::SettingSource> {
        use super::SettingSource;
        match self {
            Layer::User | Layer::ClaudeUser => Some(SettingSource::User),
            Layer::Project => Some(SettingSource::Project),
            Layer::ProjectLocal | Layer::UserStore => Some(SettingSource::Local),
            Layer::Defaults | Layer::Managed | Layer::Environment | Layer::Flags | Layer::Sdk => {
                None
            }
        }
    }

    /// Whether this layer's files may belong to the repository (and so pass the trust gate).
    /// A local file does only when git tracks it, which the gate checks itself.
    pub fn may_be_repository(self) -> bool {
        matches!(self, Layer::Project | Layer::ProjectLocal)
    }

    /// One word for messages and listings.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Defaults => "defaults",
            Layer::User => "user",
            Layer::ClaudeUser => "claude-user",
            Layer::Project => "project",
            Layer::ProjectLocal => "local",
            Layer::UserStore => "user-store",
            Layer::Managed => "managed",
            Layer::Environment => "environment",
            Layer::Flags => "flags",
            Layer::Sdk => "sdk",
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where one value came from: its layer, and the file when it was read from one (`None` for
/// inline `--settings` JSON and for layers without files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub layer: Layer,
    pub path: Option<PathBuf>,
}

impl Source {
    pub fn new(layer: Layer, path: Option<PathBuf>) -> Self {
        Self { layer, path }
    }
}

/// A resolved value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    /// `value` with the source recorded for it, when both are there.
    pub fn of(value: Option<T>, source: Option<&Source>) -> Option<Self> {
        Some(Self {
            value: value?,
            source: source?.clone(),
        })
    }

    /// The layer the value came from.
    pub fn layer(&self) -> Layer {
        self.source.layer
    }
}
