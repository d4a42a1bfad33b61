//! `/permissions`: the rules in effect, and adding or removing one. Allow rules go to the
//! user's store (`$FLEET_HOME/trust.json`, keyed by the repository), where a repository cannot
//! plant one; ask and deny rules, which only tighten, to the project's
//! `.claude/settings.local.json`. Either way later sessions start with them, and the running
//! session gets them through the same permission updates an SDK host sends.

use fleet_runtime::controls::{
    Destination, PermissionUpdate, RuleBehavior, RuleValue, SessionControls,
};
use fleet_tools::permissions::Permissions;
use fleet_tui::port::RuleEdit;

/// `Bash(git status)` as the tool and what within it; `Read` as the whole tool.
pub fn rule_value(text: &str) -> RuleValue {
    let text = text.trim();
    match text.split_once('(') {
        Some((tool, rest)) if rest.ends_with(')') => RuleValue {
            tool_name: tool.trim().to_string(),
            rule_content: Some(rest[..rest.len() - 1].to_string()),
        },
        _ => RuleValue {
            tool_name: text.to_string(),
            rule_content: None,
        },
    }
}

/// Every rule in effect, by kind, each with where it came from.
pub fn listing(permissions: &Permissions) -> String {
    let granted = permissions.granted_rules();
    let mut out = format!("Permission mode: {}", permissions.mode().as_str());
    let kinds = [
        ("allow", &permissions.rules.allow, &granted.allow),
        ("ask", &permissions.rules.ask, &granted.ask),
        ("deny", &permissions.rules.deny, &granted.deny),
    ];
    for (kind, own, added) in kinds {
        out.push_str(&format!("\n{kind}:"));
        if own.is_empty() && added.is_empty() {
            out.push_str(" none");
        }
        for rule in own.iter().chain(added.iter()) {
            out.push_str(&format!("\n  {rule}  ({})", rule.source()));
        }
    }
    out
}

/// Adds or removes one rule, in `.claude/settings.local.json` and in the running session.
/// Returns what the person is told; an error names the bad rule or the file.
pub fn edit(
    controls: &SessionControls,
    edit: &RuleEdit,
    cwd: &std::path::Path,
) -> Result<String, String> {
    let behavior = match edit.kind.trim() {
        "allow" => RuleBehavior::Allow,
        "ask" => RuleBehavior::Ask,
        "deny" => RuleBehavior::Deny,
        other => return Err(format!("no rule kind {other:?}: use allow, ask or deny")),
    };
    let rule = edit.rule.trim();
    if rule.is_empty() {
        return Err("no rule given: name a tool, e.g. `Bash(npm test)` or `Read`".into());
    }
    let rules = vec![rule_value(rule)];
    let stored = behavior == RuleBehavior::Allow;
    let destination = if stored {
        Destination::Session
    } else {
        Destination::LocalSettings
    };
    let update = if edit.remove {
        PermissionUpdate::RemoveRules {
            rules,
            behavior,
            destination,
        }
    } else {
        PermissionUpdate::AddRules {
            rules,
            behavior,
            destination,
        }
    };
    controls
        .apply_permission_updates(&[update])
        .map_err(|err| err.to_string())?;
    let file = if stored {
        let root = crate::trust::repository_of(cwd);
        crate::trust::store_allow_rules(&root, &[rule.to_string()], edit.remove)
            .map_err(|e| format!("{e:#}"))?
            .display()
            .to_string()
    } else {
        ".claude/settings.local.json".to_string()
    };
    Ok(if edit.remove {
        format!(
            "Removed {} rule `{rule}` from {file} (a rule loaded when the session started stays \
             in effect until it restarts)",
            edit.kind.trim()
        )
    } else {
        format!("Added {} rule `{rule}` to {file}", edit.kind.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_split_into_tool_and_content() {
        let value = rule_value("Bash(git status)");
        assert_eq!(value.tool_name, "Bash");
        assert_eq!(value.rule_content.as_deref(), Some("git status"));
        assert_eq!(value.to_rule_string(), "Bash(git status)");
        let whole = rule_value(" Read ");
        assert_eq!(whole.tool_name, "Read");
        assert_eq!(whole.rule_content, None);
    }
}
