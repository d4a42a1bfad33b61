//! The layer stack's precedence, the sources it records, and that the runtime's loaders read
//! the same folders — all from hand-made [`Locations`], never the process environment.

use super::*;
use fleet_runtime::mcp::config::{McpConfig, McpConfigSources};
use std::path::{Path, PathBuf};

/// A user home, a fleet home and a project, each in its own folder of one temporary folder.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.claude")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        Self { _dir: dir, root }
    }

    fn at(&self) -> Locations {
        Locations {
            cwd: self.root.join("repo"),
            home: Some(self.root.join("home")),
            fleet_home: Some(self.root.join("fleet")),
            ..Locations::default()
        }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

fn inline(json: &str) -> SettingsFlags {
    SettingsFlags::parse(None, Some(json)).unwrap()
}

/// Every file in the stack, lowest first, with the layer it is read as.
const STACK: [(&str, Layer); 6] = [
    ("fleet/settings.json", Layer::User),
    ("home/.claude/settings.json", Layer::ClaudeUser),
    ("repo/.claude/settings.json", Layer::Project),
    ("repo/.claude/settings.local.json", Layer::ProjectLocal),
    ("repo/.fleet/settings.json", Layer::Project),
    ("repo/.fleet/settings.local.json", Layer::ProjectLocal),
];

#[test]
fn each_layer_overrides_the_one_below_and_flags_override_them_all() {
    let fx = Fixture::new();
    let paths: Vec<PathBuf> = STACK
        .iter()
        .map(|(rel, _)| fx.write(rel, &format!(r#"{{"model": "{rel}"}}"#)))
        .collect();
    let flagged = load_with(&fx.at(), &inline(r#"{"model": "flag"}"#)).unwrap();
    let model = flagged.model_sourced().unwrap();
    assert_eq!(model.value, "flag");
    assert_eq!(model.source, Source::new(Layer::Flags, None));
    // Take the top file away, one at a time: the next one down wins, and says so.
    for (index, (rel, layer)) in STACK.iter().enumerate().rev() {
        let settings = load(&fx.at()).unwrap();
        let model = settings.model_sourced().unwrap();
        assert_eq!(model.value, *rel);
        assert_eq!(model.source.layer, *layer, "{rel}");
        assert_eq!(model.source.path.as_ref(), Some(&paths[index]));
        assert_eq!(
            settings.sources,
            paths[..=index],
            "files read, lowest first"
        );
        std::fs::remove_file(&paths[index]).unwrap();
    }
    assert_eq!(load(&fx.at()).unwrap().model_sourced(), None);
}

#[test]
fn a_settings_file_flag_wins_over_the_project_and_names_its_file() {
    let fx = Fixture::new();
    fx.write("repo/.claude/settings.local.json", r#"{"model": "local"}"#);
    let flag_file = fx.write(
        "repo/mine.json",
        r#"{"model": "file", "maxOutputTokens": 7}"#,
    );
    let settings = load_with(&fx.at(), &inline("mine.json")).unwrap();
    let model = settings.model_sourced().unwrap();
    assert_eq!(model.value, "file");
    assert_eq!(model.source, Source::new(Layer::Flags, Some(flag_file)));
    assert_eq!(settings.max_output_tokens_sourced().unwrap().value, 7);
}

#[test]
fn every_value_remembers_its_own_source() {
    let fx = Fixture::new();
    let user = fx.write(
        "fleet/settings.json",
        r#"{"model": "m", "remote": {"natsUrl": "nats://u:1"},
            "permissions": {"allow": ["Read"]}}"#,
    );
    let project = fx.write(
        "repo/.claude/settings.json",
        r#"{"provider": "openai", "permissions": {"deny": ["Bash(rm:*)"]}}"#,
    );
    let settings = load_with(&fx.at(), &inline(r#"{"maxOutputTokens": 9}"#)).unwrap();
    let origins = &settings.origins;
    assert_eq!(
        origins.model,
        Some(Source::new(Layer::User, Some(user.clone())))
    );
    assert_eq!(
        settings.nats_url_sourced().unwrap().source.path.as_ref(),
        Some(&user)
    );
    assert_eq!(
        settings.provider_sourced().unwrap().source,
        Source::new(Layer::Project, Some(project.clone()))
    );
    assert_eq!(
        origins.max_output_tokens.as_ref().unwrap().layer,
        Layer::Flags
    );
    assert_eq!(origins.effort, None);
    let layers: Vec<(Layer, &Path)> = settings
        .permissions
        .iter()
        .map(|p| (p.layer, p.file.as_path()))
        .collect();
    assert_eq!(
        layers,
        [
            (Layer::User, user.as_path()),
            (Layer::Project, project.as_path())
        ]
    );
}

#[test]
fn setting_sources_leave_out_whole_layers_but_never_the_flag_layer() {
    let fx = Fixture::new();
    fx.write("fleet/settings.json", r#"{"model": "user"}"#);
    fx.write("repo/.claude/settings.json", r#"{"model": "project"}"#);
    let mut flags = SettingsFlags::parse(Some("user"), None).unwrap();
    let settings = load_with(&fx.at(), &flags).unwrap();
    assert_eq!(settings.model_sourced().unwrap().source.layer, Layer::User);
    flags.sources = Some(Vec::new());
    flags.layer = Some(r#"{"effort": "low"}"#.into());
    let settings = load_with(&fx.at(), &flags).unwrap();
    assert_eq!(settings.model, None);
    assert_eq!(settings.sources, [PathBuf::from("--settings")]);
    assert_eq!(settings.origins.effort.unwrap().layer, Layer::Flags);
}

#[test]
fn a_repository_widens_nothing_until_trusted_but_the_user_always_does() {
    let fx = Fixture::new();
    fx.write(
        "fleet/settings.json",
        r#"{"permissions": {"allow": ["Read"]}}"#,
    );
    fx.write(
        "repo/.claude/settings.json",
        r#"{"permissions": {"allow": ["Bash"], "deny": ["Write"]}, "hooks": {"Stop": []}}"#,
    );
    let settings = load(&fx.at()).unwrap();
    assert!(!settings.trust.trusted);
    let whats: Vec<&str> = settings
        .trust
        .items
        .iter()
        .map(|i| i.what.as_str())
        .collect();
    assert_eq!(whats, ["hooks", "permissions.allow"]);
    assert!(settings.hooks.is_empty(), "{:?}", settings.hooks);
    let allowed: Vec<(Layer, Vec<String>)> = settings
        .permissions
        .iter()
        .map(|p| (p.layer, p.settings.allow.clone()))
        .collect();
    assert_eq!(
        allowed,
        [
            (Layer::User, vec!["Read".to_string()]),
            (Layer::Project, Vec::new())
        ],
        "the repository's deny stays, its allow waits"
    );
    let trusted = SettingsFlags {
        trust: Some(true),
        ..SettingsFlags::default()
    };
    let settings = load_with(&fx.at(), &trusted).unwrap();
    assert!(settings.trust.trusted);
    assert_eq!(settings.permissions[1].settings.allow, ["Bash"]);
    assert_eq!(settings.hooks.len(), 1);
}

#[test]
fn errors_name_the_file_and_the_field() {
    let fx = Fixture::new();
    let file = fx.write("repo/.claude/settings.local.json", r#"{"provider": "x"}"#);
    let err = load(&fx.at()).unwrap_err();
    assert_eq!(err.field(), Some("provider"));
    assert!(
        err.to_string()
            .starts_with(&format!("{}: `provider` is \"x\"", file.display())),
        "{err}"
    );
    fx.write("repo/.claude/settings.local.json", "{\n  \"model\": }");
    let err = load(&fx.at()).unwrap_err();
    assert!(
        matches!(&err, ConfigError::Json { file: f, line: 2, .. } if *f == file),
        "{err}"
    );
}

#[test]
fn locations_come_from_the_variables_given_once() {
    let vars = |name: &str| match name {
        "HOME" => Some("/h".into()),
        "FLEET_HOME" => Some("".into()),
        "CLAUDE_CONFIG_DIR" => Some("/c".into()),
        _ => None,
    };
    let at = locations_from(Path::new("/w"), vars);
    assert_eq!(at.fleet_home, Some(PathBuf::from("/h/.fleet")));
    assert_eq!(at.claude_config_dir, Some(PathBuf::from("/c")));
    assert_eq!(at.claude_json(), Some(PathBuf::from("/c/.claude.json")));
    assert_eq!(at.managed_dir, None);
}

#[test]
fn mcp_and_skill_sources_read_the_same_locations() {
    let fx = Fixture::new();
    let mut at = fx.at();
    at.claude_config_dir = Some(fx.root.join("claude-config"));
    // Claude Code's user servers, in the CLAUDE_CONFIG_DIR of the Locations only.
    fx.write(
        "claude-config/.claude.json",
        r#"{"mcpServers": {"mine": {"command": "mine-mcp"}}}"#,
    );
    fx.write(
        "fleet/settings.json",
        r#"{"enabledMcpjsonServers": ["proj"], "enabledProjectSkillTools": ["sk"]}"#,
    );
    fx.write(
        "repo/.mcp.json",
        r#"{"mcpServers": {"proj": {"command": "p"}, "other": {"command": "o"}}}"#,
    );
    let sources = McpConfigSources::discover(&at, Vec::new(), false);
    assert_eq!(sources.claude_json, at.claude_json());
    assert_eq!(sources.fleet_settings, at.fleet_settings());
    assert_eq!(sources.approval_files[..2], at.user_settings_files()[..]);
    let config = McpConfig::load(&at, Vec::new(), false);
    assert!(config.get("mine").is_some(), "{config:?}");
    assert!(
        config.get("proj").is_some(),
        "approved in the user settings"
    );
    let unapproved: Vec<&str> = config.unapproved.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(unapproved, ["other"]);
    // The skills' approvals come from the same user settings file.
    let skills = fleet_runtime::skills::SkillApproval::read(&at.agent_sources(None));
    assert!(skills.enabled.contains("sk"));
}

#[test]
fn a_managed_folder_adds_no_layer_yet() {
    // fleet reads no managed settings today (the `Managed` slot is reserved): a file there
    // changes nothing, and the slot is never filtered by `--setting-sources`.
    let fx = Fixture::new();
    fx.write("repo/.claude/settings.json", r#"{"model": "project"}"#);
    fx.write("managed/managed-settings.json", r#"{"model": "managed"}"#);
    let mut at = fx.at();
    at.managed_dir = Some(fx.root.join("managed"));
    let settings = load(&at).unwrap();
    assert_eq!(settings.model_sourced().unwrap().layer(), Layer::Project);
    assert_eq!(Layer::Managed.setting_source(), None);
}

#[test]
fn the_stack_lists_every_layer_in_order_with_the_users_approvals_below_the_flags() {
    let fx = Fixture::new();
    for (rel, _) in STACK {
        fx.write(rel, "{}");
    }
    let at = fx.at();
    let root = trust::repository_of(&at.cwd);
    at.trust_store()
        .unwrap()
        .update(&root, |p| p.allow.push("Bash(ls:*)".into()))
        .unwrap();
    let (stack, _) = load::stack(&at, &inline(r#"{"model": "flag"}"#)).unwrap();
    let layers: Vec<Layer> = stack.iter().map(|e| e.layer).collect();
    let mut wanted: Vec<Layer> = STACK.iter().map(|(_, layer)| *layer).collect();
    wanted.extend([Layer::UserStore, Layer::Flags]);
    assert_eq!(layers, wanted);
    let settings = load(&at).unwrap();
    let store = settings.permissions.last().unwrap();
    assert_eq!(store.layer, Layer::UserStore);
    assert_eq!(store.settings.allow, ["Bash(ls:*)"]);
    // `--setting-sources` without `local` leaves the stored approvals out too.
    let no_local = SettingsFlags::parse(Some("user,project"), None).unwrap();
    let (stack, _) = load::stack(&at, &no_local).unwrap();
    assert!(stack
        .iter()
        .all(|e| e.layer != Layer::UserStore && e.layer != Layer::ProjectLocal));
}
