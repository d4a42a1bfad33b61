//! Skills: folders holding a `SKILL.md` (instructions, with frontmatter saying what the skill
//! is for) and whatever scripts or files those instructions use.
//!
//! The model sees each skill's name and description in its system prompt and loads one's
//! instructions with the [`SkillTool`] when a task calls for it, so a hundred installed
//! skills cost a few lines each rather than their whole text. An agent definition's
//! `skills: [a, b]` puts those skills' instructions into the agent's prompt from the start.
//!
//! Folders, highest precedence first (the first to define a name wins): the project's
//! `.fleet/skills/` and `.claude/skills/` (the nearest from the working directory up to the
//! repository root, as for agent files), `$FLEET_HOME/skills/` (`~/.fleet/skills/`), then
//! `~/.claude/skills/`.

mod active;
mod parse;
mod prompt;
mod tool;
pub mod trust;

pub(crate) use active::{loaded_skills, SkillEffects};
pub use prompt::{
    listing, preload, unknown_skill_warnings, MAX_DESCRIPTION_CHARS, MAX_LISTING_CHARS,
};
pub use tool::{SkillInput, SkillTool, SKILL_TOOL};
pub use trust::{NotGranted, SkillApproval};

use crate::definitions::{AgentSources, LoadWarning};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One skill, read from its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// When to use it: what the model decides by.
    pub description: String,
    /// `allowed-tools`, as written (shown to the model with the instructions).
    pub allowed_tools: Vec<String>,
    /// `model`, when the skill names one.
    pub model: Option<String>,
    /// The instructions: everything after the frontmatter.
    pub body: String,
    /// The skill's folder, where its scripts and files are.
    pub dir: PathBuf,
    pub scope: SkillScope,
}

/// Whether a skill came from the project or the user's own folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillScope {
    Project,
    User,
}

impl SkillScope {
    pub fn label(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

/// The skills in effect, after precedence, and what could not be loaded.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    skills: Vec<Arc<Skill>>,
    warnings: Vec<LoadWarning>,
    /// Which project skills the user lets grant their `allowed-tools` (see `trust.rs`).
    approval: SkillApproval,
}

impl SkillSet {
    /// Loads every skill folder `sources` points at (the same places agent files are looked
    /// for, with `skills/` in place of `agents/`). Never fails: a skill that cannot be read
    /// is skipped with a warning naming its file.
    pub fn load(sources: &AgentSources) -> Self {
        let mut set = Self::default();
        for (folder, scope) in folders(sources) {
            set.load_folder(&folder, scope);
        }
        set.approval = SkillApproval::read(sources);
        set
    }

    /// The same skills with `approval` deciding what project skills may grant.
    pub fn with_approval(mut self, approval: SkillApproval) -> Self {
        self.approval = approval;
        self
    }

    /// Which project skills may grant their tools.
    pub fn approval(&self) -> &SkillApproval {
        &self.approval
    }

    /// The allow rules loading `skill` grants its agent, or why it grants none.
    pub fn grants(&self, skill: &Skill) -> Result<Vec<String>, trust::NotGranted> {
        self.approval.grants(skill)
    }

    /// Skills given directly, first one of a name winning (for tests and embedders).
    pub fn from_skills(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut set = Self::default();
        for skill in skills {
            if set.get(&skill.name).is_none() {
                set.skills.push(Arc::new(skill));
            }
        }
        set
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.skills
    }

    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    /// By exact name, else by the one name differing only in case.
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        let name = name.trim().trim_start_matches('/');
        if let Some(skill) = self.skills.iter().find(|s| s.name == name) {
            return Some(skill);
        }
        let mut folded = self
            .skills
            .iter()
            .filter(|s| s.name.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some(skill), None) => Some(skill),
            _ => None,
        }
    }

    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// Every `<folder>/<skill>/SKILL.md`, in name order so the listing is stable.
    fn load_folder(&mut self, folder: &Path, scope: SkillScope) {
        let entries = match std::fs::read_dir(folder) {
            Ok(entries) => entries,
            Err(e) => {
                self.warnings.push(LoadWarning {
                    path: Some(folder.to_path_buf()),
                    line: None,
                    message: format!("cannot read this folder ({e}); its skills are skipped"),
                });
                return;
            }
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let file = dir.join("SKILL.md");
            if !file.is_file() {
                continue;
            }
            let text = match std::fs::read(&file).map(String::from_utf8) {
                Ok(Ok(text)) => text,
                Ok(Err(_)) => {
                    self.warn(&file, "not UTF-8 text; save it as UTF-8; skill skipped");
                    continue;
                }
                Err(e) => {
                    self.warn(
                        &file,
                        &format!("cannot read this file ({e}); skill skipped"),
                    );
                    continue;
                }
            };
            match parse::parse_skill(&text, &file, &dir, scope) {
                Ok((skill, warnings)) => {
                    self.warnings.extend(warnings);
                    match self.get(&skill.name) {
                        // A project skill hides a user skill of the same name, silently, as
                        // project agents do; two in one folder is a mistake worth a word.
                        Some(first) if first.dir.parent() == dir.parent() => {
                            let first = first.dir.join("SKILL.md");
                            self.warn(
                                &file,
                                &format!(
                                    "skill {:?} is already defined by {}; this one is ignored",
                                    skill.name,
                                    first.display()
                                ),
                            );
                        }
                        Some(_) => {}
                        None => self.skills.push(Arc::new(skill)),
                    }
                }
                Err(warning) => self.warnings.push(warning),
            }
        }
    }

    fn warn(&mut self, file: &Path, message: &str) {
        self.warnings.push(LoadWarning {
            path: Some(file.to_path_buf()),
            line: None,
            message: message.to_string(),
        });
    }
}

/// The skill folders that exist, highest precedence first, each once.
fn folders(sources: &AgentSources) -> Vec<(PathBuf, SkillScope)> {
    let mut candidates = Vec::new();
    let project = sources.project_dirs();
    for rel in [".fleet/skills", ".claude/skills"] {
        if let Some(found) = project.iter().map(|d| d.join(rel)).find(|p| p.is_dir()) {
            candidates.push((found, SkillScope::Project));
        }
    }
    if let Some(home) = &sources.fleet_home {
        candidates.push((home.join("skills"), SkillScope::User));
    }
    if let Some(home) = &sources.user_home {
        candidates.push((home.join(".claude").join("skills"), SkillScope::User));
    }
    let mut seen = HashSet::new();
    candidates
        .into_iter()
        .filter(|(path, _)| path.is_dir())
        .filter(|(path, _)| seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write_skill(root: &Path, rel: &str, text: &str) {
        let dir = root.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn project_skills_win_and_bad_files_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let home = tmp.path().join("home");
        let cwd = repo.join("sub");
        std::fs::create_dir_all(&cwd).unwrap();
        write_skill(
            &repo,
            ".claude/skills/lint",
            "---\ndescription: project lint\n---\nP",
        );
        write_skill(
            &home,
            ".claude/skills/lint",
            "---\ndescription: user lint\n---\nU",
        );
        write_skill(
            &home,
            ".claude/skills/deploy",
            "---\ndescription: ship it\n---\nD",
        );
        write_skill(&home, ".claude/skills/broken", "no frontmatter");
        let set = SkillSet::load(&AgentSources {
            cwd,
            repo_root: Some(repo.clone()),
            fleet_home: Some(tmp.path().join("fleet-home")),
            user_home: Some(home.clone()),
            command_line: None,
        });
        assert_eq!(set.names(), ["lint", "deploy"]);
        assert_eq!(set.get("lint").unwrap().body, "P");
        assert_eq!(set.get("/Deploy").unwrap().scope, SkillScope::User);
        assert_eq!(set.warnings().len(), 1, "{:?}", set.warnings());
        let warning = set.warnings()[0].to_string();
        assert!(
            warning.contains(
                &home
                    .join(".claude/skills/broken/SKILL.md")
                    .display()
                    .to_string()
            ),
            "{warning}"
        );
    }
}
