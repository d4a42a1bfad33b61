//! Whether a path a command would change lies under the folders an agent may write to.
//!
//! A path counts as inside when it is inside both as written (absolute, `..` removed from the
//! text) and with the symlinks that exist now followed, so neither `/tmp/x/../../home` nor a
//! link in the temp folder that points into the project gets through. A link the same
//! command line creates cannot be seen in advance.
//!
//! A relative path is resolved against every folder the shell may be in when it runs: the
//! agent's cwd and each absolute folder a `cd` on the line goes to. After a `cd` this check
//! cannot follow (relative, `cd -`, computed) relative paths are refused.

use crate::permissions::protected_name;
use crate::workspace;
use std::path::{Path, PathBuf};

/// Why a path fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PathProblem {
    /// It lies outside; the path as resolved.
    Outside(PathBuf),
    /// The shell works it out only when it runs (`$VAR`, `~`, `{a,b}`, a glob that may match
    /// `..`), or it is relative after a `cd` that cannot be followed.
    Unknowable,
}

/// The folders an agent may write under, in both spellings.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    lexical: Vec<PathBuf>,
    resolved: Vec<PathBuf>,
    /// Refuse only protected paths (see [`crate::permissions::protected_name`]), anywhere;
    /// paths that cannot be named pass, since this looks for what the line visibly does.
    protected_only: bool,
}

impl Scope {
    /// `dirs` as given (relative ones from `cwd`).
    pub fn new(dirs: &[PathBuf], cwd: &Path) -> Self {
        Self {
            lexical: dirs.iter().map(|d| workspace::absolute(d, cwd)).collect(),
            resolved: dirs.iter().map(|d| workspace::resolve(d, cwd)).collect(),
            protected_only: false,
        }
    }

    /// A scope that refuses exactly the protected paths a line visibly changes.
    pub fn protected_paths() -> Self {
        Self {
            lexical: Vec::new(),
            resolved: Vec::new(),
            protected_only: true,
        }
    }

    /// The folders, for messages.
    pub fn describe(&self) -> String {
        let dirs: Vec<String> = self
            .lexical
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        match dirs.as_slice() {
            [] => "no folder at all".into(),
            [one] => one.clone(),
            _ => dirs.join(", "),
        }
    }

    /// Checks `path` against every possible working directory (`None`: one not known).
    pub fn check(&self, path: &Path, cwds: &[Option<PathBuf>]) -> Result<(), PathProblem> {
        if !knowable(path) {
            // `$HOME/.bashrc`, `~/.gitconfig`: where it lands is known only when the line
            // runs, but a protected name spelled in it is protected wherever it lands.
            return match self.protected_only {
                true if protected_name(path).is_some() => {
                    Err(PathProblem::Outside(path.to_path_buf()))
                }
                true => Ok(()),
                false => Err(PathProblem::Unknowable),
            };
        }
        if path.is_absolute() {
            return self.check_absolute(path);
        }
        for cwd in cwds {
            match cwd {
                Some(cwd) => self.check_absolute(&cwd.join(path))?,
                None if self.protected_only => {}
                None => return Err(PathProblem::Unknowable),
            }
        }
        Ok(())
    }

    fn check_absolute(&self, path: &Path) -> Result<(), PathProblem> {
        let root = Path::new("/");
        if self.protected_only {
            let lexical = workspace::absolute(path, root);
            let resolved = workspace::resolve(path, root);
            return match (protected_name(&lexical), protected_name(&resolved)) {
                (None, None) => Ok(()),
                _ => Err(PathProblem::Outside(resolved)),
            };
        }
        let lexical = workspace::absolute(path, root);
        if !self.lexical.iter().any(|dir| lexical.starts_with(dir)) {
            return Err(PathProblem::Outside(lexical));
        }
        let resolved = workspace::resolve(path, root);
        if !self.resolved.iter().any(|dir| resolved.starts_with(dir)) {
            return Err(PathProblem::Outside(resolved));
        }
        Ok(())
    }
}

/// Whether the shell takes `path` as written, or expands it in a way that could leave its
/// folder: variables, substitutions, `~`, brace expansion, and globs in a component that
/// starts with `.` (which may match `..`). Other globs only match names inside their folder.
fn knowable(path: &Path) -> bool {
    let text = path.to_string_lossy();
    if text.starts_with('~') || text.contains(['$', '`', '{']) {
        return false;
    }
    !text
        .split('/')
        .any(|part| part.starts_with('.') && part.contains(['*', '?', '[']))
}

/// How a simple command changes the shell's directory for the commands after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CwdChange {
    /// To this absolute folder.
    To(PathBuf),
    /// Somewhere this check cannot know (`cd -`, `cd` to home, a relative or computed path,
    /// or a command such as `eval` or `source` that may itself `cd`).
    Unknown,
}

/// The directory change `args` makes, if any.
pub(super) fn cwd_change(args: &[String]) -> Option<CwdChange> {
    let (program, rest) = args.split_first()?;
    match program.as_str() {
        "builtin" | "command" => cwd_change(rest),
        "cd" | "pushd" => {
            let target = rest.iter().find(|a| !a.starts_with('-') || *a == "-");
            Some(match target {
                Some(dir)
                    if dir.starts_with('/') && !dir.contains(['$', '`', '*', '?', '[', '{']) =>
                {
                    CwdChange::To(PathBuf::from(dir))
                }
                _ => CwdChange::Unknown,
            })
        }
        "popd" | "eval" | "source" | "." | "trap" => Some(CwdChange::Unknown),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        Scope::new(&[PathBuf::from("/scratch/area")], Path::new("/"))
    }

    fn check(path: &str, cwds: &[Option<&str>]) -> Result<(), PathProblem> {
        let cwds: Vec<Option<PathBuf>> = cwds.iter().map(|c| c.map(PathBuf::from)).collect();
        scope().check(Path::new(path), &cwds)
    }

    #[test]
    fn inside_means_inside_after_removing_dots() {
        let here = [Some("/scratch/area/sub")];
        assert_eq!(check("/scratch/area/x", &here), Ok(()));
        assert_eq!(check("/scratch/area", &here), Ok(()));
        assert_eq!(check("f.txt", &here), Ok(()));
        assert_eq!(check("*.o", &here), Ok(()));
        assert_eq!(
            check("../../x", &here),
            Err(PathProblem::Outside(PathBuf::from("/scratch/x")))
        );
        assert_eq!(
            check("/scratch/areaX", &here),
            Err(PathProblem::Outside(PathBuf::from("/scratch/areaX")))
        );
    }

    #[test]
    fn relative_paths_must_hold_from_every_possible_cwd() {
        let both = [Some("/scratch/area"), Some("/project")];
        assert_eq!(check("/scratch/area/x", &both), Ok(()));
        assert!(matches!(check("x", &both), Err(PathProblem::Outside(_))));
        assert_eq!(
            check("x", &[Some("/scratch/area"), None]),
            Err(PathProblem::Unknowable)
        );
    }

    #[test]
    fn expansions_are_unknowable() {
        let here = [Some("/scratch/area")];
        for path in ["$HOME/x", "~/x", "{a,../b}", ".*/x", "x/.?", "`pwd`"] {
            assert_eq!(check(path, &here), Err(PathProblem::Unknowable), "{path}");
        }
    }
}
