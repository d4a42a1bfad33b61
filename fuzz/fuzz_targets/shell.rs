//! The shell parser and everything judged on its model of a command line: the wrapper
//! unwrapping (`timeout`, `xargs`, `watch -n`…), the read-only classifier, the scratch-only
//! policy, and the Bash permission check with allow, ask and deny rules. A model writes these
//! lines, so any text can arrive. Checks: no panic (the `watch --interval` crash of issue 31
//! was one) and no unbounded work or allocation.
#![no_main]

use fleet_fuzz::scratch;
use fleet_tools::permissions::Permissions;
use fleet_tools::permissions::{PermissionMode, RuleKind, RuleSet};
use fleet_tools::shell::{self, wrappers};
use fleet_tools::tool::Access;
use fleet_tools::{check_command, CommandPolicy, Workspace};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

fn permissions() -> &'static Permissions {
    static PERMISSIONS: OnceLock<Permissions> = OnceLock::new();
    PERMISSIONS.get_or_init(|| {
        let base = scratch().to_path_buf();
        let mut rules = RuleSet::default();
        let source = "fuzz";
        for (kind, rule) in [
            (RuleKind::Allow, "Bash(npm run *)"),
            (RuleKind::Allow, "Bash(git status)"),
            (RuleKind::Allow, "Bash(cargo test:*)"),
            (RuleKind::Ask, "Bash(git push *)"),
            (RuleKind::Deny, "Bash(rm *)"),
            (RuleKind::Deny, "Bash(curl:*)"),
        ] {
            rules
                .add(kind, rule, base.clone(), source)
                .expect("the fixed rules parse");
        }
        Permissions::new(
            PermissionMode::Default,
            rules,
            Arc::new(Workspace::new(base)),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = shell::parse(line);
    for command in parsed.lines().into_iter().flat_map(|l| &l.commands) {
        let _ = wrappers::runs(command);
        if let Some(word) = command.words.first() {
            let _ = shell::program_name(word);
        }
    }
    let cwd = scratch();
    let _ = check_command(line, &CommandPolicy::ReadOnly, cwd);
    let scope = CommandPolicy::WritesOnlyUnder(vec![cwd.join("out")]);
    let _ = check_command(line, &scope, cwd);
    let decision = permissions().check("Bash", false, &Access::Command(line.into()), cwd);
    let _ = decision.message();
});
