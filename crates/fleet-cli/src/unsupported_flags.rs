//! Claude Code flags the Agent SDKs can pass that fleet does not honour yet.
//!
//! Each is parsed (so clap does not answer with its generic "unexpected argument") and then
//! refused by name before anything runs: a flag that silently did nothing would leave an SDK
//! user believing a guard, a budget or a plugin was in place when it was not.

/// The flags, hidden from `--help` because none of them works; `docs/cli.md` lists them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct UnsupportedFlags {
    #[arg(long, hide = true, value_name = "DIR")]
    plugin_dir: Vec<String>,
    #[arg(long, hide = true, value_name = "DIR")]
    plugin_dir_no_mcp: Vec<String>,
    #[arg(
        long,
        hide = true,
        value_name = "MESSAGE_ID",
        allow_hyphen_values = true
    )]
    resume_session_at: Option<String>,
    #[arg(long, hide = true, value_name = "TURN", allow_hyphen_values = true)]
    resume_drops_turn: Option<String>,
    #[arg(long, hide = true)]
    session_mirror: bool,
    #[arg(long, hide = true, value_name = "TOKENS", allow_hyphen_values = true)]
    task_budget: Option<String>,
    #[arg(long, hide = true, value_name = "AGENT")]
    agent: Option<String>,
    #[arg(long, hide = true, value_name = "FILTER", num_args = 0..=1, default_missing_value = "")]
    debug: Option<String>,
    #[arg(long, hide = true, value_name = "FILE")]
    debug_file: Option<String>,
    #[arg(long, hide = true, value_name = "MODE")]
    permission_prompts: Option<String>,
    #[arg(long, hide = true, value_name = "CHANNEL")]
    channels: Vec<String>,
    #[arg(long, hide = true, value_name = "DIR")]
    project_config_root: Option<String>,
    #[arg(long, hide = true, value_name = "FIELDS")]
    initialize_fields: Option<String>,
    #[arg(long, hide = true)]
    managed_settings_in_initialize: bool,
    #[arg(long, hide = true, value_name = "JSON", allow_hyphen_values = true)]
    managed_settings: Option<String>,
    #[arg(long, hide = true, value_name = "URL")]
    sdk_url: Option<String>,
    #[arg(long, hide = true, value_name = "NAME")]
    workload: Option<String>,
}

/// Why a flag is refused, when there is more to say than "not yet".
fn hint(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "--plugin-dir" | "--plugin-dir-no-mcp" => "fleet has no plugins; put agents in .claude/agents/, skills in .claude/skills/ and MCP servers in --mcp-config",
        "--resume-session-at" | "--resume-drops-turn" => "--resume continues from the end of the session",
        "--session-mirror" => "fleet keeps sessions under $FLEET_HOME/projects/ only",
        "--task-budget" => "--max-budget-usd bounds a run's cost",
        "--agent" => "use an agent through the Agent tool, or give its prompt with --system-prompt",
        "--debug" | "--debug-file" => "set FLEET_LOG=debug for debug logs on stderr",
        "--initialize-fields" | "--managed-settings-in-initialize" => "pass MCP servers with --mcp-config and settings with --settings (the TypeScript SDK's mcpServersDelivery: 'argv' and settingsDelivery: 'argv')",
        "--managed-settings" => "pass them with --settings",
        _ => return None,
    })
}

impl UnsupportedFlags {
    /// The first of these flags given, by its command-line name.
    pub fn first(&self) -> Option<&'static str> {
        let given = [
            (!self.plugin_dir.is_empty(), "--plugin-dir"),
            (!self.plugin_dir_no_mcp.is_empty(), "--plugin-dir-no-mcp"),
            (self.resume_session_at.is_some(), "--resume-session-at"),
            (self.resume_drops_turn.is_some(), "--resume-drops-turn"),
            (self.session_mirror, "--session-mirror"),
            (self.task_budget.is_some(), "--task-budget"),
            (self.agent.is_some(), "--agent"),
            (self.debug.is_some(), "--debug"),
            (self.debug_file.is_some(), "--debug-file"),
            (self.permission_prompts.is_some(), "--permission-prompts"),
            (!self.channels.is_empty(), "--channels"),
            (self.project_config_root.is_some(), "--project-config-root"),
            (self.initialize_fields.is_some(), "--initialize-fields"),
            (
                self.managed_settings_in_initialize,
                "--managed-settings-in-initialize",
            ),
            (self.managed_settings.is_some(), "--managed-settings"),
            (self.sdk_url.is_some(), "--sdk-url"),
            (self.workload.is_some(), "--workload"),
        ];
        given.into_iter().find_map(|(on, flag)| on.then_some(flag))
    }

    /// An error naming the first unsupported flag given, if any.
    pub fn check(&self) -> Result<(), String> {
        let Some(flag) = self.first() else {
            return Ok(());
        };
        Err(match hint(flag) {
            Some(hint) => format!("{flag} is not supported yet ({hint})"),
            None => format!("{flag} is not supported yet"),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        flags: UnsupportedFlags,
    }

    fn parse(args: &[&str]) -> UnsupportedFlags {
        let mut argv = vec!["fleet"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().flags
    }

    #[test]
    fn every_flag_the_sdks_pass_is_refused_by_name() {
        for (args, flag) in [
            (&["--plugin-dir", "/p"][..], "--plugin-dir"),
            (&["--resume-session-at=abc"], "--resume-session-at"),
            (&["--resume-drops-turn="], "--resume-drops-turn"),
            (&["--session-mirror"], "--session-mirror"),
            (&["--task-budget", "1000"], "--task-budget"),
            (&["--debug"], "--debug"),
            (&["--managed-settings", "-x"], "--managed-settings"),
        ] {
            let flags = parse(args);
            assert_eq!(flags.first(), Some(flag), "{args:?}");
            let message = flags.check().unwrap_err();
            assert!(
                message.starts_with(&format!("{flag} is not supported yet")),
                "{message}"
            );
        }
        assert_eq!(parse(&[]).check(), Ok(()));
    }
}
