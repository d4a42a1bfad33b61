//! Where agent definitions come from and which one wins: `--agents` JSON, the project's
//! folders (walking up to the repository root), the user's folders, the built-ins.
#![allow(clippy::unwrap_used)]

use fleet_runtime::definitions::{
    builtin_agents, parse_command_line_agents, AgentCatalog, AgentSource, AgentSources,
    ModelSetting, Restriction,
};
use std::path::{Path, PathBuf};

/// A temporary layout: `repo/` (the repository root), `home/` (the user's home), `fleet/`
/// (the fleet home), and an `outside/` folder above nothing.
struct Layout {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["repo", "home", "fleet"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        Self { _tmp: tmp, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Writes an agent file whose description says where it is.
    fn agent(&self, rel: &str, name: &str) -> PathBuf {
        self.write(
            rel,
            &format!("---\nname: {name}\ndescription: from {rel}\n---\nPrompt of {rel}.\n"),
        )
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn sources(&self, cwd: &str) -> AgentSources {
        AgentSources {
            cwd: self.path(cwd),
            repo_root: Some(self.path("repo")),
            fleet_home: Some(self.path("fleet")),
            user_home: Some(self.path("home")),
            command_line: None,
        }
    }
}

fn description<'a>(catalog: &'a AgentCatalog, name: &str) -> &'a str {
    &catalog.get(name).unwrap().description
}

#[test]
fn precedence_fleet_then_claude_then_user_then_builtin() {
    let l = Layout::new();
    for name in ["a", "b", "c", "d"] {
        l.agent(&format!("home/.claude/agents/{name}.md"), name);
    }
    for name in ["a", "b", "c"] {
        l.agent(&format!("fleet/agents/{name}.md"), name);
    }
    for name in ["a", "b"] {
        l.agent(&format!("repo/.claude/agents/{name}.md"), name);
    }
    l.agent("repo/.fleet/agents/a.md", "a");
    l.agent("home/.claude/agents/explore.md", "Explore");

    let catalog = AgentCatalog::load(&l.sources("repo")).unwrap();
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
    assert_eq!(description(&catalog, "a"), "from repo/.fleet/agents/a.md");
    assert_eq!(description(&catalog, "b"), "from repo/.claude/agents/b.md");
    assert_eq!(description(&catalog, "c"), "from fleet/agents/c.md");
    assert_eq!(description(&catalog, "d"), "from home/.claude/agents/d.md");
    assert_eq!(
        description(&catalog, "Explore"),
        "from home/.claude/agents/explore.md"
    );
    assert!(matches!(
        catalog.get("a").unwrap().source,
        AgentSource::Project(_)
    ));
    assert!(matches!(
        catalog.get("c").unwrap().source,
        AgentSource::User(_)
    ));
    assert_eq!(
        catalog.get("a").unwrap().source.path(),
        Some(l.path("repo/.fleet/agents/a.md").as_path())
    );
    assert!(catalog.get("general-purpose").unwrap().is_builtin());

    // Everything hidden is still there, in precedence order.
    let shadowed: Vec<(&str, &str)> = catalog
        .shadowed()
        .iter()
        .map(|d| (d.name.as_str(), d.description.as_str()))
        .collect();
    assert_eq!(shadowed.len(), 3 + 2 + 1 + 1);
    assert_eq!(shadowed[0], ("a", "from repo/.claude/agents/a.md"));
    assert!(shadowed
        .iter()
        .any(|(n, d)| *n == "Explore" && !d.starts_with("from")));
}

#[test]
fn nearest_project_folder_wins_and_the_walk_stops_at_the_repository_root() {
    let l = Layout::new();
    l.agent("repo/.claude/agents/shared.md", "shared");
    l.agent("repo/.claude/agents/outer.md", "outer");
    l.agent("repo/pkg/.claude/agents/shared.md", "shared");
    l.agent("repo/pkg/.fleet/agents/f.md", "f");
    l.agent(".claude/agents/above-root.md", "above-root");
    std::fs::create_dir_all(l.path("repo/pkg/src")).unwrap();

    let catalog = AgentCatalog::load(&l.sources("repo/pkg/src")).unwrap();
    assert_eq!(
        description(&catalog, "shared"),
        "from repo/pkg/.claude/agents/shared.md"
    );
    assert!(catalog.get("f").is_some());
    // Only the nearest `.claude/agents/` counts: the root's is farther than pkg's.
    assert!(catalog.get("outer").is_none());
    assert!(catalog.get("above-root").is_none());

    let mut no_root = l.sources("repo/pkg/src");
    no_root.repo_root = None;
    let catalog = AgentCatalog::load(&no_root).unwrap();
    assert!(catalog.get("shared").is_none(), "only cwd is searched");
    no_root.cwd = l.path("repo/pkg");
    assert!(AgentCatalog::load(&no_root)
        .unwrap()
        .get("shared")
        .is_some());
}

#[test]
fn folders_are_searched_recursively_in_path_order() {
    let l = Layout::new();
    l.agent("repo/.claude/agents/team/b/x.md", "x");
    l.agent("repo/.claude/agents/team/a/x.md", "x");
    l.agent("repo/.claude/agents/z.MD", "upper-ext");
    l.write("repo/.claude/agents/notes.txt", "not an agent");
    l.write("repo/.claude/agents/README", "not an agent");
    l.agent("repo/.claude/agents/.hidden/h.md", "hidden");

    let catalog = AgentCatalog::load(&l.sources("repo")).unwrap();
    assert_eq!(
        description(&catalog, "x"),
        "from repo/.claude/agents/team/a/x.md"
    );
    assert!(catalog.get("upper-ext").is_some());
    assert!(catalog.get("hidden").is_none());
    // Same folder, same name: the second file is not a shadowed definition but a mistake.
    assert!(catalog.shadowed().iter().all(|d| d.name != "x"));
    let warnings = catalog.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        warnings[0].path.as_deref(),
        Some(l.path("repo/.claude/agents/team/b/x.md").as_path())
    );
    assert!(warnings[0].message.contains("already defined by"));
}

#[test]
fn a_broken_file_is_skipped_with_its_path_and_line_while_others_load() {
    let l = Layout::new();
    l.agent("repo/.claude/agents/good.md", "good");
    let broken = l.write(
        "repo/.claude/agents/broken.md",
        "---\nname: broken\ntools: Read\n---\n\n",
    );
    let odd = l.write(
        "repo/.claude/agents/odd.md",
        "---\nname: odd\ndescription: d\nmaxTurns: lots\n---\nP\n",
    );
    l.write("repo/.claude/agents/binary.md", "");
    std::fs::write(l.path("repo/.claude/agents/binary.md"), [0xff, 0xfe, 0x00]).unwrap();

    let catalog = AgentCatalog::load(&l.sources("repo")).unwrap();
    assert!(catalog.get("good").is_some());
    assert!(catalog.get("odd").is_some());
    assert!(catalog.get("broken").is_none());
    let shown: Vec<String> = catalog.warnings().iter().map(|w| w.to_string()).collect();
    assert!(shown
        .iter()
        .any(|w| w.contains("binary.md") && w.contains("UTF-8")));
    assert!(shown.contains(&format!(
        "{}:1: description is missing; add a line `description: when to use this agent` \
         to the frontmatter; file skipped",
        broken.display()
    )));
    assert!(shown
        .iter()
        .any(|w| w.starts_with(&format!("{}:4: maxTurns", odd.display()))));
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let l = Layout::new();
    l.agent("repo/.claude/agents/ok.md", "ok");
    l.agent("repo/.claude/agents/locked/secret.md", "secret");
    let locked = l.path("repo/.claude/agents/locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = std::fs::read_dir(&locked).is_ok(); // running as root
    let catalog = AgentCatalog::load(&l.sources("repo")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(catalog.get("ok").is_some());
    if !readable_anyway {
        assert!(catalog.get("secret").is_none());
        assert_eq!(
            catalog.warnings()[0].path.as_deref(),
            Some(locked.as_path())
        );
    }
}

#[test]
fn home_folder_is_never_the_project() {
    let l = Layout::new();
    l.agent("home/.claude/agents/mine.md", "mine");
    let mut sources = l.sources("home");
    sources.repo_root = None;
    let catalog = AgentCatalog::load(&sources).unwrap();
    assert!(matches!(
        catalog.get("mine").unwrap().source,
        AgentSource::User(_)
    ));
    assert!(catalog.shadowed().iter().all(|d| d.name != "mine"));
}

#[test]
fn command_line_agents_come_first() {
    let l = Layout::new();
    l.agent("repo/.fleet/agents/reviewer.md", "reviewer");
    let mut sources = l.sources("repo");
    sources.command_line = Some(
        r#"{"reviewer": {"description": "Reviews", "prompt": "You review.",
            "tools": ["Read", "Bash(git *)"], "model": "inherit", "maxTurns": "lots",
            "permissionMode": "plan", "background": true},
           "second": {"description": "Two", "prompt": "P", "tools": "Read, Grep"}}"#
            .into(),
    );
    let catalog = AgentCatalog::load(&sources).unwrap();
    let reviewer = catalog.get("reviewer").unwrap();
    assert_eq!(reviewer.source, AgentSource::CommandLine);
    assert_eq!(reviewer.prompt, "You review.");
    assert_eq!(reviewer.model, Some(ModelSetting::Inherit));
    assert_eq!(
        reviewer.tools.as_ref().unwrap()[1].specifier.as_deref(),
        Some("git *")
    );
    assert!(reviewer.background);
    assert_eq!(catalog.names()[..2], ["reviewer", "second"]);
    assert_eq!(
        catalog.shadowed()[0].description,
        "from repo/.fleet/agents/reviewer.md"
    );
    let warning = &catalog.warnings()[0];
    assert_eq!(warning.path, None);
    assert!(warning
        .message
        .starts_with("--agents: agent \"reviewer\": maxTurns"));
}

#[test]
fn bad_command_line_json_is_an_error_naming_agent_and_field() {
    let err = |json: &str| parse_command_line_agents(json).unwrap_err().to_string();
    assert!(err("{not json").contains("--agents is not valid JSON"));
    assert!(err("[1]").contains("must be a JSON object, found a list"));
    assert!(err(r#"{"x": "text"}"#).contains(r#"agent "x": must be an object"#));
    let missing_prompt = err(r#"{"rev": {"description": "d"}}"#);
    assert!(
        missing_prompt.contains(r#"agent "rev": prompt is missing"#),
        "{missing_prompt}"
    );
    let missing_description = err(r#"{"rev": {"prompt": "p"}}"#);
    assert!(missing_description.contains(r#"agent "rev": description is missing"#));
    assert!(err(r#"{"rev": {"prompt": " ", "description": "d"}}"#).contains("prompt is empty"));
    assert!(err(r#"{"rev": {"prompt": "p", "description": ""}}"#).contains("description is empty"));

    let l = Layout::new();
    let mut sources = l.sources("repo");
    sources.command_line = Some(r#"{"a": {"prompt": "p"}}"#.into());
    let e = AgentCatalog::load(&sources).unwrap_err();
    assert!(e.message.contains(r#"agent "a": description is missing"#));
    assert_eq!(parse_command_line_agents("{}").unwrap(), vec![]);
}

#[test]
fn builtins_are_present_with_their_restrictions() {
    let catalog = AgentCatalog::builtin_only();
    assert_eq!(
        catalog.names(),
        ["general-purpose", "Explore", "Plan", "verification"]
    );
    let general = catalog.get("general-purpose").unwrap();
    assert_eq!(
        (general.tools.as_ref(), &general.model),
        (None, &Some(ModelSetting::Inherit))
    );
    assert_eq!(general.restriction, Restriction::None);

    for (name, model, turns) in [
        ("Explore", ModelSetting::Named("haiku".into()), 25),
        ("Plan", ModelSetting::Inherit, 50),
    ] {
        let def = catalog.get(name).unwrap();
        let tools: Vec<&str> = def
            .tools
            .as_ref()
            .unwrap()
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(tools, ["Read", "Glob", "Grep", "Bash"]);
        assert_eq!(def.model, Some(model));
        assert_eq!(def.max_turns, Some(turns));
        assert_eq!(def.restriction, Restriction::ReadOnly);
        assert!(def.prompt.contains("read-only"));
    }
    let plan = catalog.get("plan").unwrap(); // case-insensitive lookup
    for heading in [
        "## Goal",
        "## Files to change",
        "## Steps",
        "## Risks",
        "## How to verify",
    ] {
        assert!(plan.prompt.contains(heading), "{heading}");
    }

    let verification = catalog.get("verification").unwrap();
    assert_eq!(verification.tools, None);
    let denied: Vec<&str> = verification
        .disallowed_tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(denied, ["Agent", "Edit", "Write"]);
    assert_eq!(verification.restriction, Restriction::TempWritesOnly);
    for phrase in [
        "VERDICT: PASS",
        "VERDICT: FAIL",
        "VERDICT: PARTIAL",
        "adversarial",
    ] {
        assert!(verification.prompt.contains(phrase), "{phrase}");
    }
    assert!(verification
        .prompt
        .contains(&std::env::temp_dir().display().to_string()));
    assert!(builtin_agents().iter().all(|d| d.description.len() > 80));
}

#[test]
fn folders_lists_only_existing_ones_in_precedence_order() {
    let l = Layout::new();
    l.agent("repo/.claude/agents/a.md", "a");
    l.agent("home/.claude/agents/b.md", "b");
    let folders = l.sources("repo").folders();
    let paths: Vec<&Path> = folders.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(
        paths,
        [l.path("repo/.claude/agents"), l.path("home/.claude/agents")]
    );
}
