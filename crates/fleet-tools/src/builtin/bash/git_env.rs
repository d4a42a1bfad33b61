//! The environment that takes away git's configuration-driven programs, for commands that run
//! without a prompt because they only look.
//!
//! The read-only classifier accepts `git status`, `git log`, `git diff` … unasked, but git
//! runs programs named in the configuration of the repository it finds: `core.fsmonitor` on
//! every index refresh, hooks, pagers, signature programs. A repository kept inside a cloned
//! project (a committed folder with the layout of a bare repository) brings its own
//! configuration, so a command the classifier accepted would run the project's code. Every
//! classifier-accepted command, and every command of a read-only agent, therefore runs with
//! configuration given through the environment (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`,
//! `GIT_CONFIG_VALUE_n`), which git reads as command-line configuration: it overrides every
//! file, reaches every git the command starts, and counts as protected configuration, so
//! `safe.bareRepository` is honoured from it.
//!
//! What cannot be turned off by name stays: diff and filter drivers (`diff.<driver>.textconv`,
//! `filter.<driver>.clean`) and `diff.external` are named by the user's own configuration
//! (a repository's `.git/config` is never part of a clone); an embedded repository that
//! could name them is refused by the classifier and by `safe.bareRepository=explicit`.

use std::ffi::OsString;

/// Configuration every looking git gets. Each entry was checked against git 2.47.
pub const HARDENED_GIT_CONFIG: &[(&str, &str)] = &[
    // The fsmonitor hook runs on every index refresh (`git status`, `git diff`).
    ("core.fsmonitor", "false"),
    // Hooks such as post-index-change and pre-auto-gc.
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    // A bare repository found by walking up from the cwd is refused; only an explicit
    // `--git-dir` (which the classifier refuses) could use one.
    ("safe.bareRepository", "explicit"),
    // Signature checks run gpg.program (or the ssh/x509 ones); keep the defaults.
    ("log.showSignature", "false"),
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    // Looking never talks to a remote: no transport (`ext::`, ssh, http) at all.
    ("protocol.allow", "never"),
    ("core.sshCommand", "ssh"),
    // An empty value empties the list of credential helpers.
    ("credential.helper", ""),
    // Automatic housekeeping writes and may run hooks.
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// Inherited variables that would run a program, or add configuration after ours.
const DROPPED: &[&str] = &[
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
];

/// `env` (the scrubbed environment a Bash process starts with) with git's program-running
/// configuration turned off: inherited `GIT_CONFIG_*` entries and program variables dropped,
/// [`HARDENED_GIT_CONFIG`] added.
pub fn harden(env: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = env
        .into_iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            !DROPPED.contains(&name.as_ref())
                && !name.starts_with("GIT_CONFIG_KEY_")
                && !name.starts_with("GIT_CONFIG_VALUE_")
        })
        .collect();
    out.extend(entries());
    out
}

/// The `GIT_CONFIG_*` variables for [`HARDENED_GIT_CONFIG`].
pub fn entries() -> Vec<(OsString, OsString)> {
    let mut out = Vec::with_capacity(HARDENED_GIT_CONFIG.len() * 2 + 1);
    out.push((
        "GIT_CONFIG_COUNT".into(),
        HARDENED_GIT_CONFIG.len().to_string().into(),
    ));
    for (i, (key, value)) in HARDENED_GIT_CONFIG.iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{i}").into(), (*key).into()));
        out.push((format!("GIT_CONFIG_VALUE_{i}").into(), (*value).into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inherited_config_is_replaced_not_appended_to() {
        let env = vec![
            (OsString::from("PATH"), OsString::from("/usr/bin")),
            (OsString::from("GIT_CONFIG_COUNT"), OsString::from("1")),
            (
                OsString::from("GIT_CONFIG_KEY_0"),
                OsString::from("core.pager"),
            ),
            (OsString::from("GIT_CONFIG_VALUE_0"), OsString::from("evil")),
            (OsString::from("GIT_SSH_COMMAND"), OsString::from("evil")),
        ];
        let out = harden(env);
        let get = |name: &str| {
            out.iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("PATH"), ["/usr/bin"]);
        assert_eq!(
            get("GIT_CONFIG_COUNT"),
            [HARDENED_GIT_CONFIG.len().to_string()]
        );
        assert_eq!(get("GIT_CONFIG_KEY_0"), ["core.fsmonitor"]);
        assert!(get("GIT_SSH_COMMAND").is_empty());
    }
}
