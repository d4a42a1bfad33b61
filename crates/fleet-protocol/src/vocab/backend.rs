//! Where a teammate runs: the `backendType` of a team member in `config.json` and of a
//! `shutdown_approved` frame, spelled as Claude Code spells it.

use super::open::open_vocabulary;

open_vocabulary! {
    /// A teammate's backend. Team files are shared with Claude Code, so a backend this build
    /// does not know is kept and written back, not refused.
    pub enum BackendType as "backend type" {
        /// Inside the lead's process (also the pane id such a member is given).
        InProcess = "in-process",
        /// In a tmux pane.
        Tmux = "tmux",
        /// In an iTerm2 split pane.
        ITerm2 = "iterm2",
    }
}
