//! The Landlock side of a [`SandboxPolicy`]: what the kernel supports, and confining the
//! calling process (the launcher, just before it starts the shell).

use super::carve::{self, Denial, Grant, RealTree, FS_ABI};
use super::policy::{SandboxPolicy, DEVICES, READABLE_DEVICES, WRITABLE_DEVICES};
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use thiserror::Error;

/// What the running kernel's Landlock can enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// File rights: at least ABI 1 (writes, reads, execution).
    pub files: bool,
    /// `Refer` (ABI 2): renames and links across folders are checked, not just refused.
    pub refer: bool,
    /// `Truncate` (ABI 3): `truncate(2)` on files outside the writable roots is refused.
    pub truncate: bool,
    /// TCP bind and connect rules (ABI 4).
    pub tcp: bool,
    /// `IoctlDev` (ABI 5): device ioctls are checked.
    pub ioctl: bool,
    /// Scopes (ABI 6): abstract Unix sockets and signals to processes outside the sandbox.
    pub scopes: bool,
}

impl Support {
    /// Asks the kernel by creating (not applying) rulesets that must be fully supported.
    pub fn probe() -> Self {
        let fs = |abi: ABI| hard_ruleset(|r| r.handle_access(AccessFs::from_all(abi)));
        Self {
            files: fs(ABI::V1),
            refer: fs(ABI::V2),
            truncate: fs(ABI::V3),
            tcp: hard_ruleset(|r| r.handle_access(AccessNet::from_all(ABI::V4))),
            ioctl: fs(ABI::V5),
            scopes: hard_ruleset(|r| r.scope(Scope::from_all(ABI::V6))),
        }
    }

    /// What a sandbox on this kernel does not confine, in words; empty when nothing is missing.
    pub fn gaps(&self) -> Vec<&'static str> {
        [
            (
                self.refer,
                "renames and links across folders are refused outright",
            ),
            (
                self.truncate,
                "truncating files outside the writable folders",
            ),
            (
                self.tcp,
                "TCP (only the seccomp filter keeps the network off)",
            ),
            (self.ioctl, "device ioctls"),
            (
                self.scopes,
                "abstract Unix sockets and signals to outside processes",
            ),
        ]
        .into_iter()
        .filter(|(ok, _)| !ok)
        .map(|(_, gap)| gap)
        .collect()
    }
}

/// Whether a ruleset built by `build` can be created with every right it asks for.
fn hard_ruleset(build: impl FnOnce(Ruleset) -> Result<Ruleset, landlock::RulesetError>) -> bool {
    let ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    let created = build(ruleset).and_then(Ruleset::create);
    match created {
        Ok(created) => Option::<OwnedFd>::from(created).is_some(),
        Err(_) => false,
    }
}

/// Why the launcher could not confine itself.
#[derive(Debug, Error)]
pub enum ConfineError {
    #[error("building the Landlock ruleset: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    #[error("Landlock is not enforced by this kernel")]
    NotEnforced,
}

/// How completely the rules hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    Full,
    /// Some rights this kernel does not know were dropped (see [`Support::gaps`]).
    Partial,
}

/// Confines the calling thread (and what it executes) to `policy`. Call it from a
/// single-threaded process right before `exec`.
pub fn confine(policy: &SandboxPolicy) -> Result<Enforcement, ConfineError> {
    let all = AccessFs::from_all(FS_ABI);
    let read = AccessFs::from_read(FS_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
    }
    let mut scopes = BitFlags::<Scope>::EMPTY;
    if !policy.unix_sockets {
        scopes |= Scope::AbstractUnixSocket;
    }
    if !policy.signals {
        scopes |= Scope::Signal;
    }
    if !scopes.is_empty() {
        ruleset = ruleset.scope(scopes)?;
    }
    let mut created = ruleset.create()?;
    for grant in grants(policy, all, read) {
        // A path that vanished since it was listed cannot be reached anyway.
        let Ok(fd) = PathFd::new(&grant.path) else {
            continue;
        };
        created = created.add_rule(PathBeneath::new(fd, grant.access))?;
    }
    let status = created.restrict_self()?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Enforcement::Full),
        RulesetStatus::PartiallyEnforced => Ok(Enforcement::Partial),
        RulesetStatus::NotEnforced => Err(ConfineError::NotEnforced),
    }
}

/// The Landlock rules for `policy`: reading everywhere but the denied paths and `/dev` (where
/// only the devices of [`WRITABLE_DEVICES`] and [`READABLE_DEVICES`] are granted, see
/// [`DEVICES`]), writing in the writable roots and devices but not the denied paths.
pub fn grants(
    policy: &SandboxPolicy,
    all: BitFlags<AccessFs>,
    read: BitFlags<AccessFs>,
) -> Vec<Grant> {
    let write = all & !read;
    let mut grants = vec![Grant {
        path: PathBuf::from("/"),
        access: read,
    }];
    // A device that is a link (`/dev/ptmx` to `pts/ptmx` in some containers) is granted where
    // it leads: carving gives links no rule.
    let real =
        |device: &&str| std::fs::canonicalize(device).unwrap_or_else(|_| PathBuf::from(device));
    grants.extend(
        WRITABLE_DEVICES
            .iter()
            .map(real)
            .chain(policy.writable_roots.iter().cloned())
            .map(|path| Grant { path, access: all }),
    );
    grants.extend(
        READABLE_DEVICES
            .iter()
            .map(real)
            .map(|path| Grant { path, access: read }),
    );
    let unreadable = (AccessFs::ReadFile | AccessFs::Execute) | write;
    let devices = PathBuf::from(DEVICES);
    let denials: Vec<Denial> = policy
        .deny_read
        .iter()
        .chain(std::iter::once(&devices))
        .map(|path| Denial {
            path: path.clone(),
            access: unreadable,
        })
        .chain(policy.deny_write.iter().map(|path| Denial {
            path: path.clone(),
            access: write,
        }))
        .collect();
    carve::rules(&grants, &denials, &RealTree)
}
