//! `fleet agents`: which agent definitions are in effect in a folder (and which are hidden by
//! a definition of the same name), and a checker that reports every problem in agent files
//! with its file and line, so a broken file is found before a run silently skips it.

use anyhow::Context;
use fleet_runtime::definitions::{
    lint_agent_file, scan_file, scan_folder, AgentCatalog, AgentDefinition, AgentFolder,
    AgentSource, AgentSources, FolderScope, Isolation, ModelSetting, ScannedFile,
};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum AgentsCommand {
    /// List the agents available here: name, source, model, tools and file, and the
    /// definitions hidden by one of the same name.
    List(ListArgs),
    /// Check agent files: every file fleet would load here, or the given files and folders.
    /// Also warns about names other than letters, digits and hyphens and about tools fleet
    /// does not have. Exits with status 1 when any file has an error (or, with --strict, a
    /// warning).
    Validate(ValidateArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The folder to list for (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// A JSON array of objects: name, description, source, path, model, tools (null: every
    /// tool), disallowedTools, permissionMode, maxTurns, background, isolation, shadowed.
    #[arg(long)]
    json: bool,
    /// Agent definitions as JSON (an object keyed by name), taking precedence over files.
    #[arg(long, value_name = "JSON")]
    agents: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Agent files or folders to check (folders are searched for `*.md` at any depth).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// With no paths: check the files fleet would load in this folder (default: the current
    /// one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Exit with status 1 on warnings too, not only on errors (for CI).
    #[arg(long)]
    strict: bool,
}

pub fn run(command: AgentsCommand) -> anyhow::Result<ExitCode> {
    match command {
        AgentsCommand::List(args) => list(args).map(|()| ExitCode::SUCCESS),
        AgentsCommand::Validate(args) => validate(args),
    }
}

/// The sources `fleet` itself reads in `cwd`: the repository around it, the fleet home and
/// the user's home from the environment.
fn sources(cwd: Option<PathBuf>, command_line: Option<String>) -> anyhow::Result<AgentSources> {
    let cwd = match cwd {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the working directory")?,
    };
    let cwd = cwd
        .canonicalize()
        .with_context(|| format!("{}: no such folder", cwd.display()))?;
    Ok(fleet_session::config::locations(&cwd).agent_sources(command_line))
}

fn list(args: ListArgs) -> anyhow::Result<()> {
    let catalog = AgentCatalog::load(&sources(args.cwd, args.agents)?)?;
    {
        let mut err = std::io::stderr().lock();
        for warning in catalog.warnings() {
            writeln!(err, "warning: {warning}")?;
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut all: Vec<Value> = catalog.agents().iter().map(|d| to_json(d, false)).collect();
        all.extend(catalog.shadowed().iter().map(|d| to_json(d, true)));
        writeln!(out, "{}", serde_json::to_string_pretty(&all)?)?;
        return Ok(());
    }
    let mut rows = vec![[
        "NAME".to_string(),
        "SOURCE".into(),
        "MODEL".into(),
        "EFFORT".into(),
        "TOOLS".into(),
        "PATH".into(),
    ]];
    rows.extend(catalog.agents().iter().map(|def| row(def)));
    let in_effect = rows.len();
    for hidden in catalog.shadowed() {
        let mut cells = row(hidden);
        if let Some(winner) = catalog.agents().iter().find(|d| d.name == hidden.name) {
            cells[5] = format!("{}  (shadowed by {})", cells[5], describe_source(winner));
        }
        rows.push(cells);
    }
    let widths: Vec<usize> = (0..5)
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, cells) in rows.iter().enumerate() {
        if i == in_effect {
            writeln!(out, "\nshadowed (not used):")?;
        }
        let mut line = String::new();
        for (col, cell) in cells.iter().enumerate() {
            if col < 5 {
                line.push_str(&format!("{cell:<width$}  ", width = widths[col]));
            } else {
                line.push_str(cell);
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn row(def: &AgentDefinition) -> [String; 6] {
    [
        def.name.clone(),
        def.source.label().to_string(),
        match &def.model {
            Some(ModelSetting::Named(name)) => name.clone(),
            Some(ModelSetting::Inherit) | None => "inherit".into(),
        },
        def.effort
            .as_ref()
            .map(fleet_runtime::effort::effort_label)
            .unwrap_or_else(|| "-".into()),
        tools_cell(def),
        def.source
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "-".into()),
    ]
}

/// `*` or the tool list, then each disallowed tool as `-X`.
fn tools_cell(def: &AgentDefinition) -> String {
    let mut parts: Vec<String> = match &def.tools {
        None => vec!["*".into()],
        Some(tools) => tools.iter().map(|t| t.to_rule_string()).collect(),
    };
    parts.extend(
        def.disallowed_tools
            .iter()
            .map(|t| format!("-{}", t.to_rule_string())),
    );
    parts.join(", ")
}

fn describe_source(def: &AgentDefinition) -> String {
    match def.source.path() {
        Some(path) => format!("{} {}", def.source.label(), path.display()),
        None => def.source.label().to_string(),
    }
}

fn to_json(def: &AgentDefinition, shadowed: bool) -> Value {
    let rules = |tools: &[fleet_runtime::definitions::ToolEntry]| -> Vec<String> {
        tools.iter().map(|t| t.to_rule_string()).collect()
    };
    json!({
        "name": def.name,
        "description": def.description,
        "source": def.source.label(),
        "path": def.source.path().map(|p| p.display().to_string()),
        "model": def.model.as_ref().map(|m| match m {
            ModelSetting::Inherit => "inherit".to_string(),
            ModelSetting::Named(name) => name.clone(),
        }),
        "tools": def.tools.as_deref().map(rules),
        "disallowedTools": rules(&def.disallowed_tools),
        "permissionMode": def.permission_mode.map(|m| m.as_str()),
        "maxTurns": def.max_turns,
        "effort": def.effort.as_ref().map(|e| match e {
            fleet_runtime::definitions::Effort::Level(level) => json!(level),
            fleet_runtime::definitions::Effort::Tokens(n) => json!(n),
        }),
        "skills": def.skills,
        "memory": def.memory.map(|m| match m {
            fleet_runtime::definitions::MemoryScope::User => "user",
            fleet_runtime::definitions::MemoryScope::Project => "project",
            fleet_runtime::definitions::MemoryScope::Local => "local",
        }),
        "background": def.background,
        "isolation": def.isolation.map(|i| match i {
            Isolation::Worktree => "worktree",
            Isolation::Remote => "remote",
        }),
        "shadowed": shadowed,
    })
}

fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    let mut warned = false;
    let mut files: Vec<ScannedFile> = Vec::new();
    if args.paths.is_empty() {
        let folders = sources(args.cwd, None)?.folders();
        if folders.is_empty() {
            writeln!(
                out,
                "no agent folders here (.fleet/agents, .claude/agents, or the user's)"
            )?;
        }
        for folder in folders {
            let (scanned, warnings) = scan_folder(&folder);
            for warning in warnings {
                warned = true;
                writeln!(out, "warning {warning}")?;
            }
            files.extend(scanned);
        }
    } else {
        for path in args.paths {
            if path.is_dir() {
                let folder = AgentFolder {
                    path,
                    scope: FolderScope::Project,
                };
                let (scanned, warnings) = scan_folder(&folder);
                for warning in warnings {
                    warned = true;
                    writeln!(out, "warning {warning}")?;
                }
                files.extend(scanned);
            } else if path.exists() {
                let source = AgentSource::Project(path.clone());
                files.push(scan_file(&path, source));
            } else {
                writeln!(out, "error {}: no such file or folder", path.display())?;
                failed = true;
            }
        }
    }
    for file in files {
        let mut warnings = file.warnings.clone();
        match &file.result {
            Ok(def) => {
                writeln!(out, "ok  {} ({})", file.path.display(), def.name)?;
                // Read again for the advice: it needs the file's lines, and the file parsed.
                if let Ok(text) = std::fs::read_to_string(&file.path) {
                    warnings.extend(lint_agent_file(&text, &file.path));
                }
            }
            Err(problem) => {
                failed = true;
                writeln!(out, "error {problem}")?;
            }
        }
        warnings.sort_by_key(|w| w.line);
        for warning in &warnings {
            warned = true;
            writeln!(
                out,
                "warning {}",
                crate::visible::visible_line(&warning.to_string())
            )?;
        }
    }
    Ok(if failed || (args.strict && warned) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
