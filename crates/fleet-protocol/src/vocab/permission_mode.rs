//! The permission modes, spelled as Claude Code spells them.
//!
//! A closed vocabulary: a mode decides what runs without asking, so a name fleet does not know
//! is an error wherever it is read (settings, flags, agent files, control requests), never a
//! guess. It lives in the protocol because the mode crosses every crate boundary: the tools
//! check it, the runtime switches it, the `init` line and hooks report it, team frames and
//! remote jobs carry it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Read-only tools run; anything else asks.
    #[default]
    Default,
    /// As default, and edits to files inside the workspace run without asking.
    AcceptEdits,
    /// Only read-only tools run, so the agent can look but not change.
    Plan,
    /// Everything runs except what a deny rule forbids.
    BypassPermissions,
    /// Whatever would ask is denied instead.
    DontAsk,
}

impl PermissionMode {
    /// The wire name (`acceptEdits`), the same as serde writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::BypassPermissions => "bypassPermissions",
            Self::DontAsk => "dontAsk",
        }
    }

    /// How much the mode lets an agent do without asking, for comparing two modes: `plan`
    /// only reads, `dontAsk` denies whatever would ask (never wider than `default`), `default`
    /// asks, `acceptEdits` also edits, `bypassPermissions` does everything not denied.
    pub fn rank(self) -> u8 {
        match self {
            Self::Plan => 0,
            Self::DontAsk => 1,
            Self::Default => 2,
            Self::AcceptEdits => 3,
            Self::BypassPermissions => 4,
        }
    }

    /// The less permissive of two modes.
    pub fn narrower(self, other: PermissionMode) -> PermissionMode {
        if other.rank() <= self.rank() {
            other
        } else {
            self
        }
    }

    /// Every mode, in the order Claude Code lists them.
    pub const ALL: [PermissionMode; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::BypassPermissions,
        Self::DontAsk,
    ];
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Case-insensitive, as the CLI has always accepted it. The error stays a `String` (naming
/// the bad value and the valid ones) because clap value parsers and the control server use it
/// as one.
impl std::str::FromStr for PermissionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|m| m.as_str()).collect();
                format!(
                    "unknown permission mode `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}
