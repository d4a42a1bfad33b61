//! The folders an agent works in: the project root and those added with `--add-dir`, and the
//! one way fleet resolves a path the model gave (relative to cwd, `..` and symlinks followed)
//! before deciding whether it lies inside them.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The project root (the repository root, else the starting cwd), resolved.
    pub root: PathBuf,
    /// Folders added with `--add-dir` or `additionalDirectories`, resolved.
    pub additional: Vec<PathBuf>,
}

impl Workspace {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        Self {
            root: resolve(&root, Path::new("/")),
            additional: Vec::new(),
        }
    }

    pub fn with_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.add_dir(dir.as_ref());
        self
    }

    /// Adds a folder (relative ones are taken from the root), resolved, once.
    pub fn add_dir(&mut self, dir: &Path) {
        let dir = resolve(dir, &self.root);
        if !self.additional.contains(&dir) {
            self.additional.push(dir);
        }
    }

    /// Every folder of the workspace, the root first.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.root.as_path()).chain(self.additional.iter().map(PathBuf::as_path))
    }

    /// Whether `path` (already resolved with [`resolve`]) lies inside the workspace.
    pub fn contains(&self, resolved: &Path) -> bool {
        self.dirs().any(|dir| resolved.starts_with(dir))
    }
}

/// `path` made absolute against `cwd`, with `..` and symlinks resolved component by component
/// as the OS would (a `..` after a symlink leaves the link's target, not the link). Parts that do
/// not exist yet are kept as written. Never fails; a symlink loop stops after 40 hops.
pub fn resolve(path: &Path, cwd: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    walk(&mut out, &absolute, &mut hops);
    out
}

/// `path` made absolute against `cwd` with `.` and `..` removed from the text alone, symlinks
/// left as written. The permission check matches deny rules against this form as well as the
/// resolved one, so a rule naming a symlink still catches a path spelled through it.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    use std::path::Component;
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::RootDir => out = PathBuf::from("/"),
            Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

const MAX_SYMLINK_HOPS: u32 = 40;

fn walk(out: &mut PathBuf, path: &Path, hops: &mut u32) {
    use std::path::Component;
    for component in path.components() {
        match component {
            Component::RootDir => *out = PathBuf::from("/"),
            Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                let is_link = std::fs::symlink_metadata(&*out)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if is_link && *hops < MAX_SYMLINK_HOPS {
                    *hops += 1;
                    if let Ok(target) = std::fs::read_link(&*out) {
                        out.pop();
                        walk(out, &target, hops);
                    }
                }
            }
        }
    }
}
