//! Turning "these trees, except those paths" into Landlock rules.
//!
//! Landlock can only grant: a rule gives rights on a file hierarchy, and what a path may do is
//! the union of the rules on it and its ancestors. A denied path inside a granted tree is
//! therefore carved out. The granted root is not given the rights directly; instead, on each
//! folder between the root and the denied path, only the rights that every denied path below
//! it keeps are granted, and every other entry of that folder (enumerated now, when the rules
//! are built) gets the full rights of its own. A denied path that does not exist yet is carved
//! at its nearest existing folder, so it cannot be created.
//!
//! The price: a folder on the way to a denied path grants nothing to entries that appear in it
//! after the rules were built. With `.git` protected in the project root, sandboxed commands
//! cannot add, remove or rename entries directly in the project root (`sed -i` on a top-level
//! file fails, since it replaces the file through a new one), while everything inside its
//! subfolders and the contents of its existing files stay writable.
//!
//! Symbolic links among the enumerated entries get no rule: opening one for a rule would grant
//! the rights on wherever it points. What a link leads to keeps the rights of its real place.

use landlock::{AccessFs, BitFlags, ABI};
use std::path::{Path, PathBuf};

/// The Landlock ABI whose file rights the sandbox asks for: through `IoctlDev` (Linux 6.10).
pub const FS_ABI: ABI = ABI::V5;

/// What an entry found while carving is, as far as rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    /// A regular file, a device, a FIFO, a socket: only file rights apply.
    File,
    /// Never given a rule of its own.
    Symlink,
}

/// Rights on a tree, given by one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: BitFlags<AccessFs>,
}

/// Rights taken away from a path and everything beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub path: PathBuf,
    pub access: BitFlags<AccessFs>,
}

/// Where carving looks: the real file system, or a made-up one in tests.
pub trait Tree {
    /// What `path` is, without following a final symlink; `None` when it does not exist.
    fn kind(&self, path: &Path) -> Option<EntryKind>;
    /// The entries of the folder `dir` (full paths), unsorted; empty when it cannot be read.
    fn entries(&self, dir: &Path) -> Vec<(PathBuf, EntryKind)>;
}

/// The file system as it is now.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealTree;

fn kind_of(file_type: std::fs::FileType) -> EntryKind {
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Dir
    } else {
        EntryKind::File
    }
}

impl Tree for RealTree {
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|meta| kind_of(meta.file_type()))
    }

    fn entries(&self, dir: &Path) -> Vec<(PathBuf, EntryKind)> {
        let Ok(read) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        read.flatten()
            .filter_map(|entry| Some((entry.path(), kind_of(entry.file_type().ok()?))))
            .collect()
    }
}

/// The rights a rule on a non-folder may hold.
pub fn file_rights() -> BitFlags<AccessFs> {
    AccessFs::from_file(FS_ABI)
}

/// The rules that give each grant's rights on its tree, minus every denial inside it. Only
/// denials at or below a grant's root bind that grant, so a grant nested inside a denied path
/// (a scratch folder inside a protected one) keeps its rights; a denial naming a root exactly
/// wins over it.
pub fn rules(grants: &[Grant], denials: &[Denial], tree: &impl Tree) -> Vec<Grant> {
    let mut out = Vec::new();
    for grant in grants {
        let Some(kind) = tree.kind(&grant.path) else {
            continue;
        };
        let inside: Vec<&Denial> = denials
            .iter()
            .filter(|d| d.path.starts_with(&grant.path))
            .collect();
        match kind {
            EntryKind::Dir => carve(&grant.path, grant.access, &inside, tree, &mut out),
            // A granted symlink is resolved by the caller; one left here is granted nothing.
            EntryKind::Symlink => {}
            EntryKind::File => {
                let denied = union(inside.iter().copied());
                push(
                    &mut out,
                    &grant.path,
                    (grant.access & !denied) & file_rights(),
                );
            }
        }
    }
    out
}

fn union<'a>(denials: impl Iterator<Item = &'a Denial>) -> BitFlags<AccessFs> {
    denials.fold(BitFlags::EMPTY, |all, d| all | d.access)
}

fn push(out: &mut Vec<Grant>, path: &Path, access: BitFlags<AccessFs>) {
    if !access.is_empty() {
        out.push(Grant {
            path: path.to_path_buf(),
            access,
        });
    }
}

/// Grants `access` on the folder `dir` minus the `denials` at or below it (all of which lie
/// inside `dir`).
fn carve(
    dir: &Path,
    access: BitFlags<AccessFs>,
    denials: &[&Denial],
    tree: &impl Tree,
    out: &mut Vec<Grant>,
) {
    let (here, below): (Vec<&Denial>, Vec<&Denial>) =
        denials.iter().copied().partition(|d| d.path == dir);
    let access = access & !union(here.into_iter());
    if below.is_empty() {
        push(out, dir, access);
        return;
    }
    // What every path below keeps: safe to grant on the folder itself, as it reaches them all.
    push(out, dir, access & !union(below.iter().copied()));
    for (entry, kind) in tree.entries(dir) {
        let inside: Vec<&Denial> = below
            .iter()
            .copied()
            .filter(|d| d.path.starts_with(&entry))
            .collect();
        match kind {
            EntryKind::Symlink => {}
            EntryKind::Dir => carve(&entry, access, &inside, tree, out),
            EntryKind::File => {
                let kept = access & !union(inside.into_iter());
                push(out, &entry, kept & file_rights());
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A made-up tree: paths ending in `/` are folders.
    struct Fake(BTreeMap<PathBuf, EntryKind>);

    impl Fake {
        fn new(paths: &[&str]) -> Self {
            let mut map = BTreeMap::new();
            for p in paths {
                let kind = if p.ends_with('/') {
                    EntryKind::Dir
                } else if p.ends_with('@') {
                    EntryKind::Symlink
                } else {
                    EntryKind::File
                };
                let clean = p.trim_end_matches(['/', '@']);
                map.insert(
                    PathBuf::from(if clean.is_empty() { "/" } else { clean }),
                    kind,
                );
            }
            Self(map)
        }
    }

    impl Tree for Fake {
        fn kind(&self, path: &Path) -> Option<EntryKind> {
            self.0.get(path).copied()
        }
        fn entries(&self, dir: &Path) -> Vec<(PathBuf, EntryKind)> {
            self.0
                .iter()
                .filter(|(p, _)| p.parent() == Some(dir))
                .map(|(p, k)| (p.clone(), *k))
                .collect()
        }
    }

    fn write() -> BitFlags<AccessFs> {
        AccessFs::from_write(FS_ABI)
    }

    fn read() -> BitFlags<AccessFs> {
        AccessFs::from_read(FS_ABI)
    }

    fn find<'a>(rules: &'a [Grant], path: &str) -> Option<&'a BitFlags<AccessFs>> {
        rules
            .iter()
            .find(|g| g.path == Path::new(path))
            .map(|g| &g.access)
    }

    #[test]
    fn a_tree_without_denials_is_one_rule() {
        let tree = Fake::new(&["/p/", "/p/a"]);
        let grants = [Grant {
            path: "/p".into(),
            access: write(),
        }];
        assert_eq!(rules(&grants, &[], &tree), grants.to_vec());
    }

    #[test]
    fn a_denied_path_is_carved_out_and_its_siblings_keep_everything() {
        let tree = Fake::new(&[
            "/p/",
            "/p/.git/",
            "/p/.git/config",
            "/p/src/",
            "/p/README",
            "/p/link@",
        ]);
        let grants = [Grant {
            path: "/p".into(),
            access: write(),
        }];
        let denials = [
            Denial {
                path: "/p/.git".into(),
                access: write(),
            },
            Denial {
                path: "/p/.mcp.json".into(),
                access: write(),
            },
        ];
        let out = rules(&grants, &denials, &tree);
        assert_eq!(find(&out, "/p"), None, "the root itself gets nothing");
        assert_eq!(find(&out, "/p/.git"), None);
        assert_eq!(find(&out, "/p/.git/config"), None);
        assert_eq!(find(&out, "/p/src"), Some(&write()));
        assert_eq!(find(&out, "/p/README"), Some(&(write() & file_rights())));
        assert_eq!(find(&out, "/p/link"), None, "symlinks get no rule");
    }

    #[test]
    fn ancestors_of_an_unreadable_path_stay_listable() {
        let tree = Fake::new(&[
            "/",
            "/home/",
            "/home/u/",
            "/home/u/.ssh/",
            "/home/u/x",
            "/etc/",
        ]);
        let grants = [Grant {
            path: "/".into(),
            access: read(),
        }];
        let denials = [Denial {
            path: "/home/u/.ssh".into(),
            access: AccessFs::ReadFile | AccessFs::Execute,
        }];
        let out = rules(&grants, &denials, &tree);
        let listing = BitFlags::from(AccessFs::ReadDir);
        assert_eq!(find(&out, "/"), Some(&listing));
        assert_eq!(find(&out, "/home"), Some(&listing));
        assert_eq!(find(&out, "/home/u"), Some(&listing));
        assert_eq!(find(&out, "/home/u/.ssh"), Some(&listing));
        assert_eq!(find(&out, "/etc"), Some(&read()));
        assert_eq!(find(&out, "/home/u/x"), Some(&(read() & file_rights())));
    }

    #[test]
    fn a_grant_inside_a_denied_path_keeps_its_rights_and_a_tie_denies() {
        let tree = Fake::new(&["/h/", "/h/.fleet/", "/h/.fleet/pad/"]);
        let denials = [Denial {
            path: "/h/.fleet".into(),
            access: write(),
        }];
        let grants = [
            Grant {
                path: "/h/.fleet/pad".into(),
                access: write(),
            },
            Grant {
                path: "/h/.fleet".into(),
                access: write(),
            },
        ];
        let out = rules(&grants, &denials, &tree);
        assert_eq!(find(&out, "/h/.fleet/pad"), Some(&write()));
        assert_eq!(find(&out, "/h/.fleet"), None);
    }

    #[test]
    fn missing_grants_are_skipped() {
        let tree = Fake::new(&["/p/"]);
        let grants = [Grant {
            path: "/q".into(),
            access: write(),
        }];
        assert!(rules(&grants, &[], &tree).is_empty());
    }
}
