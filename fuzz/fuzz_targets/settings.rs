//! A settings file (`.claude/settings.json`, `.fleet/settings.json`, `--settings`) read the
//! way fleet reads one: its `permissions` rules compiled and used, `sandbox`,
//! `shellEnvironmentPolicy`, `hooks`, `effort` and `teammateMode`. The file-level glue lives in
//! the `fleet` binary and is covered by its own property test (`fuzz_props` in fleet-cli);
//! this target drives the library parsers it hands each key to. Checks: no panic.
#![no_main]

use fleet_runtime::backends::detect::TeammateMode;
use fleet_runtime::hooks::HookSet;
use fleet_tools::permissions::{split_rule_list, PermissionSettings, Permissions};
use fleet_tools::sandbox::{EnvPolicy, SandboxConfig, SandboxSettings};
use fleet_tools::tool::Access;
use fleet_tools::Workspace;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // `--allowedTools "Bash(git *) Read"` style lists.
    let _ = split_rule_list(text);
    let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let base = Path::new("/fuzz/project");
    let source = "/fuzz/project/.claude/settings.json";

    if let Some(Ok(settings)) = doc
        .get("permissions")
        .map(|v| serde_json::from_value::<PermissionSettings>(v.clone()))
    {
        let mut builder = Permissions::builder(Workspace::new(base));
        builder.home(Some("/fuzz/home".into()));
        if builder.settings(&settings, base, source).is_ok() {
            let permissions = builder.build();
            let cwd = Path::new("/fuzz/project/src");
            for (tool, read_only, access) in [
                ("Read", true, Access::Read("/fuzz/project/a.rs".into())),
                ("Write", false, Access::Write("/fuzz/home/.bashrc".into())),
                (
                    "Bash",
                    false,
                    Access::Command("git push --force origin main".into()),
                ),
                (
                    "Bash",
                    false,
                    Access::Command("npm run test && rm -rf build".into()),
                ),
                ("WebFetch", true, Access::Other),
            ] {
                let decision = permissions.check(tool, read_only, &access, cwd);
                let _ = decision.message();
                let _ = decision.suggested_rules();
            }
        }
    }
    if let Some(Ok(sandbox)) = doc
        .get("sandbox")
        .map(|v| serde_json::from_value::<SandboxSettings>(v.clone()))
    {
        let mut config = SandboxConfig::default();
        if config.add_settings(&sandbox, base, source).is_ok() {
            let _ = config.allow_read_rules();
        }
    }
    if let Some(Ok(policy)) = doc
        .get("shellEnvironmentPolicy")
        .map(|v| serde_json::from_value::<EnvPolicy>(v.clone()))
    {
        let vars = [
            ("PATH", "/usr/bin"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("HOME", "/h"),
        ];
        let _ = policy.apply(vars.iter().map(|(k, v)| ((*k).into(), (*v).into())));
    }
    if let Some(hooks) = doc.get("hooks") {
        let _ = HookSet::parse(hooks, source);
    }
    if let Some(effort) = doc.get("effort") {
        let text = effort
            .as_str()
            .map_or_else(|| effort.to_string(), str::to_string);
        let _ = fleet_runtime::effort::parse_effort(&text);
    }
    if let Some(Value::String(mode)) = doc.get("teammateMode") {
        let _ = mode.parse::<TeammateMode>();
    }
});
