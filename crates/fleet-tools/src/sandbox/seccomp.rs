//! The sockets Landlock does not cover, refused with a seccomp filter.
//!
//! Landlock (up to ABI 8) confines TCP `bind`/`connect` only; UDP, raw and other families are
//! not covered, and neither is connecting to a Unix socket by its path — the door to the
//! user's systemd (`systemd-run --user`), D-Bus or Docker daemon, each of which runs commands
//! outside any sandbox. The filter makes `socket(2)` fail with `EPERM` for:
//! - `AF_UNIX`, unless the policy allows Unix sockets (`socketpair(2)` stays allowed: it
//!   reaches nothing outside);
//! - with the network off, every family but `AF_UNIX` (when allowed) and `AF_NETLINK` (which
//!   talks to the local kernel only, and which address lookups use).
//!
//! The terminal-injection ioctls are refused always: `TIOCSTI` pushes bytes into a terminal's
//! input queue (typed commands the user's shell runs once fleet exits) and `TIOCLINUX` can
//! paste a console selection. A sandboxed command has no controlling terminal (the launcher
//! starts a new session), but one it opens or creates itself must not become a way to type
//! anywhere. The kernel reads the request as a 32-bit number, so only its low 32 bits are
//! compared: setting the high bits does not slip past.
//!
//! `io_uring_setup(2)` is refused always: io_uring can create sockets without passing through
//! `socket(2)`, so a filter on that call would not see them. On x86-64 the same calls through
//! the x32 ABI (numbers with bit 30 set) get the same rules; other architectures' calls kill the
//! process.

use super::policy::SandboxPolicy;
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FilterError {
    #[error("this CPU architecture ({0}) has no seccomp support in fleet")]
    Arch(&'static str),
    #[error("building the seccomp filter: {0}")]
    Build(#[from] seccompiler::BackendError),
    #[error("installing the seccomp filter: {0}")]
    Install(#[from] seccompiler::Error),
}

/// The filter for `policy`.
pub fn filter(policy: &SandboxPolicy) -> Result<BpfProgram, FilterError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| FilterError::Arch(std::env::consts::ARCH))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    rules.insert(libc::SYS_ioctl, terminal_injection()?);
    let family = |op: SeccompCmpOp, value: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, value as u64)
    };
    let socket = if policy.network {
        // Only Unix sockets may be refused.
        (!policy.unix_sockets)
            .then(|| family(SeccompCmpOp::Eq, libc::AF_UNIX))
            .map(|c| c.map(|c| vec![c]))
    } else {
        let mut allowed = vec![libc::AF_NETLINK];
        if policy.unix_sockets {
            allowed.push(libc::AF_UNIX);
        }
        Some(
            allowed
                .into_iter()
                .map(|f| family(SeccompCmpOp::Ne, f))
                .collect(),
        )
    };
    if let Some(conditions) = socket {
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(conditions?)?]);
    }
    if cfg!(target_arch = "x86_64") {
        const X32: i64 = 0x4000_0000;
        let x32: Vec<(i64, Vec<SeccompRule>)> = rules
            .iter()
            .map(|(nr, chain)| (nr | X32, chain.clone()))
            .collect();
        rules.extend(x32);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}

/// The ioctl requests that type into a terminal, one rule each (any of them matches).
fn terminal_injection() -> Result<Vec<SeccompRule>, FilterError> {
    // `Ioctl` is a `c_ulong` on glibc and a `c_int` elsewhere; both requests fit in 32 bits.
    #[allow(clippy::unnecessary_cast, clippy::cast_sign_loss)]
    let requests = [libc::TIOCSTI as u64, libc::TIOCLINUX as u64];
    requests
        .into_iter()
        .map(|request| {
            let low = request & u64::from(u32::MAX);
            let condition =
                SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, low)?;
            Ok(SeccompRule::new(vec![condition])?)
        })
        .collect()
}

/// Installs the filter for `policy` on the calling thread; `no_new_privs` must be set.
pub fn install(policy: &SandboxPolicy) -> Result<(), FilterError> {
    let program = filter(policy)?;
    seccompiler::apply_filter(&program)?;
    Ok(())
}
