//! The OS sandbox every Bash process runs under: Landlock rulesets on Linux, the environment
//! scrub, and the launcher that applies them before `bash` starts.

/// How one agent's Bash processes are confined. Built by the runtime for each agent and read
/// by the Bash tool for every call.
#[derive(Debug, Clone, Default)]
pub struct AgentSandbox {}

impl AgentSandbox {
    /// No confinement: the behaviour before the sandbox existed.
    pub fn off() -> Self {
        Self::default()
    }
}
