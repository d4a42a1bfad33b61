//! Tools without an agent: the built-in tools under a session's permissions and sandbox, for
//! a front end that runs tool calls others send (`fleet mcp serve`). Each call is checked as an
//! agent's call is; one tool context is shared by every call, so a Read is seen by the Edit
//! that follows it.

use super::permissions;
use crate::error::Result;
use crate::options::SessionOptions;
use fleet_tools::permissions::Permissions;
use fleet_tools::sandbox::{AgentSandbox, SandboxConfig, SandboxKind};
use fleet_tools::{ToolContext, ToolPool, Workspace};
use std::path::Path;
use std::sync::Arc;

/// The tools, the rules they run under, and the context every call runs in.
pub struct ToolHost {
    pub tools: ToolPool,
    pub permissions: Arc<Permissions>,
    pub ctx: ToolContext,
}

/// The built-in tools for `options` (a bare name in `--disallowedTools` removes a tool),
/// under its permissions, in its sandbox.
pub fn tool_host(options: &SessionOptions) -> Result<ToolHost> {
    let mut permissions = permissions::permissions(options, None)?;
    let sandbox = Arc::new(options.sandbox.clone());
    permissions.rules.allow.extend(sandbox.allow_read_rules()?);
    let workspace = permissions.workspace.clone();
    let permissions = Arc::new(permissions);
    let ctx = tool_context(&options.cwd, workspace, sandbox, &permissions);
    let keep = permissions::tool_filter(None, &options.disallowed_tools)?;
    let mut tools = ToolPool::builtin();
    tools.retain(|tool| keep(tool.name()));
    Ok(ToolHost {
        tools,
        permissions,
        ctx,
    })
}

/// The context an agent's (or the tool host's) calls run in: in `cwd`, in the sandbox its
/// permission mode calls for, with read deny rules and the credential stores binding Grep
/// and Glob too, not only Read.
pub(crate) fn tool_context(
    cwd: &Path,
    workspace: Arc<Workspace>,
    sandbox: Arc<SandboxConfig>,
    permissions: &Arc<Permissions>,
) -> ToolContext {
    let kind = AgentSandbox::kind_for_mode(permissions.mode(), SandboxKind::Standard);
    let agent_sandbox = AgentSandbox::new(kind, sandbox, Some(permissions.clone()));
    let guard = agent_sandbox.read_guard(cwd);
    ToolContext::new(cwd.to_path_buf(), workspace)
        .with_sandbox(Arc::new(agent_sandbox))
        .with_read_guard(Arc::new(guard))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(host: &ToolHost) -> Vec<String> {
        host.tools.names().into_iter().map(str::to_string).collect()
    }

    #[test]
    fn a_bare_name_in_disallowed_tools_takes_the_tool_away() {
        let dir = tempfile::tempdir().unwrap();
        let options = SessionOptions {
            disallowed_tools: vec!["Bash Write(/etc/**)".into()],
            ..SessionOptions::new(dir.path().to_path_buf())
        };
        let host = tool_host(&options).unwrap();
        let names = names(&host);
        assert!(!names.contains(&"Bash".to_string()), "{names:?}");
        // A rule with a pattern refuses calls; it leaves the tool offered.
        assert!(names.contains(&"Write".to_string()), "{names:?}");
        assert!(names.contains(&"Read".to_string()), "{names:?}");
    }

    #[test]
    fn an_added_folder_that_does_not_exist_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let options = SessionOptions {
            add_dirs: vec!["missing".into()],
            ..SessionOptions::new(dir.path().to_path_buf())
        };
        let err = tool_host(&options).err().unwrap();
        assert_eq!(err.to_string(), "--add-dir missing: no such folder");
    }

    #[test]
    fn an_unknown_tool_in_tools_lists_the_tools_there_are() {
        let err = permissions::tool_filter(Some("Read,Nope"), &[])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("--tools: no tool named \"Nope\"; the tools are "),
            "{err}"
        );
        assert!(err.contains("Agent"), "{err}");
        let keep = permissions::tool_filter(Some("Read,Task"), &[]).unwrap();
        assert!(keep("Read") && keep("Agent") && !keep("Bash"));
    }
}
