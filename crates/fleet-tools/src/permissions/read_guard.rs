//! Paths no tool may read: the `Read(...)` deny rules of an agent's permissions and the
//! well-known credential stores, applied to Read, Grep and Glob alike.
//!
//! The permission check already refuses a call whose own path a deny rule names. What it
//! cannot see is what a search finds on its way: a Grep over `.` would print the lines of a
//! denied `.env`, and a Glob would list it. So Grep and Glob ask the guard about every entry
//! of their walk (a denied folder is not entered at all), and all three tools ask it about the
//! path they were given, which also covers the credential stores no rule needs to name.
//!
//! Rules are compiled once per agent against its working directory, so a walk pays for a few
//! prefix comparisons per file, not for resolving the rule's folders again.

use super::check::Permissions;
use super::path_match::{Anchors, Candidate, PathPattern};
use super::rule::Rule;
use crate::workspace;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Credential stores, relative to the home folder, that no tool reads unless `allowRead`
/// lifts one: SSH and GPG keys, cloud and cluster credentials, registry and forge tokens,
/// password managers, keyrings and browser profiles (saved passwords, cookies), fleet's own
/// signing keys (`$FLEET_HOME/keys` is added where `FLEET_HOME` points elsewhere). The sandbox
/// denies the same paths to Bash. Any other dot-entry of the home folder is asked about (see
/// [`super::private_home`]); these are refused outright.
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".terraform.d",
    ".vault-token",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".docker",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".config/op",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".claude/.credentials.json",
    ".fleet/keys",
];

/// [`CREDENTIAL_STORES`] under `home`; none without a home folder.
pub fn default_credential_stores(home: Option<&Path>) -> Vec<PathBuf> {
    match home {
        Some(home) => CREDENTIAL_STORES.iter().map(|s| home.join(s)).collect(),
        None => Vec::new(),
    }
}

/// The deny-read paths of one agent.
///
/// A guard made with [`ReadGuard::deferred`] is worked out on its first use: resolving each
/// credential store costs a `stat` per path component, and most agents of a large fan-out
/// never read a file. Until then it holds only what it is worked out from.
#[derive(Clone, Default)]
pub struct ReadGuard {
    resolved: OnceLock<Resolved>,
    /// How to work it out; called again if a call panicked, so a guard never ends up empty
    /// (denying nothing) by accident.
    make: Option<Arc<MakeGuard>>,
}

type MakeGuard = dyn Fn() -> ReadGuard + Send + Sync;

impl fmt::Debug for ReadGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.resolved.get() {
            Some(resolved) => resolved.fmt(f),
            None => f.write_str("ReadGuard(not yet worked out)"),
        }
    }
}

/// A guard's paths, worked out.
#[derive(Debug, Clone, Default)]
struct Resolved {
    rules: Vec<DenyRule>,
    stores: Vec<Store>,
    /// The home folder whose dot-entries walks leave out; `None` without a home folder.
    private_home: Option<PrivateHome>,
}

/// What a walk over the home folder leaves out: its dot-entries (other than toolchain folders;
/// see [`super::private_home`]), unless they hold or lie in an open folder.
#[derive(Debug, Clone, Default)]
struct PrivateHome {
    /// The home folder, as spelled and resolved.
    homes: Vec<PathBuf>,
    /// The workspace folders and `allowRead` paths: dot-entries holding or inside them stay.
    open: Vec<PathBuf>,
}

/// A `Read(...)` deny rule with its folder worked out for this agent.
#[derive(Debug, Clone)]
struct DenyRule {
    rule: Arc<Rule>,
    /// `None` for a bare `Read`, which denies every read.
    pattern: Option<PathPattern>,
    /// The folder the pattern is relative to, resolved and as spelled; empty when the rule is
    /// anchored at a home folder that does not exist.
    folders: Vec<PathBuf>,
}

/// A credential store, as given and resolved (it may be a symlink).
#[derive(Debug, Clone)]
struct Store {
    spelled: PathBuf,
    resolved: PathBuf,
}

/// Why a path may not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadDenial {
    /// A `Read(...)` deny rule names it.
    Rule(Arc<Rule>),
    /// It lies in a credential store.
    CredentialStore(PathBuf),
}

impl From<Resolved> for ReadGuard {
    fn from(resolved: Resolved) -> Self {
        Self {
            resolved: OnceLock::from(resolved),
            make: None,
        }
    }
}

impl ReadDenial {
    /// The refusal the model reads for `path`.
    pub fn message(&self, path: &Path) -> String {
        match self {
            Self::Rule(rule) => format!(
                "Permission to read {} was denied by rule `{rule}` in {}. Do not retry it; find \
                 another way or ask the user.",
                path.display(),
                rule.source()
            ),
            Self::CredentialStore(store) => format!(
                "Permission to read {} was denied: it is in {}, a credential store fleet's tools \
                 never read. Do not retry it; ask the user for what you need from it.",
                path.display(),
                store.display()
            ),
        }
    }
}

impl fmt::Display for ReadDenial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rule(rule) => write!(f, "deny rule `{rule}` in {}", rule.source()),
            Self::CredentialStore(store) => write!(f, "credential store {}", store.display()),
        }
    }
}

impl ReadGuard {
    /// A guard that denies nothing.
    pub fn none() -> Self {
        Self::default()
    }

    /// The guard of an agent working in `cwd` under `permissions`: its `Read` deny rules and
    /// the credential stores in `stores` (absolute paths; see [`default_credential_stores`]).
    pub fn new(permissions: &Permissions, cwd: &Path, stores: &[PathBuf]) -> Self {
        let home = permissions.home.as_deref();
        let rules = permissions
            .rules
            .deny
            .iter()
            .filter(|rule| rule.tool() == "Read")
            .map(|rule| {
                let anchors = Anchors {
                    base: rule.base(),
                    cwd,
                    home,
                };
                let pattern = rule.path_pattern().cloned();
                let folders = match &pattern {
                    Some(pattern) => pattern
                        .folder(anchors)
                        .map(|(resolved, spelled)| dedup([resolved, spelled]))
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                DenyRule {
                    rule: rule.clone(),
                    pattern,
                    folders,
                }
            })
            .collect();
        let stores = stores
            .iter()
            .map(|store| Store {
                spelled: workspace::absolute(store, cwd),
                resolved: workspace::resolve(store, cwd),
            })
            .collect();
        let private_home = home.map(|home| PrivateHome {
            homes: dedup([
                workspace::absolute(home, cwd),
                workspace::resolve(home, cwd),
            ]),
            open: permissions
                .workspace
                .dirs()
                .map(Path::to_path_buf)
                .collect(),
        });
        Self::from(Resolved {
            rules,
            stores,
            private_home,
        })
    }

    /// A guard worked out by `make` when it is first asked something (see [`ReadGuard`]).
    pub fn deferred(make: impl Fn() -> ReadGuard + Send + Sync + 'static) -> Self {
        Self {
            resolved: OnceLock::new(),
            make: Some(Arc::new(make)),
        }
    }

    fn paths(&self) -> &Resolved {
        self.resolved.get_or_init(|| match &self.make {
            Some(make) => make().into_resolved(),
            None => Resolved::default(),
        })
    }

    fn into_resolved(mut self) -> Resolved {
        self.paths();
        self.resolved.take().unwrap_or_default()
    }

    /// Keeps the home folder's dot-entries at or inside `paths` (resolved; `allowRead`) in
    /// walks.
    pub fn open_private(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        let mut resolved = std::mem::take(self).into_resolved();
        if let Some(private) = resolved.private_home.as_mut() {
            private.open.extend(paths);
        }
        *self = Self::from(resolved);
    }

    /// [`ReadGuard::new`] with the default credential stores of the permissions' home folder.
    pub fn for_agent(permissions: &Permissions, cwd: &Path) -> Self {
        let stores = default_credential_stores(permissions.home.as_deref());
        Self::new(permissions, cwd, &stores)
    }

    /// Whether nothing at all is denied, so a walk may skip asking.
    pub fn is_empty(&self) -> bool {
        let paths = self.paths();
        paths.rules.is_empty() && paths.stores.is_empty() && paths.private_home.is_none()
    }

    /// The credential stores this guard keeps tools out of, as given.
    pub fn credential_stores(&self) -> impl Iterator<Item = &Path> {
        self.paths().stores.iter().map(|s| s.spelled.as_path())
    }

    /// Whether `path` may not be read.
    pub fn denies(&self, path: &Path) -> bool {
        self.denial(path).is_some()
    }

    /// Why `path` (absolute, or relative to the agent's cwd when the guard was built with the
    /// same cwd) may not be read, with `..` and symlinks resolved; `None` when it may.
    pub fn denial(&self, path: &Path) -> Option<ReadDenial> {
        let candidate = Candidate::new(path, Path::new("/"));
        self.denial_of(&candidate.resolved, &candidate.spelled, candidate.is_dir)
    }

    /// As [`ReadGuard::denial`] for a path already known in both forms, without touching the
    /// file system: what a walk that does not follow symlinks needs for each entry.
    pub fn denial_of(&self, resolved: &Path, spelled: &Path, is_dir: bool) -> Option<ReadDenial> {
        let forms = [resolved, spelled];
        let paths = self.paths();
        if let Some(store) = paths.stores.iter().find(|store| {
            forms
                .iter()
                .any(|p| p.starts_with(&store.resolved) || p.starts_with(&store.spelled))
        }) {
            return Some(ReadDenial::CredentialStore(store.spelled.clone()));
        }
        paths
            .rules
            .iter()
            .find(|deny| match &deny.pattern {
                None => true,
                Some(pattern) => deny.folders.iter().any(|folder| {
                    forms
                        .iter()
                        .any(|path| pattern.matches_under(folder, path, is_dir))
                }),
            })
            .map(|deny| ReadDenial::Rule(deny.rule.clone()))
    }

    /// The guard as a walk applies it below `root` (the folder walked, as spelled): only the
    /// stores and rule folders that can hold an entry of this walk are kept, so a walk far from
    /// them pays almost nothing per entry.
    pub fn below(self: &Arc<Self>, root: &Path) -> WalkGuard {
        let spelled = workspace::absolute(root, Path::new("/"));
        let resolved = workspace::resolve(root, Path::new("/"));
        let roots = dedup([resolved.clone(), spelled.clone()]);
        let near = |p: &Path| roots.iter().any(|r| p.starts_with(r) || r.starts_with(p));
        let paths = self.paths();
        let stores = paths
            .stores
            .iter()
            .flat_map(|s| dedup([s.resolved.clone(), s.spelled.clone()]))
            .filter(|p| near(p))
            .collect();
        let mut everything = self.denial(root).is_some();
        let mut rules = Vec::new();
        for deny in &paths.rules {
            match &deny.pattern {
                None => everything = true,
                Some(pattern) => {
                    let folders: Vec<PathBuf> =
                        deny.folders.iter().filter(|f| near(f)).cloned().collect();
                    if !folders.is_empty() {
                        rules.push((pattern.clone(), folders));
                    }
                }
            }
        }
        // Only a walk that enters the home folder meets its dot-entries: one rooted inside a
        // dot-entry was asked about as a whole by the permission check.
        let (private_homes, open) = match &paths.private_home {
            Some(private)
                if private
                    .homes
                    .iter()
                    .any(|h| roots.iter().any(|r| h.starts_with(r))) =>
            {
                (private.homes.clone(), private.open.clone())
            }
            _ => (Vec::new(), Vec::new()),
        };
        WalkGuard {
            private_homes,
            open,
            same: resolved == spelled,
            spelled,
            resolved,
            stores,
            rules,
            everything,
        }
    }
}

/// The guard for the entries of one walk. An entry's path is the root's plus a tail that holds
/// no symlink (the walk does not follow them), so its resolved form is the resolved root plus
/// that tail; and each folder above an entry was an entry itself, checked and pruned if denied,
/// so only the entry itself needs matching.
#[derive(Debug, Clone)]
pub struct WalkGuard {
    spelled: PathBuf,
    resolved: PathBuf,
    /// Whether the root has no symlink in it, so both forms of an entry are the same.
    same: bool,
    /// Credential stores (both forms) that lie below the root or hold it.
    stores: Vec<PathBuf>,
    /// Rules with the folders of theirs that lie below the root or hold it.
    rules: Vec<(PathPattern, Vec<PathBuf>)>,
    /// The root itself is denied, or a bare `Read` rule denies every read.
    everything: bool,
    /// The home folder (both forms) when the walk enters it: its private dot-entries are left
    /// out.
    private_homes: Vec<PathBuf>,
    /// Dot-entries holding or inside these stay in the walk.
    open: Vec<PathBuf>,
}

impl WalkGuard {
    /// Whether the walk must skip `path` (a folder is then not entered).
    pub fn skips(&self, path: &Path, is_dir: bool) -> bool {
        if self.everything {
            return true;
        }
        if self.stores.is_empty() && self.rules.is_empty() && self.private_homes.is_empty() {
            return false;
        }
        let resolved;
        let forms: &[&Path] = if self.same {
            &[path]
        } else {
            resolved = match path.strip_prefix(&self.spelled) {
                Ok(tail) => self.resolved.join(tail),
                Err(_) => path.to_path_buf(),
            };
            &[path, resolved.as_path()]
        };
        forms.iter().any(|form| {
            self.private(form)
                || self.stores.iter().any(|store| form.starts_with(store))
                || self.rules.iter().any(|(pattern, folders)| {
                    folders
                        .iter()
                        .any(|folder| pattern.matches_entry(folder, form, is_dir))
                })
        })
    }
}

impl WalkGuard {
    /// Whether `path` is a private dot-entry of the home folder. Entries below one are never
    /// met: the walk does not enter a folder it skips.
    fn private(&self, path: &Path) -> bool {
        let Some(home) = path.parent() else {
            return false;
        };
        self.private_homes.iter().any(|h| h == home)
            && super::private_home::private_entry(path, home, super::TOOLCHAIN_ENTRIES).is_some()
            && !self
                .open
                .iter()
                .any(|open| open.starts_with(path) || path.starts_with(open))
    }
}

fn dedup([a, b]: [PathBuf; 2]) -> Vec<PathBuf> {
    if a == b {
        vec![a]
    } else {
        vec![a, b]
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::permissions::{PermissionMode, RuleKind, RuleSet};
    use crate::Workspace;

    fn guard(deny: &[&str], cwd: &Path, home: &Path) -> ReadGuard {
        let mut rules = RuleSet::default();
        for rule in deny {
            rules
                .add(RuleKind::Deny, rule, cwd.to_path_buf(), "test")
                .unwrap();
        }
        let mut permissions = Permissions::new(
            PermissionMode::Default,
            rules,
            Arc::new(Workspace::new(cwd)),
        );
        permissions.home = Some(home.to_path_buf());
        ReadGuard::for_agent(&permissions, cwd)
    }

    #[test]
    fn deny_rules_and_credential_stores_are_denied_in_any_spelling() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (cwd, home) = (root.join("p"), root.join("h"));
        std::fs::create_dir_all(cwd.join("keys")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), cwd.join("innocent")).unwrap();
        let g = guard(
            &["Read(./.env)", "Read(**/*.pem)", "Edit(./src/**)"],
            &cwd,
            &home,
        );

        assert!(g.denies(&cwd.join(".env")));
        assert!(g.denies(&cwd.join("keys/server.pem")));
        assert!(g.denies(&cwd.join("keys/../.env")));
        assert!(
            !g.denies(&cwd.join("src/main.rs")),
            "only Read rules bind reads"
        );
        assert!(!g.denies(&cwd.join(".env.example")));
        assert!(g.denies(&home.join(".ssh/id_ed25519")));
        assert!(g.denies(&home.join(".netrc")));
        assert!(
            g.denies(&cwd.join("innocent/id_ed25519")),
            "through a symlink"
        );
        assert!(!g.denies(&home.join(".bashrc")));
        let why = g.denial(&home.join(".aws/credentials")).unwrap();
        assert!(why.message(Path::new("x")).contains("credential store"));
        let why = g.denial(&cwd.join(".env")).unwrap();
        assert!(why.message(Path::new("x")).contains("`Read(./.env)`"));
    }

    #[test]
    fn a_walk_skips_by_the_resolved_root_without_resolving_each_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (cwd, home) = (root.join("p"), root.join("h"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::os::unix::fs::symlink(&home, root.join("home-link")).unwrap();
        let g = Arc::new(guard(&["Read(secrets)"], &cwd, &home));
        let walk = g.below(&root.join("home-link"));
        assert!(walk.skips(&root.join("home-link/.aws"), true));
        assert!(!walk.skips(&root.join("home-link/notes.txt"), false));
        let walk = g.below(&cwd);
        assert!(
            walk.skips(&cwd.join("a/secrets"), true),
            "a name at any depth"
        );
        assert!(
            walk.skips(&cwd.join("a/secrets"), false),
            "a file of that name too"
        );
        assert!(!walk.skips(&cwd.join("a/public/x"), false));
        let nothing = Arc::new(ReadGuard::none());
        assert!(!nothing.below(&cwd).skips(&cwd.join(".env"), false));
    }

    #[test]
    fn a_deferred_guard_is_worked_out_on_first_use_and_denies_the_same() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (cwd, home) = (root.join("p"), root.join("h"));
        std::fs::create_dir_all(&cwd).unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let (counted, c, h) = (calls.clone(), cwd.clone(), home.clone());
        let mut lazy = ReadGuard::deferred(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            guard(&["Read(./.env)"], &c, &h)
        });
        assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing resolved at build");
        assert!(lazy.denies(&cwd.join(".env")));
        assert!(lazy.denies(&home.join(".ssh/id_rsa")));
        assert!(!lazy.denies(&cwd.join("main.rs")));
        assert_eq!(calls.load(Ordering::SeqCst), 1, "worked out once");
        lazy.open_private([home.join(".config/tool")]);
        assert!(lazy.denies(&home.join(".aws/credentials")), "still a guard");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
