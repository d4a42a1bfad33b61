//! Where a session's teammates run, and how a pane teammate's `fleet` is started: the
//! backend detection (`--teammate-mode`, `teammateMode`, the terminal), the program, the
//! flags every teammate inherits, and the environment it needs — secrets apart, handed over
//! in a file rather than on a command line.

use crate::args::PrintArgs;
use crate::settings::Settings;
use fleet_runtime::backends::detect::{self, Choice, Environment, TeammateMode};
use fleet_runtime::teams::PaneSettings;
use std::sync::Mutex;

/// The variable naming another program to run as pane teammates (a wrapper, a build of
/// fleet elsewhere); Claude Code's `CLAUDE_CODE_TEAMMATE_COMMAND` is read too.
const TEAMMATE_COMMAND: [&str; 2] = ["FLEET_TEAMMATE_COMMAND", "CLAUDE_CODE_TEAMMATE_COMMAND"];

/// A line for the person about where teammates run (a fallback, a hint), shown once by
/// whichever front end is up.
static NOTICE: Mutex<Option<String>> = Mutex::new(None);

/// Takes the pending notice, if any.
pub(crate) fn take_notice() -> Option<String> {
    NOTICE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}

fn notice(text: String) {
    *NOTICE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(text);
}

/// The pane settings for a session: `None` keeps teammates in-process.
pub(crate) fn settings(
    args: &PrintArgs,
    settings: &Settings,
    team: &str,
) -> anyhow::Result<Option<PaneSettings>> {
    // A pane teammate's own teammates are refused anyway: the roster is flat.
    if args.member.agent_id.is_some() {
        return Ok(None);
    }
    let mode = args
        .teammate_mode
        .or(settings.teammate_mode)
        .unwrap_or(TeammateMode::Auto);
    let choice = detect::choose(mode, &Environment::from_process(), !args.print)
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    match &choice {
        Choice::InProcess { notice: Some(text) } => notice(text.clone()),
        Choice::TmuxExternal { hint: Some(text) } => notice(text.clone()),
        _ => {}
    }
    let Some(backend) = detect::backend_for(&choice, team) else {
        return Ok(None);
    };
    let program = TEAMMATE_COMMAND
        .iter()
        .find_map(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
        .map(std::path::PathBuf::from)
        .map_or_else(std::env::current_exe, Ok)
        .map_err(|err| anyhow::anyhow!("cannot tell which program fleet is: {err}"))?;
    let (env, secret_env) = environment();
    Ok(Some(PaneSettings {
        backend,
        program,
        args: inherited_flags(args),
        env,
        secret_env,
    }))
}

/// The lead's flags a teammate runs with too: where settings, MCP servers and added folders
/// come from, the provider, the sandbox and the tool rules.
fn inherited_flags(args: &PrintArgs) -> Vec<String> {
    let mut out = Vec::new();
    let mut pair = |flag: &str, value: &str| {
        out.push(flag.to_string());
        out.push(value.to_string());
    };
    if let Some(settings) = &args.settings {
        pair("--settings", settings);
    }
    if let Some(sources) = &args.setting_sources {
        pair("--setting-sources", sources);
    }
    if let Some(provider) = args.provider {
        pair("--provider", provider.as_str());
    }
    for config in &args.mcp_config {
        pair("--mcp-config", config);
    }
    for dir in &args.add_dir {
        pair("--add-dir", &dir.display().to_string());
    }
    for rule in &args.allowed_tools {
        pair("--allowedTools", rule);
    }
    for rule in &args.disallowed_tools {
        pair("--disallowedTools", rule);
    }
    if args.strict_mcp_config {
        out.push("--strict-mcp-config".into());
    }
    if args.trust_project
        || fleet_protocol::env::FLEET_TRUST_PROJECT
            .is_on()
            .unwrap_or(false)
    {
        out.push("--trust-project".into());
    }
    match args.sandbox() {
        Some(true) => out.push("--sandbox".into()),
        Some(false) => out.push("--no-sandbox".into()),
        None => {}
    }
    out
}

/// Variables as name and value.
type Vars = Vec<(String, String)>;

/// The variables a teammate's process needs (a terminal server started long ago has an
/// environment of its own), split into the plain ones and the secrets.
fn environment() -> (Vars, Vars) {
    let mut plain = Vec::new();
    let mut secret = Vec::new();
    for (name, value) in std::env::vars() {
        if !forwarded(&name) {
            continue;
        }
        if is_secret(&name) {
            secret.push((name, value));
        } else {
            plain.push((name, value));
        }
    }
    // The lead's fleet home, absolute, so both read and write the same team files.
    if let Some(home) = crate::settings::fleet_home() {
        plain.retain(|(k, _)| k != "FLEET_HOME");
        plain.push(("FLEET_HOME".into(), home.display().to_string()));
    }
    (plain, secret)
}

fn forwarded(name: &str) -> bool {
    const PREFIXES: [&str; 5] = ["FLEET_", "ANTHROPIC_", "OPENAI_", "CLAUDE_CODE_", "LC_"];
    const NAMES: [&str; 10] = [
        "HOME",
        "PATH",
        "LANG",
        "NO_COLOR",
        "COLORFGBG",
        "XDG_CONFIG_HOME",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ];
    name != fleet_runtime::teams::pane::TEAMMATE_ENV_FILE
        && (NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)))
}

fn is_secret(name: &str) -> bool {
    ["KEY", "TOKEN", "SECRET", "PASSWORD"]
        .iter()
        .any(|word| name.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_are_secrets_and_addresses_are_not() {
        assert!(is_secret("ANTHROPIC_API_KEY"));
        assert!(is_secret("OPENAI_API_KEY"));
        assert!(is_secret("ANTHROPIC_AUTH_TOKEN"));
        assert!(!is_secret("ANTHROPIC_BASE_URL"));
        assert!(forwarded("ANTHROPIC_BASE_URL"));
        assert!(forwarded("FLEET_HOME"));
        assert!(!forwarded("SSH_AUTH_SOCK"));
        assert!(!forwarded(fleet_runtime::teams::pane::TEAMMATE_ENV_FILE));
    }

    #[test]
    fn a_teammate_inherits_where_its_settings_and_servers_come_from() {
        let args = PrintArgs {
            settings: Some("{\"model\":\"x\"}".into()),
            mcp_config: vec!["a.json".into()],
            strict_mcp_config: true,
            no_sandbox: true,
            ..PrintArgs::default()
        };
        assert_eq!(
            inherited_flags(&args),
            [
                "--settings",
                "{\"model\":\"x\"}",
                "--mcp-config",
                "a.json",
                "--strict-mcp-config",
                "--no-sandbox"
            ]
        );
    }
}
