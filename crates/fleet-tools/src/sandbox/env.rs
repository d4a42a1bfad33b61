//! The environment tool processes get: fleet's own, minus anything that looks like a secret.
//!
//! Modelled on Codex's `shell_environment_policy`, and written in a settings file as
//! `"shellEnvironmentPolicy"`. In order:
//! 1. `inherit`: start from all of fleet's variables (`"all"`, the default), only the core ones
//!    (`"core"`: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `USER`, `USERNAME`, `TMPDIR`, `TEMP`,
//!    `TMP`, `LANG`, `LC_*`, `TERM`, `TZ`), or none (`"none"`);
//! 2. drop the default secret patterns ([`DEFAULT_EXCLUDES`]) unless `ignoreDefaultExcludes`;
//! 3. drop the names matching `exclude`;
//! 4. add `set` (name → value);
//! 5. when `includeOnly` is given, keep only the names matching it.
//!
//! Patterns are case-insensitive, with `*` for any run of characters and `?` for one.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;

/// Names that look like credentials: dropped unless `ignoreDefaultExcludes` is set.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "*_API_KEY",
    "*_APIKEY",
    "*_ACCESS_KEY",
    "*_ACCESS_KEY_ID",
    "*_SECRET_KEY",
    "*_PRIVATE_KEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRETS",
    "*PASSWORD*",
    "*PASSWD*",
    "*_CREDENTIALS",
    "*_CREDENTIAL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "ANTHROPIC_*",
    "OPENAI_*",
];

/// What `inherit = "core"` keeps.
const CORE: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG",
    "LC_*", "TERM", "TZ",
];

/// Which of fleet's variables a tool process starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inherit {
    #[default]
    All,
    Core,
    None,
}

/// The `shellEnvironmentPolicy` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvPolicy {
    /// `all` when not given.
    #[serde(default)]
    pub inherit: Option<Inherit>,
    #[serde(default)]
    pub ignore_default_excludes: Option<bool>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    #[serde(default)]
    pub include_only: Vec<String>,
}

impl EnvPolicy {
    /// Lays `later` (a settings file of higher precedence) over this one: its single values
    /// win when given, its lists and `set` add up.
    pub fn merge(&mut self, later: EnvPolicy) {
        self.inherit = later.inherit.or(self.inherit);
        self.ignore_default_excludes = later
            .ignore_default_excludes
            .or(self.ignore_default_excludes);
        self.exclude.extend(later.exclude);
        self.set.extend(later.set);
        self.include_only.extend(later.include_only);
    }

    /// The environment for a tool process, from `vars` (fleet's own).
    pub fn apply(
        &self,
        vars: impl Iterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut out: Vec<(OsString, OsString)> = vars
            .filter(|(name, _)| {
                let name = name.to_string_lossy();
                let inherited = match self.inherit.unwrap_or_default() {
                    Inherit::All => true,
                    Inherit::Core => matches_any(CORE, &name),
                    Inherit::None => false,
                };
                inherited
                    && (self.ignore_default_excludes == Some(true)
                        || !matches_any(DEFAULT_EXCLUDES, &name))
                    && !matches_any(&self.exclude, &name)
            })
            .collect();
        for (name, value) in &self.set {
            out.retain(|(n, _)| n != name.as_str());
            out.push((name.into(), value.into()));
        }
        if !self.include_only.is_empty() {
            out.retain(|(name, _)| matches_any(&self.include_only, &name.to_string_lossy()));
        }
        out
    }
}

fn matches_any<S: AsRef<str>>(patterns: &[S], name: &str) -> bool {
    patterns
        .iter()
        .any(|p| wildcard(p.as_ref().as_bytes(), name.as_bytes()))
}

/// `*` and `?` matching, ASCII case-insensitive.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| wildcard(rest, &name[skip..])),
        Some((&p, rest)) => name.split_first().is_some_and(|(&n, tail)| {
            (p == b'?' || p.eq_ignore_ascii_case(&n)) && wildcard(rest, tail)
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names.iter().map(|n| (n.into(), "v".into())).collect()
    }

    fn names(out: Vec<(OsString, OsString)>) -> Vec<String> {
        out.into_iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn secrets_are_dropped_by_default() {
        let all = vars(&[
            "PATH",
            "HOME",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_REGION",
            "DB_PASSWORD",
            "my_app_secret",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "TOKENIZERS_PARALLELISM",
        ]);
        let kept = names(EnvPolicy::default().apply(all.into_iter()));
        assert_eq!(
            kept,
            ["PATH", "HOME", "AWS_REGION", "TOKENIZERS_PARALLELISM"]
        );
    }

    #[test]
    fn the_policy_steps_apply_in_order() {
        let policy: EnvPolicy = serde_json::from_str(
            r#"{"inherit": "core", "exclude": ["HOME"], "set": {"CI": "1", "PATH": "/x"},
                "includeOnly": ["PATH", "CI", "LC_*"]}"#,
        )
        .unwrap();
        let out = policy.apply(vars(&["PATH", "HOME", "LC_ALL", "EDITOR"]).into_iter());
        let mut kept = names(out.clone());
        kept.sort();
        assert_eq!(kept, ["CI", "LC_ALL", "PATH"]);
        assert!(out.contains(&("PATH".into(), "/x".into())));
        let none: EnvPolicy = serde_json::from_str(r#"{"inherit": "none"}"#).unwrap();
        assert!(none.apply(vars(&["PATH"]).into_iter()).is_empty());
        let raw: EnvPolicy = serde_json::from_str(r#"{"ignoreDefaultExcludes": true}"#).unwrap();
        assert_eq!(
            names(raw.apply(vars(&["X_TOKEN"]).into_iter())),
            ["X_TOKEN"]
        );
    }

    #[test]
    fn wildcards_match_case_insensitively() {
        assert!(wildcard(b"*_token", b"GH_TOKEN"));
        assert!(wildcard(b"*PASSWORD*", b"pg_password_file"));
        assert!(wildcard(b"LC_?", b"LC_X"));
        assert!(!wildcard(b"*_TOKEN", b"TOKEN"));
        assert!(!wildcard(b"AWS_*", b"XAWS_A"));
    }
}
