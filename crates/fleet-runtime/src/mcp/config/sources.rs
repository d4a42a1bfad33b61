//! Finding the configuration files, reading each into servers and errors, and merging them in
//! precedence order (see the parent module's doc for the order and why).

use super::expand::Lookup;
use super::server::{kind, parse_server};
use super::{McpConfig, McpConfigError, McpServerConfig, McpSource, SourceProblem};
use crate::locations::Locations;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where to look: built by [`McpConfigSources::discover`] from the session's
/// [`Locations`], or by hand in tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfigSources {
    /// The working folder: relative `--mcp-config` paths and inline servers' relative `cwd`
    /// start here, and local-scope entries of `~/.claude.json` are looked up by it.
    pub cwd: PathBuf,
    /// `~/.claude.json` (user and local scopes), when there is a home folder.
    pub claude_json: Option<PathBuf>,
    /// `$FLEET_HOME/settings.json`.
    pub fleet_settings: Option<PathBuf>,
    /// `.mcp.json` candidates, outermost (repository root) first.
    pub project_files: Vec<PathBuf>,
    /// Folders whose `projects` entry in `~/.claude.json` applies, most specific last.
    pub local_keys: Vec<PathBuf>,
    /// `--mcp-config` values in the order given.
    pub flags: Vec<String>,
    /// `--strict-mcp-config`: only `flags`.
    pub strict: bool,
    /// Settings files whose `enabledMcpjsonServers` & co. count (see [`super::approval`]).
    pub approval_files: Vec<PathBuf>,
    /// `$FLEET_HOME`: its store holds servers approved one by one (`fleet mcp add`). `None`
    /// reads no store.
    pub fleet_home: Option<PathBuf>,
}

impl McpConfigSources {
    /// The sources for a session whose folders `at` names: Claude Code's `.claude.json` (in
    /// `$CLAUDE_CONFIG_DIR` when set, else the home folder), `$FLEET_HOME`, and the
    /// repository around the working folder. Reads no environment variable: the session
    /// resolved them once into `at`.
    pub fn discover(at: &Locations, flags: Vec<String>, strict: bool) -> Self {
        let cwd = std::path::absolute(&at.cwd).unwrap_or_else(|_| at.cwd.clone());
        let (project_files, local_keys) = project_layout(&cwd);
        let project_dirs: Vec<PathBuf> = project_files
            .iter()
            .filter_map(|file| file.parent().map(Path::to_path_buf))
            .collect();
        Self {
            approval_files: at.approval_files(&project_dirs),
            claude_json: at.claude_json(),
            fleet_settings: at.fleet_settings(),
            fleet_home: at.fleet_home.clone(),
            project_files,
            local_keys,
            flags,
            strict,
            cwd,
        }
    }

    /// The user's approvals of project servers, from the trusted files only.
    pub fn approval(&self) -> super::McpApproval {
        let mut approval = super::McpApproval::read(
            &self.approval_files,
            self.claude_json.as_deref(),
            &self.local_keys,
        );
        // Servers approved one by one through fleet (`fleet mcp add`), in the user's store,
        // as long as their definition is still the one approved.
        let root = crate::tracked::repository_root(&self.cwd);
        let store = self
            .fleet_home
            .as_ref()
            .map(|home| fleet_store::trust::TrustStore::new(&fleet_store::FleetHome::at(home)));
        if let Some(Ok(project)) = store.map(|store| store.project(&root)) {
            for (name, hash) in project.mcp_servers {
                if super::approval::project_server_hash(&self.project_files, &name) == Some(hash) {
                    approval.enabled.insert(name);
                }
            }
        }
        approval
    }

    /// Reads every source, expanding variables through `lookup` (normally
    /// [`super::process_env`]).
    pub fn load(&self, lookup: Lookup<'_>) -> McpConfig {
        let mut merged = Merge::default();
        if !self.strict {
            let claude = self
                .claude_json
                .as_deref()
                .and_then(|path| read_optional(path, &mut merged.errors, claude_user(path)));
            if let (Some(path), Some(doc)) = (&self.claude_json, &claude) {
                let source = McpSource::ClaudeUser(path.clone());
                merged.add_section(doc.get("mcpServers"), &source, home_of(path), lookup, false);
            }
            if let Some(path) = &self.fleet_settings {
                let source = McpSource::FleetUser(path.clone());
                if let Some(doc) = read_optional(path, &mut merged.errors, source.clone()) {
                    merged.add_section(
                        doc.get("mcpServers"),
                        &source,
                        home_of(path),
                        lookup,
                        false,
                    );
                }
            }
            for path in &self.project_files {
                let source = McpSource::Project(path.clone());
                if let Some(doc) = read_optional(path, &mut merged.errors, source.clone()) {
                    merged.add_section(doc.get("mcpServers"), &source, home_of(path), lookup, true);
                }
            }
            if let (Some(path), Some(doc)) = (&self.claude_json, &claude) {
                let source = McpSource::ClaudeLocal(path.clone());
                for key in &self.local_keys {
                    let entry = doc
                        .get("projects")
                        .and_then(|p| p.get(key.to_string_lossy().as_ref()))
                        .and_then(|p| p.get("mcpServers"));
                    merged.add_section(entry, &source, key, lookup, false);
                }
            }
        }
        for (index, flag) in self.flags.iter().enumerate() {
            let (source, base, text) = if flag.trim_start().starts_with('{') {
                (
                    McpSource::FlagInline(index),
                    self.cwd.clone(),
                    Ok(flag.clone()),
                )
            } else {
                let path = self.cwd.join(flag);
                let text = std::fs::read_to_string(&path).map_err(SourceProblem::unreadable);
                let base = home_of(&path).to_path_buf();
                (McpSource::FlagFile(path), base, text)
            };
            match text.and_then(|t| parse_document(&t)) {
                Ok(doc) => merged.add_section(doc.get("mcpServers"), &source, &base, lookup, true),
                Err(problem) => merged.errors.push(McpConfigError::Source {
                    origin: source,
                    problem,
                }),
            }
        }
        merged.finish()
    }
}

/// `.mcp.json` candidates from the repository root down to `cwd`, and the folders whose
/// `~/.claude.json` projects entry applies (the root, then `cwd`). Outside a repository: `cwd`
/// alone, so a stray `.mcp.json` in `/tmp` or `~` never reaches an unrelated folder.
pub(super) fn project_layout(cwd: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let root = cwd.ancestors().find(|dir| dir.join(".git").exists());
    let mut dirs: Vec<&Path> = match root {
        Some(root) => cwd
            .ancestors()
            .take_while(|dir| dir.starts_with(root))
            .collect(),
        None => vec![cwd],
    };
    dirs.reverse();
    let files = dirs.iter().map(|d| d.join(".mcp.json")).collect();
    let mut keys = Vec::new();
    if let Some(root) = root.filter(|r| *r != cwd) {
        keys.push(root.to_path_buf());
    }
    keys.push(cwd.to_path_buf());
    (files, keys)
}

fn claude_user(path: &Path) -> McpSource {
    McpSource::ClaudeUser(path.to_path_buf())
}

/// The folder holding a file: where its relative `cwd` values point from.
fn home_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

/// Reads a file that may not exist. Present but unusable: an error, and `None`.
fn read_optional(
    path: &Path,
    errors: &mut Vec<McpConfigError>,
    origin: McpSource,
) -> Option<Map<String, Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            errors.push(McpConfigError::Source {
                origin,
                problem: SourceProblem::unreadable(e),
            });
            return None;
        }
    };
    // A blank file is a file not written yet, not a mistake.
    if text.trim().is_empty() {
        return None;
    }
    match parse_document(&text) {
        Ok(doc) => Some(doc),
        Err(problem) => {
            errors.push(McpConfigError::Source { origin, problem });
            None
        }
    }
}

/// A configuration document: a JSON object (empty or blank text counts as `{}`).
fn parse_document(text: &str) -> Result<Map<String, Value>, SourceProblem> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(SourceProblem::NotObject {
            found: kind(&other),
        }),
        Err(e) => Err(SourceProblem::NotJson(std::sync::Arc::new(e))),
    }
}

/// Servers by name, later sources replacing earlier ones; `None` marks a broken definition.
#[derive(Default)]
struct Merge {
    by_name: BTreeMap<String, Option<McpServerConfig>>,
    server_errors: BTreeMap<String, McpConfigError>,
    errors: Vec<McpConfigError>,
}

impl Merge {
    /// Adds one `mcpServers` object. `required`: a document whose whole point is servers
    /// (`.mcp.json`, `--mcp-config`) must have the key.
    fn add_section(
        &mut self,
        section: Option<&Value>,
        source: &McpSource,
        base: &Path,
        lookup: Lookup<'_>,
        required: bool,
    ) {
        let servers = match section {
            Some(Value::Object(servers)) => servers,
            None if !required => return,
            None => {
                self.errors.push(McpConfigError::Source {
                    origin: source.clone(),
                    problem: SourceProblem::NoServers,
                });
                return;
            }
            Some(other) => {
                self.errors.push(McpConfigError::Source {
                    origin: source.clone(),
                    problem: SourceProblem::ServersNotObject { found: kind(other) },
                });
                return;
            }
        };
        for (name, value) in servers {
            match parse_server(name, value, source, base, lookup) {
                Ok(config) => {
                    self.server_errors.remove(name);
                    self.by_name.insert(name.clone(), Some(config));
                }
                Err(problem) => {
                    let error = McpConfigError::Server {
                        server: name.clone(),
                        origin: source.clone(),
                        problem,
                    };
                    self.server_errors.insert(name.clone(), error);
                    self.by_name.insert(name.clone(), None);
                }
            }
        }
    }

    fn finish(self) -> McpConfig {
        let mut errors = self.errors;
        errors.extend(self.server_errors.into_values());
        McpConfig {
            servers: self.by_name.into_values().flatten().collect(),
            errors,
            ..McpConfig::default()
        }
    }
}
