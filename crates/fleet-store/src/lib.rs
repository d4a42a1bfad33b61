//! What must outlive a process: session transcripts under `$FLEET_HOME`.
//!
//! # Layout
//!
//! ```text
//! $FLEET_HOME (default ~/.fleet)
//! └── projects/
//!     └── -home-me-src-app/          one folder per working folder (see `project_slug`)
//!         ├── 3f2c…-….jsonl          one file per session, one JSON entry per line
//!         └── 9a41…-….jsonl
//! ```
//!
//! # Why this shape
//!
//! - **One readable file per session.** A transcript is plain JSONL in the same shape as Claude
//!   Code's, so `tail -f`, `jq` and `grep` work on it, and nothing else (no index, no database)
//!   has to be kept consistent with it.
//! - **Appended under a lock.** Every entry is one whole line written while holding an
//!   exclusive file lock, so several agents or processes writing to one session never mix
//!   their bytes, and a crash can only cut the very last line.
//! - **Resumable after a crash.** Loading skips a cut-short last line (and reports any corrupt
//!   line by number), and [`LoadedTranscript::messages`] answers tool calls that never got a
//!   result, so the conversation it returns can be sent to the model straight away.
//!
//! # Example
//!
//! ```
//! use fleet_protocol::Message;
//! use fleet_store::{FleetHome, SessionStore, Transcript, TranscriptEntry};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let store = SessionStore::new(FleetHome::at(dir.path()));
//! let cwd = std::path::Path::new("/src/app");
//!
//! let mut writer = store.create_session(cwd)?;
//! let first = writer.append(TranscriptEntry::message(Message::user_text("Fix the build")))?;
//! let second = writer.append(TranscriptEntry::message(Message::user_text("and run the tests")))?;
//! assert_eq!(second.parent_uuid.as_deref(), Some(first.uuid.as_str()));
//!
//! // Later, `--continue`: the latest session of this folder, ready to go on.
//! let latest = store.latest_session(cwd)?.expect("a session was written");
//! let transcript = Transcript::load(&latest.path)?;
//! assert_eq!(transcript.messages().len(), 2);
//! assert_eq!(transcript.last_uuid(), Some(second.uuid.as_str()));
//! # Ok(())
//! # }
//! ```

mod durable;
mod error;
mod home;
mod io_reason;
mod lock;
mod mailbox;
pub mod private_dir;
mod session;
pub mod tasklist;
pub mod team;
mod transcript;
pub mod trust;

pub use error::{Result, StoreError};
pub use home::{project_slug, FleetHome};
pub use io_reason::IoReason;
pub use lock::{process_alive, SessionLock};
pub use mailbox::{Mailbox, MailboxError, Position, Unread, DEFAULT_COMPACT_AFTER};
pub use session::{
    new_session_id, validate_session_id, SessionRef, SessionStore, SessionSummary, MIN_ID_PREFIX,
};
pub use tasklist::{TaskList, TaskListError};
pub use team::{Member, MemberStatus, TeamConfig, TeamError, TeamStore};
pub use transcript::{
    EntryKind, LaunchKind, LaunchedTask, LoadedTranscript, SharedField, SharedFields,
    SidechainWriter, SkippedLine, Transcript, TranscriptEntry, TranscriptProgress,
    TranscriptWriter, COMPACT_BOUNDARY, INTERRUPTED_TOOL_RESULT,
};
