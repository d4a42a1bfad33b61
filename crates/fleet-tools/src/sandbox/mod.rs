//! The OS sandbox every Bash process runs under: Landlock rulesets on Linux, a seccomp filter
//! for sockets, the environment scrub, the launcher that applies them before `bash` starts, and
//! the guardian that stops what fleet leaves running when it dies.
//!
//! # Who is confined
//!
//! Each agent holds an [`AgentSandbox`] (in its `ToolContext`) of a [`SandboxKind`]:
//! - read-only agents (Explore, Plan, anything in plan mode): every command reads anywhere but
//!   the denied paths and writes only a private temp folder (`$TMPDIR`, removed with the
//!   agent's sandbox);
//! - the verification agent: its scratch folder and the private temp folder;
//! - other agents: confined when `sandbox.enabled` (or `--sandbox`) says so, to the workspace,
//!   the added folders, the coordinator's scratchpad, `allowWrite` and the private temp folder,
//!   minus `denyWrite`, the protected paths and `Edit(...)`/`Write(...)` deny rules; commands
//!   matching `excludedCommands` run unconfined (and need the normal permission);
//! - for every agent, a command the read-only classifier accepts (one that ran without a
//!   prompt for that reason) runs read-only.
//!
//! The first three hold wherever the kernel has Landlock, whatever the settings or
//! `--no-sandbox` say, and form the *read-only sandbox*: no network (unless the user's
//! `readOnlyNetwork`), and none of the home folder's dot-entries but toolchains and git's
//! configuration ([`paths::private_home`]). Without a sandbox, read-only agents refuse Bash
//! unless the user's `allowUnsandboxedReadOnly` says otherwise. Every sandbox denies reads of
//! `denyRead`, `Read(...)` deny rules and the credential stores (`~/.ssh`, `~/.npmrc`, …;
//! `allowRead` lifts one).
//!
//! Every sandboxed command runs in a session of its own, without a controlling terminal, may
//! not use the terminal-injection ioctls, and may not open the terminals under `/dev/pts` (see
//! [`launcher`], [`seccomp`], [`policy::DEVICES`]).
//!
//! # How
//!
//! Landlock can only grant rights, so a denied path inside a granted tree is carved out
//! ([`carve`]): the folders on the way to it keep only what the denied path keeps, and their
//! other entries get full rights of their own. The consequence to know: **a folder that holds a
//! protected entry gets no new entries from sandboxed commands** — the project root holds
//! `.git`, so a sandboxed command cannot create, delete or rename files directly in the project
//! root (editing existing ones in place, and anything in subfolders, works). A denied path
//! that does not exist is carved at its nearest existing folder, so it cannot be created.
//! Denied paths stay listable (`ls ~` still works with `~/.ssh` denied); their contents do not.
//!
//! With the network off, Landlock refuses TCP `bind`/`connect` and a seccomp filter refuses
//! every other socket family but netlink ([`seccomp`]). Unix sockets are refused unless
//! `network.allowAllUnixSockets` is set, whatever the network setting: a socket to the user's
//! systemd, D-Bus or Docker would run commands outside the sandbox.
//!
//! fleet cannot run code between `fork` and `exec` (no `unsafe`), so the Bash tool starts a
//! [`launcher`] — the `fleet` binary in a hidden mode — which confines itself and `exec`s the
//! shell. A kernel without Landlock gets one warning per process and the old behaviour, or a
//! refusal with `failIfUnavailable` ([`availability`]).
//!
//! # Limits
//!
//! Landlock sees paths as they are when the command starts: entries that appear later in a
//! carved folder get no rights, files matching a wildcard deny rule that are created later are
//! not protected, a hard link to a denied file elsewhere in a writable tree is writable, and
//! before Landlock ABI 9 connecting to a Unix socket by path is not checked (the seccomp
//! filter covers it). See `docs/security.md`.

mod agent;
pub mod availability;
pub mod capabilities;
pub mod carve;
pub mod env;
pub mod guardian;
pub mod launcher;
pub mod paths;
pub mod policy;
pub mod ruleset;
pub mod seccomp;
pub mod settings;
mod unavailable;
pub mod violation;

pub use agent::{AgentSandbox, Plan, SandboxKind, SandboxRefusal};
pub use availability::{set_warning_handler, UNAVAILABLE_ENV};
pub use env::{EnvPolicy, Inherit};
pub use launcher::{dispatch, LAUNCHER_ENV};
pub use policy::SandboxPolicy;
pub use settings::{SandboxConfig, SandboxSettings};
pub use unavailable::SandboxUnavailable;
