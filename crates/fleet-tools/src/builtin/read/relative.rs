//! What to tell a model that gave a file tool a relative path.
//!
//! The hint is copied word for word by small models, so it may only name a path that is
//! there: suggesting `cwd/<path>` blindly sent one model to `…/repo/realmodel/repo/calc.py`
//! because its path (`realmodel/repo/calc.py`) already began with the end of the working
//! directory (`/x/realmodel/repo`). The hint tries both readings and says which paths it tried
//! when neither exists.

use crate::ToolError;
use std::path::{Component, Path, PathBuf};

/// What must exist for a path to be worth suggesting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Read and Edit: the file itself.
    File,
    /// Write: the file, or else the folder it would be written into.
    Parent,
}

/// The error for a relative `file_path`, suggesting an absolute path only when one exists.
pub(crate) fn relative_path_error(file_path: &str, cwd: &Path, target: Target) -> ToolError {
    let tried = readings(Path::new(file_path), cwd);
    let start = format!("file_path must be an absolute path, but `{file_path}` is relative.");
    if let Some(found) = suggestion(&tried, target) {
        return ToolError::bad_value(
            "file_path",
            format!("{start} Pass {} instead.", found.display()),
        );
    }
    let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    let what = match target {
        Target::File => "no file exists at",
        Target::Parent => "no folder exists to hold",
    };
    ToolError::bad_value(
        "file_path",
        format!(
            "{start} Tried against the working directory {}: {what} {}. Pass the absolute path of \
         the file (Glob can find it).",
            cwd.display(),
            list.join(" or ")
        ),
    )
}

/// The first reading worth suggesting: one where the file exists, else (for Write) one
/// whose folder does.
fn suggestion(tried: &[PathBuf], target: Target) -> Option<&PathBuf> {
    tried.iter().find(|p| p.is_file()).or_else(|| match target {
        Target::File => None,
        Target::Parent => tried
            .iter()
            .find(|p| p.parent().is_some_and(Path::is_dir) && !p.is_dir()),
    })
}

/// The absolute paths `path` may have meant, most likely first: inside `cwd`, then with a
/// leading part that repeats the end of `cwd` taken off (longest repeat first). Each once.
fn readings(path: &Path, cwd: &Path) -> Vec<PathBuf> {
    let parts: Vec<Component> = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    let base: Vec<Component> = cwd.components().collect();
    let mut out = vec![joined(cwd, &parts)];
    let longest = parts.len().saturating_sub(1).min(base.len());
    for overlap in (1..=longest).rev() {
        let tail = &base[base.len() - overlap..];
        if parts[..overlap] == *tail && tail.iter().all(|c| matches!(c, Component::Normal(_))) {
            let candidate = joined(cwd, &parts[overlap..]);
            if !out.contains(&candidate) {
                out.push(candidate);
            }
        }
    }
    out
}

fn joined(cwd: &Path, parts: &[Component]) -> PathBuf {
    let mut path = cwd.to_path_buf();
    path.extend(parts);
    path
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::fs;

    /// `<tmp>/work/realmodel/repo` with `calc.py` in it, as the working directory.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("work/realmodel/repo");
        fs::create_dir_all(cwd.join("src")).unwrap();
        fs::write(cwd.join("calc.py"), "print(1)\n").unwrap();
        (tmp, cwd)
    }

    fn message(file_path: &str, cwd: &Path, target: Target) -> String {
        relative_path_error(file_path, cwd, target).to_string()
    }

    #[test]
    fn a_path_inside_the_working_directory_is_suggested_when_the_file_is_there() {
        let (_tmp, cwd) = project();
        let text = message("./calc.py", &cwd, Target::File);
        assert!(
            text.contains(&format!("Pass {} instead.", cwd.join("calc.py").display())),
            "{text}"
        );
    }

    #[test]
    fn a_path_that_repeats_the_end_of_the_working_directory_is_read_without_it() {
        let (_tmp, cwd) = project();
        let wrong = cwd.join("realmodel/repo/calc.py");
        for given in ["realmodel/repo/calc.py", "repo/calc.py"] {
            let text = message(given, &cwd, Target::File);
            assert!(
                text.contains(&format!("Pass {} instead.", cwd.join("calc.py").display())),
                "{given}: {text}"
            );
            assert!(!text.contains(&wrong.display().to_string()), "{text}");
        }
    }

    #[test]
    fn nothing_is_suggested_when_no_reading_exists_and_the_tries_are_named() {
        let (_tmp, cwd) = project();
        let text = message("realmodel/repo/nope.py", &cwd, Target::File);
        assert!(!text.contains("instead"), "{text}");
        let first = cwd.join("realmodel/repo/nope.py");
        let second = cwd.join("nope.py");
        assert!(
            text.contains(&format!(
                "no file exists at {} or {}.",
                first.display(),
                second.display()
            )),
            "{text}"
        );
        assert!(text.contains(&cwd.display().to_string()));
    }

    #[test]
    fn write_is_pointed_at_an_existing_folder_for_a_new_file() {
        let (_tmp, cwd) = project();
        let text = message("repo/src/new.py", &cwd, Target::Parent);
        assert!(
            text.contains(&format!(
                "Pass {} instead.",
                cwd.join("src/new.py").display()
            )),
            "{text}"
        );
        // Read wants the file itself, which is not there.
        assert!(!message("repo/src/new.py", &cwd, Target::File).contains("instead"));
        let text = message("gone/new.py", &cwd, Target::Parent);
        assert!(text.contains("no folder exists to hold"), "{text}");
        assert!(!text.contains("instead"), "{text}");
    }
}
