//! Finding definitions: the command line, the project's `.fleet/agents/` and `.claude/agents/`,
//! the user's folders, then the built-ins; the first source to define a name wins.
//!
//! A broken file never stops the others from loading: it is skipped with a warning naming the
//! file and line. Only bad `--agents` JSON fails the load, since it was typed for this run.

use super::discover::{find_agent_files, AgentFolder};
use super::json::parse_with_warnings;
use super::parse::ParseError;
use super::{builtin_agents, parse_agent_file, AgentDefinition, AgentSource, AgentSources};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file that could not be loaded, or a field that was ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    pub path: Option<PathBuf>,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: {}", path.display(), self.message),
            (Some(path), None) => write!(f, "{}: {}", path.display(), self.message),
            (None, Some(line)) => write!(f, "line {line}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

/// One agent file as the loader read it.
#[derive(Debug, Clone)]
pub struct ScannedFile {
    pub path: PathBuf,
    /// The definition, or why the file is not an agent (file, line and what is wrong).
    pub result: Result<AgentDefinition, LoadWarning>,
    /// Fields that were ignored, and a note when the file repeats a name of its folder.
    pub warnings: Vec<LoadWarning>,
    /// An earlier file of the same folder defines the same name, so this one is not used.
    pub duplicate: bool,
}

/// Reads and parses one file; never fails, the outcome says what happened.
pub fn scan_file(path: &Path, source: AgentSource) -> ScannedFile {
    let fail = |line: Option<usize>, message: String| ScannedFile {
        path: path.to_path_buf(),
        result: Err(LoadWarning {
            path: Some(path.to_path_buf()),
            line,
            message,
        }),
        warnings: Vec::new(),
        duplicate: false,
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => return fail(None, format!("cannot read this file ({e}); skipped")),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return fail(None, "not UTF-8 text; save the file as UTF-8".into());
    };
    match parse_agent_file(&text, path, source) {
        Ok((def, warnings)) => ScannedFile {
            path: path.to_path_buf(),
            result: Ok(def),
            warnings,
            duplicate: false,
        },
        Err(ParseError { line, message }) => fail(line, format!("{message}; file skipped")),
    }
}

/// Every agent file of `folder`, in path order, with duplicates of a name within the folder
/// marked; and the problems met while listing the folder.
pub fn scan_folder(folder: &AgentFolder) -> (Vec<ScannedFile>, Vec<LoadWarning>) {
    let (paths, warnings) = find_agent_files(&folder.path);
    let mut files: Vec<ScannedFile> = Vec::with_capacity(paths.len());
    for path in paths {
        let mut file = scan_file(&path, folder.source_for(&path));
        if let Ok(def) = &file.result {
            let first = files
                .iter()
                .find(|f| !f.duplicate && f.result.as_ref().is_ok_and(|d| d.name == def.name));
            if let Some(first) = first {
                file.duplicate = true;
                file.warnings.push(LoadWarning {
                    path: Some(path.clone()),
                    line: None,
                    message: format!(
                        "agent {:?} is already defined by {} in the same folder; this file is \
                         ignored (rename one of them)",
                        def.name,
                        first.path.display()
                    ),
                });
            }
        }
        files.push(file);
    }
    (files, warnings)
}

/// The definitions in effect, after precedence.
#[derive(Debug, Clone, Default)]
pub struct AgentCatalog {
    /// Shared: every agent started from a definition keeps it for as long as the session.
    agents: Vec<Arc<AgentDefinition>>,
    shadowed: Vec<AgentDefinition>,
    warnings: Vec<LoadWarning>,
}

impl AgentCatalog {
    /// Loads every source. Fails only when the `--agents` JSON is unusable.
    pub fn load(sources: &AgentSources) -> Result<Self, ParseError> {
        let mut defs = Vec::new();
        let mut warnings = Vec::new();
        if let Some(json) = &sources.command_line {
            let (cli, cli_warnings) = parse_with_warnings(json)?;
            defs.extend(cli);
            warnings.extend(cli_warnings);
        }
        for folder in sources.folders() {
            let (files, folder_warnings) = scan_folder(&folder);
            warnings.extend(folder_warnings);
            for file in files {
                warnings.extend(file.warnings);
                match file.result {
                    Ok(def) if !file.duplicate => defs.push(def),
                    Ok(_) => {}
                    Err(problem) => warnings.push(problem),
                }
            }
        }
        let mut defs = super::confined::confine(defs, &mut warnings);
        defs.extend(builtin_agents());
        let mut catalog = Self::from_definitions(defs);
        catalog.warnings = warnings;
        Ok(catalog)
    }

    /// What the project's agent files ask for that needs the user's trust, as
    /// `(agent, file, what, value)`.
    pub fn project_widening(&self) -> Vec<(String, PathBuf, String, serde_json::Value)> {
        self.agents
            .iter()
            .filter_map(|def| match &def.source {
                AgentSource::Project(file) => Some((def, file.clone())),
                _ => None,
            })
            .flat_map(|(def, file)| {
                super::confined::project_widening(def)
                    .into_iter()
                    .map(move |(what, value)| (def.name.clone(), file.clone(), what, value))
            })
            .collect()
    }

    /// The catalog with the project's agent files stripped of what needs trust (the
    /// repository is not trusted).
    pub fn strip_project_widening(&mut self) {
        for def in &mut self.agents {
            if !super::confined::project_widening(def).is_empty() {
                super::confined::strip_project_widening(Arc::make_mut(def));
            }
        }
    }

    pub fn builtin_only() -> Self {
        Self::from_definitions(builtin_agents())
    }

    /// Definitions in precedence order: a later one with a name already seen is shadowed.
    pub fn from_definitions(defs: Vec<AgentDefinition>) -> Self {
        let mut catalog = Self::default();
        for def in defs {
            if catalog.agents.iter().any(|d| d.name == def.name) {
                catalog.shadowed.push(def);
            } else {
                catalog.agents.push(Arc::new(def));
            }
        }
        catalog
    }

    /// By exact name, else by a name differing only in case when exactly one does.
    pub fn get(&self, name: &str) -> Option<&Arc<AgentDefinition>> {
        if let Some(def) = self.agents.iter().find(|d| d.name == name) {
            return Some(def);
        }
        let mut folded = self
            .agents
            .iter()
            .filter(|d| d.name.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some(def), None) => Some(def),
            _ => None,
        }
    }

    pub fn agents(&self) -> &[Arc<AgentDefinition>] {
        &self.agents
    }

    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|d| d.name.as_str()).collect()
    }

    /// Definitions hidden by one of the same name from a source of higher precedence.
    pub fn shadowed(&self) -> &[AgentDefinition] {
        &self.shadowed
    }

    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }
}
