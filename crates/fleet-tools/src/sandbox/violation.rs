//! Telling the model that the sandbox, not the file system, refused something.
//!
//! After a failed command, each line of its output that reports `EACCES`/`EPERM`/`EROFS`
//! ("Permission denied", "Operation not permitted", "Read-only file system") is searched for
//! the path it names (quoted, or between colons, as coreutils and shells print them). A path
//! the policy denies, and that the operating system would have allowed without the sandbox, is
//! reported as `denied by the sandbox: <path>`, with a hint saying where commands may write.
//! A refusal whose path cannot be told (a relative path after `cd`, a socket) gets the hint
//! alone. The command's own output is never changed; the note comes after it.

use super::policy::SandboxPolicy;
use crate::workspace;
use nix::unistd::{access, AccessFlags};
use std::path::{Path, PathBuf};

const REFUSALS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
];

/// Signs that a network call failed.
const NETWORK_FAILURES: &[&str] = &[
    "Could not resolve",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Couldn't connect",
    "Failed to connect",
    "Connection refused",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Denied {
    Read,
    Write,
    /// Adding, removing or renaming an entry of a folder that holds a protected path.
    Entry,
}

/// The note to append to a failed command's `output` (stdout and stderr together), if the
/// sandbox may have caused the failure.
pub fn explain(policy: &SandboxPolicy, output: &str, cwd: &Path) -> Option<String> {
    let refusals: Vec<&str> = output
        .lines()
        .filter(|line| REFUSALS.iter().any(|r| line.contains(r)))
        .collect();
    let network = !policy.network && NETWORK_FAILURES.iter().any(|f| output.contains(f));
    if refusals.is_empty() && !network {
        return None;
    }
    let mut denied: Vec<(PathBuf, Denied)> = Vec::new();
    for line in &refusals {
        for candidate in candidates(line) {
            let path = workspace::resolve(Path::new(&candidate), cwd);
            if let Some(kind) = judge(policy, &path) {
                if !denied.iter().any(|(p, _)| *p == path) {
                    denied.push((path, kind));
                }
            }
        }
    }
    let mut lines: Vec<String> = denied
        .iter()
        .map(|(path, kind)| {
            let why = match kind {
                Denied::Read => "its contents may not be read",
                Denied::Write => "not writable in this sandbox",
                Denied::Entry => {
                    "its folder holds a protected path, so entries cannot be added, removed or \
                     renamed there; use a subfolder"
                }
            };
            format!("denied by the sandbox: {} ({why})", path.display())
        })
        .collect();
    if !refusals.is_empty() {
        lines.push(hint(policy, denied.is_empty()));
    }
    if network {
        lines.push(
            "The network is off in this sandbox (`sandbox.network` in the settings).".to_string(),
        );
    }
    Some(lines.join("\n"))
}

fn hint(policy: &SandboxPolicy, unsure: bool) -> String {
    let roots: Vec<String> = policy
        .writable_roots
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let lead = if unsure {
        "This command ran in a sandbox, which may have refused the access above."
    } else {
        "This command ran in a sandbox."
    };
    let protected = if policy.deny_write.is_empty() {
        String::new()
    } else {
        " Protected paths such as .git and .claude stay read-only, and a folder holding one \
         gets no new entries."
            .to_string()
    };
    format!(
        "{lead} It may write only under {} (the last is $TMPDIR, a private temp folder).{protected}",
        roots.join(", ")
    )
}

/// Whether the sandbox, rather than the file system, refuses `path`.
fn judge(policy: &SandboxPolicy, path: &Path) -> Option<Denied> {
    if policy.denies_read(path) {
        return Some(Denied::Read);
    }
    if !os_allows_write(path) {
        return None;
    }
    if !policy.allows_write(path) {
        return Some(Denied::Write);
    }
    path.parent()
        .is_some_and(|dir| policy.is_carved(dir))
        .then_some(Denied::Entry)
}

/// Whether this process, unconfined, could write `path` (or create it, when it is missing).
fn os_allows_write(path: &Path) -> bool {
    if std::fs::symlink_metadata(path).is_ok() {
        return access(path, AccessFlags::W_OK).is_ok();
    }
    path.ancestors()
        .skip(1)
        .find(|dir| dir.exists())
        .is_some_and(|dir| access(dir, AccessFlags::W_OK | AccessFlags::X_OK).is_ok())
}

/// The strings in a refusal line that may be the path it is about: quoted parts, the parts
/// between `: ` separators but the first (the program that speaks), and the last word of each.
fn candidates(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('‘', '’'), ('"', '"'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            out.push(after[..end].to_string());
            rest = &after[end + close.len_utf8()..];
        }
    }
    for part in line.split(": ").skip(1) {
        let part = part.trim();
        out.push(part.to_string());
        if let Some(word) = part.rsplit(' ').next() {
            out.push(word.to_string());
        }
    }
    // A path is one word, or an absolute path that may hold spaces; the refusal's own words
    // ("… Permission denied") are not paths.
    out.retain(|c| {
        let one_word = !c.contains(char::is_whitespace);
        !c.is_empty()
            && (one_word || c.starts_with('/'))
            && !REFUSALS.iter().any(|r| r.ends_with(c.as_str()))
    });
    out.dedup();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_in_the_usual_refusal_lines() {
        let c = candidates("touch: cannot touch '/p/.git/x': Permission denied");
        assert!(c.contains(&"/p/.git/x".to_string()), "{c:?}");
        let c = candidates("bash: line 1: /p/f: Permission denied");
        assert!(c.contains(&"/p/f".to_string()), "{c:?}");
        let c = candidates("mkdir: cannot create directory ‘/q/d’: Permission denied");
        assert!(c.contains(&"/q/d".to_string()), "{c:?}");
        let c = candidates("sed: couldn't open temporary file ./sedAb12: Permission denied");
        assert_eq!(c, ["./sedAb12"]);
    }

    #[test]
    fn a_refusal_of_a_path_the_policy_denies_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let policy = SandboxPolicy {
            writable_roots: vec![root.join("ok")],
            ..SandboxPolicy::default()
        };
        let out = format!(
            "touch: cannot touch '{}': Permission denied",
            root.join("f").display()
        );
        let note = explain(&policy, &out, &root).unwrap();
        assert!(
            note.contains(&format!(
                "denied by the sandbox: {}",
                root.join("f").display()
            )),
            "{note}"
        );
        assert!(
            note.contains(&root.join("ok").display().to_string()),
            "{note}"
        );
        assert!(explain(&policy, "all good", &root).is_none());
    }
}
