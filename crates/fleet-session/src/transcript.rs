//! The session's transcript: which file a run writes to (new, `--continue`, `--resume`,
//! `--session-id`, a `--fork-session` copy), the history it carries on from, recording
//! committed messages, and the session lock that keeps a second process from running the same
//! session at the same time.

use crate::error::{Result, SessionError};
use crate::options::Conversation;
use crate::report::Report;
use fleet_protocol::{CommittedMessage, Message};
use fleet_store::{
    new_session_id, validate_session_id, FleetHome, SessionLock, SessionStore, Transcript,
    TranscriptWriter,
};
use std::path::Path;

pub struct SessionFile {
    id: String,
    history: Vec<Message>,
    /// The team mail the transcript says the session's agent read.
    mail_read: std::collections::HashSet<String>,
    writer: Option<TranscriptWriter>,
    /// Held for the whole run, so a second process cannot run the same session at once.
    lock: Option<SessionLock>,
    /// A new session's file is created with its first message, so a run that fails before
    /// anything happens leaves no empty session behind for `--continue` to pick.
    pending: Option<(FleetHome, std::path::PathBuf)>,
    /// A fork's copy of the session it came from, written ahead of its first message.
    seed: Vec<fleet_store::TranscriptEntry>,
    /// An entry could not be written: nothing more is, since entries after a gap would make a
    /// conversation the API refuses on resume (a tool call without its result).
    lost: bool,
}

/// The transcript could not take an entry (a full disk, a read-only `$FLEET_HOME`): the run
/// is stopped, and its result says this rather than "cancelled". The store's error names the
/// file and the system's reason (`No space left on device (ENOSPC)`).
#[derive(Debug, thiserror::Error)]
#[error("{0}; the run was stopped, as its transcript cannot hold more")]
pub struct TranscriptLost(pub fleet_store::StoreError);

impl TranscriptLost {
    /// Makes `result` (the main agent's, ending a run this failure stopped, or one that ended
    /// while its last lines could not be written) an error that names the real cause.
    pub fn blame(&self, result: &mut fleet_protocol::RunResult) {
        result.subtype = fleet_protocol::ResultSubtype::ErrorDuringExecution;
        result.result = self.to_string();
    }
}

impl SessionFile {
    /// Opens the transcript of the conversation `which` names in `cwd`; with `persist` off
    /// nothing is written. Lines about a damaged transcript go to `report`.
    pub fn open(
        which: &Conversation,
        cwd: &Path,
        persist: bool,
        report: &dyn Report,
    ) -> Result<Self> {
        let chosen = [
            which.continue_latest.then_some("--continue"),
            which.resume.as_ref().map(|_| "--resume"),
            which.session_id.as_ref().map(|_| "--session-id"),
        ];
        let chosen: Vec<_> = chosen.into_iter().flatten().collect();
        if chosen.len() > 1 {
            return Err(SessionError::invalid(format!(
                "{} cannot be used together",
                chosen.join(" and ")
            )));
        }
        let store = SessionStore::new(FleetHome::from_env()?);
        let existing = if which.continue_latest {
            match store.latest_session(cwd)? {
                Some(session) => Some(session),
                None => {
                    return Err(SessionError::invalid(format!(
                        "--continue: no earlier session in {} (sessions are kept under {})",
                        cwd.display(),
                        store.home().project_dir(cwd).display()
                    )))
                }
            }
        } else if let Some(id) = &which.resume {
            Some(store.find_session(cwd, id)?)
        } else {
            None
        };
        if let Some(session) = existing {
            // Before reading: what this run continues from must not change under it.
            let lock = SessionLock::acquire(&session.path, &session.id)?;
            let loaded = Transcript::load(&session.path)?;
            for warning in loaded.warnings() {
                report.line("", &warning.to_string());
            }
            // Tasks the last process left running died with it: the model hears so before
            // anything else (see `fleet_runtime::tasks::interrupted`).
            let owed = fleet_runtime::tasks::interrupted::Owed::of(&loaded, store.home());
            let mut history = loaded.messages();
            history.extend(owed.as_ref().map(|owed| owed.message.clone()));
            if which.fork {
                // The old session stays as it was, free for others once it has been read.
                drop(lock);
                let mail_read = fleet_runtime::transcript::delivered_mail(&loaded);
                let mut seed = forked_entries(loaded.entries);
                seed.extend(owed.as_ref().map(|owed| owed.entry()));
                return Ok(Self {
                    id: new_session_id(),
                    history,
                    mail_read,
                    writer: None,
                    lock: None,
                    pending: persist.then(|| (store.home().clone(), cwd.to_path_buf())),
                    seed,
                    lost: false,
                });
            }
            let mut writer = if persist {
                Some(TranscriptWriter::open_append(&session.path)?)
            } else {
                None
            };
            // Written now, ahead of the prompt: once there, a later resume never sends them again.
            if let (Some(writer), Some(owed)) = (writer.as_mut(), &owed) {
                writer.append(owed.entry()).map_err(|err| {
                    SessionError::step(
                        format!("recording the interrupted tasks of session {}", session.id),
                        err,
                    )
                })?;
            }
            return Ok(Self {
                id: session.id,
                history,
                mail_read: fleet_runtime::transcript::delivered_mail(&loaded),
                writer,
                lock: Some(lock),
                pending: None,
                seed: Vec::new(),
                lost: false,
            });
        }
        let id = match &which.session_id {
            Some(id) => {
                validate_session_id(id)?;
                if uuid_like(id).is_none() {
                    return Err(SessionError::invalid(format!(
                        "--session-id must be a UUID, got {id:?}"
                    )));
                }
                if store.session_path(cwd, id)?.exists() {
                    return Err(SessionError::invalid(format!(
                        "--session-id {id}: that session already exists; use --resume {id} to \
                         continue it"
                    )));
                }
                id.clone()
            }
            None => new_session_id(),
        };
        Ok(Self {
            mail_read: Default::default(),
            id,
            history: Vec::new(),
            writer: None,
            lock: None,
            pending: persist.then(|| (store.home().clone(), cwd.to_path_buf())),
            seed: Vec::new(),
            lost: false,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the session has a file on disk to resume (a new session's is made with its
    /// first message; one not persisted never has one).
    pub fn is_written(&self) -> bool {
        self.writer.is_some()
    }

    pub fn history(&mut self) -> Vec<Message> {
        std::mem::take(&mut self.history)
    }

    /// The team mail the transcript says was read, so a resumed team does not deliver it
    /// again.
    pub fn mail_read(&self) -> std::collections::HashSet<String> {
        self.mail_read.clone()
    }

    /// Appends one committed message. An error means the transcript can no longer be trusted
    /// to hold what happens next, so the caller stops the run.
    pub fn record(&mut self, committed: &CommittedMessage) -> Result<(), TranscriptLost> {
        self.append(fleet_runtime::transcript::entry(committed))
    }

    /// Records a compaction: a resumed session starts from it.
    pub fn record_boundary(
        &mut self,
        boundary: &fleet_protocol::CompactBoundary,
    ) -> Result<(), TranscriptLost> {
        for entry in fleet_runtime::transcript::boundary_entries(boundary) {
            self.append(entry)?;
        }
        Ok(())
    }

    /// Records what the transcript keeps of one event: the main agent's committed messages
    /// and compactions (a subagent keeps its own transcript). An error means the transcript
    /// can no longer be trusted to hold what happens next, so the caller stops the run.
    pub fn record_event(
        &mut self,
        event: &fleet_protocol::AgentEvent,
    ) -> Result<(), TranscriptLost> {
        if event.agent.parent_tool_use_id.is_some() {
            return Ok(());
        }
        match &event.kind {
            fleet_protocol::EventKind::MessageCommitted(committed) => self.record(committed),
            fleet_protocol::EventKind::CompactBoundary(boundary) => self.record_boundary(boundary),
            _ => Ok(()),
        }
    }

    /// The conversation the session carries on from, before [`Self::history`] hands it to
    /// the agent (a UI shows it).
    pub fn peek_history(&self) -> &[Message] {
        &self.history
    }

    /// Writes one entry; the first failure is a [`TranscriptLost`], and after it nothing more
    /// is written.
    fn append(&mut self, entry: fleet_store::TranscriptEntry) -> Result<(), TranscriptLost> {
        if self.lost {
            return Ok(());
        }
        self.write(entry).map_err(|err| {
            self.lost = true;
            TranscriptLost(err)
        })
    }

    fn write(&mut self, entry: fleet_store::TranscriptEntry) -> fleet_store::Result<()> {
        if let Some((home, cwd)) = self.pending.take() {
            let started = self.start(&home, &cwd, entry);
            if started.is_err() {
                // A session that never began leaves nothing behind, its lock included.
                self.lock = None;
            }
            return started;
        }
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        writer.append(entry)?;
        Ok(())
    }

    /// Creates a new session's file with its first entry (after a fork's copy). If that fails
    /// (a full disk), the file goes again: an empty or partial session is not one `--continue`
    /// should pick.
    fn start(
        &mut self,
        home: &FleetHome,
        cwd: &Path,
        entry: fleet_store::TranscriptEntry,
    ) -> fleet_store::Result<()> {
        let path = SessionStore::new(home.clone()).session_path(cwd, &self.id)?;
        self.lock = Some(SessionLock::acquire(&path, &self.id)?);
        let mut writer = TranscriptWriter::create(home, cwd, &self.id)?;
        writer.set_cwd(cwd);
        let entries = std::mem::take(&mut self.seed).into_iter();
        let written = entries
            .chain(std::iter::once(entry))
            .try_for_each(|entry| writer.append(entry).map(drop));
        if let Err(err) = written {
            let _ = std::fs::remove_file(writer.path());
            return Err(err);
        }
        self.writer = Some(writer);
        Ok(())
    }

    /// Makes what was written durable before the process exits.
    pub fn finish(&mut self) -> fleet_store::Result<()> {
        if let Some(writer) = &self.writer {
            writer.sync()?;
        }
        Ok(())
    }
}

/// The entries of a forked session as the fork records them: the same, under the fork's id
/// (the writer stamps it on entries that carry none).
fn forked_entries(entries: Vec<fleet_store::TranscriptEntry>) -> Vec<fleet_store::TranscriptEntry> {
    entries
        .into_iter()
        .map(|mut entry| {
            entry.session_id.clear();
            entry
        })
        .collect()
}

fn uuid_like(id: &str) -> Option<()> {
    let parts: Vec<_> = id.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    (parts.len() == 5
        && parts
            .iter()
            .zip(lens)
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit())))
    .then_some(())
}
