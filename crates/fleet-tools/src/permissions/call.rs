//! One call prepared for the rules: paths resolved and commands split once, however many rules
//! look at them.

use super::bash_split::{self, ParsedCommand};
use super::path_match::{Anchors, Candidate};
use crate::tool::Access;
use crate::workspace::{self, Workspace};
use std::path::Path;

pub(crate) struct Call<'a> {
    pub tool: &'a str,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    pub workspace: &'a Workspace,
    /// The path an `Access::Read` names.
    pub read: Option<Candidate>,
    /// The path an `Access::Write` names.
    pub write: Option<Candidate>,
    /// An `Access::Command`, split.
    pub command: Option<ParsedCommand>,
    /// Files a command redirects output into, where they can be named (see
    /// [`Call::redirects_stay_inside`] for the rest).
    pub redirects: Vec<Candidate>,
    /// A protected path a program on the command line visibly changes (`cp x .git/hooks/y`),
    /// beside the redirect targets.
    pub protected_change: Option<Candidate>,
    /// The mode lets file edits in the workspace through without asking, so a `Bash(...)`
    /// specifier may vouch for a command that redirects output into a file.
    pub edits_accepted: bool,
}

impl<'a> Call<'a> {
    pub fn new(
        tool: &'a str,
        access: &Access,
        cwd: &'a Path,
        home: Option<&'a Path>,
        workspace: &'a Workspace,
    ) -> Self {
        let mut call = Self {
            tool,
            cwd,
            home,
            workspace,
            read: None,
            write: None,
            command: None,
            redirects: Vec::new(),
            protected_change: None,
            edits_accepted: false,
        };
        match access {
            Access::Read(path) => call.read = Some(Candidate::new(path, cwd)),
            Access::Write(path) => call.write = Some(Candidate::new(path, cwd)),
            Access::Command(text) => {
                let command = bash_split::parse(text);
                call.redirects = command
                    .redirects
                    .iter()
                    .filter(|target| nameable(target))
                    .map(|target| Candidate::new(target.as_ref(), cwd))
                    .collect();
                call.command = Some(command);
                call.protected_change = crate::builtin::bash::protected_target(text, cwd)
                    .map(|path| Candidate::new(&path, cwd));
            }
            Access::Other => {}
        }
        call
    }

    pub fn anchors<'b>(&'b self, base: &'b Path) -> Anchors<'b> {
        Anchors {
            base,
            cwd: self.cwd,
            home: self.home,
        }
    }

    /// Whether the command redirects output into a file (not a device).
    pub fn writes_files(&self) -> bool {
        self.command
            .as_ref()
            .is_some_and(|command| command.redirects.iter().any(|target| !is_device(target)))
    }

    /// Whether every output redirect of the command lands in the workspace or a harmless
    /// device. A target the shell would expand (`$HOME/x`, `*.log`, `~/x`) cannot be known in
    /// advance, so it fails this test.
    pub fn redirects_stay_inside(&self) -> bool {
        let Some(command) = &self.command else {
            return true;
        };
        command.redirects.iter().all(|target| {
            is_device(target)
                || (nameable(target)
                    && self
                        .workspace
                        .contains(&workspace::resolve(Path::new(target), self.cwd)))
        })
    }
}

/// A redirect target the shell takes literally.
pub(crate) fn nameable(target: &str) -> bool {
    !target.is_empty()
        && !target.starts_with('~')
        && !target.contains(['$', '`', '*', '?', '[', '{'])
}

/// A redirect target that is not a file: the null device, the standard streams, an open
/// descriptor.
pub(crate) fn is_device(target: &str) -> bool {
    matches!(
        target,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || target
        .strip_prefix("/dev/fd/")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}
