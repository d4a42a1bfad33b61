//! The confinement of one Bash process, as the launcher receives it: which folders it may write,
//! which paths it may not read or write, and whether it may use the network.
//!
//! Paths are absolute and already resolved (symlinks followed) by the caller: Landlock works on
//! the real file hierarchy, so a rule must name where a file really is. The policy travels to
//! the launcher as command-line arguments ([`SandboxPolicy::to_args`]), which carry any path a
//! file system allows, cost nothing to parse, and show up plainly in `ps`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Devices every sandboxed command may write (and read): the sinks and sources programs take for granted,
/// `/dev/tty` (which a command without a controlling terminal cannot open anyway) and
/// `/dev/ptmx`, from which a command may make new pseudo-terminals of its own (`script`,
/// `expect`, `openpty`: the other end comes from the `TIOCGPTPEER` ioctl on the new master, not
/// from a path under `/dev/pts`). `/dev/shm` is writable beneath.
pub const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/shm",
];

/// Devices every sandboxed command may read besides [`WRITABLE_DEVICES`].
pub const READABLE_DEVICES: &[&str] = &["/dev/random", "/dev/urandom"];

/// Everything else under `/dev` is neither readable nor writable (it stays listable). An
/// allow-list, not a list of bad devices, because `/dev` holds too many doors out of the
/// sandbox: the user's terminals under `/dev/pts` (reading steals keystrokes, writing forges
/// output), the consoles and their screen memory, and — for a command run by root, which owns
/// them — the raw disks (`/dev/sda`, `/dev/nvme0n1`, `/dev/vda`), where every file of the
/// machine, credential stores included, can be read past any path rule.
pub const DEVICES: &str = "/dev";

/// Where one Bash process may write and read, and what else it may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Folders (or files) the process may change, everything beneath them included.
    pub writable_roots: Vec<PathBuf>,
    /// Paths whose contents may not be read (nor written). Their names can still be listed:
    /// the folder that holds them must stay listable for everything else in it.
    pub deny_read: Vec<PathBuf>,
    /// Paths that may not be changed, even inside a writable root. A path missing today cannot
    /// be created.
    pub deny_write: Vec<PathBuf>,
    /// Whether TCP, UDP and other internet sockets may be used.
    pub network: bool,
    /// Whether Unix domain sockets may be created. Off by default: a socket to the user's
    /// systemd, D-Bus or Docker daemon runs commands outside any sandbox.
    pub unix_sockets: bool,
    /// Whether the process may signal processes outside its own sandbox.
    pub signals: bool,
}

impl SandboxPolicy {
    /// Nothing writable but `temp` (and the devices), nothing unreadable, the network on, no
    /// signals to processes outside the sandbox.
    pub fn read_only(temp: Option<&Path>) -> Self {
        Self {
            writable_roots: temp.into_iter().map(Path::to_path_buf).collect(),
            network: true,
            ..Self::default()
        }
    }

    /// Every path the process may not write: `deny_write` and `deny_read` together.
    pub fn denied_writes(&self) -> impl Iterator<Item = &Path> {
        self.deny_write
            .iter()
            .chain(&self.deny_read)
            .map(PathBuf::as_path)
    }

    /// Whether the policy lets the process change `path` (absolute, resolved): it lies under a
    /// writable root, and under no denied path that lies inside that root. The most specific
    /// path wins, so a writable root inside a protected folder (a scratchpad inside the fleet
    /// home) stays writable; on a tie the denial wins.
    pub fn allows_write(&self, path: &Path) -> bool {
        let devices = WRITABLE_DEVICES.iter().map(Path::new);
        devices
            .chain(self.writable_roots.iter().map(PathBuf::as_path))
            .any(|root| {
                path.starts_with(root)
                    && !self
                        .denied_writes()
                        .any(|denied| denied.starts_with(root) && path.starts_with(denied))
            })
    }

    /// Whether `dir` lies on the way to a denied path inside a writable root, so that entries
    /// cannot be added to it, removed from it or renamed in it (see [`super::carve`]).
    pub fn is_carved(&self, dir: &Path) -> bool {
        self.writable_roots.iter().any(|root| {
            dir.starts_with(root)
                && self.denied_writes().any(|denied| {
                    denied.starts_with(root) && denied.starts_with(dir) && denied != dir
                })
        })
    }

    /// Whether the policy keeps the process from reading `path` (absolute, resolved).
    pub fn denies_read(&self, path: &Path) -> bool {
        self.deny_read.iter().any(|denied| path.starts_with(denied))
    }

    /// The policy as launcher arguments, ending with `--`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        let lists = [
            ("--write", &self.writable_roots),
            ("--deny-read", &self.deny_read),
            ("--deny-write", &self.deny_write),
        ];
        for (flag, paths) in lists {
            for path in paths {
                args.push(OsString::from(flag));
                args.push(path.as_os_str().to_os_string());
            }
        }
        for (flag, on) in [
            ("--network", self.network),
            ("--unix-sockets", self.unix_sockets),
            ("--signals", self.signals),
        ] {
            if on {
                args.push(OsString::from(flag));
            }
        }
        args.push(OsString::from("--"));
        args
    }

    /// Reads what [`to_args`](Self::to_args) wrote; returns the policy and the rest of the
    /// arguments (the program to run and its arguments).
    pub fn from_args(args: &[OsString]) -> Result<(Self, &[OsString]), PolicyArgsError> {
        let mut policy = Self::default();
        let mut i = 0;
        while i < args.len() {
            let flag = args[i].to_string_lossy();
            let path = |i: usize| -> Result<PathBuf, PolicyArgsError> {
                let value = args
                    .get(i + 1)
                    .ok_or_else(|| PolicyArgsError(format!("{flag} needs a path")))?;
                absolute(value)
            };
            let list = match flag.as_ref() {
                "--" => return Ok((policy, &args[i + 1..])),
                "--write" => &mut policy.writable_roots,
                "--deny-read" => &mut policy.deny_read,
                "--deny-write" => &mut policy.deny_write,
                switch => {
                    match switch {
                        "--network" => policy.network = true,
                        "--unix-sockets" => policy.unix_sockets = true,
                        "--signals" => policy.signals = true,
                        other => {
                            return Err(PolicyArgsError(format!("unknown argument {other:?}")))
                        }
                    }
                    i += 1;
                    continue;
                }
            };
            list.push(path(i)?);
            i += 2;
        }
        Err(PolicyArgsError(
            "no `--` before the program to run".to_string(),
        ))
    }
}

fn absolute(value: &OsStr) -> Result<PathBuf, PolicyArgsError> {
    let path = PathBuf::from(value);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(PolicyArgsError(format!(
            "{} is not an absolute path",
            path.display()
        )))
    }
}

/// The launcher was started with arguments it does not understand (a fleet of another version).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("bad sandbox arguments: {0}")]
pub struct PolicyArgsError(pub String);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_survives_the_trip_through_arguments() {
        let policy = SandboxPolicy {
            writable_roots: vec!["/p".into(), "/tmp/x y".into()],
            deny_read: vec!["/home/u/.ssh".into()],
            deny_write: vec!["/p/.git".into()],
            network: false,
            unix_sockets: true,
            signals: false,
        };
        let mut args = policy.to_args();
        args.extend(["/bin/bash".into(), "-c".into(), "true".into()]);
        let (back, rest) = SandboxPolicy::from_args(&args).unwrap();
        assert_eq!(back, policy);
        assert_eq!(rest, ["/bin/bash", "-c", "true"]);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let args: Vec<OsString> = vec!["--write".into(), "rel".into(), "--".into()];
        assert!(SandboxPolicy::from_args(&args).is_err());
        let args: Vec<OsString> = vec!["--write".into(), "/a".into()];
        assert!(SandboxPolicy::from_args(&args).is_err());
        let args: Vec<OsString> = vec!["--fly".into(), "--".into()];
        assert!(SandboxPolicy::from_args(&args).is_err());
    }

    #[test]
    fn the_most_specific_path_decides_a_write() {
        let policy = SandboxPolicy {
            writable_roots: vec!["/p".into(), "/home/u/.fleet/s/pad".into()],
            deny_write: vec!["/p/.git".into(), "/home/u/.fleet".into()],
            deny_read: vec!["/p/secret".into()],
            ..SandboxPolicy::default()
        };
        assert!(policy.allows_write(Path::new("/p/src/a.rs")));
        assert!(!policy.allows_write(Path::new("/p/.git/config")));
        assert!(!policy.allows_write(Path::new("/p/secret/k")));
        assert!(policy.allows_write(Path::new("/home/u/.fleet/s/pad/n.md")));
        assert!(!policy.allows_write(Path::new("/home/u/.fleet/settings.json")));
        assert!(policy.allows_write(Path::new("/dev/null")));
        assert!(!policy.allows_write(Path::new("/etc/passwd")));
        assert!(policy.denies_read(Path::new("/p/secret/k")));
        assert!(!policy.denies_read(Path::new("/p/secrets")));
    }
}
