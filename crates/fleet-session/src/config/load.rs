//! Building the layer stack of one session and resolving it into [`Settings`].
//!
//! The stack, lowest precedence first (a later entry wins for single values; lists add up):
//!
//! 1. `$FLEET_HOME/settings.json` (default `~/.fleet/settings.json`), as [`Layer::User`];
//! 2. `~/.claude/settings.json`, as [`Layer::ClaudeUser`];
//! 3. the project — the nearest folder from the working folder up to the repository root
//!    that holds `.fleet/` or `.claude/` (the home folder never counts) — in this order:
//!    `.claude/settings.json` ([`Layer::Project`]), `.claude/settings.local.json`
//!    ([`Layer::ProjectLocal`]), `.fleet/settings.json`, `.fleet/settings.local.json`;
//! 4. the allow rules the user approved for this repository through fleet, kept in
//!    `$FLEET_HOME/trust.json`, as [`Layer::UserStore`] (loads with the `local` source);
//! 5. the `--settings` layer (a file or inline JSON), above every file, as [`Layer::Flags`].
//!
//! `--setting-sources` picks which of 1–4 load; 5 always does. Each file the repository
//! wrote passes the trust gate ([`super::trust`]) on its way in: until the repository is
//! trusted, what it asks for that runs code or widens rights is taken out.

use super::dirs::project_dir;
use super::flags::SettingsFlags;
use super::layer::Layer;
use super::settings::{Settings, StackEntry};
use super::trust::{self, TrustReport};
use super::ConfigError;
use fleet_runtime::locations::Locations;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Every settings file of the session in `at`.
pub fn load(at: &Locations) -> Result<Settings, ConfigError> {
    load_with(at, &SettingsFlags::default())
}

/// The settings files `flags` lets in, then the `--settings` layer above them — each file the
/// repository wrote passed through the trust gate.
pub fn load_with(at: &Locations, flags: &SettingsFlags) -> Result<Settings, ConfigError> {
    let (files, report) = file_stack(at, flags)?;
    let mut settings = Settings::default();
    // The files first, then the flag layer: a broken file is reported before a bad flag.
    for entry in files {
        settings.add(entry)?;
    }
    if let Some(entry) = flag_entry(at, flags)? {
        settings.add(entry)?;
    }
    settings.trust = report;
    Ok(settings)
}

/// Every settings file that may apply, lowest precedence first, with its layer and the folder
/// its path rules are relative to.
pub fn candidate_files(at: &Locations) -> Vec<(PathBuf, PathBuf, Layer)> {
    let mut files = Vec::new();
    if let Some(home) = &at.fleet_home {
        let base = home
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home.clone());
        files.push((home.join("settings.json"), base, Layer::User));
    }
    if let (Some(home), Some(file)) = (&at.home, at.claude_settings()) {
        files.push((file, home.clone(), Layer::ClaudeUser));
    }
    if let Some(project) = project_dir(at) {
        for (rel, layer) in [
            (".claude/settings.json", Layer::Project),
            (".claude/settings.local.json", Layer::ProjectLocal),
            (".fleet/settings.json", Layer::Project),
            (".fleet/settings.local.json", Layer::ProjectLocal),
        ] {
            files.push((project.join(rel), project.clone(), layer));
        }
    }
    files
}

/// The layer stack as it will be applied (texts already through the trust gate), and the
/// gate's report.
pub fn stack(
    at: &Locations,
    flags: &SettingsFlags,
) -> Result<(Vec<StackEntry>, TrustReport), ConfigError> {
    let (mut stack, report) = file_stack(at, flags)?;
    stack.extend(flag_entry(at, flags)?);
    Ok((stack, report))
}

/// The `--settings` layer's entry, if the flag was given.
fn flag_entry(at: &Locations, flags: &SettingsFlags) -> Result<Option<StackEntry>, ConfigError> {
    Ok(flags.layer(&at.cwd)?.map(|layer| StackEntry {
        layer: Layer::Flags,
        label: layer.label,
        path: layer.path,
        base: project_dir(at).unwrap_or_else(|| at.cwd.clone()),
        text: layer.text,
    }))
}

/// Every layer below the flags: the files `flags` lets in, through the trust gate, and the
/// user's stored approvals.
fn file_stack(
    at: &Locations,
    flags: &SettingsFlags,
) -> Result<(Vec<StackEntry>, TrustReport), ConfigError> {
    let loads = |layer: Layer| layer.setting_source().is_none_or(|s| flags.loads(s));
    let root = trust::repository_of(&at.cwd);
    let mut report = TrustReport {
        root: Some(root.clone()),
        user_settings: at.fleet_settings(),
        ..TrustReport::default()
    };
    let mut files: Vec<GatedFile> = Vec::new();
    for (path, base, layer) in candidate_files(at) {
        if files.iter().any(|f| f.path == path) || !loads(layer) {
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        files.push(GatedFile::read(path, base, layer, text, &root, &mut report));
    }
    report.items.extend(trust::repository_items(at, &root));
    report.hash = trust::hash(&report.items);
    report.trusted = report.items.is_empty()
        || flags
            .trust
            .unwrap_or_else(|| trust::stored_trust(at, &root, &report.hash));
    let mut stack: Vec<StackEntry> = files
        .into_iter()
        .map(|file| file.entry(report.trusted))
        .collect();
    // The user's own approvals for this repository, kept where the repository cannot write.
    let approved = trust::stored_allow_rules(at, &root);
    if !approved.is_empty() && loads(Layer::UserStore) {
        stack.push(StackEntry {
            layer: Layer::UserStore,
            label: trust::store_label(at, &root),
            path: at.trust_store().map(|s| s.path().to_path_buf()),
            base: root.clone(),
            text: serde_json::json!({"permissions": {"allow": approved}}).to_string(),
        });
    }
    Ok((stack, report))
}

/// One settings file on its way through the trust gate: as written, and without what needs
/// trust.
struct GatedFile {
    path: PathBuf,
    base: PathBuf,
    layer: Layer,
    text: String,
    /// The file without user-only keys (when it is not the user's), if that changed it.
    own: Option<Map<String, Value>>,
    /// The file without what needs trust, if the repository wrote it and asked for any.
    untrusted: Option<Map<String, Value>>,
}

impl GatedFile {
    fn read(
        path: PathBuf,
        base: PathBuf,
        layer: Layer,
        text: String,
        root: &Path,
        report: &mut TrustReport,
    ) -> Self {
        let mut file = Self {
            path,
            base,
            layer,
            text,
            own: None,
            untrusted: None,
        };
        // Not an object (or not JSON): `Settings::add` reports it with line and column.
        let Ok(Value::Object(mut doc)) = serde_json::from_str(&file.text) else {
            return file;
        };
        if layer.may_be_repository() {
            let removed = trust::widening::strip_user_only(&mut doc);
            if !removed.is_empty() {
                report.user_only_ignored.extend(removed);
                file.own = Some(doc.clone());
            }
        }
        let repository_wrote = match layer {
            Layer::Project => true,
            Layer::ProjectLocal => {
                let tracked = fleet_runtime::tracked::tracked_by_git(&file.path);
                if tracked {
                    report.tracked_local.push(file.path.clone());
                }
                tracked
            }
            _ => false,
        };
        if repository_wrote {
            let shown = file
                .path
                .strip_prefix(root)
                .unwrap_or(&file.path)
                .display()
                .to_string();
            let items = trust::widening::strip(&mut doc, &shown);
            if !items.is_empty() {
                report.items.extend(items);
                file.untrusted = Some(doc);
            }
        }
        file
    }

    /// The stack entry: the text as written (less user-only keys), or without what needs
    /// trust.
    fn entry(self, trusted: bool) -> StackEntry {
        let chosen = match (self.untrusted, self.own) {
            (Some(doc), _) if !trusted => Some(doc),
            (_, Some(doc)) => Some(doc),
            _ => None,
        };
        let text = match chosen {
            Some(doc) => Value::Object(doc).to_string(),
            None => self.text,
        };
        StackEntry {
            layer: self.layer,
            label: self.path.clone(),
            path: Some(self.path),
            base: self.base,
            text,
        }
    }
}
